"""``hunks.line_score`` (words kept per word, ASCII lines without a query term skipped)
against the plain definition: the same score for every line and query (issue 21 target 3:
compact answers' excerpts and the budget's hunk choice depend on it). Identifiers are split
at case boundaries before lower-casing, as the keyword index splits them."""

from __future__ import annotations

import random

from gitquarry.history.search import hunks
from gitquarry.history.search.hunks import _WORD, line_score, query_terms
from gitquarry.retrieval.tokenize import expand_token


def reference_line_score(line: str, terms: set[str]) -> float:
    """The definition: every word of the line and its ``expand_token`` parts, lower-cased."""
    if not terms or not line:
        return 0.0
    words = {w.lower() for w in _WORD.findall(line)}
    for w in _WORD.findall(line):
        words.update(p.lower() for p in expand_token(w).split())
    hits = len(words & terms)
    return hits * (2.0 if line[0] in "+-" else 1.0)


WORDS = ["parseConfig", "HTTPServer", "parse", "config", "http", "server", "修复bug", "bug",
         "v2", "x86_64", "İstanbul", "ǅemal", "ß", "Straße", "ÉCOLE", "école", "a", "Z9",
         "getURL", "url", "get", "中文", "文", "snake_case_name", "case", "name", "Ω"]
QUERIES = ["parse config", "HTTP server", "修复", "bug fix", "x86", "istanbul", "strasse",
           "école", "get url", "snake case", "a", "中文 文", "Ω omega", "name"]


def test_random_lines_score_as_the_definition() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        parts = [rng.choice(WORDS) for _ in range(rng.randint(0, 8))]
        line = rng.choice(["+", "-", " ", "", "@@ "]) + rng.choice([" ", "(", ".", "::"]).join(
            parts)
        terms = query_terms(rng.choice(QUERIES))
        if rng.random() < 0.1:
            terms = set()
        assert line_score(line, terms) == reference_line_score(line, terms), (line, terms)


def test_the_word_table_is_bounded_and_scores_stay_the_same(monkeypatch) -> None:
    monkeypatch.setattr(hunks, "_WORD_SETS_MAX", 3)
    terms = query_terms("parse config server")
    for _ in range(3):
        for line in ("+parseConfig(HTTPServer)", "-config = server", " parse x y z w"):
            assert line_score(line, terms) == reference_line_score(line, terms)
    assert len(hunks._WORD_SETS) <= 3


def test_identifiers_match_by_their_parts() -> None:
    terms = query_terms("parse config")
    assert line_score("+parseConfig(x)", terms) == 4.0
    assert line_score(" parseConfig(x)", terms) == 2.0
    assert line_score("+ParseConfigFile()", query_terms("config file")) == 4.0
    assert line_score("+parsexconfig", terms) == 0.0
    assert line_score("+修复bug", query_terms("修")) == 2.0
