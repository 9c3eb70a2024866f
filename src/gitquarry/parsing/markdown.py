"""Markdown headings by a CommonMark block parser (markdown-it-py), with exact line numbers.

Only the block structure is parsed (inline parsing is switched off: headings need none), so a
``#`` line inside a fenced or indented code block, an HTML block or a list item's fence is
never a heading, and a setext heading (a line underlined with ``===`` or ``---``) is one.
Only top-level headings count as document sections: a heading inside a blockquote or list
item is content. YAML (``---``) or TOML (``+++``) front matter at the very start of the file
is skipped (its lines keep their numbers, they just never form headings).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_FRONT_MATTER = re.compile(r"\A(---|\+\+\+)[ \t]*\r?\n")
#: a trailing attribute list (``## Title { #anchor }``, pandoc / Python-Markdown attr_list)
_ATTRS = re.compile(r"\s*\{\s*[#.][^{}]*\}\s*$")
_local = threading.local()


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


def _parser() -> MarkdownIt:
    md: MarkdownIt | None = getattr(_local, "md", None)
    if md is None:
        from markdown_it import MarkdownIt  # the parser only when a document is parsed

        md = MarkdownIt("commonmark").disable(["inline", "text_join"])
        _local.md = md
    return md


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


def markdown_headings(text: str) -> list[Heading]:
    """The top-level headings of the Markdown ``text``, in document order."""
    skip = front_matter_lines(text)
    if skip:
        # keep line numbers: blank out the front matter rather than cutting it
        lines = text.split("\n")
        text = "\n" * skip + "\n".join(lines[skip:])
    tokens = _parser().parse(text)
    headings: list[Heading] = []
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
        title = _ATTRS.sub("", title) or title
        start, end = token.map
        headings.append(Heading(int(token.tag[1]), title, start + 1, end, start + 1))
    return headings
