"""One long-lived ``git cat-file --batch`` process: blob bytes by object id, streamed.

Requests are answered one at a time over the process's pipes, so any number of blobs costs
one process. A blob larger than the caller's bound is never held in memory: its bytes are
read from the pipe in 64 KiB pieces and dropped. A missing object (partial or shallow clone,
pruned) is reported as :data:`MISSING`; git never fetches it (``GIT_NO_LAZY_FETCH=1``).

Only full object ids (40 or 64 hex digits) are ever written to the blob process: a revision
expression (``HEAD@{upstream}`` without an upstream, ``HEAD@{100000}``, ``:../x``) makes
``cat-file`` die instead of answering ``missing``. Revisions are resolved apart
(:meth:`BlobReader.commit_of`): ``HEAD`` alone by the blob process (``HEAD^{commit}``
cannot make it die), any other name first by a second, disposable ``cat-file --batch-check``
process that only ever receives names (so the warm path spawns no process; a name that kills
it kills only it), and whenever that does not answer a commit, by
``git rev-parse --verify --end-of-options <rev>^{commit}``, which decides. A process that died
for any reason (killed, a broken pipe, a malformed answer) is discarded and the next request
starts a fresh one, so one failure never breaks the reader for later callers.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from gitquarry.errors import GitError, RevisionNotFoundError
from gitquarry.gitio.runner import git_argv, git_env
from gitquarry.gitio.tree import resolve_commit

_PIECE = 64 * 1024
_FULL_OID = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")


def is_full_oid(name: str) -> bool:
    """True when ``name`` is a full SHA-1 or SHA-256 object id (lower-case hex)."""
    return _FULL_OID.match(name) is not None


def _kill(proc: subprocess.Popen[bytes] | None) -> None:
    """Kill ``proc`` (if any), reap it and close its pipes; errors closing them are ignored."""
    if proc is None:
        return
    proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


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


class _NameResolver:
    """A ``git cat-file --batch-check`` process given revision names, never the blob reader's
    requests. Only a fast path: :meth:`commit` answers a full commit id or None, and None
    (missing, ambiguous, not a commit, the process died on the name) is for ``rev-parse`` to
    decide. A dead process is replaced on the next lookup."""

    def __init__(self, git_dir: Path) -> None:
        self._argv = git_argv(git_dir, ["cat-file", "--batch-check"])
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def commit(self, revision: str) -> str | None:
        with self._lock:
            try:
                proc = self._proc
                if proc is None or proc.poll() is not None:
                    self._discard()
                    proc = self._proc = subprocess.Popen(
                        self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, env=git_env(),
                    )
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(f"{revision}^{{commit}}\n".encode("utf-8", "surrogateescape"))
                proc.stdin.flush()
                line = proc.stdout.readline()
            except (OSError, ValueError):
                self._discard()
                return None
            if not line.endswith(b"\n"):  # it died on this name
                self._discard()
                return None
            parts = line.split()
            if len(parts) == 3 and parts[1] == b"commit":
                oid = parts[0].decode("ascii", "replace")
                return oid if is_full_oid(oid) else None
            return None

    def _discard(self) -> None:
        proc, self._proc = self._proc, None
        _kill(proc)

    def close(self) -> None:
        with self._lock:
            self._discard()


class BlobReader:
    """A ``git cat-file --batch`` process for the repository whose git dir is ``git_dir``.

    Use as a context manager, or call :meth:`close`. Thread-safe (one request at a time).
    :raises GitError: the process cannot start or dies mid-answer.
    """

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._lock = threading.Lock()
        self._argv = git_argv(git_dir, ["cat-file", "--batch"])
        self._closed = False
        self._names = _NameResolver(git_dir)
        self._proc: subprocess.Popen[bytes] | None = None
        self._proc = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=git_env(),
            )
        except OSError as exc:
            raise GitError(self._argv, -1, str(exc)) from exc

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        """The live process's pipes; a process that has exited is replaced first."""
        if self._closed:
            raise GitError(self._argv, -1, "the cat-file process is closed")
        proc = self._proc
        if proc is not None and proc.poll() is not None:
            self._discard()
            proc = None
        if proc is None:
            proc = self._proc = self._spawn()
        assert proc.stdin is not None and proc.stdout is not None
        return proc.stdin, proc.stdout

    def _discard(self) -> None:
        """Kill and forget the current process (its pipe state is unknown after a failure);
        the next request starts a new one."""
        proc, self._proc = self._proc, None
        _kill(proc)

    def read(
        self, spec: str, *, max_bytes: int | None = None, kinds: tuple[str, ...] = ("blob",)
    ) -> BlobResult:
        """The object whose full id is ``spec`` (40 or 64 lower-case hex digits).

        ``max_bytes``: a blob larger than this is skipped (streamed past, never held) and
        answered ``too_large``. Objects of a type not in ``kinds`` (default: blobs only;
        ``("commit",)`` reads commit objects) are answered ``not_blob`` without content.
        :raises GitError: ``spec`` is not a full object id (nothing is sent); the process
            died mid-answer (it is discarded; the next call starts a new one).
        """
        if not is_full_oid(spec):
            raise GitError(self._argv, -1, f"refused object name {spec[:80]!r}: only full "
                           "object ids are sent to cat-file (resolve revisions first)")
        with self._lock:
            try:
                return self._request(spec, max_bytes, kinds)
            except (OSError, ValueError) as exc:  # a pipe broke or was closed under us
                self._discard()
                raise GitError(self._argv, -1, f"cat-file died: {exc}") from exc
            except BaseException:
                self._discard()
                raise

    def _request(self, spec: str, max_bytes: int | None,
                 kinds: tuple[str, ...]) -> BlobResult:
        stdin, stdout = self._pipes()
        stdin.write(spec.encode("ascii") + b"\n")
        stdin.flush()
        header = stdout.readline()
        if not header.endswith(b"\n"):
            raise GitError(self._argv, -1, "cat-file closed its output")
        parts = header.rstrip(b"\n").split(b" ")
        if len(parts) != 3 or parts[-1] in (b"missing", b"ambiguous"):
            return BlobResult(status=MISSING, oid=spec)
        oid, kind, size_text = (p.decode("ascii", "replace") for p in parts)
        if not size_text.isdigit():
            raise GitError(self._argv, -1, f"unexpected cat-file header {header[:80]!r}")
        size = int(size_text)
        keep = kind in kinds and (max_bytes is None or size <= max_bytes)
        data = self._consume(stdout, size, keep)
        if kind not in kinds:
            return BlobResult(status="not_blob", oid=oid, kind=kind, size=size)
        if not keep:
            return BlobResult(status="too_large", oid=oid, kind=kind, size=size)
        return BlobResult(status="ok", oid=oid, kind=kind, size=size, data=data)

    def commit_of(self, revision: str) -> str | None:
        """The commit ``revision`` names (``HEAD``, a branch, tag, hash, ``HEAD~3``; tags
        peeled), or None when it names none. A full commit id is checked through the blob
        process; any other name goes to the disposable name resolver (no process spawned
        when it answers a commit) and, when it does not, to ``git rev-parse --verify
        --end-of-options <revision>^{commit}``, which decides. A name is never written to the
        blob process. A name starting with ``-`` or holding whitespace or NUL is never
        looked up."""
        if not revision or revision.startswith("-") or "\x00" in revision or \
                any(c.isspace() for c in revision):
            return None
        if is_full_oid(revision):
            result = self.read(revision, max_bytes=0, kinds=("commit",))
            if result.kind == "commit":
                return result.oid
            if result.status == MISSING:
                return None
        elif self._closed:
            raise GitError(self._argv, -1, "the cat-file process is closed")
        else:
            found = self._head_commit() if revision == "HEAD" else None
            if found is None:
                found = self._names.commit(revision)
            if found is not None:
                return found
        try:
            return resolve_commit(self.git_dir, revision)
        except RevisionNotFoundError:
            return None

    def _head_commit(self) -> str | None:
        """The commit ``HEAD`` names, asked of the blob process itself (``HEAD^{commit}``: a
        name that cannot make ``cat-file`` die, unlike ``@{upstream}`` forms), so the usual
        cold query starts no name resolver. None when it answers no commit (unborn HEAD) or
        the process failed (discarded; the caller then asks as for any other name)."""
        with self._lock:
            try:
                result = self._request("HEAD^{commit}", 0, ("commit",))
            except (OSError, ValueError, GitError):
                self._discard()
                return None
            except BaseException:
                self._discard()
                raise
        if result.kind == "commit" and is_full_oid(result.oid):
            return result.oid
        return None

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
        """End the processes. Safe to call more than once; no request is answered after."""
        self._closed = True
        self._names.close()
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
