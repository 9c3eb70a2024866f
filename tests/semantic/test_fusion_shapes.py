"""Query shapes, introduction questions and score fusion (pure functions)."""

from __future__ import annotations

import pytest

from gitquarry.retrieval.fusion import (
    ShapeWeights,
    introduction_subject,
    query_shape,
    rrf_fuse,
    score_fuse,
)


@pytest.mark.parametrize("query", [
    "COMPREPLY", "_wrap_chunks", "shlex.split editor", "NoSuchCommand", "pass_meta_key",
    '"exact phrase" in a sentence', "src/click/core.py", "--no-merges", "`make_context`",
])
def test_keyword_shapes(query: str) -> None:
    assert query_shape(query) == "keyword"


@pytest.mark.parametrize("query", [
    "tab suggestions stopped working for subcommands two levels deep",
    "fix race condition in session cookie",
    "when was the progress bar introduced",
])
def test_natural_shapes(query: str) -> None:
    assert query_shape(query) == "natural"


@pytest.mark.parametrize("query", ["shiv pex", "crash on 3.10 with TypedDict", "pager"])
def test_mixed_shapes(query: str) -> None:
    assert query_shape(query) == "mixed"


def test_shape_weights_pick_by_shape() -> None:
    weights = ShapeWeights(keyword=(1.0, 0.25), mixed=(1.0, 1.0), natural=(1.0, 3.0))
    assert weights.for_query("NoSuchCommand") == (1.0, 0.25)
    assert weights.for_query("why does the pager hang after ctrl-c") == (1.0, 3.0)


@pytest.mark.parametrize(("query", "subject"), [
    ("when was the DateTime parameter type added", "DateTime parameter type"),
    ("when did tuple types for options get introduced", "tuple types for options"),
    ("when did Choice get a case insensitive option", "Choice a case insensitive option"),
    ("which commit added shell completion?", "shell completion"),
    ("who introduced the retry logic", "the retry logic"),
    ("when was getchar first added", "getchar"),
])
def test_introduction_questions(query: str, subject: str) -> None:
    assert introduction_subject(query) == subject


@pytest.mark.parametrize("query", [
    "fix race condition in session cookie", "when did tests start failing on windows",
    "added retries", "",
])
def test_other_queries_are_not_introduction_questions(query: str) -> None:
    assert introduction_subject(query) is None


def test_score_fuse_is_a_convex_combination_of_min_max_scores() -> None:
    lexical = [("a", 10.0), ("b", 5.0), ("c", 0.0)]
    semantic = [("c", 0.9), ("a", 0.5), ("d", 0.1)]
    fused = dict(score_fuse([lexical, semantic], [0.5, 0.5]))
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)
    assert fused["c"] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    assert fused["d"] == pytest.approx(0.0)
    assert [k for k, _ in score_fuse([lexical, semantic], [0.5, 0.5])][:2] == ["a", "c"]
    assert all(0.0 <= v <= 1.0 for v in fused.values())
    # one list only, or an empty list, still works
    assert score_fuse([lexical, []], [1.0, 1.0])[0][0] == "a"


def test_rrf_weights_change_the_winner() -> None:
    lexical, semantic = ["x", "y"], ["y", "z"]
    assert rrf_fuse([lexical, semantic], [1.0, 1.0], k=60)[0][0] == "y"
    assert rrf_fuse([lexical, semantic], [5.0, 0.01], k=60)[0][0] == "x"


def test_shipped_fusion_constants_are_the_measured_ones() -> None:
    """issue 22 lever 4 (docs/performance.md, "Fusion constants with v3 vectors"): RRF k = 40,
    keyword-shaped queries weighted like mixed ones, prose leaning on vectors; the engine's
    own default k is the config's, so a caller building an ``Engine`` by hand ranks alike."""
    from gitquarry.config import Config
    from gitquarry.history.search.engine import Engine
    from gitquarry.retrieval.fusion import SHAPE_WEIGHTS

    assert Config().search.rrf_k == Engine().rrf_k == 40
    assert SHAPE_WEIGHTS.for_query("NoSuchCommand") == SHAPE_WEIGHTS.for_query("shiv pex") \
        == (1.0, 1.0)
    assert SHAPE_WEIGHTS.for_query("tab suggestions stopped working for subcommands") \
        == (1.0, 2.0)
