"""The greedy rule filter of *Risk-Aware Reranking for Agentic Tool Retrieval*, Appendix C.

:func:`rule_filter` filters one ranked list or a 2-D array of them, and :class:`RuleFilter`
is the pipeline step. The scan itself is :func:`skriskrank._fast.filter_scan`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, validate_params

from ._base import RankingStepMixin, check_relevant
from ._fast import (
    ACCEPTED,
    BELOW_FLOOR,
    BROAD,
    HIGH_RISK,
    NOT_NEEDED,
    REDUNDANT,
    dot_error_bound,
    filter_scan,
)
from ._gold_model import _GoldModel
from ._poisoning import POISONING_FLAGS, flagged
from ._rubric import RISKY_LEVEL

__all__ = ["RuleFilter", "rule_filter"]

MSG_NOTHING_ACCEPTABLE = ("max_high_risk=0 with high_risk_level=1 marks every tool as high risk "
                          "and rejects all of them, so the filter could never accept a tool; "
                          "raise high_risk_level or max_high_risk.")
MSG_RANKED_SHAPE = "ranked must be a 1-D or 2-D array of tool indices, got shape {shape}."
MSG_RANKED_DTYPE = "ranked must hold integer tool indices, got dtype {dtype}."
MSG_DUPLICATE = ("{where} lists tool index {index} more than once (positions {first} and "
                 "{second}): a ranking holds each tool once.")
MSG_OUT_OF_RANGE = ("{where} holds tool index {index} at position {pos}, outside 0..{n_max}: the "
                    "per-tool arrays have {n_tools} entries.")
MSG_TOOL_ARRAY = "{arg} must be a 1-D numeric array with one entry per tool, got {what}."
MSG_LENGTH = ("risk, permission_counts and embeddings must have one entry (row) per tool; got "
              "{n_risk}, {n_perm} and {n_emb}.")
MSG_PERMISSION_COUNT = ("permission_counts[{index}] is {value!r}: a permission count is an "
                        "integer >= 0.")
MSG_EMBEDDINGS_SHAPE = "embeddings must be a 2-D array (n_tools, dim), got shape {shape}."
MSG_EMBEDDINGS_MISSING = ("embeddings is None but redundancy_threshold={thr!r} needs them: pass "
                          "the tool embeddings, or set redundancy_threshold=None to turn the "
                          "redundancy rule off.")
MSG_EMBEDDINGS_NONFINITE = ("embeddings row {row} (tool index {row}) holds NaN or infinity, so "
                            "its cosine similarity to other tools is undefined.")
MSG_EMBEDDINGS_TOO_LARGE = ("embeddings row {row} (tool index {row}) has a squared norm that "
                            "overflows; the rows must be L2-normalized.")
MSG_NEEDS_Y = ("{step} learns from the training queries' gold tools when a relevance floor or "
               "need evidence is asked for: pass y to fit.")
MSG_ONE_QUERY = ("{step} reads a tool's need from the nearest other training queries (each query "
                 "leaves itself out), so it needs at least 2 training queries, got 1.")


# -- validation -----------------------------------------------------------------------------
#: The filter's options, checked by scikit-learn's parameter validation in rule_filter and in
#: RuleFilter alike.
_OPTIONS = {
    "k": [Interval(Integral, 1, None, closed="left")],
    "max_high_risk": [Interval(Integral, 0, None, closed="left"), None],
    "high_risk_level": [Interval(Integral, 1, 5, closed="both")],
    "max_broad": [Interval(Integral, 0, None, closed="left"), None],
    "broad_level": [Interval(Integral, 1, None, closed="left")],
    "redundancy_threshold": [Interval(Real, -1, 1, closed="both"), None],
}


def _check_options(k, max_high_risk, high_risk_level, max_broad, broad_level, thr):
    """The validated options, normalized: a cap that cannot bind is off (``None``)."""
    if isinstance(k, (bool, np.bool_)):  # an Integral to scikit-learn, but k=True is a bug
        raise ValueError(f"The 'k' parameter must be an int >= 1, not {k!r}.")
    if max_high_risk == 0 and high_risk_level == 1:
        raise ValueError(MSG_NOTHING_ACCEPTABLE)
    # A cap of k or more never binds, and a cosine never exceeds 1: those are "off" too, and
    # turning them off skips their work (and the rounding fuzz above 1.0 of identical rows).
    max_high_risk = None if max_high_risk is None or max_high_risk >= k else int(max_high_risk)
    max_broad = None if max_broad is None or max_broad >= k else int(max_broad)
    thr = None if thr is None or float(thr) >= 1.0 else float(thr)
    return int(k), max_high_risk, int(high_risk_level), max_broad, int(broad_level), thr


def _check_ranked(ranked, n_tools):
    """The checked rankings as a (n_rows, m) int64 array, and whether the input was 1-D."""
    ranked = np.asarray(ranked)
    if ranked.ndim not in (1, 2):
        raise ValueError(MSG_RANKED_SHAPE.format(shape=ranked.shape))
    if ranked.dtype.kind not in "iu":
        raise ValueError(MSG_RANKED_DTYPE.format(dtype=ranked.dtype))
    single, ranked = ranked.ndim == 1, np.atleast_2d(ranked)

    def where(i):
        return "ranked" if single else f"ranked[{i}]"

    if ranked.size and (ranked.min() < 0 or ranked.max() >= n_tools):
        i, pos = np.argwhere((ranked < 0) | (ranked >= n_tools))[0]
        raise ValueError(MSG_OUT_OF_RANGE.format(where=where(i), index=int(ranked[i, pos]),
                                                 pos=int(pos), n_max=n_tools - 1, n_tools=n_tools))
    if ranked.shape[1] > 1:
        s = np.sort(ranked, axis=1)
        dup = s[:, 1:] == s[:, :-1]
        if dup.any():
            i, j = np.argwhere(dup)[0]
            first, second = np.flatnonzero(ranked[i] == s[i, j])[:2]
            raise ValueError(MSG_DUPLICATE.format(where=where(i), index=int(s[i, j]),
                                                  first=int(first), second=int(second)))
    return ranked.astype(np.int64, copy=False), single


def _tool_rules(risk, counts, embeddings, high_risk_level, broad_level, thr, rows=None):
    """Per-tool ``(high, broad, emb, tol)``, checked; ``emb`` is None when the rule is off.

    ``tol`` bounds the rounding of a dot product of two rows of ``emb``. With ``rows`` (the
    tools a call ranks), only those are flagged and checked: O(len(rows)), not O(n_tools).
    """
    risk, counts = np.asarray(risk), np.asarray(counts)
    for arg, values in (("risk", risk), ("permission_counts", counts)):
        if values.ndim != 1 or values.dtype.kind not in "iuf":
            raise ValueError(MSG_TOOL_ARRAY.format(
                arg=arg, what=f"shape {values.shape} and dtype {values.dtype}"))
    n_emb = "-" if embeddings is None else len(embeddings)
    if len(counts) != len(risk) or (embeddings is not None and n_emb != len(risk)):
        raise ValueError(MSG_LENGTH.format(n_risk=len(risk), n_perm=len(counts), n_emb=n_emb))
    rows = np.arange(len(risk)) if rows is None else rows
    r, c = risk[rows], counts[rows]
    bad = ~(c >= 0) | ((c != np.floor(c)) if c.dtype.kind == "f" else False)
    if np.any(bad):
        index = int(rows[np.flatnonzero(bad)[0]])
        raise ValueError(MSG_PERMISSION_COUNT.format(index=index, value=counts[index].item()))
    # Only a real level below the threshold is safe: UNKNOWN_RISK, NaN, 0, negatives, 6+ and
    # fractional levels all fall through to high risk.
    safe = (r >= 1) & (r < high_risk_level)
    if r.dtype.kind == "f":
        safe &= r == np.floor(r)
    high, broad = np.zeros((2, len(risk)), dtype=bool)
    high[rows], broad[rows] = ~safe, c >= broad_level
    if thr is None:
        return high, broad, None, 0.0
    if embeddings is None:
        raise ValueError(MSG_EMBEDDINGS_MISSING.format(thr=thr))
    emb = np.asarray(embeddings)
    if emb.ndim != 2:
        raise ValueError(MSG_EMBEDDINGS_SHAPE.format(shape=emb.shape))
    # A NaN or infinite entry makes its row's squared norm NaN or infinite.
    e = emb[rows]  # gathered once, for both operands
    sq = np.einsum("ij,ij->i", e, e, dtype=np.float64)
    bad = ~np.isfinite(sq)
    if bad.any():
        row = int(rows[np.flatnonzero(bad)[0]])
        msg = MSG_EMBEDDINGS_TOO_LARGE if np.isfinite(emb[row]).all() else MSG_EMBEDDINGS_NONFINITE
        raise ValueError(msg.format(row=row))
    return high, broad, emb, dot_error_bound(emb.dtype, emb.shape[1], float(sq.max(initial=0)))


def _decide(ranked, tools, options, **evidence):
    """The scan's decisions, duplicated tools, filtered order and lengths of checked rankings."""
    high, broad, emb, tol = tools
    k, max_high, _, max_broad, _, thr = options
    return filter_scan(ranked, high, broad, emb, k, max_high, max_broad, thr, tol, **evidence)


