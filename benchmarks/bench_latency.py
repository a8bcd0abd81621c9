"""Benchmark: online latency of one query through the fitted pipeline, against batching.

The fitted pipeline ``DenseRetriever(100) -> RiskAwareReranker -> GraphSmoother ->
RuleFilter`` (on synthetic registries of 2,032 and 100,000 tools, as in ``bench_scale``)
answers 1,000 single-query calls, each from an already encoded query: building the
full-pool batch (its cosine is deferred; the retriever's int8 index finds the top 100
without it at 100k tools) and ``Pipeline.predict``. The p50 and p99 of those calls are
compared with the per-query cost of predicting the same 1,000 queries as one batch, in the
same process and interleaved with them: ten rounds, each one batched predict (timed) then
100 single calls with the scan on every core (``DenseRetriever(n_jobs=-1)``), then the same
100 on one thread. The batched cost is the median of the rounds (one batched predict swings
from 0.7 to 1.5 s on the shared machine); the per-round ratios are reported too.

End to end at the largest size: 200 fresh query texts, each encoded by the packaged encoder
and predicted, with the default encoder backend and with PyTorch taking turns by blocks of 20.

Throughput: a server calls the fitted pipeline from many threads. The same single-query
calls run from a pool of 1, 2 and 4 threads (the rounds interleave the pool sizes, so the
machine's drifting load hits each alike); the answers must equal the sequential ones.

Run ``python -m benchmarks.bench_latency`` (full) or ``--quick`` (seconds).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks._common import (
    RESULTS,
    environment,
    in_turns,
    md_table,
    percentiles,
    synthetic_queries,
    synthetic_registry,
    write_json,
    write_md,
)
from benchmarks.bench_scale import K, make_steps

FULL = dict(sizes=(2_032, 100_000), n_train=1000, n_calls=1000, dim=384, epochs=2,
            n_encode=200, rounds=10, threads=(1, 2, 4), throughput_rounds=5)
QUICK = dict(sizes=(200, 600), n_train=60, n_calls=40, dim=32, epochs=1, n_encode=0,
             rounds=2, threads=(1, 2), throughput_rounds=1)
#: Issue 5's bound on a single call's overhead at 100k tools: p50 at most this many times
#: the batched per-query cost.
TARGET_RATIO = 3.0


def _fitted_pipeline(n_tools, *, n_train, dim, epochs, seed=0):
    from sklearn.pipeline import Pipeline

    from skriskrank import RankingBatch

    reg, emb, cluster = synthetic_registry(n_tools, dim, seed=seed)
    q_train, gold = synthetic_queries(emb, cluster, n_train, seed=seed + 1)
    pipe = Pipeline(make_steps(epochs, seed))
    pipe.fit(RankingBatch.full_pool(reg, q_train, emb), [set(reg.names[g]) for g in gold])
    return pipe, reg, emb, cluster


def _stage_breakdown(pipe, reg, emb, q, n):
    """Mean seconds per stage of single-query calls (a separate, shorter pass)."""
    from skriskrank import RankingBatch

    acc: dict[str, float] = {}
    for i in range(n):
        t0 = time.perf_counter()
        batch = RankingBatch.full_pool(reg, q[i : i + 1], emb)
        acc["batch (lazy cosine)"] = acc.get("batch (lazy cosine)", 0.0) + time.perf_counter() - t0
        for name, step in pipe.steps:
            t0 = time.perf_counter()
            batch = step.transform(batch)
            acc[name] = acc.get(name, 0.0) + time.perf_counter() - t0
        t0 = time.perf_counter()
        batch.ranked_names(K)
        acc["ranked_names"] = acc.get("ranked_names", 0.0) + time.perf_counter() - t0
    return {k: v / n for k, v in acc.items()}


def run_size(n_tools, *, n_train, n_calls, dim, epochs, rounds, n_encode=0, seed=0):
    from skriskrank import RankingBatch

    pipe, reg, emb, cluster = _fitted_pipeline(n_tools, n_train=n_train, dim=dim,
                                               epochs=epochs, seed=seed)
    q, _ = synthetic_queries(emb, cluster, n_calls, seed=seed + 5)

    def batched():
        return pipe.predict(RankingBatch.full_pool(reg, q, emb))

    expected = batched()  # also the warm-up
    # Interleaved rounds: each times one batched predict, then its share of the single
    # calls. The load of this shared machine drifts over seconds, so both sides of the
    # ratio are sampled under the same conditions, and each by a typical value (median,
    # p50), not one side's luckiest run.
    rounds = max(1, rounds)
    # The single calls run twice per round: the retriever's scan on every core
    # (n_jobs=-1; the batched predict uses both through BLAS) and on one thread.
    variants = {"all_cores": -1, "one_thread": None}
    batch_times = []
    single = {v: np.empty(n_calls) for v in variants}
    same = True
    splits = np.array_split(np.arange(n_calls), rounds)
    for calls in splits:
        t0 = time.perf_counter()
        batched()
        batch_times.append(time.perf_counter() - t0)
        for v, n_jobs in variants.items():
            pipe.set_params(retrieve__n_jobs=n_jobs)
            for i in calls:
                t0 = time.perf_counter()
                top = pipe.predict(RankingBatch.full_pool(reg, q[i : i + 1], emb))
                single[v][i] = time.perf_counter() - t0
                same &= bool(np.array_equal(top[0], expected[i]))
    pipe.set_params(retrieve__n_jobs=-1)
    per_query = float(np.median(batch_times)) / n_calls
    one = percentiles(single["one_thread"])
    single = single["all_cores"]
    round_p50 = [float(np.median(single[calls])) for calls in splits]
    stats = percentiles(single)
    # The memory-bound floor of an exact single call: one query's cosine against every tool
    # reads the whole float32 tool matrix, which a batch reads once for all its queries.
    cosine = np.empty(n_calls)
    for i in range(n_calls):
        t0 = time.perf_counter()
        q[i : i + 1] @ emb.T
        cosine[i] = time.perf_counter() - t0
    cos_p50 = float(np.median(cosine))
    return {
        "single_cosine_p50_seconds": cos_p50,
        "cosine_floor_over_batched": cos_p50 / per_query,
        "n_tools": n_tools,
        "n_calls": n_calls,
        "single_call_seconds": stats,
        "batched_seconds": float(np.median(batch_times)),
        "batched_seconds_per_round": batch_times,
        "batched_per_query_seconds": per_query,
        "best_batched_per_query_seconds": min(batch_times) / n_calls,
        "p50_over_batched_per_round": [
            p / (b / n_calls) for p, b in zip(round_p50, batch_times, strict=True)],
        "single_call_seconds_one_thread": one,
        "p50_over_batched_one_thread": one["p50"] / per_query,
        "p50_over_batched": stats["p50"] / per_query,
        "p99_over_batched": stats["p99"] / per_query,
        "single_matches_batched": same,
        "single_stage_means": _stage_breakdown(pipe, reg, emb, q, min(n_calls, 100)),
        **({"end_to_end": end_to_end(pipe, reg, emb, n_encode)} if n_encode else {}),
    }


def throughput(n_tools, *, n_train, n_calls, dim, epochs, threads, rounds, seed=0):
    """Single-query calls per second from a pool of ``t`` threads, for each ``t``."""
    from concurrent.futures import ThreadPoolExecutor

    from skriskrank import RankingBatch

    pipe, reg, emb, cluster = _fitted_pipeline(n_tools, n_train=n_train, dim=dim,
                                               epochs=epochs, seed=seed)
    q, _ = synthetic_queries(emb, cluster, n_calls, seed=seed + 7)
    expected = pipe.predict(RankingBatch.full_pool(reg, q, emb))

    def call(i):
        return pipe.predict(RankingBatch.full_pool(reg, q[i : i + 1], emb))[0]

    seconds = {t: [] for t in threads}
    same = True
    for _ in range(rounds):
        for t in threads:
            with ThreadPoolExecutor(t) as pool:
                t0 = time.perf_counter()
                tops = list(pool.map(call, range(n_calls)))
                seconds[t].append(time.perf_counter() - t0)
            same &= all(np.array_equal(a, b) for a, b in zip(tops, expected, strict=True))
    qps = {t: n_calls / float(np.median(s)) for t, s in seconds.items()}
    return {"n_tools": n_tools, "n_calls": n_calls, "rounds": rounds,
            "queries_per_second": {str(t): v for t, v in qps.items()},
            "speedup_over_one_thread": {str(t): v / qps[threads[0]] for t, v in qps.items()},
            "answers_match_sequential": same}


def end_to_end(pipe, reg, emb, n):
    """One fresh query encoded, then predicted by ``pipe``, with each encoder backend.

    The default backend and PyTorch (the default before it) take turns on the same texts, by
    blocks of 20; the encoding alone and the whole call are timed.
    """
    from skriskrank import FrozenEmbedder, RankingBatch, ToolRegistry
    from skriskrank._encoder import DEFAULT_BACKEND

    tool = ToolRegistry.from_records([{"name": "read_file", "description": "Read a file",
                                       "risk": 1}])
    try:
        encoders = {b: FrozenEmbedder(tool, cache=False, backend=b).fit(["warm up"])
                    for b in (DEFAULT_BACKEND, "torch")}
    except ValueError as exc:  # the packaged model is missing
        return {"error": str(exc)}
    seconds = {b: {"encoding": np.empty(n), "end_to_end": np.empty(n)} for b in encoders}
    for b, i in in_turns(n, list(encoders)):
        text = f"delete the log files older than {i} days and email me a summary"
        t0 = time.perf_counter()
        query = encoders[b].encode([text])
        t1 = time.perf_counter()
        pipe.predict(RankingBatch.full_pool(reg, query, emb))
        seconds[b]["encoding"][i] = t1 - t0
        seconds[b]["end_to_end"][i] = time.perf_counter() - t0
    return {"n_calls": n, "n_tools": len(reg), "model": encoders["torch"].model_id_,
            "default": DEFAULT_BACKEND,
            "seconds": {b: {k: percentiles(v) for k, v in by.items()}
                        for b, by in seconds.items()}}


def _markdown(res):
    rows = []
    for r in res["results"]:
        s = r["single_call_seconds"]
        rows.append([f"{r['n_tools']:,}", s["p50"] * 1e3, s["p99"] * 1e3,
                     r["batched_per_query_seconds"] * 1e3, r["p50_over_batched"],
                     r["p99_over_batched"],
                     r["single_call_seconds_one_thread"]["p50"] * 1e3,
                     r["p50_over_batched_one_thread"],
                     r["single_cosine_p50_seconds"] * 1e3,
                     r["cosine_floor_over_batched"],
                     "yes" if r["single_matches_batched"] else "NO"])
    round_lines = [
        f"- {r['n_tools']:,} tools: "
        + ", ".join(f"{x:.2f}" for x in r["p50_over_batched_per_round"])
        + f" (best batched run: {r['best_batched_per_query_seconds'] * 1e3:.3f} ms/query)"
        for r in res["results"]
    ]
    stage_rows = []
    for r in res["results"]:
        for k, v in r["single_stage_means"].items():
            stage_rows.append([f"{r['n_tools']:,}", k, v * 1e3])
    enc = next((r["end_to_end"] for r in res["results"] if "end_to_end" in r), None)
    lines = [
        "# Online latency: one query through the fitted pipeline",
        "",
        f"Load average {res['environment'].get('load_average')}; the target is p50 at most "
        f"{TARGET_RATIO}x the batched per-query cost at 100k tools.",
        "",
        md_table(["tools", "p50 ms", "p99 ms", "batched ms/query", "p50 / batched",
                  "p99 / batched", "1 thread: p50 ms", "1 thread: p50 / batched",
                  "cosine alone p50 ms", "cosine alone / batched", "same top-5"], rows),
        "",
        "The single calls run with `DenseRetriever(n_jobs=-1)`: the int8 scan on both cores, "
        "as the batched predict uses both through BLAS. The *1 thread* columns are the same "
        "calls with `n_jobs=None`, the default, measured in the same rounds.",
        "",
        f"Single calls and batched predicts are interleaved in {res['config']['rounds']} "
        "rounds; *batched ms/query* is the median round. p50 / batched of each round:",
        "",
        *round_lines,
        "",
        "*cosine alone*: one query's exact float32 cosine against every tool, nothing else. "
        "It reads the whole tool matrix (153.6 MB at 100k x 384), which a batch reads once "
        "for all its queries, so it bounds from below what a single call that computes it "
        "costs. The pipeline does not compute it: the full-pool batch defers its cosine, "
        "and `DenseRetriever(search='auto')` finds the same top 100 from an int8 copy of "
        "the tool embeddings (a quarter of the bytes) with exact float32 rescoring, inside "
        "the *retrieve* stage below (`skriskrank/_fast/_index.py`).",
        "",
        "## Mean ms per stage of a single call",
        "",
        md_table(["tools", "stage", "ms"], stage_rows),
    ]
    if enc and "seconds" in enc:
        by, default, before = enc["seconds"], enc["default"], "torch"
        lines += ["", f"## One query end to end at {enc['n_tools']:,} tools, encoding included",
                  "", f"{enc['n_calls']} fresh queries, each encoded ({enc['model']}) and "
                  "predicted, the encoder backends taking turns by blocks of 20 calls (ms):", "",
                  md_table(["encoder backend", "encoding p50", "encoding p99",
                            "end to end p50", "end to end p99"],
                           [[b + (" (default)" if b == default else ""),
                             *(by[b][k][p] * 1e3 for k in ("encoding", "end_to_end")
                               for p in ("p50", "p99"))] for b in by]),
                  "", f"End to end p50: {default} {by[default]['end_to_end']['p50'] * 1e3:.1f} "
                  f"ms, {before} {by[before]['end_to_end']['p50'] * 1e3:.1f} ms "
                  f"({by[before]['end_to_end']['p50'] / by[default]['end_to_end']['p50']:.2f}x)."]
    elif enc:
        lines += ["", f"Query encoding not measured: {enc['error']}"]
    tp = res.get("throughput")
    if tp:
        ts = list(tp["queries_per_second"])
        lines += ["", f"## Throughput: single-query calls from a thread pool ({tp['n_tools']:,} "
                  f"tools, {tp['n_calls']} calls, median of {tp['rounds']} rounds)", "",
                  md_table(["threads", "queries/s", "speed-up over 1 thread"],
                           [[t, tp["queries_per_second"][t], tp["speedup_over_one_thread"][t]]
                            for t in ts]),
                  "", f"Answers equal the sequential ones: "
                  f"{'yes' if tp['answers_match_sequential'] else 'NO'}. "
                  f"The machine has {res['environment'].get('cpu_count')} cores."]
    return "\n".join(lines)


def plot(res, path):
    """Single-call p50/p99 against the batched per-query cost, per registry size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = res["results"]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(x - 0.27, [r["single_call_seconds"]["p50"] * 1e3 for r in rows], 0.27, label="p50")
    ax.bar(x, [r["single_call_seconds"]["p99"] * 1e3 for r in rows], 0.27, label="p99")
    ax.bar(x + 0.27, [r["batched_per_query_seconds"] * 1e3 for r in rows], 0.27,
           label="batched, per query")
    ax.set_xticks(x, [f"{r['n_tools']:,} tools" for r in rows])
    ax.set_ylabel("ms per query")
    ax.set_title("One query through the fitted pipeline (encoding excluded)", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    args = parser.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    if args.sizes:
        cfg["sizes"] = tuple(args.sizes)
    rows = []
    for n in cfg["sizes"]:
        # Queries encoded by the packaged model (384-d) at the largest size only.
        r = run_size(n, n_train=cfg["n_train"], n_calls=cfg["n_calls"], dim=cfg["dim"],
                     epochs=cfg["epochs"], rounds=cfg["rounds"],
                     n_encode=cfg["n_encode"] if n == max(cfg["sizes"]) else 0)
        rows.append(r)
        print(f"{n:>7,} tools: p50 {r['single_call_seconds']['p50'] * 1e3:.2f} ms, batched "
              f"{r['batched_per_query_seconds'] * 1e3:.2f} ms/query, "
              f"x{r['p50_over_batched']:.2f} "
              f"(one thread: x{r['p50_over_batched_one_thread']:.2f})", file=sys.stderr)
    res = {"environment": environment(), "config": cfg, "quick": args.quick,
           "results": rows, "target_ratio": TARGET_RATIO}
    small = min(cfg["sizes"])
    res["throughput"] = throughput(small, n_train=cfg["n_train"], n_calls=cfg["n_calls"],
                                   dim=cfg["dim"], epochs=cfg["epochs"],
                                   threads=cfg["threads"], rounds=cfg["throughput_rounds"])
    print("throughput (queries/s by threads):", {
        t: round(v, 1) for t, v in res["throughput"]["queries_per_second"].items()},
        file=sys.stderr)
    big = max(rows, key=lambda r: r["n_tools"])
    res["meets_target_at_largest"] = bool(big["p50_over_batched"] <= TARGET_RATIO)
    write_json(args.out, "bench_latency", res)
    write_md(args.out, "bench_latency", _markdown(res))
    plot(res, Path(args.out) / "bench_latency.png")
    return res


if __name__ == "__main__":
    main()
