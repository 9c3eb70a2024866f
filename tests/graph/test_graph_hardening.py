"""QA hardening of the graph corpus: symlinks out of the project, huge and binary docs,
non-string summaries, pathological queries. Real files under tmp_path, real SQLite."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from gitquarry.config import GraphConfig
from gitquarry.graph import is_stale, reindex_graph, search_fts5, search_like
from gitquarry.graph.search import SNIPPET_MAX_CHARS, clip_snippet
from gitquarry.store import Store

SECRET = "# Secret\n\nroot:x:0:0:topsecret credentials\n"

LINKED_GRAPH = """\
nodes:
  - ref_id: root
    kind: service
    summary: Root service
    docs: [docs/link.md]
"""


def _all_chunk_text(store: Store) -> str:
    return "\n".join(r[0] for r in store.conn.execute("SELECT content FROM chunks"))


def _doc_paths(store: Store) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT path FROM docs ORDER BY path")]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside every project, holding a Markdown "secret" and a graph file."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.md").write_text(SECRET, encoding="utf-8")
    (out / "graph.yml").write_text(
        "nodes:\n  - {ref_id: leaked, kind: service, summary: topsecret node}\n",
        encoding="utf-8",
    )
    return out.resolve()


def _symlink_project(make_project, graph: str = LINKED_GRAPH) -> Path:
    return make_project(graph, {"docs/readme.md": "# Readme\n\nHello world.\n"})


# --- 1. symlinks leading out of the project -------------------------------------------------


def test_listed_doc_symlinked_outside_is_skipped(
    store: Store, make_project, outside: Path, config: GraphConfig
) -> None:
    project = _symlink_project(make_project)
    (project / "docs/link.md").symlink_to(outside / "secret.md")
    report = reindex_graph(store, project, config)
    assert any(
        "'docs/link.md'" in w and "resolves outside the project" in w for w in report.warnings
    )
    # one warning for the file, although it is both listed and under docs/
    assert sum("docs/link.md" in w for w in report.warnings) == 1
    assert "topsecret" not in _all_chunk_text(store)
    assert "docs/link.md" not in _doc_paths(store)
    assert search_fts5(store.conn, "topsecret") == []
    assert [r.ref_id for r in search_fts5(store.conn, "root")] == ["root"]
    assert "topsecret" not in (search_fts5(store.conn, "root")[0].snippet or "")
    # recorded, so the next search does not reindex again and again
    assert is_stale(store, project, config) is False


def test_listed_doc_symlinked_to_etc_passwd_is_skipped(
    store: Store, make_project, config: GraphConfig
) -> None:
    if not Path("/etc/passwd").is_file():
        pytest.skip("no /etc/passwd here")
    project = _symlink_project(make_project)
    (project / "docs/link.md").symlink_to("/etc/passwd")
    report = reindex_graph(store, project, config)
    assert any("resolves outside the project" in w for w in report.warnings)
    assert "docs/link.md" not in _doc_paths(store)
    assert search_fts5(store.conn, "root")[0].snippet == "<b>Root</b> service"


def test_unlisted_doc_under_docs_symlinked_outside_is_skipped(
    store: Store, make_project, outside: Path, config: GraphConfig
) -> None:
    project = _symlink_project(make_project, "nodes: []\n")
    (project / "docs/link.md").symlink_to(outside / "secret.md")
    report = reindex_graph(store, project, config)
    assert any(
        w.startswith("docs/link.md:") and "resolves outside the project" in w
        for w in report.warnings
    )
    assert _doc_paths(store) == ["docs/readme.md"]
    assert "topsecret" not in _all_chunk_text(store)
    assert is_stale(store, project, config) is False


def test_symlinked_docs_directory_outside_is_skipped(
    store: Store, make_project, outside: Path, config: GraphConfig
) -> None:
    project = make_project(
        "nodes:\n  - {ref_id: root, kind: service, summary: Root, docs: [docs/secret.md]}\n", {}
    )
    (project / "docs").symlink_to(outside, target_is_directory=True)
    report = reindex_graph(store, project, config)
    assert any("docs/secret.md" in w and "outside the project" in w for w in report.warnings)
    assert _doc_paths(store) == []
    assert "topsecret" not in _all_chunk_text(store)
    assert search_fts5(store.conn, "topsecret") == []
    assert is_stale(store, project, config) is False


def test_graph_file_symlinked_outside_is_skipped(
    store: Store, make_project, outside: Path, config: GraphConfig
) -> None:
    project = make_project()
    (project / ".beadloom/_graph/evil.yml").symlink_to(outside / "graph.yml")
    report = reindex_graph(store, project, config)
    assert any(
        w.startswith(".beadloom/_graph/evil.yml:") and "outside the project" in w
        for w in report.warnings
    )
    assert store.conn.execute("SELECT 1 FROM nodes WHERE ref_id = 'leaked'").fetchone() is None
    assert search_fts5(store.conn, "topsecret") == []
    assert report.nodes == 6  # the real graph file is still read
    assert is_stale(store, project, config) is False


def test_symlinked_graph_directory_outside_is_skipped(
    store: Store, tmp_path: Path, outside: Path, config: GraphConfig
) -> None:
    project = (tmp_path / "proj2").resolve()
    (project / ".beadloom").mkdir(parents=True)
    (project / ".beadloom/_graph").symlink_to(outside, target_is_directory=True)
    report = reindex_graph(store, project, config)
    assert report.nodes == 0
    assert any("graph.yml" in w and "outside the project" in w for w in report.warnings)


def test_symlink_inside_project_is_still_indexed(
    store: Store, make_project, config: GraphConfig
) -> None:
    project = _symlink_project(make_project)
    (project / "notes").mkdir()
    (project / "notes/real.md").write_text("# Real\n\nquokka facts\n", encoding="utf-8")
    (project / "docs/link.md").symlink_to(project / "notes/real.md")
    report = reindex_graph(store, project, config)
    assert not any("outside" in w for w in report.warnings)
    assert [r.ref_id for r in search_fts5(store.conn, "quokka")] == ["root"]


def test_relinking_a_skipped_doc_inside_makes_index_stale(
    store: Store, make_project, outside: Path, config: GraphConfig
) -> None:
    project = _symlink_project(make_project)
    link = project / "docs/link.md"
    link.symlink_to(outside / "secret.md")
    reindex_graph(store, project, config)
    link.unlink()
    link.write_text("# Link\n\nnow local wombat text\n", encoding="utf-8")
    assert is_stale(store, project, config) is True
    reindex_graph(store, project, config)
    assert [r.ref_id for r in search_fts5(store.conn, "wombat")] == ["root"]


def test_symlink_loop_is_a_warning(store: Store, make_project, config: GraphConfig) -> None:
    project = _symlink_project(make_project)
    os.symlink("loop.md", project / "docs/loop.md")
    os.symlink("loop.md", project / "docs/link.md")
    report = reindex_graph(store, project, config)
    assert any("'docs/link.md'" in w and "symlink loop" in w for w in report.warnings)
    assert any(w.startswith("docs/loop.md:") and "symlink loop" in w for w in report.warnings)
    assert _doc_paths(store) == ["docs/readme.md"]
    assert is_stale(store, project, config) is False


# --- 2. snippet size -------------------------------------------------------------------------


def _plain(snippet: str) -> str:
    return snippet.replace("<b>", "").replace("</b>", "")


def _balanced(snippet: str) -> bool:
    depth = 0
    for tag in re.findall(r"</?b>", snippet):
        depth += 1 if tag == "<b>" else -1
        if depth not in (0, 1):
            return False
    return depth == 0


def test_snippet_of_huge_single_line_doc_is_capped(
    store: Store, make_project, config: GraphConfig
) -> None:
    project = make_project(
        "nodes:\n  - {ref_id: big, kind: feature, summary: Big doc, docs: [docs/big.md]}\n", {}
    )
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs/big.md").write_text(
        "intro needle " + "a" * 5_000_000 + " tail\n", encoding="utf-8"
    )
    reindex_graph(store, project, config)
    (result,) = search_fts5(store.conn, "needle")
    snippet = result.snippet or ""
    assert "<b>needle</b>" in snippet
    assert len(_plain(snippet)) <= SNIPPET_MAX_CHARS + 2 * len("...")
    assert _balanced(snippet) and snippet.endswith("...")


def test_snippet_around_first_match_in_long_paragraph(
    store: Store, make_project, config: GraphConfig
) -> None:
    filler = " ".join(f"{'x' * 1500}{i}" for i in range(40))
    project = make_project(
        "nodes:\n  - {ref_id: wide, kind: feature, summary: Wide, docs: [docs/w.md]}\n",
        {"docs/w.md": f"{filler} needle {filler}\n"},
    )
    reindex_graph(store, project, config)
    (result,) = search_fts5(store.conn, "needle")
    snippet = result.snippet or ""
    assert "<b>needle</b>" in snippet and _balanced(snippet)
    assert len(_plain(snippet)) <= SNIPPET_MAX_CHARS + 6


def test_summary_fallback_snippet_is_capped(
    store: Store, make_project, config: GraphConfig
) -> None:
    summary = "word " * 2000 + "pangolin"
    project = make_project(
        f"nodes:\n  - {{ref_id: long, kind: feature, summary: '{summary}'}}\n", {}
    )
    reindex_graph(store, project, config)
    (result,) = search_fts5(store.conn, "pangolin")
    snippet = result.snippet or ""
    assert "<b>pangolin</b>" in snippet and _balanced(snippet)
    assert len(_plain(snippet)) <= SNIPPET_MAX_CHARS + 6
    assert result.summary == summary.strip()  # the summary itself is not cut


def test_clip_snippet_closes_a_cut_match_and_keeps_short_ones() -> None:
    clipped = clip_snippet("\x02" + "z" * 5000 + "\x03 after")
    assert clipped.startswith("<b>") and clipped.endswith("</b>...") and _balanced(clipped)
    assert len(_plain(clipped)) == SNIPPET_MAX_CHARS + 3
    assert clip_snippet("short \x02hit\x03 text") == "short <b>hit</b> text"
    no_match = clip_snippet("q" * 1000)
    assert no_match == "q" * SNIPPET_MAX_CHARS + "..."


# --- 3. binary and non-UTF-8 docs ------------------------------------------------------------


def test_doc_with_nul_bytes_is_skipped(store: Store, make_project, config: GraphConfig) -> None:
    project = make_project(
        "nodes:\n  - {ref_id: bin, kind: feature, summary: Binary, docs: [docs/bin.md]}\n", {}
    )
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs/bin.md").write_bytes(b"narwhal\x00\x01\x02" * 1000)
    (project / "docs/other.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    report = reindex_graph(store, project, config)
    nul = [w for w in report.warnings if "NUL bytes" in w]
    assert sorted(w.split(":")[0] for w in nul) == ["docs/bin.md", "docs/other.md"]
    assert _doc_paths(store) == []
    assert search_fts5(store.conn, "narwhal") == []
    assert is_stale(store, project, config) is False


def test_invalid_utf8_doc_is_decoded_with_one_warning(
    store: Store, make_project, config: GraphConfig
) -> None:
    project = make_project(
        "nodes:\n  - {ref_id: lat, kind: feature, summary: Latin, docs: [docs/lat.md]}\n", {}
    )
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs/lat.md").write_bytes(b"# Caf\xe9\n\nocelot \xff\xfe\xfd menu \xe9t\xe9\n")
    report = reindex_graph(store, project, config)
    utf8 = [w for w in report.warnings if "UTF-8" in w]
    assert len(utf8) == 1 and utf8[0].startswith("docs/lat.md:")
    assert "\ufffd" in _all_chunk_text(store)
    assert [r.ref_id for r in search_fts5(store.conn, "ocelot")] == ["lat"]


# --- 4. non-string summaries -----------------------------------------------------------------


def test_non_string_summaries_warn_and_stay_searchable(
    store: Store, make_project, config: GraphConfig
) -> None:
    graph = """\
