"""The real relevance set: pallets/click's history, rebuilt from a fetched mirror.

Usage::

    python benchmarks/relevance/click_set.py build /tmp/click [--mirror DIR]
    python benchmarks/relevance/click_set.py lint  /tmp/click
    python benchmarks/relevance/click_set.py write /tmp/click     # (re)write click_queries.jsonl
    python benchmarks/eval_history.py --repo /tmp/click \\
        --queries benchmarks/relevance/click_queries.jsonl

``build`` makes a fresh repository holding exactly the ``main`` branch of pallets/click at
:data:`PINNED` (3,329 commits, 1,183 of them merges, 2014-2026), fetched from a bare mirror
(``/work/.mirror/pallets+click/repo`` by default: the project's ``fetch`` tool puts
``github:pallets/click`` there; any clone holding that commit works). Nothing of click is
committed to this repository: only this script and the judged queries.

The queries live in ``click_queries.jsonl`` (format of ``benchmarks/eval_history.py``, plus
``relevant_titles``): paraphrased questions written from each commit's title, body and diff
as a developer would ask months later, without the words of the commit's title and body
(``lint`` checks this with SQLite's porter stemmer, the tokenizer of the FTS5 index), keyword
queries (identifiers, error names, file names), queries with filters, and "when was X
introduced" questions (``kind: introduced``) whose relevant commit is the one that added X.
Relevant sets were judged by reading the commits (and the other commits that git log --grep
finds on the same topic); they were not tuned to any ranking.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES_PATH = HERE / "click_queries.jsonl"
DEFAULT_MIRROR = Path("/work/.mirror/pallets+click/repo")
PINNED = "2c8cd3ac958a7eb316d67f2d316c27086c4c0369"

sys.path.insert(0, str(HERE))
from build_fixture import STOPWORDS, _stems  # noqa: E402


def git(repo: Path, *args: str, check: bool = True) -> str:
    """``git -C repo args`` → stdout as text; a failure (with ``check``) exits with its
    stderr."""
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          errors="replace")
    if check and proc.returncode != 0:
        raise SystemExit(f"error: git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def build(dest: Path, mirror: Path = DEFAULT_MIRROR, pinned: str = PINNED) -> Path:
    """A new repository at ``dest`` with ``main`` = ``pinned`` (default :data:`PINNED`),
    fetched from ``mirror`` and checked out."""
    if dest.exists() and any(dest.iterdir()):
        raise SystemExit(f"error: {dest} exists and is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    git(dest, "init", "-q", "-b", "unborn")
    git(dest, "fetch", "-q", "--no-tags", str(mirror.resolve()), f"{pinned}:refs/heads/main")
    git(dest, "checkout", "-q", "main")
    head = git(dest, "rev-parse", "HEAD").strip()
    if head != pinned:
        raise SystemExit(f"error: HEAD is {head}, expected {pinned}")
    return dest


def load_queries(path: Path = QUERIES_PATH) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def commit_text(repo: Path, commit: str) -> str:
    return git(repo, "log", "-1", "--format=%s%n%b", commit)


def lint(repo: Path, queries: list[dict[str, object]]) -> list[str]:
    """Problems: unknown commits, and paraphrases sharing a non-stopword stem with the title
    or body of the commit the query was written for (its first relevant entry; further
    entries were judged relevant afterwards, by reading the pooled top results, and may share
    words with the query)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
    stop = {s for w in STOPWORDS for s in _stems(conn, w)}
    problems = []
    for q in queries:
        for entry in q["relevant"][:1]:  # type: ignore[index]
            commit = str(entry).split("=")[0]
            text = commit_text(repo, commit)
            if q["kind"] != "paraphrase":
                continue
            shared = (_stems(conn, str(q["query"])) & _stems(conn, text)) - stop
            if shared:
                problems.append(f"{q['query']!r} shares {sorted(shared)} with {commit}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("build", "lint"))
    parser.add_argument("repo", type=Path)
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    args = parser.parse_args(argv)
    if args.action == "build":
        build(args.repo, args.mirror)
        print(f"built {args.repo} at {PINNED}")
        return 0
    problems = lint(args.repo, load_queries())
    for p in problems:
        print(p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
