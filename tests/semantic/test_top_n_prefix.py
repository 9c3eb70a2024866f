"""The top of a ranking does not depend on how many results were asked for (issue 20 §3).

Real git histories with merges (``--no-ff``), branches and cherry-picks (``-x``), indexed into a
real ``index.db`` with the fake embedder (through the real registry) for semantic and hybrid.
Property: for every mode, filter and page, ``results(top_n=k) == results(top_n=N)[:k]`` and a
cursor's later page continues exactly where ``top_n=N`` would have gone on; a merge is only
ever folded under a commit it brought in (``git rev-list M^1..M``) or one sharing its patch-id.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import BASE_TIME, GitRepo, Harness

# issue 24: seconds per test (daemons, Chromium, an index per case); CI runs the slow set
pytestmark = pytest.mark.slow

VOCAB = [
    "fish", "completion", "shell", "script", "bash", "zsh", "parser", "option", "flag",
    "command", "group", "context", "prompt", "echo", "style", "colour", "progress", "bar",
    "pager", "editor", "path", "file", "stream", "timeout", "retry", "cache", "wombat",
    "config", "loader", "default", "value", "help", "text",
]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def build_history(repo: GitRepo, seed: int) -> None:
    """~60 commits: work on main, topic branches merged with ``--no-ff`` (some touching the
    same lines as older main commits), a maintenance branch with ``cherry-pick -x`` copies
    and a merge of main into it."""
    rng = random.Random(seed)
    repo.commit("initial import", {"src/a.py": "a = 0\n", "src/b.py": "b = 0\n"})
    repo.git("branch", "maint")
    for n in range(40):
        kind = rng.random()
        if kind < 0.55 or n < 3:
            path = rng.choice(["src/a.py", "src/b.py", f"docs/{rng.choice(VOCAB)}.md"])
            body = "\n".join(_words(rng, 4) for _ in range(rng.randint(1, 4))) + "\n"
            repo.commit(_words(rng, rng.randint(3, 7)), {path: body})
        elif kind < 0.8:
            name = f"topic-{n}"
            repo.git("checkout", "-q", "-b", name)
            for _ in range(rng.randint(1, 3)):
                path = rng.choice(["src/a.py", "src/b.py", "src/c.py"])
                body = "\n".join(_words(rng, 4) for _ in range(rng.randint(1, 3))) + "\n"
                repo.commit(_words(rng, rng.randint(3, 6)), {path: body})
            repo.git("checkout", "-q", "main")
            if rng.random() < 0.5:
                repo.commit(_words(rng, 4), {f"docs/main-{n}.md": _words(rng, 5) + "\n"})
            repo.clock += 60
            repo.git("merge", "-q", "--no-ff", "-m", f"Merge {name}: {_words(rng, 4)}", name,
                     when=repo.clock)
        else:
            pick = repo.git("rev-parse", "HEAD")
            repo.git("checkout", "-q", "maint")
            repo.commit(_words(rng, 4), {f"maint/{n}.txt": _words(rng, 4) + "\n"})
            repo.clock += 60
            proc = subprocess.run(
                ["git", "cherry-pick", "-x", "--allow-empty", "--keep-redundant-commits",
                 pick], cwd=repo.path, capture_output=True, env=repo.env(repo.clock),
                check=False,
            )
            if proc.returncode != 0:  # a conflict: give this copy up
                subprocess.run(["git", "cherry-pick", "--abort"], cwd=repo.path,
                               capture_output=True, check=False)
                repo.git("reset", "-q", "--hard")
            repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "maint")
    repo.clock += 60
    repo.git("merge", "-q", "--no-ff", "-X", "theirs", "-m", "Merge main into maint", "main",
             when=repo.clock)
    repo.git("checkout", "-q", "main")


def _key(response: Any) -> list[tuple[str, float, tuple[str, ...]]]:
    """Each result's hash, score and copies sharing its patch-id (from the whole index). A
    merge folded under a result ranked above it is listed there once the pipeline has read
    it, so a longer list may name more of those (docs/architecture.md, "Merges")."""
    return [(r.hash, r.score, tuple(c["hash"] for c in r.copies if c["via"] == "patch-id"))
            for r in response.results]


def _brought_in(repo: GitRepo, merge: str) -> set[str]:
    return set(repo.git("rev-list", f"{merge}^1..{merge}").split()) - {merge}


def _check_folds(repo: GitRepo, response: Any, merges: set[str]) -> None:
    for result in response.results:
        for copy in result.copies:
            if copy["via"] == "merge" and copy["hash"] in merges:
                patch = {result.hash, copy["hash"]}
                same_patch = len({_patch_id(repo, h) for h in patch} - {""}) == 1
                assert result.hash in _brought_in(repo, copy["hash"]) or same_patch, (
                    result.hash, copy["hash"])


_PATCH_IDS: dict[str, str] = {}


def _patch_id(repo: GitRepo, commit: str) -> str:
    if commit not in _PATCH_IDS:
        diff = subprocess.run(["git", "diff", f"{commit}^1", commit], cwd=repo.path,
                              capture_output=True, check=True).stdout
        out = subprocess.run(["git", "patch-id", "--stable"], cwd=repo.path, input=diff,
                             capture_output=True, check=True).stdout.decode()
        _PATCH_IDS[commit] = out.split()[0] if out.strip() else ""
    return _PATCH_IDS[commit]


@pytest.fixture
def history(harness: Harness, make_repo: Callable[[str], GitRepo]) -> tuple[Harness, GitRepo]:
    repo = make_repo("repo")
    build_history(repo, seed=20)
    harness.index()
    return harness, repo


FILTERS: list[dict[str, Any]] = [
    {},
    {"files_glob": "src/**"},
    {"after": BASE_TIME + 10 * 3600},
    {"merges": "exclude"},
    {"merges": "only"},
    {"collapse": False},
    {"diverse": True},
]


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_first_k_results_do_not_depend_on_top_n(history: tuple[Harness, GitRepo],
                                                mode: str) -> None:
    harness, repo = history
    merges = set(repo.git("rev-list", "--merges", "--all").split())
    assert len(merges) >= 5  # the property is about histories with merges
    rng = random.Random(2020)
    queries = [_words(rng, rng.randint(1, 3)) for _ in range(4)] + ["fish completion"]
    searcher = harness.searcher()
    try:
        for query in queries:
            for extra in FILTERS:
                big = searcher.search(query, top_n=20, mode=mode, **extra)
                _check_folds(repo, big, merges)
                for k in (1, 2, 5):
                    small = searcher.search(query, top_n=k, mode=mode, **extra)
                    assert _key(small) == _key(big)[:k], (query, extra, k)
                # a later page continues the ranking exactly where top_n=20 goes on
                paged = searcher.search(query, top_n=5, mode=mode, ranking_depth=20, **extra)
                ids = dict(harness.rows("SELECT id, hash FROM git_commits"))
                pages = [r.hash for r in paged.results] + [ids[h.commit_id] for h in paged.more]
                assert pages == [r.hash for r in big.results], (query, extra)
    finally:
        searcher.close()


def test_merge_is_folded_only_under_a_commit_it_brought_in(
    harness: Harness, make_repo: Callable[[str], GitRepo]
) -> None:
    """The click recipe (6e1f6d3052 folded under bcd3faaaaf, an ancestor of its first
    parent): an older main commit whose added lines the merge's branch rewrites shares most of
    its changed lines with the merge, but the merge did not bring it in."""
    repo = make_repo("repo")
    repo.commit("initial", {"src/shell_completion.py": "x = 1\n"})
    script = ["complete -c prog -f", "set -l response", "for completion in $response",
              "echo $completion", "end"]
    style = repo.commit("completions: style improvements for fish completion function",
                        {"src/shell_completion.py": "\n".join(script) + "\n"})
    repo.git("checkout", "-q", "-b", "fix-fish")
    semis = repo.commit("add back semicolons in fish script", {
        "src/shell_completion.py": "\n".join(f"{line};" for line in script) + "\n"})
    docs = repo.commit("document shell completion", {"docs/shell.rst": "Shells.\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("unrelated release notes", {"CHANGES.rst": "Version 8.1\n"})
    repo.clock += 60
    repo.git("merge", "-q", "--no-ff", "-m",
             "completion(fish): add back ; as line endings in fish script fish completion",
             "fix-fish", when=repo.clock)
    merge = repo.git("rev-parse", "HEAD")
    harness.index(embed=False)
    assert _brought_in(repo, merge) == {semis, docs}
    tops = [harness.query("fish completion", top_n=n, mode="lexical") for n in (1, 2, 3, 5)]
    for n, response in zip((1, 2, 3, 5), tops, strict=True):
        assert _key(response) == _key(tops[-1])[:n]
        for result in response.results:
            listed = {c["hash"] for c in result.copies}
            if result.hash == style:
                assert merge not in listed  # not brought in by the merge
    shown = {r.hash: r for r in tops[-1].results}
    assert merge not in shown
    assert merge in {c["hash"] for c in shown[semis].copies}
    assert style in shown


def test_second_merge_of_a_branch_is_not_folded_under_the_first(
    harness: Harness, make_repo: Callable[[str], GitRepo]
) -> None:
    """"Merge branch 'x' into maint" repeats "Merge branch 'x'" but did not bring it in: it
    stays a result unless a commit it brought in hosts it."""
    repo = make_repo("repo")
    repo.commit("initial", {"a.py": "a = 1\n"})
    repo.git("branch", "maint")
    repo.git("checkout", "-q", "-b", "x")
    repo.commit("tweak", {"pool.py": "conn.close()\nsize = 10\n"})
    repo.commit("more", {"pool.py": "conn.close()\nsize = 12\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main work", {"main.txt": "m\n"})
    repo.clock += 60
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'x': wombat release", "x",
             when=repo.clock)
    first = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "x")
    repo.commit("extra", {"other.py": "y = 2\n"})
    repo.git("checkout", "-q", "maint")
    repo.commit("maint work", {"maint.txt": "m\n"})
    repo.clock += 60
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'x' into maint: wombat release", "x",
             when=repo.clock)
    second = repo.git("rev-parse", "HEAD")
    harness.index(embed=False)
    response = harness.query("wombat release", top_n=5, mode="lexical")
    shown = {r.hash: r for r in response.results}
    assert first in shown and second in shown, list(shown)
    assert not any(c["hash"] in (first, second) for r in response.results for c in r.copies)


def test_no_collapse_lists_every_copy(harness: Harness, make_repo: Callable[[str], GitRepo],
                                      cli: Callable[..., tuple[int, str, str]]) -> None:
    """A commit cherry-picked (-x) onto three branches that each have a commit of their own:
    ``--no-collapse`` shows the four copies (the n-gram dedup does not hide them)."""
    import json

    repo = make_repo("repo")
    repo.commit("initial", {"net.py": "TIMEOUT = 1\n"})
    branches = ["release-1", "release-2", "release-3"]
    for name in branches:
        repo.git("branch", name)
    fix = repo.commit("Raise the wombat timeout for slow links",
                      {"net.py": "TIMEOUT = 30\n"})
    copies = {fix}
    for n, name in enumerate(branches):
        repo.git("checkout", "-q", name)
        repo.commit(f"prepare {name}", {f"{name}.txt": f"release {n}\n"})
        repo.clock += 60
        repo.git("cherry-pick", "-x", fix, when=repo.clock)
        copies.add(repo.git("rev-parse", "HEAD"))
    repo.git("checkout", "-q", "main")
    harness.index(embed=False)
    root = str(harness.root)
    code, out, err = cli("history", "wombat timeout", "--no-collapse", "--mode", "lexical",
                         "-n", "10", "--json", "--project", root)
    assert code == 0, err
    shown = [r["hash"] for r in json.loads(out)["results"]]
    assert copies <= set(shown), shown
    code, out, err = cli("history", "wombat timeout", "--mode", "lexical", "-n", "10",
                         "--json", "--project", root)
    assert code == 0, err
    collapsed = json.loads(out)["results"]
    assert len(copies & {r["hash"] for r in collapsed}) == 1
    host = next(r for r in collapsed if r["hash"] in copies)
    assert {c["hash"] for c in host["copies"]} | {host["hash"]} == copies


@pytest.mark.slow
def test_first_k_results_do_not_depend_on_top_n_with_the_real_model(
    workspace_dir: Any, make_repo: Callable[[str], GitRepo]
) -> None:
    """The same property with the bundled all-MiniLM-L6-v2 in hybrid and semantic mode (the
    fake embedder's word hashes cannot show what a real model's ties and near-ties do)."""
    repo = make_repo("repo")
    build_history(repo, seed=7)
    harness = Harness(workspace_dir, provider="minilm-onnx")
    harness.index()
    searcher = harness.searcher()
    try:
        for query in ("fish completion", "shell prompt colour", "retry the stream on timeout"):
            for mode in ("hybrid", "semantic"):
                big = searcher.search(query, top_n=12, mode=mode)
                assert big.effective_mode == mode and big.embedded_fraction == 1.0
                for k in (1, 3, 7):
                    small = searcher.search(query, top_n=k, mode=mode)
                    assert _key(small) == _key(big)[:k], (query, mode, k)
    finally:
        searcher.close()
