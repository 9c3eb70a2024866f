"""Cold CLI before/after in one run (issue 21 §1, s3-cold): the same ``gitquarry history``
command run by two source trees (``--before-src``: e.g. ``git archive main src`` unpacked;
``--after-src``: this checkout's ``src``) on the same index, alternating with the anchor
``git log --all -i --all-match --grep`` on the same query, several rounds. Prints one JSON
object and writes it to ``--out``.

Usage::

    .venv/bin/python benchmarks/bench_cold_before_after.py --before-src /tmp/main/src \\
        --workspace /tmp/flask --workspace /tmp/gitws --rounds 7 [--mode lexical] \\
        [--hybrid-commits 300] --out benchmarks/results/2026-12-02-s3-cold.json

Each workspace must be indexed already (``gitquarry index --no-embed``) by the *after*
tree. The *before* tree refuses an index with migrations it does not know, so it runs on a
copy of the same index with this branch's migrations taken out (``_before_copy``: the
generations tables and ``repo_refs.raw`` dropped, their ``_migrations`` rows deleted); the
two files are renamed into place in turn before each command (same commits, same refs).
``--hybrid-commits N``: also a synthetic repository of N commits indexed with vectors, for
``--mode hybrid`` on both trees. CPU is user + system of the child and its children
(``getrusage(RUSAGE_CHILDREN)``); medians in ms; every answer of both trees is compared
(equal but for ``checked_at`` and the cursor's pin id). Each tree is byte-compiled whole
(``compileall``) before the first round, as a wheel install is. When the *before* tree
declares those migrations itself (main after the s3 merge), both trees read the same file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

QUERIES = ["fix cache", "timeout", "auth token", "parser error"]
_PER_CALL = ('"checked_at": ', '"next_cursor": ')


def _norm(raw: bytes) -> list[str]:
    return [line.split(": ")[0] if line.strip().startswith(_PER_CALL) else line
            for line in raw.decode().splitlines()]


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {proc.stderr[-400:]!r}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall, proc.stdout


def _git_dir(ws: Path) -> Path:
    found = sorted(p for p in ws.iterdir() if p.name.endswith(".git") or (p / ".git").exists())
    return found[0]


#: this branch's migrations, taken out of the *before* tree's copy of the index
_OURS = ("history_0009_s3_cold_generations", "history_0010_s3_cold_ref_raw")


def _before_copy(db: Path) -> Path:
    """``<db>.before``: a copy of the index without ``_OURS`` (module docstring)."""
    import shutil
    import sqlite3

    copy = db.with_name(db.name + ".before")
    shutil.copyfile(db, copy)
    conn = sqlite3.connect(copy)
    try:
        conn.execute("DROP TABLE IF EXISTS commit_generations")
        conn.execute("DROP TABLE IF EXISTS commit_generations_meta")
        if any(r[1] == "raw" for r in conn.execute("PRAGMA table_info(repo_refs)")):
            conn.execute("ALTER TABLE repo_refs DROP COLUMN raw")
        gone = conn.executemany("DELETE FROM _migrations WHERE name = ?",
                                [(n,) for n in _OURS]).rowcount
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        conn.commit()
        conn.execute(f"PRAGMA user_version = {version - gone}")
    finally:
        conn.close()
    return copy


def _use(db: Path, which: str, current: list[str]) -> None:
    """Rename ``<db>.<which>`` into place (the other one aside as ``<db>.<other>``)."""
    if current[0] == which:
        return
    db.rename(db.with_name(f"{db.name}.{current[0]}"))
    db.with_name(f"{db.name}.{which}").rename(db)
    current[0] = which


def _knows_ours(tree: Path) -> bool:
    """Whether the source tree ``tree`` declares ``_OURS`` itself (then both trees read the
    same index file: s4 and later, where main holds those migrations)."""
    schema = tree / "gitquarry" / "store" / "schema" / "history.py"
    text = schema.read_text("utf-8") if schema.is_file() else ""
    return all(name in text for name in _OURS)


def measure(ws: Path, trees: dict[str, Path], mode: str, rounds: int,
            env: dict[str, str]) -> dict[str, Any]:
    repo = _git_dir(ws)
    db = ws / ".gitquarry" / "index.db"
    if _knows_ours(trees["before"]):
        same = {name: ["same"] for name in trees}
        return _measure(ws, repo, db, same["after"], trees, mode, rounds, env, copy=False)
    _before_copy(db)
    current = ["after"]
    try:
        return _measure(ws, repo, db, current, trees, mode, rounds, env)
    finally:
        _use(db, "after", current)
        db.with_name(db.name + ".before").unlink(missing_ok=True)


def _measure(ws: Path, repo: Path, db: Path, current: list[str], trees: dict[str, Path],
             mode: str, rounds: int, env: dict[str, str], *, copy: bool = True
             ) -> dict[str, Any]:
    cpu: dict[str, list[float]] = {name: [] for name in [*trees, "git"]}
    wall: dict[str, list[float]] = {name: [] for name in [*trees, "git"]}
    equal = True
    names = list(trees)
    for r in range(rounds):
        q = QUERIES[r % len(QUERIES)]
        order = [*names, "git"] if r % 2 == 0 else ["git", *names[::-1]]
        outs: dict[str, bytes] = {}
        for name in order:
            if name == "git":
                cmd = ["git", "-C", str(repo), "log", "--all", "-i", "--all-match",
                       *[f"--grep={w}" for w in q.split()], "--format=%H"]
                c, w, _ = _run(cmd, ws, env)
            else:
                cmd = [sys.executable, "-m", "gitquarry", "history", q, "--mode", mode,
                       "--json"]
                if copy:
                    _use(db, name, current)
                c, w, outs[name] = _run(cmd, ws, {**env, "PYTHONPATH": str(trees[name])})
            cpu[name].append(c)
            wall[name].append(w)
        equal = equal and len({tuple(_norm(o)) for o in outs.values()}) == 1
    out: dict[str, Any] = {"mode": mode, "rounds": rounds, "answers_equal": equal}
    for name in cpu:
        out[f"{name}_cpu_ms"] = round(statistics.median(cpu[name]) * 1000, 1)
        out[f"{name}_wall_ms"] = round(statistics.median(wall[name]) * 1000, 1)
    for name in trees:
        out[f"{name}_ratio_git_cpu"] = round(out[f"{name}_cpu_ms"] / out["git_cpu_ms"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before-src", type=Path, required=True)
    ap.add_argument("--after-src", type=Path, default=HERE.parent / "src")
    ap.add_argument("--workspace", type=Path, action="append", default=[])
    ap.add_argument("--mode", default="lexical")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--hybrid-commits", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GITQUARRY_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(GITQUARRY_CONFIG="/dev/null", GITQUARRY_FAST="local")
    trees = {"before": args.before_src.resolve(), "after": args.after_src.resolve()}
    result: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "load_before": os.getloadavg(), "cpus": os.cpu_count(), "trees": {
            k: str(v) for k, v in trees.items()}, "workspaces": {}}
    for name in trees:  # byte-compile each whole tree first, as a wheel install does
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(trees[name])],
                       capture_output=True, check=True)
        subprocess.run([sys.executable, "-m", "gitquarry", "--version"], env={
            **env, "PYTHONPATH": str(trees[name])}, capture_output=True, check=True)
    for ws in args.workspace:
        print(f"[cold a/b] {ws} {args.mode}", file=sys.stderr, flush=True)
        result["workspaces"][ws.name] = measure(ws, trees, args.mode, args.rounds, env)
    if args.hybrid_commits:
        from _synthetic import build_repo

        with tempfile.TemporaryDirectory(prefix="gq-cold-ab-") as tmp:
            hyb = Path(tmp) / "ws-hybrid"
            hyb.mkdir()
            build_repo(hyb / "synth", args.hybrid_commits, checkout=False)
            subprocess.run([sys.executable, "-m", "gitquarry", "index", "-q", str(hyb)],
                           env={**env, "PYTHONPATH": str(trees["after"])}, check=True,
                           capture_output=True)
            print(f"[cold a/b] hybrid, {args.hybrid_commits} commits", file=sys.stderr,
                  flush=True)
            result["hybrid"] = {**measure(hyb, trees, "hybrid", args.rounds, env),
                                "commits": args.hybrid_commits}
    result["load_after"] = os.getloadavg()
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
