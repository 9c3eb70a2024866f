"""Daemon benchmarks (issue 10): commit → keyword-searchable latency after the debounce,
idle CPU and RSS with 20 watched repositories, and the cost of a `.git` event storm.

Everything runs against a real ``gitquarry daemon run`` child process in an isolated HOME /
state dir / runtime dir, with real repositories. Prints one JSON object on stdout.

- ``latency``: ``--commits`` commits, one at a time, in a watched repository; per commit the
  time from ``git commit`` returning until the commit is in the index (read-only SQLite poll
  every 10 ms: the row and its FTS5 entry land in one transaction, so that is when a keyword
  search finds it), minus the debounce. p50/p95/max seconds.
- ``idle``: ``--idle-repos`` watched workspaces of one repository each; after their first
  jobs, the daemon's CPU seconds (utime+stime from /proc) over ``--idle-s`` seconds (which
  includes a reconcile at the default 60 s interval) as a percentage of one core, and its RSS.
- ``storm``: a watched repository fetches ``--storm-refs`` new branches (every loose ref
  written under refs/remotes) and then runs ``git gc`` (packs refs, rewrites objects): the
  daemon's CPU seconds from the fetch until its jobs settle, the number of jobs created, and
  the time until the new refs are indexed.
- ``embed`` (with the bundled model ``minilm-onnx``): ``--embed-commits`` commits one at a
  time, per commit the time until it is keyword-searchable and until it has its vector
  (every indexed commit has one), minus the debounce; then ``--embed-burst`` commits in a
  row: the time until all have vectors and the jobs they caused (coalescing).

    .venv/bin/python benchmarks/bench_daemon.py > benchmarks/results/daemon-DATE.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def make_repo(path: Path, commits: int) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for i in range(commits):
        (path / f"f{i % 5}.txt").write_text(f"{path.name} change {i}\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"{path.name} commit {i}")
    return path


class Env:
    def __init__(self, root: Path, debounce_s: float, reconcile_s: float,
                 provider: str = "none") -> None:
        self.root = root
        home = root / "home"
        home.mkdir(parents=True)
        (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = b@example.com\n"
                                         "[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n")
        (home / "gq.toml").write_text(f"[daemon]\ndebounce_s = {debounce_s}\nreconcile_s = "
                                      f"{reconcile_s}\n[embedding]\nprovider = \"{provider}\"\n")
        runtime = Path(tempfile.mkdtemp(prefix="gqb", dir="/tmp"))
        self.env = dict(os.environ, HOME=str(home), XDG_STATE_HOME=str(root / "state"),
                        XDG_RUNTIME_DIR=str(runtime), GITQUARRY_CONFIG=str(home / "gq.toml"),
                        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
                        PYTHONPATH=str(SRC))
        os.environ.update({k: self.env[k] for k in (
            "HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "GITQUARRY_CONFIG",
            "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")})
        self.proc = subprocess.Popen([sys.executable, "-m", "gitquarry", "daemon", "run"],
                                     env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        from gitquarry.errors import DaemonNotRunningError
        from gitquarry.service.ipc import Client

        self.client = Client()
        for _ in range(600):
            try:
                self.client.call("ping")
                break
            except DaemonNotRunningError:
                time.sleep(0.05)

    def call(self, op: str, **args: Any) -> Any:
        return self.client.call(op, **args)

    def settle(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = self.call("jobs.list", status="queued", limit=1)["jobs"] or \
                self.call("jobs.list", status="running", limit=1)["jobs"]
            if not busy:
                return
            time.sleep(0.05)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def indexed(db: Path, commit: str) -> bool:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return False
    try:
        return conn.execute("SELECT 1 FROM git_commits WHERE hash = ?", (commit,)).fetchone() \
            is not None
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def bench_latency(root: Path, commits: int, debounce_s: float) -> dict[str, Any]:
    env = Env(root / "lat", debounce_s, 60)
    try:
        repo = make_repo(root / "lat" / "repo", 3)
        env.call("watch", path=str(repo))
        env.settle()
        db = repo / ".gitquarry" / "index.db"
        after: list[float] = []
        for i in range(commits):
            (repo / "f.txt").write_text(f"latency probe {i}\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", f"latency probe {i}")
            t0 = time.monotonic()
            head = git(repo, "rev-parse", "HEAD")
            while not indexed(db, head):
                time.sleep(0.01)
            after.append(time.monotonic() - t0 - debounce_s)
            env.settle()
        jobs = env.call("jobs.list", limit=1000)["jobs"]
        q = statistics.quantiles(after, n=20)
        return {"commits": commits, "debounce_s": debounce_s,
                "after_debounce_s": {"p50": round(statistics.median(after), 3),
                                     "p95": round(q[18], 3), "max": round(max(after), 3)},
                "jobs": len(jobs)}
    finally:
        env.close()


def vectored(db: Path) -> tuple[int, int]:
    """(commits in the index, commits with a vector)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return 0, 0
    try:
        row = conn.execute("SELECT count(*), count(DISTINCT v.commit_id) FROM git_commits c "
                           "LEFT JOIN commit_vectors v ON v.commit_id = c.id").fetchone()
        return int(row[0]), int(row[1])
    except sqlite3.Error:
        return 0, 0
    finally:
        conn.close()


