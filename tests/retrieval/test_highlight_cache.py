"""The term cache behind snippet marks (``retrieval.highlight``) changes cost, never spans:
cold, warm and after the cache overflows, ``match_spans`` gives the same answer."""

from __future__ import annotations

import pytest

from gitquarry.retrieval import highlight

TEXTS = [
    "Adding a parseConfigFile helper: it was built for PyPI releases (v2.0.1) and 修复数据库连接",
    "The connections were dropped; connection pooling fixes it. Configs, configured, CONFIG.",
    "XMLHttpRequest and HttpAdapter.py read readSettingsFromDisk before v3.10 ships.",
]
QUERIES = ["config", "connection", "v2.0.1", "数据库", "http adapter", "add built pypi", "disk"]


def _all() -> list[list[tuple[int, int]]]:
    return [highlight.match_spans(t, q) for t in TEXTS for q in QUERIES]


def test_spans_are_the_same_cold_warm_and_after_overflow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    highlight._term_cache.clear()
    cold = _all()
    assert any(cold)  # the inputs do match something
    assert _all() == cold  # warm: every term from the cache
    unbounded = len(highlight._term_cache)
    monkeypatch.setattr(highlight, "_TERM_CACHE_MAX", 5)  # overflow on every call
    highlight._term_cache.clear()
    assert _all() == cold
    assert len(highlight._term_cache) < unbounded  # cleared when it would pass the cap
