"""The greedy rule filter of *Risk-Aware Reranking for Agentic Tool Retrieval*, Appendix C.

After reranking, the final top-k is built greedily from the ranked list: a tool is accepted
unless accepting it would put more than ``max_high_risk`` high-risk tools, or more than
``max_broad`` broad-permission tools, into the accepted set, or unless it is near-duplicate
(cosine similarity above ``redundancy_threshold``) of a tool already accepted. Rejected tools
are deferred, not dropped: they fill the list when fewer than ``k`` tools pass, so the filter
never shortens a ranking.

:func:`rule_filter` filters one ranked list, :func:`rule_filter_batch` many at once (the scan
is vectorized across queries), and :class:`RuleFilter` is the pipeline step.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from . import _filter_kernel
from ._base import RankingStepMixin

__all__ = ["RuleFilter", "rule_filter", "rule_filter_batch"]

MSG_K = "k must be an integer >= 1, got {k!r}."
MSG_CAP = "{name} must be None (no cap) or an integer >= 0, got {value!r}."
MSG_HIGH_RISK_LEVEL = (
    "high_risk_level must be an integer risk level in 1..5, got {value!r}: tools with "
    "risk >= high_risk_level (and every unknown or out-of-range risk) count as high risk."
)
MSG_BROAD_LEVEL = "broad_level must be an integer >= 1, got {value!r}."
MSG_THRESHOLD = (
    "redundancy_threshold must be None (rule off) or a real number in [-1, 1], got {value!r}."
)
MSG_NOTHING_ACCEPTABLE = (
    "max_high_risk=0 with high_risk_level=1 marks every tool as high risk and rejects all of "
    "them, so the filter could never accept a tool; raise high_risk_level or max_high_risk."
)
MSG_RANKED_SHAPE = "{arg} must be a {ndim}-D array of tool indices, got shape {shape}."
MSG_RANKED_DTYPE = "{arg} must hold integer tool indices, got dtype {dtype}."
MSG_DUPLICATE = (
    "{where} lists tool index {index} more than once (positions {first} and {second}): "
    "a ranking holds each tool once."
)
MSG_OUT_OF_RANGE = (
    "{where} holds tool index {index} at position {pos}, outside 0..{n_max}: the per-tool "
    "arrays have {n_tools} entries."
)
MSG_TOOL_ARRAY = "{arg} must be a 1-D numeric array with one entry per tool, got {what}."
MSG_LENGTH = (
    "risk, permission_counts and embeddings must have one entry (row) per tool; got "
    "{n_risk}, {n_perm} and {n_emb}."
)
MSG_PERMISSION_COUNT = (
    "permission_counts[{index}] is {value!r}: a permission count is an integer >= 0."
)
MSG_EMBEDDINGS_SHAPE = "embeddings must be a 2-D array (n_tools, dim), got shape {shape}."
MSG_EMBEDDINGS_MISSING = (
    "embeddings is None but redundancy_threshold={thr!r} needs them: pass the tool "
    "embeddings, or set redundancy_threshold=None to turn the redundancy rule off."
)
MSG_EMBEDDINGS_NONFINITE = (
    "embeddings row {row} (tool index {row}) holds NaN or infinity, so its cosine similarity "
    "to other tools is undefined."
)
MSG_EMBEDDINGS_TOO_LARGE = (
    "embeddings row {row} (tool index {row}) has a squared norm that overflows; the rows "
    "must be L2-normalized."
)

#: Below this many queries still scanning, rule_filter_batch finishes them one by one: a
#: vectorized step costs about as much as a dozen scalar ones whatever the batch size.
_SCALAR_TAIL = 8
#: rule_filter_batch compares column pairs over the first k + _WINDOW_EXTRA columns before
#: switching to a store of each row's accepted embeddings (see _scan_rows).
_WINDOW_EXTRA = 1
#: Rows per chunk of rule_filter_batch, bounding the memory of its working buffers.
_CHUNK = 2048


class _Rules(NamedTuple):
    """The validated inputs of one filter call, shared by the scalar and batched scans."""

    high: np.ndarray  # bool per tool
    broad: np.ndarray  # bool per tool
    emb: np.ndarray | None  # None when the redundancy rule is off
    k: int
    max_high: int | None
    max_broad: int | None
    thr: float | None
    tol: float  # error bound of a dot product of two used rows, in emb's dtype
    tol64: float  # the same in float64


# -- validation -----------------------------------------------------------------------------
def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def _check_options(k, max_high_risk, high_risk_level, max_broad, broad_level, thr):
    """Validate the filter options; return them normalized (``None`` = off)."""
    if not _is_int(k) or k < 1:
        raise ValueError(MSG_K.format(k=k))
    for name, cap in (("max_high_risk", max_high_risk), ("max_broad", max_broad)):
        if cap is not None and (not _is_int(cap) or cap < 0):
            raise ValueError(MSG_CAP.format(name=name, value=cap))
    if not _is_int(high_risk_level) or not 1 <= high_risk_level <= 5:
        raise ValueError(MSG_HIGH_RISK_LEVEL.format(value=high_risk_level))
    if not _is_int(broad_level) or broad_level < 1:
        raise ValueError(MSG_BROAD_LEVEL.format(value=broad_level))
    if thr is not None and (
        not isinstance(thr, Real)
        or isinstance(thr, (bool, np.bool_))
        or not -1.0 <= float(thr) <= 1.0
    ):
        raise ValueError(MSG_THRESHOLD.format(value=thr))
    if max_high_risk == 0 and high_risk_level == 1:
        raise ValueError(MSG_NOTHING_ACCEPTABLE)
    # A cap of k or more never binds, and a cosine never exceeds 1: those are "off" too, and
    # turning them off skips their work (and the rounding fuzz above 1.0 of identical rows).
    max_high_risk = None if max_high_risk is None or max_high_risk >= k else int(max_high_risk)
    max_broad = None if max_broad is None or max_broad >= k else int(max_broad)
    thr = None if thr is None or float(thr) >= 1.0 else float(thr)
    return int(k), max_high_risk, int(high_risk_level), max_broad, int(broad_level), thr


def _check_tool_arrays(risk, permission_counts):
    arrays = []
    for arg, values in (("risk", risk), ("permission_counts", permission_counts)):
        values = np.asarray(values)
        if values.ndim != 1 or values.dtype.kind not in "iuf":
            what = f"shape {values.shape} and dtype {values.dtype}"
            raise ValueError(MSG_TOOL_ARRAY.format(arg=arg, what=what))
        arrays.append(values)
    return arrays


def _tool_flags(risk, counts, high_risk_level, broad_level, rows=None):
    """Per-tool boolean ``high`` and ``broad`` masks, over the tools ``rows`` when given.

    With ``rows``, only those tools are checked and flagged (the others stay False): a call
    that ranks 100 of 100,000 tools then costs O(100), not O(100,000).
    """
    r, c = (risk, counts) if rows is None else (risk[rows], counts[rows])
    # Only a real level below the threshold is safe: UNKNOWN_RISK, NaN, 0, negatives, 6+ and
    # fractional levels all fall through to high risk.
    safe = (r >= 1) & (r < high_risk_level)
    if r.dtype.kind == "f":
        safe &= r == np.floor(r)
    bad = ~(c >= 0)
    if c.dtype.kind == "f":
        bad |= c != np.floor(c)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        index = index if rows is None else int(rows[index])
        raise ValueError(MSG_PERMISSION_COUNT.format(index=index, value=counts[index].item()))
    if rows is None:
        return ~safe, c >= broad_level
    high = np.zeros(len(risk), dtype=bool)
    broad = np.zeros(len(risk), dtype=bool)
    high[rows] = ~safe
    broad[rows] = c >= broad_level
    return high, broad


def _check_ranked(ranked, single):
    arg = "ranked" if single else "ranked_2d"
    ranked = np.asarray(ranked)
    ndim = 1 if single else 2
    if ranked.ndim != ndim:
        raise ValueError(MSG_RANKED_SHAPE.format(arg=arg, ndim=ndim, shape=ranked.shape))
    if ranked.dtype.kind not in "iu":
        raise ValueError(MSG_RANKED_DTYPE.format(arg=arg, dtype=ranked.dtype))
    return ranked.reshape(1, -1) if single else ranked


def _check_indices(ranked, n_tools, single):
    """Range and uniqueness of a (n_rows, m) index array, vectorized over rows."""

    def where(i):
        return "ranked" if single else f"ranked_2d[{i}]"

    if ranked.size == 0:
        return ranked.astype(np.int64)
    if ranked.min() < 0 or ranked.max() >= n_tools:
        i, pos = np.argwhere((ranked < 0) | (ranked >= n_tools))[0]
        raise ValueError(
            MSG_OUT_OF_RANGE.format(
                where=where(i), index=int(ranked[i, pos]), pos=int(pos),
                n_max=n_tools - 1, n_tools=n_tools,
            )
        )
    if ranked.shape[1] > 1:
        # The indices now fit, and int32 sorts about 2.5x faster than int64.
        s = np.sort(ranked.astype(np.int32 if n_tools < 2**31 else np.int64), axis=1)
        dup = s[:, 1:] == s[:, :-1]
        if dup.any():
            i, j = np.argwhere(dup)[0]
            index = int(s[i, j])
            first, second = np.flatnonzero(ranked[i] == index)[:2]
            raise ValueError(
                MSG_DUPLICATE.format(
                    where=where(i), index=index, first=int(first), second=int(second)
                )
            )
    return ranked.astype(np.int64, copy=False)


def _check_embeddings(embeddings, ranked, n_tools, n_risk, n_perm):
    """The embeddings as float32/float64, with every row ``ranked`` references finite."""
    emb = np.asarray(embeddings)
    if emb.ndim != 2:
        raise ValueError(MSG_EMBEDDINGS_SHAPE.format(shape=emb.shape))
    if emb.shape[0] != n_tools:
        raise ValueError(MSG_LENGTH.format(n_risk=n_risk, n_perm=n_perm, n_emb=emb.shape[0]))
    if emb.dtype not in (np.float32, np.float64):
        emb = emb.astype(np.float64)
    if ranked.size < n_tools:
        rows = ranked.ravel()
        sq = np.einsum("ij,ij->i", emb[rows], emb[rows])
    else:
        # Most rows are referenced: norms of all of them beat a gather.
        used = np.zeros(n_tools, dtype=bool)
        used[ranked.ravel()] = True
        rows = np.flatnonzero(used)
        sq = np.einsum("ij,ij->i", emb, emb)[rows]
    # A NaN or infinite entry makes its row's squared norm NaN or infinite.
    bad = ~np.isfinite(sq)
    if bad.any():
        row = int(rows[np.flatnonzero(bad)[0]])
        msg = MSG_EMBEDDINGS_TOO_LARGE if np.isfinite(emb[row]).all() else MSG_EMBEDDINGS_NONFINITE
        raise ValueError(msg.format(row=row))
    return emb, float(sq.max()) if sq.size else 0.0


def _check_tools(risk, permission_counts, embeddings):
    """The risk and permission-count arrays, checked and of one length."""
    risk, counts = _check_tool_arrays(risk, permission_counts)
    if len(counts) != len(risk):
        n_emb = "-" if embeddings is None else len(embeddings)
        raise ValueError(MSG_LENGTH.format(n_risk=len(risk), n_perm=len(counts), n_emb=n_emb))
    return risk, counts


def _tool_rules(risk, counts, embeddings, high_risk_level, broad_level, thr, ranked=None):
    """The per-tool half of the rules: ``(high, broad, emb, tol, tol64)``, ``emb`` None when
    the redundancy rule is off (``thr`` None).

    ``risk`` and ``counts`` come from :func:`_check_tools`. With ``ranked`` (checked int64
    rankings), only the tools it references are flagged and checked, so a call that ranks
    100 of 100,000 tools costs O(100); without, every tool is. :class:`RuleFilter` takes
    the latter once per tool arrays, and each call then validates only its rankings: after
    the first-stage scan has flushed the cache, these checks cost more than the filtering
    of one query.
    """
    n_tools = len(risk)
    # Small calls flag only the tools they rank (4x: the unique() sort must stay cheaper).
    rows = np.unique(ranked) if ranked is not None and 4 * ranked.size < n_tools else None
    high, broad = _tool_flags(risk, counts, high_risk_level, broad_level, rows)
    emb, tol, tol64 = None, 0.0, 0.0
    if thr is not None:
        if embeddings is None:
            raise ValueError(MSG_EMBEDDINGS_MISSING.format(thr=thr))
        used = np.arange(n_tools).reshape(1, -1) if ranked is None else ranked
        emb, max_sq = _check_embeddings(embeddings, used, n_tools, n_tools, len(counts))
        tol = _dot_error_bound(emb.dtype, emb.shape[1], max_sq)
        tol64 = _dot_error_bound(np.float64, emb.shape[1], max_sq)
    elif embeddings is not None and len(embeddings) != n_tools:
        raise ValueError(
            MSG_LENGTH.format(n_risk=n_tools, n_perm=len(counts), n_emb=len(embeddings)))
    return high, broad, emb, tol, tol64


def _prepare(ranked, risk, permission_counts, embeddings, k, options, *, single, tools=None):
    """Validate one call's inputs: the (n_rows, m) int64 rankings and the _Rules.

    ``tools`` is a precomputed :func:`_tool_rules` for the same tool arrays and options;
    then only the rankings are checked.
    """
    k, max_high, level, max_broad, broad_level, thr = _check_options(k, *options)
    ranked = _check_ranked(ranked, single)
    if tools is None:
        risk, counts = _check_tools(risk, permission_counts, embeddings)
        ranked = _check_indices(ranked, len(risk), single)
        tools = _tool_rules(risk, counts, embeddings, level, broad_level, thr, ranked)
    else:
        ranked = _check_indices(ranked, len(tools[0]), single)
    high, broad, emb, tol, tol64 = tools
    return ranked, _Rules(high, broad, emb, k, max_high, max_broad, thr, tol, tol64)


def _dot_error_bound(dtype, dim, max_sq):
    # Any summation order of a length-d dot product in unit roundoff u is within
    # gamma_d * sum|a_i b_i| <= ~d*u*||a||*||b|| of the exact value; 4u per term is a safe
    # margin that also covers the rounding of the comparisons and of the bound itself.
    info = np.finfo(dtype)
    return 2.0 * (dim + 2) * float(info.eps) * max_sq + dim * float(info.tiny)


# -- the redundancy decision ----------------------------------------------------------------
# rule_filter and rule_filter_batch take dot products in different shapes (BLAS gemv,
# row-wise vecdot), which round differently. So that both give the same answer, "similarity
# > threshold" is decided on one canonical value: the correctly rounded sum (math.fsum) of
# the float64 products. A fast similarity further than its error bound from the threshold
# decides that already; only the rare ones within the bound are recomputed, first in
# float64 and, if still within its much tighter bound, exactly.
def _resolve_above(a, b, rules):
    """Canonical ``a[i] . b[i] > thr`` for the rows of (p, d) ``a`` and broadcastable ``b``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    fast = np.vecdot(a, b)
    out = fast > rules.thr + rules.tol64
    for i in np.flatnonzero(np.abs(fast - rules.thr) <= rules.tol64):
        out[i] = math.fsum((a[i] * b[i if b.ndim > 1 else ...]).tolist()) > rules.thr
    return out


