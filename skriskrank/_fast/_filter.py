"""The greedy scan of the rule filter (Appendix C of the paper), one row at a time.

The scan is sequential within a row (each decision depends on the tools accepted before
it), so it is compiled rather than vectorized.

A similarity is defined as the float64 sum, in order, of the exact float64 products of the
embedding entries: one deterministic value per pair, so the decisions at the threshold are
reproducible (a reference that sums the same way gets the same ones). That sum does not
vectorize, so the scan takes the dot product vectorized, in the embeddings' own precision,
and computes the defined value only when the two could fall on different sides of the
threshold: when the fast one is within its rounding error bound ``tol``
(:func:`dot_error_bound`) of it, which is rare.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Decision codes, one per candidate position: accepted; deferred because the accepted set
#: holds enough high-risk tools, enough broad-permission tools, a near-duplicate, or (with need
#: evidence) because the query shows no need for this high-risk tool; left out below the
#: relevance floor; not scanned (after the k-th acceptance).
ACCEPTED, HIGH_RISK, BROAD, REDUNDANT, NOT_NEEDED, BELOW_FLOOR, UNSCANNED = 0, 1, 2, 3, 4, 5, -1


def dot_error_bound(dtype, dim, max_sq):
    """Bound on the rounding error of a length-``dim`` dot product, in any summation order.

    For rows of squared norm at most ``max_sq``: ``gamma_d * sum|a_i b_i| <= ~d u ||a|| ||b||``
    in unit roundoff ``u``; 4u per term is a safe margin that also covers the rounding of the
    comparisons and of the bound itself.
    """
    info = np.finfo(dtype)
    return 2.0 * (dim + 2) * float(info.eps) * max_sq + dim * float(info.tiny)


@njit(cache=True, nogil=True, fastmath=True)
def _fast_dot(a, b, zero):
    # ``zero`` carries the embeddings' dtype (reading a[0] for it would overrun at dim 0).
    s = zero
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return np.float64(s)


@njit(cache=True, nogil=True)
def _similarity(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += np.float64(a[i]) * np.float64(b[i])
    return s


@njit(cache=True, nogil=True)
def _scan(ranked, high, broad, emb, admit, eligible, k, max_high, max_broad, use_thr, thr, tol,
          decision, other, order, length):
    n, m = ranked.shape
    zero = emb.dtype.type(0)
    need_aware = admit.shape[1] > 0
    acc = np.empty(max(k, 1), dtype=np.int64)
    deferred = np.empty(m, dtype=np.int64)
    for r in range(n):
        count = 0
        n_def = 0
        n_high = 0
        n_broad = 0
        for pos in range(m):
            other[r, pos] = -1
            if count >= k:
                decision[r, pos] = UNSCANNED
                continue
            t = ranked[r, pos]
            d = ACCEPTED
            # A high-risk tool with need evidence does not use up the cap.
            counted = high[t] and not (need_aware and admit[r, pos])
            if eligible.shape[1] > 0 and not eligible[r, pos]:
                d = BELOW_FLOOR
            elif counted and max_high >= 0 and n_high >= max_high:
                d = NOT_NEEDED if need_aware else HIGH_RISK
            elif broad[t] and max_broad >= 0 and n_broad >= max_broad:
                d = BROAD
            elif use_thr:
                for a in range(count):
                    s = _fast_dot(emb[acc[a]], emb[t], zero)
                    if abs(s - thr) <= tol:
                        s = _similarity(emb[acc[a]], emb[t])
                    if s > thr:
                        d = REDUNDANT
                        other[r, pos] = acc[a]
                        break
            decision[r, pos] = d
            if d == ACCEPTED:
                order[r, count] = pos
                acc[count] = t
                count += 1
                n_high += counted
                n_broad += broad[t]
            else:
                deferred[n_def] = pos
                n_def += 1
        # Accepted, then deferred, then unscanned, each in order.
        for j in range(n_def):
            order[r, count + j] = deferred[j]
        for j in range(count + n_def, m):
            order[r, j] = j
        length[r] = count


def filter_scan(ranked, high, broad, emb, k, max_high, max_broad, thr, tol, *,
                admit=None, eligible=None):
    """The scan's decision for every candidate of every row, and the filtered order.

    Parameters
    ----------
    ranked : ndarray of int64 of shape (n_rows, m)
        Tool indices, best first, each at most once per row.
    high, broad : ndarray of bool of shape (n_tools,)
        Whether each tool is high risk / has broad permissions.
    emb : ndarray of float of shape (n_tools, dim) or None
        Tool embeddings; ``None`` when ``thr`` is None.
    k : int
        Tools to accept per row.
    max_high, max_broad : int or None
        Caps; ``None`` is no cap.
    thr : float or None
        Cosine above which a candidate is redundant; ``None`` turns the rule off.
    tol : float
        Rounding error bound of the fast dot products (:func:`dot_error_bound`).
    admit : ndarray of bool of shape (n_rows, m), default=None
        Need evidence: a high-risk candidate marked here is accepted without using up
        ``max_high``, and one not marked is deferred as :data:`NOT_NEEDED` once the cap is
        reached. ``None``: no need evidence (the paper's rule).
    eligible : ndarray of bool of shape (n_rows, m), default=None
        False for candidates below the relevance floor, never accepted. ``None``: all.

    Returns
    -------
    decision : ndarray of int8 of shape (n_rows, m)
        One decision code per position (:data:`ACCEPTED` and the deferral reasons).
    other : ndarray of int64 of shape (n_rows, m)
        For a redundant candidate, the accepted tool it duplicates; -1 elsewhere.
    order : ndarray of int64 of shape (n_rows, m)
        The positions of each row reordered: accepted, then deferred, then unscanned, each
        in their original order.
    accepted : ndarray of int64 of shape (n_rows,)
        How many tools each row accepted.
    """
    decision = np.empty(ranked.shape, dtype=np.int8)
    other = np.empty(ranked.shape, dtype=np.int64)
    order = np.empty(ranked.shape, dtype=np.int64)
    length = np.empty(len(ranked), dtype=np.int64)
    if emb is None or thr is None:
        emb, thr, tol = np.zeros((1, 1), dtype=np.float32), None, 0.0
    emb = np.ascontiguousarray(emb)
    none = np.zeros((len(ranked), 0), dtype=bool)
    _scan(np.ascontiguousarray(ranked, dtype=np.int64), high, broad, emb,
          none if admit is None else np.ascontiguousarray(admit, dtype=bool),
          none if eligible is None else np.ascontiguousarray(eligible, dtype=bool), int(k),
          -1 if max_high is None else int(max_high), -1 if max_broad is None else int(max_broad),
          thr is not None, 0.0 if thr is None else float(thr), float(tol), decision, other,
          order, length)
    return decision, other, order, length
