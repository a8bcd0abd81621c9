"""Exact top-n cosine search through an int8 copy of the tool embeddings.

One query's exact cosine against every tool reads the whole float32 tool matrix (154 MB at
100,000 x 384); that read, not arithmetic, is a single call's cost. The index keeps each
tool embedding as int8 codes with one scale (a quarter of the bytes), scans those, and
rescores in float32 only the tools that can still be in the top ``n``:

* tool ``t = s_t c_t + e_t`` and query ``q = s_q c_q + e_q``, with ``c`` integer codes (int8
  for tools, int16 for the query), ``s`` a scale and ``e`` the rounding residual whose norm
  is stored. Then ``q . t`` differs from ``A_t = s_q s_t (c_q . c_t)`` by at most
  ``B_t = ||s_q c_q|| ||e_t|| + ||e_q|| ||s_t c_t|| + ||e_q|| ||e_t||`` (Cauchy-Schwarz), and
  the integer dot product itself is exact in int32 (the query's code range is chosen so
  that it cannot overflow).
* the float32 cosine that defines the ranking is within ``delta`` (the worst-case rounding
  of a length-d float32 dot product) of ``q . t``. So every tool's float32 cosine lies in
  ``[A_t - B_t - delta, A_t + B_t + delta]``; with ``tau`` the n-th largest lower end, a
  tool whose upper end is below ``tau`` is beaten by at least ``n`` tools, whatever the
  rounding. Only the others (a few hundred at 100,000 tools) are rescored.

The result is the same top ``n`` as sorting the float32 cosine of every tool, ties broken
by tool index: exact, not approximate. It needs numba (the ``fast`` extra).
"""

from __future__ import annotations

import functools

import numpy as np

from . import _topk
from ._filter import _dot_error_bound
from ._filter_kernel import available

__all__ = ["Int8CosineIndex", "available"]

#: Extra slack on every interval, far above the float64 rounding of the bounds themselves.
_ROUNDING = 1e-9


@functools.cache
def _kernel():
    from numba import njit

    # Two passes: with the bounds arithmetic in the same loop body, numba no longer
    # vectorizes the int8 dot product (measured 3x slower). Serial on purpose: a parallel
    # scan measured faster alone but slower inside the pipeline, where its threads and
    # BLAS's contend for the same two cores.
    @njit(cache=True, nogil=True)
    def dots(codes, qcodes, out):
        n_tools, dim = codes.shape
        n_q = qcodes.shape[0]
        for i in range(n_tools):
            row = codes[i]
            for j in range(n_q):
                qv = qcodes[j]
                acc = np.int32(0)
                for k in range(dim):
                    acc += np.int32(row[k]) * np.int32(qv[k])
                out[j, i] = acc

    worse, push, replace_top, _ = _topk.heap()

    @njit(cache=True, nogil=True)
    def select(acc, scale, norm_c, resid, qscale, qnorm_c, qresid, delta, n, heap, slot,
               cand):
        # Pass 1: tau, the n-th largest lower end, from a heap of the n largest seen. Most
        # tools lose the one comparison with the heap's root, so this is one read of acc
        # and a few flops per tool (a partition of a float64 copy cost 1 ms at 100k).
        n_tools = acc.shape[0]
        for i in range(n_tools):
            a = np.float64(acc[i]) * (scale[i] * qscale)
            lo = a - (qnorm_c * resid[i] + qresid * (norm_c[i] + resid[i]) + delta)
            if i < n:
                push(heap, slot, i, lo, i)
            elif worse(heap[0], slot[0], lo, i):
                replace_top(heap, slot, n, lo, i)
        tau = heap[0]
        # Pass 2: every tool whose upper end reaches tau, in increasing index.
        count = 0
        for i in range(n_tools):
            a = np.float64(acc[i]) * (scale[i] * qscale)
            hi = a + (qnorm_c * resid[i] + qresid * (norm_c[i] + resid[i]) + delta)
            if hi >= tau:
                cand[count] = i
                count += 1
        return count

    return dots, select


