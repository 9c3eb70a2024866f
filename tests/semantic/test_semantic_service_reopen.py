"""A long-lived searcher (the MCP server's) follows `rebuild-index` replacing the database."""

from __future__ import annotations

import shutil
from collections.abc import Callable

from gitquarry.embedding.fake import fake_provider_registered

from .conftest import GitRepo, Harness


def test_searcher_reopens_a_replaced_index(
    make_repo: Callable[[str], GitRepo], workspace_dir
) -> None:
    repo = make_repo("repo")
    repo.commit("Add parser for invoices", {"src/parser.py": "def parse():\n    pass\n"})
    with fake_provider_registered():
        harness = Harness(workspace_dir)
        harness.index()
        searcher = harness.searcher()
        try:
            first = searcher.search("invoices", mode="lexical")
            assert [r.title for r in first.results] == ["Add parser for invoices"]

            # rebuild-index: the file is deleted and a new one built, with a new commit in it.
            repo.commit("Teach the exporter about refunds", {"src/export.py": "REFUNDS = 1\n"})
            shutil.rmtree(workspace_dir / ".gitquarry")
            harness.index()

            second = searcher.search("refunds", mode="lexical")
            assert [r.title for r in second.results] == ["Teach the exporter about refunds"]
            assert second.total_commits_indexed == 2
        finally:
            searcher.close()
