"""Reference baseline for docs relevance: plain SQLite FTS5 BM25 over whole heading sections.

Usage::

    python benchmarks/bm25_sections.py --repo PATH --queries FILE [--queries FILE2 ...]
        [--out FILE] [--verbose]

No model, no chunking, no field weights: every eligible document at ``HEAD`` (the same file
selection as ``gitquarry repo-docs``: the built-in ``conventional-docs-v1`` policy and the
Markdown / reStructuredText / text extensions) is split at its headings (Markdown and RST,
by the project's heading parsers, so both sides cut at the same lines) into whole sections, a
section running from its heading to the next heading of any level (text before the first
heading is a section of its own). One FTS5 row per section (``tokenize='porter unicode61'``,
one column: the section's text, heading included); the query is every word as an FTS5
string, OR-ed; rows ranked by ``bm25()`` (FTS5 defaults k1 = 1.2, b = 0.75), ties by document
order. A section is cited by its path and line range and scored with the scorer of
``benchmarks/eval_docs.py`` (``relevant``/``metrics``): a hit is relevant when its path is
the judged file and its line range overlaps the judged span.

Prints one JSON object: per query set the metrics and the rank of each query.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from eval_docs import metrics, relevant  # noqa: E402
from gitquarry.repo_docs.chunker import headings_for  # noqa: E402
from gitquarry.repo_docs.plan import content_class  # noqa: E402
from gitquarry.repo_docs.policy import BUILTIN_POLICY  # noqa: E402


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                          check=True).stdout


def sections(repo: Path) -> list[tuple[str, int, int, str]]:
    """(path, line_start, line_end, text) of every heading section of every eligible file
    at HEAD (1-based inclusive lines)."""
    out: list[tuple[str, int, int, str]] = []
    for raw in git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").split(b"\0"):
        path = raw.decode("utf-8", "replace")
        cls = content_class(path) if path else None
        if cls is None or BUILTIN_POLICY.selects(path) is not None:
            continue
        data = git(repo, "show", f"HEAD:{path}")
        if b"\0" in data[:8000]:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        lines = text.split("\n")
        starts = sorted({h.line_start for h in headings_for(text, cls)})
        if not starts or starts[0] != 1:
            starts = [1, *starts]
        for i, start in enumerate(starts):
            end = starts[i + 1] - 1 if i + 1 < len(starts) else len(lines)
            body = "\n".join(lines[start - 1 : end])
            if body.strip():
                out.append((path, start, end, body))
    return out


def match_expression(query: str) -> str:
    words = [w for w in query.split() if any(c.isalnum() for c in w)]
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def evaluate(repo: Path, query_sets: list[Path], verbose: bool = False) -> dict[str, Any]:
    rows = sections(repo)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE s USING fts5(body, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO s (rowid, body) VALUES (?, ?)",
                     [(i + 1, r[3]) for i, r in enumerate(rows)])
    result: dict[str, Any] = {"repo": repo.name, "baseline": "bm25-sections",
                              "sections": len(rows), "files": len({r[0] for r in rows}),
                              "sets": {}}
    for qpath in query_sets:
        queries = [json.loads(line) for line in qpath.read_text().splitlines() if line]
        ranks: list[int | None] = []
        for q in queries:
            got = conn.execute("SELECT rowid FROM s WHERE s MATCH ? ORDER BY bm25(s), rowid "
                               "LIMIT 10", (match_expression(q["query"]),)).fetchall()
            hits = [{"rank": n + 1, "citation": {"path": rows[rid - 1][0],
                                                 "line_start": rows[rid - 1][1],
                                                 "line_end": rows[rid - 1][2]}}
                    for n, (rid,) in enumerate(got)]
            rank = next((h["rank"] for h in hits if relevant(h, q)), None)
            ranks.append(rank)
            if verbose:
                top = [f"{h['citation']['path']}:{h['citation']['line_start']}"
                       for h in hits[:3]]
                print(f"bm25-sec {rank!s:>4}  {q['query']}  {top}", file=sys.stderr)
        result["sets"][qpath.name] = {"queries": len(queries), **metrics(ranks),
                                      "ranks": ranks}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    text = json.dumps(evaluate(args.repo.resolve(), args.queries, args.verbose), indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
