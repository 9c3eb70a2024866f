"""Stream commits out of ``git log`` in batches, with a truncated diff per commit.

One ``git log --no-walk=unsorted --stdin`` process per indexing run reads the commit hashes
on stdin (``stream_batches`` hands them back batch by batch) and prints, per commit, a
NUL-delimited header, the ``--raw -z`` file list (exact paths, never C-quoted) and the
patch. The patch is what ``git show --format=`` prints, except that merges are diffed
against their first parent (``--diff-merges=first-parent``). Only the first
``delta_max_lines`` lines of each patch are kept; the rest are counted, so a commit with a
2-million-line diff costs constant memory.

If git dies on a commit (a blob or tree missing from a partial/shallow clone or pruned store),
that commit is retried alone; if it still fails it is read without its patch and its
``delta_truncated`` says the diff is unavailable. The run continues with the next commit.
"""

from __future__ import annotations

import logging
import subprocess
import tempfile
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gitquarry.gitio.runner import decode, popen_git, run_git

log = logging.getLogger(__name__)

_START = b"\x00\x01gq\x02"
_END = b"\x00\x01gq-end\x02"
_FORMAT = (
    "%x00%x01gq%x02%H%x00%P%x00%an%x00%ae%x00%aN%x00%aE%x00%at"
    "%x00%cn%x00%ce%x00%cN%x00%cE%x00%ct%x00%B%x00%x01gq-end%x02"
)
#: Output options that do not depend on configuration (the runner pins the rest): text
#: re-encoded to UTF-8 from the commit's declared encoding, identities raw in %an and
#: mapped in %aN (the mailmap the runner passes), no notes, paths from the repository root.
_LOG_OPTIONS = ("--encoding=UTF-8", "--no-use-mailmap", "--no-notes", "--no-relative")
_DIFF_OPTIONS = (
    "--no-ext-diff", "--no-textconv", "--no-color", "-M", "--root",
    "--diff-merges=first-parent", "--raw", "-z", "--no-abbrev", "--diff-algorithm=myers",
    "--ignore-submodules=none", "--submodule=short",
)
#: Commit times are kept in [MIN_TIME, MAX_TIME] (Unix seconds): 9999-12-31T23:59:59Z is the
#: last second every date library can show; git cannot write times before 1970.
MIN_TIME = 0
MAX_TIME = 253_402_300_799
_READ_SIZE = 1 << 20
_MISSING_NOTE = "(diff unavailable: a Git object is missing from the local object store: {reason})"
#: bytes of diff kept per commit, whatever the line count (one minified line can be huge).
DELTA_MAX_BYTES = 256 * 1024
#: changed paths kept per commit (``LogCommit.files``); the rest are counted in
#: ``files_total``, so a commit touching a million files costs memory for 10,000 paths.
FILES_MAX = 10_000
#: ``(tree of the first parent, or "" for a root commit; the commit's tree)``: what the diff
#: git prints for a commit depends on (``stream_batches(diff_keys=…)``)
DiffKey = tuple[str, str]
#: ``LogCommit.decode_errors`` entries that come from the diff, not the header
_DIFF_ERRORS = ("path", "diff")


