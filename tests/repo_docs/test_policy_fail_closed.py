"""Docs policy patterns and keys fail closed (issue 20 §5): an invalid pattern is
``repository_docs_policy_invalid`` naming file, line and pattern, with the same syntax check
``--files-glob`` makes; seed 002's ``cache_mode: repo-local`` is accepted, any other value
refused."""

from __future__ import annotations

import pytest

from gitquarry.errors import InvalidGlobError, RepoDocsPolicyInvalidError
from gitquarry.repo_docs.policy import parse_policy_file
from gitquarry.retrieval.filters import compile_glob

FILE = ".gitcode/gitcode-mcp.yaml"


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_policy_file(text.encode(), FILE, source="committed_config")


@pytest.mark.parametrize("pattern", ["docs/[a", "[", "docs/**/[!x"])
def test_unclosed_bracket_is_refused_like_files_glob(pattern: str) -> None:
    text = ("repository_docs:\n  schema: 1\n  include:\n    - docs/**\n"
            f"    - '{pattern}'\n")
    with pytest.raises(RepoDocsPolicyInvalidError) as info:
        parse(text)
    err = info.value
    assert err.code == "repository_docs_policy_invalid"
    assert err.policy_file == FILE and err.line == 5 and err.pattern == pattern
    assert err.key == "include"
    assert f"{FILE}:5" in str(err) and pattern in str(err)
    with pytest.raises(InvalidGlobError):
        compile_glob(pattern)


def test_closed_brackets_and_literal_braces_still_work() -> None:
    policy = parse("repository_docs:\n  schema: 1\n  preset: none\n"
                   "  include: ['docs/[ab]*.md', 'x/{a']\n")
    assert policy is not None
    # ``selects`` says why a path is out of the corpus: None means selected
    assert policy.selects("docs/a1.md") is None
    assert policy.selects("docs/c1.md") == "not_selected"
    assert policy.selects("x/{a") is None  # braces are literal in policy patterns


@pytest.mark.parametrize("text", [
    "cache_mode: repo-local\n",
    "cache_mode: repo-local\nrepository_docs:\n  schema: 1\n",
    "repository_docs:\n  schema: 1\n  cache_mode: repo-local\n",
])
def test_seed_cache_mode_is_accepted(text: str) -> None:
    parse(text)  # no error; the cache is always repository-local


@pytest.mark.parametrize(("text", "line"), [
    ("cache_mode: shared\n", 1),
    ("cache_mode: 1\n", 1),
    ("repository_docs:\n  schema: 1\n  cache_mode: global\n", 3),
    ("repository_docs:\n  schema: 1\n  cache_mode:\n", 3),
])
def test_other_cache_modes_are_refused(text: str, line: int) -> None:
    with pytest.raises(RepoDocsPolicyInvalidError) as info:
        parse(text)
    assert info.value.key == "cache_mode" and info.value.line == line
    assert "cache_mode must be repo-local" in str(info.value)
