"""reStructuredText section titles, read from the text only (nothing is executed).

A title is a text line at column 0 underlined, and optionally overlined, with a run of one
punctuation character (``=``, ``-``, ``~``, ``*``, ``#`` ... any non-alphanumeric printable
ASCII) at least as long as the title (or at least four characters); an overline must use
the same character as its underline. Section levels follow docutils: the first adornment
style met (character + overline or not) is level 1, the next new one level 2, and so on. An
adornment line on its own (a transition) is not a title. Directives, includes and roles are
never interpreted: their content is indented, so it can never form a title, and nothing is
read from outside the text.
"""

from __future__ import annotations

import re

from gitquarry.parsing.markdown import Heading

_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$", re.MULTILINE)


def _is_adornment(line: str) -> bool:
    return bool(_ADORNMENT.match(line))


def rst_titles(text: str) -> list[Heading]:
    """The section titles of ``text``, in document order, with 1-based inclusive lines
    (overline to underline)."""
    if _ADORNMENT.search(text) is None:
        return []
    lines = [line.rstrip("\r") for line in text.split("\n")]
    styles: list[tuple[str, bool]] = []
    titles: list[Heading] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line or not _is_adornment(line):
            i += 1
            continue
        char = line[0]
        width = len(line.rstrip())
        # overline + title + underline
        if i + 2 < n and lines[i + 1].strip() and _is_adornment(lines[i + 2]) \
                and lines[i + 2][0] == char and not _is_adornment(lines[i + 1]):
            title = lines[i + 1].strip()
            if width >= len(title) or width >= 4:
                titles.append(_make(styles, char, True, title, i + 1, i + 3))
                i += 3
                continue
        # title + underline: the title is the previous line, at column 0, after a blank
        if i >= 1:
            title_line = lines[i - 1]
            before_blank = i < 2 or not lines[i - 2].strip()
            already = titles and titles[-1].line_end >= i
            if (title_line.strip() and not title_line[0].isspace() and before_blank
                    and not already and not _is_adornment(title_line)):
                title = title_line.strip()
                if width >= len(title) or width >= 4:
                    titles.append(_make(styles, char, False, title, i, i + 1))
        i += 1
    return titles


def _make(styles: list[tuple[str, bool]], char: str, overline: bool, title: str,
          start: int, end: int) -> Heading:
    style = (char, overline)
    if style not in styles:
        styles.append(style)
    return Heading(styles.index(style) + 1, title, start, end, start + 1 if overline else start)
