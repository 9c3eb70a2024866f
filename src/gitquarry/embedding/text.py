"""The embedding text budget: cut long text by characters before any tokenizer sees it.

A model reads at most ``max_tokens`` tokens of a text (256 for all-MiniLM-L6-v2) and ignores
the rest. Tokenising a 200-line diff only to keep its first 256 tokens wastes most of the
work, so text is first cut to a character budget that is sure to hold ``max_tokens`` tokens,
and the tokenizer then truncates exactly.

The budget is ``max_tokens * chars_per_token`` characters. WordPiece gives about 3 characters
per token on diffs and code and about 4 to 5 on English prose, so the default of
:data:`CHARS_PER_TOKEN_UPPER` (6) keeps every token the model would read while tokenising at
most a couple of kilobytes per text.
"""

from __future__ import annotations

from typing import Final

#: characters per token that almost no real text exceeds (English prose: ~4.5).
CHARS_PER_TOKEN_UPPER: Final = 6.0
#: characters per token that almost no real text falls below (code and diffs: ~3).
#: Used where no tokenizer cuts exactly afterwards (HTTP providers).
CHARS_PER_TOKEN_LOWER: Final = 3.0


def char_budget(max_tokens: int, chars_per_token: float = CHARS_PER_TOKEN_UPPER) -> int:
    """Characters kept for a budget of ``max_tokens`` tokens (at least 1).

    :raises ValueError: ``max_tokens`` or ``chars_per_token`` is not positive.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if chars_per_token <= 0:
        raise ValueError(f"chars_per_token must be > 0, got {chars_per_token}")
    return max(1, int(max_tokens * chars_per_token))


def truncate_to_token_budget(
    text: str, max_tokens: int, *, chars_per_token: float = CHARS_PER_TOKEN_UPPER
) -> str:
    """Return ``text`` cut to about ``max_tokens`` tokens, by characters, without tokenising.

    Text within ``char_budget(max_tokens, chars_per_token)`` characters is returned unchanged.
    Longer text is cut at that many characters, backing up to the last whitespace in the final
    tenth of the budget so a word is not split in two when a nearby break exists. With the
    default ratio the result holds at least ``max_tokens`` tokens of any realistic text (when
    the original did), so the tokenizer's exact truncation afterwards loses nothing the model
    would have read. Pass :data:`CHARS_PER_TOKEN_LOWER` when no tokenizer truncates afterwards
    and the result must stay under ``max_tokens``.

    :raises ValueError: ``max_tokens`` or ``chars_per_token`` is not positive.
    """
    budget = char_budget(max_tokens, chars_per_token)
    if len(text) <= budget:
        return text
    cut = text[:budget]
    floor = budget - budget // 10
    space = max(cut.rfind(" ", floor), cut.rfind("\n", floor), cut.rfind("\t", floor))
    return cut[:space] if space > 0 else cut