@dataclass
class LogCommit:
    """One commit as read from git. Times are Unix seconds, UTC, in [MIN_TIME, MAX_TIME]:
    a time git prints outside that range (or cannot parse) is clamped, and ``invalid_times``
    maps the field (``author_time``/``committer_time``) to the text the commit holds.

    ``author_name``/``author_email`` (and the committer's) are the canonical identity after
    the repository's ``.mailmap`` (git's ``%aN``/``%aE``); ``author_raw`` is the identity as
    committed (``%an <%ae>``).

    ``files`` lists the changed paths (a rename or copy lists old and new), in git's order,
    deduplicated, at most ``FILES_MAX`` of them; ``files_total`` counts every path git listed
    (the same number unless the list was cut: ``files_cut``). ``delta`` is the diff truncated
    to ``delta_max_lines`` lines with a closing ``... (N lines omitted)`` line, or a note
    saying why it is unavailable; a cut file list adds ``... (N more changed files not
    listed: K of T kept)``.
    ``decode_errors`` names the fields that held invalid UTF-8 (decoded with U+FFFD).
    """

    hash: str
    parents: list[str]
    author_name: str
    author_email: str
    author_time: int
    committer_name: str
    committer_email: str
    committer_time: int
    raw_message: str
    files: list[str] = field(default_factory=list)
    files_total: int = 0
    delta: str = ""
    delta_lines: int = 0
    delta_missing: bool = False
    decode_errors: list[str] = field(default_factory=list)
    author_raw: str = ""
    committer_raw: str = ""
    invalid_times: dict[str, str] = field(default_factory=dict)
    #: a shallow-clone boundary: parents, files and diff are unknown here
    shallow: bool = False
    #: ``git patch-id --stable`` of the patch above (first-parent diff for merges): the
    #: identity shared by cherry-picks, rebased copies and backports of the same change.
    #: "" when computed but there is none (empty diff, missing objects, shallow boundary);
    #: None when not computed (``stream_commits(patch_ids=False)``).
    patch_id: str | None = None

    @property
    def complete(self) -> bool:
        """False when this copy of the commit lacks data another repository may have."""
        return not (self.delta_missing or self.shallow)

    def mark_shallow(self) -> None:
        """Forget what git reports for a shallow boundary (it diffs against an empty tree)."""
        self.shallow = True
        self.parents = []
        self.files = []
        self.files_total = 0
        self.delta = "(diff unavailable: shallow clone boundary; parents are not in this clone)"
        self.delta_lines = 0
        if self.patch_id is not None:
            self.patch_id = ""

    @property
    def files_cut(self) -> bool:
        """True when git listed more changed paths than ``files`` keeps (``FILES_MAX``)."""
        return self.files_total > len(self.files)

    @property
    def author(self) -> str:
        return f"{self.author_name} <{self.author_email}>"

    @property
    def committer(self) -> str:
        return f"{self.committer_name} <{self.committer_email}>"

    @property
    def title(self) -> str:
        """The subject: the first paragraph of the message joined into one line (as ``%s``)."""
        return self._split()[0]

    @property
    def message(self) -> str:
        """The body: the message after the subject paragraph (as ``%b``), stripped."""
        return self._split()[1]

    def title_and_message(self) -> tuple[str, str]:
        """``(title, message)`` from one pass over the message (each property makes one)."""
        return self._split()

    def _split(self) -> tuple[str, str]:
        text = self.raw_message.strip("\n")
        lines = text.split("\n")
        subject: list[str] = []
        i = 0
        while i < len(lines) and lines[i].strip():
            subject.append(lines[i].strip())
            i += 1
        body = "\n".join(lines[i:]).strip()
        return " ".join(subject), body


def _utf8_cut(data: bytearray, end: int) -> int:
    """A cut position at or just before ``end`` that does not split a UTF-8 sequence: if
    ``data[end]`` is a continuation byte, back up (at most 3 bytes) to its lead byte."""
    cut = end
    while cut > 0 and end - cut < 3 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut


class _Delta:
    """Keeps the first ``max_lines`` lines of a byte stream and counts the rest."""

    __slots__ = ("bytes_cut", "complete", "kept", "last", "max_lines", "newlines")

    def __init__(self, max_lines: int) -> None:
        self.max_lines = max_lines
        self.kept = bytearray()
        self.newlines = 0
        self.complete = False  # kept holds max_lines full lines
        self.last = b""
        self.bytes_cut = False

    def feed(self, buf: bytearray, start: int, end: int) -> None:
        """Take ``buf[start:end]`` (no copy is made of the part past the kept lines)."""
        if end <= start:
            return
        newlines = buf.count(b"\n", start, end)
        if not self.complete:
            need = self.max_lines - self.newlines
            if newlines < need:
                self.kept += buf[start:end]
            else:
                pos = start - 1
                for _ in range(need):
                    pos = buf.find(b"\n", pos + 1, end)
                self.kept += buf[start : pos + 1]
                self.complete = True
            if len(self.kept) > DELTA_MAX_BYTES:
                del self.kept[_utf8_cut(self.kept, DELTA_MAX_BYTES) :]
                self.bytes_cut = True
                self.complete = True
        self.newlines += newlines
        self.last = bytes(buf[end - 1 : end])

    def total_lines(self) -> int:
        if not self.last:
            return 0
        return self.newlines + (0 if self.last == b"\n" else 1)

    def render(self) -> tuple[bytes, int]:
        total = self.total_lines()
        if total <= self.max_lines and not self.bytes_cut:
            return bytes(self.kept), total
        kept = bytes(self.kept).rstrip(b"\n")
        shown = kept.count(b"\n") + 1 if kept else 0
        omitted = max(total - shown, 0)
        note = f"\n\n... ({omitted} lines omitted)"
        if self.bytes_cut:
            note = f"\n\n... (diff cut at {DELTA_MAX_BYTES} bytes; {omitted} lines omitted)"
        return kept + note.encode(), total


