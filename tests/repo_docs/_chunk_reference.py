"""main's chunker (commit 54f7fc0) frozen as the reference the faster one is proven against:
``chunk_document`` cut with headings read from cmark's HTML rendering (``markdown_headings``),
per-line arrays built line by line. Test-only; not maintained beyond that role."""

# ruff: noqa

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from gitquarry.parsing.markdown import Heading
from gitquarry.repo_docs.chunker import ChunkPolicy, ChunkSpan

_FRONT_MATTER = re.compile(r"\A(---|\+\+\+)[ \t]*\r?\n")
#: a trailing attribute list (``## Title { #anchor }``, pandoc / Python-Markdown attr_list)
_ATTRS = re.compile(r"\s*\{\s*[#.][^{}]*\}\s*$")
#: the renderer's heading tags (``<h2 data-sourcepos="L:C-L:C">``); its container tags are
#: ``<blockquote`` / ``<li`` (text is escaped and raw HTML omitted: no other ``<`` can occur)
_HEADING_TAG = re.compile(r'<h([1-6]) data-sourcepos="(\d+):\d+-(\d+):\d+"')
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
#: what markdown-it-py's ``mdTrim`` strips: CommonMark whitespace (space, tab, line feed,
#: vertical tab, form feed, carriage return) plus U+2000-U+200A, U+2028 and U+2029
_TRIM = " \t\n\x0b\x0c\r" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u2028\u2029"


def _render(text: str) -> str:
    import cmarkgfm  # the parser only when a document is parsed
    from cmarkgfm.cmark import Options

    return str(cmarkgfm.markdown_to_html(text, options=Options.CMARK_OPT_SOURCEPOS))


def front_matter_lines(text: str) -> int:
    """Lines taken by front matter at the start of ``text`` (0 when there is none): an
    opening ``---``/``+++`` line and the matching closing line (``---``/``...`` or ``+++``)."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return 0
    opener = match.group(1)
    closers = ("---", "...") if opener == "---" else ("+++",)
    lines = text.split("\n")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r \t") in closers:
            return i + 1
    return 0


_ATX_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


def title_from_line(line: str) -> str:
    """A heading's title from its source line (ATX markers, a closing ``#`` run and an
    attribute list removed; a setext or RST title line is its own title)."""
    match = _ATX_LINE.match(line)
    title = (match.group(1) or "") if match else line
    title = title.strip()
    return _ATTRS.sub("", title) or title


def _atx_title(line: str) -> str:
    """An ATX heading's title as markdown-it-py's ``heading`` rule takes it: after the ``#``
    run, without a closing ``#`` run that follows a space or tab, trimmed."""
    rest = line.lstrip(" ").lstrip("#")
    end = len(rest)
    while end and rest[end - 1] in " \t":
        end -= 1
    tail = end
    while tail and rest[tail - 1] == "#":
        tail -= 1
    if tail and rest[tail - 1] in " \t":
        end = tail
    return rest[:end].strip(_TRIM)


def _setext_title(lines: list[str]) -> str:
    """A setext heading's title (its lines before the underline), as markdown-it-py's
    ``lheading`` rule takes it at the top level: joined by line feeds, trimmed."""
    return "\n".join(lines).strip(_TRIM)


def markdown_headings(text: str) -> list[Heading]:
    """The top-level headings of the Markdown ``text``, in document order."""
    skip = front_matter_lines(text)
    if skip:
        # keep line numbers: blank out the front matter rather than cutting it
        lines = text.split("\n")
        text = "\n" * skip + "\n".join(lines[skip:])
    if "#" not in text and "=" not in text and "-" not in text:
        return []  # no ATX marker and no setext underline: nothing to parse
    # CommonMark line endings: LF, CR LF and a lone CR (the parser counts lines so)
    source = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    headings: list[Heading] = []
    html = _render(text)
    depth, at = 0, 0
    for match in _HEADING_TAG.finditer(html):
        # container depth (block quotes, list items) from the tags since the last heading
        pos = match.start()
        depth += (html.count("<blockquote", at, pos) + html.count("<li", at, pos)
                  - html.count("</blockquote>", at, pos) - html.count("</li>", at, pos))
        at = pos
        if depth:
            continue
        tag = match.group(1)
        start, end = int(match.group(2)), int(match.group(3))
        if end > start:  # setext: cmark's end may run past the underline; it is the first
            end = next((n for n in range(start + 1, end + 1)
                        if _UNDERLINE.match(source[n - 1])), end)
        lines = [line.replace("\x00", "\ufffd") for line in source[start - 1 : end]]
        # an ATX heading is one line; a setext heading ends on its underline
        title = _atx_title(lines[0]) if start == end else _setext_title(lines[:-1])
        title = _ATTRS.sub("", title) or title
        headings.append(Heading(int(tag), title, start, end, start))
    return headings


