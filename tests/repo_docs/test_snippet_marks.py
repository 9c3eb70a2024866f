"""Snippet marks are whole tokens as the index matches them, never letters inside words
(fresh-user finding: ``<b>Add</b><b>i</b>ng``, ``bu<b>i</b>lt``, ``PyP<b>I</b>``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Selector
from gitquarry.retrieval.highlight import mark, match_spans

from .conftest import Repo

SHELL_DOC = (
    "# Shell completion\n\n"
    "## Adding Support for shell completion\n\n"
    "Completion is built in. Install the package from PyPI, then do not forget to add the\n"
    "script: `parseConfigFile` reads worker_connections for v2.0.1 (修复数据库).\n"
)


def _marked(snippet: str) -> list[str]:
    return re.findall(r"<b>(.*?)</b>", snippet)


def test_repo_docs_snippet_marks_whole_words(service: RepoDocsService,
                                             make_repo: Callable[..., Repo]) -> None:
    repo = make_repo({"docs/shell.md": SHELL_DOC})
    service.register("acme/shell", repo.path)
    response = service.search(Selector("acme/shell"), "how do I add shell completion",
                              mode="fulltext")
    snippet = response["hits"][0]["snippet"]
    words = _marked(snippet)
    assert words, snippet
    # every mark is a whole word of the text, one of the query's words (case folded)
    assert {w.casefold() for w in words} <= {"do", "i", "add", "shell", "completion"}, snippet
    for bad in ("bu<b>", "PyP<b>", "</b><b>", "<b>Add</b>"):
        assert bad not in snippet, snippet
    for word in words:
        assert re.search(r"(?<![^\W_])" + re.escape(word) + r"(?![^\W_])",
                         snippet.replace("<b>", "").replace("</b>", "")), word


def test_marks_follow_the_index_expansions() -> None:
    text = "parseConfigFile reads worker_connections for v2.0.1 (修复数据库) Café built-in"
    query = "config worker_connections 2.0.1 数据库 cafe in I"
    marked = mark(text, match_spans(text, query), "<b>", "</b>")
    assert _marked(marked) == ["parseConfigFile", "worker_connections", "v2.0.1", "数据库",
                               "Café", "in"], marked
    # stems as SQLite's porter tokenizer gives them: "connection" matches "connections"
    assert _marked(mark("two connections", match_spans("two connections", "connection"),
                        "<b>", "</b>")) == ["connections"]
    assert match_spans("nothing here", "!!") == []
