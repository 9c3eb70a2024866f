"""Markdown headings by a CommonMark parser (cmark-gfm through ``cmarkgfm``, C), with exact
line numbers.

The document is parsed by cmark (CommonMark, no extensions) and rendered with source
positions; only the renderer's own tags are read (raw HTML is not passed through, text is
escaped), so a ``#`` line inside a fenced or indented code block, an HTML block or a list
item's fence is never a heading, and a setext heading (a line underlined with ``===`` or
``---``) is one. Titles are taken from the source lines exactly as markdown-it-py's heading
rules take them (``_atx_title``, ``_setext_title``): the previous parser, whose headings these
are proven equal to on the click, flask and fastapi docs (``tests/repo_docs/
test_markdown_parser.py``); it parsed at ~2 MiB/s, cmark at ~20 MiB/s.
Only top-level headings count as document sections: a heading inside a blockquote or list
item is content. YAML (``---``) or TOML (``+++``) front matter at the very start of the file
is skipped (its lines keep their numbers, they just never form headings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Heading:
    """A section heading. ``level`` 1-6; ``title`` its text (stripped, inline markup as
    written, a trailing ``{ #anchor }`` attribute list dropped); ``line_start``/``line_end``
    the 1-based inclusive lines it occupies (a setext heading ends on its underline)."""

    level: int
    title: str
    line_start: int
    line_end: int
    #: the line holding the title text (the line after an RST overline)
    title_line: int = 0


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
