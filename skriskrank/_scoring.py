"""Fast inference of the reranker's heads with numpy.

The heads' first layer is split by input block (query, tool, and for the residual head the
query-tool interaction), so scoring a (queries x tools) grid costs a few GEMMs instead of
forming the (queries x tools x 2d) concatenation.

Cost per (query, tool) pair, with ``d`` the embedding size and ``h`` the hidden size:

- ``"concat"``: ``W1 [e_q; e_t] = Wq e_q + Wt e_t``. Both parts are GEMMs over queries and
  tools alone, so a pair costs only the ``h`` additions, ReLUs and multiply-adds of the
  hidden layer: ``O(h)`` instead of the ``O(2dh)`` of the concatenation. That work is
  elementwise and memory-bound, so it runs on blocks small enough to stay in cache.
- ``"residual"`` with projected interactions (the default, ``interaction_rank=r``): the
  interaction ``Wx ((P_q e_q) * (P_t e_t))`` is ``(Wx * p_q) p_t`` with ``p = P e`` computed
  once per query and once per tool, so a pair costs ``O(rh)`` in a thin GEMM plus the
  concatenation head's elementwise ``O(h)``, and the cosine one (queries x tools) GEMM:
  nothing per pair grows with ``d``.
- ``"residual"`` with elementwise interactions (``interaction_rank=None``): ``Wx (e_q * e_t)``
  is ``(Wx * e_q) e_t``, one GEMM of ``(queries * h, d) x (d, tools)``: ``O(dh)`` per pair,
  a third of the ``O(3dh)`` of the concatenation and exact. No exact rewrite removes this
  term (the ``h`` bilinear forms ``e_q^T diag(Wx[j]) e_t`` have full rank in general), so
  this head runs near the GEMM's speed, not below it. The cosine term rides along as one
  more row of the same GEMM.
"""

from __future__ import annotations

import numpy as np

from . import _filter_kernel, _scoring_kernel

__all__ = ["relevance", "tool_risk", "tool_side"]

#: Floats of one elementwise block of the concatenation head: 2**16 float32 values (256 KiB)
#: stay in a core's L2 cache, where the add, the ReLU and the product with ``w2`` run several
#: times faster than on blocks that spill to memory (measured in benchmarks/bench_scoring.py).
_CACHE_ELEMS = 1 << 16
#: Floats of one block of per-pair products ``e_q * e_t`` in the residual head's candidate path.
_RESIDUAL_PAIR_ELEMS = 1 << 21
#: Floats of one (queries, hidden, tools) block of the projected head's full-pool path. Its
#: GEMM has a thin inner dimension (r + 1), so larger blocks than the concatenation head's
#: pay off: 2**20 floats (4 MiB) measured fastest at d = 384 and 1024 (2 cores, 1 MiB L2
#: each), about 1.4x faster than 2**16.
_PROJECTED_ELEMS = 1 << 20


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


def _engine(engine):
    return _filter_kernel.default_engine() if engine is None else engine


def _concat_full(hq, ht, w2, out, budget, engine):
    """``out[i, t] = w2 . relu(hq[i] + ht[t])`` over all pairs, in cache-sized blocks."""
    n_q, h = hq.shape
    n_t = ht.shape[0]
    # Hidden units first: each block is (queries, h, tools), so the product with w2 is a
    # batched (1, h) x (h, tools) matmul over contiguous rows.
    ht_t = np.ascontiguousarray(ht.T)
    if engine == "numba":
        _scoring_kernel.concat_hidden(hq, ht_t, w2, out)
        return
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


def _add_hidden(pre, ht_t, t0, w2, out, engine):
    """``out += w2 . relu(pre + ht)`` for a (queries, h, tools) block ``pre`` (overwritten)."""
    if engine == "numba":
        _scoring_kernel.block_hidden(pre, ht_t, t0, w2, out)
        return
    pre += ht_t[:, t0 : t0 + pre.shape[2]]
    np.maximum(pre, 0.0, out=pre)
    out += np.matmul(w2, pre)


