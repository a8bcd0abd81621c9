"""Benchmark: the cost of model selection, and threads and pickling under process workers.

Part 1, model selection (issue 5, target 6). On UltraTool with the real pipeline
(``FrozenEmbedder(cache=...) -> DenseRetriever(100) -> RiskAwareReranker -> GraphSmoother
-> RuleFilter``) it times, side by side in one process:

* one 5-fold ``cross_validate`` at ``risk_weight=0.1``;
* a ``GridSearchCV`` over 4 ``risk_weight`` values x the same 5 folds (``refit=False``, so
  that both do the same 5-fold work per candidate; the refit is timed on its own).

``risk_weight`` acts at inference only, so with ``RiskAwareReranker(memory=...)`` (a fresh
cache directory for each of the two timings, so that neither reuses the other's training)
the grid should train 5 times, not 20. The script counts the trainings, checks that the
embeddings come from the cache (``FrozenEmbedder.n_encoded()`` stays 0) and reports the
grid's cost over the single cross-validation (target at most 1.5x).

Part 2, threads and pickling (target 7). A ``GridSearchCV(n_jobs=2)`` over a small grid runs
with a probe step after the reranker that records, inside each worker process, torch's
thread counts, the BLAS/OpenMP pools seen by threadpoolctl and the thread environment
variables. The fitted pipeline is pickled, its size recorded, and sent to two worker
processes that predict with it; their predictions must equal the parent's.

Run ``python -m benchmarks.bench_gridsearch`` (full, needs the data and the packaged
encoder's cached embeddings) or ``--quick`` (a slice of UltraTool, 2 folds).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

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
FULL = dict(n_queries=None, folds=5, grid=(0.0, 0.05, 0.1, 0.2), epochs=10,
            probe_queries=300, probe_folds=2, probe_grid=(0.0, 0.1))
QUICK = dict(n_queries=120, folds=2, grid=(0.0, 0.1), epochs=1,
             probe_queries=80, probe_folds=2, probe_grid=(0.0, 0.1))
TARGET_RATIO = 1.5
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "TOKENIZERS_PARALLELISM", "LOKY_MAX_CPU_COUNT")


def thread_state() -> dict:
    """Thread settings of the calling process."""
    import torch
    from threadpoolctl import threadpool_info

    from skriskrank import DenseRetriever
    from skriskrank._encoder import (
        DEFAULT_MAX_SEQ_LENGTH,
        DEFAULT_MODEL,
        load_model,
        resolve_model,
    )

    # The default encoder's session, as the pipeline loads it. ONNX Runtime's 0 is a thread per
    # physical core, counted here as one per CPU (an upper bound).
    onnx = load_model(resolve_model(None)[1], "cpu", DEFAULT_MODEL, backend="onnx",
                      max_seq_length=DEFAULT_MAX_SEQ_LENGTH)
    return {
        "pid": os.getpid(),
        # Threads the int8 scan of an online call would use asked for every core.
        "scan_threads_all_cores": DenseRetriever(n_jobs=-1)._threads(),
        "onnx_threads": onnx.session.get_session_options().intra_op_num_threads
        or os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "threadpools": [
            {k: p.get(k) for k in ("user_api", "internal_api", "num_threads", "prefix")}
            for p in threadpool_info()
        ],
        "env": {k: os.environ.get(k) for k in THREAD_ENV},
    }


class ThreadProbe(TransformerMixin, BaseEstimator):
    """A pass-through pipeline step that logs the thread state of the process fitting it."""

    def __init__(self, log_dir=None):
        self.log_dir = log_dir

    def fit(self, X, y=None):
        if self.log_dir is not None:
            path = Path(self.log_dir) / f"{os.getpid()}-{uuid.uuid4().hex}.json"
            path.write_text(json.dumps(thread_state()))
        self.fitted_ = True
        return self

    def transform(self, X):
        return X


def build_pipeline(registry, cache, *, epochs, risk_weight=0.1, probe_dir=None, memory=None):
    from sklearn.pipeline import Pipeline

    from skriskrank import (
        DenseRetriever,
        FrozenEmbedder,
        GraphSmoother,
        RiskAwareReranker,
        RuleFilter,
    )

    steps = [
        ("embed", FrozenEmbedder(registry, cache=cache, show_progress_bar=False)),
        ("retrieve", DenseRetriever(n_candidates=100)),
        ("rerank", RiskAwareReranker(risk_weight=risk_weight, epochs=epochs, random_state=0,
                                     memory=memory)),
    ]
    if probe_dir is not None:
        # Through the module's import name: a class of ``__main__`` (the script run with
        # ``python -m``) cannot be unpickled in a worker process.
        from benchmarks.bench_gridsearch import ThreadProbe as probe

        steps.append(("probe", probe(probe_dir)))
    steps += [("smooth", GraphSmoother(alpha=0.2)), ("filter", RuleFilter(k=5))]
    return Pipeline(steps)


def scorers(registry):
    from skriskrank import make_ranking_scorer

    return {"ndcg": make_ranking_scorer("ndcg", k=5),
            "rvr": make_ranking_scorer("rvr", k=5, registry=registry)}


class _TrainCounter:
    """Counts the reranker's trainings (``memory`` misses) in this process."""

    def __enter__(self):
        from skriskrank import _reranker

        self.module, self.original, self.n = _reranker, _reranker._train_heads, 0
        counter, original = self, self.original

        def _train_heads(params, seed, q_emb, t_emb, candidates, hard_pool, gold, risk,
                         device, verbose=0):
            counter.n += 1
            return original(params, seed, q_emb, t_emb, candidates, hard_pool, gold, risk,
                            device, verbose)

        _reranker._train_heads = _train_heads
        return self

    def __exit__(self, *exc):
        self.module._train_heads = self.original


