"""How gitquarry runs git: one environment, fixed safety options, bytes in and out.

Every invocation gets ``-c core.quotepath=false`` and color off, and the environment
``GIT_NO_LAZY_FETCH=1`` (a partial clone never fetches behind our back),
``GIT_TERMINAL_PROMPT=0`` (never prompt), ``LC_ALL=C`` (stable messages) and
``GIT_OPTIONAL_LOCKS=0`` (reading never takes the index lock).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from gitquarry.errors import GitError, GitNotFoundError

_BASE_OPTIONS = (
    "-c", "core.quotepath=false",
    "-c", "color.ui=false",
    "-c", "log.showSignature=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.noprefix=false",
)


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GIT_NO_LAZY_FETCH="1",
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
        LANG="C",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
        PAGER="cat",
    )
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"):
        env.pop(key, None)
    return env


def git_executable() -> str:
    """Path of ``git``. :raises GitNotFoundError: not on PATH."""
    path = shutil.which("git")
    if path is None:
        raise GitNotFoundError()
    return path


def git_argv(git_dir: Path, args: Sequence[str]) -> list[str]:
    """argv running ``git`` against the repository whose git dir is ``git_dir``."""
    return [git_executable(), f"--git-dir={git_dir}", *_BASE_OPTIONS, *args]


def run_git(
    git_dir: Path | None,
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    input_bytes: bytes | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run git to completion and return its output as bytes.

    ``git_dir`` None runs in ``cwd`` without ``--git-dir`` (used by discovery).
    :raises GitError: non-zero exit and ``check``.
    :raises GitNotFoundError: git is not installed.
    """
    argv = (
        git_argv(git_dir, args)
        if git_dir is not None
        else [git_executable(), *_BASE_OPTIONS, *args]
    )
    proc = subprocess.run(
        argv,
        cwd=str(cwd) if cwd else None,
        input=input_bytes,
        capture_output=True,
        env=git_env(),
        check=False,
    )
    if check and proc.returncode != 0:
        raise GitError(argv, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc


def decode(data: bytes) -> tuple[str, bool]:
    """Decode git output as UTF-8; invalid bytes become U+FFFD. Returns (text, had_errors)."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True
