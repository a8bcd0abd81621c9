"""Out-of-fold result storage and metric aggregation for the paper benchmark."""

from __future__ import annotations

import math

import numpy as np

from skriskrank.metrics import ranking_report

K = 5
METRICS = ("ndcg@5", "mrr", "sndcg@5", "rvr@5", "srr@5", "safe_rvr@5", "needrisk_hit@5",
           "unneeded_rvr@5")
METRIC_LABELS = {
    "ndcg@5": "NDCG@5", "mrr": "MRR", "sndcg@5": "sNDCG@5", "rvr@5": "RVR@5",
    "srr@5": "SRR@5", "safe_rvr@5": "Safe-RVR@5", "needrisk_hit@5": "NeedRisk-Hit@5",
    "unneeded_rvr@5": "unneeded-RVR@5",
}


class ResultStore:
    """Each row's top-k and reciprocal rank for every evaluated query, per seed.

    Every query is scored exactly once per (row, seed) by a model that never saw it (the
    out-of-fold predictions of cross-validation), so a row's metrics are computed over all
    queries at once. Only the top-k and the reciprocal rank of the first relevant tool in the
    full ranked list are kept: that is all the eight metrics need.
    """

    def __init__(self, registry, relevant_names, gold_matrix):
        self.registry = registry
        self.relevant = relevant_names
        self.gold = gold_matrix  # (n_queries, n_tools) bool
        self.rows: dict[str, dict] = {}
        self.data: dict[str, dict] = {}

    def add(self, key, info, seed, query_idx, batch):
        ranked = batch.ranked_indices()
        hit = np.take_along_axis(self.gold[query_idx], ranked, axis=1)
        first = np.argmax(hit, axis=1)
        rr = np.where(hit.any(axis=1), 1.0 / (first + 1.0), 0.0)
        self.rows.setdefault(key, info)
        per_seed = self.data.setdefault(key, {}).setdefault(seed, [])
        per_seed.append((np.asarray(query_idx), ranked[:, :K].astype(np.int64), rr))
        return ranked

    def arrays(self, key, seed):
        parts = self.data[key][seed]
        idx = np.concatenate([p[0] for p in parts])
        order = np.argsort(idx, kind="stable")
        top = np.concatenate([p[1] for p in parts])[order]
        rr = np.concatenate([p[2] for p in parts])[order]
        return idx[order], top, rr

    def metrics(self, key, seed, mask=None):
        idx, top, rr = self.arrays(key, seed)
        if mask is not None:
            keep = mask[idx]
            idx, top, rr = idx[keep], top[keep], rr[keep]
        if len(idx) == 0:
            return {m: math.nan for m in METRICS} | {"n_queries": 0}
        rep = ranking_report(
            self.registry.names[top], [self.relevant[i] for i in idx], self.registry, k=K
        )
        rep["mrr"] = float(rr.mean())  # over the full ranked list, not the top-k
        return rep

    def summary(self, key, mask=None):
        """Mean and std over seeds of every metric of a row."""
        seeds = sorted(self.data[key], key=str)
        reps = [self.metrics(key, s, mask) for s in seeds]
        out = {}
        for m in METRICS:
            vals = np.array([r[m] for r in reps], dtype=float)
            finite = vals[np.isfinite(vals)]
            out[m] = {
                "mean": float(finite.mean()) if finite.size else None,
                "std": float(finite.std()) if finite.size else None,
                "per_seed": [None if not np.isfinite(v) else float(v) for v in vals],
            }
        out["n_queries"] = int(reps[0]["n_queries"])
        for extra in ("n_safe_queries", "n_needrisk_queries"):
            if extra in reps[0]:
                out[extra] = int(reps[0][extra])
        out["n_seeds"] = len(seeds)
        return out


def fmt(cell, digits=3):
    """``mean ± std`` of a summary cell (no ± for a deterministic row)."""
    if cell is None or cell.get("mean") is None:
        return "n/a"
    mean, std = cell["mean"], cell["std"]
    if len(cell["per_seed"]) <= 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def markdown_table(rows, columns=METRICS, first=("Method",)):
    """A Markdown table from ``(label cells, summary)`` pairs."""
    head = list(first) + [METRIC_LABELS.get(c, c) for c in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for labels, summary in rows:
        cells = list(labels)
        for c in columns:
            cells.append("—" if summary is None else fmt(summary.get(c)))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
