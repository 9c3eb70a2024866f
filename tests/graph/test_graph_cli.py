"""``gitquarry search`` and ``gitquarry graph reindex`` on projects built from real files.

Commands run through ``gitquarry.cli.app.main`` (the real error edge, real exit codes), plus
one subprocess smoke test of the installed console script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitquarry.cli.app import main
from gitquarry.config import GraphConfig
from gitquarry.graph import reindex_graph

from .conftest import open_store_without_fts5


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITQUARRY_CONFIG", os.devnull)  # no user configuration


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_search_builds_index_and_prints_seed_format(project: Path, capsys) -> None:
    assert not (project / ".gitquarry/index.db").exists()
    code, out, err = run(capsys, "search", "zeppelin", "--project", str(project))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "  [service] mcp-server: MCP server exposing tools to agents"
    # off a terminal the snippet's <b> marks are dropped (bold on a terminal, kept in --json)
    assert lines[1].startswith("    ") and "zeppelin" in lines[1].lower()
    assert "<b>" not in lines[1]
    assert len(lines) == 2
    assert (project / ".gitquarry/index.db").is_file()
    assert "Indexed architecture graph" in err


def test_search_json(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "search", "search", "--json", "--project", str(project))
    assert code == 0
    data = json.loads(out)
    assert isinstance(data, list) and data[0]["ref_id"] == "search"
    assert set(data[0]) == {"ref_id", "kind", "summary", "snippet", "rank"}
    assert "<b>" in data[0]["snippet"]


def test_search_no_results(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "search", "xylophone", "--project", str(project))
    assert code == 0 and out == "No results found.\n"


def test_search_json_no_results_is_empty_array(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "search", "xylophone", "--json", "--project", str(project))
    assert code == 0 and json.loads(out) == []


def test_search_kind_filter(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "search", "search", "--kind", "service", "--project", str(project))
    assert code == 0
    heads = [line for line in out.splitlines() if not line.startswith("    ")]
    assert heads and all(line.startswith("  [service] ") for line in heads)


def test_search_unknown_kind_is_a_usage_error(project: Path, capsys) -> None:
    # a misspelled kind was a silent "No results found." with exit 0
    code, out, err = run(capsys, "search", "search", "--kind", "servise", "--project",
                         str(project))
    assert code == 2 and out == ""
    assert "--kind: unknown kind 'servise'" in err and "did you mean 'service'?" in err, err
    assert "domain, feature, service, entity, adr" in err
    code, out, err = run(capsys, "search", "search", "--kind", "galaxy", "--project",
                         str(project), "--json")
    # issue 24 changed this contract: under --json the error is also JSON on stdout (it
    # was an empty stdout)
    assert code == 2 and "did you mean" not in err, err
    assert json.loads(out)["error"]["code"] == "invalid_argument", out


def test_search_kind_the_graph_uses_is_accepted(make_project, capsys) -> None:
    project = make_project("nodes:\n  - {ref_id: q, kind: queue, summary: Job queue}\n", {})
    code, out, err = run(capsys, "search", "job", "--kind", "queue", "--project", str(project))
    assert code == 0 and out.startswith("  [queue] q: Job queue"), (out, err)


def test_word_service_does_not_match_kind(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "search", "service", "--project", str(project))
    assert code == 0 and out == "No results found.\n"


def test_search_with_double_quote(project: Path, capsys) -> None:
    for query in ['say "hi"', 'a"b', '"zeppelin"']:
        code, _, err = run(capsys, "search", query, "--project", str(project))
        assert code == 0, err


@pytest.mark.parametrize("limit", ["0", "101"])
def test_limit_out_of_range_is_usage_error(project: Path, capsys, limit: str) -> None:
    code, out, err = run(capsys, "search", "search", "--limit", limit, "--project", str(project))
    assert code == 2 and out == ""
    assert err.startswith("Error: --limit:")


def test_limit_caps(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "search", "search", "--limit", "1", "--json", "-p", str(project))
    assert code == 0 and len(json.loads(out)) == 1


def test_project_without_graph_fails_clearly(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "search", "anything", "--project", str(empty))
    assert code == 1 and out == ""
    assert "has no architecture graph" in err and ".beadloom/_graph" in err
    # a newcomer who indexed a repository without a graph is told where commits and docs
    # are searched instead (the error named only the missing YAML files)
    assert "`gitquarry history`" in err and "`gitquarry repo-docs search`" in err
    assert not (empty / ".gitquarry").exists()


def test_missing_project_dir_is_usage_error(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "search", "x", "--project", str(tmp_path / "nope"))
    assert code == 2 and "Error:" in err


def test_search_refreshes_stale_index(project: Path, capsys) -> None:
    run(capsys, "search", "zeppelin", "--project", str(project))
    doc = project / "docs/features/search.md"
    doc.write_text("## Ranking\nNow featuring the wombat ranker.\n", encoding="utf-8")
    st = doc.stat()
    os.utime(doc, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    code, out, err = run(capsys, "search", "wombat", "--project", str(project))
    assert code == 0 and out.startswith("  [feature] search: ")
    assert "Indexed architecture graph" in err
    code, out, err = run(capsys, "search", "wombat", "--project", str(project))
    assert "Indexed" not in err  # fresh now: no rebuild


def test_search_reports_graph_warnings_on_stderr(make_project, capsys) -> None:
    graph = (
        "nodes:\n  - {ref_id: a, kind: service, summary: Alpha}\n"
        "  - {ref_id: a, kind: service, summary: Again}\n"
        "edges:\n  - {src: a, dst: ghost, kind: uses}\n"
    )
    project = make_project(graph, {})
    code, out, err = run(capsys, "search", "alpha", "--project", str(project))
    assert code == 0 and out == "  [service] a: Alpha\n    Alpha\n"
    assert "duplicate ref_id" in err and "ghost" in err


def test_malformed_graph_is_an_error_naming_the_file(project: Path, capsys) -> None:
    (project / ".beadloom/_graph/bad.yml").write_text("nodes: [\n", encoding="utf-8")
    code, out, err = run(capsys, "search", "zeppelin", "--project", str(project))
    assert code == 1 and out == ""
    assert "bad.yml" in err and err.startswith("Error: invalid architecture graph file")


def test_like_fallback_through_cli(project: Path, capsys) -> None:
    # An index written by a SQLite without FTS5: the CLI answers with LIKE, no snippet line.
    with open_store_without_fts5(project / ".gitquarry/index.db") as store:
        reindex_graph(store, project, GraphConfig())
    code, out, err = run(capsys, "search", "zeppelin", "--project", str(project))
    assert code == 0, err
    assert out == "  [service] mcp-server: MCP server exposing tools to agents\n"
    code, out, _ = run(capsys, "search", "zeppelin", "--json", "--project", str(project))
    assert json.loads(out) == [
        {
            "ref_id": "mcp-server",
            "kind": "service",
            "summary": "MCP server exposing tools to agents",
        }
    ]


def test_graph_reindex(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "graph", "reindex", "--project", str(project))
    assert code == 0
    assert out.startswith("Indexed architecture graph: 6 nodes, 3 edges, 5 docs (1 unlinked)")
    code, out, _ = run(capsys, "graph", "reindex", "--json", "--project", str(project))
    data = json.loads(out)
    assert data["nodes"] == 6 and data["fts5"] is True and data["warnings"] == []


def test_graph_reindex_without_graph(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "e"
    empty.mkdir()
    code, _, err = run(capsys, "graph", "reindex", "--project", str(empty))
    assert code == 1 and "has no architecture graph" in err


def test_help_documents_commands(capsys) -> None:
    code, out, _ = run(capsys, "search", "--help")
    assert code == 0
    for option in ("--kind", "--limit", "--json", "--project"):
        assert option in out
    code, out, _ = run(capsys, "graph", "--help")
    assert code == 0 and "reindex" in out


def test_console_script_smoke(project: Path, tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "gitquarry"
    if not exe.exists():
        pytest.skip("console script not installed")
    env = {**os.environ, "GITQUARRY_CONFIG": os.devnull}
    proc = subprocess.run(
        [str(exe), "search", "ranking", "--project", str(project)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("  [feature] search: Full text search over graph nodes\n    ")


ESCAPE_GRAPH = """\
nodes:
  - ref_id: "evil\\e[2J"
    kind: service
    summary: "Clears \\e[2Jthe screen\\0 with a nul and\\ttab"
    docs: [docs/evil.md]
