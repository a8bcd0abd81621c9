"""Benchmark: what ``search_tools`` costs beyond ``predict``, at 2,032 tools.

An MCP ``search_tools`` call runs the pipeline once on a traced batch (each step records its
parts beside the scores) and reads each row's reason from it; ``predict`` runs the same steps
untraced. On UltraTool's registry (2,032 tools), with the full pipeline fitted on 800 of its
queries, each of 200 held-out queries (encoded once beforehand, so that both paths hit the
embedding cache) is answered, interleaved, by:

- ``predict``: ``pipe.predict([q])``;
- ``search``: ``skriskrank._explain.search(pipe, q, k)``, what the MCP handler calls;
- ``mcp``: ``search_tools`` through the official SDK's in-memory client, less the round trip
  of a no-op tool on a server of the same SDK (the protocol's own cost).

The target: the p50 of ``search`` and of ``mcp`` at most 1 ms above ``predict``.

Run ``python -m benchmarks.bench_search --data ../shared/data`` (``--quick``: seconds).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from benchmarks._common import RESULTS, environment, md_table, percentiles, write_json, write_md

TARGET_MS = 1.0


def _noop_server():
    import mcp.types as types
    from mcp.server import Server

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[types.Tool(name="noop", input_schema={
            "type": "object"})])

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text="{}")])

    return Server("noop", on_list_tools=list_tools, on_call_tool=call_tool)


def run(data, *, n_train, n_calls, epochs):
    import anyio
    from mcp import Client

    from skriskrank import build_pipeline
    from skriskrank._explain import search
    from skriskrank._serve import SEARCH_TOOL, make_server
    from skriskrank.datasets import load_ultratool

    ds = load_ultratool(Path(data) / "ultratool")
    order = np.random.default_rng(0).permutation(len(ds))
    train, test = ds.subset(order[:n_train]), ds.subset(order[n_train:n_train + n_calls])
    pipe = build_pipeline(ds.registry, epochs=epochs).fit(train.queries, train.relevant)
    pipe.predict(test.queries)  # every query encoded once: both paths hit the cache
    k = pipe.steps[-1][1].k
    times = {"predict": [], "search": [], "mcp": [], "noop": []}
    same = True

    async def calls():
        nonlocal same
        async with Client(make_server(pipe), mode="legacy") as client, \
                Client(_noop_server(), mode="legacy") as noop:
            for q in test.queries:
                t0 = time.perf_counter()
                top = pipe.predict([q])[0].tolist()
                t1 = time.perf_counter()
                rows = search(pipe, q, k)
                t2 = time.perf_counter()
                res = await client.call_tool(SEARCH_TOOL, {"query": q, "k": k})
                t3 = time.perf_counter()
                await noop.call_tool("noop", {})
                t4 = time.perf_counter()
                for name, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                    times[name].append(dt * 1e3)
                got = [t["name"] for t in res.structured_content["tools"]]
                same &= [r["name"] for r in rows] == got == [t for t in top if t is not None]

    anyio.run(calls)
    t = {name: np.asarray(v) for name, v in times.items()}
    return {"n_tools": len(ds.registry), "n_calls": n_calls, "same_tools": bool(same),
            "ms": {name: percentiles(v) for name, v in t.items()},
            "search_minus_predict_p50": float(np.median(t["search"] - t["predict"])),
            "mcp_minus_noop_minus_predict_p50": float(
                np.median(t["mcp"] - t["noop"] - t["predict"]))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    params = (dict(n_train=100, n_calls=20, epochs=1) if args.quick
              else dict(n_train=800, n_calls=200, epochs=10))
    result = run(args.data, **params)
    result["environment"] = environment()
    ms = result["ms"]
    rows = [[name, f"{ms[name]['p50']:.3f}", f"{ms[name]['p90']:.3f}", f"{ms[name]['p99']:.3f}"]
            for name in ("predict", "search", "mcp", "noop")]
    extra = [result["search_minus_predict_p50"], result["mcp_minus_noop_minus_predict_p50"]]
    text = (
        f"# search_tools against predict ({result['n_tools']:,} tools, "
        f"{result['n_calls']} queries)\n\n"
        "Each query answered by each path in turn (ms per call; `mcp` through the SDK's "
        "in-memory client, `noop` a no-op tool on the same SDK).\n\n"
        + md_table(["path", "p50", "p90", "p99"], rows)
        + f"\n\n- `search` - `predict`, median per query: **{extra[0]:.3f} ms** "
        f"(target <= {TARGET_MS} ms)\n"
        f"- `mcp` - `noop` - `predict`, median per query: **{extra[1]:.3f} ms** "
        f"(target <= {TARGET_MS} ms)\n"
        f"- the three paths returned the same tools for every query: {result['same_tools']}\n")
    write_json(args.out, "bench_search", result)
    write_md(args.out, "bench_search", text)
    print(text)
    return result


if __name__ == "__main__":
    main()