def model_selection(ds, cache, *, folds, grid, epochs):
    from sklearn.model_selection import GridSearchCV, KFold, cross_validate

    from skriskrank import FrozenEmbedder

    X, y = list(ds.queries), list(ds.relevant)
    cv = KFold(folds, shuffle=True, random_state=0)
    probe = FrozenEmbedder(ds.registry, cache=cache)
    # Warm the in-process store from the disk cache so neither timing pays for reading it.
    batch = build_pipeline(ds.registry, cache, epochs=epochs).named_steps["embed"].fit(X)
    batch = batch.transform(X)
    # Likewise load the compiled kernels (numba) before either timing.
    warm_compiled_kernels(batch.tool_embeddings.shape[1])
    encoded0 = probe.n_encoded()

    with tempfile.TemporaryDirectory() as cv_memory, tempfile.TemporaryDirectory() as memory:
        with _TrainCounter() as c_cv:
            t0 = time.perf_counter()
            cvr = cross_validate(build_pipeline(ds.registry, cache, epochs=epochs,
                                                memory=cv_memory), X, y, cv=cv,
                                 scoring=scorers(ds.registry), error_score="raise")
            t_cv = time.perf_counter() - t0
        with _TrainCounter() as c_grid:
            t0 = time.perf_counter()
            search = GridSearchCV(build_pipeline(ds.registry, cache, epochs=epochs,
                                                 memory=memory),
                                  {"rerank__risk_weight": list(grid)}, cv=cv,
                                  scoring=scorers(ds.registry), refit=False,
                                  error_score="raise")
            search.fit(X, y)
            t_grid = time.perf_counter() - t0
        # The refit of the best candidate, on its own (GridSearchCV with refit adds it).
        best = int(np.argmax(search.cv_results_["mean_test_ndcg"]))
        with _TrainCounter() as c_refit:
            t0 = time.perf_counter()
            build_pipeline(ds.registry, cache, epochs=epochs, risk_weight=grid[best],
                           memory=memory).fit(X, y)
            t_refit = time.perf_counter() - t0
    cvres = search.cv_results_
    return {
        "n_queries": len(X), "folds": folds, "grid": list(grid), "epochs": epochs,
        "cross_validate_seconds": t_cv, "grid_seconds": t_grid, "refit_seconds": t_refit,
        "grid_over_cross_validate": t_grid / t_cv,
        "grid_with_refit_over_cross_validate": (t_grid + t_refit) / t_cv,
        "meets_target": bool(t_grid / t_cv <= TARGET_RATIO),
        "trainings": {"cross_validate": c_cv.n, "grid": c_grid.n, "refit": c_refit.n},
        "texts_encoded": probe.n_encoded() - encoded0,
        "texts_encoded_total_in_process": probe.n_encoded(),
        "cross_validate_ndcg": float(np.mean(cvr["test_ndcg"])),
        "cross_validate_rvr": float(-np.mean(cvr["test_rvr"])),
        "grid_mean_ndcg": [float(v) for v in cvres["mean_test_ndcg"]],
        "grid_mean_rvr": [float(-v) for v in cvres["mean_test_rvr"]],
        "grid_mean_fit_time": [float(v) for v in cvres["mean_fit_time"]],
        "grid_mean_score_time": [float(v) for v in cvres["mean_score_time"]],
    }


