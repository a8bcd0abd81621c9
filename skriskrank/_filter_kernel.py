"""Compiled greedy scan of rule_filter_batch, used when numba is installed.

The scan is sequential within a row (each decision depends on the tools accepted before
it), so numpy can only vectorize it across rows, and then pays a dozen array operations per
column step. Compiled, one row costs a few hundred nanoseconds plus its dot products.

Exactness: a similarity further than the error bound ``tol`` from the threshold decides
"redundant or not" here exactly as in the numpy scan. A row that meets a similarity within
the bound is flagged instead and rescanned by the scalar scan of ``_filter``, which decides
it canonically, so both engines return identical output.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["available", "default_engine", "filter_rows"]

_KERNEL = None


@functools.cache
def available() -> bool:
    """True when numba imports (the ``fast`` extra)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def default_engine() -> str:
    """``"numba"`` when numba imports, else ``"numpy"``: the engine every compiled path
    (rule filter, full-pool scoring) takes unless told otherwise."""
    return "numba" if available() else "numpy"


def _compile():
    global _KERNEL
    if _KERNEL is not None:
        return _KERNEL
    from numba import njit

    # fastmath lets the dot product vectorize (in emb's own dtype, in any summation order):
    # the error bound ``tol`` holds for every order, so decisions outside it do not change.
    @njit(cache=True, nogil=True, fastmath=True)
    def dot(emb, u, t, zero):
        # ``zero`` carries emb's dtype; reading emb[u, 0] for it would overrun at dim 0.
        s = zero
        for i in range(emb.shape[1]):
            s += emb[u, i] * emb[t, i]
        return np.float64(s)

    @njit(cache=True, nogil=True)
    def kernel(ranked, high, broad, emb, zero, k, max_high, max_broad, use_thr, lo, hi, out,
               unsure):
        n, m = ranked.shape
        acc = np.empty(k, dtype=np.int64)
        deferred = np.empty(m, dtype=np.int64)
        for r in range(n):
            count = 0
            n_high = 0
            n_broad = 0
            pos = 0
            n_def = 0
            while pos < m and count < k:
                t = ranked[r, pos]
                ok = True
                if high[t] and max_high >= 0 and n_high >= max_high:
                    ok = False
                if ok and broad[t] and max_broad >= 0 and n_broad >= max_broad:
                    ok = False
                if ok and use_thr:
                    for a in range(count):
                        s = dot(emb, acc[a], t, zero)
                        if s > hi:
                            ok = False
                            break
                        if s >= lo:
                            unsure[r] = True
                            break
                    if unsure[r]:
                        break
                if ok:
                    acc[count] = t
                    count += 1
                    n_high += high[t]
                    n_broad += broad[t]
                else:
                    deferred[n_def] = t
                    n_def += 1
                pos += 1
            if unsure[r]:
                continue
            # Accepted, then deferred, then the unscanned rest, each in order.
            for a in range(count):
                out[r, a] = acc[a]
            for a in range(n_def):
                out[r, count + a] = deferred[a]
            for a in range(pos, m):
                out[r, a] = ranked[r, a]

    _KERNEL = kernel
    return kernel


def filter_rows(ranked, rules, out):
    """Write every row of ``ranked``, filtered, into ``out``; return the flagged rows.

    ``rules`` is ``_filter._Rules``. The returned rows met a similarity too close to the
    threshold to decide in floating point; their ``out`` rows are left unwritten and the
    caller filters them.
    """
    high, broad, emb, k, max_high, max_broad, thr, tol, _ = rules
    kernel = _compile()
    use_thr = thr is not None
    if emb is None:
        emb = np.zeros((1, 1), dtype=np.float32)
    lo = np.float64(thr - tol) if use_thr else np.float64(0.0)
    hi = np.float64(thr + tol) if use_thr else np.float64(0.0)
    unsure = np.zeros(len(ranked), dtype=np.bool_)
    kernel(
        np.ascontiguousarray(ranked), high, broad, np.ascontiguousarray(emb), emb.dtype.type(0), k,
        -1 if max_high is None else max_high, -1 if max_broad is None else max_broad,
        use_thr, lo, hi, out, unsure,
    )
    return np.flatnonzero(unsure)
