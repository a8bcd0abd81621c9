"""Compiled top-k of long score rows, used when numba is installed.

``RankingBatch.order(k)`` ranks each row by descending score, ties by position, NaN last:
``np.argsort(-scores, kind="stable")[:, :k]``. For a full pool of 100,000 tools, numpy's
``argpartition`` runs an introselect per row over an int64 copy of every index (1 ms a row,
and 800 MB of indices for 1,000 queries). One pass with a bounded heap of the ``k`` best
seen so far does the same in about one comparison per score: a score that does not beat the
heap's worst, the common case, costs nothing else.

The heap orders entries by the same key as the stable sort, so the result is identical to
it, ties and NaN included (hypothesis-tested against ``np.argsort`` in ``tests/test_batch``).
"""

from __future__ import annotations

import functools

import numpy as np

from ._filter_kernel import available

__all__ = ["available", "topk_rows"]


@functools.cache
def heap():
    """The compiled heap helpers ``(worse, push, replace_top, sift_down)``, shared with
    ``_index``.

    A min-heap over parallel arrays ``vals``, ``pos``: the root is the entry that ranks last.
    """
    from numba import njit

    @njit(cache=True, nogil=True, inline="always")
    def worse(a, pa, b, pb):
        # Whether (a, pa) ranks after (b, pb): lower score, NaN below everything, and
        # among equal scores (or two NaN) the later position.
        if a != a:
            return b == b or pa > pb
        if b != b:
            return False
        if a != b:
            return a < b
        return pa > pb

    @njit(cache=True, nogil=True)
    def sift_down(vals, pos, n, c):
        v, p = vals[c], pos[c]
        while True:
            child = 2 * c + 1
            if child >= n:
                break
            if child + 1 < n and worse(vals[child + 1], pos[child + 1], vals[child],
                                       pos[child]):
                child += 1
            if not worse(vals[child], pos[child], v, p):
                break
            vals[c], pos[c] = vals[child], pos[child]
            c = child
        vals[c], pos[c] = v, p

    @njit(cache=True, nogil=True)
    def push(vals, pos, size, v, p):
        # Sift up into a min-heap (root = the worst entry) of ``size`` entries.
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
        vals[0], pos[0] = v, p
        sift_down(vals, pos, n, 0)

    return worse, push, replace_top, sift_down


@functools.cache
def _kernels():
    from numba import njit

    worse, push, replace_top, sift_down = heap()

    @njit(cache=True, nogil=True)
    def topk(scores, k, out):
        n_rows, m = scores.shape
        vals = np.empty(k, dtype=scores.dtype)
        pos = np.empty(k, dtype=np.int64)
        for r in range(n_rows):
            row = scores[r]
            for j in range(k):
                push(vals, pos, j, row[j], j)
            for j in range(k, m):
                # Positions only grow, so a tie with the root never beats it.
                x = row[j]
                if worse(vals[0], pos[0], x, j):
                    replace_top(vals, pos, k, x, j)
            # Pop worst-first into the back of the output row: best first at the end.
            for size in range(k, 0, -1):
                out[r, size - 1] = pos[0]
                vals[0], pos[0] = vals[size - 1], pos[size - 1]
                sift_down(vals, pos, size - 1, 0)

    return topk


def topk_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """``np.argsort(-scores, axis=1, kind="stable")[:, :k]`` for a 2-d float array.

    Parameters
    ----------
    scores : ndarray of float of shape (n_rows, m)
    k : int
        Between 1 and ``m``.

    Returns
    -------
    order : ndarray of int64 of shape (n_rows, k)
        Column positions, best first.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank._topk import available, topk_rows
    >>> s = np.array([[0.1, 0.9, 0.5, 0.9, np.nan]], dtype=np.float32)
    >>> if available():
    ...     assert topk_rows(s, 3).tolist() == [[1, 3, 2]]
    """
    out = np.empty((scores.shape[0], k), dtype=np.int64)
    _kernels()(np.ascontiguousarray(scores), k, out)
    return out
