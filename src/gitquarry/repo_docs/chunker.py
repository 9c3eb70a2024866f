"""Heading-aware chunks of one document, as exact byte and line ranges of its blob.

Sections come from the document's headings: Markdown by the CommonMark block parser (ATX and
setext headings, none inside code, HTML blocks or front matter), reStructuredText by its
section titles (underline, optional overline, any adornment character), other text files are
one section. A section longer than ``max_chars`` characters is split at paragraph (blank
line) boundaries, then at line boundaries, and a single line longer than the bound at
character boundaries; a section shorter than ``min_chars`` is merged into the next section
when the two fit the bound and the next one is its sibling or child (the merged chunk keeps
the first section's heading path: that is where its citation starts). Leading and trailing
blank lines are not part of a chunk; whitespace-only chunks are dropped.

A chunk is a locator, never text: ``byte_start``/``byte_end`` (0-based, end exclusive, on
UTF-8 character boundaries), ``line_start``/``line_end`` (1-based, inclusive) and the
heading path (``("Deployment", "Nginx", "Configuration")``), which is recomputed from the
blob whenever it is needed and never stored. The chunk id is a hashing contract:
``sha256(canonical JSON [blob sha256, byte_start, byte_end, chunk policy key])``, so a
renamed or re-committed identical file has the same chunk ids.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import add, not_

from gitquarry.parsing.markdown import Heading, HeadingRow, title_from_line
from gitquarry.repo_docs.policy import canonical_json

#: a carriage return that does not start a CRLF pair
_LONE_CR = re.compile(r"\r(?!\n)")

CHUNK_POLICY_ID = "repo-docs-sections-v1"
DEFAULT_MAX_CHARS = 1500
DEFAULT_MIN_CHARS = 200


@dataclass(frozen=True)
class ChunkPolicy:
    """How documents are cut; ``key`` (id + parameters) is part of every chunk id."""

    max_chars: int = DEFAULT_MAX_CHARS
    min_chars: int = DEFAULT_MIN_CHARS
    policy_id: str = CHUNK_POLICY_ID

    @property
    def key(self) -> str:
        return f"{self.policy_id}:max={self.max_chars}:min={self.min_chars}"

    def to_dict(self) -> dict[str, object]:
        return {"id": self.policy_id, "max_chars": self.max_chars, "min_chars": self.min_chars}


#: ``chunk_document``'s policy when none is given (one object, not one per call)
_DEFAULT_POLICY = ChunkPolicy()


@dataclass(frozen=True)
class ChunkSpan:
    """One chunk of a blob (see module docstring for the units)."""

    byte_start: int
    byte_end: int
    line_start: int
    line_end: int
    heading_path: tuple[str, ...]
    #: 1-based lines holding the heading path's titles (numbers only: the cache may store
    #: them, and the path is re-read from the blob with ``heading_path_from_lines``)
    heading_lines: tuple[int, ...] = ()


class _Lines:
    """Per-line arrays of one document, each built by one pass in C (``map``/``accumulate``
    over ``str.split``); the blank flags only when a section needs them, byte offsets only
    where a chunk starts or ends."""

    __slots__ = ("_at_byte", "_at_line", "_blank", "ascii", "cum", "source", "text")

    def __init__(self, source: str) -> None:
        self.source = source
        #: lines without their "\n"
        self.text: list[str] = source.split("\n")
        #: ``cum[i]``: characters of lines ``[0, i)`` ("\n" included), so a range's size is
        #: ``cum[b] - cum[a]`` and line ``i`` starts at character ``cum[i]``
        self.cum: list[int] = list(map(add, accumulate(map(len, self.text), initial=0),
                                       range(len(self.text) + 1)))
        self.ascii = source.isascii()
        self._blank: list[bool] | None = None
        self._at_line, self._at_byte = 0, 0  # the last offset computed (non-ASCII text)

    def offset(self, index: int) -> int:
        """Byte offset of line ``index``'s start (``index`` up to the line count: one past
        the end, as if the last line had a "\n")."""
        cum = self.cum
        if self.ascii:
            return cum[index]
        if index < self._at_line:
            self._at_line, self._at_byte = 0, 0
        end = min(cum[index], len(self.source))
        self._at_byte += len(self.source[cum[self._at_line] : end].encode("utf-8"))
        self._at_line = index
        return self._at_byte + cum[index] - end

    @property
    def blank(self) -> list[bool]:
        """Whitespace-only lines (``not line.strip()``)."""
        if self._blank is None:
            self._blank = list(map(not_, map(str.strip, self.text)))
        return self._blank

    def chars(self, index: int) -> int:
        """Characters of line ``index``, its "\n" included."""
        return self.cum[index + 1] - self.cum[index]

    def all_blank(self, start: int, end: int) -> bool:
        """Whether lines ``[start, end)`` are all whitespace (true for no lines)."""
        piece = self.source[self.cum[start] : self.cum[end]] if start < end else ""
        return not piece or piece.isspace()

    def byte_end(self, index: int) -> int:
        """Byte offset just past line ``index`` (its "\n" excluded)."""
        return self.offset(index + 1) - 1


def headings_for(text: str, content_class: str) -> list[Heading]:
    """The section headings of ``text`` (``markdown``, ``restructuredtext``; none for
    ``text``)."""
    return [Heading(*row) for row in _heading_rows(text, content_class, None, None)]


def _heading_rows(text: str, content_class: str, data: bytes | None,
                  lines: list[str] | None) -> list[HeadingRow]:
    """``headings_for`` as ``(level, title, line_start, line_end, title_line)`` rows;
    ``data``: ``text``'s UTF-8 bytes, ``lines``: ``text.split("\\n")``, when at hand.

    A document with a lone carriage return (old Mac line endings) has no headings: the
    parsers count a lone CR as a line break, while lines, citations and line ranges here are
    LF-delimited (as Git's), so their heading lines would point past the document or at the
    wrong line; such a file is chunked as plain text instead."""
    if "\r" in text and _LONE_CR.search(text):
        return []
    if content_class == "markdown":
        from gitquarry.parsing.markdown import heading_rows  # the parser on first use

        return heading_rows(text, text.encode("utf-8") if data is None else data, lines)
    if content_class == "restructuredtext":
        from gitquarry.parsing.rst import rst_titles

        return [(h.level, h.title, h.line_start, h.line_end, h.title_line)
                for h in rst_titles(text)]
    return []


Section = tuple[int, int, tuple[str, ...], tuple[int, ...]]


def _sections(headings: Sequence[HeadingRow], n_lines: int) -> list[Section]:
    """(first line index, end line index exclusive, heading path, title lines) per section."""
    sections: list[Section] = []
    first = headings[0][2] - 1 if headings else n_lines
    if first > 0:
        sections.append((0, first, (), ()))
    # (level, heading path, title lines) of the open headings, innermost last
    stack: list[tuple[int, tuple[str, ...], tuple[int, ...]]] = []
    for i, (level, title, line_start, _line_end, title_line) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        path, path_lines = (stack[-1][1], stack[-1][2]) if stack else ((), ())
        path, path_lines = (*path, title), (*path_lines, title_line or line_start)
        stack.append((level, path, path_lines))
        end = headings[i + 1][2] - 1 if i + 1 < len(headings) else n_lines
        sections.append((line_start - 1, end, path, path_lines))
    return sections


def heading_path_from_lines(data: bytes, lines: Sequence[int]) -> tuple[str, ...]:
    """The heading path re-read from the blob: the titles on ``lines`` (1-based)."""
    if not lines:
        return ()
    return heading_path_reader(data)(lines)


def heading_path_reader(data: bytes) -> Callable[[Sequence[int]], tuple[str, ...]]:
    """``heading_path_from_lines`` for many chunks of one blob: the blob is decoded and split
    once, on the first call that needs it."""
    text_lines: list[str] = []

    def read(lines: Sequence[int]) -> tuple[str, ...]:
        if not lines:
            return ()
        if not text_lines:
            text_lines.extend(data.decode("utf-8", "replace").split("\n"))
        return tuple(title_from_line(text_lines[n - 1].rstrip("\r"))
                     for n in lines if 0 < n <= len(text_lines))

    return read


def _pieces(lines: _Lines, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Split lines [start, end) into runs of at most ``max_chars`` characters: whole
    paragraphs packed greedily, a paragraph over the bound by lines. Returns line-index
    ranges; a single line over the bound is a range of its own (cut later)."""
    cum = lines.cum
    if start >= end:
        return []
    if cum[end] - cum[start] <= max_chars:
        # everything fits: one run from the first to the last non-blank line (what the
        # packing below gives when the whole range is within the bound)
        piece = lines.source[cum[start] : cum[end]]
        body = piece.lstrip()
        if not body:
            return []
        first = start + piece.count("\n", 0, len(piece) - len(body))
        last = start + piece.count("\n", 0, len(piece.rstrip()))
        return [(first, last + 1)]
    blank = lines.blank
    paragraphs: list[tuple[int, int]] = []
    i = start
    while i < end:
        try:
            i = blank.index(False, i, end)
        except ValueError:
            break
        try:
            j = blank.index(True, i, end)
        except ValueError:
            j = end
        paragraphs.append((i, j))
        i = j
    units: list[tuple[int, int]] = []
    for a, b in paragraphs:
        if cum[b] - cum[a] <= max_chars:
            units.append((a, b))
        else:
            units.extend((k, k + 1) for k in range(a, b))
    runs: list[tuple[int, int]] = []
    run_start, run_end, size = -1, -1, 0
    for a, b in units:
        unit_size = cum[b] - cum[run_end] if run_start >= 0 else cum[b] - cum[a]
        if run_start >= 0 and size + unit_size <= max_chars:
            run_end, size = b, size + unit_size
            continue
        if run_start >= 0:
            runs.append((run_start, run_end))
        run_start, run_end, size = a, b, cum[b] - cum[a]
    if run_start >= 0:
        runs.append((run_start, run_end))
    return runs


def _cut_line(data: bytes, lines: _Lines, index: int, max_chars: int,
              path: tuple[str, ...], path_lines: tuple[int, ...]) -> list[ChunkSpan]:
    """An overlong single line as pieces of at most ``max_chars`` characters."""
    text = lines.text[index]
    base = lines.offset(index)
    spans: list[ChunkSpan] = []
    pos_chars, pos_bytes = 0, base
    while pos_chars < len(text):
        piece = text[pos_chars : pos_chars + max_chars]
        size = len(piece.encode("utf-8"))
        if piece.strip():
            spans.append(ChunkSpan(pos_bytes, pos_bytes + size, index + 1, index + 1, path,
                                   path_lines))
        pos_chars += len(piece)
        pos_bytes += size
    return spans


def chunk_document(data: bytes, content_class: str,
                   policy: ChunkPolicy | None = None) -> list[ChunkSpan]:
    """The chunks of the UTF-8 document ``data``, in document order.

    ``content_class`` is ``markdown``, ``restructuredtext`` or ``text``.
    :raises UnicodeDecodeError: ``data`` is not UTF-8 (the planner excludes such files).
    """
    policy = policy or _DEFAULT_POLICY
    max_chars, min_chars = policy.max_chars, policy.min_chars
    text = data.decode("utf-8")
    lines = _Lines(text)
    cum = lines.cum
    n = len(lines.text)
    sections = _sections(_heading_rows(text, content_class, data, lines.text), n)
    # merge tiny sections into the next one when both fit
    merged: list[Section] = []
    carry: Section | None = None
    for section in sections:
        start, end, path, path_lines = section
        if carry is not None:
            parent = carry[2][:-1]
            if cum[end] - cum[carry[0]] <= max_chars and len(path) >= len(carry[2]) \
                    and path[: len(parent)] == parent:
                # a sibling or a child: the chunk starts (and is cited) at the tiny section,
                # so it keeps that section's heading path
                start, path, path_lines = carry[0], carry[2], carry[3]
                section = (start, end, path, path_lines)
            else:
                merged.append(carry)
            carry = None
        if cum[end] - cum[start] < min_chars and not lines.all_blank(start, end):
            carry = section
            continue
        merged.append(section)
    if carry is not None:
        merged.append(carry)
    spans: list[ChunkSpan] = []
    append = spans.append
    offset = lines.offset
    ascii_text = lines.ascii
    at_char = at_byte = 0  # the last character offset turned into a byte offset (below)
    for start, end, path, path_lines in merged:
        if start >= end:
            continue
        if cum[end] - cum[start] <= max_chars:
            # within the bound: one run from the first to the last non-blank line (what
            # ``_pieces`` gives; inlined: most sections take this path)
            piece = text[cum[start] : cum[end]]
            body = piece.lstrip()
            if not body:
                continue
            a = start + piece.count("\n", 0, len(piece) - len(body))
            b = start + piece.count("\n", 0, len(piece.rstrip())) + 1
            # bytes [offset(a), offset(b) - 1): characters [cum[a], cum[b] - 1) in UTF-8
            if ascii_text:
                append(ChunkSpan(cum[a], cum[b] - 1, a + 1, b, path, path_lines))
                continue
            first, last = cum[a], cum[b] - 1
            if first < at_char:
                at_char = at_byte = 0
            at_byte += len(text[at_char:first].encode("utf-8"))
            byte_start = at_byte
            at_byte += len(text[first:last].encode("utf-8"))
            at_char = last
            append(ChunkSpan(byte_start, at_byte, a + 1, b, path, path_lines))
            continue
        for a, b in _pieces(lines, start, end, max_chars):
            if b - a == 1 and lines.chars(a) > max_chars + 1:
                spans.extend(_cut_line(data, lines, a, max_chars, path, path_lines))
                continue
            append(ChunkSpan(offset(a), offset(b) - 1, a + 1, b, path, path_lines))
    return spans


def blob_digest(data: bytes) -> str:
    """sha256 of a blob's bytes (hex): the content identity chunk ids are built on."""
    return hashlib.sha256(data).hexdigest()


@functools.lru_cache(maxsize=256)
def _json_string(value: str) -> str:
    """``value`` as ``canonical_json`` writes a string (cached: digests and policy keys
    repeat for every chunk of a document)."""
    return canonical_json(value).decode()


def chunk_id(digest: str, span: ChunkSpan, policy: ChunkPolicy) -> str:
    """The chunk id (see module docstring)."""
    start, end = span.byte_start, span.byte_end
    if type(start) is int and type(end) is int and type(digest) is str:
        # canonical_json's bytes for [str, int, int, str], written directly
        key = (f"[{_json_string(digest)},{start},{end},{_json_string(policy.key)}]"
               .encode())
    else:
        key = canonical_json([digest, start, end, policy.key])
    return hashlib.sha256(key).hexdigest()


def slice_digest(data: bytes, span: ChunkSpan) -> str:
    """sha256 of the chunk's raw bytes: what citations are checked against."""
    return hashlib.sha256(data[span.byte_start : span.byte_end]).hexdigest()


def normalise_text(raw: str) -> str:
    """CRLF to LF, trailing spaces and tabs removed from every line."""
    return "\n".join(line.rstrip(" \t\r") for line in raw.split("\n")).strip("\n")


def embedding_input(path: str, span: ChunkSpan, data: bytes) -> str:
    """The text embedded for a chunk: its path, its heading path, a blank line, then the
    normalised chunk text."""
    body = normalise_text(data[span.byte_start : span.byte_end].decode("utf-8", "replace"))
    heading = " > ".join(span.heading_path)
    return f"{path}\n{heading}\n\n{body}" if heading else f"{path}\n\n{body}"