def bench_embed(root: Path, commits: int, burst: int, debounce_s: float) -> dict[str, Any]:
    """Commit → vector with the bundled model, one commit at a time, then a burst."""
    env = Env(root / "emb", debounce_s, 60, provider="minilm-onnx")
    try:
        repo = make_repo(root / "emb" / "repo", 3)
        env.call("watch", path=str(repo))
        db = repo / ".gitquarry" / "index.db"

        def wait_all(n: int) -> None:
            while vectored(db) != (n, n):
                time.sleep(0.01)

        wait_all(3)
        env.settle()
        keyword: list[float] = []
        vector: list[float] = []
        for i in range(commits):
            (repo / "f.txt").write_text(f"embedding probe {i}\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", f"embedding probe {i} about parser escapes")
            t0 = time.monotonic()
            head = git(repo, "rev-parse", "HEAD")
            while not indexed(db, head):
                time.sleep(0.01)
            keyword.append(time.monotonic() - t0 - debounce_s)
            wait_all(4 + i)
            vector.append(time.monotonic() - t0 - debounce_s)
            env.settle()
        before = {j["id"] for j in env.call("jobs.list", limit=1000)["jobs"]}
        t0 = time.monotonic()
        for i in range(burst):
            (repo / "g.txt").write_text(f"burst {i}\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", f"burst commit {i}")
        wait_all(3 + commits + burst)
        burst_s = time.monotonic() - t0
        env.settle()
        new = [j for j in env.call("jobs.list", limit=1000)["jobs"] if j["id"] not in before]

        def stats(xs: list[float]) -> dict[str, float]:
            q = statistics.quantiles(xs, n=20) if len(xs) > 1 else xs * 19
            return {"p50": round(statistics.median(xs), 3), "p95": round(q[18], 3),
                    "max": round(max(xs), 3)}

        return {"commits": commits, "debounce_s": debounce_s,
                "keyword_after_debounce_s": stats(keyword),
                "vector_after_debounce_s": stats(vector),
                "burst": {"commits": burst, "all_vectors_after_s": round(burst_s, 3),
                          "jobs": sorted(j["type"] for j in new)}}
    finally:
        env.close()


