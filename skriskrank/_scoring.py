"""Fast inference of the reranker's heads with numpy.

The heads' first layer is split by input block (query, tool, and for the residual head the
query-tool interaction), so scoring a (queries x tools) grid costs a few GEMMs instead of
forming the (queries x tools x 2d) concatenation.

Cost per (query, tool) pair, with ``d`` the embedding size and ``h`` the hidden size:

- ``"concat"``: ``W1 [e_q; e_t] = Wq e_q + Wt e_t``. Both parts are GEMMs over queries and
  tools alone, so a pair costs only the ``h`` additions, ReLUs and multiply-adds of the
  hidden layer: ``O(h)`` instead of the ``O(2dh)`` of the concatenation. That work is
  elementwise and memory-bound, so it runs on blocks small enough to stay in cache.
- ``"residual"``: the interaction ``Wx (e_q * e_t)`` is ``(Wx * e_q) e_t``, one GEMM of
  ``(queries * h, d) x (d, tools)``: ``O(dh)`` per pair, a third of the ``O(3dh)`` of the
  concatenation and exact. No exact rewrite removes this term (the ``h`` bilinear forms
  ``e_q^T diag(Wx[j]) e_t`` have full rank in general), so this head runs near the GEMM's
  speed, not below it. The cosine term rides along as one more row of the same GEMM.
"""

from __future__ import annotations

import numpy as np

__all__ = ["relevance", "tool_risk"]

#: Floats of one elementwise block of the concatenation head: 2**16 float32 values (256 KiB)
#: stay in a core's L2 cache, where the add, the ReLU and the product with ``w2`` run several
#: times faster than on blocks that spill to memory (measured in benchmarks/bench_scoring.py).
_CACHE_ELEMS = 1 << 16
#: Floats of one block of per-pair products ``e_q * e_t`` in the residual head's candidate path.
_RESIDUAL_PAIR_ELEMS = 1 << 21


