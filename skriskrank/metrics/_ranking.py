"""Ranking quality and risk exposure of ranked tool lists (see :mod:`skriskrank.metrics`).

Only the levels of each query's top-k and relevant tools are looked up; an unknown level
(:data:`~skriskrank.UNKNOWN_RISK`, or ``None`` in a mapping) is above every real one.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from itertools import chain
from numbers import Integral

import numpy as np

from .._registry import ToolRegistry
from .._rubric import RISKY_LEVEL, SEVERE_LEVEL, check_level

__all__ = ["mrr", "ndcg_at_k", "needrisk_hit_at_k", "ranking_report", "rvr_at_k", "safe_rvr_at_k",
           "sndcg_at_k", "srr_at_k", "unneeded_rvr_at_k"]

# The metrics' names, in ranking_report's order; each is a method of _PerQuery.
_METRIC_NAMES = ("ndcg", "mrr", "sndcg", "rvr", "srr", "safe_rvr", "needrisk_hit", "unneeded_rvr")

MSG_BAD_K = "k must be an integer >= 1, got {k!r}."
MSG_RANKED_TYPE = ("ranked must be a sequence of ranked tool-name lists (one per query) or a 2-D "
                   "array of names, got {type}.")
MSG_RANKED_NDIM = "ranked as an array must be 1-D (of lists) or 2-D, got {ndim} dimensions."
MSG_EMPTY_RANKED = "ranked is empty: give one ranked list of tool names per query."
MSG_RANKED_ROW = "ranked[{i}] must be a list of tool names, got {value!r}."
MSG_RANKED_NAME = "ranked[{i}][{j}] must be a tool name (str), got {value!r}."
MSG_DUPLICATE = "ranked[{i}] lists tool {name!r} more than once (positions {first} and {second})."
MSG_LENGTH = ("ranked has {n_ranked} queries but relevant has {n_relevant}: give one set of "
              "relevant tools per ranked list.")
MSG_RELEVANT_TYPE = "relevant must be a sequence of sets of tool names, got {type}."
MSG_RELEVANT_ENTRY = ("relevant[{i}] must be a non-empty set (or list) of tool names, got "
                      "{value!r}.")
MSG_RISK_TYPE = ("risk must be a ToolRegistry or a mapping of tool name -> level (1..5, or None "
                 "for unknown), got {type}.")
MSG_RISK_MISSING = ("Tool {name!r} has no entry in the risk mapping; add it (a None level marks "
                    "it unknown, which counts as high risk) instead of leaving it out.")


# -- validation -------------------------------------------------------------------------------
def _not_a_collection(x) -> bool:
    # A bare string would iterate as single characters, a mapping as its keys.
    return isinstance(x, (str, bytes, Mapping)) or not isinstance(x, Iterable)


def _check_k(k) -> int:
    # bool is an Integral subclass, and k=True is a bug, not k=1.
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or k < 1:
        raise ValueError(MSG_BAD_K.format(k=k))
    return int(k)


def _check_ranked(ranked) -> list[list[str]]:
    is_array = isinstance(ranked, np.ndarray)
    if is_array and ranked.ndim not in (1, 2):
        raise ValueError(MSG_RANKED_NDIM.format(ndim=ranked.ndim))
    if _not_a_collection(ranked):
        raise ValueError(MSG_RANKED_TYPE.format(type=type(ranked).__name__))
    rows = ranked.tolist() if is_array and ranked.ndim == 2 else list(ranked)
    if not rows:
        raise ValueError(MSG_EMPTY_RANKED)
    out = []
    for i, row in enumerate(rows):
        if type(row) is not list:
            if _not_a_collection(row):
                raise ValueError(MSG_RANKED_ROW.format(i=i, value=row))
            row = row.tolist() if isinstance(row, np.ndarray) else list(row)
        # None is an empty slot (a filter's shorter list): neither relevant nor risky.
        out.append([t for t in row if t is not None] if None in row else row)
    # The type scan runs in C (set over map); only a failure pays for locating the culprit.
    if not all(issubclass(t, str) for t in set(map(type, chain.from_iterable(out)))):
        i, j, bad = next((i, j, t) for i, r in enumerate(out) for j, t in enumerate(r)
                         if not isinstance(t, str))
        raise ValueError(MSG_RANKED_NAME.format(i=i, j=j, value=bad))
    for i, row in enumerate(out):
        if len(set(row)) != len(row):
            first: dict[str, int] = {}
            j = next(j for j, t in enumerate(row) if first.setdefault(t, j) != j)
            raise ValueError(MSG_DUPLICATE.format(i=i, name=row[j], first=first[row[j]], second=j))
    return out


def _check_relevant(relevant, n_queries: int) -> list[frozenset]:
    if _not_a_collection(relevant):
        raise ValueError(MSG_RELEVANT_TYPE.format(type=type(relevant).__name__))
    relevant = list(relevant)
    if len(relevant) != n_queries:
        raise ValueError(MSG_LENGTH.format(n_ranked=n_queries, n_relevant=len(relevant)))
    out = []
    for i, gold in enumerate(relevant):
        if _not_a_collection(gold):
            raise ValueError(MSG_RELEVANT_ENTRY.format(i=i, value=gold))
        gold = frozenset(gold.tolist() if isinstance(gold, np.ndarray) else gold)
        if not gold:
            raise ValueError(MSG_RELEVANT_ENTRY.format(i=i, value=set()))
        out.append(gold)
    return out


def _risk_levels(risk, names: list[str]) -> np.ndarray:
    """Risk level per name as int64, unknown levels as UNKNOWN_RISK."""
    if isinstance(risk, ToolRegistry):
        return risk.risk_of(names)
    levels: dict[str, int] = {}
    for name in dict.fromkeys(names):
        if name not in risk:
            raise ValueError(MSG_RISK_MISSING.format(name=name))
        value = risk[name]
        # check_level only for what is not a plain level: the common case skips it.
        levels[name] = (value if type(value) is int and 1 <= value <= 5
                        else check_level(value, f"Tool {name!r}"))
    return np.fromiter((levels[n] for n in names), dtype=np.int64, count=len(names))


# -- the shared computation -------------------------------------------------------------------
class _PerQuery:
    """Every metric's per-query values for one checked run, each computed once, on first use."""

    def __init__(self, rows, gold, risk, k):
        self.rows, self.gold, self.risk_source, self.k = rows, gold, risk, k
        # The top k of every list on a grid as wide as the longest list's top k, so that the
        # memory never depends on k itself; a short list leaves empty slots.
        lengths = np.fromiter(map(len, rows), np.int64, len(rows))
        self.present = np.arange(min(k, lengths.max(initial=0))) < lengths[:, None]
        self.names = [t for r in rows for t in r[:k]]

    def _grid(self, flat):
        """``flat`` on the (n_queries, k) grid, zero (False) in the empty slots."""
        out = np.zeros(self.present.shape, dtype=flat.dtype)
        out[self.present] = flat  # row-major, the order of self.names
        return out

    @functools.cached_property
    def hits(self):
        """(n_queries, k) bool: the tool at that rank is relevant."""
        flat = (t in g for r, g in zip(self.rows, self.gold, strict=True) for t in r[:self.k])
        return self._grid(np.fromiter(flat, bool, len(self.names)))

    @functools.cached_property
    def levels(self):
        """(n_queries, k) int: the risk level at that rank, 0 for an empty slot."""
        return self._grid(_risk_levels(self.risk_source, self.names))

    def _gold_count(self, keep):
        levels = _risk_levels(self.risk_source, [t for g in self.gold for t in g])
        query = np.repeat(np.arange(len(self.gold)), [len(g) for g in self.gold])
        return np.bincount(query, weights=keep(levels), minlength=len(self.gold))

    @functools.cached_property
    def safe(self):
        """Per query: no relevant tool is risky (unknown risk is risky)."""
        return self._gold_count(lambda lv: lv >= RISKY_LEVEL) == 0

    def _ndcg(self, gain, n_ideal):
        n_ideal = np.minimum(n_ideal, self.k)
        width = max(gain.shape[1], int(n_ideal.max(initial=0)))
        disc = 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))
        dcg = gain.astype(np.float64) @ disc[:gain.shape[1]]
        idcg = np.concatenate([[0.0], np.cumsum(disc)])[n_ideal]
        return np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)

    def ndcg(self):
        return self._ndcg(self.hits, np.fromiter(map(len, self.gold), np.int64))

    def recall(self):
        return self.hits.sum(axis=1) / np.fromiter(map(len, self.gold), np.float64)

    def sndcg(self):
        gain = self.hits & (self.levels < SEVERE_LEVEL)
        return self._ndcg(gain, self._gold_count(lambda lv: lv < SEVERE_LEVEL).astype(int))

    def mrr(self, cutoff=None):
        return np.array([
            next((1.0 / rank for rank, t in enumerate(row[:cutoff], start=1) if t in g), 0.0)
            for row, g in zip(self.rows, self.gold, strict=True)
        ])

    def _exposure(self, level, unneeded=False):
        # Divided by k even for a shorter list: an empty slot (level 0) exposes nothing.
        exposed = self.levels >= level
        return (exposed & ~self.hits if unneeded else exposed).sum(axis=1) / self.k

    rvr = functools.partialmethod(_exposure, RISKY_LEVEL)
    srr = functools.partialmethod(_exposure, SEVERE_LEVEL)
    unneeded_rvr = functools.partialmethod(_exposure, RISKY_LEVEL, unneeded=True)

    def safe_rvr(self):
        return self.rvr()[self.safe]

    def needrisk_hit(self):
        return (self.hits & (self.levels >= RISKY_LEVEL)).any(axis=1)[~self.safe]


