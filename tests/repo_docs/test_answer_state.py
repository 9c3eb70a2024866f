"""Issue 12 on the repository-docs tools: ``index_state`` and the ``max_tokens`` budget of
``repository_docs_search``, through the SDK's in-process MCP client on a real repository."""

from __future__ import annotations

import json
import subprocess

from gitquarry.config import Config
from gitquarry.repo_docs.registry import Registry
from gitquarry.token_budget import json_tokens

from .conftest import Repo
from .test_mcp import session


def _head(repo: Repo) -> str:
    return subprocess.run(["git", "-C", str(repo.path), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_search_says_how_fresh_and_fits_the_budget(fake_config: Config,
                                                   docs_repo: Repo) -> None:
    Registry().register("acme/widget", docs_repo.path)
    docs_repo.commit({f"docs/page{i}.md": f"# Page {i}\n\n" + "deploy the widget with "
                      f"gunicorn and nginx, step {i}.\n" * 30 for i in range(12)})
    args = {"query": "deploy widget gunicorn", "mode": "fulltext", "limit": 50}
    results = session(fake_config, [
        ("repository_docs_search", {**args, "max_tokens": 1_000_000}),
        ("repository_docs_search", {**args, "max_tokens": 1200}),
        ("repository_docs_search", {**args, "max_tokens": 499}),
    ])
    whole, cut = (json.loads(r.content[0].text) for r in results[1:3])
    state = whole["index_state"]
    assert state["head_revision"] == state["answered_revision"] == _head(docs_repo)
    assert state["answered_is_head"] is True
    assert state["revision_set_state"] == "none" and state["head_set_state"] == "none"
    assert state["embedded_fraction"] == 0.0
    assert whole["truncated"] == {"results_dropped": 0} and len(whole["hits"]) > 5
    assert json_tokens(cut) <= 1200
    dropped = cut["truncated"]["results_dropped"]
    assert dropped > 0 and len(cut["hits"]) + dropped == len(whole["hits"])
    assert [h["chunk_id"] for h in cut["hits"]] == \
        [h["chunk_id"] for h in whole["hits"][:len(cut["hits"])]]
    assert any(d["code"] == "token_budget" for d in cut["warning_details"])
    assert results[3].is_error  # below the 500-token floor


def test_index_state_follows_the_revision_set_and_head(fake_config: Config,
                                                       docs_repo: Repo) -> None:
    """A hybrid answer from a ready set says so; after HEAD moves, HEAD has no set yet, and
    an answer pinned to the old revision says it is not HEAD."""
    from gitquarry.repo_docs.api import RepoDocsService
    from gitquarry.repo_docs.registry import Selector

    Registry().register("acme/widget", docs_repo.path)
    old = _head(docs_repo)
    service = RepoDocsService(fake_config, Registry())
    try:
        service.index(Selector("acme/widget"))
    finally:
        service.close()
    first = session(fake_config, [("repository_docs_search", {"query": "gunicorn"})])[1]
    state = json.loads(first.content[0].text)["index_state"]
    assert state["answered_revision"] == state["head_revision"] == old
    assert state["revision_set_state"] == "ready" and state["head_set_state"] == "ready"
    assert state["embedded_fraction"] == 1.0 and state["revision_set_completed_at"]
    docs_repo.commit({"docs/new.md": "# New\n\nnew page about gunicorn\n"})
    now, pinned = (json.loads(r.content[0].text)["index_state"] for r in session(
        fake_config, [("repository_docs_search", {"query": "gunicorn"}),
                      ("repository_docs_search", {"query": "gunicorn", "revision": old})])[1:])
    assert now["answered_revision"] == now["head_revision"] == _head(docs_repo) != old
    assert now["head_set_state"] == "none" and now["revision_set_state"] == "none"
    assert pinned["answered_revision"] == old and pinned["answered_is_head"] is False
    assert pinned["revision_set_state"] == "ready" and pinned["head_set_state"] == "none"