def _sigmoid(z):
    # In place: z is a temporary the caller owns. Clipping keeps exp(-z) finite in float32
    # (exp(88) < 3.4e38); sigmoid(-88) is 6e-39 either way.
    np.clip(z, -88.0, 88.0, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    z += 1.0
    np.reciprocal(z, out=z)
    return z


def tool_risk(heads: dict, tool_emb: np.ndarray) -> np.ndarray:
    """f_risk of every tool, float32 (n_tools,)."""
    h = np.maximum(tool_emb @ heads["R1"].T + heads["rb1"], 0.0)
    return _sigmoid(np.asarray(h @ heads["rw2"] + heads["rb2"], dtype=np.float32))


def _concat_full(hq, ht, w2, out, budget):
    """``out[i, t] = w2 . relu(hq[i] + ht[t])`` over all pairs, in cache-sized blocks."""
    n_q, h = hq.shape
    n_t = ht.shape[0]
    # Hidden units first: each block is (queries, h, tools), so the product with w2 is a
    # batched (1, h) x (h, tools) matmul over contiguous rows.
    ht_t = np.ascontiguousarray(ht.T)
    tb = min(n_t, max(256, budget // h))
    qb = max(1, budget // (h * tb))
    buf = np.empty((qb, h, tb), dtype=np.float32)
    hq3 = hq[:, :, None]
    for t0 in range(0, n_t, tb):
        t1 = min(t0 + tb, n_t)
        ht_blk = ht_t[:, t0:t1]
        for s in range(0, n_q, qb):
            e = min(s + qb, n_q)
            b = buf[: e - s, :, : t1 - t0]
            np.add(ht_blk, hq3[s:e], out=b)
            np.maximum(b, 0.0, out=b)
            np.matmul(w2, b, out=out[s:e, t0:t1])


def _residual_full(hq, ht, q_emb, tool_emb, heads, out, budget):
    """Full-pool residual head: one GEMM per chunk of queries gives interaction and cosine."""
    n_q, h = hq.shape
    n_t, d = tool_emb.shape
    w2 = heads["w2"]
    # The last row of ones makes (ones * e_q) . e_t = cos(q, t) part of the same GEMM.
    wx = np.vstack([heads["Wx"], np.ones((1, d), dtype=np.float32)])
    tool_t = np.ascontiguousarray(tool_emb.T)
    ht_t = np.ascontiguousarray(ht.T)
    c = max(1, min(n_q, budget // ((h + 1) * n_t)))
    buf = np.empty((c * (h + 1), n_t), dtype=np.float32)
    a = np.empty((c, h + 1, d), dtype=np.float32)
    cos_scale = np.float32(heads["cos_scale"])
    bias = np.float32(heads["cos_bias"] + heads["b2"])
    for s in range(0, n_q, c):
        e = min(s + c, n_q)
        m = e - s
        np.multiply(q_emb[s:e, None, :], wx[None], out=a[:m])
        g = buf[: m * (h + 1)]
        np.matmul(a[:m].reshape(-1, d), tool_t, out=g)
        g3 = g.reshape(m, h + 1, n_t)
        pre = g3[:, :h]
        pre += ht_t
        pre += hq[s:e, :, None]
        np.maximum(pre, 0.0, out=pre)
        z = out[s:e]
        np.matmul(w2, pre, out=z)
        z += cos_scale * g3[:, h]
        z += bias
    return out


def relevance(heads: dict, q_emb, tool_emb, candidates=None, *, tool_hidden=None,
              chunk_elems=1 << 24) -> np.ndarray:
    """f_rel of each query's candidates, float32 (n_queries, n_candidates).

    Never forms the (query, tool, 2d) concatenation: ``W1 [e_q; e_t] = Wq e_q + Wt e_t``, so
    the query and tool parts are one GEMM each and only the (query, tool, hidden) sum is
    materialized, a block at a time. The residual head's interaction term
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
        Bound on the floats of one (queries, tools, hidden) block. It bounds the temporary
        memory (64 MiB by default) and changes nothing in the result.
    """
    q_emb = np.asarray(q_emb, dtype=np.float32)
    tool_emb = np.asarray(tool_emb, dtype=np.float32)
    hq = q_emb @ heads["Wq"].T + heads["b1"]
    ht = tool_emb @ heads["Wt"].T if tool_hidden is None else tool_hidden
    hq = np.asarray(hq, dtype=np.float32)
    ht = np.asarray(ht, dtype=np.float32)
    n_q, h = hq.shape
    m = len(tool_emb) if candidates is None else candidates.shape[1]
    out = np.empty((n_q, m), dtype=np.float32)
    if n_q == 0 or m == 0:
        return out
    budget = max(1, int(chunk_elems))
    residual = heads["kind"] == "residual"
    if candidates is None:
        if residual:
            _residual_full(hq, ht, q_emb, tool_emb, heads, out, budget)
        else:
            _concat_full(hq, ht, heads["w2"], out, min(budget, _CACHE_ELEMS))
            out += np.float32(heads["b2"])
        return _sigmoid(out)

    candidates = np.asarray(candidates)
    w2 = heads["w2"]
    if residual:
        d = q_emb.shape[1]
        wx_t = np.hstack([heads["Wx"].T, np.ones((d, 1), dtype=np.float32)])  # (d, h + 1)
        cos_scale = np.float32(heads["cos_scale"])
        bias = np.float32(heads["cos_bias"] + heads["b2"])
        # Blocks of about 2**21 floats of (query, candidate, d) products measured fastest:
        # larger ones spill out of cache, smaller ones make the GEMM too thin.
        step = max(1, min(budget, _RESIDUAL_PAIR_ELEMS) // max(1, m * max(h + 1, d)))
    else:
        step = max(1, min(budget, _CACHE_ELEMS) // max(1, m * h))
    for s in range(0, n_q, step):
        e = slice(s, min(s + step, n_q))
        cand = candidates[e]
        pre = ht[cand]
        pre += hq[e, None, :]
        if residual:
            # e_q * e_t of every (query, candidate) pair, then one GEMM with [Wx; 1]^T gives
            # the interaction and the cosine. A stack of small per-query GEMMs computes the
            # same but is several times slower (and far worse with threaded BLAS).
            te = tool_emb[cand]
            te *= q_emb[e, None, :]
            g = (te.reshape(-1, d) @ wx_t).reshape(te.shape[0], m, h + 1)
            pre += g[:, :, :h]
        np.maximum(pre, 0.0, out=pre)
        z = pre @ w2
        if residual:
            z += cos_scale * g[:, :, h]
            z += bias
        else:
            z += np.float32(heads["b2"])
        out[e] = z
    return _sigmoid(out)