def _query_levels(dim) -> int:
    """Largest query code magnitude whose int32 dot product with int8 codes cannot overflow.

    Queries are quantized to int16 (32,767 levels where ``dim`` allows): their rounding
    residual is then about 250 times smaller than an int8 one, which halves the error bound
    and so the tools that need exact rescoring, at no cost to the scan (the codes it streams
    are the tools' int8 ones).
    """
    return int(min(32767, (2**31 - 1) // (127 * max(dim, 1))))


def _quantize(x, block=8192, levels=127, dtype=np.int8):
    """Integer codes, scales, code norms and residual norms of the rows of ``x``.

    ``levels`` is the largest code magnitude. In blocks of rows, so that the float64
    temporaries stay small (a few tens of MB) however large the registry.
    """
    n, dim = x.shape
    codes = np.empty((n, dim), dtype=dtype)
    scale, norm_c, resid = np.empty(n), np.empty(n), np.empty(n)
    for s in range(0, n, block):
        e = min(s + block, n)
        xb = np.asarray(x[s:e], dtype=np.float64)
        peak = np.abs(xb).max(axis=1) if dim else np.zeros(e - s)
        sb = np.where(peak > 0, peak / levels, 1.0)
        cb = np.rint(xb / sb[:, None])
        codes[s:e] = cb
        cb *= sb[:, None]
        scale[s:e] = sb
        norm_c[s:e] = np.linalg.norm(cb, axis=1)
        resid[s:e] = np.linalg.norm(xb - cb, axis=1)
    return codes, scale, norm_c, resid


class Int8CosineIndex:
    """Exact top-``n`` cosine search over unit tool embeddings, by an int8 scan.

    Parameters
    ----------
    tool_embeddings : ndarray of float32 of shape (n_tools, dim)
        L2-normalized, finite tool embeddings. The index keeps a reference to it (for the
        rescoring) and an int8 copy.

    Attributes
    ----------
    tool_embeddings : ndarray of shape (n_tools, dim)
        The array the index was built from.
    nbytes : int
        Memory of the int8 copy and its per-tool scalars.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank._index import Int8CosineIndex, available
    >>> rng = np.random.default_rng(0)
    >>> tools = rng.normal(size=(1000, 16)).astype(np.float32)
    >>> tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    >>> q = tools[:2] + np.float32(0.1)
    >>> q /= np.linalg.norm(q, axis=1, keepdims=True)
    >>> if available():
    ...     idx, scores = Int8CosineIndex(tools).top(q, 5)
    ...     exact = np.argsort(-(q @ tools.T), axis=1, kind="stable")[:, :5]
    ...     assert (idx == exact).all()
    """

    def __init__(self, tool_embeddings):
        emb = np.asarray(tool_embeddings)
        if emb.ndim != 2 or emb.dtype != np.float32:
            raise ValueError("Int8CosineIndex needs a 2-d float32 array of tool embeddings.")
        if not np.isfinite(emb).all():
            raise ValueError("Int8CosineIndex needs finite tool embeddings.")
        self.tool_embeddings = emb
        self._codes, self._scale, self._norm_c, self._resid = _quantize(emb)
        # Rows need not be exactly unit: the rounding bound scales with the largest norm.
        self._max_norm = float(np.sqrt(np.einsum("ij,ij->i", emb, emb, dtype=np.float64).max()))
        self.nbytes = self._codes.nbytes + 3 * 8 * len(emb)

    def top(self, queries, n):
        """The ``n`` best tools of each query by float32 cosine, best first.

        Parameters
        ----------
        queries : ndarray of float32 of shape (n_queries, dim)
            L2-normalized, finite query embeddings.
        n : int
            Tools kept per query, at most ``n_tools``.

        Returns
        -------
        indices : ndarray of int32 of shape (n_queries, n)
            Tool indices by decreasing cosine, ties by increasing index.
        scores : ndarray of float32 of shape (n_queries, n)
            Their float32 cosines.
        """
        emb = self.tool_embeddings
        q = np.asarray(queries, dtype=np.float32)
        n_tools = len(emb)
        if not 0 <= n <= n_tools:
            raise ValueError(f"n must be in [0, {n_tools}] (the number of tools), got {n}.")
        if n == 0:  # the kernel's heap needs a slot
            return np.empty((len(q), 0), dtype=np.int32), np.empty((len(q), 0), np.float32)
        qcodes, qscale, qnorm_c, qresid = _quantize(
            q, levels=_query_levels(q.shape[1]), dtype=np.int16)
        # The float32 cosine of the rescoring is within this of the exact dot product.
        q_norm = float(np.linalg.norm(q.astype(np.float64), axis=1).max())
        delta = _dot_error_bound(np.float32, q.shape[1], q_norm * self._max_norm) + _ROUNDING
        acc = np.empty((len(q), n_tools), dtype=np.int32)
        dots, select = _kernel()
        dots(self._codes, qcodes, acc)
        heap, slot = np.empty(n), np.empty(n, dtype=np.int64)
        cand = np.empty(n_tools, dtype=np.int64)
        out_idx = np.empty((len(q), n), dtype=np.int32)
        out_scores = np.empty((len(q), n), dtype=np.float32)
        for j in range(len(q)):
            count = select(acc[j], self._scale, self._norm_c, self._resid, qscale[j],
                           qnorm_c[j], qresid[j], delta, n, heap, slot, cand)
            rows = cand[:count]
            scores = emb[rows] @ q[j]
            order = np.argsort(-scores, kind="stable")[:n]
            out_idx[j] = rows[order]
            out_scores[j] = scores[order]
        return out_idx, out_scores
