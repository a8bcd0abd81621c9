"""Compiled hidden layer of the full-pool relevance scoring, used when numba is installed.

Every relevance head ends in ``z[i, t] = sum_j w2[j] * relu(pre[i, j, t])`` over a (queries x
hidden x tools) grid of pre-activations. numpy computes that in three passes over a
materialized block (add, ReLU, a batched product with ``w2``), each a full read and write.
Compiled, one pass keeps each tool's running sum in a vector register:

* the concatenation head's ``pre[i, j, t] = hq[i, j] + ht[t, j]`` is never materialized at
  all, and four queries share each load of a tool row (measured 5x faster than the numpy
  passes at 1,000 x 2,032, on one core);
* the residual heads' ``pre`` comes from a GEMM block; the kernel adds ``ht``, applies the
  ReLU and takes the product with ``w2`` in the one read of that block.

The ReLU is written so that a NaN pre-activation stays NaN, as ``np.maximum`` keeps it: an
embedding that is not finite gives a NaN score on both engines, never a made-up number.
"""

from __future__ import annotations

import functools

import numpy as np

from ._filter_kernel import available

__all__ = ["available", "concat_hidden", "block_hidden", "projected_candidates"]


@functools.cache
def _kernels():
    import numpy as np
    from numba import njit

    @njit(cache=True, nogil=True, inline="always")
    def relu(v):
        # "0 if v < 0 else v": NaN < 0 is false, so NaN passes through (x86 maxps(0, v)).
        return np.float32(0.0) if v < np.float32(0.0) else v

    @njit(cache=True, nogil=True)
    def concat_hidden(hq, ht_t, w2, out, tb):
        n_q, h = hq.shape
        n_t = ht_t.shape[1]
        acc = np.empty((4, tb), dtype=np.float32)
        for t0 in range(0, n_t, tb):
            w = min(tb, n_t - t0)
            for i0 in range(0, n_q, 4):
                nb = min(4, n_q - i0)
                acc[:, :w] = 0.0
                if nb == 4:
                    for j in range(h):
                        c = w2[j]
                        a0, a1 = hq[i0, j], hq[i0 + 1, j]
                        a2, a3 = hq[i0 + 2, j], hq[i0 + 3, j]
                        for t in range(w):
                            x = ht_t[j, t0 + t]
                            acc[0, t] += c * relu(a0 + x)
                            acc[1, t] += c * relu(a1 + x)
                            acc[2, t] += c * relu(a2 + x)
                            acc[3, t] += c * relu(a3 + x)
                else:
                    for b in range(nb):
                        for j in range(h):
                            c = w2[j]
                            a = hq[i0 + b, j]
                            for t in range(w):
                                acc[b, t] += c * relu(a + ht_t[j, t0 + t])
                for b in range(nb):
                    for t in range(w):
                        out[i0 + b, t0 + t] = acc[b, t]

    @njit(cache=True, nogil=True)
    def block_hidden(g, ht_t, t0, w2, out):
        m, h, w = g.shape
        acc = np.empty(w, dtype=np.float32)
        for i in range(m):
            acc[:] = 0.0
            for j in range(h):
                c = w2[j]
                for t in range(w):
                    acc[t] += c * relu(g[i, j, t] + ht_t[j, t0 + t])
            for t in range(w):
                out[i, t] += acc[t]

    # The projected head on each query's own candidates, one candidate at a time: the
    # (h x r) interaction term is r axpys over the hidden units (vectorized as written, no
    # reordered sums), then the w2 and cosine reductions, which may be reassociated.
    @njit(cache=True, nogil=True, fastmath={"reassoc"})
    def projected_candidates(hq, side, pq, q_emb, tool_emb, cand, wx_t, w2, cos_scale, bias,
                             out):
        n_q, m = cand.shape
        h = hq.shape[1]
        r = pq.shape[1]
        d = q_emb.shape[1]
        pre = np.empty(h, dtype=np.float32)
        for i in range(n_q):
            for j in range(m):
                c = cand[i, j]
                for u in range(h):
                    pre[u] = side[c, u] + hq[i, u]
                for k in range(r):
                    xk = side[c, h + k] * pq[i, k]
                    for u in range(h):
                        pre[u] += xk * wx_t[k, u]
                z = np.float32(0.0)
                for u in range(h):
                    z += relu(pre[u]) * w2[u]
                cos = np.float32(0.0)
                for k in range(d):
                    cos += tool_emb[c, k] * q_emb[i, k]
                out[i, j] = z + cos_scale * cos + bias

    return concat_hidden, block_hidden, projected_candidates


def concat_hidden(hq, ht_t, w2, out, tb=256):
    """``out[i, t] = sum_j w2[j] * relu(hq[i, j] + ht_t[j, t])``, in tool blocks of ``tb``.

    All arrays float32; ``ht_t`` is (hidden, tools) and C-contiguous.
    """
    _kernels()[0](hq, ht_t, w2, out, tb)
    return out


def block_hidden(g, ht_t, t0, w2, out):
    """``out[i, t] += sum_j w2[j] * relu(g[i, j, t] + ht_t[j, t0 + t])`` for one block."""
    _kernels()[1](g, ht_t, t0, w2, out)
    return out


def projected_candidates(hq, side, pq, q_emb, tool_emb, cand, wx_t, w2, cos_scale, bias, out):
    """The projected-interaction residual head on each query's candidates, before sigmoid.

    ``out[i, j] = w2 . relu(side[c, :h] + hq[i] + (side[c, h:] * pq[i]) @ wx_t)
    + cos_scale * tool_emb[c] . q_emb[i] + bias`` with ``c = cand[i, j]``; float32.
    """
    _kernels()[2](hq, side, pq, q_emb, tool_emb, cand, wx_t, w2, np.float32(cos_scale),
                  np.float32(bias), out)
    return out
