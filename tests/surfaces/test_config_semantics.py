"""Issue 15 §4: configuration means what the README says.

``GITQUARRY_CONFIG`` (``~`` expanded, a named missing file is an error), ``[git_indexing]
enabled = false``, the workspace walk-up with any ``index_dir``, and a schema walk proving
that every accepted key is read by code outside ``config.py``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

from gitquarry import config as config_module
from gitquarry.config import SECTIONS, Config, load_config

from .conftest import CLI, Repo, Sink, user_config


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    repo = Repo(root / "app")
    repo.commit("Add parser for invoices", {"src/parser.py": "def parse(): pass\n"})
    repo.commit("Document the invoice format", {"docs/invoices.md": "# Invoices\n"})
    (root / "app" / "src" / "deep").mkdir()
    return root


# -- GITQUARRY_CONFIG ------------------------------------------------------------------------


def test_named_config_file_that_does_not_exist_is_an_error(ws: Path, cli: CLI,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    missing = tmp_path / "typo-config.toml"
    monkeypatch.setenv("GITQUARRY_CONFIG", str(missing))
    for argv in (("index", str(ws), "--no-embed"), ("history", "parser", "--project", str(ws)),
                 ("status", "--project", str(ws))):
        code, _out, err = cli(*argv)
        assert code == 2, (argv, err)
        assert str(missing) in err and "does not exist" in err and "GITQUARRY_CONFIG" in err


def test_tilde_in_config_path_is_expanded(ws: Path, isolated_env: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (isolated_env / "x.toml").write_text("[search]\ntop_n = 3\n", encoding="utf-8")
    monkeypatch.setenv("GITQUARRY_CONFIG", "~/x.toml")  # as an MCP client's env block passes it
    config = load_config(ws)
    assert config.search.top_n == 3 and config.sources == [isolated_env / "x.toml"]
    monkeypatch.setenv("GITQUARRY_CONFIG", "~/missing.toml")
    with pytest.raises(config_module.ConfigError, match=r"missing\.toml"):
        load_config(ws)


def test_dev_null_means_no_user_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GITQUARRY_CONFIG", os.devnull)
    config = load_config(tmp_path)
    assert config.sources == [] and config.search.top_n == 5


# -- [git_indexing] enabled ------------------------------------------------------------------


def test_history_indexing_disabled_indexes_no_commit(ws: Path, cli: CLI) -> None:
    user_config('[git_indexing]\nenabled = false\n[embedding]\nprovider = "none"\n')
    code, out, err = cli("index", str(ws), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["history_indexed"] is False and data["total_commits"] == 0
    code, out, err = cli("index", str(ws))
    assert code == 0, err
    assert "Commit history not indexed: [git_indexing] enabled = false." in out
    assert "no Git repositories found" not in err
    user_config('[embedding]\nprovider = "none"\n')
    code, out, err = cli("index", str(ws), "--json")
    assert json.loads(out)["total_commits"] == 2


# -- the workspace walk-up -------------------------------------------------------------------


@pytest.mark.parametrize("index_dir", [".cache/gq", "ABSOLUTE"])
def test_walk_up_finds_the_workspace_however_index_dir_is_set(
    ws: Path, cli: CLI, index_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if index_dir == "ABSOLUTE":
        index_dir = str(tmp_path / "indexes" / "ws")
    user_config(f'[indexing]\nindex_dir = "{index_dir}"\n[embedding]\nprovider = "none"\n')
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    sub = ws / "app" / "src" / "deep"
    monkeypatch.chdir(sub)
    code, out, err = cli("history", "parser", "--json", "--mode", "lexical")
    assert code == 0, err
    assert json.loads(out)["results"][0]["title"] == "Add parser for invoices"
    # --project <subdir> looks in parent directories too, as git does
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("status", "--project", str(sub), "--json")
    assert code == 0, err
    assert json.loads(out)["workspace"] == str(ws)


def test_absolute_index_dir_serves_one_workspace(ws: Path, cli: CLI, tmp_path: Path) -> None:
    shared = tmp_path / "indexes" / "one"
    user_config(f'[indexing]\nindex_dir = "{shared}"\n[embedding]\nprovider = "none"\n')
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    other = tmp_path / "other"
    Repo(other / "lib").commit("Other work", {"x.txt": "x\n"})
    code, _, err = cli("index", str(other), "-q")
    assert code == 1
    assert f"{shared} holds the index of the workspace {ws}" in err
    code, out, err = cli("history", "parser", "--project", str(ws), "--json")
    assert code == 0 and json.loads(out)["total_commits_indexed"] == 2


# -- every accepted key has an effect --------------------------------------------------------


def _section_classes() -> dict[str, type]:
    defaults = Config()
    return {name: type(getattr(defaults, name)) for name in SECTIONS}


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_schema_walk_every_key_is_read_by_code(
    ws: Path, cli: CLI, sink: Sink, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Walk the configuration schema; run index, history, search, status and the embedder
    factory with a configuration setting every key; fail for a key no code outside
    range validation (``config._validate``) and ``dataclasses`` ever read."""
    reads: set[tuple[str, str]] = set()
    schema: dict[str, set[str]] = {}
    for section, cls in _section_classes().items():
        keys = {f.name for f in dataclasses.fields(cls)}
        schema[section] = keys
        original = cls.__getattribute__

        def tracked(self: object, name: str, *, _section: str = section,
                    _keys: set[str] = keys, _original: object = original) -> object:
            if name in _keys:
                caller = sys._getframe(1).f_code
                if caller.co_name != "_validate" and not caller.co_filename.endswith(
                    "dataclasses.py"
                ):
                    reads.add((_section, name))
            return _original(self, name)  # type: ignore[operator]

        monkeypatch.setattr(cls, "__getattribute__", tracked)

    monkeypatch.setenv("GQ_TEST_KEY", "k")
    graph = ws / ".beadloom" / "_graph"
    graph.mkdir(parents=True)
    (graph / "g.yml").write_text(
        "nodes:\n  - ref_id: invoices\n    kind: feature\n    summary: Invoice parsing\n"
        "    docs: [app/docs/invoices.md]\n", encoding="utf-8")
    user_config(
        "[indexing]\n"
        'exclude = ["**/node_modules/**"]\nexclude_hidden_dirs = true\nindex_dir = ".gq"\n'
        "[git_indexing]\n"
        'enabled = true\nrefs = ["refs/heads/**"]\ndelta_max_lines = 50\nbatch_size = 10\n'
        "[embedding]\n"
        f'provider = "openai"\nmodel = "m"\ndevice = "cpu"\nurl = "{sink.url}"\n'
        'api_key_env = "GQ_TEST_KEY"\ndata_boundary = "local_network"\nallow_remote = false\n'
        "batch_size = 4\ntimeout_s = 10.0\n"
        "[search]\n"
        'mode = "hybrid"\nrrf_k = 60\nlexical_weight = 1.0\nsemantic_weight = 1.0\ntop_n = 4\n'
        "[graph]\n"
        'graph_dir = ".beadloom/_graph"\ndocs_dir = "app/docs"\nchunk_max_chars = 500\n'
        "[docs]\n"
        'max_blob_bytes = 65536\nchunk_max_chars = 1000\nchunk_min_chars = 100\n'
        'lexical_cache_bytes = 1048576\nmode = "hybrid"\nlimit = 5\nrefresh_on_index = true\n'
        "[trust]\n"
        f'workspaces = ["{tmp_path / "nowhere"}"]\n'
    )
    assert cli("repo-docs", "register", "--repo", "o/app", "--repository-path",
               str(ws / "app"))[0] == 0
    (ws / ".gitquarry.toml").write_text('[search]\ntop_n = 4\n', encoding="utf-8")
    for argv in (("index", str(ws)), ("history", "invoice parser", "--project", str(ws)),
                 ("search", "invoice", "--project", str(ws)), ("status", "--project", str(ws)),
                 ("repo-docs", "search", "invoice format")):
        code, _, err = cli(*argv)
        assert code == 0, (argv, err)
    assert sink.requests, "the configured endpoint was used"
    # the in-process providers read [embedding] device when they are built
    from gitquarry.embedding import create_embedder

    local = load_config(ws).replaced(embedding={"provider": "minilm-onnx", "model": ""})
    embedder = create_embedder(local.embedding, purpose="query")
    assert embedder is not None
    embedder.close()

    # [daemon] keys are read by the daemon process: tests/service/test_service_units.py
    # (test_every_daemon_key_is_read) walks them the same way with a daemon running.
    unread = sorted(f"[{s}] {k}" for s, keys in schema.items() for k in keys
                    if (s, k) not in reads and s != "daemon")
    assert not unread, f"accepted configuration keys that no code reads: {unread}"