nodes:
  - {ref_id: num, kind: entity, summary: 4242}
  - {ref_id: flag, kind: entity, summary: true}
  - ref_id: mapping
    kind: entity
    summary: {owner: platypus, tier: 2}
  - ref_id: listed
    kind: entity
    summary: [alpha, echidna]
  - {ref_id: plain, kind: entity, summary: Plain text}
  - {ref_id: empty, kind: entity}
"""
    project = make_project(graph, {})
    report = reindex_graph(store, project, config)
    warned = "\n".join(report.warnings)
    flagged = sorted(re.findall(r"node '(\w+)' summary is not a string", warned))
    assert flagged == ["flag", "listed", "mapping", "num"]
    summaries = dict(store.conn.execute("SELECT ref_id, summary FROM nodes").fetchall())
    assert summaries["num"] == "4242"
    assert summaries["flag"] == "True"
    assert summaries["mapping"] == "{owner: platypus, tier: 2}"
    assert summaries["listed"] == "[alpha, echidna]"
    assert summaries["plain"] == "Plain text" and summaries["empty"] == ""
    assert [r.ref_id for r in search_fts5(store.conn, "4242")] == ["num"]
    assert [r.ref_id for r in search_fts5(store.conn, "platypus")] == ["mapping"]
    assert [r.ref_id for r in search_fts5(store.conn, "echidna")] == ["listed"]


# --- 7. pathological queries -----------------------------------------------------------------

#: 20 nodes whose docs repeat the query word hundreds of times: before repeated query words
#: were deduplicated, ``"invoices " * 100`` took ~15 s on this corpus (minutes on larger ones).
INVOICE_GRAPH = "nodes:\n" + "".join(
    f"  - {{ref_id: n{i:02d}, kind: feature, summary: Invoices {i}, docs: [docs/d{i}.md]}}\n"
    for i in range(20)
)
INVOICE_DOCS = {
    f"docs/d{i}.md": "# Invoices\n\n" + "invoices are billed monthly. " * 250 for i in range(20)
}

HUGE_QUERIES = {
    "repeated-100": ("invoices " * 100, True),
    "repeated-5000-words": ("invoices are billed monthly " * 1250, True),
    "distinct-5000-words": (" ".join(f"word{i}" for i in range(5000)), False),
}


def _invoice_project(make_project) -> Path:
    return make_project(INVOICE_GRAPH, INVOICE_DOCS)


@pytest.mark.parametrize(("query", "hits"), HUGE_QUERIES.values(), ids=HUGE_QUERIES.keys())
def test_huge_queries_return_quickly_fts5(
    store: Store, make_project, config: GraphConfig, query: str, hits: bool
) -> None:
    reindex_graph(store, _invoice_project(make_project), config)
    started = time.monotonic()
    results = search_fts5(store.conn, query)
    assert time.monotonic() - started < 10  # generous sanity bound, not a benchmark
    assert len(results) == (10 if hits else 0)


@pytest.mark.parametrize(("query", "hits"), HUGE_QUERIES.values(), ids=HUGE_QUERIES.keys())
def test_huge_queries_return_quickly_like(
    no_fts5_store: Store, make_project, config: GraphConfig, query: str, hits: bool
) -> None:
    reindex_graph(no_fts5_store, _invoice_project(make_project), config)
    started = time.monotonic()
    results = search_like(no_fts5_store.conn, query)
    assert time.monotonic() - started < 10  # generous sanity bound, not a benchmark
    assert len(results) == (10 if hits else 0)


def test_repeated_words_count_once_in_like(no_fts5_store: Store, project: Path) -> None:
    reindex_graph(no_fts5_store, project, GraphConfig())
    once = search_like(no_fts5_store.conn, "zeppelin")
    assert once and search_like(no_fts5_store.conn, "zeppelin ZEPPELIN " * 50) == once