class _PatchIdSink:
    """One ``git patch-id --stable`` process fed each commit's patch bytes as ``git log``
    prints them (never the message, so no message line can be taken for a commit header).

    Its output (``<patch-id> <commit>`` per commit that has a diff) goes to a temporary file,
    not a pipe, so it can never block while we write its input. Cost: git hashes every patch
    byte once more, in a second process running beside ``git log``.
    """

    def __init__(self, git_dir: Path) -> None:
        # closed in finish()/kill(): they outlive this call
        self._out = tempfile.TemporaryFile()  # noqa: SIM115
        self._err = tempfile.TemporaryFile()  # noqa: SIM115
        self._proc = popen_git(
            git_dir, ["patch-id", "--stable"],
            stdin=subprocess.PIPE, stdout=self._out, stderr=self._err,
        )
        self._broken = False
        self.seen: list[str] = []

    def _write(self, data: bytes | memoryview) -> None:
        if self._broken:
            return
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(data)
        except (BrokenPipeError, OSError):
            self._broken = True

    def begin(self, commit_hash: str) -> None:
        """A new commit: its patch follows."""
        self.seen.append(commit_hash)
        self._write(b"\ncommit " + commit_hash.encode("ascii") + b"\n")

    def feed(self, buf: bytearray, start: int, end: int) -> None:
        if end > start:
            with memoryview(buf) as view:
                self._write(view[start:end])

    def finish(self) -> dict[str, str] | None:
        """The patch-id of every commit begun so far that has one; None when git patch-id
        failed (then no commit of the batch gets one, rather than a wrong one)."""
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.close()
        except (BrokenPipeError, OSError):
            self._broken = True
        rc = self._proc.wait()
        try:
            if rc != 0 or self._broken:
                self._err.seek(0)
                log.warning(
                    "git patch-id failed (exit %s): %s", rc,
                    self._err.read().decode("utf-8", "replace").strip()[:300],
                )
                return None
            self._out.seek(0)
            ids: dict[str, str] = {}
            for line in self._out.read().decode("ascii", "replace").splitlines():
                parts = line.split()
                if len(parts) == 2:
                    ids[parts[1]] = parts[0]
            return ids
        finally:
            self._out.close()
            self._err.close()

    def kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        for f in (self._out, self._err):
            f.close()