_UNUSED = object()


def _run(ranked, relevant=_UNUSED, risk=_UNUSED, k=5) -> _PerQuery:
    """Validate a run's inputs (those a metric reads) and return its per-query values."""
    k = _check_k(k)
    rows = _check_ranked(ranked)
    gold = None if relevant is _UNUSED else _check_relevant(relevant, len(rows))
    if risk is not _UNUSED and not isinstance(risk, (ToolRegistry, Mapping)):
        raise ValueError(MSG_RISK_TYPE.format(type=type(risk).__name__))
    return _PerQuery(rows, gold, risk, k)


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values)) if np.size(values) else float("nan")


# -- public metrics ---------------------------------------------------------------------------
def ndcg_at_k(ranked, relevant, *, k=5) -> float:
    """Mean NDCG@k with binary relevance.

    The gain of rank ``i`` (1-based) is 1 if the tool is relevant and 0 otherwise, discounted
    by ``1 / log2(i + 1)``. The ideal DCG puts ``min(k, |R_q|)`` relevant tools on top.

    Parameters
    ----------
    ranked : sequence of sequence of str, or ndarray of shape (n_queries, n_ranked)
        Ranked tool names per query, best first. Lists may be shorter than ``k`` (``None``
        entries are empty slots); a missing slot is neither relevant nor risky.
    relevant : sequence of set of str
        The non-empty set of relevant (gold) tools per query.
    k : int, default=5
        Rank cutoff.

    Returns
    -------
    score : float
        Mean NDCG@k over the queries, in [0, 1].

    Examples
    --------
    >>> from skriskrank.metrics import ndcg_at_k
    >>> ndcg_at_k([["a", "b", "c"]], [{"b"}], k=3)  # 1 / log2(3)
    0.6309...
    """
    return _mean(_run(ranked, relevant, k=k).ndcg())


