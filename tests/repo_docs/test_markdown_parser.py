"""The cmark heading parser (``parsing.markdown``) gives exactly the headings the previous
parser (markdown-it-py's CommonMark block rules, kept here as the reference) gave: same levels,
titles and lines, so chunk boundaries and chunk ids do not change."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from gitquarry.parsing.markdown import _ATTRS, front_matter_lines, markdown_headings

_MD = MarkdownIt("commonmark").disable(["inline", "text_join"])


def reference(text: str) -> list[tuple[int, str, int, int, int]]:
    """The previous implementation (markdown-it-py, block rules only)."""
    skip = front_matter_lines(text)
    if skip:
        lines = text.split("\n")
        text = "\n" * skip + "\n".join(lines[skip:])
    tokens = _MD.parse(text)
    out = []
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
        title = _ATTRS.sub("", title) or title
        start, end = token.map
        out.append((int(token.tag[1]), title, start + 1, end, start + 1))
    return out


DOCS = [
    "# Title\n\nText\n\n## Sub ##\n\nmore\n",
    "Setext\n======\n\nbody\n\nSecond\n------\n\nx\n",
    "Two line\nsetext title\n===\n\nbody\n",
    "Title\n=====\n\n\nnext para\n",
    "> # quoted\n\n- # in a list\n\n1. ## numbered\n",
    "```\n# not a heading\n```\n\n~~~md\n## nor this\n~~~\n\n    # indented code\n",
    "<div>\n# inside html\n</div>\n\n# after html\n",
    "---\ntitle: x\n---\n# After front matter\n\ntext\n",
    "+++\na = 1\n+++\n\nHeading\n-------\n",
    "# Trailing hashes #####\n## Closing # not\n### #\n#### x#\n#\n##\n",
    "   ### three spaces\n    #### four spaces is code\n",
    "#nospace\n\n####### seven\n",
    "# Anchor { #anchor }\n\n## Class {.cls}\n",
    "Line\r\n===\r\n\r\n# crlf\r\nbody\r\n",
    "a\rb\r# lone cr\r",
    "# tab\there\t#\t\n",
    "- item\n\n  # inside item\n\n# top\n",
    "#foo\n===\n",
    "para\n---\n- list\n---\n",
    "* * *\n# after rule\n",
    "# \u00e9t\u00e9 \u4e2d\u6587\n\n\u00dcber\n====\n",
    "",
    "no headings at all\n",
    "# nul \x00 char\n",
    "Title\n===\n---\n",
    "Indented underline\n   ===\n\nbody\n",
    "Lone cr setext\r===\r",
]


@pytest.mark.parametrize("text", DOCS)
def test_headings_equal_the_markdown_it_reference(text: str) -> None:
    got = [(h.level, h.title, h.line_start, h.line_end, h.title_line)
           for h in markdown_headings(text)]
    assert got == reference(text)


def test_reference_sees_the_cases_it_should() -> None:
    """The cases above are not all trivially empty: the reference finds headings in most."""
    assert sum(1 for d in DOCS if reference(d)) >= 18
