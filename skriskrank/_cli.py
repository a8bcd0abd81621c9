"""The ``skriskrank`` command line: ``skriskrank demo`` fits and shows the paper's pipeline."""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

__all__ = ["main"]


def _load(args):
    from .datasets import load_demo, load_queries_jsonl, load_registry_csv

    if (args.registry is None) != (args.queries is None):
        raise SystemExit("skriskrank demo: give both --registry and --queries, or neither.")
    if args.registry is None:
        return load_demo().as_dataset()
    registry = load_registry_csv(args.registry)
    return load_queries_jsonl(args.queries, registry)


def _fmt_list(names, registry):
    risk = registry.risk_of(list(names))
    return ", ".join(
        f"{n} [r{'?' if r > 5 else r}]" for n, r in zip(names, risk, strict=True)
    )


def demo(args) -> int:
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import Pipeline

    from .metrics import ranking_report

    t0 = time.perf_counter()
    ds = _load(args)
    reg = ds.registry
    idx = np.arange(len(ds))
    train, test = train_test_split(idx, test_size=args.test_size, random_state=args.seed)
    train_ds, test_ds = ds.subset(train), ds.subset(test)
    print(f"skriskrank demo: {len(reg)} tools, {len(ds)} queries "
          f"({len(train)} to fit, {len(test)} held out)")
    from ._pipeline import build_pipeline

    pipe = build_pipeline(reg, model=args.model, n_candidates=min(100, len(reg)),
                          risk_weight=args.risk_weight, random_state=args.seed,
                          cache=args.cache or True)
    pipe.fit(train_ds.queries, train_ds.relevant)
    print(f"fitted in {time.perf_counter() - t0:.1f} s")
    from ._audit_cli import audit_summary

    print(audit_summary(reg))

    # The same fitted steps, cut at different points: every prefix is a complete ranker.
    rerank = pipe.named_steps["rerank"]
    dense = Pipeline(pipe.steps[:2])
    risk_aware = Pipeline(pipe.steps[:3])
    queries = test_ds.queries
    rows = {}
    rows["dense retrieval"] = dense.predict(queries)
    rerank.set_params(risk_weight=0.0)
    rows["relevance only (lambda=0)"] = risk_aware.predict(queries)
    rerank.set_params(risk_weight=args.risk_weight)
    rows[f"risk-aware (lambda={args.risk_weight:g})"] = risk_aware.predict(queries)
    rows["+ graph + rule filter"] = pipe.predict(queries)

    # Show queries where the rankings differ most: those whose dense top-k is riskiest.
    dense_risk = (reg.risk[reg.index_of(rows["dense retrieval"].ravel())]
                  .reshape(rows["dense retrieval"].shape) >= 3).sum(axis=1)
    shown = np.argsort(-dense_risk, kind="stable")[: args.show]
    for i in shown:
        print(f"\nQuery: {queries[i]}")
        print(f"  gold: {_fmt_list(sorted(test_ds.relevant[i]), reg)}")
        for name in list(rows)[1:]:
            print(f"  {name:<28} {_fmt_list(rows[name][i], reg)}")

    print(f"\nHeld-out metrics over {len(queries)} queries (k=5; RVR/SRR lower is better):")
    keys = ["ndcg@5", "mrr", "sndcg@5", "rvr@5", "srr@5", "safe_rvr@5", "needrisk_hit@5"]
    print(f"  {'ranker':<28} " + " ".join(f"{k:>14}" for k in keys))
    for name, top in rows.items():
        rep = ranking_report(top, test_ds.relevant, reg, k=5)
        print(f"  {name:<28} " + " ".join(f"{rep[k]:>14.3f}" for k in keys))
    print(f"\ndone in {time.perf_counter() - t0:.1f} s")
    return 0


def main(argv=None) -> int:
    """Entry point of the ``skriskrank`` console script and ``python -m skriskrank``."""
    parser = argparse.ArgumentParser(prog="skriskrank", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="fit the pipeline and compare rankings on held-out queries")
    p.add_argument("--registry", help="CSV: name, description, risk, permissions")
    p.add_argument("--queries", help='JSONL: {"query": str, "relevant": [names]} per line')
    p.add_argument("--model", default=None, help="sentence-transformers name or path")
    p.add_argument("--risk-weight", type=float, default=0.1, help="lambda (default 0.1)")
    p.add_argument("--test-size", type=float, default=0.3, help="held-out share (default 0.3)")
    p.add_argument("--show", type=int, default=4, help="queries to print (default 4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", default=None, help="directory for an on-disk embedding cache")
    from ._audit_cli import add_audit_parser

    add_audit_parser(sub)
    args = parser.parse_args(argv)
    # Offline by default: the packaged model needs no hub, and a hub lookup would hang here.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.command == "demo":
        return demo(args)
    if args.command == "audit":
        return args.handler(args)
    return 2  # pragma: no cover - argparse rejects other commands


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
