"""Percentages as every surface prints them: rounded *down*, so 100 % means complete.

``3,335 of 3,336`` rounded to the nearest per cent reads ``100%`` next to a warning that
embeddings are partial; floored it reads ``99%``. One helper for the CLI, warnings, progress
lines and the web page.
"""

from __future__ import annotations

import math


def floor_percent(part: float, whole: float = 1.0, digits: int = 0) -> str:
    """``part / whole`` as a percentage with ``digits`` decimals, rounded down; never ``100``
    unless ``part >= whole`` and never below ``0``. ``whole <= 0`` gives ``0``.

    ``floor_percent(3335, 3336)`` → ``"99"``; ``floor_percent(0.9997, digits=1)`` →
    ``"99.9"``; ``floor_percent(5, 5)`` → ``"100"``. Integers are divided exactly (no float
    error: ``floor_percent(29, 100)`` is ``"29"``).
    """
    scale = 10**digits
    if whole <= 0:
        units = 0
    elif isinstance(part, int) and isinstance(whole, int):
        units = part * 100 * scale // whole
    else:
        units = math.floor(part / whole * 100 * scale + 1e-9)
    if part < whole:
        units = min(units, 100 * scale - 1)
    units = max(units, 0)
    return f"{units / scale:.{digits}f}"