# -- the scan -------------------------------------------------------------------------------
def _scan(row, rules, *, start=0, acc=(), n_high=0, n_broad=0):
    """Scan ``row[start:]`` from a partial state; return accepted positions and the stop.

    The scalar scan of :func:`rule_filter`; rule_filter_batch finishes its last rows with
    it.
    """
    high, broad, emb, k, max_high, max_broad, thr, tol, _ = rules
    acc = list(acc)
    accepted = []
    pos = start
    while pos < len(row) and len(acc) < k:
        t = row[pos]
        h, b = bool(high[t]), bool(broad[t])
        ok = not (h and max_high is not None and n_high >= max_high)
        ok = ok and not (b and max_broad is not None and n_broad >= max_broad)
        if ok and thr is not None and acc:
            others = emb[acc]
            fast = np.asarray(others @ emb[t], dtype=np.float64)
            if (fast > thr + tol).any():
                ok = False
            else:
                unsure = np.flatnonzero(fast >= thr - tol)
                ok = not (unsure.size and _resolve_above(others[unsure], emb[t], rules).any())
        if ok:
            acc.append(t)
            accepted.append(pos)
            n_high += h
            n_broad += b
        pos += 1
    return accepted, pos


def rule_filter(
    ranked,
    risk,
    permission_counts,
    embeddings,
    k=5,
    *,
    max_high_risk=1,
    high_risk_level=3,
    max_broad=2,
    broad_level=2,
    redundancy_threshold=0.9,
):
    """Greedy risk, permission and redundancy filter of one ranked list (Appendix C).

    ``ranked`` is scanned best first. A tool is accepted when, with it, the accepted set
    holds at most ``max_high_risk`` high-risk tools, at most ``max_broad`` broad-permission
    tools, and no two tools whose cosine similarity exceeds ``redundancy_threshold``;
    otherwise it is deferred. The scan stops once ``k`` tools are accepted.

    Parameters
    ----------
    ranked : array-like of int, shape (n,)
        Tool indices into the per-tool arrays, best first, each at most once.
    risk : array-like of shape (n_tools,)
        Risk level per tool. A tool is high risk when its risk is ``>= high_risk_level``
        or is not one of the levels 1..5 at all: :data:`~skriskrank.UNKNOWN_RISK`, NaN,
        0 or a negative value are never treated as safe.
    permission_counts : array-like of int, shape (n_tools,)
        Number of high-risk permission categories per tool (integers >= 0), for example
        :attr:`ToolRegistry.permission_counts`.
    embeddings : array-like of float, shape (n_tools, dim) or None
        L2-normalized tool embeddings: the dot product of two rows is their cosine
        similarity. Only the rows ``ranked`` references are read (and must be finite).
        May be ``None`` when the redundancy rule is off.
    k : int, default=5
        Number of tools to accept.
    max_high_risk : int or None, default=1
        Most high-risk tools among the accepted. ``None`` (or any value ``>= k``) is no cap.
    high_risk_level : int, default=3
        The lowest risk level (1..5) that counts as high risk.
    max_broad : int or None, default=2
        Most broad-permission tools among the accepted. ``None`` (or ``>= k``) is no cap.
    broad_level : int, default=2
        A tool with ``permission_counts >= broad_level`` has broad permissions.
    redundancy_threshold : float or None, default=0.9
        A tool whose cosine similarity to an accepted tool is above this (in [-1, 1]) is
        redundant. ``None`` or ``1.0`` turns the rule off (a cosine never exceeds 1).

    Returns
    -------
    filtered : ndarray of int64, shape (n,)
        The whole list reordered: the accepted tools, then the deferred ones, then the
        unscanned rest, each group in its original order. The first ``min(k, n)`` entries
        are the filtered top-k; when fewer than ``k`` tools pass, deferred tools fill it.

    Raises
    ------
    ValueError
        Naming the offending item: ``k < 1``, a bad option, ``ranked`` not a 1-D integer
        array, a repeated or out-of-range index, a NaN embedding row, arrays of different
        lengths.

    See Also
    --------
    rule_filter_batch : The same filter for many rankings at once.
    RuleFilter : The filter as a pipeline step.

    Notes
    -----
    The scan costs O(n * k) similarity evaluations. Options are checked for consistency
    (``max_high_risk=0`` with ``high_risk_level=1`` would reject every tool).

    Raising a count cap never lowers the number of tools accepted when the redundancy rule
    is off. With it on, it can: an extra accepted high-risk tool may make several later
    tools redundant.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import UNKNOWN_RISK
    >>> risk = np.array([1, 4, 5, 1, UNKNOWN_RISK, 2])
    >>> perms = np.array([0, 1, 0, 3, 0, 0])
    >>> emb = np.eye(6)
    >>> emb[5] = emb[0]                       # tool 5 duplicates tool 0
    >>> rule_filter([0, 1, 2, 3, 4, 5], risk, perms, emb, k=3).tolist()
    [0, 1, 3, 2, 4, 5]

    Tool 2 is a second high-risk tool and waits, and the scan stops after three accepted.
    An unlabelled tool counts as high risk, and a near-duplicate waits too:

    >>> rule_filter([4, 1, 0, 5, 3], risk, perms, emb, k=3).tolist()
    [4, 0, 3, 1, 5]

    Fewer than ``k`` tools pass, so deferred tools fill the top-k:

    >>> rule_filter([2, 1, 0], risk, perms, emb, k=3).tolist()
    [2, 0, 1]
    """
    options = (max_high_risk, high_risk_level, max_broad, broad_level, redundancy_threshold)
    ranked, rules = _prepare(
        ranked, risk, permission_counts, embeddings, k, options, single=True
    )
    return _filtered_row(ranked[0], rules)


