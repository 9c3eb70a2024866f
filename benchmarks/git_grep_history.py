"""The ``git log --grep`` baseline for history relevance, scored by ``eval_history.py``'s scorer.

Usage::

    python benchmarks/git_grep_history.py --repo PATH --queries FILE.jsonl [--k 10] [--verbose]

The recipe of ``shared/PEERS.md`` (what a user without a search tool types): the question's
content words (lower-cased words of letters, digits, ``_``, ``.`` and ``-``, minus the
stop words of ``relevance/build_fixture.py``) each as ``--grep`` with ``-i --all-match
--fixed-strings`` over ``--branches --remotes --tags``; when that AND finds nothing, the same
words OR-ed (without ``--all-match``). ``after`` / ``before`` go to git as ``--since`` /
``--until`` (UTC dates), ``files_glob`` as the pathspec ``:(glob)G``. Git's order (newest
first); the first ``k`` hashes are scored with :func:`eval_history.score_results` (a commit
and the merge or cherry-pick recorded as ``a=b`` count as one answer). Messages only: git's
``--grep`` never reads diffs.

Prints one JSON object: metrics by kind (the shape of ``eval_history``'s ``metrics``, under the
mode name ``git-grep``), per-query ranks, whether the OR fallback was used, and CPU per query
(user+sys of the git child).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "relevance"))

from build_fixture import STOPWORDS  # noqa: E402

from eval_history import Query, load_queries, score_results, summarise  # noqa: E402

WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
MODE = "git-grep"


def content_words(text: str) -> list[str]:
    """The question's words a user would grep for: lower-cased, stop words dropped, each once,
    in order; a trailing ``.`` or ``-`` is stripped."""
    out: list[str] = []
    for raw in WORD.findall(text):
        word = raw.lower().rstrip(".-")
        if word and word not in STOPWORDS and word not in out:
            out.append(word)
    return out


def _git_date(seconds: int) -> str:
    """A Unix time as a date git parses exactly (``@T`` is misread for small ``T``)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S +0000")


def git_grep(repo: Path, q: Query, k: int) -> tuple[list[str], bool, float]:
    """(first ``k`` hashes git lists, whether the OR fallback ran, CPU seconds of git)."""
    words = content_words(q.query)
    base = ["git", "-C", str(repo), "log", "--branches", "--remotes", "--tags", "-i",
            "--fixed-strings", "--format=%H", *[f"--grep={w}" for w in words]]
    if q.after is not None:
        base.append(f"--since={_git_date(q.after)}")
    if q.before is not None:
        base.append(f"--until={_git_date(q.before)}")
    tail = ["--", f":(glob){q.files_glob}"] if q.files_glob else []
    cpu = 0.0
    fallback = False
    hashes: list[str] = []
    if words:
        for argv in ([*base[:8], "--all-match", *base[8:], *tail], [*base, *tail]):
            before = os.times()
            proc = subprocess.run(argv, capture_output=True, text=True, check=True)
            after = os.times()
            cpu += (after.children_user - before.children_user
                    + after.children_system - before.children_system)
            hashes = proc.stdout.split()
            if hashes:
                break
            fallback = True
    return hashes[:k], fallback, cpu


def evaluate(repo: Path, queries: list[Query], k: int, verbose: bool) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    cpus: list[float] = []
    started = time.monotonic()
    for q in queries:
        top, fallback, cpu = git_grep(repo, q, k)
        rank, recall = score_results(top, q.relevant)
        cpus.append(cpu * 1000)
        rows.append({"query": q.query, "kind": q.kind, "or_fallback": fallback,
                     MODE: {"rank": rank, "recall": round(recall, 4)}})
        if verbose:
            print(f"git-grep {rank!s:>4} {'OR ' if fallback else 'AND'} {q.query}",
                  file=sys.stderr)
    cpus.sort()
    return {"repo": str(repo), "queries": len(queries), "k": k,
            "recipe": "git log --branches --remotes --tags -i --fixed-strings --all-match "
                      "--grep=W… (OR when AND finds nothing)",
            "metrics": summarise(rows, [MODE], k)[MODE],
            "or_fallbacks": sum(r["or_fallback"] for r in rows),
            "git_cpu_ms_p50": round(cpus[len(cpus) // 2], 1) if cpus else None,
            "wall_s": round(time.monotonic() - started, 2),
            "ranks": [r[MODE]["rank"] for r in rows], "per_query": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args(argv)
    result = evaluate(args.repo.resolve(), load_queries(args.queries), args.k, args.verbose)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