def _predict_in_worker(blob, queries):
    pipe = pickle.loads(blob)
    return pipe.predict(queries), thread_state()


def threads_and_pickling(ds, cache, *, n_queries, folds, grid, epochs):
    from joblib import Parallel, delayed
    from sklearn.model_selection import GridSearchCV, KFold

    X, y = list(ds.queries[:n_queries]), list(ds.relevant[:n_queries])
    parent = thread_state()
    with tempfile.TemporaryDirectory() as log_dir, tempfile.TemporaryDirectory() as memory:
        pipe = build_pipeline(ds.registry, cache, epochs=epochs, probe_dir=log_dir,
                              memory=memory)
        unfitted_bytes = len(pickle.dumps(pipe))
        # Start the two loky workers first, so that their start-up (imports) is timed apart.
        t0 = time.perf_counter()
        from benchmarks.bench_gridsearch import thread_state as probe_state

        Parallel(n_jobs=2)(delayed(probe_state)() for _ in range(2))
        t_spawn = time.perf_counter() - t0
        t0 = time.perf_counter()
        search = GridSearchCV(pipe, {"rerank__risk_weight": list(grid)},
                              cv=KFold(folds, shuffle=True, random_state=0),
                              scoring=scorers(ds.registry), refit="ndcg", n_jobs=2,
                              error_score="raise")
        search.fit(X, y)
        t_par = time.perf_counter() - t0
        logs = [json.loads(p.read_text()) for p in Path(log_dir).glob("*.json")]
    t0 = time.perf_counter()
    GridSearchCV(build_pipeline(ds.registry, cache, epochs=epochs),
                 {"rerank__risk_weight": list(grid)},
                 cv=KFold(folds, shuffle=True, random_state=0), scoring=scorers(ds.registry),
                 refit="ndcg", n_jobs=1, error_score="raise").fit(X, y)
    t_seq = time.perf_counter() - t0

    fitted = search.best_estimator_
    fitted.set_params(probe__log_dir=None)
    t0 = time.perf_counter()
    blob = pickle.dumps(fitted)
    t_dump = time.perf_counter() - t0
    expected = fitted.predict(X[:50])
    from benchmarks.bench_gridsearch import _predict_in_worker as work

    outs = Parallel(n_jobs=2)(delayed(work)(blob, X[:50]) for _ in range(2))
    worker_pids = sorted({s["pid"] for s in logs if s["pid"] != parent["pid"]})
    workers = [s for s in logs if s["pid"] != parent["pid"]]
    max_threads = max(
        [s["torch_threads"] for s in workers]
        + [s.get("scan_threads_all_cores", 0) for s in workers]
        + [s.get("onnx_threads", 0) for s in workers]
        + [p["num_threads"] or 0 for s in workers for p in s["threadpools"]], default=0
    )
    return {
        "parent": parent,
        "cpu_count": os.cpu_count(),
        "grid_worker_states": logs,
        "n_worker_processes": len(worker_pids),
        "worker_threads_max": max_threads,
        "threads_in_use_max": len(worker_pids[:2]) * max_threads,
        "oversubscribed": bool(min(2, len(worker_pids)) * max_threads > (os.cpu_count() or 1)),
        "grid_n_jobs_2_seconds": t_par,
        "worker_start_seconds": t_spawn,
        "grid_n_jobs_1_seconds": t_seq,
        "pickle_unfitted_bytes": unfitted_bytes,
        "pickle_fitted_bytes": len(blob),
        "pickle_dump_seconds": t_dump,
        "worker_predictions_match": all(np.array_equal(o[0], expected) for o in outs),
        "predict_worker_states": [o[1] for o in outs],
    }


