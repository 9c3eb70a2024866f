"""How good is the indexing ETA? (issue 7 §9)

Clones each ``--repo`` (a path to a git repository, e.g. a ``fetch`` mirror under
``/work/.mirror/owner+name/repo``) bare into a temporary workspace, indexes its history with
``index_workspace`` (no embeddings) and records when each batch of commits finished. Then,
after every batch, it compares the remaining time each estimator predicted with the time
that actually remained:

* ``average``: remaining commits / average rate so far (what a plain progress bar shows);
* ``weighted``: ``gitquarry.history.index.progress.EtaEstimator`` (cost per commit fitted along
  the run, see its docstring), what ``gitquarry index`` shows.

Prints one JSON object: per repository and estimator, the ratio predicted / actual over the
first half of the run (after ``--warmup`` batches: with fewer, no estimator knows anything),
median, min and max, plus the machine load. Usage::

    .venv/bin/python benchmarks/eta_accuracy.py --repo /work/.mirror/fastapi+fastapi/repo \\
        [--repo …] [--batch-size 250] [--warmup 5]
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

from gitquarry.config import load_config
from gitquarry.history.index.indexer import index_workspace
from gitquarry.history.index.progress import EtaEstimator
from gitquarry.store import open_store


class _Recorder:
    """A ``Progress`` that keeps (units, monotonic time) of each batch of the first phase."""

    def __init__(self) -> None:
        self.total = 0
        self.start = 0.0
        self.batches: list[tuple[int, float]] = []

    def phase(self, name: str, total: int | None) -> None:
        if not self.total:
            self.total, self.start = total or 0, time.monotonic()

    def advance(self, units: int) -> None:
        self.batches.append((units, time.monotonic()))

    def note(self, message: str) -> None:
        pass


def _ratios(total: int, start: float, batches: list[tuple[int, float]], warmup: int
            ) -> dict[str, list[float]]:
    end = batches[-1][1]
    eta = EtaEstimator(total, start)
    done = 0
    out: dict[str, list[float]] = {"average": [], "weighted": []}
    for n, (units, when) in enumerate(batches):
        eta.advance(units, when)
        done += units
        actual = end - when
        if n + 1 < warmup or done > total / 2 or actual <= 0:
            continue
        out["average"].append((when - start) / done * (total - done) / actual)
        out["weighted"].append((eta.remaining(when) or 0.0) / actual)
    return out


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
            "max": round(max(values), 3), "points": len(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", action="append", required=True, type=Path)
    parser.add_argument("--batch-size", type=int, default=250)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    result: dict[str, object] = {
        "load_average_before": os.getloadavg(), "cpus": os.cpu_count(),
        "batch_size": args.batch_size, "warmup_batches": args.warmup, "repositories": {},
    }
    for repo in args.repo:
        with tempfile.TemporaryDirectory(prefix="gq-eta-") as tmp:
            ws = Path(tmp) / "ws"
            ws.mkdir()
            subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(ws / "r.git")],
                           check=True)
            config = load_config(ws).replaced(git_indexing={"batch_size": args.batch_size})
            store = open_store(Path(tmp) / "index.db")
            recorder = _Recorder()
            try:
                index_workspace(ws, store, config, progress=recorder)
            finally:
                store.close()
            print(f"{repo}: {recorder.total} commits, "
                  f"{recorder.batches[-1][1] - recorder.start:.1f} s", file=sys.stderr)
            ratios = _ratios(recorder.total, recorder.start, recorder.batches, args.warmup)
            result["repositories"][str(repo)] = {  # type: ignore[index]
                "commits": recorder.total,
                "seconds": round(recorder.batches[-1][1] - recorder.start, 2),
                "first_half_ratio": {k: _summary(v) for k, v in ratios.items()},
                "cost_ms_per_commit_by_batch": [
                    round((t - prev) / u * 1000, 2)
                    for (u, t), prev in zip(
                        recorder.batches,
                        [recorder.start] + [t for _, t in recorder.batches[:-1]],
                        strict=True,
                    )
                ],
            }
    result["load_average_after"] = os.getloadavg()
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
