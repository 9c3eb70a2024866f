"""The console command runs NumPy's BLAS on one thread for the command lines that search
(``cli.entry``: ``history``, ``repo-docs``), as the servers do (``embedding.process_kind``),
never over the user's own setting and never for the other commands. Each check runs the real
entry point in a fresh interpreter and reads the variable OpenBLAS reads when NumPy loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitquarry.cli import entry
from gitquarry.embedding import process_kind

_PROBE = """
import atexit, os, sys
from gitquarry.cli.entry import main
atexit.register(lambda: sys.stderr.write(
    "\\nBLAS " + os.environ.get("OPENBLAS_NUM_THREADS", "<unset>") + "\\n"))
main(sys.argv[1:])
"""


def test_the_variable_is_the_servers() -> None:
    assert entry.BLAS_THREADS_VARIABLE == process_kind.BLAS_THREADS_VARIABLE


def _blas_setting(argv: list[str], tmp_path: Path, preset: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITQUARRY_", "OPENBLAS_"))}
    env.update(HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), GITQUARRY_CONFIG="/dev/null",
               GITQUARRY_FAST="local")
    if preset is not None:
        env[process_kind.BLAS_THREADS_VARIABLE] = preset
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    return proc.stderr.rsplit("\nBLAS ", 1)[1].strip()


@pytest.mark.parametrize("argv", [
    ["history", "fix cache", "--json"],  # the fast path (no index here: it falls back)
    ["history", "fix cache"],  # the Typer path
    ["repo-docs", "search", "install", "--json"],
])
def test_searches_run_one_blas_thread(argv: list[str], tmp_path: Path) -> None:
    assert _blas_setting(argv, tmp_path) == "1"


def test_the_users_setting_is_kept(tmp_path: Path) -> None:
    assert _blas_setting(["history", "fix cache", "--json"], tmp_path, preset="3") == "3"


@pytest.mark.parametrize("argv", [["--version"], ["config", "--help"]])
def test_other_commands_are_left_alone(argv: list[str], tmp_path: Path) -> None:
    assert _blas_setting(argv, tmp_path) == "<unset>"