@validate_params(_OPTIONS, prefer_skip_nested_validation=True)
def rule_filter(ranked, risk, permission_counts, embeddings, k=5, *, max_high_risk=1,
                high_risk_level=RISKY_LEVEL, max_broad=2, broad_level=2,
                redundancy_threshold=0.9):
    """Greedy risk, permission and redundancy filter of ranked lists (Appendix C).

    Each list is scanned best first. A tool is accepted when, with it, the accepted set
    holds at most ``max_high_risk`` high-risk tools, at most ``max_broad`` broad-permission
    tools, and no two tools whose cosine similarity exceeds ``redundancy_threshold``;
    otherwise it is deferred. The scan stops once ``k`` tools are accepted.

    Parameters
    ----------
    ranked : array-like of int of shape (n,) or (n_queries, n)
        One ranked list of tool indices into the per-tool arrays, best first, or one per
        row; each list holds a tool at most once.
    risk : array-like of shape (n_tools,)
        Risk level per tool. A tool is high risk when its risk is ``>= high_risk_level``
        or is not one of the levels 1..5 at all: :data:`~skriskrank.UNKNOWN_RISK`, NaN,
        0 or a negative value are never treated as safe.
    permission_counts : array-like of int of shape (n_tools,)
        Number of high-risk permission categories per tool (integers >= 0), for example
        ``ToolRegistry.permission_counts``.
    embeddings : array-like of float of shape (n_tools, dim) or None
        L2-normalized tool embeddings: the dot product of two rows is their cosine
        similarity. Only the rows ``ranked`` references are read (and must be finite).
        May be ``None`` when the redundancy rule is off.
    k : int, default=5
        Number of tools to accept per list.
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
    filtered : ndarray of int64, shape of ``ranked``
        Each list reordered: the accepted tools, then the deferred ones, then the
        unscanned rest, each group in its original order. The first ``min(k, n)`` entries
        are the filtered top-k; when fewer than ``k`` tools pass, deferred tools fill it.

    See Also
    --------
    RuleFilter : The filter as a pipeline step.

    Notes
    -----
    Raising a count cap never lowers the number of tools accepted when the redundancy rule is
    off; with it on it can (an extra accepted tool may make later ones redundant).

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import UNKNOWN_RISK, rule_filter
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

    Fewer than ``k`` tools pass, so deferred tools fill the top-k; rows filter separately:

    >>> rule_filter([[2, 1, 0], [0, 5, 3]], risk, perms, emb, k=3).tolist()
    [[2, 0, 1], [0, 3, 5]]
    """
    options = _check_options(k, max_high_risk, high_risk_level, max_broad, broad_level,
                             redundancy_threshold)
    rows, single = _check_ranked(ranked, np.size(risk))
    if rows.size == 0:
        return rows.reshape(np.shape(ranked)).copy()
    # The tools the rankings reference, in order: a bitmap takes one pass over the candidates
    # and one over the tools, where np.unique would sort the candidates, which costs more than
    # the scan (benchmarks/bench_filter.py).
    used = np.zeros(np.size(risk), dtype=bool)
    used[rows.ravel()] = True
    tools = _tool_rules(risk, permission_counts, embeddings, options[2], options[4], options[5],
                        np.flatnonzero(used))
    out = np.take_along_axis(rows, _decide(rows, tools, options)[2], axis=1)
    return out[0] if single else out


