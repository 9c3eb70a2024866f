"""Fixtures every test directory shares."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from testkit.cli import CLI, run_cli


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fail (instead of hanging the run) if the test blocks for 60 s: for reads that must
    never block (a FIFO, a socket or a device where a regular file was expected)."""
    def expire(*_: object) -> None:
        raise TimeoutError("blocked reading a file that should never block")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> CLI:
    """Run ``gitquarry.cli.app.main(argv)`` in-process → (exit code, stdout, stderr)."""
    return lambda *argv: run_cli(capsys, *argv)
