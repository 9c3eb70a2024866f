"""How many tokens a response costs a model: a fast, conservative estimate.

Clients limit tool results in tokens (Claude Code cuts a tool result at about 25,000), so
``max_tokens`` budgets are counted in tokens. Real tokenizers differ (Claude's, OpenAI's
``cl100k_base``/``o200k_base``) and are not all public or bundled, so gitquarry counts with a
calibrated estimate: the text is split into pieces the way byte-pair tokenizers pre-split it
(letter runs, digit runs, single non-ASCII characters, punctuation), and each kind of piece
costs a fitted number of tokens. The coefficients were fitted on 300 real response payloads
(commit metadata, messages and diffs of four public repositories as JSON, plus CJK, Cyrillic
and emoji text) against the three tokenizers and scaled by ``SAFETY`` so that the estimate is
at least the largest of the three counts on almost every payload.

Measured error (``benchmarks/bench_token_estimate.py``, results in
``benchmarks/results/token_estimate.json``): on whole responses the estimate lies between
1.0x and 1.6x of the Claude (legacy public) tokenizer's count, and above ``cl100k_base`` and
``o200k_base``; a budget of N estimated tokens therefore costs at most N real tokens in those
tokenizers (over-estimates waste some budget; they never overflow it).

Cost: one regular-expression pass, about 1 µs per 30 characters.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from gitquarry._lazy import lazy_re

#: the range a ``max_tokens`` budget may take, at every surface and corpus
MIN_MAX_TOKENS = 500
MAX_MAX_TOKENS = 1_000_000

#: letter runs (ASCII), digit runs, one non-ASCII character, whitespace, one punctuation mark
_PIECE = lazy_re(r"[A-Za-z]+|[0-9]+|[^\x00-\x7f]|\s+|[^A-Za-z0-9\s\x80-\U0010ffff]")

#: tokens per piece / per character, fitted (least squares against the largest count)
WORD = 0.92
LETTER = 0.16
NUMBER = 1.12
DIGIT = 0.13
CJK = 1.17
OTHER_NON_ASCII = 0.72
PUNCT = 0.57
#: multiplies the fitted estimate so that it bounds the real counts from above
SAFETY = 1.15


#: from this many characters on, a process that has NumPy loaded counts with
#: ``_array_total`` (the same sum, bit for bit: ~1.5x faster at 600 characters, ~7x at
#: 2,000, ~30x on whole responses); below it, or without NumPy (the CLI never imports it
#: for this), with the loop. Measured on the MCP server's compact results (s8-mcp,
#: 2026-12-02): the two cost the same at ~450 characters (loop 59 µs, arrays 69 µs at
#: 300-500; 114 vs 77 µs at 500-700); it was 2,048, which left most compact results
#: (median ~600 characters) on the loop.
ARRAY_FROM_CHARS = 512
#: ASCII characters ``\s`` and ``str.isspace`` agree on: \t \n \v \f \r, \x1c-\x1f, space
_ASCII_SPACE = (9, 10, 11, 12, 13, 28, 29, 30, 31, 32)


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (see the module docstring for the error bound); 0 for ''."""
    if not text:
        return 0
    if len(text) >= ARRAY_FROM_CHARS and "numpy" in sys.modules:
        return int(_array_total(text) * SAFETY) + 1
    return int(_loop_total(text) * SAFETY) + 1


def _loop_total(text: str) -> float:
    """The fitted (unscaled) estimate of ``text``: each piece's cost added in text order."""
    total = 0.0
    for m in _PIECE.finditer(text):
        piece = m.group()
        ch = piece[0]
        if ch.isascii():
            if ch.isalpha():
                total += WORD + LETTER * len(piece)
            elif ch.isdigit():
                total += NUMBER + DIGIT * len(piece)
            elif not ch.isspace():
                total += PUNCT
        elif ch.isspace():
            continue
        elif ord(ch) >= 0x2E80:  # CJK, kana, hangul, emoji and the like
            total += CJK
        else:
            total += OTHER_NON_ASCII
    return total


def _array_total(text: str) -> float:
    """The loop's ``total`` for ``text``, bit for bit, computed over code-point arrays.

    The pieces are the same (letter runs, digit runs, one punctuation mark, one non-ASCII
    character; whitespace costs nothing, and a non-ASCII character ``\\s+`` swallows is
    whitespace, which costs nothing on its own too), each piece's cost is the same float
    expression, placed at the piece's first character, and ``np.cumsum`` adds them in text
    order one by one, as the loop does (adding the 0.0 between pieces changes nothing)."""
    import numpy as np

    cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    n = len(cp)
    letter = ((cp >= 65) & (cp <= 90)) | ((cp >= 97) & (cp <= 122))
    digit = (cp >= 48) & (cp <= 57)
    high = cp >= 0x80
    punct = ~(letter | digit | high | np.isin(cp, _ASCII_SPACE))
    cost = np.zeros(n)
    for run, base, per in ((letter, WORD, LETTER), (digit, NUMBER, DIGIT)):
        edges = np.flatnonzero(np.diff(run.astype(np.int8), prepend=0, append=0))
        starts, ends = edges[0::2], edges[1::2]
        cost[starts] = base + per * (ends - starts).astype(np.float64)
    cost[punct] = PUNCT
    at = np.flatnonzero(high)
    if len(at):
        chars = cp[at]
        value = np.where(chars >= 0x2E80, CJK, OTHER_NON_ASCII)
        spaces = [i for i, c in enumerate(chars.tolist()) if c in _NON_ASCII_SPACE]
        value[spaces] = 0.0
        cost[at] = value
    return float(np.cumsum(cost)[-1])


#: every non-ASCII code point ``str.isspace`` holds true for (a test checks the whole range)
_NON_ASCII_SPACE = frozenset((0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                              0x202F, 0x205F, 0x3000))


def json_tokens(value: Any) -> int:
    """Estimated tokens of ``value`` sent as compact JSON (as the MCP server sends it)."""
    return estimate_tokens(json.dumps(value, ensure_ascii=False))


def fit_prefix(costs: list[int], room: int) -> int:
    """How many leading items fit ``room`` tokens, given each item's cost (in order: results
    are dropped from the bottom, the lowest-ranked first)."""
    used = 0
    for n, cost in enumerate(costs):
        used += cost
        if used > room:
            return n
    return len(costs)


def check_max_tokens(value: Any, name: str = "max_tokens") -> None:
    """:raises InvalidArgumentError: ``value`` is not None and not an integer from
    ``MIN_MAX_TOKENS`` to ``MAX_MAX_TOKENS``."""
    from gitquarry.errors import InvalidArgumentError

    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or not MIN_MAX_TOKENS <= value <= MAX_MAX_TOKENS):
        raise InvalidArgumentError(
            name, f"must be an integer from {MIN_MAX_TOKENS} to {MAX_MAX_TOKENS:,}, "
            f"got {value!r}")
