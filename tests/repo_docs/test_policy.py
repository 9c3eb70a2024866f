"""The tracked docs policy: sources, preset, include/exclude, and every error failing closed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gitquarry.errors import RepoDocsPolicyInvalidError
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.policy import DocsPolicy, normalise_pattern, parse_policy_file
from gitquarry.repo_docs.registry import Selector

from .conftest import Repo


def policy(text: str) -> DocsPolicy | None:
    return parse_policy_file(text.encode(), ".gitquarry.yaml", source="committed_config")


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ("repository_docs:\n  schema: 1\n  colour: red\n", "colour", "unknown key"),
        ("repository_docs:\n  schema: 1\n  schema: 1\n", "schema", "duplicate key"),
        ("repository_docs:\n  schema: 2\n", "schema", "schema must be 1"),
        ("repository_docs:\n  schema: '1'\n", "schema", "schema must be 1"),
        ("repository_docs:\n  enabled: true\n", "schema", "schema is required"),
        ("repository_docs:\n  schema: 1\n  enabled: no\n", "enabled", "true or false"),
        ("repository_docs:\n  schema: 1\n  enabled: on\n", "enabled", "true or false"),
        ("repository_docs:\n  schema: 1\n  preset: fancy\n", "preset", "preset must be"),
        ("repository_docs:\n  schema: 1\n  preset: none\n", "include", "selects nothing"),
        ("repository_docs:\n  schema: 1\n  include: docs/**\n", "include", "must be a list"),
        ("repository_docs:\n  schema: 1\n  include: [{a: b}]\n", "include", "non-empty"),
        ("repository_docs:\n  schema: 1\n  include: ['']\n", "include", "non-empty"),
        ("repository_docs:\n  schema: 1\n  include: [/etc/**]\n", "include", "absolute"),
        ("repository_docs:\n  schema: 1\n  include: ['C:\\\\docs']\n", "include", "absolute"),
        ("repository_docs:\n  schema: 1\n  exclude: [docs/../x]\n", "exclude", "'..'"),
        ("repository_docs:\n  schema: 1\n  exclude: [docs//x]\n", "exclude", "empty path"),
        ("repository_docs: !!map\n  schema: 1\n", None, "tags are not allowed"),
        ("repository_docs:\n  schema: !!int 1\n", None, "tags are not allowed"),
        ("repository_docs: [1, 2]\n", "repository_docs", "must be a mapping"),
        ("repository_docs:\n  schema: 1\n  include: [docs/[x]\n", None, "not valid YAML"),
    ],
)
def test_policy_errors_fail_closed(text: str, key: str | None, fragment: str) -> None:
    with pytest.raises(RepoDocsPolicyInvalidError) as info:
        policy(text)
    err = info.value
    assert fragment in str(err) and ".gitquarry.yaml" in str(err)
    assert err.code == "repository_docs_policy_invalid"
    if key is not None:
        assert err.key == key


def test_yaml_11_traps_keep_their_meaning() -> None:
    p = policy("repository_docs:\n  schema: 1\n  include: [no, on, 1e3, 0010]\n")
    assert p is not None and p.include == ("0010", "1e3", "no", "on")
    assert p.selects("no") is None and p.selects("1e3") is None


def test_patterns_are_normalised_deduplicated_sorted() -> None:
    p = policy("repository_docs:\n  schema: 1\n  include: ['./runbooks\\*.md', "
               "runbooks/*.md, a/**]\n")
    assert p is not None and p.include == ("a/**", "runbooks/*.md")
    assert normalise_pattern("./x/./y", policy_file="f", key="include") == "x/./y"


def test_hash_is_stable_and_changes_with_the_policy() -> None:
    a = policy("repository_docs:\n  schema: 1\n  include: [b/**, a/**]\n")
    b = policy("repository_docs:\n  include: [a/**, b/**]\n  schema: 1\n")
    c = policy("repository_docs:\n  schema: 1\n  include: [a/**]\n")
    assert a and b and c
    assert a.policy_hash == b.policy_hash != c.policy_hash
    assert DocsPolicy().policy_hash == DocsPolicy().policy_hash != a.policy_hash


def test_no_section_means_none_and_other_sections_are_ignored() -> None:
    assert policy("graph:\n  anything: goes\n") is None
    assert policy("") is None


def test_preset_semantics() -> None:
    p = DocsPolicy()
    for path in ("README.md", "README", "AGENTS.md", "docs/a.md", "docs/x/y/z.rst"):
        assert p.selects(path) is None, path
    for path in ("sub/README.md", "readme.md", "Docs/a.md", "src/docs/a.md", "AGENTS.txt"):
        assert p.selects(path) == "not_selected", path
    q = policy("repository_docs:\n  schema: 1\n  include: [runbooks/**/*.md]\n"
               "  exclude: [docs/generated/**]\n")
    assert q is not None
    assert q.selects("runbooks/a.md") is None and q.selects("runbooks/x/b.md") is None
    assert q.selects("runbooks/a.txt") == "not_selected"
    assert q.selects("docs/generated/api.md") == "policy_excluded"
    assert q.selects("docs/guide.md") is None
    none = policy("repository_docs:\n  schema: 1\n  preset: none\n  include: [manual/*]\n")
    assert none is not None and none.selects("docs/a.md") == "not_selected"
    assert none.selects("manual/a.md") is None and none.selects("manual/x/a.md") is not None
    off = policy("repository_docs:\n  schema: 1\n  enabled: false\n")
    assert off is not None and off.selects("docs/a.md") == "disabled"


def test_policy_is_read_at_the_commit_and_from_legacy_file(
    service: RepoDocsService, make_repo: Callable[..., Repo]
) -> None:
    repo = make_repo({"docs/a.md": "# A\n", "manual/m.md": "# M\n",
                      ".gitcode/gitcode-mcp.yaml":
                      "repository_docs:\n  schema: 1\n  include: [manual/**]\n"})
    service.register("o/r", repo.path)
    sel = Selector("o/r")
    data = service.policy(sel)
    assert data["policy_source"] == "committed_config"
    assert data["policy_file"] == ".gitcode/gitcode-mcp.yaml"
    plan = service.plan(sel)
    assert sorted(f["path"] for f in plan["files"]) == ["docs/a.md", "manual/m.md"]
    repo.commit({".gitquarry.yaml": "repository_docs:\n  schema: 1\n  exclude: [docs/**]\n"})
    assert service.policy(sel)["policy_file"] == ".gitquarry.yaml"
    assert [f["path"] for f in service.plan(sel)["files"]] == []
    # the worktree never counts unless asked: an uncommitted edit changes nothing
    (repo.path / ".gitquarry.yaml").write_text("repository_docs:\n  schema: 1\n")
    assert service.policy(sel)["policy_source"] == "committed_config"
    wt = service.policy(sel, include_worktree=True)
    assert wt["policy_source"] == "worktree_config" and wt["exclude"] == []
    # an invalid committed policy fails closed for every command
    repo.commit({".gitquarry.yaml": "repository_docs:\n  schema: 1\n  bogus: 1\n"})
    for call in (service.policy, service.plan):
        with pytest.raises(RepoDocsPolicyInvalidError):
            call(sel)
    with pytest.raises(RepoDocsPolicyInvalidError):
        service.search(sel, "a", mode="fulltext")
    # an older revision keeps its own policy
    assert service.policy(sel, revision="HEAD~2")["policy_file"] == ".gitcode/gitcode-mcp.yaml"


def test_symlinked_policy_file_is_refused(service: RepoDocsService,
                                          make_repo: Callable[..., Repo]) -> None:
    repo = make_repo({"real.yaml": "repository_docs:\n  schema: 1\n"})
    (repo.path / ".gitquarry.yaml").symlink_to("real.yaml")
    repo.commit({})
    service.register("o/r", repo.path)
    with pytest.raises(RepoDocsPolicyInvalidError, match="not a regular file"):
        service.policy(Selector("o/r"))


def test_non_document_extensions_need_an_include_that_names_them() -> None:
    p = policy("repository_docs:\n  schema: 1\n  include: [docs/**, arch/**/*.yaml]\n")
    assert p is not None
    assert p.explicitly_included("arch/x/a.yaml")
    assert not p.explicitly_included("docs/logo.svg")  # docs/** alone does not name .svg
    assert not p.explicitly_included("arch/x/a.yml")
