"""The gitquarry MCP server under cProfile, per thread, CPU time (issue 21 target 3).

``bench_mcp_warm.py --profile DIR`` starts this instead of ``python -m gitquarry mcp``: the
same server (``gitquarry.mcp.server.serve_stdio``), with three ``cProfile.Profile`` objects
whose timer is ``time.thread_time`` (CPU of the calling thread, so a thread waiting on
another costs nothing and the three add up to the process's Python CPU):

- ``loop``: the event-loop thread for the whole session (JSON-RPC, the SDK's argument
  validation, stdio);
- ``tool``: the ``search_git_history`` call on the SDK's worker thread (the search and the
  answer layer), enabled only around that call;
- ``embed``: what ``ThreadPoolExecutor.submit`` runs (the query embedding and the vector
  product on ``gq-embed``).

The first ``--skip`` tool calls are not profiled (the model load, first reads). When the
client disconnects, ``DIR/{loop,tool,embed}.prof`` are written (``pstats`` files) with a
``summary.txt`` of each by cumulative and own time.

Usage (normally through ``bench_mcp_warm.py``)::

    python benchmarks/mcp_profiled_server.py --project WS --out DIR [--skip 1]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import cProfile
import functools
import io
import pstats
import sys
import threading
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--skip", type=int, default=1)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    profiles = {name: cProfile.Profile(time.thread_time) for name in ("loop", "tool", "embed")}
    calls = {"tool": 0}
    cpu = {"tool": 0.0, "embed": 0.0}
    lock = threading.Lock()

    import anyio.to_thread

    original_run_sync = anyio.to_thread.run_sync

    async def run_sync(func: Any, *a: Any, **kw: Any) -> Any:
        target = getattr(func, "func", func)
        if getattr(target, "__name__", "") != "search_git_history":
            return await original_run_sync(func, *a, **kw)

        def profiled() -> Any:
            calls["tool"] += 1
            if calls["tool"] <= args.skip:
                return func()
            start = time.thread_time()
            profiles["tool"].enable()
            try:
                return func()
            finally:
                profiles["tool"].disable()
                cpu["tool"] += time.thread_time() - start

        return await original_run_sync(profiled, *a, **kw)

    anyio.to_thread.run_sync = run_sync  # type: ignore[assignment]
    original_submit = concurrent.futures.ThreadPoolExecutor.submit

    def submit(self: Any, fn: Any, /, *a: Any, **kw: Any) -> Any:
        @functools.wraps(fn)
        def profiled(*pa: Any, **pkw: Any) -> Any:
            if calls["tool"] <= args.skip:
                return fn(*pa, **pkw)
            with lock:
                start = time.thread_time()
                profiles["embed"].enable()
                try:
                    return fn(*pa, **pkw)
                finally:
                    profiles["embed"].disable()
                    cpu["embed"] += time.thread_time() - start

        return original_submit(self, profiled, *a, **kw)

    concurrent.futures.ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]

    from gitquarry.mcp.server import serve_stdio

    loop_start = time.thread_time()
    profiles["loop"].enable()
    try:
        serve_stdio(args.project)
    finally:
        profiles["loop"].disable()
        loop_cpu = time.thread_time() - loop_start
        summary = io.StringIO()
        profiled_calls = max(calls["tool"] - args.skip, 0)
        summary.write(f"tool calls {calls['tool']} (profiled {profiled_calls}); thread CPU "
                      f"s: loop {loop_cpu:.3f} (whole session), tool {cpu['tool']:.3f}, "
                      f"embed {cpu['embed']:.3f}\n")
        for name, prof in profiles.items():
            prof.dump_stats(str(args.out / f"{name}.prof"))
            for key in ("cumulative", "tottime"):
                summary.write(f"\n===== {name} by {key} =====\n")
                try:
                    pstats.Stats(prof, stream=summary).sort_stats(key).print_stats(45)
                except TypeError:  # nothing was profiled on that thread
                    summary.write("(empty)\n")
        (args.out / "summary.txt").write_text(summary.getvalue(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
