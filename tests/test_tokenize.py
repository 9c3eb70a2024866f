"""The shared tokenisation step (``retrieval.tokenize``) and the query expressions built on it
(``retrieval.fts``), checked on real in-memory FTS5 tables with the production tokenizer."""

from __future__ import annotations

import sqlite3

import pytest

from gitquarry.retrieval.fts import fts5_match_expression, word_expression
from gitquarry.retrieval.tokenize import (
    EXPANSION_SEPARATOR,
    FTS5_TOKENIZE,
    expand_token,
    expansions,
    index_text,
    query_units,
    register_functions,
)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("parseConfigFile", "parse Config File"),
        ("HttpAdapter", "Http Adapter"),
        ("XMLHttpRequest", "XML Http Request"),
        ("getHTTPResponse", "get HTTP Response"),
        ("IOError", "IO Error"),
        ("utf8Decode", "utf8 Decode"),
        ("修复数据库", "修 复 数 据 库"),
        ("修复Bug", "修 复 Bug"),
        ("データベース", "デ ー タ ベ ー ス"),
        ("데이터베이스를", "데 이 터 베 이 스 를"),
        ("config", "config"),
        ("CONSTANT", "CONSTANT"),
        ("Title", "Title"),
    ],
)
def test_expand_token(token, expected):
    assert expand_token(token) == expected


@pytest.mark.parametrize(
    ("text", "extra"),
    [
        ("Refactor parseConfigFile to stream input", ["parse Config File"]),
        ('["src/HttpAdapter.py", "lib/XMLHttpRequest.js"]', ["Http Adapter", "XML Http Request"]),
        ("release v2.0.1 and V3.10, not xv1.2", ["2.0.1", "3.10"]),
        ("修复数据库连接超时问题", ["修 复 数 据 库 连 接 超 时 问 题"]),
        ("plain words, snake_case and kebab-case", []),
        ("naïve résumé parseConfig", ["parse Config"]),
        ("x = fooBar(fooBar) + fooBar", ["foo Bar"]),
        ("", []),
    ],
)
def test_expansions(text, extra):
    assert expansions(text) == extra
    expected = text + EXPANSION_SEPARATOR + " ".join(extra) if extra else text
    assert index_text(text) == expected


def test_index_text_starts_with_the_text_unchanged():
    text = "getUser() 修复 v1.0\n+ addItemToCart(item)"
    assert index_text(text).startswith(text)
    assert index_text(None) == ""


def test_ascii_and_unicode_paths_agree():
    """ASCII text takes a byte-class fast path; with one non-ASCII character the same text
    takes the regex path. Both must find the same identifiers."""
    text = "def loadUserProfile(): return HTTPServer(getXMLData, utf8Decode) # ABCDef x2Y"
    assert expansions(text + " é")[: len(expansions(text))] == expansions(text)


@pytest.mark.parametrize(
    ("word", "units"),
    [
        ("parseConfigFile", ["parse Config File"]),
        ("HttpAdapter.py", ["Http Adapter", "py"]),
        ("v2.0.1", ["2.0.1"]),
        ("数据库", ["数 据 库"]),
        ("config", None),
        ("3.0.0", None),
        ("foo.bar", None),
        ("snake_case", None),
    ],
)
def test_query_units(word, units):
    assert query_units(word) == units


def test_word_expression_quotes_every_form():
    assert word_expression("config") == '"config"'
    assert word_expression("parseConfigFile") == '("parseConfigFile" OR "parse Config File")'
    assert word_expression("HttpAdapter.py") == '("HttpAdapter.py" OR ("Http Adapter" AND "py"))'
    assert word_expression('"getUser"') == '("""getUser""" OR "get User")'
    assert fts5_match_expression("v2.0.1 数据库", "OR") == (
        '("v2.0.1" OR "2.0.1") OR ("数据库" OR "数 据 库")'
    )