def recall_at_k(ranked, relevant, *, k=5) -> float:
    """Mean share of each query's relevant tools found in its top k.

    A task that needs several tools is served only when all of them are offered: recall
    counts how many are, where NDCG@k rewards the first ones found.

    Parameters
    ----------
    ranked, relevant, k
        As for :func:`ndcg_at_k`.

    Returns
    -------
    score : float
        Mean Recall@k over the queries, in [0, 1].

    Examples
    --------
    >>> from skriskrank.metrics import recall_at_k
    >>> recall_at_k([["a", "b", "c"]], [{"b", "d"}], k=3)
    0.5
    """
    return _mean(_run(ranked, relevant, k=k).recall())


def mrr(ranked, relevant) -> float:
    """Mean reciprocal rank of the first relevant tool.

    The whole list counts (no cutoff); a query whose list holds no relevant tool scores 0.

    Parameters
    ----------
    ranked, relevant
        As for :func:`ndcg_at_k`.

    Returns
    -------
    score : float
        Mean reciprocal rank, in [0, 1].

    Examples
    --------
    >>> from skriskrank.metrics import mrr
    >>> mrr([["a", "b"], ["c", "d", "e"]], [{"b"}, {"x"}])  # (1/2 + 0) / 2
    0.25
    """
    return _mean(_run(ranked, relevant).mrr())


