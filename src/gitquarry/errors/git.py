"""Git errors (family ``GitFailureError``, kind ``FAILED``: CLI exit 1, HTTP 409): git, or a
repository as git reads it, failed."""

from __future__ import annotations

from pathlib import Path

from gitquarry.errors.base import GitFailureError


class GitError(GitFailureError):
    """A git command failed. ``argv`` is the full argv (for debugging; never shown),
    ``stderr`` what git printed, ``command`` the subcommand (``log``, ``rev-list``) and
    ``repository`` the ``--git-dir`` it ran against (None for discovery)."""

    code = "git_failed"

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        self.command = _git_subcommand(argv)
        self.repository = next(
            (a.split("=", 1)[1] for a in argv if a.startswith("--git-dir=")), None
        )
        detail = git_message(stderr) or f"exit code {returncode}"
        super().__init__(f"git {self.command} failed: {detail}")


def _git_subcommand(argv: list[str]) -> str:
    """The subcommand of a git argv: the first word after git's own options."""
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg in ("-c", "-C"):
            skip = True
        elif not arg.startswith("-"):
            return arg
    return "command"


def git_message(stderr: str, *, max_chars: int = 400) -> str:
    """What git said, for a user: its ``fatal:``/``error:`` lines (else the first line),
    joined with ``; `` and cut to ``max_chars``."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    wanted = [ln for ln in lines if ln.startswith(("fatal:", "error:"))] or lines[:1]
    text = "; ".join(dict.fromkeys(wanted))
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


class GitNotFoundError(GitFailureError):
    """The git executable is not on PATH."""

    code = "git_not_found"

    def __init__(self) -> None:
        super().__init__("the `git` executable was not found on PATH; install Git 2.31 or newer")


class GitObjectMissingError(GitFailureError):
    """A Git object is not in the local object store (partial/shallow clone, pruned);
    ``what`` (optional) says what the object is, for the message."""

    code = "git_object_unavailable"

    def __init__(self, object_id: str, repo: Path, *, what: str | None = None) -> None:
        if what is None:
            super().__init__(f"Git object {object_id} is missing from {repo}")
        else:  # what the object is, for the user (e.g. "the file a.py at HEAD")
            super().__init__(
                f"{what} is in the repository's history but its Git object {object_id} is "
                f"missing from {repo} (pruned, or a partial or damaged clone; `git fsck` "
                "lists what is missing)")
        self.object_id = object_id
        self.repo = repo


class RepositoryUnreadableError(GitFailureError):
    """Git cannot open a repository (bad configuration, unsupported format or extension,
    broken ``HEAD``). ``detail`` is what git said."""

    code = "repository_unreadable"

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(f"{path}: Git cannot read this repository: {detail}")
        self.path = path
        self.detail = detail


class WorktreeOverlayStaleError(GitFailureError):
    """The working tree changed while an overlay answer was being built."""

    code = "worktree_overlay_stale"

    def __init__(self, path: str) -> None:
        super().__init__(
            f"the working tree changed while answering ({path}); re-run with --include-worktree"
        )
        self.path = path