def _filtered_row(ranked, rules):
    """One validated row, filtered by the scalar scan."""
    accepted, stop = _scan(ranked, rules)
    is_acc = np.zeros(stop, dtype=bool)
    is_acc[accepted] = True
    return np.concatenate([ranked[:stop][is_acc], ranked[:stop][~is_acc], ranked[stop:]])


def rule_filter_batch(
    ranked_2d,
    risk,
    permission_counts,
    embeddings,
    k=5,
    *,
    max_high_risk=1,
    high_risk_level=3,
    max_broad=2,
    broad_level=2,
    redundancy_threshold=0.9,
):
    """:func:`rule_filter` applied to every row of ``ranked_2d``, vectorized across rows.

    With numba installed (the ``fast`` extra) each row is scanned by a compiled loop.
    Without it the scan takes at most ``m`` steps; each processes all queries still scanning
    at once and computes similarities only against their (at most ``k``) accepted tools.
    Either way the output is identical to ``rule_filter`` row by row, including at
    similarities that round differently in the two.

    Parameters
    ----------
    ranked_2d : array-like of int, shape (n_queries, m)
        One ranked list of tool indices per row, best first.
    risk, permission_counts, embeddings, k, max_high_risk, high_risk_level, max_broad, \
broad_level, redundancy_threshold
        As in :func:`rule_filter`.

    Returns
    -------
    filtered : ndarray of int64, shape (n_queries, m)
        Each row reordered as :func:`rule_filter` does.

    Raises
    ------
    ValueError
        As :func:`rule_filter`, naming the row (``ranked_2d[i]``) of a repeated or
        out-of-range index.

    See Also
    --------
    rule_filter : One ranked list.

    Examples
    --------
    >>> import numpy as np
    >>> risk = np.array([1, 4, 5, 1])
    >>> perms = np.zeros(4, dtype=int)
    >>> emb = np.eye(4)
    >>> rule_filter_batch([[1, 2, 0, 3], [0, 1, 2, 3]], risk, perms, emb, k=2).tolist()
    [[1, 0, 2, 3], [0, 1, 2, 3]]
    """
    return _rule_filter_batch(
        ranked_2d, risk, permission_counts, embeddings, k,
        max_high_risk=max_high_risk, high_risk_level=high_risk_level, max_broad=max_broad,
        broad_level=broad_level, redundancy_threshold=redundancy_threshold,
    )


