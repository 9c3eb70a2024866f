"""What merges cost git when indexing (issue 8 §4): the ``git log`` gitquarry runs, timed
separately for non-merge commits (with ``-p``) and for merges diffed four ways:

- ``merges_patch``: as indexed today, the first-parent patch (``--diff-merges=first-parent -p``),
  of which gitquarry keeps 200 lines;
- ``merges_raw_only``: the first-parent file list only (``--raw``, no patch);
- ``merges_no_diff``: header only (``--diff-merges=off``);
- ``merges_cc``: the dense combined diff (``--diff-merges=dense-combined -p``, as ``git show``
  prints a merge): only files that differ from every parent, i.e. the merge's own changes
  (conflict resolutions, evil merges); empty for a clean merge;
- ``merges_remerge`` (``--remerge``): only what the merge itself changed beyond an automatic
  re-merge (``--diff-merges=remerge -p``; git >= 2.36), i.e. the part not indexed through the
  second-parent commits.

Every ``--step``-th commit of ``--branches --tags`` is used; each variant runs ``--rounds``
times; reported: median wall and CPU seconds of git, output MB. Prints JSON. Usage::

    python benchmarks/bench_merge_diffs.py /tmp/git.git --step 10 [--remerge]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("git_dir", type=Path)
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--remerge", action="store_true")
    args = ap.parse_args(argv)

    from gitquarry.gitio.log import _DIFF_OPTIONS, _FORMAT, _LOG_OPTIONS
    from gitquarry.gitio.runner import popen_git, run_git

    def rev_list(*extra: str) -> list[str]:
        return run_git(args.git_dir, ["rev-list", "--branches", "--tags", *extra]).stdout.split()

    merges = {h.decode() for h in rev_list("--merges")}
    sample = [h.decode() for h in rev_list()][:: args.step]
    sample_merges = [h for h in sample if h in merges]
    sample_others = [h for h in sample if h not in merges]

    def options(diff_merges: str) -> tuple[str, ...]:
        kept = tuple(o for o in _DIFF_OPTIONS if not o.startswith("--diff-merges"))
        return (*kept, f"--diff-merges={diff_merges}")

    def timed(hashes: list[str], opts: tuple[str, ...], patch: bool) -> dict[str, float]:
        cmd = ["log", "--no-walk=unsorted", "--stdin", f"--format={_FORMAT}", *_LOG_OPTIONS,
               *opts, *(["-p"] if patch else [])]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = popen_git(args.git_dir, cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
        out, _ = proc.communicate(("\n".join(hashes) + "\n").encode())
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        return {"wall_s": wall, "cpu_s": cpu, "mb_out": len(out) / 1e6}

    variants: dict[str, tuple[list[str], tuple[str, ...], bool]] = {
        "non_merges_patch": (sample_others, _DIFF_OPTIONS, True),
        "merges_patch": (sample_merges, _DIFF_OPTIONS, True),
        "merges_raw_only": (sample_merges, _DIFF_OPTIONS, False),
        "merges_no_diff": (sample_merges, options("off"), False),
        "merges_cc": (sample_merges, options("dense-combined"), True),
    }
    if args.remerge:
        variants["merges_remerge"] = (sample_merges, options("remerge"), True)
    out: dict[str, Any] = {
        "repo": str(args.git_dir), "sample_commits": len(sample),
        "sample_merges": len(sample_merges), "load_before": os.getloadavg(),
    }
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, (hashes, opts, patch) in variants.items():
            runs[name].append(timed(hashes, opts, patch))
    for name, rs in runs.items():
        out[name] = {key: round(statistics.median(r[key] for r in rs), 2) for key in rs[0]}
    git_cpu = out["non_merges_patch"]["cpu_s"] + out["merges_patch"]["cpu_s"]
    out["merge_patch_share_of_git_cpu"] = round(out["merges_patch"]["cpu_s"] / git_cpu, 3)
    out["saving_raw_only"] = round(
        (out["merges_patch"]["cpu_s"] - out["merges_raw_only"]["cpu_s"]) / git_cpu, 3)
    out["saving_cc_only"] = round(
        (out["merges_patch"]["cpu_s"] - out["merges_cc"]["cpu_s"]) / git_cpu, 3)
    out["load_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
