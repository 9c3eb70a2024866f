"""The strict loader for untrusted YAML: 1.2 core scalars, source text, duplicates, tags,
bounds."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from gitquarry.errors import GitquarryError, YamlInputError, YamlLimitError
from gitquarry.parsing.strict_yaml import YamlFloat, YamlInt, load_yaml, scalar_text


def test_yaml_11_traps_keep_their_text() -> None:
    data = load_yaml("a: NO\nb: on\nc: yes\nd: 0010\ne: 3.10\nf: 1:30\ng: 2024-05-01\n", "t")
    assert data["a"] == "NO" and data["b"] == "on" and data["c"] == "yes"
    assert isinstance(data["d"], YamlInt) and data["d"] == 10 and data["d"].source == "0010"
    assert isinstance(data["e"], YamlFloat) and data["e"].source == "3.10"
    assert data["f"] == "1:30" and data["g"] == "2024-05-01"
    assert scalar_text(data["d"], data.source("d")) == "0010"
    assert scalar_text(data["e"], None) == "3.10"


def test_core_schema_values() -> None:
    data = load_yaml("t: true\nf: False\nn: ~\ne:\ni: -7\no: 0o17\nx: 0x1F\nr: 1e3\n", "t")
    assert data["t"] is True and data["f"] is False and data["n"] is None and data["e"] is None
    assert (data["i"], data["o"], data["x"], data["r"]) == (-7, 15, 31, 1000.0)
    assert load_yaml("q: 'true'\n", "t")["q"] == "true"  # quoted: always a string


def test_keys_are_source_text_and_merge_keys_are_plain() -> None:
    data = load_yaml("1: one\n<<: {a: b}\n", "t")
    assert data == {"1": "one", "<<": {"a": "b"}}


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("nodes: []\nedges: []\nnodes: [x]\n", 3, "nodes"),
        ("a:\n  b:\n    c: 1\n    c: 2\n", 4, "c"),
        ("- {x: 1, x: 2}\n", 1, "x"),
    ],
)
def test_duplicate_keys_at_any_depth(text: str, line: int, key: str) -> None:
    with pytest.raises(YamlInputError) as info:
        load_yaml(text, "graph/a.yml")
    err = info.value
    assert (err.source, err.line, err.key) == ("graph/a.yml", line, key)
    assert f"duplicate key {key!r}" in str(err) and str(err).startswith(f"graph/a.yml:{line}")


@pytest.mark.parametrize(
    "text",
    ["x: !!python/object/apply:os.system ['true']\n", "x: !!str 10\n", "x: !custom 1\n",
     "!!map {a: 1}\n"],
)
def test_tags_are_refused(text: str) -> None:
    with pytest.raises(YamlInputError, match="tags are not allowed"):
        load_yaml(text, "p.yaml")


def _bomb(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_quickly_and_cheaply() -> None:
    text = _bomb(9)  # 10**9 values if expanded, ~600 bytes
    assert len(text) < 1000
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(YamlLimitError) as info:
        load_yaml(text, "bomb.yml")
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "bomb.yml" in str(info.value) and info.value.code == "yaml_limit_exceeded"
    assert elapsed < 2.0 and peak < 50 * 2**20


def test_small_aliases_still_work() -> None:
    data = load_yaml("base: &b {kind: service}\nx: *b\n", "t")
    assert data["x"] == {"kind": "service"}


@pytest.mark.parametrize(
    ("text", "kwargs", "fragment"),
    [
        ("[" * 500 + "]" * 500, {}, "nests deeper"),
        ("a: " + "x" * 100, {"max_bytes": 50}, "limit is 50"),
        ("a: [1, 2, 3]", {"max_values": 3}, "more than 3 values"),
    ],
)
def test_bounds(text: str, kwargs: dict[str, int], fragment: str) -> None:
    with pytest.raises(YamlLimitError, match=fragment):
        load_yaml(text, "t.yml", **kwargs)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a: &a [*a]\n", "recursive alias"),
        ("a: *nope\n", "names no anchor"),
        ("a: 1\n---\nb: 2\n", "more than one YAML document"),
        ("? [a, b]\n: 1\n", "keys must be plain text"),
        ("a: [1, 2\n", "not valid YAML"),
        (b"a: \xff\n", "not UTF-8"),
    ],
)
def test_refused_inputs_are_typed(text: str | bytes, fragment: str) -> None:
    with pytest.raises(YamlInputError, match=fragment) as info:
        load_yaml(text, "t.yml")
    assert isinstance(info.value, GitquarryError)


def test_positions_are_recorded() -> None:
    data = load_yaml("nodes:\n  - ref_id: a\n  - ref_id: b\n", "t")
    assert data.key_lines["nodes"] == 1
    assert data["nodes"].item_lines == [2, 3]
