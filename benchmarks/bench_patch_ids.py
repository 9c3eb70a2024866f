"""What computing patch-ids costs the indexer (issue 14: at most +20 % on a real history).

Indexes one repository into a fresh database, alternately without and with patch-ids
(``stream_commits(patch_ids=…)``: one ``git patch-id --stable`` process beside each
``git log`` process, fed the same patch bytes), each run in a fresh interpreter, and prints
JSON with every run, the medians and their ratio. Also times the one-time backfill of an
index written without patch-ids (what an existing index pays on its first run after the
upgrade), and checks the stored ids against ``git log -p | git patch-id --stable``.

    python benchmarks/bench_patch_ids.py --repo /path/to/repo.git --rounds 3 \\
        > benchmarks/results/patch-ids-<name>-<date>.json

Use a clone of the repository (``git clone --mirror``): indexing writes one line to its
``info/exclude``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def child(repo: str, db: str, mode: str) -> None:
    """In a fresh interpreter: index ``repo`` into ``db``; ``mode`` is ``off`` (no
    patch-ids, no backfill), ``on`` (the shipped indexer) or ``backfill`` (``db`` already
    holds the commits without patch-ids; the run only backfills them)."""
    import gitquarry.history.index.indexer as indexer
    from gitquarry.config import Config
    from gitquarry.store.connection import open_store

    if mode == "off":
        real = indexer.stream_commits

        def no_ids(*args: Any, **kwargs: Any) -> Any:
            kwargs["patch_ids"] = False
            return real(*args, **kwargs)

        indexer.stream_commits = no_ids  # type: ignore[assignment]
        indexer.missing_patch_ids = lambda store, repo_id: []  # type: ignore[assignment]
    store = open_store(Path(db))
    t = time.perf_counter()
    report = indexer.index_workspace(Path(repo), store, Config())
    seconds = time.perf_counter() - t
    backfilled = sum(r.patch_ids_backfilled for r in report.repositories)
    store.close()
    print(json.dumps({
        "mode": mode, "index_s": seconds, "new_commits": report.new_commits,
        "backfilled": backfilled, "errors": [r.error for r in report.failed],
    }))


def run_child(repo: Path, db: Path, mode: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--_child", str(repo), str(db), mode],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child failed:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["errors"]:
        raise RuntimeError(f"indexing errors: {out['errors']}")
    out["loadavg"] = round(os.getloadavg()[0], 2)
    return out


def reference_ids(repo: Path, db: Path) -> dict[str, Any]:
    """Stored patch-ids vs ``git log -p --format='commit %H' | git patch-id --stable`` over
    the commits whose diff could be read, with the configuration gitquarry pins (rename
    detection limits decide how a huge merge's diff looks, so plain defaults can differ)."""
    import sqlite3

    from gitquarry.gitio.runner import git_argv, git_env, neutral_dir

    conn = sqlite3.connect(db)
    stored = dict(conn.execute("SELECT hash, patch_id FROM git_commits WHERE complete = 1"))
    conn.close()
    log = subprocess.run(
        git_argv(repo, ["log", "--no-walk=unsorted", "--stdin", "-p", "-M",
                        "--diff-merges=first-parent", "--root", "--format=commit %H"]),
        input=("\n".join(stored) + "\n").encode(), capture_output=True, env=git_env(),
        cwd=str(neutral_dir()), check=True,
    ).stdout
    out = subprocess.run(["git", "patch-id", "--stable"], input=log, capture_output=True,
                         check=True).stdout.decode()
    ref = {line.split()[1]: line.split()[0] for line in out.splitlines()}
    bad = [h for h, pid in stored.items() if (pid or None) != ref.get(h)]
    groups: dict[str, int] = {}
    for pid in stored.values():
        if pid:
            groups[pid] = groups.get(pid, 0) + 1
    return {
        "compared": len(stored), "mismatches": len(bad), "mismatch_examples": bad[:5],
        "with_patch_id": sum(1 for v in stored.values() if v),
        "copy_groups": sum(1 for n in groups.values() if n > 1),
        "commits_in_copy_groups": sum(n for n in groups.values() if n > 1),
    }


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--_child":
        child(*sys.argv[2:5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs: list[dict[str, Any]] = []
    backfill: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        last_on = Path(tmp) / "last-on.db"
        for n in range(args.rounds):
            order = ("off", "on") if n % 2 == 0 else ("on", "off")
            for mode in order:
                db = Path(tmp) / f"{mode}-{n}.db"
                runs.append(run_child(args.repo, db, mode))
                if mode == "on":
                    db.replace(last_on)
                    for suffix in ("-wal", "-shm"):
                        Path(str(db) + suffix).unlink(missing_ok=True)
                elif n == 0:
                    backfill = run_child(args.repo, db, "backfill")
                    backfill["db_written_without_ids"] = True
                else:
                    db.unlink()
        check = reference_ids(args.repo, last_on)
    off = [r["index_s"] for r in runs if r["mode"] == "off"]
    on = [r["index_s"] for r in runs if r["mode"] == "on"]
    result = {
        "repo": str(args.repo),
        "commits": runs[0]["new_commits"],
        "runs": runs,
        "median_off_s": statistics.median(off),
        "median_on_s": statistics.median(on),
        "ratio_on_off": statistics.median(on) / statistics.median(off),
        "per_round_ratios": [b / a for a, b in zip(off, on, strict=True)],
        "backfill": backfill,
        "reference_check": check,
        "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
        "cpu_count": os.cpu_count(),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
