"""Ablation: the residual head's interaction features, by rank, on the real data.

``RiskAwareReranker(interaction_rank=r)`` feeds ``(P_q e_q) * (P_t e_t)`` (two learned
``r``-dimensional projections) to the residual head's hidden layer; ``None`` feeds the
elementwise product ``e_q * e_t`` of the full embeddings, the head before the projection
existed. This script measures what the rank costs in quality, to choose the default:

* UltraTool: 5-fold query-level cross-validation over its 1,000 queries (shuffled, seed 0);
* Seal-Tools: trained on ``dev``, scored on ``test_in_domain``;

both in the top-100 candidate setting (``DenseRetriever(100)`` first) and on the full pool,
for seeds ``0 .. n_seeds - 1``, with the default encoder and every other parameter at its
default. It reports NDCG@5 of ``f_rel`` alone (``risk_weight=0``) and NDCG@5 and RVR@5 at
the default ``risk_weight=0.1``, as mean and standard deviation over seeds.

    python -m benchmarks.head_ablation --data ../shared/data [--cache DIR] [--quick]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

from benchmarks._common import RESULTS, environment, md_table, write_json, write_md  # noqa: E402
from skriskrank import DenseRetriever, FrozenEmbedder, RiskAwareReranker  # noqa: E402
from skriskrank.datasets import load_sealtools, load_ultratool  # noqa: E402
from skriskrank.metrics import ranking_report  # noqa: E402

#: Ranks compared; None is the elementwise product of the full embeddings.
RANKS = (8, 16, 32, 64, None)
QUICK_RANKS = (4, None)
SETTINGS = ("top100", "full")
K = 5


def _label(rank):
    return "elementwise (None)" if rank is None else f"rank {rank}"


def _split_batches(registry, train, test, cache):
    emb = FrozenEmbedder(registry, cache=cache).fit(train.queries)
    return emb.transform(train.queries), emb.transform(test.queries)


def _score(splits, rank, setting, seed, epochs):
    """Mean metrics over the splits of one dataset, for one rank, setting and seed."""
    rows = []
    for (btr, bte), train, test in splits:
        if setting == "top100":
            retriever = DenseRetriever(n_candidates=100).fit(btr)
            btr, bte = retriever.transform(btr), retriever.transform(bte)
        t0 = time.perf_counter()
        rr = RiskAwareReranker(interaction_rank=rank, risk_weight=0.0, random_state=seed,
                               **({"epochs": epochs} if epochs else {}))
        rr.fit(btr, train.relevant)
        row = {"fit_seconds": time.perf_counter() - t0, "epochs": rr.n_epochs_}
        for lam in (0.0, 0.1):
            rr.set_params(risk_weight=lam)
            rep = ranking_report(rr.predict(bte), test.relevant, test.registry, k=K)
            row[f"ndcg@{K} lambda={lam}"] = float(rep[f"ndcg@{K}"])
            row[f"rvr@{K} lambda={lam}"] = float(rep[f"rvr@{K}"])
        rows.append(row)
    return {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}


def _datasets(data, cache, quick):
    ut = load_ultratool(Path(data) / "ultratool")
    dev = load_sealtools(Path(data) / "sealtools", "dev")
    test = load_sealtools(Path(data) / "sealtools", "test_in_domain")
    if quick:
        # Random subsets: the files are grouped by domain, so their heads are not samples.
        rng = np.random.default_rng(0)
        ut = ut.subset(np.sort(rng.permutation(len(ut.queries))[:200]))
        dev = dev.subset(np.sort(rng.permutation(len(dev.queries))[:150]))
        test = test.subset(np.sort(rng.permutation(len(test.queries))[:150]))
    folds = list(KFold(5, shuffle=True, random_state=0).split(ut.queries))[: 1 if quick else 5]
    ultratool = []
    for tr, te in folds:
        train, test_fold = ut.subset(tr), ut.subset(te)
        ultratool.append((_split_batches(ut.registry, train, test_fold, cache), train, test_fold))
    sealtools = [(_split_batches(dev.registry, dev, test, cache), dev, test)]
    return {"ultratool": ultratool, "sealtools/test_in_domain": sealtools}


def run(data, *, cache=True, quick=False, ranks=None, n_seeds=None, epochs=None):
    ranks = tuple(ranks) if ranks is not None else (QUICK_RANKS if quick else RANKS)
    n_seeds = n_seeds or (1 if quick else 3)
    datasets = _datasets(data, cache, quick)
    runs = []
    for name, splits in datasets.items():
        for setting in SETTINGS:
            for rank in ranks:
                for seed in range(n_seeds):
                    res = _score(splits, rank, setting, seed, epochs)
                    runs.append({"dataset": name, "setting": setting, "rank": rank,
                                 "seed": seed, **res})
                    print(f"{name} {setting} {_label(rank)} seed {seed}: "
                          f"NDCG@5 {res[f'ndcg@{K} lambda=0.0']:.4f}", file=sys.stderr,
                          flush=True)
    return {"runs": runs, "ranks": list(ranks), "n_seeds": n_seeds, "quick": quick,
            "epochs": epochs, "environment": environment()}


def summary(res):
    """Mean and population std over seeds of every metric, per dataset, setting and rank."""
    out = []
    keys = [k for k in res["runs"][0] if k not in ("dataset", "setting", "rank", "seed")]
    groups: dict = {}
    for r in res["runs"]:
        groups.setdefault((r["dataset"], r["setting"], r["rank"]), []).append(r)
    for (dataset, setting, rank), rows in groups.items():
        out.append({"dataset": dataset, "setting": setting, "rank": rank,
                    **{k: (float(np.mean([r[k] for r in rows])),
                           float(np.std([r[k] for r in rows]))) for k in keys}})
    return out


def _markdown(res, rows):
    lines = ["# Residual head: interaction features by rank", "",
             f"Default encoder, every other parameter at its default; {res['n_seeds']} "
             "seed(s), mean ± std over seeds. UltraTool: 5-fold CV over its 1,000 queries; "
             "Seal-Tools: trained on dev, scored on test_in_domain. *f_rel alone* is "
             "NDCG@5 at `risk_weight=0`; the last two columns are at the default 0.1.", ""]
    if res["quick"]:
        lines += ["**Quick run** (subsets, one fold): a smoke test, not a measurement.", ""]
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        for setting in SETTINGS:
            table = [[_label(r["rank"]),
                      "{:.3f} ± {:.3f}".format(*r[f"ndcg@{K} lambda=0.0"]),
                      "{:.3f} ± {:.3f}".format(*r[f"ndcg@{K} lambda=0.1"]),
                      "{:.3f}".format(r[f"rvr@{K} lambda=0.1"][0]),
                      "{:.2f}".format(r["fit_seconds"][0])]
                     for r in rows if r["dataset"] == dataset and r["setting"] == setting]
            where = "top-100 candidates" if setting == "top100" else "full pool"
            lines += [f"## {dataset}, {where}",
                      "", md_table(["interaction", "NDCG@5, f_rel alone", "NDCG@5", "RVR@5",
                                    "fit s"], table), ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--cache", default=None, help="on-disk embedding cache directory")
    parser.add_argument("--quick", action="store_true", help="subsets, one fold, one seed")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    res = run(args.data, cache=args.cache or True, quick=args.quick,
              epochs=2 if args.quick else None)
    res["runtime_seconds"] = time.perf_counter() - t0
    rows = summary(res)
    res["summary"] = rows
    stem = "head_ablation" + ("_quick" if args.quick else "")
    write_json(args.out, stem, res)
    write_md(args.out, stem, _markdown(res, rows))
    return res


if __name__ == "__main__":
    main()