def _rule_filter_batch(
    ranked_2d, risk, permission_counts, embeddings, k=5, *, max_high_risk=1, high_risk_level=3,
    max_broad=2, broad_level=2, redundancy_threshold=0.9, scalar_tail=None, window_extra=None,
    chunk=None, engine=None, tools=None,
):
    """rule_filter_batch with its tuning knobs exposed (tests shrink them to reach every path).

    ``engine`` is ``"numba"`` (the compiled scan of ``_filter_kernel``), ``"numpy"`` (the
    scan vectorized across rows) or None: numba when it is installed. ``tools`` is a
    precomputed :func:`_tool_rules` of the same arrays and options.
    """
    options = (max_high_risk, high_risk_level, max_broad, broad_level, redundancy_threshold)
    ranked, rules = _prepare(
        ranked_2d, risk, permission_counts, embeddings, k, options, single=False, tools=tools
    )
    n_q, m = ranked.shape
    if n_q == 0 or m == 0:
        return ranked.copy()
    if engine is None:
        engine = _filter_kernel.default_engine()
    if engine == "numba":
        out = np.empty_like(ranked)
        for r in _filter_kernel.filter_rows(ranked, rules, out):
            # A similarity within rounding of the threshold: the scalar scan decides it.
            out[r] = _filtered_row(ranked[r], rules)
        return out
    tail = _SCALAR_TAIL if scalar_tail is None else scalar_tail
    extra = _WINDOW_EXTRA if window_extra is None else window_extra
    chunk = _CHUNK if chunk is None else chunk
    is_acc = np.zeros((n_q, m), dtype=bool)
    stop = np.full(n_q, m, dtype=np.int64)
    # Rows are independent; chunks bound the memory of the working buffers.
    for lo in range(0, n_q, chunk):
        hi = min(lo + chunk, n_q)
        block = ranked[lo:hi]
        # Most rows keep their first k tools; settle those wholesale and scan the rest.
        clean = _clean_prefix(block, rules)
        n_pre = min(rules.k, m)
        is_acc[lo:hi][clean, :n_pre] = True
        stop[lo:hi][clean] = n_pre
        dirty = np.flatnonzero(~clean)
        if dirty.size:
            sub_acc = np.zeros((dirty.size, m), dtype=bool)
            sub_stop = np.full(dirty.size, m, dtype=np.int64)
            _scan_rows(block[dirty], rules, sub_acc, sub_stop, tail, extra)
            is_acc[lo + dirty] = sub_acc
            stop[lo + dirty] = sub_stop
    return _assemble(ranked, is_acc, stop)


