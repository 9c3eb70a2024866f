"""The gitquarry MCP server with a per-call trace (issue 21 target 3: what the p95 tail is
made of). ``bench_mcp_tail.py`` starts this instead of ``python -m gitquarry mcp``.

For every ``search_git_history`` call it appends one JSON line to ``$GQ_TRACE``: the tool
thread's own CPU (``time.thread_time``), the call's wall time, the garbage collector's pauses
(wall, from ``gc.callbacks``) and collections per generation, and each thread's on-CPU time
during the call (``/proc/self/task/*/schedstat``; the tool thread's key starts ``TOOL:``).

Usage (normally through ``bench_mcp_tail.py``)::

    GQ_TRACE=calls.jsonl python benchmarks/mcp_traced_server.py PROJECT
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

_state: dict[str, Any] = {"gc_t": 0.0, "gc_n": [0, 0, 0], "gc_start": 0.0}


def _gc_callback(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _state["gc_start"] = time.perf_counter()
    else:
        _state["gc_t"] += time.perf_counter() - _state["gc_start"]
        _state["gc_n"][info["generation"]] += 1


def _tasks() -> dict[str, tuple[str, int]]:
    out = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            out[task.name] = ((task / "comm").read_text().strip(),
                              int((task / "schedstat").read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    trace = open(os.environ["GQ_TRACE"], "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    gc.callbacks.append(_gc_callback)
    import anyio.to_thread

    original = anyio.to_thread.run_sync
    calls = [0]

    async def run_sync(func: Any, *a: Any, **kw: Any) -> Any:
        target = getattr(func, "func", func)
        if getattr(target, "__name__", "") != "search_git_history":
            return await original(func, *a, **kw)

        def traced() -> Any:
            calls[0] += 1
            g0, n0 = _state["gc_t"], list(_state["gc_n"])
            before = _tasks()
            cpu, wall = time.thread_time(), time.perf_counter()
            try:
                return func()
            finally:
                tool = time.thread_time() - cpu
                took = time.perf_counter() - wall
                me = str(threading.get_native_id())
                threads: dict[str, float] = {}
                for key, (name, ns) in _tasks().items():
                    spent = ns - before.get(key, (name, 0))[1]
                    if spent > 0:
                        label = f"TOOL:{name}" if key == me else name
                        threads[label] = threads.get(label, 0.0) + spent / 1e6
                trace.write(json.dumps({
                    "i": calls[0], "tool_ms": tool * 1000, "wall_ms": took * 1000,
                    "gc_ms": (_state["gc_t"] - g0) * 1000,
                    "gc_n": [b - a for a, b in zip(n0, _state["gc_n"], strict=True)],
                    "threads": threads}) + "\n")

        return await original(traced, *a, **kw)

    anyio.to_thread.run_sync = run_sync  # type: ignore[assignment]
    from gitquarry.mcp.server import serve_stdio

    serve_stdio(Path(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
