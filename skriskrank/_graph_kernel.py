"""Compiled candidate-subgraph smoothing of GraphSmoother, used when numba is installed.

For each query, every candidate sums ``A_hat[u, v] * score[v]`` over its graph neighbours
``v`` that are candidates of the same query. numpy does that with a dozen array passes over
every (candidate, neighbour) entry (repeat, gather, mask, multiply, bincount); compiled, it
is one loop over the CSR rows, with a bitmap and a small hash table of the candidates. The sums
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

    # Candidate columns without an n_tools-long map (at 100,000 tools that cost a 400 KB
    # fill per call and a cache miss per edge, once the retriever's scan has flushed the
    # cache). A bitmap of the query's candidates (n_tools bits: 12.5 KB, in L1) rejects the
    # ~95% of neighbours that are not candidates with one bit test; a hit then finds its
    # column in an open-addressing hash table of the candidates (2m to 4m slots).
    @njit(cache=True, nogil=True, inline="always")
    def _slot(u, shift, mask):
        # Fibonacci hashing: the high bits of u * 2^64/phi spread any id pattern.
        return np.int64((np.uint64(u) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(shift)) & mask

    @njit(cache=True, nogil=True)
    def spread(indptr, indices, data, candidates, scores, out):
        n_q, m = candidates.shape
        bits = 1
        while (1 << bits) < 2 * m:
            bits += 1
        size = 1 << bits
        mask, shift = size - 1, 64 - bits
        keys = np.empty(size, dtype=np.int64)
        cols = np.empty(size, dtype=np.int64)
        member = np.zeros((len(indptr) + 62) // 64, dtype=np.uint64)
        one = np.uint64(1)
        for r in range(n_q):
            keys[:] = -1  # at most 4m slots: O(m) per query, like filling the table
            for j in range(m):
                u = candidates[r, j]
                member[u >> 6] |= one << np.uint64(u & 63)
                h = _slot(u, shift, mask)
                while keys[h] != -1 and keys[h] != u:
                    h = (h + 1) & mask
                keys[h] = u
                cols[h] = j  # a repeated candidate keeps its last column, as a map would
            for j in range(m):
                u = candidates[r, j]
                acc = 0.0
                for e in range(indptr[u], indptr[u + 1]):
                    v = indices[e]
                    if (member[v >> 6] >> np.uint64(v & 63)) & one:
                        h = _slot(v, shift, mask)
                        while keys[h] != v and keys[h] != -1:
                            h = (h + 1) & mask
                        if keys[h] == v:  # always, as the bitmap said; never loops forever
                            acc += data[e] * np.float64(scores[r, cols[h]])
                out[r, j] = acc
            for j in range(m):
                u = candidates[r, j]
                member[u >> 6] = np.uint64(0)

    return spread


def candidate_spread(graph, candidates, scores):
    """``out[q, j] = sum_p A_hat[c[q, j], c[q, p]] * scores[q, p]``, float64 (n_q, m)."""
    out = np.empty(candidates.shape, dtype=np.float64)
    _kernel()(graph.indptr, graph.indices, graph.data, np.ascontiguousarray(candidates),
              np.ascontiguousarray(scores), out)
    return out