def _clean_prefix(ranked, rules):
    """Rows whose first ``min(k, m)`` candidates the greedy scan accepts, all of them.

    That holds exactly when the prefix as a whole is within both caps and holds no
    redundant pair: each candidate then finds fewer high-risk and broad tools accepted
    before it than the prefix has, and no accepted tool too similar.
    """
    high, broad, emb, k, max_high, max_broad, thr, tol, _ = rules
    prefix = ranked[:, : min(k, ranked.shape[1])]
    clean = np.ones(len(ranked), dtype=bool)
    if max_high is not None:
        clean &= np.count_nonzero(high[prefix], axis=1) <= max_high
    if max_broad is not None:
        clean &= np.count_nonzero(broad[prefix], axis=1) <= max_broad
    if thr is None or prefix.shape[1] < 2:
        return clean
    rows = np.flatnonzero(clean)
    # Column-major, so each column of the prefix is a contiguous (rows, dim) block.
    vecs = np.take(emb, prefix[rows].T, axis=0)
    ok = np.ones(rows.size, dtype=bool)
    for c in range(1, prefix.shape[1]):
        _drop_redundant_columns(
            ok, vecs[c], [(vecs[a], ok) for a in range(c)], rules, (thr - tol, thr + tol)
        )
    clean[rows] = ok
    return clean


