"""``token_budget._array_total`` (the NumPy path a long-lived process takes for long texts)
against the piece-by-piece loop, bit for bit (issue 21 target 3: a speed-up never changes
the answer, and a token count decides what a budget keeps)."""

from __future__ import annotations

import json
import random

import numpy as np  # noqa: F401  (loaded: estimate_tokens takes the array path)
import pytest

from gitquarry import token_budget
from gitquarry.token_budget import _array_total, _loop_total, estimate_tokens

#: every kind of piece and the characters at the class edges: ASCII whitespace \x1c-\x1f,
#: \v, NUL, non-ASCII whitespace (swallowed by a \s+ run or alone), CJK/emoji, the 0x2E80
#: edge, a lone surrogate, JSON punctuation
ALPHABET = (
    "aZzA09 _\t\n\r\v\f\x1c\x1f\x00\x7f\x80\x85\xa0\u1680\u2000\u200a\u200b\u2028\u202f"
    "\u205f\u3000\u2e7f\u2e80é中文😀\ud800.,{}[]\"\\:-+@#"
)


def _texts(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        size = rng.choice((1, 2, 7, 40, 300, 3000))
        runs: list[str] = []
        length = 0
        while length < size:
            kind = rng.random()
            if kind < 0.3:
                runs.append("".join(rng.choice("abcXYZ") for _ in range(rng.randint(1, 12))))
            elif kind < 0.45:
                runs.append("".join(rng.choice("0123456789") for _ in range(rng.randint(1, 9))))
            else:
                runs.append(rng.choice(ALPHABET))
            length += len(runs[-1])
        out.append("".join(runs))
    return out


def test_the_array_sum_is_the_loop_sum_bit_for_bit() -> None:
    rng = random.Random(21)
    for text in _texts(rng, 500):
        assert _array_total(text) == _loop_total(text), repr(text[:80])


def test_real_payloads_count_the_same() -> None:
    results = [{"hash": f"{i:040x}", "title": f"Fix parser option {i} (#{i * 7})",
                "author": "Ünïcode Åuthor <a@example.com>", "score": 0.123456 * i,
                "excerpt": "src/click/core.py:120\n-    def parse(self, ctx):\n+    def "
                "parse_args(self, ctx, args):  # 修复 😀\n" * (i % 5 + 1)}
               for i in range(40)]
    for n in range(1, 41):
        text = json.dumps({"results": results[:n], "query": "parser option"},
                          ensure_ascii=False)
        assert _array_total(text) == _loop_total(text)
        assert estimate_tokens(text) == int(_loop_total(text) * token_budget.SAFETY) + 1


@pytest.mark.parametrize("size", [token_budget.ARRAY_FROM_CHARS - 1,
                                  token_budget.ARRAY_FROM_CHARS, 50_000])
def test_estimate_is_the_same_either_side_of_the_threshold(size: int) -> None:
    text = ("Fix the parser, 2024 \u3000中 ok. " * (size // 20 + 1))[:size]
    assert estimate_tokens(text) == int(_loop_total(text) * token_budget.SAFETY) + 1


def test_the_non_ascii_whitespace_table_is_complete() -> None:
    every = {c for c in range(0x80, 0x110000) if chr(c).isspace()}
    assert every == set(token_budget._NON_ASCII_SPACE)


def test_the_ascii_whitespace_table_matches_the_pattern() -> None:
    spaces = {c for c in range(0x80) if chr(c).isspace()}
    assert spaces == set(token_budget._ASCII_SPACE)