def _markdown(res):
    lines = ["# Model selection cost, threads and pickling", "",
             f"Load average {res['environment'].get('load_average')}."]
    ms = res.get("model_selection")
    if ms:
        lines += [
            "", "## GridSearchCV over risk_weight vs one cross_validate", "",
            md_table(["", "value"], [
                ["queries x folds", f"{ms['n_queries']} x {ms['folds']}"],
                ["grid", ms["grid"]],
                ["cross_validate s", ms["cross_validate_seconds"]],
                ["GridSearchCV s (refit=False)", ms["grid_seconds"]],
                ["grid / cross_validate", ms["grid_over_cross_validate"]],
                ["target", f"<= {TARGET_RATIO}: {'met' if ms['meets_target'] else 'MISSED'}"],
                ["refit of the best s", ms["refit_seconds"]],
                ["(grid + refit) / cross_validate", ms["grid_with_refit_over_cross_validate"]],
                ["reranker trainings (cv / grid / refit)",
                 f"{ms['trainings']['cross_validate']} / {ms['trainings']['grid']} / "
                 f"{ms['trainings']['refit']}"],
                ["texts encoded during the runs", ms["texts_encoded"]],
                ["cross_validate NDCG@5 / RVR@5",
                 f"{ms['cross_validate_ndcg']:.3f} / {ms['cross_validate_rvr']:.3f}"],
                ["grid NDCG@5", [round(v, 3) for v in ms["grid_mean_ndcg"]]],
                ["grid RVR@5", [round(v, 3) for v in ms["grid_mean_rvr"]]],
                ["grid mean fit s per candidate", [round(v, 2) for v in ms["grid_mean_fit_time"]]],
            ]),
        ]
    th = res.get("threads")
    if th:
        rows = [[s["pid"] if s["pid"] != th["parent"]["pid"] else f"parent {s['pid']} (refit)",
                 s["torch_threads"], s["torch_interop_threads"],
                 "; ".join(f"{p['internal_api']}={p['num_threads']}" for p in s["threadpools"]),
                 s.get("scan_threads_all_cores", "-"), s.get("onnx_threads", "-"),
                 s["env"].get("OMP_NUM_THREADS")]
                for s in th["grid_worker_states"]]
        p = th["parent"]
        rows.insert(0, [f"parent {p['pid']}", p["torch_threads"], p["torch_interop_threads"],
                        "; ".join(f"{q['internal_api']}={q['num_threads']}"
                                  for q in p["threadpools"]), p.get("scan_threads_all_cores", "-"),
                        p.get("onnx_threads", "-"), p["env"].get("OMP_NUM_THREADS")])
        lines += [
            "", "## Threads under GridSearchCV(n_jobs=2)", "",
            md_table(["process", "torch threads", "torch inter-op", "threadpools",
                      "DenseRetriever(n_jobs=-1) scan threads", "ONNX Runtime threads",
                      "OMP_NUM_THREADS"], rows),
            "",
            f"- {th['n_worker_processes']} worker processes, at most {th['worker_threads_max']} "
            f"threads each on {th['cpu_count']} CPUs: "
            f"{'OVERSUBSCRIBED' if th['oversubscribed'] else 'no oversubscription'}.",
            f"- Small grid: n_jobs=2 {th['grid_n_jobs_2_seconds']:.1f} s (after "
            f"{th['worker_start_seconds']:.1f} s starting the workers), n_jobs=1 "
            f"{th['grid_n_jobs_1_seconds']:.1f} s (the n_jobs=2 search shares one `memory` "
            "directory across its workers; the n_jobs=1 one has none).",
            f"- Pickles: unfitted pipeline {th['pickle_unfitted_bytes'] / 1e6:.2f} MB, fitted "
            f"{th['pickle_fitted_bytes'] / 1e6:.2f} MB (dump {th['pickle_dump_seconds']:.2f} s); "
            f"worker predictions match the parent's: {th['worker_predictions_match']}.",
        ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--cache", default="/tmp/embcache")
    parser.add_argument("--skip-threads", action="store_true")
    parser.add_argument("--skip-grid", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from skriskrank.datasets import load_ultratool

    cfg = dict(QUICK if args.quick else FULL)
    ds = load_ultratool(args.data / "ultratool")
    if cfg["n_queries"]:
        ds = ds.subset(range(cfg["n_queries"]))
    res = {"environment": environment(), "config": cfg, "quick": args.quick}
    if not args.skip_grid:
        res["model_selection"] = model_selection(ds, args.cache, folds=cfg["folds"],
                                                 grid=cfg["grid"], epochs=cfg["epochs"])
        print(f"grid / cross_validate = {res['model_selection']['grid_over_cross_validate']:.2f}",
              file=sys.stderr)
    if not args.skip_threads:
        res["threads"] = threads_and_pickling(
            ds, args.cache, n_queries=cfg["probe_queries"], folds=cfg["probe_folds"],
            grid=cfg["probe_grid"], epochs=min(cfg["epochs"], 2))
    write_json(args.out, "bench_gridsearch", res)
    write_md(args.out, "bench_gridsearch", _markdown(res))
    return res


if __name__ == "__main__":
    main()
