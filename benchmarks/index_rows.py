"""What a history index holds, as comparable rows: for "the index stays identical" checks.

``rows(conn)`` returns, per table, every row of the keyword-ready history index in a
canonical order: ``git_commits`` (every column but the run's ``indexed_at`` time and the row
id, the diff decompressed), the changed paths per commit, membership per repository, the
persisted refs-containing sets, and the full-text index itself as FTS5 sees it
(``fts5vocab`` ``instance`` rows: term, commit, column, offset; contentless tables hold
nothing else). Ids are replaced by commit hashes and paths, so two indexes of the same
repository built by different code compare equal exactly when they hold the same things.

Usage (before/after a change, e.g. a copy of ``main`` unpacked with ``git archive``)::

    PYTHONPATH=/tmp/main/src python benchmarks/index_rows.py A/index.db --digest
    python benchmarks/index_rows.py B/index.db --digest

prints one SHA-256 per table and in all (``--digest``), or the rows as JSON Lines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
import zlib
from pathlib import Path
from typing import Any

_COMMIT_COLUMNS = ("hash", "timestamp", "author", "committer", "title", "message",
                   "files_changed", "delta_truncated", "author_time", "parents", "is_merge",
                   "complete", "author_raw", "committer_raw", "patch_id")


def _inflate(value: Any) -> Any:
    return zlib.decompress(value).decode("utf-8", "surrogatepass") if isinstance(
        value, bytes) else value


def _has(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() \
        is not None


def rows(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, canonical (see the module docstring)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    cols = ", ".join(_COMMIT_COLUMNS)
    out["git_commits"] = sorted(
        tuple(_inflate(v) for v in r)
        for r in conn.execute(f"SELECT {cols} FROM git_commits"))
    out["commit_paths"] = sorted(conn.execute(
        "SELECT c.hash, p.path FROM commit_paths cp JOIN git_commits c ON c.id = cp.commit_id "
        "JOIN paths p ON p.id = cp.path_id"))
    out["repo_commits"] = sorted(  # the repository by its folder's name (indexes elsewhere)
        (Path(path).name, commit) for path, commit in conn.execute(
            "SELECT r.path, c.hash FROM repo_commits rc JOIN git_commits c "
            "ON c.id = rc.commit_id JOIN repositories r ON r.id = rc.repo_id"))
    out["repo_refs"] = sorted(conn.execute("SELECT CAST(ref AS BLOB), tip FROM repo_refs"))
    if _has(conn, "commit_ref_sets"):
        out["commit_ref_sets"] = sorted(conn.execute(
            "SELECT c.hash, v.bits FROM commit_ref_sets s JOIN git_commits c "
            "ON c.id = s.commit_id JOIN ref_set_values v ON v.id = s.set_id"))
        out["ref_sets_meta"] = sorted(conn.execute("SELECT names, tag_bits FROM ref_sets_meta"))
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.gq_rows_vocab "
                 "USING fts5vocab(main, commit_fts, instance)")
    hashes = dict(conn.execute("SELECT id, hash FROM git_commits"))
    out["commit_fts"] = sorted(
        (term, hashes.get(doc, f"?{doc}"), col, offset)
        for term, doc, col, offset in conn.execute(
            "SELECT term, doc, col, offset FROM temp.gq_rows_vocab"))
    conn.execute("DROP TABLE temp.gq_rows_vocab")
    return out


def digests(table_rows: dict[str, list[tuple[Any, ...]]]) -> dict[str, str]:
    """SHA-256 of each table's rows (and ``all``), with row counts."""
    out: dict[str, str] = {}
    total = hashlib.sha256()
    for name, items in sorted(table_rows.items()):
        h = hashlib.sha256()
        for item in items:
            h.update(repr(item).encode("utf-8", "surrogatepass"))
        out[name] = f"{len(items)} {h.hexdigest()}"
        total.update(h.digest())
    out["all"] = total.hexdigest()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", type=Path)
    ap.add_argument("--digest", action="store_true")
    args = ap.parse_args(argv)
    conn = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    got = rows(conn)
    if args.digest:
        print(json.dumps(digests(got), indent=1))
    else:
        for name, items in got.items():
            for item in items:
                print(json.dumps([name, *[repr(v) if isinstance(v, bytes) else v
                                          for v in item]], ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
