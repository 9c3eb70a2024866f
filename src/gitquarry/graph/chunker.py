"""Split Markdown into search chunks on level-2 headings, never above a character bound.

Headings come from the CommonMark block parser (``gitquarry.parsing.markdown``): ATX
(``## Title``) and setext (``Title`` underlined with ``---``) level-2 headings start a
section, which runs to the next one; a ``##`` line inside fenced code (also a fence opened in
a list item), an HTML block or front matter is content, never a heading. Text before the
first such heading is a section headed by the document's level-1 title, or "" without one.
A section of at most ``max_chars`` characters is one chunk.
A longer one is split by paragraph (blank lines), a paragraph longer than the room left by
line, a line longer than that by word, and a word longer than that by characters, packing
pieces greedily. Every chunk of a section starts with the section's heading line (when that
line takes at most a quarter of the bound), so the heading text is part of each chunk's
searchable content. Whitespace-only chunks are dropped. No chunk is ever longer than
``max_chars``.
"""

from __future__ import annotations

import re

from gitquarry.graph.models import Chunk
from gitquarry.parsing.markdown import markdown_headings

DEFAULT_MAX_CHARS = 2000

_BLANK_RUN = re.compile(r"\n[ \t]*\n")


def _sections(text: str) -> list[tuple[str, str, list[str]]]:
    """``(heading, heading_line, body_lines)`` per section, in document order.

    ``heading_line`` is the heading's first source line (a setext heading's underline is
    dropped); the body is every line after the heading up to the next level-2 heading.
    """
    lines = text.splitlines()
    headings = markdown_headings(text)
    h2 = [h for h in headings if h.level == 2]
    first_h2 = h2[0].line_start if h2 else len(lines) + 1
    title = next((h.title for h in headings if h.level == 1 and h.line_start < first_h2), "")
    sections: list[tuple[str, str, list[str]]] = [(title, "", lines[: first_h2 - 1])]
    for i, heading in enumerate(h2):
        end = h2[i + 1].line_start - 1 if i + 1 < len(h2) else len(lines)
        sections.append(
            (heading.title, lines[heading.line_start - 1].strip(), lines[heading.line_end:end])
        )
    return sections


def _split_line(line: str, room: int) -> list[str]:
    """Pieces of an overlong line: words packed up to ``room``; a longer word cut."""
    pieces: list[str] = []
    current = ""
    for word in line.split(" "):
        if len(word) > room:
            if current:
                pieces.append(current)
                current = ""
            pieces.extend(word[i : i + room] for i in range(0, len(word), room))
        elif not current:
            current = word
        elif len(current) + 1 + len(word) <= room:
            current += " " + word
        else:
            pieces.append(current)
            current = word
    if current:
        pieces.append(current)
    return [p for p in pieces if p.strip()]


def _units(body: str, room: int) -> list[tuple[str, str]]:
    """Pieces of ``body`` no longer than ``room``, each with the separator that joins it to
    the previous piece (paragraph break or newline)."""
    units: list[tuple[str, str]] = []
    for paragraph in _BLANK_RUN.split(body):
        paragraph = paragraph.strip("\n")
        if not paragraph.strip():
            continue
        if len(paragraph) <= room:
            units.append((paragraph, "\n\n"))
            continue
        first = True
        for line in paragraph.split("\n"):
            pieces = [line] if len(line) <= room else _split_line(line, room)
            for piece in pieces:
                units.append((piece, "\n\n" if first else "\n"))
                first = False
    return units


def _pack(units: list[tuple[str, str]], room: int) -> list[str]:
    out: list[str] = []
    current = ""
    for text, sep in units:
        if not current:
            current = text
        elif len(current) + len(sep) + len(text) <= room:
            current += sep + text
        else:
            out.append(current)
            current = text
    if current:
        out.append(current)
    return out


def chunk_markdown(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Chunks of ``text`` in document order, ordinals from 0 (see the module docstring).

    :raises ValueError: ``max_chars`` is below 16.
    """
    if max_chars < 16:
        raise ValueError(f"max_chars must be at least 16, got {max_chars}")
    chunks: list[Chunk] = []
    for heading, heading_line, body_lines in _sections(text.replace("\r\n", "\n")):
        body = "\n".join(body_lines).strip("\n")
        whole = f"{heading_line}\n{body}" if heading_line and body else heading_line or body
        if not whole.strip():
            continue
        if len(whole) <= max_chars:
            chunks.append(Chunk(len(chunks), heading, whole))
            continue
        fits = bool(heading_line) and len(heading_line) + 1 <= max_chars // 4
        prefix = f"{heading_line}\n" if fits else ""
        if heading_line and not fits:
            body = f"{heading_line}\n\n{body}"
        room = max_chars - len(prefix)
        for piece in _pack(_units(body, room), room):
            content = prefix + piece
            if content.strip():
                chunks.append(Chunk(len(chunks), heading, content))
    return chunks
