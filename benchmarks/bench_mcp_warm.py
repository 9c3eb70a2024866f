"""The MCP server warm: resident memory idle and after N searches, and server CPU per call
(issue 21 targets 3 and 7). Prints one JSON object.

Starts ``python -m gitquarry mcp --project WS`` over stdio with a real MCP client session,
then reads the server process's ``/proc/PID/status`` (VmRSS, VmHWM) and ``/proc/PID/stat``
(utime + stime):

- ``idle``: after ``initialize`` and ``--idle-s`` seconds (nothing searched);
- ``keyword``: ``--calls`` ``search_git_history`` calls whose query the workspace's config
  answers by keywords only (``--keyword-config``: a config with ``[search] mode``
  lexical is written next to the workspace, so the model must never load): RSS after, and
  whether the embedding runtime was imported (``onnxruntime`` in the server's memory maps);
- ``hybrid``: ``--calls`` calls in the default mode (hybrid when the index holds vectors;
  ``bench_hybrid.fill_random_vectors`` makes random ones: latency does not depend on the
  values), top_n 10, ``detail="compact"``: server CPU per call p50/p95 (the CPU the server
  process spent between sending a request and reading its answer), RSS after.

Queries cycle through the synthetic vocabulary (1-3 words) and a few prose questions.

Usage::

    python benchmarks/bench_mcp_warm.py --project WS [--calls 100] [--idle-s 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import NOUNS, VERBS
from bench_history import pct

PROSE = ["how does the parser handle options", "why was the progress bar changed",
         "fix for windows terminal colours", "support for shell completion"]
CLK = os.sysconf("SC_CLK_TCK")


def _rss(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            out[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
    return out


def _cpu_ticks(pid: int) -> float:
    """Process CPU seconds from ``/proc/PID/stat`` (utime + stime, 10 ms ticks; includes
    threads that have exited)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def _cpu(pid: int) -> float:
    """Process CPU seconds, nanosecond resolution: the sum of every live thread's on-CPU time
    (``/proc/PID/task/*/schedstat``, first field). A thread that exits between two reads
    loses its time here (the server's threads are long-lived); falls back to
    :func:`_cpu_ticks` where schedstat is absent."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return _cpu_ticks(pid)
    return total / 1e9 if total else _cpu_ticks(pid)


def _loaded(pid: int, name: str) -> bool:
    return name in Path(f"/proc/{pid}/maps").read_text()


def _server_pid() -> int:
    me = os.getpid()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            ppid = int(text.rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if ppid == me and b"mcp" in cmd:
            return int(stat.parent.name)
    raise RuntimeError("MCP server process not found")


def _queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = VERBS + NOUNS
    return [rng.choice(PROSE) if i % 5 == 4 else
            " ".join(rng.sample(words, rng.choice((1, 2, 3)))) for i in range(n)]


async def _session(project: Path, env: dict[str, str], calls: int, idle_s: float,
                   label: str, profile: Path | None = None) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = ["-m", "gitquarry", "mcp", "--project", str(project)]
    if profile is not None:  # the same server under cProfile (mcp_profiled_server.py)
        args = [str(Path(__file__).resolve().parent / "mcp_profiled_server.py"),
                "--project", str(project), "--out", str(profile)]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    out: dict[str, Any] = {}
    with open(os.devnull, "w") as errlog:
        async with (stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session):
            await session.initialize()
            pid = _server_pid()
            await asyncio.sleep(idle_s)
            out["idle"] = _rss(pid)
            cpu: list[float] = []
            ticks: list[float] = []
            wall: list[float] = []
            for i, query in enumerate(_queries(calls, 7)):
                c, ct, t = _cpu(pid), _cpu_ticks(pid), time.perf_counter()
                result = await session.call_tool("search_git_history", {
                    "query": query, "top_n": 10, "detail": "compact"})
                wall.append((time.perf_counter() - t) * 1000)
                cpu.append((_cpu(pid) - c) * 1000)
                ticks.append((_cpu_ticks(pid) - ct) * 1000)
                if result.is_error:
                    raise RuntimeError(f"call {i} failed: {result.content}")
                if i == 0:
                    out["first_call_cpu_ms"] = round(cpu[0], 1)
                    out["after_first_call"] = _rss(pid)
            warm = cpu[1:] or cpu
            out.update({
                "calls": calls,
                "after_calls": _rss(pid),
                "server_cpu_p50_ms": round(statistics.median(warm), 1),
                "server_cpu_p95_ms": round(pct(warm, 95), 1),
                "server_cpu_mean_ms": round(statistics.fmean(warm), 2),
                "server_cpu_ticks_p50_ms": round(statistics.median(ticks[1:] or ticks), 1),
                "server_cpu_ticks_p95_ms": round(pct(ticks[1:] or ticks, 95), 1),
                "server_cpu_ticks_mean_ms": round(statistics.fmean(ticks[1:] or ticks), 2),
                "wall_p50_ms": round(statistics.median(wall[1:] or wall), 1),
                "wall_p95_ms": round(pct(wall[1:] or wall, 95), 1),
                "onnxruntime_loaded": _loaded(pid, "onnxruntime"),
                "numpy_loaded": _loaded(pid, "numpy"),
                "note": "server CPU per call: the sum of its threads' schedstat run time "
                        "(ns); the ticks figures from /proc utime+stime "
                        f"({1000 / CLK:.0f} ms ticks); calls after the first",
            })
    out["label"] = label
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, required=True)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--idle-s", type=float, default=2.0)
    ap.add_argument("--only", choices=("keyword", "hybrid"), default=None)
    ap.add_argument("--profile", type=Path, default=None,
                    help="run the server under cProfile per thread (mcp_profiled_server.py) "
                    "and write DIR/summary.txt; the CPU figures then include the profiler")
    args = ap.parse_args(argv)
    project = args.project.resolve()
    result: dict[str, Any] = {"project": str(project), "load_before": os.getloadavg()}
    cfg = project.parent / f"{project.name}-lexical.toml"
    cfg.write_text('[search]\nmode = "lexical"\n', encoding="utf-8")
    base = dict(os.environ)
    if args.only in (None, "keyword"):
        result["keyword"] = asyncio.run(_session(
            project, {**base, "GITQUARRY_CONFIG": str(cfg)}, args.calls, args.idle_s,
            "keyword", args.profile and args.profile / "keyword"))
    if args.only in (None, "hybrid"):
        result["hybrid"] = asyncio.run(_session(
            project, base, args.calls, args.idle_s, "hybrid",
            args.profile and args.profile / "hybrid"))
    result["targets"] = {
        "idle_rss_mib_max": 80, "after_100_hybrid_rss_mib_max": 250,
        "hybrid_server_cpu_ms_per_call_max": 40,
    }
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
