"""Issue 19 §5 for the graph corpus: every graph file and doc is read capped and only if it
is a regular file. A 20 MB doc is cut at ``MAX_DOC_BYTES`` with a warning naming it; a FIFO,
a socket or a link to a device under ``docs/`` or ``.beadloom/`` is skipped with a warning and
never blocks ``graph reindex`` or ``index`` (run in a subprocess with a timeout)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitquarry.config import GraphConfig
from gitquarry.graph import is_stale, reindex_graph, search_fts5
from gitquarry.graph.chunker import chunk_markdown
from gitquarry.graph.sources import MAX_DOC_BYTES
from gitquarry.store import Store

GRAPH = """\
nodes:
  - ref_id: big
    kind: feature
    summary: The big doc
    docs: [docs/big.md]
  - ref_id: odd
    kind: feature
    summary: Odd files listed as docs
    docs: [docs/fifo.md, docs/sock.md, docs/zero.md, docs/fifo-link.md]
"""


def _big_doc(path: Path, size: int) -> bytes:
    """A Markdown doc of about ``size`` bytes: headed sections of words, a two-byte character
    straddling the cap, and a word found only after it."""
    block = ("## Section\n\n" + "deploy the proxy behind the worker pool " * 20 + "\n\n")
    head = "# Big\n\nintroneedle starts here.\n\n" + block * (MAX_DOC_BYTES // len(block) + 1)
    head = head[: MAX_DOC_BYTES - 1] + "é"  # the cap falls inside this character
    assert len(head.encode("utf-8")) == MAX_DOC_BYTES + 1
    data = (head + "\n\n" + block * ((size - MAX_DOC_BYTES) // len(block)) +
            "tailneedle ends here.\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


@pytest.fixture
def odd_project(make_project) -> Iterator[Path]:
    project: Path = make_project(GRAPH, {"docs/readme.md": "# Readme\n\nordinaryword here.\n"})
    docs = project / "docs"
    os.mkfifo(docs / "fifo.md")
    os.mkfifo(project / ".beadloom" / "_graph" / "fifo.yml")
    (docs / "zero.md").symlink_to("/dev/zero")
    (docs / "fifo-link.md").symlink_to(docs / "fifo.md")  # resolves inside the project
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(docs / "sock.md"))
    try:
        yield project
    finally:
        sock.close()


def test_a_20_mb_doc_is_cut_at_the_cap_with_a_warning(store: Store, make_project,
                                                      config: GraphConfig) -> None:
    project = make_project(GRAPH.split("  - ref_id: odd")[0], {})
    data = _big_doc(project / "docs" / "big.md", 20 * 1024 * 1024)
    report = reindex_graph(store, project, config)
    (warning,) = [w for w in report.warnings if w.startswith("docs/big.md")]
    assert f"{len(data):,} bytes" in warning and f"{MAX_DOC_BYTES:,}-byte" in warning
    # what was indexed is exactly the chunking of the first MAX_DOC_BYTES (less the cut
    # character): the cap changes how much is read, never how it is chunked
    kept = data[: MAX_DOC_BYTES - 1].decode("utf-8")
    expected = [c.content for c in chunk_markdown(kept, config.chunk_max_chars)]
    stored = [r[0] for r in store.conn.execute(
        "SELECT content FROM chunks ORDER BY ordinal")]
    assert stored == expected
    assert "\ufffd" not in "".join(stored)
    (size,) = store.conn.execute("SELECT size_bytes FROM docs").fetchone()
    assert size == MAX_DOC_BYTES - 1
    assert [r.ref_id for r in search_fts5(store.conn, "introneedle")] == ["big"]
    assert search_fts5(store.conn, "tailneedle") == []
    assert not is_stale(store, project, config)
    with (project / "docs" / "big.md").open("ab") as handle:
        handle.write(b"more\n")
    assert is_stale(store, project, config)


def test_fifo_socket_and_device_links_are_skipped_with_warnings(
        store: Store, odd_project: Path, config: GraphConfig) -> None:
    report = reindex_graph(store, odd_project, config)
    text = "\n".join(report.warnings)
    assert ".beadloom/_graph/fifo.yml: graph file is a FIFO, not a regular file; skipped" in text
    assert "doc 'docs/fifo.md' is a FIFO, not a regular file; skipped" in text
    assert "doc 'docs/sock.md' is a socket, not a regular file; skipped" in text
    assert "doc 'docs/fifo-link.md' is a FIFO, not a regular file; skipped" in text
    assert "doc 'docs/zero.md' resolves outside the project" in text
    paths = [r[0] for r in store.conn.execute("SELECT path FROM docs ORDER BY path")]
    assert paths == ["docs/readme.md"]
    assert "ordinaryword" in "".join(r[0] for r in store.conn.execute(
        "SELECT content FROM chunks"))
    assert not is_stale(store, odd_project, config)
    # a FIFO replaced by a regular file makes the index stale, and it is read then
    (odd_project / "docs" / "fifo.md").unlink()
    (odd_project / "docs" / "fifo.md").write_text("# Was a fifo\n\nfifoword\n")
    assert is_stale(store, odd_project, config)
    reindex_graph(store, odd_project, config)
    assert [r.ref_id for r in search_fts5(store.conn, "fifoword")] == ["odd"]


def _gitquarry(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GITQUARRY_CONFIG": "/dev/null"}
    return subprocess.run([sys.executable, "-m", "gitquarry", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_graph_reindex_and_index_never_block_on_a_fifo(odd_project: Path,
                                                       tmp_path: Path) -> None:
    # graph reindex in a subprocess: a hang would be the timeout, not a pass
    proc = _gitquarry("graph", "reindex", "--project", str(odd_project), "--json",
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["docs"] == 1
    assert any("fifo.yml" in w for w in report["warnings"])
    # `index` on a workspace holding a repository runs the graph reindex too
    subprocess.run(["git", "init", "-q", "-b", "main", str(odd_project / "app")], check=True)
    subprocess.run(["git", "-C", str(odd_project / "app"), "-c", "user.name=A", "-c",
                    "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "one"],
                   check=True)
    shutil.rmtree(odd_project / ".gitquarry")  # a fresh index: the graph is built again
    proc = _gitquarry("index", str(odd_project), "--no-embed", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "docs/fifo.md" in proc.stderr and "FIFO" in proc.stderr
