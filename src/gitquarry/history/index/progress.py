"""The progress protocol the indexer reports through; surfaces render it (Rich on the CLI)."""

from __future__ import annotations

import math
from typing import Protocol


class Progress(Protocol):
    """Receives progress events. All methods must be cheap and must not raise."""

    def phase(self, name: str, total: int | None) -> None:
        """A new phase starts (e.g. ``"commits: repo"``); ``total`` units, or None if unknown."""

    def advance(self, units: int) -> None:
        """``units`` more units of the current phase are done."""

    def note(self, message: str) -> None:
        """A one-line message for the user (not an error)."""


class NullProgress:
    """Discards every event."""

    def phase(self, name: str, total: int | None) -> None:
        pass

    def advance(self, units: int) -> None:
        pass

    def note(self, message: str) -> None:
        pass


class EtaEstimator:
    """Remaining time of a phase of ``total`` units, weighted by what each batch cost.

    Commits are read newest first, and the newest cost git the most (bigger trees and diffs;
    a cold page cache), so "remaining units / average rate" overestimates: by about 2-3x
    over the first half of a run in ``benchmarks/eta_accuracy.py``. Instead the cost per unit
    of each batch is fitted as ``c(x) = a·e^(b·x)`` over the position ``x`` in [0, 1] of the
    batch in the phase (weighted least squares on ``log c``, ``b`` clipped to
    [``SLOPE_MIN``, 0]: cost may fall along the run, never assumed to rise faster than
    observed on average) and the remaining time is the integral of ``c`` over what is left.
    With fewer than ``MIN_SAMPLES`` batches the rate of the recent half of the batches is
    used. Between batches the estimate counts down with the clock. Units: seconds.
    """

    MIN_SAMPLES = 5
    SLOPE_MIN = -2.5

    def __init__(self, total: int | None, now: float) -> None:
        self.total = total or 0
        self.done = 0
        self._last = now
        self._samples: list[tuple[float, int, float]] = []  # (position, units, seconds)
        self._estimate: float | None = None
        self._estimated_at = now

    def advance(self, units: int, now: float) -> None:
        """``units`` more are done at monotonic time ``now``."""
        if units <= 0:
            return
        seconds = max(now - self._last, 0.0)
        self._samples.append((self.done + units / 2, units, seconds))
        self.done += units
        self._last = now
        self._estimate = self._fit()
        self._estimated_at = now

    def remaining(self, now: float) -> float | None:
        """Seconds left at monotonic time ``now``; None before the first batch."""
        if self._estimate is None:
            return None
        if self.total and self.done >= self.total:
            return 0.0
        return max(self._estimate - (now - self._estimated_at), 0.0)

    def _fit(self) -> float | None:
        total = self.total
        left = total - self.done
        if not total or left <= 0:
            return 0.0
        samples = self._samples
        if len(samples) < self.MIN_SAMPLES:
            recent = samples[len(samples) // 2 :]
            units = sum(u for _, u, _ in recent)
            return sum(s for _, _, s in recent) / units * left if units else None
        xs = [pos / total for pos, _, _ in samples]
        ys = [math.log(max(s / u, 1e-7)) for _, u, s in samples]
        ws = [float(u) for _, u, _ in samples]
        weight = sum(ws)
        mx = sum(w * x for w, x in zip(ws, xs, strict=True)) / weight
        my = sum(w * y for w, y in zip(ws, ys, strict=True)) / weight
        vx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs, strict=True))
        b = (
            sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys, strict=True)) / vx
            if vx > 0 else 0.0
        )
        b = min(max(b, self.SLOPE_MIN), 0.0)
        a = my - b * mx
        # E[e^y] = e^(mean + var/2) for log-normal noise around the fitted line.
        var = sum(w * (y - (a + b * x)) ** 2 for w, x, y in zip(ws, xs, ys, strict=True)) / weight
        x0 = self.done / total
        if abs(b) < 1e-9:
            integral = math.exp(a) * (1 - x0)
        else:
            integral = math.exp(a) * (math.exp(b) - math.exp(b * x0)) / b
        return integral * total * math.exp(min(var, 4.0) / 2)
