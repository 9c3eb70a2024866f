"""Markdown chunking on ## headings with a hard character bound."""

from __future__ import annotations

import pytest

from gitquarry.graph import chunk_markdown


def test_splits_on_level_two_headings() -> None:
    text = "# Title\n\nIntro.\n\n## Alpha\nA body.\n\n### Sub\nstill alpha\n\n## Beta\nB body.\n"
    chunks = chunk_markdown(text)
    assert [c.heading for c in chunks] == ["Title", "Alpha", "Beta"]
    assert [c.ordinal for c in chunks] == [0, 1, 2]
    assert chunks[1].content == "## Alpha\nA body.\n\n### Sub\nstill alpha"
    assert chunks[0].content == "# Title\n\nIntro."


def test_heading_text_is_part_of_content() -> None:
    (chunk,) = chunk_markdown("## Deployment pipeline\nsteps\n")
    assert "Deployment pipeline" in chunk.content


def test_heading_without_body_is_a_chunk() -> None:
    (chunk,) = chunk_markdown("## Only a heading\n")
    assert chunk.content == "## Only a heading"
    assert chunk.heading == "Only a heading"


def test_headings_inside_code_fences_do_not_split() -> None:
    text = "## Real\n```md\n## not a heading\n```\nafter\n"
    (chunk,) = chunk_markdown(text)
    assert "## not a heading" in chunk.content and chunk.content.endswith("after")


def test_no_chunk_exceeds_bound_with_paragraph_split() -> None:
    paragraphs = "\n\n".join(f"Paragraph {i} " + "text " * 60 for i in range(20))
    text = f"## Big\n{paragraphs}\n"
    chunks = chunk_markdown(text, 500)
    assert len(chunks) > 1
    assert all(len(c.content) <= 500 for c in chunks)
    assert all(c.content.startswith("## Big\n") for c in chunks)
    assert all(c.heading == "Big" for c in chunks)
    joined = " ".join(c.content for c in chunks)
    for i in range(20):
        assert f"Paragraph {i} " in joined


def test_oversized_paragraph_split_by_lines() -> None:
    lines = "\n".join(f"line {i:03d} " + "x" * 40 for i in range(100))
    chunks = chunk_markdown(f"## Lines\n{lines}\n", 400)
    assert all(len(c.content) <= 400 for c in chunks)
    body = "\n".join(c.content.removeprefix("## Lines\n") for c in chunks)
    assert body.split("\n") == lines.split("\n")


def test_oversized_line_split_without_exceeding_bound() -> None:
    text = "## Wide\n" + ("word " * 500) + "z" * 3000 + "\n"
    chunks = chunk_markdown(text, 300)
    assert all(len(c.content) <= 300 for c in chunks)
    assert sum(c.content.count("z") for c in chunks) == 3000


def test_long_heading_line_still_bounded() -> None:
    heading = "## " + "H" * 600
    chunks = chunk_markdown(f"{heading}\n" + "body " * 400, 200)
    assert all(len(c.content) <= 200 for c in chunks)


def test_default_bound_is_2000() -> None:
    text = "## S\n" + "\n\n".join("p " * 300 for _ in range(10))
    chunks = chunk_markdown(text)
    assert len(chunks) > 1 and all(len(c.content) <= 2000 for c in chunks)


def test_empty_document_has_no_chunks() -> None:
    assert chunk_markdown("") == []
    assert chunk_markdown("\n\n   \n") == []


def test_crlf_line_endings() -> None:
    chunks = chunk_markdown("## A\r\none\r\n## B\r\ntwo\r\n")
    assert [c.content for c in chunks] == ["## A\none", "## B\ntwo"]


def test_rejects_tiny_bound() -> None:
    with pytest.raises(ValueError):
        chunk_markdown("## x", 5)


def test_issue7_s6_sections_come_from_a_commonmark_parser() -> None:
    """Issue 7 §6: a fence opened in a list item, a ``##`` line inside a bash fence and a
    setext heading."""
    text = (
        "# Ops\n\n## Setup\n\n- ```\n  npm ci\n  ```\n\n## Rollback procedure\n\n"
        "```bash\n## print the active colour\nkubectl get svc\n```\n\n"
        "Monitoring\n----------\n\nWatch the dashboards.\n"
    )
    chunks = chunk_markdown(text)
    assert [c.heading for c in chunks] == ["Ops", "Setup", "Rollback procedure", "Monitoring"]
    assert "## print the active colour" in chunks[2].content
    assert "Rollback" not in chunks[1].content
    assert chunks[3].content.startswith("Monitoring") and "dashboards" in chunks[3].content


def test_front_matter_and_html_blocks_hold_no_headings() -> None:
    text = "---\ntitle: x\n## not a heading\n---\n<div>\n## inside html\n</div>\n\n## Real\nb\n"
    heads = [c.heading for c in chunk_markdown(text)]
    assert heads == ["", "Real"]
