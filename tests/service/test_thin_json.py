"""The thin client's JSON (``cli.thin.json_loads``/``json_dumps``: the C halves of ``json``
called without importing ``json`` or ``re``) reads and writes exactly what ``json.loads`` and
``json.dumps(..., ensure_ascii=False)`` do, on seeded-random values and malformed text."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from gitquarry.cli.thin import json_dumps, json_loads


def _value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randint(-10**12, 10**12)
    if kind == 2:
        return rng.choice([0.5, -1e300, 1e-7, 3.0, float("inf"), 12.25])
    if kind in (3, 4):
        alphabet = "ab \"\\\n\t/é数🙂\x00\x1f\u2028"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if kind in (5, 6):
        return {str(_value(rng, depth + 1)): _value(rng, depth + 1)
                for _ in range(rng.randrange(4))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_same_as_json_on_random_values() -> None:
    rng = random.Random(21)
    for _ in range(500):
        value = _value(rng)
        text = json.dumps(value, ensure_ascii=False)
        assert json_dumps(value) == text
        assert json.dumps(json_loads(text)) == json.dumps(json.loads(text))
        assert json.dumps(json_loads(f" \n{text}\t\r\n")) == json.dumps(json.loads(text))


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a": 1} x', "[1,]", "nul", '"\x01"',
                                  "{'a': 1}", "[1] [2]"])
def test_malformed_text_is_a_value_error_as_in_json(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        json_loads(text)


def test_not_serialisable_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        json_dumps({"a": object()})


def test_the_thin_client_imports_neither_json_nor_socket() -> None:
    code = ("import sys; import gitquarry.cli.entry, gitquarry.cli.fast, gitquarry.cli.thin; "
            "print(sorted(m for m in ('json', 're', 'socket', 'enum', 'typing') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
