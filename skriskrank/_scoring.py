"""Fast inference of the reranker's heads with numpy.

The heads' first layer is split by input block (query, tool, and for the residual head the
query-tool interaction), so scoring a (queries x tools) grid costs a few GEMMs instead of
forming the (queries x tools x 2d) concatenation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["relevance", "tool_risk"]


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def tool_risk(heads: dict, tool_emb: np.ndarray) -> np.ndarray:
    """f_risk of every tool, float32 (n_tools,)."""
    h = np.maximum(tool_emb @ heads["R1"].T + heads["rb1"], 0.0)
    return _sigmoid(h @ heads["rw2"] + heads["rb2"]).astype(np.float32)


def relevance(heads: dict, q_emb, tool_emb, candidates=None, *, tool_hidden=None,
              chunk_elems=1 << 24) -> np.ndarray:
    """f_rel of each query's candidates, float32 (n_queries, n_candidates).

    Never forms the (query, tool, 2d) concatenation: ``W1 [e_q; e_t] = Wq e_q + Wt e_t``, so
    the query and tool parts are one GEMM each and only the (query, tool, hidden) sum is
    materialized, a chunk of queries at a time. The residual head's interaction term
    ``Wx (e_q * e_t)`` is ``(Wx * e_q) e_t``: one GEMM per chunk of queries.

    Parameters
    ----------
    heads : dict
        Weights from the fitted reranker.
    q_emb : ndarray of shape (n_queries, d)
    tool_emb : ndarray of shape (n_tools, d)
    candidates : ndarray of int of shape (n_queries, m) or None
        ``None`` scores the full pool.
    tool_hidden : ndarray of shape (n_tools, hidden), default=None
        Precomputed ``tool_emb @ Wt.T``.
    chunk_elems : int, default=2**24
        Bound on the floats of one (queries, tools, hidden) block.
    """
    hq = q_emb @ heads["Wq"].T + heads["b1"]
    ht = tool_emb @ heads["Wt"].T if tool_hidden is None else tool_hidden
    n_q, h = hq.shape
    m = len(tool_emb) if candidates is None else candidates.shape[1]
    out = np.empty((n_q, m), dtype=np.float32)
    step = max(1, chunk_elems // max(1, m * h))
    residual = heads["kind"] == "residual"
    for s in range(0, n_q, step):
        e = slice(s, min(s + step, n_q))
        qe = q_emb[e]
        if candidates is None:
            pre = hq[e, None, :] + ht[None, :, :]
            if residual:
                # (c*h, d) @ (d, T): the interaction of every query with every tool.
                a = (qe[:, None, :] * heads["Wx"][None]).reshape(-1, qe.shape[1])
                pre += (a @ tool_emb.T).reshape(len(qe), h, m).transpose(0, 2, 1)
                cos = qe @ tool_emb.T
        else:
            cand = candidates[e]
            pre = hq[e, None, :] + ht[cand]
            if residual:
                te = tool_emb[cand]  # (c, m, d)
                # numpy's stacked matmul does not reach BLAS for these shapes (30x slower):
                # one GEMM per query does.
                wq = qe[:, :, None] * heads["Wx"].T[None]
                for j in range(len(qe)):
                    pre[j] += te[j] @ wq[j]
                cos = np.einsum("cmd,cd->cm", te, qe)
        np.maximum(pre, 0.0, out=pre)
        z = pre @ heads["w2"] + heads["b2"]
        if residual:
            z += heads["cos_scale"] * cos + heads["cos_bias"]
        out[e] = _sigmoid(z)
    return out
