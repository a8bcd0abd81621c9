"""Benchmark: what the gateway adds to a call and to a search, and how long it takes to start.

Everything runs side by side in one run, through the official SDK's stdio client:

- **calls**: ``get_current_time`` of mcp-server-time and ``read_text_file`` of the reference
  filesystem server, called directly on a server of their own and through the gateway's
  ``call_tool``, interleaved, 200 times each; the median of the per-call differences.
- **search at 1,000 tools**: 1,000 UltraTool tools served by one MCP server
  (``benchmarks/_catalogue_server.py``) behind the gateway. Per query (200 UltraTool
  queries, each asked once before timing so that every path has it encoded):
  ``search_tools`` through the gateway, against an in-process ``predict`` of the same
  catalogue's pipeline plus the round trip of a no-op tool on a server of the same SDK.
- **start-up** with the four servers: from launching the gateway to its first answered
  ``search_tools``, against the servers' own start (launch and initialize, all at once, the
  slowest) and the gateway's grading and indexing (its log), once per encoder backend
  (PyTorch and the default ONNX Runtime), interleaved.

Targets: a proxied call at most 3 ms above the direct one; ``search_tools`` at most 2 ms
above ``predict`` plus the round trip. Run ``python -m benchmarks.bench_gateway --data
../shared/data`` (``--quick``: fewer calls); the servers come from .ci/install-mcp-servers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import numpy as np

from benchmarks._common import RESULTS, environment, md_table, write_json, write_md

ROOT = Path(__file__).resolve().parents[1]
TARGET_CALL_MS, TARGET_SEARCH_MS = 3.0, 2.0


async def _session(stack, command, args, env=None, errlog=None):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(ROOT))
    errlog = errlog or stack.enter_context(tempfile.TemporaryFile("w+"))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def _gateway_args(config, *extra):
    # --no-cache: every start measured is a first start, and nothing is written to the home.
    return [sys.executable, ["-m", "skriskrank", "gateway", str(config), "--no-cache", *extra],
            {"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false"}]


async def _timed(fn):
    t0 = time.perf_counter()
    result = await fn()
    return 1e3 * (time.perf_counter() - t0), result


async def bench_calls(servers, tmp, n_calls):
    root = tmp / "files"
    root.mkdir()
    (root / "notes.txt").write_text("the notes\n" * 20)
    specs = {"time": (servers / "pyenv/bin/mcp-server-time", ["--local-timezone", "UTC"]),
             "filesystem": (servers / "node_modules/.bin/mcp-server-filesystem", [str(root)])}
    config = tmp / "calls.json"
    config.write_text(json.dumps({"mcpServers": {
        name: {"command": str(cmd), "args": args} for name, (cmd, args) in specs.items()}}))
    calls = {"get_current_time": ("time", {"timezone": "Asia/Tokyo"}),
             "read_text_file": ("filesystem", {"path": str(root / "notes.txt")})}
    out = {}
    async with AsyncExitStack() as stack:
        gateway = await _session(stack, *_gateway_args(config))
        direct = {name: await _session(stack, str(cmd), args) for name, (cmd, args)
                  in specs.items()}
        for tool, (server, arguments) in calls.items():
            via = {"name": tool, "arguments": arguments}
            for _ in range(5):  # warm: the gateway's catalogue is built on the first call
                await gateway.call_tool("call_tool", via)
                await direct[server].call_tool(tool, arguments)
            d, g = [], []
            for _ in range(n_calls):
                dt, r1 = await _timed(lambda s=direct[server], t=tool, a=arguments:
                                      s.call_tool(t, a))
                gt, r2 = await _timed(lambda v=via: gateway.call_tool("call_tool", v))
                assert not r1.is_error and not r2.is_error
                # The clock moves between the two calls; a file's text does not.
                assert tool == "get_current_time" or r1.content == r2.content
                d.append(dt)
                g.append(gt)
            out[tool] = {"direct_p50": statistics.median(d), "gateway_p50": statistics.median(g),
                         "added_p50": float(np.median(np.subtract(g, d)))}
    return out


async def bench_search(data, servers, tmp, n_queries):
    from skriskrank import RiskAuditor, load_tools, pretrained_pipeline
    from skriskrank.datasets import load_ultratool

    ds = load_ultratool(Path(data) / "ultratool")
    reg = ds.registry
    tools = [{"name": n, "description": d, "inputSchema": {"type": "object"}}
             for n, d in zip(reg.names[:1000], reg.descriptions[:1000], strict=True)]
    catalogue = tmp / "tools.json"
    catalogue.write_text(json.dumps({"tools": tools}))
    config = tmp / "search.json"
    config.write_text(json.dumps({"mcpServers": {"catalogue": {
        "command": sys.executable, "args": ["-m", "benchmarks._catalogue_server",
                                            str(catalogue)]}}}))
    # The gateway's catalogue, in process: the same tools (and the no-op), graded, indexed.
    noop = {"name": "noop", "description": "Do nothing.", "inputSchema": {"type": "object"}}
    pipe = pretrained_pipeline(RiskAuditor.pretrained().grade(load_tools(
        {"tools": [*tools, noop]})))
    queries = ds.queries[:n_queries]
    times = {"predict": [], "noop": [], "search": []}
    same = True
    async with AsyncExitStack() as stack:
        gateway = await _session(stack, *_gateway_args(config))
        direct = await _session(stack, sys.executable, ["-m", "benchmarks._catalogue_server",
                                                        str(catalogue)])
        k = int(pipe[-1].k)  # asked of the gateway too, whose own default differs
        for q in queries:  # each query encoded once by every path before timing
            await gateway.call_tool("search_tools", {"query": q, "k": k})
            pipe.predict([q])
        for q in queries:
            t0 = time.perf_counter()
            top = pipe.predict([q])[0].tolist()
            times["predict"].append(1e3 * (time.perf_counter() - t0))
            dt, _ = await _timed(lambda: direct.call_tool("noop", {}))
            times["noop"].append(dt)
            st, res = await _timed(lambda q=q: gateway.call_tool("search_tools",
                                                                 {"query": q, "k": k}))
            times["search"].append(st)
            same &= [t["name"] for t in res.structured_content["tools"]] == top
    t = {name: np.asarray(v) for name, v in times.items()}
    return {"n_tools": len(tools), "n_queries": len(queries), "same_tools": bool(same),
            **{f"{name}_p50": float(np.median(v)) for name, v in t.items()},
            "added_p50": float(np.median(t["search"] - t["predict"] - t["noop"]))}


async def bench_startup(servers, tmp, runs, backends=("torch", "onnx")):
    root, repo = tmp / "root", tmp / "repo"
    root.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    specs = {"filesystem": (servers / "node_modules/.bin/mcp-server-filesystem", [str(root)]),
             "memory": (servers / "node_modules/.bin/mcp-server-memory", []),
             "time": (servers / "pyenv/bin/mcp-server-time", []),
             "git": (servers / "pyenv/bin/mcp-server-git", ["--repository", str(repo)])}
    config = tmp / "startup.json"
    config.write_text(json.dumps({"mcpServers": {
        name: {"command": str(c), "args": a} for name, (c, a) in specs.items()}}))
    import anyio

    rows = []
    for run, backend in itertools.product(range(runs), backends):  # interleaved, side by side
        own = {}

        async def start(name, cmd, args, own=own):
            async with AsyncExitStack() as stack:
                own[name], _ = await _timed(lambda: _session(stack, str(cmd), args))

        async with anyio.create_task_group() as tg:
            for name, (cmd, args) in specs.items():
                tg.start_soon(start, name, cmd, args)
        with tempfile.TemporaryFile("w+") as errlog:
            t0 = time.perf_counter()
            async with AsyncExitStack() as stack:
                gateway = await _session(stack, *_gateway_args(config, "--backend", backend),
                                         errlog=errlog)
                initialized = time.perf_counter() - t0
                await gateway.call_tool("search_tools", {"query": "what time is it"})
                first = time.perf_counter() - t0
            errlog.seek(0)
            build = re.search(r"catalogue: (\d+) tools from \d+ servers in ([\d.]+) s",
                              errlog.read())
        rows.append({"run": run + 1, "backend": backend,
                     "initialize_s": initialized, "first_search_s": first,
                     "servers_s": max(own.values()) / 1e3, "tools": int(build[1]),
                     "grade_and_index_s": float(build[2])})
    return rows


def _import_seconds(runs=5):
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import skriskrank"], check=True, cwd=ROOT)
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


def main(argv=None):
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--servers", default=os.environ.get("SKRISKRANK_MCP_SERVERS",
                                                            str(ROOT / ".mcp-servers")))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    n_calls, n_queries, runs = (20, 20, 1) if args.quick else (200, 200, 3)
    servers = Path(args.servers)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        calls = anyio.run(bench_calls, servers, tmp, n_calls)
        search = anyio.run(bench_search, args.data, servers, tmp, n_queries)
        startup = anyio.run(bench_startup, servers, tmp, runs)
    result = {"calls": calls, "search": search, "startup": startup,
              "import_skriskrank_s": _import_seconds(), "n_calls": n_calls,
              "environment": environment()}
    call_rows = [[tool, f"{c['direct_p50']:.2f}", f"{c['gateway_p50']:.2f}",
                  f"**{c['added_p50']:.2f}**"] for tool, c in calls.items()]
    start_rows = [[r["run"], r["backend"], f"{r['servers_s']:.2f}", f"{r['initialize_s']:.2f}",
                   f"{r['grade_and_index_s']:.2f}", f"{r['first_search_s']:.2f}"]
                  for r in startup]
    text = (
        "# The gateway: calls, search, start-up\n\n"
        f"## Calls ({n_calls} interleaved per tool, ms, p50)\n\n"
        + md_table(["tool", "direct", "through the gateway", "added (median of differences)"],
                   call_rows)
        + f"\n\nTarget: at most {TARGET_CALL_MS} ms added.\n\n"
        f"## search_tools at {search['n_tools']:,} tools ({search['n_queries']} queries, ms)\n\n"
        + md_table(["path", "p50"], [["in-process predict", f"{search['predict_p50']:.2f}"],
                                     ["no-op tool round trip", f"{search['noop_p50']:.2f}"],
                                     ["search_tools through the gateway",
                                      f"{search['search_p50']:.2f}"]])
        + f"\n\n- added beyond predict + round trip, median per query: "
        f"**{search['added_p50']:.2f} ms** (target <= {TARGET_SEARCH_MS} ms)\n"
        f"- the gateway returned predict's tools for every query: {search['same_tools']}\n\n"
        "## Start-up with the filesystem, memory, time and git servers (s)\n\n"
        "Each run starts the gateway once per encoder backend (`--backend`; the default is "
        "onnx), one after the other; the encoder's graph already exported.\n\n"
        + md_table(["run", "encoder backend", "servers' own start (slowest)",
                    "gateway initialized", "grading and indexing", "first search answered"],
                   start_rows)
        + f"\n\n`import skriskrank`: {result['import_skriskrank_s']:.2f} s (median of 5).\n")
    write_json(args.out, "bench_gateway", result)
    write_md(args.out, "bench_gateway", text)
    print(text)
    return result


if __name__ == "__main__":
    main()
