"""Plain, obviously correct references for the compiled kernels (skriskrank._fast).

Each function spells out its operation in the simplest way, with no concern for speed; the
tests compare the kernels with these.
"""

import numpy as np
import scipy.sparse as sp
import torch


def stable_order(scores, k=None):
    """Positions of each row by descending score, ties by position, NaN last."""
    return np.argsort(-np.asarray(scores), axis=1, kind="stable")[:, :k]


def similarity(a, b):
    """The filter's cosine: the float64 sum, in order, of the float64 products."""
    total = 0.0
    for x, y in zip(np.asarray(a).tolist(), np.asarray(b).tolist(), strict=True):
        total += float(x) * float(y)
    return total


def greedy_filter(ranked, risk, counts, emb, k=5, *, max_high_risk=1, high_risk_level=3,
                  max_broad=2, broad_level=2, redundancy_threshold=0.9):
    """The rules of Appendix C spelled out: returns (accepted, deferred, unscanned)."""
    accepted, deferred = [], []
    pos = 0
    while pos < len(ranked) and len(accepted) < k:
        t = int(ranked[pos])
        pos += 1
        trial = accepted + [t]
        n_high = sum(not (1 <= risk[i] < high_risk_level and risk[i] == int(risk[i]))
                     for i in trial)
        n_broad = sum(counts[i] >= broad_level for i in trial)
        ok = (max_high_risk is None or n_high <= max_high_risk) and (
            max_broad is None or n_broad <= max_broad)
        if ok and redundancy_threshold is not None and redundancy_threshold < 1:
            ok = all(similarity(emb[a], emb[t]) <= redundancy_threshold for a in accepted)
        (accepted if ok else deferred).append(t)
    return accepted, deferred, [int(x) for x in ranked[pos:]]


def dense_spread(graph, candidates, scores):
    """``out[q, j] = sum_p A[c[q, j], c[q, p]] * scores[q, p]`` with a dense matrix."""
    dense = graph.toarray() if sp.issparse(graph) else np.asarray(graph)
    scores = np.asarray(scores, dtype=np.float64)
    if candidates is None:
        return scores @ dense.T
    return np.stack([dense[np.ix_(c, c)] @ s for c, s in zip(candidates, scores, strict=True)])


def module_scores(module, q_emb, tool_emb, candidates=None):
    """f_rel and f_risk from the torch module's own forward pass (float64)."""
    module = module.double().eval()
    q = torch.from_numpy(np.asarray(q_emb, dtype=np.float64))
    tools = torch.from_numpy(np.asarray(tool_emb, dtype=np.float64))
    with torch.no_grad():
        if candidates is None:
            rel, risk = module(q, tools.unsqueeze(0).expand(len(q), -1, -1))
        else:
            rel, risk = module(q, tools[torch.from_numpy(np.asarray(candidates))])
    module.float()
    return rel.numpy(), risk.numpy()


def brute_top(queries, tools, n):
    """The ``n`` best tools per query by the float32 cosine, ties by tool index."""
    scores = np.asarray(queries, dtype=np.float32) @ np.asarray(tools, dtype=np.float32).T
    order = stable_order(scores, n)
    return order, np.take_along_axis(scores, order, axis=1)