def _residual_full(hq, ht, q_emb, tool_emb, heads, out, budget, engine):
    """Full-pool residual head: one GEMM per chunk of queries gives interaction and cosine."""
    n_q, h = hq.shape
    n_t, d = tool_emb.shape
    w2 = heads["w2"]
    # Rows [Wx * e_q, hq] and [e_q, 0] against columns [e_t; 1]: one GEMM gives each
    # pair's first-layer pre-activation without ht, and, in the last row, cos(q, t).
    wx = np.vstack([heads["Wx"], np.ones((1, d), dtype=np.float32)])
    tool_t = np.empty((d + 1, n_t), dtype=np.float32)
    tool_t[:d] = tool_emb.T
    tool_t[d] = 1.0
    ht_t = np.ascontiguousarray(ht.T)
    c = max(1, min(n_q, budget // ((h + 1) * n_t)))
    buf = np.empty((c * (h + 1), n_t), dtype=np.float32)
    a = np.empty((c, h + 1, d + 1), dtype=np.float32)
    cos_scale = np.float32(heads["cos_scale"])
    bias = np.float32(heads["cos_bias"] + heads["b2"])
    for s in range(0, n_q, c):
        e = min(s + c, n_q)
        m = e - s
        np.multiply(q_emb[s:e, None, :], wx[None], out=a[:m, :, :d])
        a[:m, :h, d] = hq[s:e]
        a[:m, h, d] = 0.0
        g = buf[: m * (h + 1)]
        np.matmul(a[:m].reshape(-1, d + 1), tool_t, out=g)
        g3 = g.reshape(m, h + 1, n_t)
        z = out[s:e]
        np.multiply(g3[:, h], cos_scale, out=z)
        z += bias
        _add_hidden(g3[:, :h], ht_t, 0, w2, z, engine)
    return out


def _projected_full(hq, tool_side, pq, q_emb, tool_emb, heads, out, budget, engine):
    """Full-pool residual head with projected interactions ``(P_q e_q) * (P_t e_t)``.

    ``Wx ((P_q e_q) * (P_t e_t)) = (Wx * p_q) p_t``: with ``hq`` folded in as one more
    column, each (query, hidden unit) row is a length ``r + 1`` dot product with the tool's
    ``[p_t; 1]``, so a block of pairs is one thin GEMM plus the elementwise add, ReLU and
    product with ``w2`` of the concatenation head, on blocks that stay in cache. The cosine
    term is one (queries x tools) GEMM.
    """
    n_q, h = hq.shape
    n_t = tool_emb.shape[0]
    r = pq.shape[1]
    w2 = heads["w2"]
    np.matmul(q_emb, tool_emb.T, out=out)
    out *= np.float32(heads["cos_scale"])
    out += np.float32(heads["cos_bias"] + heads["b2"])
    b = np.empty((r + 1, n_t), dtype=np.float32)
    b[:r] = tool_side[:, h:].T
    b[r] = 1.0
    ht_t = np.ascontiguousarray(tool_side[:, :h].T)
    tb = min(n_t, max(256, budget // h))
    qb = max(1, budget // (h * tb))
    buf = np.empty(qb * h * tb, dtype=np.float32)
    # Rebuilt per block of queries (qb * h * (r + 1) floats) rather than held for all of
    # them, so that temporary memory stays within the block budget however many queries.
    a = np.empty((qb, h, r + 1), dtype=np.float32)
    for t0 in range(0, n_t, tb):
        t1 = min(t0 + tb, n_t)
        w = t1 - t0
        bb = np.ascontiguousarray(b[:, t0:t1])
        for s in range(0, n_q, qb):
            e = min(s + qb, n_q)
            m = e - s
            np.multiply(heads["Wx"][None], pq[s:e, None, :], out=a[:m, :, :r])
            a[:m, :, r] = hq[s:e]
            g = buf[: m * h * w].reshape(m * h, w)
            np.matmul(a[:m].reshape(m * h, r + 1), bb, out=g)
            _add_hidden(g.reshape(m, h, w), ht_t, t0, w2, out[s:e, t0:t1], engine)
    return out


def _projected_candidates(hq, side, pq, q_emb, tool_emb, candidates, heads, out, budget):
    """Projected-interaction residual head on each query's own candidates."""
    n_q, h = hq.shape
    m = candidates.shape[1]
    d = q_emb.shape[1]
    wx_t = np.ascontiguousarray(heads["Wx"].T)  # (r, h)
    cos_scale = np.float32(heads["cos_scale"])
    bias = np.float32(heads["cos_bias"] + heads["b2"])
    step = max(1, min(budget, _RESIDUAL_PAIR_ELEMS) // max(1, m * max(h, d)))
    for s in range(0, n_q, step):
        e = slice(s, min(s + step, n_q))
        cand = candidates[e]
        ts = side[cand]  # (queries, m, h + r): one gather for both tool parts
        pre = ts[:, :, :h]
        pre += hq[e, None, :]
        x = ts[:, :, h:]
        x *= pq[e, None, :]
        pre += x @ wx_t
        np.maximum(pre, 0.0, out=pre)
        z = pre @ heads["w2"]
        z += cos_scale * np.vecdot(tool_emb[cand], q_emb[e, None, :])
        z += bias
        out[e] = z
    return out


def tool_side(heads: dict, tool_emb: np.ndarray) -> np.ndarray:
    """The per-tool part of the relevance head: ``tool_emb @ Wt.T`` (and ``@ Pt.T``).

    Shape (n_tools, hidden), or (n_tools, hidden + r) for projected interactions. It depends
    on the tools alone, so a fitted reranker computes it once per tool array.
    """
    w = heads["Wt"] if "Pt" not in heads else np.vstack([heads["Wt"], heads["Pt"]])
    return np.asarray(np.asarray(tool_emb, dtype=np.float32) @ w.T, dtype=np.float32)


def relevance(heads: dict, q_emb, tool_emb, candidates=None, *, tool_hidden=None,
              chunk_elems=1 << 24, engine=None) -> np.ndarray:
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
    tool_hidden : ndarray of shape (n_tools, hidden) or (n_tools, hidden + r), default=None
        Precomputed :func:`tool_side` of ``tool_emb``.
    chunk_elems : int, default=2**24
        Bound on the floats of one (queries, tools, hidden) block. It bounds the temporary
        memory (64 MiB by default) and changes nothing in the result.
    engine : {"numba", "numpy"} or None, default=None
        The full pool's hidden layer, and the projected head on candidates: compiled
        (``_scoring_kernel``) or numpy passes. ``None`` takes numba when it is installed.
        The engines agree to float32 rounding.
    """
    q_emb = np.asarray(q_emb, dtype=np.float32)
    tool_emb = np.asarray(tool_emb, dtype=np.float32)
    hq = np.asarray(q_emb @ heads["Wq"].T + heads["b1"], dtype=np.float32)
    side = tool_side(heads, tool_emb) if tool_hidden is None else tool_hidden
    n_q, h = hq.shape
    ht = side[:, :h]
    projected = "Pq" in heads
    pq = np.asarray(q_emb @ heads["Pq"].T, dtype=np.float32) if projected else None
    m = len(tool_emb) if candidates is None else candidates.shape[1]
    out = np.empty((n_q, m), dtype=np.float32)
    if n_q == 0 or m == 0:
        return out
    budget = max(1, int(chunk_elems))
    residual = heads["kind"] == "residual"
    if candidates is None:
        if projected:
            _projected_full(hq, side, pq, q_emb, tool_emb, heads, out,
                            min(budget, _PROJECTED_ELEMS), _engine(engine))
        elif residual:
            _residual_full(hq, ht, q_emb, tool_emb, heads, out, budget, _engine(engine))
        else:
            _concat_full(hq, ht, heads["w2"], out, min(budget, _CACHE_ELEMS), _engine(engine))
            out += np.float32(heads["b2"])
        return _sigmoid(out)

    candidates = np.asarray(candidates)
    w2 = heads["w2"]
    if projected:
        if _engine(engine) == "numba":
            # One compiled pass: for an online call (one query, 100 candidates) the numpy
            # path's dozen gathers, GEMMs and temporaries cost more than the arithmetic.
            _scoring_kernel.projected_candidates(
                hq, side, pq, q_emb, tool_emb, np.ascontiguousarray(candidates),
                np.ascontiguousarray(heads["Wx"].T), heads["w2"], heads["cos_scale"],
                heads["cos_bias"] + heads["b2"], out)
            return _sigmoid(out)
        return _sigmoid(_projected_candidates(hq, side, pq, q_emb, tool_emb, candidates,
                                              heads, out, budget))
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
