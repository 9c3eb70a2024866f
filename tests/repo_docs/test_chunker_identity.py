"""The faster chunker (cmark's tree walked instead of its HTML re-read; per-line arrays built in
C, blank flags and byte offsets only where needed) cuts exactly the chunks main's chunker cut:
same byte and line ranges, heading paths, heading lines and chunk ids, or the same exception,
on this repository's docs and on generated hostile documents, under several policies. The
reference is main's code frozen in ``_chunk_reference.py``."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from tests.repo_docs import _chunk_reference as reference

from gitquarry.parsing import markdown
from gitquarry.repo_docs.chunker import (
    ChunkPolicy,
    blob_digest,
    chunk_document,
    chunk_id,
    headings_for,
)

ROOT = Path(__file__).resolve().parents[2]
POLICIES = [ChunkPolicy(), ChunkPolicy(700, 100), ChunkPolicy(300, 0), ChunkPolicy(40, 10),
            ChunkPolicy(4000, 1000), ChunkPolicy(3, 0)]

FRAGMENTS = [
    "# Title", "## Sub ##", "### x #", "#nospace", "####### seven", "   ### three", "    # code",
    "Setext", "======", "------", "---", "+++", "...", "===", "   ===", "- item", "  # in item",
    "> # quoted", "> text", "1. ## numbered", "```", "~~~", "```md", "<div>", "</div>",
    "<!-- c -->", "* * *", "Title { #anchor }", "## T {.cls}", "[ref]: /url", "\t# tab",
    " \t# sp tab", "body text here", "a" * 1700, "\u00e9t\u00e9 \u4e2d\u6587 " * 60,
    "\U0001f680 rocket", "\u3000", "\u2028", "\x00", "# nul \x00", "\x0c", "\x0b", "\x1c",
    "\x85", "\ufeff# bom", "", "", "", "x   ", "\t", "Title\n===", ".. note::",
    "Section\n-------", "=======\nOver\n=======", "~~~~~", "****", "   ", "#\t#",
]
JOINERS = ["\n", "\n", "\n", "\n\n", "\r\n", "\r", "\r\r\n", "\n\r"]


def hostile(count: int, seed: int) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    docs = []
    for _ in range(count):
        parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 50))]
        if rng.random() < 0.15:
            parts = [rng.choice(["---", "+++"]), "title: x", rng.choice(["---", "...", "+++"]),
                     *parts]
        text = "".join(part + rng.choice(JOINERS) for part in parts)
        if rng.random() < 0.5:
            text = text.rstrip("\n")
        cls = rng.choice(["markdown", "markdown", "markdown", "restructuredtext", "text"])
        docs.append((cls, text.encode("utf-8")))
    return docs


def outcome(chunker: object, data: bytes, cls: str, policy: ChunkPolicy) -> object:
    try:
        spans = chunker.chunk_document(data, cls, policy)  # type: ignore[attr-defined]
    except Exception as exc:  # the reference's exceptions are part of what must match
        return ("error", type(exc).__name__)
    digest = blob_digest(data)
    return [(s.byte_start, s.byte_end, s.line_start, s.line_end, s.heading_path,
             s.heading_lines, chunk_id(digest, s, policy)) for s in spans]


def _lone_cr(data: bytes) -> bool:
    """``data`` holds a carriage return that does not start a CRLF pair."""
    return re.search(rb"\r(?!\n)", data) is not None


class _New:
    chunk_document = staticmethod(chunk_document)


def repository_docs() -> list[tuple[str, bytes]]:
    """This checkout's tracked Markdown / reStructuredText / text files."""
    suffixes = {".md": "markdown", ".rst": "restructuredtext", ".txt": "text"}
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    files = [ROOT / name for name in listed if Path(name).suffix in suffixes]
    return [(suffixes[p.suffix], p.read_bytes()) for p in files if p.is_file()]


def test_walk_is_used() -> None:
    """The fast route is the one under test (not the HTML fallback)."""
    assert markdown._tree_walker() is not None


