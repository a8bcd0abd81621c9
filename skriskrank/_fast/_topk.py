"""Top-k of long score rows in one pass, with a bounded heap per row.

Unlike ``argpartition``, :func:`topk_rows` makes no int64 copy of every index: a score that
does not beat the heap's worst, the common case, costs one comparison.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MSG_TOPK_K = "k={k} is outside 0..{m}, the number of scores per row."


@njit(cache=True, nogil=True, inline="always")
def worse(a, pa, b, pb):
    """Whether (a, pa) ranks after (b, pb): lower score, NaN lowest, then later position."""
    if a != a:
        return b == b or pa > pb
    if b != b:
        return False
    if a != b:
        return a < b
    return pa > pb


@njit(cache=True, nogil=True)
def sift_down(vals, pos, n, c):
    """Restore the min-heap (root = the entry that ranks last) below slot ``c``."""
    v, p = vals[c], pos[c]
    while True:
        child = 2 * c + 1
        if child >= n:
            break
        if child + 1 < n and worse(vals[child + 1], pos[child + 1], vals[child], pos[child]):
            child += 1
        if not worse(vals[child], pos[child], v, p):
            break
        vals[c], pos[c] = vals[child], pos[child]
        c = child
    vals[c], pos[c] = v, p


@njit(cache=True, nogil=True)
def push(vals, pos, size, v, p):
    """Add (v, p) to a min-heap of ``size`` entries."""
    c = size
    while c > 0:
        parent = (c - 1) // 2
        if not worse(v, p, vals[parent], pos[parent]):
            break
        vals[c], pos[c] = vals[parent], pos[parent]
        c = parent
    vals[c], pos[c] = v, p


@njit(cache=True, nogil=True)
def replace_top(vals, pos, n, v, p):
    """Replace the root (the worst entry) of a full heap of ``n`` by (v, p)."""
    vals[0], pos[0] = v, p
    sift_down(vals, pos, n, 0)


@njit(cache=True, nogil=True)
def _topk(scores, k, out):
    n_rows, m = scores.shape
    vals = np.empty(k, dtype=scores.dtype)
    pos = np.empty(k, dtype=np.int64)
    for r in range(n_rows):
        row = scores[r]
        for j in range(k):
            push(vals, pos, j, row[j], j)
        for j in range(k, m):
            # Positions only grow, so a tie with the root never beats it.
            if worse(vals[0], pos[0], row[j], j):
                replace_top(vals, pos, k, row[j], j)
        # Pop worst-first into the back of the output row: best first at the end.
        for size in range(k, 0, -1):
            out[r, size - 1] = pos[0]
            vals[0], pos[0] = vals[size - 1], pos[size - 1]
            sift_down(vals, pos, size - 1, 0)


def topk_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """``np.argsort(-scores, axis=1, kind="stable")[:, :k]`` (int64): ties by position, NaN last.

    ``k`` is between 0 and the row length ``m``.
    """
    if not 0 <= k <= scores.shape[1]:
        # The kernel does not check bounds: it would read past the end of each row.
        raise ValueError(MSG_TOPK_K.format(k=k, m=scores.shape[1]))
    out = np.empty((scores.shape[0], k), dtype=np.int64)
    if k:
        _topk(np.ascontiguousarray(scores), k, out)
    return out