"""


def test_search_text_output_escapes_control_characters(make_project, capsys) -> None:
    project = make_project(ESCAPE_GRAPH, {})
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs/evil.md").write_bytes(b"# Evil\n\nterminal \x1b[31mred\x07 bell\n")
    code, out, err = run(capsys, "search", "terminal", "--project", str(project))
    assert code == 0
    assert "\x1b" not in out and "\x00" not in out and "\x07" not in out
    lines = out.splitlines()
    assert lines[0].startswith(
        "  [service] evil\\x1b[2J: Clears \\x1b[2Jthe screen\\x00 with a nul and"
    ) and lines[0].endswith("tab")  # a tab reaches the terminal as a tab or spaces
    assert "\\x1b[31mred\\x07" in lines[1]
    assert "\x1b" not in err


def test_search_json_output_keeps_control_characters(make_project, capsys) -> None:
    project = make_project(ESCAPE_GRAPH, {})
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs/evil.md").write_bytes(b"# Evil\n\nterminal \x1b[31mred\n")
    code, out, _ = run(capsys, "search", "terminal", "--json", "--project", str(project))
    assert code == 0 and "\x1b" not in out  # JSON escapes them itself (\u001b)
    (item,) = json.loads(out)
    assert item["ref_id"] == "evil\x1b[2J" and "\x00" in item["summary"]
    assert "\x1b[31mred" in item["snippet"]


def test_search_skips_doc_symlinked_outside_project(make_project, tmp_path: Path, capsys) -> None:
    secret = tmp_path / "outside-secret.md"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    graph = "nodes:\n  - {ref_id: root, kind: service, summary: Root, docs: [docs/link.md]}\n"
    project = make_project(graph, {})
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs/link.md").symlink_to(secret)
    code, out, err = run(capsys, "search", "root", "--project", str(project))
    assert code == 0
    assert "/bin/bash" not in out and "root:x" not in out
    assert "docs/link.md" in err and "outside the project" in err


def test_search_explain_json_carries_a_readable_score(project: Path, capsys) -> None:
    code, out, err = run(capsys, "search", "search", "--json", "--explain", "--project",
                         str(project))
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) >= 2
    scores = [row["pipeline"]["score"] for row in rows]
    assert all(0.0 <= s <= 1.0 for s in scores) and scores[0] == 1.0
    assert scores == sorted(scores, reverse=True)
    assert all(row["rank"] < 0 for row in rows)  # the seed's raw BM25 stays as it was
