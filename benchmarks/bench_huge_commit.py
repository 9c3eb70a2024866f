"""One commit that touches N files and R refs (issue 19 §6): `gitquarry index --no-embed`
and a `history` search, end to end, in child processes. Prints one JSON object on stdout.

The repository is built with one `git fast-import` stream: a first commit (README), then
one commit adding ``--files`` files (``dNNNN/fileNNNNNNN.txt``, 1,000 per directory, all the
same 6-byte blob), then ``--refs`` branches ``refs/heads/r/bNNNNNN`` pointing alternately at
the two commits, written as one ``packed-refs`` file (as ``git pack-refs`` leaves them).
Per step: wall seconds, CPU seconds of the child and every process it waited for
(``resource.getrusage(RUSAGE_CHILDREN)`` before/after: git included), and the peak RSS of
the largest of them (``ru_maxrss`` of the children: a maximum, not a sum).

    .venv/bin/python benchmarks/bench_huge_commit.py --files 1000000 --refs 100000 \
        > benchmarks/results/huge-commit-DATE.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FIRST = 1_700_000_000
TITLE = "a commit that touches very many files at once"


def fast_import_stream(files: int) -> bytes:
    """The two commits described in the module docstring (``main`` = the big one)."""
    out = [b"blob\nmark :1\ndata 6\nhello\n\n",
           b"commit refs/heads/main\nmark :2\ncommitter Ada <ada@example.com> %d +0000\n"
           b"data 13\nfirst commit\n\nM 100644 :1 README\n\n" % FIRST]
    msg = TITLE.encode() + b"\n"
    out.append(b"commit refs/heads/main\nmark :3\ncommitter Ada <ada@example.com> %d +0000\n"
               b"data %d\n%s\nfrom :2\n" % (FIRST + 60, len(msg), msg))
    out.extend(b"M 100644 :1 d%04d/file%07d.txt\n" % (i // 1000, i) for i in range(files))
    out.append(b"\n")
    return b"".join(out)


def build(path: Path, files: int, refs: int) -> float:
    """Create the repository at ``path`` (no working tree checkout); returns seconds."""
    started = time.monotonic()
    path.mkdir(parents=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, check=True, env=env,
                   input=fast_import_stream(files))
    tips = [subprocess.run(["git", "rev-parse", rev], cwd=path, check=True, env=env,
                           capture_output=True, text=True).stdout.strip()
            for rev in ("main~1", "main")]
    lines = [b"# pack-refs with: peeled fully-peeled sorted \n"]
    lines.extend(b"%s refs/heads/r/b%06d\n" % (tips[i % 2].encode(), i) for i in range(refs))
    (path / ".git" / "packed-refs").write_bytes(b"".join(lines))
    return time.monotonic() - started


def measured(cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None,
             timeout: float = 3600) -> dict[str, Any]:
    """Run ``cmd`` to completion: rc, wall, CPU of it and its children, peak RSS (MiB),
    and the last lines of its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "rc": proc.returncode,
        "wall_s": round(wall, 2),
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
        "peak_rss_mib": round(after.ru_maxrss / 1024, 1),
        "stdout_tail": proc.stdout[-600:],
        "stderr_tail": proc.stderr[-600:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--refs", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="gq-huge-"))
    repo = work / "huge"
    gq = [sys.executable, "-m", "gitquarry"]
    try:
        result: dict[str, Any] = {"files": args.files, "refs": args.refs,
                                  "loadavg_before": os.getloadavg()}
        print(f"building {args.files} files, {args.refs} refs", file=sys.stderr)
        result["build_s"] = round(build(repo, args.files, args.refs), 2)
        print("indexing", file=sys.stderr)
        result["index"] = measured([*gq, "index", str(repo), "--no-embed"], cwd=work)
        print("searching", file=sys.stderr)
        result["search"] = measured([*gq, "history", "touches very many files", "--mode",
                                     "lexical", "--project", str(repo)], cwd=work)
        result["reindex_noop"] = measured([*gq, "index", str(repo), "--no-embed"], cwd=work)
        result["loadavg_after"] = os.getloadavg()
        print(json.dumps(result, indent=2))
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
