"""One declaration per configuration key (issue 23 §4): ``gitquarry.config.SETTINGS`` holds
each key's type, default, range, owner and help; the loader's range checks, the trust rule
and docs/configuration.md's key table come from it; the loaded configuration is frozen; the
result pipeline owns its defaults and ``retrieval`` never imports ``config`` (§3)."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path
from typing import Any, Literal

import pytest

import gitquarry
from gitquarry.config import (
    CONTAINED_PATH_KEYS,
    REPOSITORY_OWNED_KEYS,
    SETTINGS,
    Config,
    Owner,
    Setting,
    _validate,
    load_config,
)
from gitquarry.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_docs_key_table_is_generated_from_the_declarations() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("config_table",
                                                  ROOT / "tools" / "config_table.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert tool.render(doc) == doc, "run python tools/config_table.py"
    for s in SETTINGS:  # every key has its row
        assert f"| `{s.name}` |" in doc, s.name


def test_every_key_is_declared_once_with_help_and_a_valid_default() -> None:
    names = [(s.section, s.key) for s in SETTINGS]
    assert len(names) == len(set(names)) > 50
    for section in {s.section for s in SETTINGS}:
        cls = type(getattr(Config(), section))
        assert [f.name for f in dataclasses.fields(cls)] == [
            s.key for s in SETTINGS if s.section == section]
    for s in SETTINGS:
        assert s.help.strip() and isinstance(s.owner, Owner), s.name
        for check in s.checks:
            assert check.ok(s.default), (s.name, check.why)  # the default is in range
    _validate(Config(), None)


def _valid_other(s: Setting) -> Any:
    """A value of ``s``'s type, in range, other than its default."""
    if typing.get_origin(s.type) is Literal:
        return next(c for c in s.choices if c != s.default)
    if s.type is bool:
        return not s.default
    if typing.get_origin(s.type) is list:
        return ["**/elsewhere/**"]
    if s.type is str:
        return "sub" if s.owner is Owner.REPOSITORY_PATH else s.default + "x"
    candidates = [s.default + 1, s.default - 1, s.default * 2, 0.5, 1, 2, 4096, 8192]
    for value in candidates:
        value = type(s.default)(value)
        if value != s.default and all(c.ok(value) for c in s.checks):
            return value
    raise AssertionError(s.name)


def _toml(value: Any) -> str:
    import json

    return ("true" if value else "false") if isinstance(value, bool) else json.dumps(value)


@pytest.mark.parametrize("s", [s for s in SETTINGS if s.section != "trust"],
                         ids=lambda s: s.name)
def test_a_workspace_file_sets_exactly_the_keys_its_owner_allows(
    s: Setting, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trust rule as the loader applies it, key by key, from the declaration's owner:
    an untrusted workspace's file sets repository-owned keys; a trusted one every key but
    the user-file-only ones; the others keep their default and are named in a warning."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    value = _valid_other(s)
    (ws / ".gitquarry.toml").write_text(f"[{s.section}]\n{s.key} = {_toml(value)}\n",
                                        encoding="utf-8")
    user = tmp_path / "user.toml"
    for trusted in (False, True):
        user.write_text(f"[trust]\nworkspaces = [{_toml(str(ws))}]\n" if trusted else "",
                        encoding="utf-8")
        config = load_config(ws, user_file=user)
        got = getattr(getattr(config, s.section), s.key)
        allowed = s.owner is not Owner.USER_FILE and (
            trusted or s.owner in (Owner.REPOSITORY, Owner.REPOSITORY_PATH))
        assert got == (value if allowed else s.default), (s.name, trusted)
        refused = [k for w in config.warnings for k in w.keys]
        assert refused == ([] if allowed else [s.name]), (s.name, trusted)
    assert ((s.section, s.key) in REPOSITORY_OWNED_KEYS) == (
        s.owner in (Owner.REPOSITORY, Owner.REPOSITORY_PATH))
    assert ((s.section, s.key) in CONTAINED_PATH_KEYS) == (s.owner is Owner.REPOSITORY_PATH)


@pytest.mark.parametrize("s", [s for s in SETTINGS if s.checks], ids=lambda s: s.name)
def test_the_loader_enforces_each_declared_range(s: Setting, tmp_path: Path) -> None:
    """A value outside the declared range is refused with the declared message."""
    for bad in (-(10**9), 10**9, -1, 0):
        value = float(bad) if s.type is float else bad
        failing = [c for c in s.checks if not c.ok(value)]
        if failing:
            break
    else:
        pytest.fail(f"no out-of-range probe for {s.name}")
    user = tmp_path / "user.toml"
    user.write_text(f"[{s.section}]\n{s.key} = {_toml(value)}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(None, user_file=user)
    check = failing[0]
    assert str(info.value) == f"{user}: {check.name or s.name} {check.why}"


def test_the_loaded_config_is_frozen(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[search]\ntop_n = 7\n", encoding="utf-8")
    config = load_config(None, user_file=user)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.search.top_n = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.search = Config().search  # type: ignore[misc]
    changed = config.replaced(search={"top_n": 3}, embedding={"provider": "none"})
    assert (changed.search.top_n, changed.embedding.provider) == (3, "none")
    assert (config.search.top_n, config.embedding.provider) == (7, "minilm-onnx")
    assert changed.sources == config.sources == [user]


def test_retrieval_never_imports_config_and_search_takes_the_pipeline_defaults() -> None:
    from gitquarry.config import SearchConfig
    from gitquarry.retrieval.pipeline import PipelineSettings

    offenders = []
    for path in (Path(gitquarry.__file__).parent / "retrieval").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.name}: {n}" for n in names if n == "gitquarry.config"
                          or n.startswith("gitquarry.config.")]
    assert offenders == []
    pipeline, search = PipelineSettings(), SearchConfig()
    assert pipeline == PipelineSettings.from_search_config(search)
    assert pipeline.collapse == search.collapse_copies