def _scan_rows(ranked, rules, is_acc, stop, tail, extra):
    """The greedy scan of every row of ``ranked``, writing into ``is_acc`` and ``stop``.

    Step ``j`` handles column ``j`` of every row still scanning at once; the count caps are
    boolean arithmetic on all rows. The similarities come in two phases:

    * over the first ``k + extra`` columns the candidate column is compared with each
      earlier column, one row-wise dot product per column pair on contiguous arrays,
      masked by acceptance;
    * afterwards, the rows still scanning keep their (at most ``k``) accepted embeddings in
      a (rows, k, dim) buffer and each step compares against those only, so that a row's
      cost stays O(m * k) however far it scans. The buffer is compacted when fewer than
      half its rows are still scanning.

    The last ``tail`` rows are finished by the scalar scan.
    """
    high, broad, emb, k, max_high, max_broad, thr, tol, _ = rules
    n_q, m = ranked.shape
    qid = np.arange(n_q)
    rows = ranked
    alive = np.ones(n_q, dtype=bool)
    count = np.zeros(n_q, dtype=np.int64)
    n_high = np.zeros(n_q, dtype=np.int64)
    n_broad = np.zeros(n_q, dtype=np.int64)
    acc_tools = np.zeros((n_q, k), dtype=np.int64)
    bounds = (np.float64(-np.inf), np.float64(np.inf))
    if thr is not None:
        bounds = (np.float64(thr - tol), np.float64(thr + tol))
    n_window = min(m, k + extra)
    columns = []  # phase 1: (embeddings, accepted) of each earlier column
    acc_emb = None  # phase 2: the accepted embeddings
    n_live = n_q
    for j in range(m):
        if n_live <= tail:
            for r in np.flatnonzero(alive):
                accepted, end = _scan(
                    rows[r], rules, start=j, acc=acc_tools[r, : count[r]],
                    n_high=int(n_high[r]), n_broad=int(n_broad[r]),
                )
                is_acc[qid[r], accepted] = True
                stop[qid[r]] = end
            return
        if j >= n_window and 2 * n_live < len(alive):
            keep = np.flatnonzero(alive)
            qid, rows, alive, count, n_high, n_broad, acc_tools = (
                a[keep] for a in (qid, rows, alive, count, n_high, n_broad, acc_tools)
            )
            if acc_emb is not None:
                acc_emb = acc_emb[keep]
        if thr is not None and j == n_window:
            columns = None
            acc_emb = np.take(emb, acc_tools, axis=0)
        t = rows[:, j]
        h = high[t]
        b = broad[t]
        ok = alive.copy()
        if max_high is not None:
            ok &= ~h | (n_high < max_high)
        if max_broad is not None:
            ok &= ~b | (n_broad < max_broad)
        e = None
        if thr is not None:
            e = np.take(emb, t, axis=0)
            if columns is not None:
                _drop_redundant_columns(ok, e, columns, rules, bounds)
                if j < n_window - 1:
                    columns.append((e, ok))
            else:
                _drop_redundant_slots(ok, e, acc_emb, count, rules, bounds)
        acc = np.flatnonzero(ok)
        if acc.size:
            slot = count[acc]
            acc_tools[acc, slot] = t[acc]
            if acc_emb is not None:
                acc_emb[acc, slot] = e[acc]
            count += ok
            n_high += h & ok
            n_broad += b & ok
            is_acc[qid[acc], j] = True
            done = acc[count[acc] == k]
            if done.size:
                stop[qid[done]] = j + 1
                alive[done] = False
                n_live -= done.size