class _Parser:
    """Incremental parser of the ``git log`` stream described in the module docstring."""

    def __init__(self, max_lines: int, sink: _PatchIdSink | None = None) -> None:
        self.max_lines = max_lines
        self.buf = bytearray()
        self.pos = 0
        self.state = "header"
        self.current: LogCommit | None = None
        self.delta: _Delta | None = None
        self.sink = sink
        #: the current commit's kept paths (membership test in O(1), at most FILES_MAX)
        self._paths: set[str] = set()

    def feed(self, chunk: bytes) -> Iterator[LogCommit]:
        if self.pos > (1 << 20) and self.pos > len(self.buf) // 2:
            del self.buf[: self.pos]
            self.pos = 0
        self.buf += chunk
        yield from self._drain(eof=False)

    def finish(self) -> list[LogCommit]:
        """At end of stream: the commits not yet yielded (complete only if git exited 0)."""
        rest = list(self._drain(eof=True))
        last = self._finalize()
        if last is not None:
            rest.append(last)
        return rest

    def _finalize(self) -> LogCommit | None:
        commit = self.current
        if commit is None:
            return None
        if self.delta is not None:
            raw, total = self.delta.render()
            text, bad = decode(raw)
            if bad:
                commit.decode_errors.append("diff")
            commit.delta = text
            commit.delta_lines = total
        if commit.files_cut:
            commit.delta += (f"\n... ({commit.files_total - len(commit.files)} more changed files"
                             f" not listed: {len(commit.files)} of {commit.files_total} kept)")
        self.current = None
        self.delta = None
        return commit

    def _drain(self, *, eof: bool) -> Iterator[LogCommit]:
        buf = self.buf
        while True:
            if self.state == "header":
                start = buf.find(_START, self.pos)
                if start == -1:
                    return
                end = buf.find(_END, start)
                if end == -1:
                    return
                self.current = _parse_header(bytes(buf[start + len(_START) : end]))
                self._paths = set()
                if self.sink is not None:
                    self.sink.begin(self.current.hash)
                self.delta = None
                self.pos = end + len(_END)
                self.state = "after_header"
            elif self.state == "after_header":
                if len(buf) - self.pos < 2 and not eof:
                    return
                if buf[self.pos : self.pos + 1] == b"\x00":
                    self.pos += 1
                if buf[self.pos : self.pos + 1] == b"\n":
                    self.pos += 1
                    self.state = "raw"
                else:
                    done = self._finalize()
                    if done is not None:
                        yield done
                    self.state = "header"
                    if eof and self.pos >= len(buf):
                        return
            elif self.state == "raw":
                if self.pos >= len(buf) and not eof:
                    return  # the next raw entry (or the patch) starts in the next chunk
                if buf[self.pos : self.pos + 1] == b":":
                    first = buf.find(b"\x00", self.pos)
                    if first == -1:
                        if eof:
                            self.state = "patch"
                            continue
                        return
                    meta = bytes(buf[self.pos + 1 : first]).split()
                    status = meta[-1][:1] if meta else b"M"
                    n_paths = 2 if status in (b"R", b"C") else 1
                    cursor = first + 1
                    paths: list[bytes] = []
                    for _ in range(n_paths):
                        nul = buf.find(b"\x00", cursor)
                        if nul == -1:
                            break
                        paths.append(bytes(buf[cursor:nul]))
                        cursor = nul + 1
                    if len(paths) < n_paths:
                        if eof:
                            self.state = "patch"
                            continue
                        return
                    assert self.current is not None
                    commit = self.current
                    for raw_path in paths:
                        if len(commit.files) >= FILES_MAX:
                            # past the cap: counted, not kept (git lists a path once per
                            # entry; only a rename's two paths share an entry)
                            commit.files_total += 1
                            continue
                        text, bad = decode(raw_path)
                        if bad and "path" not in commit.decode_errors:
                            commit.decode_errors.append("path")
                        if text not in self._paths:
                            self._paths.add(text)
                            commit.files.append(text)
                            commit.files_total += 1
                    self.pos = cursor
                else:
                    if buf[self.pos : self.pos + 1] == b"\x00":
                        self.pos += 1
                    self.state = "patch"
                    self.delta = _Delta(self.max_lines)
            elif self.state == "patch":
                if self.delta is None:
                    self.delta = _Delta(self.max_lines)
                nxt = buf.find(_START, self.pos)
                if nxt == -1:
                    limit = len(buf) if eof else max(self.pos, len(buf) - len(_START) + 1)
                    self.delta.feed(buf, self.pos, limit)
                    if self.sink is not None:
                        self.sink.feed(buf, self.pos, limit)
                    self.pos = limit
                    return
                self.delta.feed(buf, self.pos, nxt)
                if self.sink is not None:
                    self.sink.feed(buf, self.pos, nxt)
                self.pos = nxt
                done = self._finalize()
                if done is not None:
                    yield done
                self.state = "header"


def parse_time(raw: bytes) -> tuple[int, bool]:
    """A commit time as git prints it (``%at``: decimal digits, possibly huge, or empty when
    git cannot parse it) → (Unix seconds clamped to [MIN_TIME, MAX_TIME], valid)."""
    text = raw.strip()
    if not text or not text.isdigit() or len(text) > 20:
        return (MAX_TIME if text.isdigit() else MIN_TIME), False
    value = int(text)
    if value > MAX_TIME:
        return MAX_TIME, False
    return value, True


def _parse_header(raw: bytes) -> LogCommit:
    """One commit's header fields (see ``_FORMAT``). A header that is valid UTF-8 as a whole
    (nearly all) is decoded in one call; otherwise field by field, so each field's invalid
    bytes are replaced and named in ``decode_errors`` (``_parse_header_fields``)."""
    try:
        fields = raw.decode("utf-8").split("\x00")
    except UnicodeDecodeError:
        return _parse_header_fields(raw)
    if len(fields) < 13:
        raise ValueError(f"unexpected git log header: {raw[:200]!r}")
    h, p, an, ae, amn, ame, at, cn, ce, cmn, cme, ct = fields[:12]
    author_time, author_ok = _parse_time_text(at)
    committer_time, committer_ok = _parse_time_text(ct)
    commit = LogCommit(
        hash=h, parents=p.split(), author_name=amn, author_email=ame, author_time=author_time,
        committer_name=cmn, committer_email=cme, committer_time=committer_time,
        raw_message="\x00".join(fields[12:]),
        author_raw=f"{an} <{ae}>", committer_raw=f"{cn} <{ce}>",
    )
    if not author_ok:
        commit.invalid_times["author_time"] = at.encode().decode("ascii", "replace")[:40]
    if not committer_ok:
        commit.invalid_times["committer_time"] = ct.encode().decode("ascii", "replace")[:40]
    return commit


