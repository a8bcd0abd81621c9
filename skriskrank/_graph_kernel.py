"""Compiled candidate-subgraph smoothing of GraphSmoother, used when numba is installed.

For each query, every candidate sums ``A_hat[u, v] * score[v]`` over its graph neighbours
``v`` that are candidates of the same query. numpy does that with a dozen array passes over
every (candidate, neighbour) entry (repeat, gather, mask, multiply, bincount); compiled, it
is one loop over the CSR rows with a scratch map from tool to candidate column. The sums
run over each CSR row in order, in float64, exactly as ``np.bincount`` adds them, so both
engines return the same bits (tested).
"""

from __future__ import annotations

import functools

import numpy as np

from ._filter_kernel import available

__all__ = ["available", "candidate_spread"]


@functools.cache
def _kernel():
    from numba import njit

    @njit(cache=True, nogil=True)
    def spread(indptr, indices, data, candidates, scores, pos, out):
        n_q, m = candidates.shape
        for r in range(n_q):
            for j in range(m):
                pos[candidates[r, j]] = j
            for j in range(m):
                u = candidates[r, j]
                acc = 0.0
                for e in range(indptr[u], indptr[u + 1]):
                    p = pos[indices[e]]
                    if p >= 0:
                        acc += data[e] * np.float64(scores[r, p])
                out[r, j] = acc
            for j in range(m):
                pos[candidates[r, j]] = -1

    return spread


def candidate_spread(graph, candidates, scores):
    """``out[q, j] = sum_p A_hat[c[q, j], c[q, p]] * scores[q, p]``, float64 (n_q, m)."""
    out = np.empty(candidates.shape, dtype=np.float64)
    pos = np.full(graph.shape[0], -1, dtype=np.int32)
    _kernel()(graph.indptr, graph.indices, graph.data, np.ascontiguousarray(candidates),
              np.ascontiguousarray(scores), pos, out)
    return out
