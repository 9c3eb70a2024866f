"""One commit's full diff from git, streamed, and its per-file line counts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gitquarry.gitio.runner import run_git, stream_git

#: the diff options the index was built with (gitio.log): merges against their first parent
DIFF_OPTIONS = ("--no-ext-diff", "--no-textconv", "--no-color", "-M", "--root",
                "--diff-merges=first-parent", "--diff-algorithm=myers",
                "--ignore-submodules=none", "--submodule=short", "--no-notes")
#: characters of one diff line kept (a minified line can be megabytes)
MAX_LINE_CHARS = 2000


@dataclass(frozen=True)
class FileStat:
    """Lines added and deleted in one file (None for a binary file)."""

    path: str
    added: int | None
    deleted: int | None


def diff_lines(git_dir: Path, commit: str, paths: list[str] | None = None) -> Iterator[str]:
    """The lines of ``git show --format= <commit>`` (the patch only), decoded as UTF-8 with
    U+FFFD, each cut to ``MAX_LINE_CHARS``. Streamed: stop iterating and git is stopped, so
    reading the first lines of a 2-million-line diff costs only those lines.

    :raises GitError: git failed before printing anything (missing objects, ...).
    """
    args = ["show", "--format=", *DIFF_OPTIONS, commit, "--"]
    if paths:
        args += [f":(literal){p}" for p in paths]
    produced = False
    with stream_git(git_dir, args) as stream:
        for raw in stream.stdout:
            produced = True
            line = raw.rstrip(b"\n").decode("utf-8", "replace")
            yield line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"
    if stream.code != 0 and not produced:
        raise stream.error(git_dir, args)


def numstat(git_dir: Path, commit: str) -> list[FileStat]:
    """Per-file added/deleted line counts of ``commit`` (``git show --numstat -z``); a
    rename is listed under its new path.

    :raises GitError: git failed.
    """
    proc = run_git(git_dir, ["show", "--format=", "--numstat", "-z", *DIFF_OPTIONS, commit])
    out: list[FileStat] = []
    fields = proc.stdout.split(b"\0")
    i = 0
    while i < len(fields):
        head = fields[i].lstrip(b"\n")
        if not head:
            i += 1
            continue
        parts = head.split(b"\t")
        if len(parts) < 3:
            i += 1
            continue
        added = None if parts[0] == b"-" else int(parts[0])
        deleted = None if parts[1] == b"-" else int(parts[1])
        if parts[2]:
            path = parts[2]
            i += 1
        else:  # rename: "a\td\t\0old\0new"
            path = fields[i + 2] if i + 2 < len(fields) else b""
            i += 3
        out.append(FileStat(path.decode("utf-8", "replace"), added, deleted))
    return out
