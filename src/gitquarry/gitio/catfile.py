"""One long-lived ``git cat-file --batch`` process: blob bytes by object id, streamed.

Requests are answered one at a time over the process's pipes, so any number of blobs costs
one process. A blob larger than the caller's bound is never held in memory: its bytes are
read from the pipe in 64 KiB pieces and dropped. A missing object (partial or shallow clone,
pruned) is reported as :data:`MISSING`; git never fetches it (``GIT_NO_LAZY_FETCH=1``).
"""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from gitquarry.errors import GitError
from gitquarry.gitio.runner import git_argv, git_env

_PIECE = 64 * 1024


@dataclass(frozen=True)
class BlobResult:
    """What the batch process said about one object.

    ``status`` is ``"ok"`` (``data`` holds the bytes), ``"missing"`` (not in the local object
    store), ``"too_large"`` (``size`` over the bound; ``data`` is empty) or ``"not_blob"``
    (``kind`` says what it is). ``oid`` is the full object id git printed (or the request
    when missing)."""

    status: str
    oid: str
    kind: str = ""
    size: int = -1
    data: bytes = b""


MISSING: Final = "missing"


class BlobReader:
    """A ``git cat-file --batch`` process for the repository whose git dir is ``git_dir``.

    Use as a context manager, or call :meth:`close`. Thread-safe (one request at a time).
    :raises GitError: the process cannot start or dies mid-answer.
    """

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._lock = threading.Lock()
        argv = git_argv(git_dir, ["cat-file", "--batch"])
        self._argv = argv
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=git_env(),
            )
        except OSError as exc:
            raise GitError(argv, -1, str(exc)) from exc

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise GitError(self._argv, -1, "the cat-file process is closed")
        return proc.stdin, proc.stdout

    def read(
        self, spec: str, *, max_bytes: int | None = None, kinds: tuple[str, ...] = ("blob",)
    ) -> BlobResult:
        """The object named ``spec`` (an object id, or ``<commit>:<path>``).

        ``max_bytes``: a blob larger than this is skipped (streamed past, never held) and
        answered ``too_large``. Objects of a type not in ``kinds`` (default: blobs only;
        ``("commit",)`` reads commit objects) are answered ``not_blob`` without content.
        :raises GitError: the process died; ``spec`` holds a newline.
        """
        if "\n" in spec or "\x00" in spec:
            raise GitError(self._argv, -1, "object name holds a newline or NUL")
        with self._lock:
            stdin, stdout = self._pipes()
            try:
                stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
                stdin.flush()
                header = stdout.readline()
            except (BrokenPipeError, OSError) as exc:
                raise GitError(self._argv, -1, f"cat-file died: {exc}") from exc
            if not header.endswith(b"\n"):
                raise GitError(self._argv, -1, "cat-file closed its output")
            parts = header.rstrip(b"\n").split(b" ")
            if len(parts) != 3 or parts[-1] in (b"missing", b"ambiguous"):
                return BlobResult(status=MISSING, oid=spec)
            oid, kind, size_text = (p.decode("ascii", "replace") for p in parts)
            size = int(size_text)
            keep = kind in kinds and (max_bytes is None or size <= max_bytes)
            data = self._consume(stdout, size, keep)
            if kind not in kinds:
                return BlobResult(status="not_blob", oid=oid, kind=kind, size=size)
            if not keep:
                return BlobResult(status="too_large", oid=oid, kind=kind, size=size)
            return BlobResult(status="ok", oid=oid, kind=kind, size=size, data=data)

    def commit_of(self, revision: str) -> str | None:
        """The commit ``revision`` names (``HEAD``, a branch, tag, hash, ``HEAD~3``), through
        this process (``<revision>^{commit}``: tags peeled), or None when it names none. A
        name starting with ``-`` or holding whitespace is never looked up."""
        if not revision or revision.startswith("-") or any(c.isspace() for c in revision):
            return None
        result = self.read(f"{revision}^{{commit}}", max_bytes=0)
        return result.oid if result.status != MISSING and result.kind == "commit" else None

    def _consume(self, stdout: IO[bytes], size: int, keep: bool) -> bytes:
        pieces: list[bytes] = []
        left = size + 1  # content plus the trailing newline
        while left:
            piece = stdout.read(min(left, _PIECE) if not keep else left)
            if not piece:
                raise GitError(self._argv, -1, "cat-file closed its output mid-object")
            left -= len(piece)
            if keep:
                pieces.append(piece)
        data = b"".join(pieces)
        return data[:-1] if keep else b""

    def close(self) -> None:
        """End the process. Safe to call more than once."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
