"""Heading-aware chunks with exact byte and line ranges (Markdown, reStructuredText, text)."""

from __future__ import annotations

from gitquarry.parsing.rst import rst_titles
from gitquarry.repo_docs.chunker import (
    ChunkPolicy,
    blob_digest,
    chunk_document,
    chunk_id,
    embedding_input,
)

SMALL = ChunkPolicy(max_chars=300, min_chars=0)


def spans_text(data: bytes, policy: ChunkPolicy = SMALL, cls: str = "markdown") -> list[str]:
    return [data[s.byte_start : s.byte_end].decode() for s in chunk_document(data, cls, policy)]


def lines_of(data: bytes, start: int, end: int) -> str:
    return "\n".join(data.decode().split("\n")[start - 1 : end])


def test_markdown_sections_and_heading_paths() -> None:
    data = (
        b"---\ntitle: front\n# not a heading\n---\n# Deployment\n\nIntro.\n\n"
        b"## Nginx\n\n```bash\n# a comment, not a heading\n```\n\n"
        b"Configuration\n-------------\n\nsetext is a level-2 heading\n\n"
        b"### TLS\n\nCertificates.\n"
    )
    chunks = chunk_document(data, "markdown", SMALL)
    assert [c.heading_path for c in chunks] == [
        (), ("Deployment",), ("Deployment", "Nginx"), ("Deployment", "Configuration"),
        ("Deployment", "Configuration", "TLS"),
    ]
    for c in chunks:  # exact ranges: the bytes are exactly the lines
        assert data[c.byte_start : c.byte_end].decode() == lines_of(data, c.line_start,
                                                                     c.line_end)
    assert chunks[0].line_start == 1 and chunks[1].line_start == 5


def test_rst_titles_with_overlines_any_adornment_and_transitions() -> None:
    text = (
        "#######\nProject\n#######\n\nIntro.\n\n*****\nUsage\n*****\n\nText.\n\n"
        "Options\n~~~~~~~\n\n.. note::\n\n   Directive body\n   ---------------\n\n"
        "----------\n\nAfter a transition.\n\nZ\n====\n"
    )
    titles = rst_titles(text)
    assert [(t.level, t.title, t.line_start, t.line_end) for t in titles] == [
        (1, "Project", 1, 3), (2, "Usage", 7, 9), (3, "Options", 13, 14), (4, "Z", 25, 26),
    ]
    chunks = chunk_document(text.encode(), "restructuredtext", SMALL)
    assert chunks[2].heading_path == ("Project", "Usage", "Options")
    assert "Directive body" in text.encode()[chunks[2].byte_start : chunks[2].byte_end].decode()


def test_long_sections_split_at_paragraphs_then_lines_then_characters() -> None:
    para = ("word " * 40).strip()
    data = ("# T\n\n" + "\n\n".join([para] * 4) + "\n\n" + "x" * 700 + "\n").encode()
    chunks = chunk_document(data, "markdown", SMALL)
    texts = [data[c.byte_start : c.byte_end].decode() for c in chunks]
    assert all(len(t) <= 300 for t in texts)
    assert texts[1] == para and texts[2] == para  # whole paragraphs, not cut mid-way
    assert [c.line_start for c in chunks if "x" in data[c.byte_start:c.byte_end].decode()] == \
        [11, 11, 11]


def test_tiny_sections_merge_with_the_next_sibling_only() -> None:
    data = b"# A\n\n## B\n\nb.\n\n## C\n\nc.\n\n# D\n\nd.\n"
    chunks = chunk_document(data, "markdown", ChunkPolicy(max_chars=300, min_chars=100))
    bodies = [data[c.byte_start : c.byte_end].decode() for c in chunks]
    assert bodies == [data.decode().strip()]  # A, its children and its sibling D fit
    assert chunks[0].heading_path == ("A",)
    data = ("# A\n\n" + "long " * 30 + "\n\n## C\n\nc.\n\n# D\n\nd.\n").encode()
    chunks = chunk_document(data, "markdown", ChunkPolicy(max_chars=300, min_chars=100))
    bodies = [data[c.byte_start : c.byte_end].decode() for c in chunks]
    # C is tiny but D is not its sibling or child: no merge across levels
    assert bodies[-2:] == ["## C\n\nc.", "# D\n\nd."]
    assert [c.heading_path for c in chunks][-2:] == [("A", "C"), ("D",)]


def test_utf8_boundaries_crlf_and_embedding_input() -> None:
    data = ("# Über\r\n\r\n" + "é中" * 400 + "\r\n").encode()
    chunks = chunk_document(data, "markdown", SMALL)
    for c in chunks:
        data[c.byte_start : c.byte_end].decode("utf-8")  # never cut inside a character
    text = embedding_input("docs/u.md", chunks[0], data)
    assert text.startswith("docs/u.md\nÜber\n\n# Über") and "\r" not in text


def test_chunk_ids_depend_on_content_range_and_policy_not_path() -> None:
    data = b"# A\n\nalpha\n"
    (span,) = chunk_document(data, "markdown", SMALL)
    a = chunk_id(blob_digest(data), span, SMALL)
    assert a == chunk_id(blob_digest(data), span, SMALL)
    assert a != chunk_id(blob_digest(data), span, ChunkPolicy(max_chars=301, min_chars=0))
    assert a != chunk_id(blob_digest(b"# A\n\nbeta\n"), span, SMALL)


def test_text_files_are_paragraph_windows() -> None:
    data = ("\n\n".join(f"paragraph {i} " + "z" * 80 for i in range(10))).encode()
    chunks = chunk_document(data, "text", SMALL)
    assert len(chunks) >= 3 and all(c.heading_path == () for c in chunks)
    assert chunks[0].line_start == 1


def test_heading_attribute_lists_are_not_part_of_the_path() -> None:
    data = b"# Background Tasks { #background-tasks }\n\ntext\n\n## Inner {.cls}\n\nmore\n"
    chunks = chunk_document(data, "markdown", ChunkPolicy(max_chars=300, min_chars=0))
    assert chunks[-1].heading_path == ("Background Tasks", "Inner")
