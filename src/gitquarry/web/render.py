"""Presentation helpers shared by the templates: the SVG histogram geometry, diff line
classes, dates and byte sizes. Pure functions of the data they are given."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

#: SVG viewBox of the histogram (the element scales to the page width)
HIST_W, HIST_H, HIST_PAD_B = 720, 120, 18


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    count: int
    label: str


@dataclass(frozen=True)
class Histogram:
    bars: list[Bar]
    ticks: list[tuple[float, str]]
    total: int
    peak: int
    basis: str
    width: int = HIST_W
    height: int = HIST_H


def day(ts: int | float | None) -> str:
    """``YYYY-MM-DD`` (UTC) of Unix seconds, or an empty string."""
    if ts is None:
        return ""
    return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d")


def moment(ts: int | float | None) -> str:
    """``YYYY-MM-DD HH:MM UTC`` of Unix seconds, or an empty string."""
    if ts is None:
        return ""
    return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M UTC")


def size(n: int | None) -> str:
    """Bytes as B/KiB/MiB/GiB with one decimal."""
    if n is None:
        return ""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def histogram(timeline: dict[str, Any] | None) -> Histogram | None:
    """Bar geometry for ``history.timeline`` data (None when nothing matched)."""
    if not timeline or not timeline.get("bins"):
        return None
    bins = timeline["bins"]
    peak = max(b["count"] for b in bins) or 1
    plot_h = HIST_H - HIST_PAD_B
    slot = HIST_W / len(bins)
    gap = min(2.0, slot * 0.15)
    bars = []
    for i, b in enumerate(bins):
        h = 0.0 if b["count"] == 0 else max(1.5, plot_h * b["count"] / peak)
        label = (f"{b['count']} commit{'s' if b['count'] != 1 else ''}, "
                 f"{day(b['start'])} – {day(b['end'])}")
        bars.append(Bar(round(i * slot + gap / 2, 2), round(plot_h - h, 2),
                        round(max(0.5, slot - gap), 2), round(h, 2), b["count"], label))
    ticks: list[tuple[float, str]] = []
    first, last = bins[0]["start"], bins[-1]["end"]
    span = max(1, last - first)
    years = span > 2 * 365 * 86_400
    seen: set[str] = set()
    for i, b in enumerate(bins):
        text = day(b["start"])[:4] if years else day(b["start"])[:7]
        if text not in seen:
            seen.add(text)
            ticks.append((round(i * slot, 2), text))
    if len(ticks) > 8:  # keep the labels readable at 390 px
        step = -(-len(ticks) // 8)
        ticks = ticks[::step]
    ticks = [t for t in ticks if t[0] <= HIST_W - 40]  # a label needs room on the right
    return Histogram(bars, ticks, int(timeline["total"]), peak, str(timeline["basis"]))


def diff_lines(diff: str, max_lines: int = 2000) -> list[tuple[str, str]]:
    """``(css class, line)`` per diff line: ``add``, ``del``, ``hunk``, ``meta`` or ``ctx``."""
    out: list[tuple[str, str]] = []
    for line in diff.splitlines()[:max_lines]:
        if line.startswith(("+++", "---", "diff --git", "index ", "new file", "deleted file",
                            "similarity", "rename ", "old mode", "new mode", "Binary")):
            cls = "meta"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        out.append((cls, line))
    return out


_MD_HEADING = re.compile(r"(?:^|(?<=\s))#{1,6}(?=\s)")
_MD_RULE = re.compile(r"(?:^|(?<=\s))(?:-{3,}|\*{3,}|_{3,}|={3,})(?=\s|$)")
_MD_STRONG = re.compile(r"\*\*|__|`")
_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*\)")
_MD_LIST = re.compile(r"(?:^|(?<=\n))\s*(?:[-*+>]|\d+\.)\s+")
_SPACES = re.compile(r"\s+")


def num(value: Any) -> str:
    """An integer with thousands separators, as the CLI prints it (``3,335``); anything
    else as it is."""
    if isinstance(value, bool) or not isinstance(value, int):
        return "" if value is None else str(value)
    return f"{value:,}"


def plain_markdown(snippet: str | None) -> str:
    """A graph snippet (cut from Markdown docs) without Markdown's syntax: heading marks
    (``#``), rules (``---``), strong/code marks (``**``, ``__``, backticks), link targets
    (``[text](url)`` → ``text``) and list or quote markers are dropped, whitespace runs
    become one space; the words and the ``<b>…</b>`` match marks stay as they are."""
    if not snippet:
        return ""
    text = _MD_LINK.sub(r"\1", snippet)
    text = _MD_LIST.sub(" ", text)
    text = _MD_HEADING.sub("", text)
    text = _MD_RULE.sub("", text)
    text = _MD_STRONG.sub("", text)
    return _SPACES.sub(" ", text).strip()


def marked(snippet: str | None) -> list[tuple[bool, str]]:
    """A graph or docs snippet split at its ``<b>…</b>`` marks: ``(is_match, text)`` pieces, so the
    template escapes the text and wraps only matches (never trusting markup from content)."""
    if not snippet:
        return []
    out: list[tuple[bool, str]] = []
    rest = snippet
    while rest:
        start = rest.find("<b>")
        if start < 0:
            out.append((False, rest))
            break
        end = rest.find("</b>", start + 3)
        if end < 0:
            out.append((False, rest))
            break
        if start:
            out.append((False, rest[:start]))
        out.append((True, rest[start + 3 : end]))
        rest = rest[end + 4 :]
    return out
