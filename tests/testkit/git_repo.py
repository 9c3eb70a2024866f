"""The one git-repository builder the tests use.

Repositories are built the way simonw/git-history's ``make_repo`` does: ``check=True`` on
every git call, fixed author and committer identities and dates (so commit hashes are stable
from run to run), files written straight into the work tree. Nothing here mocks git.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: 2024-01-01T00:00:00Z; default commit dates count up from here.
BASE_TIME = 1_704_067_200
AUTHOR = ("Ada Author", "ada@example.com")
COMMITTER = ("Cy Committer", "cy@example.com")

#: a file's new content: text, raw bytes, or ``None`` to delete it
FileContent = str | bytes | None


def _git_date(when: int | str) -> str:
    """Unix seconds (UTC) as git's ``@<seconds> +0000``; a string (ISO 8601) as it is."""
    return when if isinstance(when, str) else f"@{when} +0000"


@dataclass
class FastCommit:
    """One commit for :meth:`GitRepo.fast_import`."""

    files: dict[str, FileContent]
    message: str
    date: int | None = None
    #: (name, email); default ``AUTHOR``
    author: tuple[str, str] | None = None


class GitRepo:
    """A real repository under test.

    ``commit`` writes files (``None`` deletes one), stages everything and commits with fixed
    identities and dates, returning the full commit hash. Dates are Unix seconds, UTC; each
    commit without an explicit date is ``step`` seconds after the previous one (default 60).

    ``identity=False`` leaves author and committer to the isolated user's git config (the
    repository-docs and web tests, whose commits carry no fixed identity). ``resume=True``
    counts the next default date from the last explicit one (``commit(..., date=d)`` then
    ``commit(...)`` is dated ``d + step``); by default explicit dates leave the clock alone.
    ``dated=False`` leaves undated commits at the wall clock's time (the daemon tests, which
    watch live repositories).
    """

    def __init__(self, path: Path, *, object_format: str | None = None, bare: bool = False,
                 init: bool = True, step: int = 60, identity: bool = True,
                 resume: bool = False, dated: bool = True) -> None:
        self.path = path
        self.dated = dated
        self.step = step
        self.identity = identity
        self.resume = resume
        self._clock = BASE_TIME
        if init:
            path.mkdir(parents=True, exist_ok=True)
            args = ["init", "-q", "-b", "main"]
            if object_format:
                args.append(f"--object-format={object_format}")
            if bare:
                args.append("--bare")
            self.git(*args)

    @property
    def clock(self) -> int:
        """The date (Unix seconds) of the last commit made without an explicit date."""
        return self._clock

    @clock.setter
    def clock(self, value: int) -> None:
        self._clock = value

    # -- running git -----------------------------------------------------------------------

    def env(self, when: int | str | None = None, *, author: tuple[str, str] = AUTHOR,
            committer: tuple[str, str] = COMMITTER) -> dict[str, str]:
        """The environment of one git call: fixed dates (``when``, default the next step)
        and, unless ``identity=False``, fixed author and committer."""
        env = dict(os.environ)
        if when is None and self.dated:
            self._clock += self.step
            when = self._clock
        if when is not None:
            env.update(GIT_AUTHOR_DATE=_git_date(when), GIT_COMMITTER_DATE=_git_date(when))
        if self.identity:
            env.update(
                GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1],
                GIT_COMMITTER_NAME=committer[0], GIT_COMMITTER_EMAIL=committer[1],
            )
        return env

    def run(self, *args: str, input_bytes: bytes | None = None, env: dict[str, str] | None = None,
            check: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run git; the raw ``CompletedProcess`` (``check`` raises ``CalledProcessError``)."""
        return subprocess.run(
            ["git", *args], cwd=cwd or self.path, input=input_bytes, capture_output=True,
            env=env or self.env(when=BASE_TIME), check=check,
        )

    def git(self, *args: str, input_bytes: bytes | None = None,
            env: dict[str, str] | None = None, when: int | str | None = None,
            cwd: Path | None = None) -> str:
        """Run git in the repository (failing the test on a non-zero exit); stdout as text,
        stripped. ``when`` dates the call (Unix seconds)."""
        if env is None and when is not None:
            env = self.env(when)
        proc = self.run(*args, input_bytes=input_bytes, env=env, check=False, cwd=cwd)
        if proc.returncode != 0:
            raise AssertionError(
                f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}"
            )
        return proc.stdout.decode("utf-8", "replace").strip()

    # -- building history ------------------------------------------------------------------

    def write(self, files: dict[str, FileContent]) -> None:
        """Write ``files`` into the work tree (``None`` deletes; links are unlinked)."""
        for name, content in files.items():
            target = self.path / name
            if content is None:
                if target.exists() or target.is_symlink():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")

    def commit(self, files: dict[str, FileContent] | str | None = None,
               message: str | dict[str, FileContent] | None = None,
               date: int | str | None = None, *, when: int | str | None = None,
               author: tuple[str, str] = AUTHOR, committer: tuple[str, str] = COMMITTER,
               extra: Sequence[str] = ()) -> str:
        """Write ``files``, ``git add -A`` and commit (empty commits allowed); the full hash.

        Called as ``commit(files, message)`` or, message first, ``commit(message, files)``
        (both spellings are in use; the types tell them apart). ``date`` (alias ``when``) is
        Unix seconds, UTC; default: ``step`` seconds after the previous commit.
        """
        if isinstance(files, str) or isinstance(message, dict):
            files, message = message, files  # type: ignore[assignment]
        assert files is None or isinstance(files, dict)
        if files:
            self.write(files)
        self.git("add", "-A")
        stamp = date if date is not None else when
        env = self.env(stamp, author=author, committer=committer)
        if isinstance(stamp, int) and self.resume:
            self._clock = stamp
        text = "change" if message is None else str(message)
        self.git("commit", "-q", "--allow-empty", "-m", text, *extra, env=env)
        return self.head()

    def head(self, ref: str = "HEAD") -> str:
        return self.git("rev-parse", ref)

    def tree(self, ref: str = "HEAD") -> str:
        return self.git("rev-parse", f"{ref}^{{tree}}")

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("checkout", "-q", "-b", name, start)

    def checkout(self, ref: str) -> None:
        self.git("checkout", "-q", ref)

    def merge(self, *branches: str, message: str, date: int | None = None) -> str:
        env = self.env(date)
        self.git("merge", "-q", "--no-ff", "--no-edit", "-m", message, *branches, env=env)
        return self.head()

    def hash_commit(self, raw: bytes) -> str:
        """Write a raw commit object with ``git hash-object -t commit -w``."""
        return self.git("hash-object", "-t", "commit", "-w", "--stdin", input_bytes=raw)

    def show(self, commit: str) -> str:
        """``git show --format= <commit>`` as text (invalid UTF-8 as U+FFFD)."""
        return self.run("show", "--format=", commit).stdout.decode("utf-8", "replace")

    def count(self, *revs: str) -> int:
        return int(self.git("rev-list", "--count", *revs))

    def all_hashes(self, *revs: str) -> set[str]:
        return set(self.git("rev-list", *(revs or ("--branches", "--tags", "--remotes"))).split())

    def fast_import(self, commits: Sequence[FastCommit], ref: str = "refs/heads/main") -> None:
        """Append ``commits`` to ``ref`` with one ``git fast-import`` process."""
        out = bytearray()
        for n, c in enumerate(commits):
            msg = c.message.encode("utf-8")
            when = c.date if c.date is not None else BASE_TIME + 60 * (n + 1)
            out += f"commit {ref}\n".encode()
            name, email = c.author or AUTHOR
            out += f"author {name} <{email}> {when} +0000\n".encode()
            out += f"committer {COMMITTER[0]} <{COMMITTER[1]}> {when} +0000\n".encode()
            out += f"data {len(msg)}\n".encode() + msg + b"\n"
            for path, content in c.files.items():
                if content is None:
                    out += f"D {path}\n".encode()
                    continue
                data = content.encode("utf-8") if isinstance(content, str) else content
                out += f"M 100644 inline {path}\n".encode()
                out += f"data {len(data)}\n".encode() + data + b"\n"
            out += b"\n"
        out += b"done\n"
        self.git("fast-import", "--quiet", "--done", input_bytes=bytes(out))


def fast_import(path: Path, commits: Sequence[tuple[str, dict[str, str]]]) -> GitRepo:
    """Create (if needed) the repository at ``path`` and append ``commits`` — (message,
    {path: content}) each, one minute apart from 2024-01-01 — to ``main`` with one
    ``git fast-import``, then check ``main`` out. Thousands of commits per second."""
    repo = GitRepo(path, init=not (path / ".git").exists())
    repo.fast_import([FastCommit(files=dict(files), message=message)
                      for message, files in commits])
    repo.git("reset", "-q", "--hard", "main")
    return repo