def _drop_redundant_columns(ok, e, columns, rules, bounds):
    """Clear ``ok`` where candidate ``e`` is redundant with an earlier accepted column."""
    lo, hi = bounds
    unsure = []
    for prev, accepted in columns:
        mask = accepted & ok
        if not mask.any():
            continue
        sims = np.vecdot(prev, e)
        ok &= ~(mask & (sims > hi))
        mask &= sims >= lo
        if mask.any():
            unsure.append((prev, mask))
    for prev, mask in unsure:
        ri = np.flatnonzero(mask & ok)
        if ri.size:
            ok[ri[_resolve_above(prev[ri], e[ri], rules)]] = False


def _drop_redundant_slots(ok, e, acc_emb, count, rules, bounds):
    """Clear ``ok`` where candidate ``e`` is redundant with an accepted slot."""
    if not ok.any():
        return
    lo, hi = bounds
    width = int(count[ok].max())
    if width == 0:
        return
    # Finished and rejected rows ride along: masking them beats gathering the others.
    sims = np.vecdot(acc_emb[:, :width], e[:, None, :])
    filled = np.arange(width) < count[:, None]
    filled &= ok[:, None]
    ok &= ~(filled & (sims > hi)).any(axis=1)
    filled &= sims >= lo
    filled &= ok[:, None]
    if filled.any():
        ri, ci = np.nonzero(filled)
        ok[ri[_resolve_above(acc_emb[ri, ci], e[ri], rules)]] = False


def _assemble(ranked, is_acc, stop):
    """Accepted, then deferred, then unscanned, each in order: a stable 3-way partition."""
    w = int(stop.max())
    out = ranked.copy()
    if w == 0:
        return out
    pos = np.arange(w)
    acc = is_acc[:, :w]
    deferred = (pos < stop[:, None]) & ~acc
    n_acc = acc.sum(axis=1, keepdims=True)
    dest = np.where(
        acc,
        np.cumsum(acc, axis=1) - 1,
        np.where(deferred, n_acc + np.cumsum(deferred, axis=1) - 1, pos),
    )
    np.put_along_axis(out[:, :w], dest, ranked[:, :w], axis=1)
    return out


