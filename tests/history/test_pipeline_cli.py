"""The result pipeline's CLI surface for commit history: --no-collapse, --diverse,
--min-score, --explain (issue 14)."""

from __future__ import annotations

import json

from .conftest import GitRepo, Indexer


def _copies(repo: GitRepo) -> tuple[str, str]:
    repo.commit({"a.py": "x = 1\n"}, "initial")
    repo.branch("maint")
    repo.checkout("main")
    fix = repo.commit({"a.py": "x = 2\n"}, "Handle the empty config file")
    repo.checkout("maint")
    repo.git("cherry-pick", fix, env=repo.env())
    pick = repo.head()
    repo.checkout("main")
    repo.commit({"b.py": "y = 1\n"}, "Document the loader")
    return fix, pick


def test_history_cli_collapses_and_explains(make_repo, indexer: Indexer, cli) -> None:
    fix, pick = _copies(make_repo())
    indexer.run()
    root = str(indexer.root)
    code, out, err = cli("history", "empty config file", "--mode", "lexical", "--json",
                         "--project", root)
    assert code == 0, err
    data = json.loads(out)
    hits = [r for r in data["results"] if r["hash"] in (fix, pick)]
    assert len(hits) == 1 and hits[0]["copies"][0]["hash"] in (fix, pick)
    assert hits[0]["copies"][0]["refs"] in (["main"], ["maint"])

    code, out, err = cli("history", "empty config file", "--mode", "lexical", "--json",
                         "--no-collapse", "--project", root)
    assert code == 0, err
    shown = {r["hash"] for r in json.loads(out)["results"]}
    # --no-collapse lists every copy as its own result: the n-gram dedup (on by default) does
    # not hide a copy under another copy of its change (issue 20 §3; before, it folded the
    # cherry-pick, whose text is the original's)
    assert shown >= {fix, pick}

    code, out, err = cli("history", "empty config file", "--mode", "lexical", "--explain",
                         "--diverse", "--project", root)
    assert code == 0, err
    assert "copies collapsed:" in out and "also as:" in out
    assert "result pipeline: collapse > ngram_dedup > doc_limit > mmr > fold" in err


def test_min_score_is_checked_and_applied(make_repo, indexer: Indexer, cli) -> None:
    _copies(make_repo())
    indexer.run()
    root = str(indexer.root)
    code, out, err = cli("history", "config", "--min-score", "1.5", "--project", root)
    assert code == 2 and "--min-score" in err and "from 0 to 1" in err
    # a threshold between the first two results' scores (lexical scores measure the match)
    code, out, err = cli("history", "config loader", "--mode", "lexical", "--json",
                         "--project", root)
    scores = [r["score"] for r in json.loads(out)["results"]]
    assert len(scores) >= 2 and scores[0] > scores[1], scores
    cut = round((scores[0] + scores[1]) / 2, 6)
    code, out, err = cli("history", "config loader", "--mode", "lexical", "--json",
                         "--min-score", str(cut), "--explain", "--project", root)
    assert code == 0, err
    data = json.loads(out)
    assert all(r["score"] >= cut for r in data["results"])
    assert data["results"] and data["pipeline"]["removed"]  # the second one is below
    assert {r["step"] for r in data["pipeline"]["removed"]} == {"threshold"}
