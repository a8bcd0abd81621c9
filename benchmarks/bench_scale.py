"""Benchmark: fit and predict the full pipeline on synthetic registries of 2k to 100k tools.

Each registry has clustered random unit embeddings (d = 384, the default encoder's size),
synthetic names and descriptions, risk levels drawn from UltraTool's distribution and
permission categories at UltraTool's rate (about 6% of tools hold one). The pipeline is the
real one, ``DenseRetriever(100) -> RiskAwareReranker -> GraphSmoother -> RuleFilter``, and
only the text encoder is skipped: batches are built with ``RankingBatch.full_pool`` from the
synthetic query and tool embeddings. It is fitted on 1,000 training queries and predicts
1,000 other queries.

Every size runs in a fresh subprocess so that its peak resident memory (``ru_maxrss``) is its
own. Per stage the script records the wall time, the peak memory traced by ``tracemalloc``
(numpy and Python allocations; torch's allocator is not traced) and the process's peak RSS
so far. It fits log-log growth exponents of each stage's time against the number of tools
and of the graph stage against the number of edges, and draws them.

Run ``python -m benchmarks.bench_scale`` (2k, 10k, 30k, 100k) or ``--quick`` (seconds,
in-process, and also checks the stage-by-stage run against ``Pipeline.predict``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import (
    RESULTS,
    StageMeter,
    environment,
    md_table,
    mib,
    peak_rss_bytes,
    synthetic_queries,
    synthetic_registry,
    warm_compiled_kernels,
    write_json,
    write_md,
)

FULL = dict(sizes=(2_000, 10_000, 30_000, 100_000), n_train=1000, n_test=1000, dim=384,
            epochs=3, subprocess=True)
QUICK = dict(sizes=(300, 900), n_train=80, n_test=60, dim=32, epochs=1, subprocess=False)
MEMORY_LIMIT_BYTES = 6 * 2**30
N_CANDIDATES = 100
K = 5


def make_steps(epochs, seed=0):
    from skriskrank import DenseRetriever, RiskAwareReranker
    from skriskrank._filter import RuleFilter
    from skriskrank._graph import GraphSmoother

    return [
        ("retrieve", DenseRetriever(n_candidates=N_CANDIDATES)),
        ("rerank", RiskAwareReranker(epochs=epochs, random_state=seed)),
        ("smooth", GraphSmoother()),
        ("filter", RuleFilter(k=K)),
    ]


def run_size(n_tools, *, n_train, n_test, dim, epochs, seed=0, check_pipeline=False):
    """Fit and predict at one registry size, stage by stage."""
    from skriskrank import RankingBatch

    meter = StageMeter()
    t0 = time.perf_counter()
    with meter.stage("setup/registry"):
        reg, emb, cluster = synthetic_registry(n_tools, dim, seed=seed)
        q_train, gold_train = synthetic_queries(emb, cluster, n_train, seed=seed + 1)
        q_test, gold_test = synthetic_queries(emb, cluster, n_test, seed=seed + 2)
        y_train = [set(reg.names[g]) for g in gold_train]
    with meter.stage("setup/compile"):
        # The first call of each numba kernel in a process loads (or compiles) it, up to a
        # few seconds; outside the timed stages, like any other warm-up.
        warm_compiled_kernels(dim)
    steps = make_steps(epochs, seed)
    with meter.stage("fit/batch"):
        batch = RankingBatch.full_pool(reg, q_train, emb)
    for name, step in steps:
        needs_y = name in ("rerank", "smooth")
        with meter.stage(f"fit/{name}"):
            step.fit(batch, y_train if needs_y else None)
        if name != "filter":
            with meter.stage(f"fit/{name}.transform"):
                batch = step.transform(batch)
    del batch
    with meter.stage("predict/batch"):
        batch = RankingBatch.full_pool(reg, q_test, emb)
    for name, step in steps:
        with meter.stage(f"predict/{name}"):
            batch = step.transform(batch)
    top = batch.ranked_names(K)
    hits = [len(set(row) & set(reg.names[g])) / min(K, len(g))
            for row, g in zip(top, gold_test, strict=True)]
    smoother = dict(steps)["smooth"]
    res = {
        "n_tools": n_tools,
        "n_train": n_train,
        "n_test": n_test,
        "dim": dim,
        "stages": meter.stages,
        "n_edges": smoother.n_edges_,
        "edge_counts": smoother.edge_counts_,
        "graph_nnz": int(smoother.graph_.nnz),
        "graph_bytes": int(smoother.graph_.data.nbytes + smoother.graph_.indices.nbytes
                           + smoother.graph_.indptr.nbytes),
        "rerank_epochs": int(dict(steps)["rerank"].n_epochs_),
        "recall_at_5": float(np.mean(hits)),
        "fit_seconds": sum(v["seconds"] for k, v in meter.stages.items() if k.startswith("fit/")),
        "predict_seconds": sum(
            v["seconds"] for k, v in meter.stages.items() if k.startswith("predict/")
        ),
        "total_seconds": time.perf_counter() - t0,
        "peak_rss_bytes": peak_rss_bytes(),
    }
    if check_pipeline:
        from sklearn.pipeline import Pipeline

        pipe = Pipeline(make_steps(epochs, seed))
        pipe.fit(RankingBatch.full_pool(reg, q_train, emb), y_train)
        res["matches_pipeline_predict"] = bool(
            np.array_equal(pipe.predict(RankingBatch.full_pool(reg, q_test, emb)), top)
        )
    return res


def _child(n_tools, cfg, path):
    res = run_size(n_tools, n_train=cfg["n_train"], n_test=cfg["n_test"], dim=cfg["dim"],
                   epochs=cfg["epochs"])
    Path(path).write_text(json.dumps(res, default=float))


def _in_subprocess(n_tools, cfg):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "size.json"
        cmd = [sys.executable, "-m", "benchmarks.bench_scale", "--child", str(n_tools),
               "--child-config", json.dumps(cfg), "--child-out", str(path)]
        proc = subprocess.run(cmd, cwd=Path(__file__).resolve().parents[1],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return {"n_tools": n_tools, "failed": True, "returncode": proc.returncode,
                    "stderr_tail": proc.stderr[-3000:]}
        return json.loads(path.read_text())


def growth_exponents(rows, x_key="n_tools"):
    """Slope of log(seconds) against log(x) for every stage, over the sizes that ran."""
    ok = [r for r in rows if not r.get("failed")]
    if len(ok) < 2:
        return {}
    out = {}
    for stage in ok[0]["stages"]:
        x = np.log([r[x_key] if x_key != "n_edges" else max(r["n_edges"], 1) for r in ok])
        y = np.log([max(r["stages"][stage]["seconds"], 1e-6) for r in ok])
        out[stage] = float(np.polyfit(x, y, 1)[0])
    return out


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if not r.get("failed")]
    n = np.array([r["n_tools"] for r in ok])
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    for stage in ok[0]["stages"]:
        if stage.startswith("setup"):
            continue
        t = [max(r["stages"][stage]["seconds"], 1e-5) for r in ok]
        axes[0].loglog(n, t, marker="o", label=stage)
        m = [max(r["stages"][stage]["peak_traced_bytes"], 1) / 2**20 for r in ok]
        axes[1].loglog(n, m, marker="o", label=stage)
    ref = n / n[0]
    axes[0].loglog(n, ref * 0.01, "k--", lw=0.8, label="slope 1")
    axes[0].loglog(n, ref**2 * 0.01, "k:", lw=0.8, label="slope 2")
    axes[0].set(xlabel="tools", ylabel="seconds", title="time per stage")
    axes[1].loglog(n, [r["peak_rss_bytes"] / 2**20 for r in ok], "k-", lw=2, marker="s",
                   label="process peak RSS")
    axes[1].axhline(MEMORY_LIMIT_BYTES / 2**20, color="r", lw=0.8, ls="--", label="6 GiB")
    axes[1].set(xlabel="tools", ylabel="MiB", title="peak memory per stage (traced)")
    e = np.array([max(r["n_edges"], 1) for r in ok])
    axes[2].loglog(e, [r["stages"]["fit/smooth"]["seconds"] for r in ok], marker="o",
                   label="graph build (fit/smooth)")
    axes[2].loglog(e, [r["stages"]["predict/smooth"]["seconds"] for r in ok], marker="o",
                   label="smoothing (predict/smooth)")
    axes[2].set(xlabel="graph edges", ylabel="seconds", title="graph cost vs edges")
    for ax in axes:
        ax.grid(True, which="both", lw=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _markdown(res):
    rows = [r for r in res["results"] if not r.get("failed")]
    stages = [s for s in rows[0]["stages"] if not s.startswith("setup")] if rows else []
    t_rows = [[s] + [r["stages"][s]["seconds"] for r in rows]
              + [res["growth_vs_tools"].get(s, float("nan"))] for s in stages]
    m_rows = [[s] + [mib(r["stages"][s]["peak_traced_bytes"]) for r in rows] for s in stages]
    sizes = [f"{r['n_tools']:,}" for r in rows]
    summary = [[f"{r['n_tools']:,}", r["n_edges"], r["edge_counts"]["semantic"],
                r["edge_counts"]["permission"], r["fit_seconds"], r["predict_seconds"],
                mib(r["peak_rss_bytes"]), "yes" if r["peak_rss_bytes"] < MEMORY_LIMIT_BYTES
                else "NO", r["recall_at_5"]] for r in rows]
    failed = [r for r in res["results"] if r.get("failed")]
    lines = [
        "# Scale benchmark: the full pipeline on synthetic registries",
        "",
        f"{res['config']['n_train']} training and {res['config']['n_test']} test queries, "
        f"d = {res['config']['dim']}, reranker epochs = {res['config']['epochs']}; "
        f"load average {res['environment'].get('load_average')}.",
        "",
        md_table(["tools", "edges", "semantic", "permission", "fit s", "predict s",
                  "peak RSS MiB", "< 6 GiB", "recall@5"], summary),
        "",
        "## Seconds per stage (last column: log-log slope against the number of tools)",
        "",
        md_table(["stage"] + sizes + ["slope"], t_rows),
        "",
        "## Peak traced memory per stage (MiB; numpy and Python allocations)",
        "",
        md_table(["stage"] + sizes, m_rows),
        "",
        f"Graph stages against edges (log-log slope): {res['growth_vs_edges']}",
    ]
    for r in failed:
        lines += ["", f"**{r['n_tools']:,} tools failed** (return code {r['returncode']}):",
                  "```", r["stderr_tail"], "```"]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-config", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.child, json.loads(args.child_config), args.child_out)
        return None
    cfg = dict(QUICK if args.quick else FULL)
    if args.sizes:
        cfg["sizes"] = tuple(args.sizes)
    rows = []
    for n in cfg["sizes"]:
        if cfg["subprocess"]:
            row = _in_subprocess(n, cfg)
        else:
            row = run_size(n, n_train=cfg["n_train"], n_test=cfg["n_test"], dim=cfg["dim"],
                           epochs=cfg["epochs"], check_pipeline=args.quick)
        rows.append(row)
        print(f"{n:>7,} tools: " + ("FAILED" if row.get("failed") else
              f"fit {row['fit_seconds']:.1f}s predict {row['predict_seconds']:.1f}s "
              f"peak RSS {mib(row['peak_rss_bytes']):.0f} MiB edges {row['n_edges']:,}"),
              file=sys.stderr)
    res = {
        "environment": environment(),
        "config": cfg,
        "quick": args.quick,
        "results": rows,
        "growth_vs_tools": growth_exponents(rows),
        "growth_vs_edges": {k: v for k, v in growth_exponents(rows, "n_edges").items()
                            if k.endswith("smooth") or k.endswith("smooth.transform")},
        "memory_limit_bytes": MEMORY_LIMIT_BYTES,
    }
    write_json(args.out, "bench_scale", res)
    write_md(args.out, "bench_scale", _markdown(res))
    if any(not r.get("failed") for r in rows):
        plot(rows, Path(args.out) / "bench_scale.png")
    return res


if __name__ == "__main__":
    main()
