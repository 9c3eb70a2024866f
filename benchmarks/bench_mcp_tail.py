"""Per-call server CPU of MCP warm hybrid searches, several source trees side by side, calls
alternated (issue 21 target 3: the distribution, not only the mean). Prints one line per
side and writes ``OUT/drive.json`` (every call's server CPU and wall, RSS, whether every
side answered identically) and ``OUT/<side>.jsonl`` (``mcp_traced_server.py``'s per-call
trace: tool thread CPU, GC pauses, CPU per thread).

Each side is ``NAME:SRC`` (a ``src`` directory put on ``PYTHONPATH``); queries, arguments and
the CPU reading are ``bench_mcp_warm.py``'s (top_n 10, compact; the sum of the server's
threads' schedstat run time). Answers are compared with ``index_state`` and
``next_cursor`` left out.

Usage::

    python benchmarks/bench_mcp_tail.py PROJECT CALLS OUT anchor:/tmp/anchor/src this:src
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_history import pct
from bench_mcp_ab import _children
from bench_mcp_warm import _cpu, _queries, _rss

SERVER = Path(__file__).resolve().parent / "mcp_traced_server.py"


async def _run(project: str, sides: list[tuple[str, str]], calls: int,
               out: Path) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    result: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 (the stack closes it)
        state: dict[str, dict[str, Any]] = {}
        for name, src in sides:
            before = _children()
            trace = out / f"{name}.jsonl"
            trace.write_text("")
            env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()),
                   "GQ_TRACE": str(trace)}
            params = StdioServerParameters(command=sys.executable,
                                           args=[str(SERVER), project], env=env)
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            pid = next(iter(_children() - before))
            state[name] = {"session": session, "pid": pid, "cpu": [], "wall": [],
                           "idle": _rss(pid), "texts": []}
        names = [n for n, _ in sides]
        for i, query in enumerate(_queries(calls + 1, 7)):
            for name in (names if i % 2 == 0 else names[::-1]):
                s = state[name]
                cpu, wall = _cpu(s["pid"]), time.perf_counter()
                answer = await s["session"].call_tool("search_git_history", {
                    "query": query, "top_n": 10, "detail": "compact"})
                s["cpu"].append((_cpu(s["pid"]) - cpu) * 1000)
                s["wall"].append((time.perf_counter() - wall) * 1000)
                if answer.is_error:
                    raise RuntimeError(f"{name} call {i} failed: {answer.content}")
                data = json.loads(answer.content[0].text)
                data.pop("index_state", None)
                data.pop("next_cursor", None)
                s["texts"].append(json.dumps(data, sort_keys=True))
        for name in names:
            s = state[name]
            result[name] = {"cpu": s["cpu"], "wall": s["wall"], "idle": s["idle"],
                            "after": _rss(s["pid"]),
                            "children_cpu_s": _children_cpu(s["pid"])}
        first = state[names[0]]["texts"]
        result["identical"] = all(state[n]["texts"] == first for n in names)
    return result


def _children_cpu(pid: int) -> float:
    """CPU seconds of the server's waited-for child processes (git): ``cutime + cstime``
    of ``/proc/PID/stat`` (10 ms ticks; not in the per-call schedstat figures)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    project, calls, out = args[0], int(args[1]), Path(args[2])
    sides = [(s.split(":", 1)[0], s.split(":", 1)[1]) for s in args[3:]]
    out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    result = asyncio.run(_run(project, sides, calls, out))
    result["load"] = [load_before, os.getloadavg()]
    (out / "drive.json").write_text(json.dumps(result), encoding="utf-8")
    for name, _ in sides:
        warm = result[name]["cpu"][1:]  # the first call loads the model
        print(f"{name}: server CPU p50 {statistics.median(warm):.1f} mean "
              f"{statistics.fmean(warm):.1f} p90 {pct(warm, 90):.1f} p95 {pct(warm, 95):.1f} "
              f"max {max(warm):.1f} ms; RSS idle {result[name]['idle']} after "
              f"{result[name]['after']}; git children {result[name]['children_cpu_s']} s CPU")
    print(f"identical {result['identical']}, load {result['load']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
