"""Two MCP servers side by side, calls alternated: server CPU per ``search_git_history``
call of this checkout against another source tree (the anchor), in one run (issue 21
target 3: on a loaded machine only alternation makes the two comparable). Prints JSON.

Both servers serve ``--project`` (the anchor with ``PYTHONPATH=ANCHOR/src``); call i goes
to one then the other, the order swapping every call; both answer the same query, and the
answers are compared with ``index_state`` and ``next_cursor`` left out (``identical``).

Usage::

    git archive <commit> src | tar -x -C /tmp/anchor
    python benchmarks/bench_mcp_ab.py --project WS --anchor /tmp/anchor [--calls 100]
        [--mode-config lexical.toml]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_history import pct
from bench_mcp_warm import _cpu, _queries, _rss


def _children() -> set[int]:
    me, out = os.getpid(), set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == me:
                out.add(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    return out


def _answer(text: str) -> str:
    data = json.loads(text)
    data.pop("index_state", None)
    data.pop("next_cursor", None)
    return json.dumps(data, sort_keys=True)


async def _run(project: Path, anchor: Path, calls: int, env: dict[str, str]) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    sides: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 (the stack closes it)
        for side, extra in (("anchor", {"PYTHONPATH": str(anchor / "src")}), ("this", {})):
            before = _children()
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "gitquarry", "mcp", "--project", str(project)],
                env={**env, **extra})
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            pid = next(iter(_children() - before))
            sides[side] = {"session": session, "pid": pid, "cpu": [], "idle": _rss(pid)}
        identical = True
        differences: list[dict[str, Any]] = []  # the first few queries answered differently
        for i, query in enumerate(_queries(calls + 1, 7)):
            order = ("anchor", "this") if i % 2 == 0 else ("this", "anchor")
            texts = {}
            for side in order:
                s = sides[side]
                c = _cpu(s["pid"])
                result = await s["session"].call_tool("search_git_history", {
                    "query": query, "top_n": 10, "detail": "compact"})
                if i:  # the first call loads the model and reads the index
                    s["cpu"].append((_cpu(s["pid"]) - c) * 1000)
                if result.is_error:
                    raise RuntimeError(f"{side} call {i} failed: {result.content}")
                texts[side] = _answer(result.content[0].text)
            if texts["anchor"] != texts["this"]:
                identical = False
                if len(differences) < 3:
                    differences.append({"query": query, "anchor": json.loads(texts["anchor"]),
                                        "this": json.loads(texts["this"])})
        out: dict[str, Any] = {"identical": identical, "differences": differences}
        for side, s in sides.items():
            out[side] = {"server_cpu_p50_ms": round(statistics.median(s["cpu"]), 1),
                         "server_cpu_p95_ms": round(pct(s["cpu"], 95), 1),
                         "server_cpu_mean_ms": round(statistics.fmean(s["cpu"]), 1),
                         "idle": s["idle"], "after_calls": _rss(s["pid"])}
        return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, required=True)
    ap.add_argument("--anchor", type=Path, required=True)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--mode-config", type=Path, default=None,
                    help="a config file for both servers ($GITQUARRY_CONFIG), e.g. lexical")
    args = ap.parse_args(argv)
    env = dict(os.environ)
    if args.mode_config is not None:
        env["GITQUARRY_CONFIG"] = str(args.mode_config.resolve())
    result = {"project": str(args.project), "anchor": str(args.anchor),
              "calls": args.calls, "load_before": os.getloadavg(),
              **asyncio.run(_run(args.project.resolve(), args.anchor.resolve(), args.calls,
                                 env)),
              "load_after": os.getloadavg(),
              "note": "server CPU per call: the sum of its threads' schedstat run time (ns)"}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