def _parse_time_text(text: str) -> tuple[int, bool]:
    """``parse_time(text.encode())`` without encoding the plain case (ASCII digits only, at
    most 20 of them: what git prints for nearly every commit)."""
    if text.isascii() and text.isdigit() and len(text) <= 20:
        value = int(text)
        return (MAX_TIME, False) if value > MAX_TIME else (value, True)
    return parse_time(text.encode("utf-8"))


def _parse_header_fields(raw: bytes) -> LogCommit:
    parts = raw.split(b"\x00")
    if len(parts) < 13:
        raise ValueError(f"unexpected git log header: {raw[:200]!r}")
    # The message is the last field and cannot hold NUL; rejoin defensively all the same.
    h, p, an, ae, amn, ame, at, cn, ce, cmn, cme, ct = parts[:12]
    message = b"\x00".join(parts[12:])
    errors: list[str] = []

    def text(value: bytes, name: str) -> str:
        out, bad = decode(value)
        if bad:
            errors.append(name)
        return out

    author_time, author_ok = parse_time(at)
    committer_time, committer_ok = parse_time(ct)
    commit = LogCommit(
        hash=h.decode("ascii"),
        parents=p.decode("ascii").split(),
        author_name=text(amn, "author"),
        author_email=text(ame, "author"),
        author_time=author_time,
        committer_name=text(cmn, "committer"),
        committer_email=text(cme, "committer"),
        committer_time=committer_time,
        raw_message=text(message, "message"),
        author_raw=f"{text(an, 'author')} <{text(ae, 'author')}>",
        committer_raw=f"{text(cn, 'committer')} <{text(ce, 'committer')}>",
    )
    if not author_ok:
        commit.invalid_times["author_time"] = at.decode("ascii", "replace")[:40]
    if not committer_ok:
        commit.invalid_times["committer_time"] = ct.decode("ascii", "replace")[:40]
    commit.decode_errors = sorted(set(errors))
    return commit


