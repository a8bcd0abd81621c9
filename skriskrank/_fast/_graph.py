"""One step of score propagation over each query's candidate subgraph of the ToolGraph.

Every candidate ``u`` of a query sums ``A[u, v] * score[v]`` over its graph neighbours ``v``
that are candidates of the same query: one loop over the candidates' CSR rows. Sums run in
CSR order, in float64.

Over a subset of the tools, a neighbour's candidate column comes from a bitmap of the
query's candidates (n_tools bits: one bit test rejects a neighbour that is not a candidate)
and a small open-addressing hash table for the hits. Over the full pool every tool is a
candidate and its column is its index.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _slot(u, shift, mask):
    # Fibonacci hashing: the high bits of u * 2^64/phi spread any id pattern.
    return np.int64((np.uint64(u) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(shift)) & mask


@njit(cache=True, nogil=True)
def _full(indptr, indices, data, scores, out):
    for r in range(scores.shape[0]):
        for u in range(scores.shape[1]):
            acc = 0.0
            for e in range(indptr[u], indptr[u + 1]):
                acc += data[e] * np.float64(scores[r, indices[e]])
            out[r, u] = acc


@njit(cache=True, nogil=True)
def _subset(indptr, indices, data, candidates, scores, out):
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
        keys[:] = -1
        for j in range(m):
            u = candidates[r, j]
            member[u >> 6] |= one << np.uint64(u & 63)
            h = _slot(u, shift, mask)
            while keys[h] != -1 and keys[h] != u:
                h = (h + 1) & mask
            keys[h] = u
            cols[h] = j
        for j in range(m):
            u = candidates[r, j]
            acc = 0.0
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if (member[v >> 6] >> np.uint64(v & 63)) & one:
                    h = _slot(v, shift, mask)
                    # Stops at an empty slot too, so it ends even if the bitmap were wrong.
                    while keys[h] != v and keys[h] != -1:
                        h = (h + 1) & mask
                    if keys[h] == v:
                        acc += data[e] * np.float64(scores[r, cols[h]])
            out[r, j] = acc
        for j in range(m):
            u = candidates[r, j]
            member[u >> 6] = np.uint64(0)


def spread(graph, candidates, scores):
    """``out[q, j] = sum_p A[c[q, j], c[q, p]] * scores[q, p]`` in float64, shape (n_queries, m).

    ``graph`` is a CSR array with distinct column indices per row; ``candidates`` holds
    distinct registry indices per row, or is ``None`` for the full pool (column ``j`` is tool
    ``j``); ``scores`` are float32.
    """
    out = np.empty(scores.shape, dtype=np.float64)
    args = (graph.indptr, graph.indices, graph.data)
    if candidates is None:
        _full(*args, np.ascontiguousarray(scores), out)
    else:
        _subset(*args, np.ascontiguousarray(candidates, dtype=np.int64),
                np.ascontiguousarray(scores), out)
    return out
