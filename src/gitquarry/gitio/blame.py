"""``git blame --porcelain``, streamed, and a file's history (``git log --follow``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gitquarry.errors import RevisionNotFoundError
from gitquarry.gitio.runner import run_git, stream_git
from gitquarry.gitio.tree import resolve_commit


@dataclass
class BlameCommit:
    """What porcelain says of one commit the first time it appears."""

    hash: str
    author: str = ""
    author_mail: str = ""
    author_time: int = 0
    summary: str = ""
    filename: str = ""
    previous: str | None = None
    boundary: bool = False


@dataclass
class BlameLine:
    """One line of the file at the revision: ``line`` (1-based), the commit that last
    touched it, the line number in that commit's version of ``orig_path``, and the text."""

    line: int
    commit: str
    orig_line: int
    orig_path: str
    text: str


@dataclass
class BlameResult:
    lines: list[BlameLine] = field(default_factory=list)
    commits: dict[str, BlameCommit] = field(default_factory=dict)
    #: what git wrote on stderr although it answered (e.g. "error: Could not read <hash>"
    #: for a missing object: git then attributes lines to the wrong commit); at most 5 lines
    problems: list[str] = field(default_factory=list)


def blame(git_dir: Path, revision: str, path: str, ranges: list[tuple[int, int]] | None = None,
          *, max_lines: int = 100_000) -> BlameResult:
    """Blame ``path`` at ``revision`` (whole file, or the inclusive 1-based line ``ranges``),
    reading ``git blame --porcelain`` as a stream: at most ``max_lines`` lines are kept
    (git is stopped after that). Renames and copies within the file's history are followed
    as git does by default.

    :raises GitError: the path does not exist at the revision, a range is past the end, ...
    """
    args = ["blame", "--porcelain"]
    for lo, hi in ranges or []:
        args += ["-L", f"{lo},{hi}"]
    args += [revision, "--", path]
    result = BlameResult()
    current: BlameCommit | None = None
    pending: tuple[str, int, int] | None = None
    with stream_git(git_dir, args) as stream:
        for raw in _lines(stream.stdout):
            if raw.startswith(b"\t"):
                if pending is not None and current is not None:
                    sha, orig, final = pending
                    result.lines.append(BlameLine(final, sha, orig, current.filename,
                                                  raw[1:].decode("utf-8", "replace")))
                    if len(result.lines) >= max_lines:
                        break
                pending = None
                continue
            text = raw.decode("utf-8", "replace")
            if pending is None:
                parts = text.split(" ")
                if len(parts) >= 3 and len(parts[0]) >= 40:
                    sha = parts[0]
                    pending = (sha, int(parts[1]), int(parts[2]))
                    current = result.commits.setdefault(sha, BlameCommit(sha))
                    continue
            if current is None:
                continue
            key, _, value = text.partition(" ")
            if key == "author":
                current.author = value
            elif key == "author-mail":
                current.author_mail = value.strip("<>")
            elif key == "author-time":
                current.author_time = int(value or 0)
            elif key == "summary":
                current.summary = value
            elif key == "filename":
                current.filename = value
            elif key == "previous":
                current.previous = value.split(" ")[0]
            elif key == "boundary":
                current.boundary = True
    if stream.code != 0 and not result.lines:
        raise stream.error(git_dir, args)
    result.problems = list(dict.fromkeys(
        line for line in stream.stderr.decode("utf-8", "replace").splitlines()
        if line.strip()))[:5]
    return result


def line_count(git_dir: Path, commit: str, path: str) -> int | None:
    """The lines of the file ``path`` at ``commit`` as ``git blame -L`` counts them (a last
    line without a newline counts), read as a stream (``git cat-file blob``, nothing held);
    None when git cannot read it."""
    lines = 0
    last = b"\n"
    args = ["cat-file", "blob", f"{commit}:{path}"]
    with stream_git(git_dir, args) as stream:
        while chunk := stream.stdout.read(1 << 16):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    if stream.code != 0:
        return None
    return lines + (last != b"\n")


def _lines(stream: object) -> Iterator[bytes]:
    for raw in stream:  # type: ignore[attr-defined]
        yield raw[:-1] if raw.endswith(b"\n") else raw


def file_history(git_dir: Path, revision: str, path: str, *, follow: bool = True,
                 max_count: int = 10_000) -> list[str]:
    """Hashes of the commits that changed ``path`` in the history of ``revision``, newest
    first, following renames (``git log --follow``) unless ``follow`` is False.

    :raises GitError: git failed (unknown revision, ...).
    """
    args = ["log", "--format=%H", f"--max-count={max_count}", "-M", "--no-ext-diff"]
    if follow:
        args.append("--follow")
    args += [revision, "--", f":(literal){path}" if not follow else path]
    return run_git(git_dir, args).stdout.decode("ascii", "replace").split()


def resolve(git_dir: Path, revision: str) -> str | None:
    """The commit ``revision`` names, or None (``gitio.tree.resolve_commit``: an over-long
    name, one starting with ``-`` or an answer that is not one object id is none)."""
    try:
        return resolve_commit(git_dir, revision)
    except RevisionNotFoundError:
        return None


def path_exists(git_dir: Path, commit: str, path: str) -> bool:
    """Whether ``path`` is a file (blob) at ``commit`` whose object is in the repository."""
    proc = run_git(git_dir, ["cat-file", "-t", f"{commit}:{path}"], check=False)
    return proc.returncode == 0 and proc.stdout.strip() == b"blob"


def missing_blob(git_dir: Path, commit: str, path: str) -> str | None:
    """The object id of ``path`` at ``commit`` when the commit's tree lists it as a file but
    the file's object is not in the repository (pruned, a partial clone, a damaged pack);
    None when the tree has no such file (or git cannot read the tree) or the object is there.
    Reads the trees only (``git ls-tree``), then asks whether the object exists."""
    listed = run_git(git_dir, ["ls-tree", "-z", "--full-tree", commit, "--", path],
                     check=False)
    if listed.returncode != 0:
        return None
    for entry in listed.stdout.split(b"\0"):
        meta, tab, name = entry.partition(b"\t")
        parts = meta.split(b" ")
        if not tab or len(parts) != 3 or parts[1] != b"blob":
            continue
        if name.decode("utf-8", "surrogateescape") != path:
            continue
        oid = parts[2].decode("ascii", "replace")
        there = run_git(git_dir, ["cat-file", "-e", oid], check=False)
        return None if there.returncode == 0 else oid
    return None
