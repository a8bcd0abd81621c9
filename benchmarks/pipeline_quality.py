"""Quality of the learned pipeline against dense retrieval (issue: the learned pipeline).

UltraTool: 5-fold query-level cross-validation over the 1,000 queries (shuffled, seed 0), for
embed -> retrieve(100) -> rerank and for the full pool (no retriever). Seal-Tools: trained on
``dev``, evaluated on ``test_in_domain``. Every number comes from the real sklearn Pipeline,
as a user would run it.

    python -m benchmarks.pipeline_quality --data ../shared/data [--cache DIR] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from sklearn.model_selection import KFold  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

from skriskrank import DenseRetriever, FrozenEmbedder, RiskAwareReranker  # noqa: E402
from skriskrank.datasets import load_sealtools, load_ultratool  # noqa: E402
from skriskrank.metrics import ranking_report  # noqa: E402

RESULTS = Path(__file__).parent / "results"
KEYS = ("ndcg@5", "mrr", "rvr@5", "srr@5")


def _pipe(registry, cache, n_candidates, seed, backend="torch", **rerank):
    steps = [("embed", FrozenEmbedder(registry, cache=cache, backend=backend,
                                      show_progress_bar=False))]
    if n_candidates:
        steps.append(("retrieve", DenseRetriever(n_candidates=n_candidates)))
    steps.append(("rerank", RiskAwareReranker(risk_weight=0.1, random_state=seed, **rerank)))
    return Pipeline(steps)


def _report(pipe, ds):
    top = pipe.predict(ds.queries)
    rep = ranking_report(top, ds.relevant, ds.registry, k=5)
    return {k: float(rep[k]) for k in KEYS}


def ultratool(data, cache, folds, seed, quick):
    ds = load_ultratool(Path(data) / "ultratool")
    if quick:
        ds = ds.subset(np.arange(200))
    rows = {"dense (full pool)": [], "rerank top-100": [], "rerank full pool": []}
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=0).split(ds.queries)):
        if f >= folds:
            break
        train, test = ds.subset(tr), ds.subset(te)
        dense = Pipeline([("embed", FrozenEmbedder(ds.registry, cache=cache)),
                          ("retrieve", DenseRetriever(n_candidates=5))])
        rows["dense (full pool)"].append(_report(dense.fit(train.queries), test))
        for name, n in (("rerank top-100", 100), ("rerank full pool", None)):
            t = time.perf_counter()
            pipe = _pipe(ds.registry, cache, n, seed).fit(train.queries, train.relevant)
            rows[name].append(_report(pipe, test))
            r = pipe.named_steps["rerank"]
            print(f"  fold {f} {name}: {rows[name][-1]} epochs={r.n_epochs_} "
                  f"best={r.best_epoch_} ({time.perf_counter() - t:.0f} s)", flush=True)
    return rows


def sealtools(data, cache, seed, quick):
    dev = load_sealtools(Path(data) / "sealtools", "dev")
    test = load_sealtools(Path(data) / "sealtools", "test_in_domain")
    if quick:
        dev, test = dev.subset(np.arange(200)), test.subset(np.arange(200))
    dense = Pipeline([("embed", FrozenEmbedder(dev.registry, cache=cache)),
                      ("retrieve", DenseRetriever(n_candidates=5))])
    rows = {"dense (full pool)": [_report(dense.fit(dev.queries), test)]}
    for name, n in (("rerank top-100", 100), ("rerank full pool", None)):
        pipe = _pipe(dev.registry, cache, n, seed).fit(dev.queries, dev.relevant)
        rows[name] = [_report(pipe, test)]
        print(f"  {name}: {rows[name][-1]}", flush=True)
    return rows


def _summary(rows):
    out = {}
    for name, runs in rows.items():
        out[name] = {k: (float(np.mean([r[k] for r in runs])), float(np.std([r[k] for r in runs])))
                     for k in KEYS}
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--cache", default=None, help="on-disk embedding cache directory")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="200 queries, 1 fold")
    p.add_argument("--out", default=str(RESULTS))
    a = p.parse_args(argv)
    cache = a.cache or True
    folds = 1 if a.quick else a.folds
    t0 = time.perf_counter()
    print("UltraTool, 5-fold CV:", flush=True)
    ut = _summary(ultratool(a.data, cache, folds, a.seed, a.quick))
    print("Seal-Tools, dev -> test_in_domain:", flush=True)
    st = _summary(sealtools(a.data, cache, a.seed, a.quick))
    checks = {
        "ultratool top-100 NDCG@5 >= 0.62": ut["rerank top-100"]["ndcg@5"][0] >= 0.62,
        "ultratool full pool NDCG@5 >= 0.55": ut["rerank full pool"]["ndcg@5"][0] >= 0.55,
        "sealtools top-100 NDCG@5 > dense": st["rerank top-100"]["ndcg@5"][0]
        > st["dense (full pool)"]["ndcg@5"][0],
        "sealtools full pool NDCG@5 > dense": st["rerank full pool"]["ndcg@5"][0]
        > st["dense (full pool)"]["ndcg@5"][0],
    }
    result = {"ultratool": ut, "sealtools": st, "checks": checks, "quick": a.quick,
              "folds": folds, "seed": a.seed, "seconds": time.perf_counter() - t0}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "pipeline_quality" + ("_quick" if a.quick else "")
    (out / f"{stem}.json").write_text(json.dumps(result, indent=2))
    lines = ["# Learned pipeline quality (default model, risk_weight=0.1)", ""]
    for bench, table in (("UltraTool (5-fold CV)", ut), ("Seal-Tools test_in_domain", st)):
        lines += [f"## {bench}", "", "| ranker | " + " | ".join(KEYS) + " |",
                  "|---" * (len(KEYS) + 1) + "|"]
        for name, vals in table.items():
            cells = " | ".join(f"{m:.3f} ± {s:.3f}" for m, s in vals.values())
            lines.append(f"| {name} | {cells} |")
        lines.append("")
    lines += ["## Checks", ""] + [f"- {'PASS' if ok else 'MISS'}: {c}" for c, ok in checks.items()]
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return result


if __name__ == "__main__":
    main()