# -- the pipeline step ----------------------------------------------------------------------
class RuleFilter(RankingStepMixin, TransformerMixin, BaseEstimator):
    """The greedy rule filter (Appendix C) as the final step of a skriskrank pipeline.

    ``transform`` ranks each query's candidates by their current score, applies
    :func:`rule_filter_batch` with the registry's risk levels and permission counts and the
    batch's tool embeddings, and returns the batch reordered. ``predict`` then gives the
    filtered top-``k`` names and ``rank`` the full filtered list.

    Parameters
    ----------
    k : int, default=5
        Number of tools to accept per query, and the length of ``predict``'s output.
    max_high_risk : int or None, default=1
        Most high-risk tools in the top-k; ``None`` is no cap.
    high_risk_level : int, default=3
        Lowest risk level (1..5) counted as high risk. Unlabelled tools
        (:data:`~skriskrank.UNKNOWN_RISK`) always count as high risk.
    max_broad : int or None, default=2
        Most broad-permission tools in the top-k; ``None`` is no cap.
    broad_level : int, default=2
        A tool with at least this many high-risk permission categories is broad.
    redundancy_threshold : float or None, default=0.9
        Cosine similarity above which a tool is redundant with an accepted one; ``None``
        or ``1.0`` turns the rule off.

    Attributes
    ----------
    registry_ : ToolRegistry
        The registry of the batch seen in ``fit``; later batches must share it.
    encoder_ : str
        The encoder identity of that batch.

    See Also
    --------
    rule_filter : The filter on one ranked list.
    rule_filter_batch : The vectorized filter this step calls.

    Notes
    -----
    The output scores are rank-derived, not model scores: ``transform`` sets the
    score of the tool at filtered position ``p`` to ``m - p`` (float32) for a batch with
    ``m`` candidates per query, so that ranking by score reproduces the filtered order.
    Put the filter last; a step after it would see only those ranks.

    ``fit`` learns nothing beyond the batch's registry and encoder; it rejects option
    combinations that could never accept a tool.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, ToolRegistry
    >>> from skriskrank._filter import RuleFilter
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": n, "description": d, "risk": r} for n, d, r in [
    ...         ("read_file", "Read a text file", 1),
    ...         ("delete_file", "Delete a file from disk", 4),
    ...         ("run_shell", "Run a bash command", 5),
    ...         ("get_weather", "Look up the weather", 1)]])
    >>> t_emb = np.eye(4, dtype=np.float32)
    >>> q_emb = np.array([[0.1, 0.6, 0.5, 0.4]], dtype=np.float32)
    >>> batch = RankingBatch.full_pool(reg, q_emb, t_emb)
    >>> batch.ranked_names(k=2).tolist()
    [['delete_file', 'run_shell']]
    >>> filt = RuleFilter(k=2).fit(batch)
    >>> filt.predict(batch).tolist()
    [['delete_file', 'get_weather']]
    >>> filt.rank(batch).tolist()
    [[1, 3, 2, 0]]
    """

    _parameter_constraints: dict = {
        "k": [Interval(Integral, 1, None, closed="left")],
        "max_high_risk": [Interval(Integral, 0, None, closed="left"), None],
        # The range 1..5 is checked in fit, with the message that explains it.
        "high_risk_level": [Interval(Integral, None, None, closed="neither")],
        "max_broad": [Interval(Integral, 0, None, closed="left"), None],
        "broad_level": [Interval(Integral, 1, None, closed="left")],
        "redundancy_threshold": [Interval(Real, -1, 1, closed="both"), None],
    }

    def __init__(
        self,
        *,
        k=5,
        max_high_risk=1,
        high_risk_level=3,
        max_broad=2,
        broad_level=2,
        redundancy_threshold=0.9,
    ):
        self.k = k
        self.max_high_risk = max_high_risk
        self.high_risk_level = high_risk_level
        self.max_broad = max_broad
        self.broad_level = broad_level
        self.redundancy_threshold = redundancy_threshold

    def _options(self) -> dict:
        return dict(
            max_high_risk=self.max_high_risk,
            high_risk_level=self.high_risk_level,
            max_broad=self.max_broad,
            broad_level=self.broad_level,
            redundancy_threshold=self.redundancy_threshold,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Record the batch's registry and encoder; check the options.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step.
        y : None
            Ignored.

        Returns
        -------
        self : RuleFilter
            The fitted filter.
        """
        _check_options(
            self.k, self.max_high_risk, self.high_risk_level, self.max_broad,
            self.broad_level, self.redundancy_threshold,
        )
        X = self._check_input(X, reset=True)
        self._fit_batch_state(X)
        # Built here (like the retriever's index) so that the first online call does not
        # pay for it; a bad tool embedding or permission count fails the fit, by row.
        self._tools = None
        self._tool_rules_of(X)
        return self

    def transform(self, X):
        """Reorder each query's candidates by the filter.

        Parameters
        ----------
        X : RankingBatch
            A batch built from the fitted registry.

        Returns
        -------
        X_filtered : RankingBatch
            ``candidates`` in filtered order per query and rank-derived ``scores``
            (strictly decreasing along each row); the other fields are shared with ``X``.
        """
        check_is_fitted(self)
        X = self._check_input(X, reset=False)
        options = self._options()
        # Before the per-tool half, which reads the levels (set_params may have changed them).
        _check_options(self.k, *options.values())
        filtered = _rule_filter_batch(
            X.ranked_indices(), X.registry.risk, X.registry.permission_counts,
            X.tool_embeddings, self.k, **options, tools=self._tool_rules_of(X),
        )
        m = filtered.shape[1]
        scores = np.tile(np.arange(m, 0, -1, dtype=np.float32), (filtered.shape[0], 1))
        return X.replace(candidates=filtered, scores=scores)

    def _tool_rules_of(self, X):
        # Keyed on the tool arrays themselves (like the retriever's index and the reranker's
        # tool layer) and on the options the per-tool half depends on.
        arrays = (X.registry.risk, X.registry.permission_counts, X.tool_embeddings)
        opts = (self.high_risk_level, self.broad_level, self.redundancy_threshold is not None)
        cached = getattr(self, "_tools", None)
        if (cached is None or cached[1] != opts
                or any(a is not b for a, b in zip(cached[0], arrays))):
            risk, counts = _check_tools(*arrays)
            tools = _tool_rules(risk, counts, arrays[2], self.high_risk_level,
                                self.broad_level, self.redundancy_threshold)
            cached = (arrays, opts, tools)
            self._tools = cached
        return cached[2]

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_tools", None)  # recomputed on first use: a function of the tool arrays
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = False
        tags.transformer_tags.preserves_dtype = []
        return tags