def bench_idle(root: Path, repos: int, idle_s: float) -> dict[str, Any]:
    env = Env(root / "idle", 2.0, 60)
    try:
        for i in range(repos):
            repo = make_repo(root / "idle" / f"ws{i}" / f"repo{i}", 3)
            env.call("watch", path=str(repo.parent))
        env.settle()
        time.sleep(2)
        pid = env.proc.pid
        c0, t0 = cpu_s(pid), time.monotonic()
        time.sleep(idle_s)
        c1, t1 = cpu_s(pid), time.monotonic()
        status = env.call("status")
        return {"watched_repositories": repos, "seconds": round(t1 - t0, 1),
                "cpu_s": round(c1 - c0, 3),
                "cpu_percent_of_one_core": round(100 * (c1 - c0) / (t1 - t0), 3),
                "rss_mb": round(rss_mb(pid), 1),
                "watch_modes": sorted({w["watch_mode"] for w in status["workspaces"]})}
    finally:
        env.close()


def bench_storm(root: Path, refs: int) -> dict[str, Any]:
    env = Env(root / "storm", 2.0, 60)
    try:
        source = make_repo(root / "storm" / "source", 3)
        head = git(source, "rev-parse", "HEAD")
        lines = "".join(f"create refs/heads/b{i:05d} {head}\n" for i in range(refs))
        subprocess.run(["git", "update-ref", "--stdin"], cwd=source, input=lines, text=True,
                       check=True)
        repo = make_repo(root / "storm" / "repo", 3)
        env.call("watch", path=str(repo))
        env.settle()
        before = len(env.call("jobs.list", limit=1000)["jobs"])
        pid = env.proc.pid
        c0, t0 = cpu_s(pid), time.monotonic()
        git(repo, "fetch", "-q", str(source), "+refs/heads/*:refs/remotes/src/*")
        loose = sum(1 for _ in (repo / ".git" / "refs" / "remotes" / "src").iterdir())
        git(repo, "gc", "-q")
        t_git = time.monotonic() - t0
        db = repo / ".gitquarry" / "index.db"
        while True:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            n = conn.execute("SELECT count(*) FROM repo_refs").fetchone()[0]
            conn.close()
            if n >= refs:
                break
            time.sleep(0.05)
        t_indexed = time.monotonic() - t0
        env.settle()
        time.sleep(3)  # any late events
        env.settle()
        c1 = cpu_s(pid)
        jobs = env.call("jobs.list", limit=1000)["jobs"]
        return {"refs": refs, "loose_refs_written": loose, "git_fetch_and_gc_s": round(t_git, 2),
                "refs_indexed_after_s": round(t_indexed, 2),
                "daemon_cpu_s": round(c1 - c0, 2), "jobs_created": len(jobs) - before,
                "job_types": sorted(j["type"] for j in jobs[: len(jobs) - before])}
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--debounce-s", type=float, default=0.5)
    parser.add_argument("--idle-repos", type=int, default=20)
    parser.add_argument("--idle-s", type=float, default=60.0)
    parser.add_argument("--storm-refs", type=int, default=10_000)
    parser.add_argument("--embed-commits", type=int, default=20)
    parser.add_argument("--embed-burst", type=int, default=10)
    parser.add_argument("--only", choices=("latency", "storm", "idle", "embed"),
                        action="append",
                        help="run only these parts (repeatable)")
    args = parser.parse_args()
    parts = args.only or ["latency", "storm", "idle"]
    sys.path.insert(0, str(SRC))
    root = Path(tempfile.mkdtemp(prefix="gq-bench-daemon-"))
    try:
        out: dict[str, Any] = {"load_before": os.getloadavg()}
        if "latency" in parts:
            print("latency…", file=sys.stderr)
            out["latency"] = bench_latency(root, args.commits, args.debounce_s)
        if "storm" in parts:
            print("storm…", file=sys.stderr)
            out["storm"] = bench_storm(root, args.storm_refs)
        if "embed" in parts:
            print("embed…", file=sys.stderr)
            out["embed"] = bench_embed(root, args.embed_commits, args.embed_burst,
                                       args.debounce_s)
        if "idle" in parts:
            print("idle…", file=sys.stderr)
            out["idle"] = bench_idle(root, args.idle_repos, args.idle_s)
        out["load_after"] = os.getloadavg()
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
