"""Size and cost of bounding a ``search_git_history`` response (issue 15 §3).

Builds, in a temporary directory with ``git fast-import``, the issue's two inputs: one commit
with a 4.5 MB message, and 100 commits with wide diffs (50 long-named files and one file of
200 lines of 1,000 characters each). Indexes them (keywords only) and runs the two searches
the issue reports (``top_n`` 1 for the message, 100 for the wide diffs). For each, prints:

- ``unbounded_bytes``: the payload as sent before the bound (compact JSON in the text block
  plus the same object as structured content, i.e. twice);
- ``bounded_bytes``: the payload as sent now (one text block);
- ``bound_ms``: median of 5 runs of ``bound_history_response`` on the response dict;
- ``results`` / ``results_omitted``.

Run: ``.venv/bin/python benchmarks/bench_bounded_output.py``; prints one JSON object.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from gitquarry.bounded import bound_history_response
from gitquarry.config import load_config
from gitquarry.history.index.indexer import index_workspace
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.store import open_store
from gitquarry.workspace import Workspace


def fast_import(repo: Path, commits: list[tuple[str, dict[str, str]]]) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    out: list[bytes] = []
    for n, (message, files) in enumerate(commits, start=1):
        msg = message.encode()
        out.append(b"commit refs/heads/main\n")
        out.append(f"committer A <a@example.com> {1_704_067_200 + 60 * n} +0000\n".encode())
        out.append(b"data %d\n%s\n" % (len(msg), msg))
        for path, content in files.items():
            data = content.encode()
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(out), check=True)


def main() -> None:
    os.environ.setdefault("GITQUARRY_CONFIG", os.devnull)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        big = "Huge release notes\n\n" + "zebrafish " * 450_000
        commits = [(big, {"notes.txt": "notes\n"})]
        for i in range(100):
            files = {f"pkg/{'d' * 150}/module_{i}_{j}.py": f"v{i}\n" for j in range(50)}
            files["wide.txt"] = "".join(f"{i}-{j} " + "w" * 992 + "\n" for j in range(200))
            commits.append((f"Widen table layout {i}", files))
        commits += [(f"Small change {i}", {"small.txt": f"{i}\n"}) for i in range(120)]
        fast_import(root / "repo", commits)
        config = load_config(root).replaced(embedding={"provider": "none"})
        with open_store(root / ".gitquarry" / "index.db") as store:
            index_workspace(root, store, config)
        searcher = HistorySearcher(Workspace(root=root.resolve(), config=config))
        report: dict[str, object] = {
            "python": platform.python_version(),
            "load_avg_1m": os.getloadavg()[0],
        }
        try:
            for name, query, top_n in (("message_4_5mb_top1", "zebrafish", 1),
                                       ("wide_diffs_top100", "widen table layout", 100)):
                data = searcher.search(query, top_n=top_n, mode="lexical").to_dict()
                unbounded = 2 * len(json.dumps(data, ensure_ascii=False).encode())
                times = []
                for _ in range(5):
                    started = time.perf_counter()
                    bounded = bound_history_response(data)
                    times.append((time.perf_counter() - started) * 1000)
                report[name] = {
                    "unbounded_bytes": unbounded,
                    "bounded_bytes": len(json.dumps(bounded, ensure_ascii=False).encode()),
                    "bound_ms": round(statistics.median(times), 1),
                    "results": len(bounded["results"]),
                    "results_omitted": bounded["results_omitted"],
                }
        finally:
            searcher.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
