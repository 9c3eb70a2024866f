"""Two ``repo_docs/chunker.py`` files timed in one process, alternating per round.

    PYTHONPATH=src python benchmarks/docs_chunk_inprocess_ab.py --old OLD_CHUNKER_PY \
        --repo GIT_DIR ... [--rounds 16] [--out benchmarks/results/NAME.json]

``--old`` is a chunker module file (e.g. ``git show main:src/gitquarry/repo_docs/chunker.py``
saved somewhere) loaded under another module name beside this checkout's
``gitquarry.repo_docs.chunker`` (both use this checkout's parser, so only the chunker's own
Python differs). The documents are the Markdown and reStructuredText blobs
``docs_chunk_ab.py`` times; each round runs both chunkers over all of them, the order flipping
each round; spans are checked equal on every document first. CPU seconds
(``time.process_time``); ``old_over_new_ratio_median`` is the median of the per-round ratios.
Prints JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_chunk_ab import repo_blobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--out")
    args = parser.parse_args()
    from gitquarry.repo_docs import chunker as new

    spec = importlib.util.spec_from_file_location("old_chunker", args.old)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules["old_chunker"] = old
    spec.loader.exec_module(old)
    docs = [(c, d) for repo in args.repo for _l, c, d in repo_blobs(repo) if c != "text"]
    mib = sum(len(d) for _c, d in docs) / 2**20
    for cls, data in docs:
        if ([vars(s) for s in old.chunk_document(data, cls)]
                != [vars(s) for s in new.chunk_document(data, cls)]):
            raise SystemExit("the two chunkers differ: not timed")
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    for r in range(args.rounds):
        for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
            chunk = (old if side == "old" else new).chunk_document
            started = time.process_time()
            for cls, data in docs:
                chunk(data, cls)
            cpu[side].append(time.process_time() - started)
    ratios = [o / n for o, n in zip(cpu["old"], cpu["new"], strict=True)]
    result = {
        "files": len(docs), "mib": round(mib, 2), "rounds": args.rounds,
        **{f"{side}_cpu_s": [round(x, 4) for x in v] for side, v in cpu.items()},
        **{f"{side}_mib_per_cpu_s_median": round(mib / statistics.median(v), 2)
           for side, v in cpu.items()},
        **{f"{side}_mib_per_cpu_s_best": round(mib / min(v), 2) for side, v in cpu.items()},
        "old_over_new_ratio_median": round(statistics.median(ratios), 3),
        "load_1min_end": round(os.getloadavg()[0], 2),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
