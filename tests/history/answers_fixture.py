"""Fixtures for issue 12 (agent-grade answers): one real repository with branches, tags, a
merge, a rename and several authors (one mapped by .mailmap), indexed into a real index."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitquarry.history.answers.answers import HistoryAnswers
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.workspace import resolve_workspace

from .conftest import BASE_TIME, GitRepo, Indexer

ALICE = ("Alice Smith", "alice@old.example")
BOB = ("Bob Jones", "bob@example.com")


@dataclass
class Fixture:
    root: Path
    repo: GitRepo
    indexer: Indexer
    commits: dict[str, str]

    def answers(self) -> tuple[HistorySearcher, HistoryAnswers]:
        searcher = HistorySearcher(resolve_workspace(self.root, for_search=True))
        return searcher, HistoryAnswers(searcher)


def build(root: Path) -> Fixture:
    repo = GitRepo(root / "app")
    c: dict[str, str] = {}
    t = BASE_TIME
    c["init"] = repo.commit({"README.md": "# app\n", ".mailmap":
                             "Alice Smith <alice@new.example> <alice@old.example>\n"},
                            "initial commit", t, author=ALICE)
    c["retry"] = repo.commit({"src/net/client.py": "def fetch():\n    retries = 3\n"
                              "    return call(retries)\n"},
                             "Add retry loop to the HTTP client", t + 86400, author=ALICE)
    repo.git("tag", "v1.0")
    c["timeout"] = repo.commit({"src/net/client.py": "def fetch():\n    retries = 3\n"
                                "    timeout = 30\n    return call(retries, timeout)\n"},
                               "Set a 30 second timeout on fetch", t + 2 * 86400, author=BOB)
    repo.branch("feature")
    c["feature"] = repo.commit({"src/cache.py": "CACHE = {}\n" * 3},
                               "Cache responses in memory", t + 3 * 86400, author=BOB)
    repo.checkout("main")
    c["docs"] = repo.commit({"docs/usage.md": "Use fetch() to download.\n" * 5},
                            "Document fetch usage", t + 4 * 86400, author=ALICE)
    c["merge"] = repo.merge("feature", message="Merge branch feature", date=t + 5 * 86400)
    repo.git("tag", "-a", "v2.0", "-m", "release 2.0")
    c["rename"] = repo.commit({"src/net/client.py": None,
                               "src/net/http_client.py": "def fetch():\n    retries = 3\n"
                               "    timeout = 30\n    return call(retries, timeout)\n"},
                              "Rename client module", t + 6 * 86400, author=BOB)
    big = "".join(f"line {i} filler text\n" for i in range(400))
    c["big"] = repo.commit({"data/big.txt": big + "needle_token here\n"},
                           "Add a large data file", t + 7 * 86400, author=ALICE)
    for i in range(12):
        c[f"n{i}"] = repo.commit({f"notes/n{i}.md": f"retry note {i}\n" * (i + 1)},
                                 f"Note {i} about retry behaviour", t + (8 + i) * 86400,
                                 author=BOB if i % 2 else ALICE)
    repo.git("branch", "old", c["timeout"])
    indexer = Indexer(root)
    indexer.run()
    return Fixture(root, repo, indexer, c)