@dataclass
class _Lines:
    text: list[str]  # lines without their "\n"
    offsets: list[int]  # byte offset of each line's start; one extra entry: total length
    chars: list[int]  # characters per line, "\n" included
    #: ``cum[i]``: characters of lines ``[0, i)`` ("\n" included), so a range's size is
    #: ``cum[b] - cum[a]``
    cum: list[int]
    blank: list[bool]  # whitespace-only lines


def _lines(text: str) -> _Lines:
    lines = text.split("\n")
    chars = [len(line) + 1 for line in lines]
    if text.isascii():
        sizes = chars
    else:
        sizes = [n if line.isascii() else len(line.encode("utf-8")) + 1
                 for line, n in zip(lines, chars, strict=True)]
    offsets = [0, *accumulate(sizes)]
    offsets[-1] -= 1  # the last line has no "\n"
    blank = [not line.strip() for line in lines]
    return _Lines(lines, offsets, chars, [0, *accumulate(chars)], blank)


def headings_for(text: str, content_class: str) -> list[Heading]:
    if content_class == "markdown":
        return markdown_headings(text)
    if content_class == "restructuredtext":
        from gitquarry.parsing.rst import rst_titles

        return rst_titles(text)
    return []


Section = tuple[int, int, tuple[str, ...], tuple[int, ...]]


def _sections(headings: Sequence[Heading], n_lines: int) -> list[Section]:
    """(first line index, end line index exclusive, heading path, title lines) per section."""
    sections: list[Section] = []
    first = headings[0].line_start - 1 if headings else n_lines
    if first > 0:
        sections.append((0, first, (), ()))
    stack: list[Heading] = []
    for i, heading in enumerate(headings):
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        end = headings[i + 1].line_start - 1 if i + 1 < len(headings) else n_lines
        sections.append((heading.line_start - 1, end, tuple(h.title for h in stack),
                         tuple(h.title_line or h.line_start for h in stack)))
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
    blank, cum = lines.blank, lines.cum
    paragraphs: list[tuple[int, int]] = []
    i = start
    while i < end:
        while i < end and blank[i]:
            i += 1
        j = i
        while j < end and not blank[j]:
            j += 1
        if j > i:
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
    base = lines.offsets[index]
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
    policy = policy or ChunkPolicy()
    text = data.decode("utf-8")
    lines = _lines(text)
    n = len(lines.text)
    sections = _sections(headings_for(text, content_class), n)
    # merge tiny sections into the next one when both fit
    merged: list[Section] = []
    carry: Section | None = None
    for start, end, path, path_lines in sections:
        if carry is not None:
            combined = lines.cum[end] - lines.cum[carry[0]]
            parent = carry[2][:-1]
            related = path[: len(parent)] == parent and len(path) >= len(carry[2])
            if combined <= policy.max_chars and related:
                # a sibling or a child: the chunk starts (and is cited) at the tiny section,
                # so it keeps that section's heading path
                start, path, path_lines = carry[0], carry[2], carry[3]
            else:
                merged.append(carry)
            carry = None
        size = lines.cum[end] - lines.cum[start]
        if size < policy.min_chars and not all(lines.blank[start:end]):
            carry = (start, end, path, path_lines)
            continue
        merged.append((start, end, path, path_lines))
    if carry is not None:
        merged.append(carry)
    spans: list[ChunkSpan] = []
    for start, end, path, path_lines in merged:
        for a, b in _pieces(lines, start, end, policy.max_chars):
            if b - a == 1 and lines.chars[a] > policy.max_chars + 1:
                spans.extend(_cut_line(data, lines, a, policy.max_chars, path, path_lines))
                continue
            byte_start = lines.offsets[a]
            byte_end = lines.offsets[b - 1] + len(lines.text[b - 1].encode("utf-8"))
            spans.append(ChunkSpan(byte_start, byte_end, a + 1, b, path, path_lines))
    return spans