def test_repository_docs_cut_as_main_cut_them() -> None:
    docs = repository_docs()
    assert len(docs) >= 12 and sum(len(d) for _c, d in docs) > 150_000
    for cls, data in docs:
        for policy in POLICIES[:-1]:  # (the 3-character policy: on the hostile documents)
            assert outcome(_New, data, cls, policy) == outcome(reference, data, cls, policy)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hostile_documents_cut_as_main_cut_them(seed: int) -> None:
    docs = hostile(200, seed)
    seen_error = seen_spans = 0
    for cls, data in docs:
        for policy in POLICIES:
            # a lone CR (old Mac line endings) now means "no headings": main's parsers
            # counted it as a line break against the chunker's LF lines (an IndexError, or
            # heading lines pointing at the wrong line); such a document is cut as plain text
            # (tests/repo_docs/test_lone_cr.py)
            want = outcome(reference, data, "text" if _lone_cr(data) else cls, policy)
            assert outcome(_New, data, cls, policy) == want, (cls, data, policy)
            seen_error += isinstance(want, tuple)
            seen_spans += len(want) if isinstance(want, list) else 0
    assert seen_spans > 2000  # the generated documents are not trivially empty


def test_invalid_utf8_raises_as_before() -> None:
    for data in (b"# a\n\xff\n", b"\xc3", b"ok\n\xed\xa0\x80"):
        with pytest.raises(UnicodeDecodeError):
            chunk_document(data, "markdown")
        with pytest.raises(UnicodeDecodeError):
            reference.chunk_document(data, "markdown")


def test_tree_walk_reads_what_the_html_rendering_reads() -> None:
    """Per document: the walker's top-level headings == the HTML route's (both cmark)."""
    walker = markdown._tree_walker()
    assert walker is not None
    texts = [d.decode("utf-8") for c, d in hostile(600, 7) if c == "markdown"]
    texts += [d.decode() for c, d in repository_docs() if c == "markdown"]
    found = 0
    for text in texts:
        got = walker(text.encode("utf-8"))
        assert got == markdown._html_heading_nodes(text), text
        found += len(got)
    assert found > 500


def test_html_fallback_gives_the_same_headings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the tree API cannot be loaded the HTML route answers, with the same headings."""
    docs = [(c, d) for c, d in hostile(150, 11) if c == "markdown"]
    walked = [headings_for(d.decode(), c) for c, d in docs]
    monkeypatch.setattr(markdown, "_TREE", [None])
    assert [headings_for(d.decode(), c) for c, d in docs] == walked
    assert [[] if _lone_cr(d) else reference.markdown_headings(d.decode())
            for _c, d in docs] == walked


def test_chunk_id_is_the_canonical_json_hash() -> None:
    """``chunk_id`` writes the canonical JSON itself: the same bytes as ``canonical_json``."""
    import hashlib

    from gitquarry.repo_docs.chunker import ChunkSpan
    from gitquarry.repo_docs.policy import canonical_json

    rng = random.Random(3)
    digests = [blob_digest(bytes([i])) for i in range(5)] + ["", 'quo"te\\', "\u00e9\u4e2d\n\x01"]
    policies = [ChunkPolicy(), ChunkPolicy(7, 0, 'odd"id\u00e9\t'), ChunkPolicy(10**9, 5)]
    for _ in range(500):
        digest, policy = rng.choice(digests), rng.choice(policies)
        start = rng.choice([0, 1, 17, 10**12, rng.randrange(10**6)])
        span = ChunkSpan(start, start + rng.randrange(10**5), 1, 2, ("a",), (1,))
        want = hashlib.sha256(canonical_json([digest, span.byte_start, span.byte_end,
                                              policy.key])).hexdigest()
        assert chunk_id(digest, span, policy) == want


def test_ctypes_route_finds_the_same_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where cffi's backend cannot open the library, ctypes finds the functions: same walk."""
    import _cffi_backend

    def refuse(*_args: object) -> None:
        raise OSError("refused")

    monkeypatch.setattr(_cffi_backend, "load_library", refuse)
    texts = [d.decode() for c, d in hostile(200, 13) if c == "markdown"]
    walker = markdown._load_tree_walker()
    from cmarkgfm import _cmark

    assert markdown._exported_functions(_cmark.__file__, _cmark.ffi).__name__ == "by_ctypes"
    assert [walker(t.encode()) for t in texts] == [markdown._html_heading_nodes(t)
                                                   for t in texts]