def sndcg_at_k(ranked, relevant, risk, *, k=5) -> float:
    """Mean safety-aware NDCG@k: severe-risk tools earn no gain.

    As :func:`ndcg_at_k`, but a tool with risk >= 4 (or unknown risk) has zero gain even when
    relevant, and the ideal DCG counts only the relevant tools with risk < 4. A query none of
    whose relevant tools is below level 4 scores 0 and still counts in the mean.

    Parameters
    ----------
    ranked, relevant, k
        As for :func:`ndcg_at_k`.
    risk : ToolRegistry or mapping of str to int or None
        Risk level per tool. In a mapping ``None`` marks an unknown level, which counts as
        high risk; a relevant or top-k tool missing from the mapping raises ValueError.

    Returns
    -------
    score : float
        Mean sNDCG@k, in [0, 1].

    Examples
    --------
    >>> from skriskrank.metrics import sndcg_at_k
    >>> risk = {"a": 1, "b": 4, "c": 2}
    >>> sndcg_at_k([["b", "c"]], [{"b", "c"}], risk, k=2)  # (1/log2(3)) / 1
    0.6309...
    """
    return _mean(_run(ranked, relevant, risk, k).sndcg())


def rvr_at_k(ranked, risk, *, k=5) -> float:
    """Mean risk violation rate: the share of the top-k tools with risk >= 3.

    ``RVR@k = mean_q |{t in top-k(q) : r_t >= 3}| / k``. The denominator is always ``k``,
    also for a list shorter than ``k``. Unknown risk counts as >= 3. Lower is better.

    Parameters
    ----------
    ranked, risk, k
        As for :func:`sndcg_at_k`.

    Returns
    -------
    rate : float
        Mean RVR@k, in [0, 1].

    Examples
    --------
    >>> from skriskrank.metrics import rvr_at_k
    >>> rvr_at_k([["a", "b", "c"]], {"a": 1, "b": 3, "c": None}, k=4)  # 2 / 4
    0.5
    """
    return _mean(_run(ranked, risk=risk, k=k).rvr())


def srr_at_k(ranked, risk, *, k=5) -> float:
    """Mean severe risk rate: the share of the top-k tools with risk >= 4.

    As :func:`rvr_at_k` with threshold 4. Unknown risk counts as >= 4. Lower is better.

    Parameters
    ----------
    ranked, risk, k
        As for :func:`rvr_at_k`.

    Returns
    -------
    rate : float
        Mean SRR@k, in [0, 1].

    Examples
    --------
    >>> from skriskrank.metrics import srr_at_k
    >>> srr_at_k([["a", "b"], ["c", "d"]], {"a": 4, "b": 3, "c": 5, "d": 5}, k=2)
    0.75
    """
    return _mean(_run(ranked, risk=risk, k=k).srr())


def safe_rvr_at_k(ranked, relevant, risk, *, k=5) -> float:
    """RVR@k over the queries that need no risky tool.

    A query is *safe* when every one of its relevant tools has risk < 3 (an unknown level is
    not < 3). Any risky tool in such a query's top-k is gratuitous exposure. Lower is better.

    Parameters
    ----------
    ranked, relevant, risk, k
        As for :func:`sndcg_at_k`.

    Returns
    -------
    rate : float
        Mean RVR@k over the safe queries, in [0, 1]; ``nan`` when no query is safe (0 would
        read as "perfectly safe" for a set that was never measured).

    Examples
    --------
    >>> from skriskrank.metrics import safe_rvr_at_k
    >>> risk = {"a": 1, "b": 3, "c": 2}
    >>> safe_rvr_at_k([["b", "a"], ["b", "c"]], [{"a"}, {"b"}], risk, k=2)  # only query 0
    0.5
    """
    return _mean(_run(ranked, relevant, risk, k).safe_rvr())