# -- the pipeline step ----------------------------------------------------------------------
class RuleFilter(RankingStepMixin, TransformerMixin, BaseEstimator):
    """The greedy rule filter (Appendix C) as the final step of a skriskrank pipeline.

    ``transform`` filters each query's ranked candidates with the registry's risk levels
    and permission counts and the batch's tool embeddings (see :func:`rule_filter`) and
    returns them reordered: accepted, then deferred, then unscanned. Each candidate keeps
    its score from the step before; the filter changes the order, not the scores. A traced
    batch records each candidate's ``decision`` (a code of ``skriskrank._fast``), the tool
    it duplicates (``duplicate_of``, -1 for none) and, with a relevance model, ``p_gold``.

    Parameters
    ----------
    k, max_high_risk, high_risk_level, max_broad, broad_level, redundancy_threshold
        As for :func:`rule_filter`; ``k`` is also the length of ``predict``'s output.
    relevance_floor : float or None, default=None
        ``None`` keeps the paper's fixed length: deferred tools fill the list up to ``k``.
        A probability in [0, 1] serves shorter lists instead: a candidate whose estimated
        probability of being a gold tool (see ``relevance_model_``) is below the floor
        is left out, and nothing pads the list, so an agent is not offered tools that are
        neither wanted nor allowed. It needs ``y`` in ``fit``.

    Attributes
    ----------
    relevance_model_ : object or None
        With a relevance floor: a logistic regression of "this candidate is gold" on its
        rank and its score gap to the query's best candidate, fitted on the training batch;
        ``predict_proba(X, positions)`` gives it per candidate.
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.

    See Also
    --------
    rule_filter : The filter on arrays of rankings.
    NeedAwareFilter : Admits a high-risk tool when the query shows it needs it.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, RuleFilter, ToolRegistry
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

    _caches = ("_tools", "_flagged")  # the per-tool half of the rules, per tool array

    _parameter_constraints: dict = {
        **_OPTIONS, "relevance_floor": [Interval(Real, 0, 1, closed="both"), None]}
    #: The gold-probability model reads the query-neighbour feature (NeedAwareFilter).
    _knn_feature = False

    def __init__(self, *, k=5, max_high_risk=1, high_risk_level=RISKY_LEVEL, max_broad=2,
                 broad_level=2, redundancy_threshold=0.9, relevance_floor=None):
        self.k = k
        self.max_high_risk = max_high_risk
        self.high_risk_level = high_risk_level
        self.max_broad = max_broad
        self.broad_level = broad_level
        self.redundancy_threshold = redundancy_threshold
        self.relevance_floor = relevance_floor

    def _needs_model(self):
        return self.relevance_floor is not None

    def _options(self):
        return _check_options(self.k, self.max_high_risk, self.high_risk_level, self.max_broad,
                              self.broad_level, self.redundancy_threshold)

    def _fit_step(self, X, y):
        model = None
        if self._needs_model():
            if y is None:
                raise ValueError(MSG_NEEDS_Y.format(step=type(self).__name__))
            relevant = check_relevant(y, X.registry, X.n_queries)
            if self._knn_feature and X.n_queries < 2:
                raise ValueError(MSG_ONE_QUERY.format(step=type(self).__name__))
            model = _GoldModel(self._knn_feature, 2 * self.k).fit(X, relevant)
        self._bind(X, model)

    def _bind(self, X, relevance_model):
        """Fitted on the catalogue of ``X``, with ``relevance_model`` (learnt or pretrained)."""
        self.registry_, self.encoder_ = X.registry, X.encoder
        # Built here (like the retriever's index) so that the first online call does not
        # pay for it; a bad option, tool embedding or permission count fails the fit.
        self._tool_rules_of(X, self._options())
        self.relevance_model_ = relevance_model
        return self

    def _tool_rules_of(self, X, options):
        # Keyed on the tool arrays themselves and on the options the per-tool half reads.
        arrays = (X.registry.risk, X.registry.permission_counts, X.tool_embeddings)
        return self._cached("_tools", (*arrays, options[2], options[4], options[5] is not None),
                            lambda: _tool_rules(*arrays, options[2], options[4], options[5]))

    def _transform(self, X):
        options = self._options()  # set_params may have changed them
        positions = X.order()
        held = self._cached("_flagged", (X.registry,), lambda: flagged(X.registry))
        if held.any():
            # Tools flagged for poisoning are scanned after every other candidate (stable, so
            # each group keeps its order): one reaches the list only where the others leave
            # room.
            last = held[np.take_along_axis(X.candidates, positions, axis=1)]
            positions = np.take_along_axis(positions, np.argsort(last, axis=1, kind="stable"),
                                           axis=1)
        ranked = np.take_along_axis(X.candidates, positions, axis=1)
        p = (None if self.relevance_model_ is None
             else self.relevance_model_.predict_proba(X, positions))
        floor = None if self.relevance_floor is None else p >= self.relevance_floor
        decision, other, order, accepted = _decide(ranked, self._tool_rules_of(X, options),
                                                   options, admit=self._admit(p), eligible=floor)

        def at_candidates(values):  # from the scan's order back to X's candidates
            out = np.empty_like(values)
            np.put_along_axis(out, positions, values, axis=1)
            return out

        parts = {"decision": lambda: at_candidates(decision),
                 "duplicate_of": lambda: at_candidates(other)}
        if p is not None:
            parts["p_gold"] = lambda: at_candidates(p)
        return X.with_parts(**parts).take(np.take_along_axis(positions, order, axis=1),
                                          None if floor is None else accepted)

    def reason(self, batch, i, j):
        """The filter's decision on candidate ``j`` of query ``i`` of a traced batch, in words.

        Parameters
        ----------
        batch, i, j
            As for the other steps' ``reason``; ``batch`` is :meth:`transform`'s of a traced
            batch.

        Returns
        -------
        reason : str
            ``"accepted"``, ``"deferred: ..."`` with the rule that deferred it, ``"kept to
            fill the list, though deferred: ..."`` when fewer than ``k`` passed, or why it was
            left out.
        """
        decision = int(batch.parts["decision"][i, j])
        p = batch.parts["p_gold"][i, j] if "p_gold" in batch.parts else None
        found = batch.registry.flags[int(batch.candidates[i, j])] & set(POISONING_FLAGS)
        if found:
            why = f"held back: flagged {', '.join(sorted(found))} (review the tool)"
            return (f"kept to fill the list, though {why}" if decision == ACCEPTED else why)
        if decision == ACCEPTED:
            return "accepted"
        if decision == HIGH_RISK:
            second = "a second" if self.max_high_risk == 1 else "one more"
            why = f"deferred: {second} tool of risk >= {self.high_risk_level}"
        elif decision == BROAD:
            why = "deferred: broad permissions"
        elif decision == REDUNDANT:
            emb, u = batch.tool_embeddings, int(batch.parts["duplicate_of"][i, j])
            t = int(batch.candidates[i, j])
            why = (f"deferred: near-duplicate of {batch.registry.names[u]}, "
                   f"cosine {emb[u] @ emb[t]:.2f}")
        elif decision == NOT_NEEDED:
            why = f"deferred: not needed for this query (p={p:.2f} < {self.need_threshold:g})"
        elif decision == BELOW_FLOOR:
            return f"below the relevance floor (p={p:.2f} < {self.relevance_floor:g})"
        else:
            return "not reached: the list was full"
        held = batch.lengths is None or j < batch.lengths[i]
        # A deferred tool still fills the list when fewer than k pass: say both.
        return f"kept to fill the list, though {why}" if held and j < self.k else why

    def _admit(self, p):
        """Need evidence per candidate (none for the paper's rule)."""
        return None
