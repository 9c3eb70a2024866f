"""Shared test kit: the one git-repository builder, the one CLI runner, the isolated user.

Every test directory builds real repositories with :class:`GitRepo` and runs the real CLI
with :func:`run_cli` (in-process) or :func:`run_gitquarry` (a subprocess). Directory
conftests keep only what is particular to them (a daemon, a browser, a harness).
"""

from .cli import run_cli, run_gitquarry
from .env import isolate_user
from .git_repo import AUTHOR, BASE_TIME, COMMITTER, FastCommit, FileContent, GitRepo, fast_import

__all__ = [
    "AUTHOR", "BASE_TIME", "COMMITTER", "FastCommit", "FileContent", "GitRepo", "fast_import",
    "isolate_user", "run_cli", "run_gitquarry",
]