DOCS = {
    1: "修复数据库连接超时问题",
    2: "データベース接続のタイムアウトを修正",
    3: "데이터베이스 연결 시간 초과 수정",
    4: "Refactor parseConfigFile to stream input",
    5: "parse config file before start",
    6: "Rename src/HttpAdapter.py",
    7: "release 2.0.1",
    8: "release v3.0.0",
    9: "XMLHttpRequest polyfill for IOError handling",
    10: "bump version to V4.2",
    11: "中文文档：说明配置文件",
}


@pytest.fixture(scope="module")
def fts():
    conn = sqlite3.connect(":memory:")
    register_functions(conn)
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{FTS5_TOKENIZE}')")
    conn.executemany(
        "INSERT INTO t (rowid, body) VALUES (?, gq_index_text(?))", list(DOCS.items())
    )
    return conn


def hits(conn, query, operator="AND"):
    expression = fts5_match_expression(query, operator)
    return [
        r[0]
        for r in conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank, rowid", (expression,)
        )
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("数据库", [1]),
        ("数据", [1]),
        ("超时", [1]),
        ("修复数据库连接超时问题", [1]),
        ("库数", []),  # characters present, not in this order
        ("データベース", [2]),
        ("接続", [2]),
        ("タイムアウト", [2]),
        ("데이터베이스", [3]),
        ("데이터", [3]),
        ("연결", [3]),
        ("配置文件", [11]),
        ("说明", [11]),
        ("config", [4, 5]),
        ("Config", [4, 5]),
        ("parse", [4, 5]),
        ("adapter", [6]),
        ("http", [6, 9]),
        ("HttpAdapter", [6]),
        ("HttpAdapter.py", [6]),
        ("request", [9]),
        ("xml", [9]),
        ("error", [9]),
        ("v2.0.1", [7]),
        ("2.0.1", [7]),
        ("3.0.0", [8]),
        ("v3.0.0", [8]),
        ("4.2", [10]),
        ("v4.2", [10]),
        ("v2.0.2", []),
    ],
)
def test_queries_find_the_right_rows(fts, query, expected):
    assert sorted(hits(fts, query)) == sorted(expected)


def test_whole_identifier_ranks_its_exact_match_first(fts):
    assert hits(fts, "parseConfigFile") == [4, 5]
    assert hits(fts, "parse config file") == [5, 4]


def test_version_with_v_ranks_the_exact_form_first():
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{FTS5_TOKENIZE}')")
    conn.executemany(
        "INSERT INTO t (rowid, body) VALUES (?, ?)",
        [(1, index_text("tag 2.0.1 now")), (2, index_text("tag v2.0.1 now"))],
    )
    assert hits(conn, "v2.0.1") == [2, 1]


TRICKY_WORDS = [
    "raise", "parseConfigFile", "HttpAdapter.py", "数据库", "v2.0.1", "3.0.0", "NEAR(a", "OR",
    "AND", "NOT", '"quoted"', "col:", "*", "C++", "foo.bar", "getHTTPResponse", "修复Bug",
    "-x", "(", "^start", "don't", "ÉtéParser", "データ", "x_y", "a\x00b",
]


def test_every_combination_of_tricky_words_is_a_valid_expression(fts):
    """Any sequence of words, expanded or not, in any position, gives an expression FTS5
    accepts in both operators (an implicit AND next to a parenthesised group once did not)."""
    import itertools
    import random

    rng = random.Random(7)
    combos = [list(p) for p in itertools.permutations(TRICKY_WORDS[:6], 2)]
    combos += [rng.sample(TRICKY_WORDS, rng.randint(1, 6)) for _ in range(300)]
    for words in combos:
        for operator in ("AND", "OR"):
            if fts5_match_expression(" ".join(words), operator):  # "": nothing to run
                hits(fts, " ".join(words), operator)  # raises on a syntax error


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("parseConfigFile stream", [4]),
        ("stream parseConfigFile", [4]),
        ("release v2.0.1", [7]),
        ("数据库 超时", [1]),
        ("Rename HttpAdapter.py", [6]),
    ],
)
def test_expanded_words_combine_with_others(fts, query, expected):
    assert hits(fts, query) == expected
