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
    """``(decision, other, order, accepted)``: the scan of every row of ``ranked``.

    ``ranked`` (n_rows, m) holds tool indices, best first, each at most once per row; ``high``
    and ``broad`` flag the tools (n_tools,); ``k`` tools are accepted per row under the caps
    ``max_high`` and ``max_broad`` (``None``: no cap); a candidate whose cosine with an
    accepted one exceeds ``thr`` (``None``: the rule is off, ``emb`` may be None) is
    redundant, the fast dot products being within ``tol`` (:func:`dot_error_bound`).
    ``admit`` (n_rows, m) is need evidence: a marked high-risk candidate does not use up
    ``max_high``, an unmarked one is deferred as :data:`NOT_NEEDED` once the cap is reached
    (``None``: the paper's rule). ``eligible`` is False below the relevance floor: never
    accepted (``None``: all eligible).

    ``decision`` (int8) is each position's code; ``other`` the accepted tool a redundant
    candidate duplicates (-1 elsewhere); ``order`` each row's positions, accepted, then
    deferred, then unscanned, each in their original order; ``accepted`` the count per row.
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