def _run_batch(
    git_dir: Path,
    hashes: Sequence[str],
    max_lines: int,
    *,
    patch: bool = True,
    mailmap: Path | None = None,
    patch_ids: bool = False,
    cuts: frozenset[int] = frozenset(),
) -> Iterator[LogCommit | tuple[int, str]]:
    """Yield parsed commits in input order; on git failure, finally yield (rc, stderr).

    ``patch_ids`` (with ``patch``): also compute each commit's ``patch_id`` beside the
    stream (``_PatchIdSink``); the commits are then held until the ids are known: until the
    ``n``-th commit for each ``n`` in ``cuts`` (where the caller's batches end: one
    ``git patch-id`` process per batch, beside one ``git log`` for all of them) and until
    the end of the stream.
    """
    args = [
        "log", "--no-walk=unsorted", "--stdin", f"--format={_FORMAT}",
        *_LOG_OPTIONS, *_DIFF_OPTIONS,
    ]
    if patch:
        args.append("-p")
    with_ids = patch and patch_ids
    sink = _PatchIdSink(git_dir) if with_ids else None
    held: list[LogCommit] = []
    read = 0
    with tempfile.TemporaryFile() as err:
        proc = popen_git(
            git_dir, args, mailmap=mailmap,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(("\n".join(hashes) + "\n").encode("ascii"))
            proc.stdin.close()
        except BrokenPipeError:
            pass
        parser = _Parser(max_lines, sink)
        try:
            while True:
                chunk = proc.stdout.read1(_READ_SIZE)  # type: ignore[attr-defined]
                if not chunk:
                    break
                if sink is None:
                    yield from parser.feed(chunk)
                    continue
                for commit in parser.feed(chunk):
                    held.append(commit)
                    read += 1
                    if read in cuts and read < len(hashes):
                        # the next commit's header is not parsed yet: its patch goes to
                        # the next batch's process
                        done, sink = sink, _PatchIdSink(git_dir)
                        parser.sink = sink
                        _assign_patch_ids(held, done.finish())
                        yield from held
                        held = []
            rest = parser.finish()
            rc = proc.wait()
        except BaseException:
            if sink is not None:
                sink.kill()
            raise
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        if rc == 0:
            held.extend(rest)
        if sink is not None:
            _assign_patch_ids(held, sink.finish())
        yield from held
        if rc == 0:
            return
        err.seek(0)
        yield (rc, err.read().decode("utf-8", "replace"))


def _assign_patch_ids(commits: list[LogCommit], ids: dict[str, str] | None) -> None:
    """Set ``patch_id`` on ``commits``: the id git printed, "" when it printed none (no
    diff), None for every commit when ``git patch-id`` failed (not computed)."""
    for commit in commits:
        if ids is None:
            commit.patch_id = None
        elif commit.delta_missing or commit.shallow:
            commit.patch_id = ""
        else:
            commit.patch_id = ids.get(commit.hash, "")


def stream_commits(
    git_dir: Path,
    hashes: Sequence[str],
    *,
    delta_max_lines: int = 200,
    mailmap: Path | None = None,
    patch_ids: bool = False,
) -> Iterator[LogCommit]:
    """Yield one ``LogCommit`` per hash, in the order given, reading with as few git
    processes as possible. A commit whose objects are missing is still yielded, with
    ``delta_missing`` set. ``mailmap``: the ``.mailmap`` file giving canonical identities
    (None: identities as committed; see ``gitio.mailmap``). ``patch_ids``: fill
    ``LogCommit.patch_id`` from a ``git patch-id --stable`` process fed the same patch bytes
    (commits then arrive once the whole list is read; ``stream_batches`` releases them
    batch by batch).

    :raises GitError: only if even the header of a commit cannot be read.
    """
    for batch in stream_batches(git_dir, [hashes], delta_max_lines=delta_max_lines,
                                mailmap=mailmap, patch_ids=patch_ids):
        yield from batch


def stream_batches(
    git_dir: Path,
    batches: Sequence[Sequence[str]],
    *,
    delta_max_lines: int = 200,
    mailmap: Path | None = None,
    patch_ids: bool = False,
    diff_keys: Mapping[str, DiffKey] | None = None,
) -> Generator[list[LogCommit], None, None]:
    """Yield, per batch of ``batches`` (lists of hashes), its ``LogCommit``s in the order
    given (an empty batch gives ``[]``), all read by one ``git log`` process (plus one per
    commit git fails on: see the module docstring) rather than one per batch.

    ``patch_ids``: one ``git patch-id --stable`` process per batch, fed that batch's patch
    bytes; a batch is yielded as soon as its last commit is read and its ids are known, so
    a consumer can store batch ``n`` while git prints batch ``n + 1``. Other arguments as
    in ``stream_commits``; each commit is exactly what ``stream_commits`` gives for it.

    ``diff_keys``: hash → ``(tree of its first parent, or "" for a root; its tree)``
    (``refs.rev_list_trees``), for the commits where it is known. A commit whose key equals
    an earlier commit's in ``batches`` is not diffed by git: what git would print for it is
    a function of those two trees (and this run's options), so its ``files``, ``delta`` and
    ``patch_id`` are copied from the earlier one and only its header is read (one
    ``git log`` without diff options for all such commits). In flask that is 796 of 5,572
    commits (mostly ``--no-ff`` merges of one-commit branches, whose first-parent diff is
    the branch commit's). A commit whose source's diff was unavailable is read by git.

    :raises GitError: only if even the header of a commit cannot be read.
    :raises ValueError: git printed commits in another order than asked (a git bug).
    """
    hashes = [h for batch in batches for h in batch]
    ends: list[int] = []
    for batch in batches:
        ends.append((ends[-1] if ends else 0) + len(batch))
    source_of = _diff_sources(hashes, diff_keys) if diff_keys else {}
    commits = (
        _stream_derived(git_dir, hashes, ends, source_of, delta_max_lines, mailmap, patch_ids)
        if source_of else
        _stream(git_dir, hashes, frozenset(ends), delta_max_lines, mailmap, patch_ids)
    )
    try:
        start = 0
        for end in ends:
            yield [next(commits) for _ in range(end - start)]
            start = end
    finally:
        commits.close()  # stops git at once when the consumer stops early


def _stream(
    git_dir: Path, hashes: list[str], ends: frozenset[int], max_lines: int,
    mailmap: Path | None, patch_ids: bool,
) -> Generator[LogCommit, None, None]:
    """Every commit of ``hashes``, in order, each with its patch-id when asked (released at
    each position in ``ends``); one ``git log`` process, restarted past a commit it fails on."""
    i = 0
    while i < len(hashes):
        done = 0
        failure: tuple[int, str] | None = None
        cuts = frozenset(end - i for end in ends if end > i)
        for item in _run_batch(
            git_dir, hashes[i:], max_lines, mailmap=mailmap, patch_ids=patch_ids, cuts=cuts,
        ):
            if isinstance(item, tuple):
                failure = item
                break
            if item.hash != hashes[i + done]:
                raise ValueError(f"git log order mismatch: {item.hash} != {hashes[i + done]}")
            yield item
            done += 1
        if failure is None:
            return
        bad = hashes[i + done]
        yield _read_degraded(git_dir, bad, max_lines, failure[1], mailmap, patch_ids)
        i += done + 1


def _diff_sources(hashes: Sequence[str], diff_keys: Mapping[str, DiffKey]) -> dict[int, int]:
    """Position of each commit whose diff key an earlier position has → that position."""
    first: dict[DiffKey, int] = {}
    source_of: dict[int, int] = {}
    for n, commit_hash in enumerate(hashes):
        key = diff_keys.get(commit_hash)
        if key is None:
            continue
        src = first.setdefault(key, n)
        if src != n:
            source_of[n] = src
    return source_of


def _stream_headers(
    git_dir: Path, hashes: list[str], mailmap: Path | None
) -> Generator[LogCommit, None, None]:
    """The headers of ``hashes``, in order, from one ``git log`` without diff options
    (``files``/``delta`` empty). A commit git cannot read is read alone by
    ``_read_degraded``'s header path."""
    i = 0
    while i < len(hashes):
        done = 0
        failed = False
        args = ["log", "--no-walk=unsorted", "--stdin", f"--format={_FORMAT}",
                *_LOG_OPTIONS, "-z"]
        with tempfile.TemporaryFile() as err:
            proc = popen_git(git_dir, args, mailmap=mailmap, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=err)
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(("\n".join(hashes[i:]) + "\n").encode("ascii"))
                proc.stdin.close()
            except BrokenPipeError:
                pass
            parser = _Parser(1)
            try:
                while True:
                    chunk = proc.stdout.read1(_READ_SIZE)  # type: ignore[attr-defined]
                    if not chunk:
                        break
                    for commit in parser.feed(chunk):
                        done += 1
                        yield commit
                rest = parser.finish()
                failed = proc.wait() != 0
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                proc.stdout.close()
        if not failed:
            for commit in rest:
                done += 1
                yield commit
            return
        yield _read_header_alone(git_dir, hashes[i + done], mailmap)
        i += done + 1


def _derive(head: LogCommit, source: LogCommit) -> LogCommit:
    """``head`` (a header from ``_stream_headers``) with the diff of ``source``, a commit of
    the same first-parent and own trees: what git prints for ``head``'s diff."""
    head.files = list(source.files)
    head.files_total = source.files_total
    head.delta = source.delta
    head.delta_lines = source.delta_lines
    head.decode_errors.extend(e for e in source.decode_errors if e in _DIFF_ERRORS)
    head.patch_id = source.patch_id
    return head


def _stream_derived(
    git_dir: Path, hashes: list[str], ends: list[int], source_of: dict[int, int],
    max_lines: int, mailmap: Path | None, patch_ids: bool,
) -> Generator[LogCommit, None, None]:
    """``_stream`` of ``hashes`` where each position in ``source_of`` takes its diff from
    the earlier position it names (``_derive``) instead of git's diff: git reads the other
    commits with their diffs and those only by header, in a second process."""
    read = [h for n, h in enumerate(hashes) if n not in source_of]
    # a batch end, counted in the commits git diffs (a batch of copies only: a repeat)
    counted: list[int] = []
    seen = 0
    for n in range(len(hashes)):
        if n not in source_of:
            seen += 1
        counted.append(seen)
    git_ends = {counted[end - 1] for end in ends if end > 0}
    main = _stream(git_dir, read, frozenset(git_ends), max_lines, mailmap, patch_ids)
    heads = _stream_headers(git_dir, [hashes[n] for n in sorted(source_of)], mailmap)
    uses: dict[int, int] = {}
    for used in source_of.values():
        uses[used] = uses.get(used, 0) + 1
    kept: dict[int, LogCommit] = {}
    try:
        for n, commit_hash in enumerate(hashes):
            src = source_of.get(n)
            if src is None:
                commit = next(main)
                if n in uses:
                    kept[n] = commit
                yield commit
                continue
            head = next(heads)
            if head.hash != commit_hash:
                raise ValueError(f"git log order mismatch: {head.hash} != {commit_hash}")
            source = kept[src]
            uses[src] -= 1
            if not uses[src]:
                del kept[src]
            if source.complete and (source.patch_id is not None or not patch_ids):
                yield _derive(head, source)
            else:  # git could not diff the source (or hash its patch): ask git for this one
                yield _read_degraded(git_dir, commit_hash, max_lines, "", mailmap, patch_ids)
    finally:
        main.close()
        heads.close()


def _read_degraded(
    git_dir: Path, commit_hash: str, max_lines: int, stderr: str, mailmap: Path | None,
    patch_ids: bool = False,
) -> LogCommit:
    """Read one commit that made a batch fail: first alone with its patch, then without."""
    for patch in (True, False):
        got: LogCommit | None = None
        for item in _run_batch(
            git_dir, [commit_hash], max_lines, patch=patch, mailmap=mailmap,
            patch_ids=patch_ids,
        ):
            if isinstance(item, tuple):
                stderr = item[1]
                got = None
                break
            got = item
        if got is not None:
            if not patch:
                reason = _first_fatal_line(stderr)
                got.delta = _MISSING_NOTE.format(reason=reason)
                got.delta_missing = True
                if patch_ids:
                    got.patch_id = ""
                log.warning("commit %s: diff unavailable (%s)", commit_hash, reason)
            return got
    # Even the header is unreadable (the commit's tree is gone): build the header alone.
    commit = _read_header_alone(git_dir, commit_hash, mailmap)
    reason = _first_fatal_line(stderr)
    commit.delta = _MISSING_NOTE.format(reason=reason)
    commit.delta_missing = True
    if patch_ids:
        commit.patch_id = ""
    return commit


def _read_header_alone(git_dir: Path, commit_hash: str, mailmap: Path | None) -> LogCommit:
    """One commit's header, no diff options at all (``files``/``delta`` empty).

    :raises GitError: even the header cannot be read.
    """
    proc = run_git(
        git_dir,
        ["log", "-1", "--no-walk", f"--format={_FORMAT}", *_LOG_OPTIONS, commit_hash],
        mailmap=mailmap,
    )
    parser = _Parser(1)
    commits = [*parser.feed(proc.stdout), *parser.finish()]
    return commits[0]


def _first_fatal_line(stderr: str) -> str:
    for line in stderr.splitlines():
        line = line.strip()
        if line.startswith(("fatal:", "error:")):
            return line
    return stderr.strip().splitlines()[0] if stderr.strip() else "git failed"


_IDENTITY_FORMAT = "%H%x00%aN%x00%aE%x00%cN%x00%cE%x00"
_IDENTITY_CHUNK = 20_000


def read_identities(
    git_dir: Path, hashes: Sequence[str], *, mailmap: Path | None
) -> Iterator[tuple[str, str, str]]:
    """(hash, author, committer) per hash, in order, identities as ``Name <email>`` after
    ``mailmap`` (see ``stream_commits``); headers only, no diffs, so it costs a fraction of
    reading the commits. Used to re-apply a changed ``.mailmap`` to stored commits.

    :raises GitError: a commit is unreadable.
    """
    for start in range(0, len(hashes), _IDENTITY_CHUNK):
        part = hashes[start : start + _IDENTITY_CHUNK]
        proc = run_git(
            git_dir,
            ["log", "--no-walk=unsorted", "--stdin", f"--format={_IDENTITY_FORMAT}",
             *_LOG_OPTIONS],
            input_bytes=("\n".join(part) + "\n").encode("ascii"),
            mailmap=mailmap,
        )
        fields = proc.stdout.split(b"\x00")
        for n in range(len(fields) // 5):
            h, an, ae, cn, ce = fields[5 * n : 5 * n + 5]
            yield (
                h.strip().decode("ascii"),
                f"{decode(an)[0]} <{decode(ae)[0]}>",
                f"{decode(cn)[0]} <{decode(ce)[0]}>",
            )
