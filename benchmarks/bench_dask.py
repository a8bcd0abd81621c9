"""Benchmark: GridSearchCV on a 2-worker Dask cluster against the sequential search.

Issue 16's grid on UltraTool (1,000 queries, 2,032 tools) with the real pipeline
(``FrozenEmbedder -> DenseRetriever(100) -> RiskAwareReranker -> GraphSmoother ->
RuleFilter``): 4 ``rerank__risk_weight`` x 3 ``smooth__alpha`` x 3 ``rerank__random_state``
(the seeds) x 5 folds, 180 fits, ``refit=False``. In one process, one after the other:

1. the sequential search (``n_jobs=1``);
2. the same search inside ``joblib.parallel_backend("dask")`` with a
   ``distributed.Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True))``.

The report is the ratio of their wall times (sequential / cluster), with the cluster's
start-up (starting the workers, importing the library in them) timed apart, and whether the
two ``cv_results_`` hold the same scores. The embeddings of both searches come from an
on-disk cache (``FrozenEmbedder(cache=<directory>)``) that this process fills first: every
worker reports how many texts it encoded (it should be 0) and whether it ever loaded the
encoder. The reranker trains afresh in every fit, although ``risk_weight`` and ``alpha`` do
not change its training (``RiskAwareReranker(memory=...)`` would train 15 times, not 180):
this times the grid as a user would first write it.

3. What the default in-memory cache (``cache=True``) costs on a cluster: a smaller grid
   (the 4 risk weights, one alpha, one seed, 5 folds) on a fresh cluster, reporting what
   each worker encoded and how far its scores moved from the sequential ones.

Run ``python -m benchmarks.bench_dask`` (full, needs the data), ``--estimate`` (the full
data, 8 fits: to time one fit before the full run) or ``--quick`` (the packaged demo data, a
tiny grid: the smoke test's).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import (
    RESULTS,
    environment,
    md_table,
    warm_compiled_kernels,
    write_json,
    write_md,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SKRISKRANK_DATA", ROOT.parent / "shared" / "data"))
FULL = dict(data="ultratool", n_queries=None, folds=5, risk_weights=(0.0, 0.05, 0.1, 0.2),
            alphas=(0.0, 0.2, 0.5), seeds=(0, 1, 2), epochs=10)
ESTIMATE = dict(FULL, risk_weights=(0.0, 0.1), alphas=(0.2,), seeds=(0,), folds=4)
QUICK = dict(data="demo", n_queries=160, folds=2, risk_weights=(0.0, 0.2), alphas=(0.0, 0.4),
             seeds=(0,), epochs=1)
N_WORKERS = 2


def load_data(cfg, data_dir):
    if cfg["data"] == "demo":
        from skriskrank.datasets import load_demo

        ds = load_demo()
    else:
        from skriskrank.datasets import load_ultratool

        ds = load_ultratool(Path(data_dir) / "ultratool")
    return ds.subset(range(cfg["n_queries"])) if cfg["n_queries"] else ds


def make_pipeline(registry, cache, epochs):
    from skriskrank import build_pipeline

    pipe = build_pipeline(registry, n_candidates=100, cache=cache, epochs=epochs)
    return pipe.set_params(embed__show_progress_bar=False)


def make_search(pipe, registry, grid, folds, n_jobs):
    from sklearn.model_selection import GridSearchCV, KFold

    from skriskrank import make_ranking_scorer

    return GridSearchCV(pipe, grid, cv=KFold(folds, shuffle=True, random_state=0),
                        scoring={"ndcg": make_ranking_scorer("ndcg", k=5),
                                 "rvr": make_ranking_scorer("rvr", k=5, registry=registry)},
                        refit=False, n_jobs=n_jobs, error_score="raise")


def worker_state() -> dict:
    """What the calling process's embedding caches did, and its thread settings."""
    import torch

    from skriskrank import _encoder

    stores = list(_encoder._STORES.values())
    return {"pid": os.getpid(),
            "texts_encoded": sum(s.n_encoded for s in stores),
            "texts_served": sum(len(s.index) for s in stores),
            "encoder_loaded": bool(_encoder._MODELS),
            "torch_threads": torch.get_num_threads(),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")}


def start_cluster():
    """A local cluster of process workers that have imported the library, timed."""
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    # No dashboard; the scheduler's HTTP routes on a free port, not 8787, which another
    # cluster (a test's, run at the same time) may hold.
    cluster = LocalCluster(n_workers=N_WORKERS, threads_per_worker=1, processes=True,
                           dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"})
    client = Client(cluster)
    t_start = time.perf_counter() - t0
    # The imports and the numba kernels' loading happen once per worker process; done here,
    # they are not charged to the first fits of the timed search.
    t0 = time.perf_counter()
    client.run(warm_compiled_kernels)
    t_warm = time.perf_counter() - t0
    return cluster, client, {"start_seconds": t_start, "warm_seconds": t_warm}


def scores_of(cv: dict) -> dict:
    return {k: np.asarray(v, dtype=float) for k, v in cv.items() if "_test_" in k}


def compare(seq: dict, par: dict, index=None) -> dict:
    """Largest difference between the test scores of two cv_results_ (on ``index`` rows)."""
    a, b = scores_of(seq), scores_of(par)
    sel = slice(None) if index is None else index
    diffs = {k: float(np.max(np.abs(a[k][sel] - b[k]))) for k in b if not k.startswith("rank")}
    same_ranks = all(np.array_equal(np.argsort(-a[k][sel], kind="stable"),
                                    np.argsort(-b[k], kind="stable"))
                     for k in b if k.startswith("mean"))
    return {"identical": all(v == 0.0 for v in diffs.values()),
            "max_abs_diff": max(diffs.values()), "same_candidate_order": same_ranks,
            "max_abs_diff_by_key": diffs}


def grid_of(cfg, *, risk_weights=None, alphas=None, seeds=None):
    return {"rerank__risk_weight": list(risk_weights or cfg["risk_weights"]),
            "smooth__alpha": list(alphas or cfg["alphas"]),
            "rerank__random_state": list(seeds or cfg["seeds"])}


def main_comparison(ds, cfg, cache):
    import joblib

    from skriskrank import FrozenEmbedder

    X, y = list(ds.queries), list(ds.relevant)
    grid = grid_of(cfg)
    # Fill the disk cache (and this process's store) with every text, in one call each.
    embedder = FrozenEmbedder(ds.registry, cache=cache, show_progress_bar=False)
    t0 = time.perf_counter()
    batch = embedder.fit(X).transform(X)
    t_encode = time.perf_counter() - t0
    encoded_here = embedder.n_encoded()
    warm_compiled_kernels(batch.tool_embeddings.shape[1])

    t0 = time.perf_counter()
    seq = make_search(make_pipeline(ds.registry, cache, cfg["epochs"]), ds.registry, grid,
                      cfg["folds"], n_jobs=1).fit(X, y)
    t_seq = time.perf_counter() - t0
    print(f"sequential: {t_seq:.1f} s", file=sys.stderr)

    cluster, client, startup = start_cluster()
    try:
        t0 = time.perf_counter()
        with joblib.parallel_backend("dask"):
            par = make_search(make_pipeline(ds.registry, cache, cfg["epochs"]), ds.registry,
                              grid, cfg["folds"], n_jobs=-1).fit(X, y)
        t_par = time.perf_counter() - t0
        workers = list(client.run(worker_state).values())
    finally:
        client.close()
        cluster.close()
    print(f"cluster: {t_par:.1f} s", file=sys.stderr)
    n_fits = len(par.cv_results_["params"]) * cfg["folds"]
    work = {name: float(np.sum(s.cv_results_["mean_fit_time"] + s.cv_results_["mean_score_time"])
                        * cfg["folds"]) for name, s in (("sequential", seq), ("cluster", par))}
    return {
        "n_queries": len(X), "n_tools": len(ds.registry), "grid": grid, "folds": cfg["folds"],
        "n_fits": n_fits, "epochs": cfg["epochs"],
        "warm_up_encode_seconds": t_encode, "texts_encoded_by_this_process": encoded_here,
        "texts_encoded_by_this_process_during_searches": embedder.n_encoded() - encoded_here,
        "sequential_seconds": t_seq, "cluster_seconds": t_par, "cluster_startup": startup,
        "ratio": t_seq / t_par,
        "ratio_with_startup": t_seq / (t_par + startup["start_seconds"]
                                       + startup["warm_seconds"]),
        "fit_and_score_seconds_summed": work,
        "cv_results_equal": compare(seq.cv_results_, par.cv_results_),
        "workers": workers,
        "sequential_cv_results": {k: v for k, v in scores_of(seq.cv_results_).items()},
        "params": [dict(p) for p in seq.cv_results_["params"]],
    }


def default_cache_cost(ds, cfg, main):
    """The small grid with ``cache=True`` on a fresh cluster: what the workers re-encode."""
    import joblib

    X, y = list(ds.queries), list(ds.relevant)
    alpha = 0.2 if 0.2 in cfg["alphas"] else cfg["alphas"][0]
    grid = grid_of(cfg, alphas=[alpha], seeds=[cfg["seeds"][0]])
    # The same candidates' rows in the main comparison's sequential search.
    seed = cfg["seeds"][0]
    rows = np.array([i for i, p in enumerate(main["params"])
                     if p["smooth__alpha"] == alpha and p["rerank__random_state"] == seed])
    cluster, client, startup = start_cluster()
    try:
        t0 = time.perf_counter()
        with joblib.parallel_backend("dask"):
            par = make_search(make_pipeline(ds.registry, True, cfg["epochs"]), ds.registry,
                              grid, cfg["folds"], n_jobs=-1).fit(X, y)
        t_par = time.perf_counter() - t0
        workers = list(client.run(worker_state).values())
    finally:
        client.close()
        cluster.close()
    if [main["params"][i] for i in rows] != [dict(p) for p in par.cv_results_["params"]]:
        raise RuntimeError("the small grid's candidates are not rows of the main grid")
    seq = main["sequential_cv_results"]
    return {
        "grid": grid, "n_fits": len(par.cv_results_["params"]) * cfg["folds"],
        "cluster_seconds": t_par, "cluster_startup": startup,
        "distinct_texts": len(ds.registry) + len(set(X)), "workers": workers,
        "vs_sequential": compare(seq, par.cv_results_, index=rows),
    }


def _markdown(res):
    m = res["main"]
    eq = m["cv_results_equal"]
    lines = [
        "# GridSearchCV on a 2-worker Dask LocalCluster against the sequential search", "",
        f"{m['n_queries']} queries x {m['n_tools']} tools ({res['config']['data']}), "
        f"{len(m['grid']['rerank__risk_weight'])} risk weights x "
        f"{len(m['grid']['smooth__alpha'])} alphas x {len(m['grid']['rerank__random_state'])} "
        f"seeds x {m['folds']} folds = {m['n_fits']} fits, {m['epochs']} epochs each; "
        f"{res['environment']['cpu_count']} CPUs, load average "
        f"{res['environment'].get('load_average')}.", "",
        md_table(["", "value"], [
            ["sequential search s (n_jobs=1)", m["sequential_seconds"]],
            ["cluster search s (2 workers x 1 thread)", m["cluster_seconds"]],
            ["**ratio sequential / cluster**", f"**{m['ratio']:.2f}**"],
            ["cluster start s / worker imports and kernels s",
             f"{m['cluster_startup']['start_seconds']:.1f} / "
             f"{m['cluster_startup']['warm_seconds']:.1f}"],
            ["ratio with the start-up", m["ratio_with_startup"]],
            ["fit + score s summed over fits (sequential / cluster)",
             f"{m['fit_and_score_seconds_summed']['sequential']:.0f} / "
             f"{m['fit_and_score_seconds_summed']['cluster']:.0f}"],
            ["cv_results_ test scores identical", eq["identical"]],
            ["largest score difference", eq["max_abs_diff"]],
            ["texts encoded here before / during the searches",
             f"{m['texts_encoded_by_this_process']} / "
             f"{m['texts_encoded_by_this_process_during_searches']}"],
        ]),
        "", "Workers of the main comparison (embedding cache on disk, filled by the client):", "",
        md_table(["worker pid", "texts encoded", "texts served", "encoder loaded",
                  "torch threads", "OMP_NUM_THREADS"],
                 [[w["pid"], w["texts_encoded"], w["texts_served"], w["encoder_loaded"],
                   w["torch_threads"], w["OMP_NUM_THREADS"]] for w in m["workers"]]),
    ]
    d = res.get("default_cache")
    if d:
        v = d["vs_sequential"]
        lines += [
            "", "## The default in-memory cache (cache=True) on a fresh cluster", "",
            f"{len(d['grid']['rerank__risk_weight'])} risk weights x 1 alpha x 1 seed x "
            f"{m['folds']} folds = {d['n_fits']} fits, {d['cluster_seconds']:.1f} s after a "
            f"{d['cluster_startup']['start_seconds']:.1f} s start; {d['distinct_texts']} "
            "distinct texts (tools and queries).", "",
            md_table(["worker pid", "texts encoded", "texts served", "encoder loaded"],
                     [[w["pid"], w["texts_encoded"], w["texts_served"], w["encoder_loaded"]]
                      for w in d["workers"]]),
            "",
            f"- Against the sequential search's rows for the same candidates: scores identical "
            f"{v['identical']}, largest difference {v['max_abs_diff']:.3g}, same order of the "
            f"candidates {v['same_candidate_order']}.",
        ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="demo data, tiny grid (smoke test)")
    size.add_argument("--estimate", action="store_true", help="full data, 8 fits")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--skip-default-cache", action="store_true",
                        help="skip part 3 (the cache=True cluster run)")
    args = parser.parse_args(argv)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(name, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    cfg = dict(QUICK if args.quick else ESTIMATE if args.estimate else FULL)
    ds = load_data(cfg, args.data)
    res = {"environment": environment(), "config": cfg,
           "mode": "quick" if args.quick else "estimate" if args.estimate else "full"}
    with tempfile.TemporaryDirectory(prefix="skriskrank-embeddings-") as cache:
        res["main"] = main_comparison(ds, cfg, cache)
    print(f"sequential / cluster = {res['main']['ratio']:.2f}", file=sys.stderr)
    if not args.skip_default_cache:
        res["default_cache"] = default_cache_cost(ds, cfg, res["main"])
    write_json(args.out, "bench_dask", res)
    write_md(args.out, "bench_dask", _markdown(res))
    return res


if __name__ == "__main__":
    main()
