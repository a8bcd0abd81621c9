"""Exact top-n cosine search through an int8 copy of the tool embeddings.

One query's exact cosine against every tool reads the whole float32 tool matrix; that
read, not arithmetic, is a single call's cost. The index keeps each
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
* the scan is one pass, in blocks of tools. ``tau`` is kept as the scan goes (a heap of the
  ``n`` largest lower ends seen; it only grows), and each block turns it into one integer
  threshold on ``c_q . c_t``, from the block's extreme scales and residuals: a tool below it
  cannot reach ``tau``. So most tools cost their int8 dot product and one integer
  comparison. The few that pass get an interval from their block's extremes, which contains
  the per-tool one above (the tools are stored sorted by scale, so it is nearly as tight).

The result is the same top ``n`` as sorting the float32 cosine of every tool, ties broken
by tool index: exact, not approximate.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._filter import dot_error_bound
from ._threads import thread_pool
from ._topk import push, replace_top, worse

__all__ = ["Int8CosineIndex"]

#: Extra slack on every interval, far above the float64 rounding of the bounds themselves.
_ROUNDING = 1e-9

#: Tools per block of the scan: one block's codes stay in L2 while its dot products are
#: taken, and its bound summary is one integer test per tool.
_BLOCK = 256


@njit(cache=True, nogil=True)
def _compact(cand, cand_hi, j, m, tau):
    # Keep, in order, the candidates of query j whose upper end reaches tau.
    kept = 0
    for t in range(m):
        if cand_hi[j, t] >= tau:
            cand[j, kept] = cand[j, t]
            cand_hi[j, kept] = cand_hi[j, t]
            kept += 1
    return kept

@njit(cache=True, nogil=True)
def _grow(a):
    out = np.empty((a.shape[0], 2 * a.shape[1]), dtype=a.dtype)
    out[:, : a.shape[1]] = a
    return out

# One pass over the codes (see the module docstring). The dot products go to a block
# buffer first: with the bounds in the same loop body, numba does not vectorize the int8
# dot product.
@njit(cache=True, nogil=True)
def _scan(codes, perm, qcodes, blk_smin, blk_smax, blk_resid, blk_total, qscale, qnorm_c,
         qresid, delta, n, block, b0, b1):
    # Blocks b0 to b1 only (a thread's share, with its own heap). Returns each query's
    # candidates with their upper ends, and its heap of the n largest lower ends (size[j]).
    n_tools, dim = codes.shape
    n_q = qcodes.shape[0]
    heap = np.empty((n_q, n))
    slot = np.empty((n_q, n), dtype=np.int64)
    size = np.zeros(n_q, dtype=np.int64)
    cand = np.empty((n_q, max(8 * n, 1024)), dtype=np.int64)
    cand_hi = np.empty(cand.shape)
    count = np.zeros(n_q, dtype=np.int64)
    acc = np.empty(block, dtype=np.int32)
    for b in range(b0, b1):
        s = b * block
        e = min(s + block, n_tools)
        for j in range(n_q):
            qv = qcodes[j]
            for i in range(s, e):
                row = codes[i]
                dot = np.int32(0)
                for k in range(dim):
                    dot += np.int32(row[k]) * np.int32(qv[k])
                acc[i - s] = dot
            hj, sj = heap[j], slot[j]
            qs = qscale[j]
            # Every tool of the block has scale in [smin, smax] and a rounding bound of at
            # most `bound`, so [lo, hi] below contains its interval of the module
            # docstring (for either sign of acc).
            lo_c, hi_c = blk_smin[b] * qs, blk_smax[b] * qs
            bound = qnorm_c[j] * blk_resid[b] + qresid[j] * blk_total[b] + delta
            # T: acc < T implies hi < tau. hi is increasing in acc; 2 integer units of
            # slack absorb the rounding of this float64 division.
            if size[j] < n:
                thr = np.int64(-(2**62))
            else:
                x = hj[0] - bound
                c = hi_c if x > 0 else lo_c
                thr = np.int64(max(min(np.floor(x / c), 2.0**40), -(2.0**40))) - 2
            for i in range(s, e):
                if np.int64(acc[i - s]) < thr:
                    continue
                a = np.float64(acc[i - s])
                lo = a * (lo_c if a >= 0 else hi_c) - bound
                hi = a * (hi_c if a >= 0 else lo_c) + bound
                if size[j] < n:
                    push(hj, sj, size[j], lo, i)
                    size[j] += 1
                elif worse(hj[0], sj[0], lo, i):
                    replace_top(hj, sj, n, lo, i)
                # The running tau only grows, so hi < tau now means hi < the final tau.
                if size[j] == n and hi < hj[0]:
                    continue
                m = count[j]
                if m == cand.shape[1]:
                    m = _compact(cand, cand_hi, j, m, hj[0] if size[j] == n else -np.inf)
                    if m > cand.shape[1] // 2:
                        cand, cand_hi = _grow(cand), _grow(cand_hi)
                cand[j, m] = perm[i]  # read in scan order: a sequential stream
                cand_hi[j, m] = hi
                count[j] = m + 1
    for j in range(n_q):
        if size[j] == n:
            count[j] = _compact(cand, cand_hi, j, count[j], heap[j, 0])
    return cand, cand_hi, count, heap, size

@njit(cache=True, nogil=True)
def _quantize_rows(x, levels, codes, scale, norm_c, resid):
    # Row by row in float64: peak / levels is the scale, the codes are the rounded
    # quotients (np.rint: half to even), and the norms are those of the dequantized
    # codes and of what they leave out.
    n, dim = x.shape
    for i in range(n):
        peak = 0.0
        for k in range(dim):
            peak = max(peak, abs(np.float64(x[i, k])))
        s = peak / levels if peak > 0 else 1.0
        nc = 0.0
        nr = 0.0
        for k in range(dim):
            v = np.float64(x[i, k])
            c = np.rint(v / s)
            codes[i, k] = c
            nc += (c * s) ** 2
            nr += (v - c * s) ** 2
        scale[i] = s
        norm_c[i] = np.sqrt(nc)
        resid[i] = np.sqrt(nr)

# Any summation order is within the error bound delta, so the float32 dot product may be
# reassociated (vectorized); it reads each candidate row in place, with no gathered copy.
@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _dot(row, q):
    acc = np.float32(0.0)
    for k in range(row.shape[0]):
        acc += row[k] * q[k]
    return acc

@njit(cache=True, nogil=True)
def _finish(emb, q, rows, n, out_idx, out_scores):
    # At least n rows always survive (the n best lower ends are above tau); the check
    # turns a broken invariant into an error instead of a read past the arrays.
    if rows.shape[0] < n:
        raise AssertionError("Int8CosineIndex: fewer candidates than n")
    # Registry order first, so that the stable sort breaks ties by tool index.
    rows = np.sort(rows)
    scores = np.empty(rows.shape[0], dtype=np.float32)
    for t in range(rows.shape[0]):
        scores[t] = _dot(emb[rows[t]], q)
    order = np.argsort(-scores, kind="mergesort")
    for t in range(n):
        out_idx[t] = rows[order[t]]
        out_scores[t] = scores[order[t]]


def _quantize(x, levels=127, dtype=np.int8):
    """Integer codes, scales, code norms and residual norms of the rows of ``x``.

    ``levels`` is the largest code magnitude. Compiled, row by row: no float64 copy of ``x``.
    """
    n, dim = x.shape
    codes = np.empty((n, dim), dtype=dtype)
    scale, norm_c, resid = np.empty(n), np.empty(n), np.empty(n)
    _quantize_rows(x, float(levels), codes, scale, norm_c, resid)
    return codes, scale, norm_c, resid


class Int8CosineIndex:
    """Exact top-``n`` cosine search over unit tool embeddings, by an int8 scan.

    The index keeps ``tool_embeddings`` (L2-normalized, finite float32 rows, read when
    rescoring) and an int8 copy; ``nbytes`` is the memory of the copy, its order and the
    per-block bounds. ``block`` tools share one bound summary: any size gives the same
    result, and small ones let tests exercise many blocks on small registries.
    """

    def __init__(self, tool_embeddings, *, block=_BLOCK):
        if not (isinstance(block, (int, np.integer)) and block >= 1):
            raise ValueError(f"block must be a positive integer, got {block!r}.")
        emb = np.asarray(tool_embeddings)
        if emb.ndim != 2 or emb.dtype != np.float32:
            raise ValueError("Int8CosineIndex needs a 2-d float32 array of tool embeddings.")
        if not np.isfinite(emb).all():
            raise ValueError("Int8CosineIndex needs finite tool embeddings.")
        self.tool_embeddings = emb
        codes, scale, norm_c, resid = _quantize(emb)
        # The scan's order: by scale, so that each block's bound summary is tight (see
        # _scan). Positions in it map back to registry indices through _perm.
        self._perm = np.argsort(scale, kind="stable")
        self._codes = codes[self._perm]
        self._block = int(block)
        starts = np.arange(0, len(emb), self._block)
        self._blocks = tuple(f.reduceat(x[self._perm], starts) for f, x in (
            (np.minimum, scale), (np.maximum, scale), (np.maximum, resid),
            (np.maximum, norm_c + resid)))
        # Rows need not be exactly unit: the rounding bound scales with the largest norm.
        max_norm = float(np.sqrt(np.einsum("ij,ij->i", emb, emb, dtype=np.float64).max()))
        # The float32 rescoring's error bound is affine in the query norm: a + b * ||q||.
        dim = emb.shape[1]
        floor = dot_error_bound(np.float32, dim, 0.0)
        self._delta = (floor + _ROUNDING, dot_error_bound(np.float32, dim, max_norm) - floor)
        self.nbytes = self._codes.nbytes + self._perm.nbytes + 4 * 8 * len(starts)

    def top(self, queries, n, *, n_threads=1):
        """``(indices, scores)``, (n_queries, n): each query's ``n`` best tools by float32 cosine.

        Tool indices (int64) by decreasing cosine, ties by increasing index, and their float32
        cosines, for L2-normalized, finite queries and ``n <= n_tools``. ``n_threads`` share
        the scan, each over a contiguous range of blocks; the result does not depend on it.
        """
        emb = self.tool_embeddings
        q = np.asarray(queries, dtype=np.float32)
        n_tools = len(emb)
        if not 0 <= n <= n_tools:
            raise ValueError(f"n must be in [0, {n_tools}] (the number of tools), got {n}.")
        if q.ndim != 2 or q.shape[1] != emb.shape[1] or not np.isfinite(q).all():
            raise ValueError(
                f"queries must be a finite (n_queries, {emb.shape[1]}) array; got shape "
                f"{q.shape}{'' if np.isfinite(q).all() else ' with non-finite values'}.")
        if n == 0:  # the kernel's heap needs a slot
            return np.empty((len(q), 0), dtype=np.int64), np.empty((len(q), 0), np.float32)
        # Queries are quantized to int16, as many levels as int32 dot products with int8
        # codes allow (32,767 where dim does): their rounding residual is then about 250
        # times smaller than an int8 one, which halves the error bound and so the tools that
        # need exact rescoring, at no cost to the scan (it streams the tools' int8 codes).
        levels = min(32767, (2**31 - 1) // (127 * max(q.shape[1], 1)))
        qcodes, qscale, qnorm_c, qresid = _quantize(q, levels=levels, dtype=np.int16)
        # The float32 cosine of the rescoring is within this of the exact dot product.
        q_norm = float(np.sqrt(np.einsum("ij,ij->i", q, q, dtype=np.float64).max()))
        delta = self._delta[0] + self._delta[1] * q_norm
        args = (self._codes, self._perm, qcodes, *self._blocks, qscale, qnorm_c, qresid, delta,
                n, self._block)
        n_blocks = len(self._blocks[0])
        shares = max(1, min(int(n_threads), n_blocks))
        bounds = [n_blocks * i // shares for i in range(shares + 1)]
        # This thread scans the first share; a pool (if there are more shares) the others.
        futures = [thread_pool(len(bounds) - 2).submit(_scan, *args, b0, b1)
                   for b0, b1 in zip(bounds[1:-1], bounds[2:], strict=True)]
        parts = [_scan(*args, bounds[0], bounds[1])] + [f.result() for f in futures]
        out_idx = np.empty((len(q), n), dtype=np.int64)
        out_scores = np.empty((len(q), n), dtype=np.float32)
        for j in range(len(q)):
            if len(parts) == 1:
                rows = parts[0][0][j, : parts[0][2][j]]
            else:
                # tau is the n-th largest lower end over every share's heap; each share
                # kept its candidates by its own, lower, tau.
                lows = np.concatenate([p[3][j, : p[4][j]] for p in parts])
                tau = np.partition(lows, len(lows) - n)[len(lows) - n]
                rows = np.concatenate(
                    [p[0][j, : p[2][j]][p[1][j, : p[2][j]] >= tau] for p in parts])
            _finish(emb, q[j], rows, n, out_idx[j], out_scores[j])
        return out_idx, out_scores