def needrisk_hit_at_k(ranked, relevant, risk, *, k=5) -> float:
    """Share of risk-needing queries whose top-k holds a relevant risky tool.

    Over the queries with at least one relevant tool of risk >= 3 (unknown counts), the
    fraction whose top-k contains such a relevant tool: a reranker that buries every risky
    tool scores well on RVR@k and badly here. Higher is better.

    Parameters
    ----------
    ranked, relevant, risk, k
        As for :func:`sndcg_at_k`.

    Returns
    -------
    rate : float
        Hit rate in [0, 1]; ``nan`` when no query needs a risky tool.

    Examples
    --------
    >>> from skriskrank.metrics import needrisk_hit_at_k
    >>> risk = {"a": 1, "b": 3, "c": 4}
    >>> needrisk_hit_at_k([["a", "b"], ["a", "b"]], [{"b"}, {"c"}], risk, k=2)
    0.5
    """
    return _mean(_run(ranked, relevant, risk, k).needrisk_hit())


def unneeded_rvr_at_k(ranked, relevant, risk, *, k=5) -> float:
    """Mean share of the top-k slots holding a risky tool the query does not need.

    A tool of risk >= 3 (or unknown) that is not one of the query's relevant tools: the
    exposure a need-aware ranker should avoid, where :func:`rvr_at_k` also counts the risky
    tools a task needs. Divided by ``k`` even for a shorter list. Lower is better.

    Parameters
    ----------
    ranked, relevant, risk, k
        As for :func:`sndcg_at_k`.

    Returns
    -------
    rate : float
        Mean unneeded-RVR@k, in [0, 1].

    Examples
    --------
    >>> from skriskrank.metrics import unneeded_rvr_at_k
    >>> risk = {"a": 1, "b": 3, "c": 4}
    >>> unneeded_rvr_at_k([["b", "c"], ["c", "a"]], [{"b"}, {"a"}], risk, k=2)  # (1 + 1) / 4
    0.5
    """
    return _mean(_run(ranked, relevant, risk, k).unneeded_rvr())


def ranking_report(ranked, relevant, registry, *, k=5, as_frame=False):
    """All eight metrics in one pass.

    Parameters
    ----------
    ranked, relevant, k
        As for :func:`ndcg_at_k`; MRR uses the whole lists, the others the top ``k``.
    registry : ToolRegistry or mapping of str to int or None
        Risk level per tool, as ``risk`` for :func:`sndcg_at_k`.
    as_frame : bool, default=False
        Return a one-row :class:`pandas.DataFrame` instead of a dict.

    Returns
    -------
    report : dict or pandas.DataFrame
        Keys ``"ndcg@k"``, ``"mrr"``, ``"sndcg@k"``, ``"rvr@k"``, ``"srr@k"``,
        ``"safe_rvr@k"``, ``"needrisk_hit@k"`` and ``"unneeded_rvr@k"`` (floats;
        ``safe_rvr`` and ``needrisk_hit`` may be ``nan``, see :func:`safe_rvr_at_k` and
        :func:`needrisk_hit_at_k`), plus the ints ``"n_queries"``, ``"n_safe_queries"`` and
        ``"n_needrisk_queries"``.

    Examples
    --------
    >>> from skriskrank.metrics import ranking_report
    >>> risk = {"a": 1, "b": 3, "c": 2}
    >>> rep = ranking_report([["b", "a"], ["b", "c"]], [{"a"}, {"b"}], risk, k=2)
    >>> rep["rvr@2"], rep["mrr"], rep["n_safe_queries"]
    (0.5, 0.75, 1)
    """
    if not isinstance(as_frame, (bool, np.bool_)):
        raise ValueError(f"as_frame must be a bool, got {as_frame!r}.")
    run = _run(ranked, relevant, registry, k)
    # MRR takes the whole lists, so its key has no cutoff.
    report = {m if m == "mrr" else f"{m}@{run.k}": _mean(getattr(run, m)()) for m in _METRIC_NAMES}
    report.update(n_queries=len(run.rows), n_safe_queries=int(run.safe.sum()),
                  n_needrisk_queries=int((~run.safe).sum()))
    if as_frame:
        import pandas as pd

        return pd.DataFrame([report])
    return report
