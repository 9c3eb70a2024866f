"""Issue 24 §5, without a browser: the Status page's numbers carry thousands separators as
the CLI prints them, and graph snippets are shown without Markdown's syntax (the Chromium
tests in test_web_pages.py check the pages themselves)."""

from __future__ import annotations

from typing import Any

from gitquarry.web.app import _env
from gitquarry.web.render import marked, num, plain_markdown


def test_num_is_the_clis_thousands_format() -> None:
    assert num(3335) == "3,335" == f"{3335:,}"
    assert num(1234567) == "1,234,567" and num(0) == "0" and num(None) == ""
    assert num(True) == "True" and num("x") == "x"


def test_plain_markdown_drops_the_syntax_and_keeps_words_and_marks() -> None:
    raw = "# Search **<b>Source</b>:** docs/search.md --- ## Ranking [BM25](https://x) `k1`"
    text = plain_markdown(raw)
    assert text == "Search <b>Source</b>: docs/search.md Ranking BM25 k1", text
    assert [part for is_match, part in marked(text) if is_match] == ["Source"]
    assert plain_markdown("- item one\n- item two") == "item one item two"
    assert plain_markdown("C# and a-b --x") == "C# and a-b --x"  # not syntax: kept
    assert plain_markdown(None) == ""


def _status(total: int) -> dict[str, Any]:
    return {
        "daemon": {"pid": 1, "version": "0", "uptime_s": 60, "active_job": None,
                   "jobs": {"succeeded": 12345}, "debounce_s": 2, "reconcile_s": 60},
        "workspaces": [{"name": "ws", "ref": "ws-1", "total_commits": total,
                        "repositories": [{}], "index_bytes": 1, "last_indexed_at": None,
                        "daemon": None, "graph": {"nodes": 1500, "edges": 2, "docs": 3},
                        "embedding_namespaces": [{"namespace": "n", "embedded": 3330,
                                                  "fraction": 0.99}]}],
        "docs": [],
    }


def test_status_page_prints_numbers_as_the_cli_does() -> None:
    html = _env().get_template("status.html").render(status=_status(3335), csrf="x",
                                                     nav="status", ws_query="")
    assert "3,335 in 1 repository" in html, html
    assert "3,330" in html and "1,500 nodes" in html and "succeeded 12,345" in html
    assert "3335" not in html
