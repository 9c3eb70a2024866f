"""The one way tests run the gitquarry CLI: in-process, or as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: ``cli(*argv)`` → (exit code, stdout, stderr)
CLI = Callable[..., tuple[int, str, str]]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``gitquarry.cli.app.main(argv)`` in this process → (exit code, stdout, stderr)."""
    from gitquarry.cli.app import main

    capsys.readouterr()
    try:
        main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    else:  # pragma: no cover - main always exits
        code = 0
    out, err = capsys.readouterr()
    return code, out, err


def run_gitquarry(*argv: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                  python_args: tuple[str, ...] = (), timeout: float = 120,
                  text: bool = False) -> subprocess.CompletedProcess[Any]:
    """``python [python_args] -m gitquarry argv`` in a real subprocess (the current
    environment unless ``env``); output as bytes, or str with ``text=True``."""
    return subprocess.run(
        [sys.executable, *python_args, "-m", "gitquarry", *argv], cwd=cwd, capture_output=True,
        timeout=timeout, check=False, text=text,
        env=env if env is not None else dict(os.environ),
    )
