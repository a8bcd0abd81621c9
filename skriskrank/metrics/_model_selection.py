"""GridSearchCV scorers for the ranking metrics and a risk-budget refit rule."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from numbers import Real

import numpy as np
from sklearn.metrics import make_scorer

from .._registry import ToolRegistry
from ._ranking import _METRIC_NAMES, _check_k, _mean, _run

__all__ = ["best_under_risk_budget", "make_ranking_scorer"]

# The metrics that read no risk levels, and those where lower is better (scorers negate them).
_NO_RISK = {"ndcg", "mrr"}
_LOWER_IS_BETTER = {"rvr", "srr", "safe_rvr", "unneeded_rvr"}

MSG_UNKNOWN_METRIC = "Unknown ranking metric {metric!r}; expected one of {valid}."
MSG_NEEDS_REGISTRY = ("The {metric!r} scorer measures risk: pass registry= (a ToolRegistry or a "
                      "mapping of tool name -> risk level).")
MSG_BAD_REGISTRY = ("registry must be a ToolRegistry, a mapping of tool name -> risk level, or "
                    "None; got {type}.")
MSG_BAD_MAX_RVR = "max_rvr must be a number in [0, 1], got {value!r}."
MSG_BAD_KEY = "{name} must be a non-empty str, got {value!r}."
MSG_MISSING_RESULT = ("cv_results_ has no {key!r}: score the search with a {metric!r} scorer "
                      "(scoring={{{metric!r}: make_ranking_scorer({metric!r}, ...), ...}}). "
                      "Available: {available}.")
MSG_NO_FINITE_RVR = ("Every candidate's {key!r} is NaN, so none can be picked under the risk "
                     "budget.")


def _ranking_score(y_true, y_pred, *, metric, k, registry):
    """One metric of ``y_pred`` (ranked names) against ``y_true``; module level, so it pickles."""
    run = _run(y_pred, y_true, k=k) if metric in _NO_RISK else _run(y_pred, y_true, registry, k)
    # MRR@k (see make_ranking_scorer), cut here so that it does not depend on the estimator's k.
    return _mean(run.mrr(cutoff=k) if metric == "mrr" else getattr(run, metric)())


def make_ranking_scorer(metric, *, k=5, registry=None):
    """A scikit-learn scorer for one of the paper's ranking metrics.

    The scorer calls ``estimator.predict(X)``, which must return the ranked tool names per
    query (an array of shape (n_queries, k), best first), and scores it against ``y``, the
    list of gold tool sets. It is a :func:`sklearn.metrics.make_scorer` object, so inside
    ``GridSearchCV(scoring={...})`` several ranking scorers share one ``predict`` per split.

    Parameters
    ----------
    metric : {"ndcg", "mrr", "sndcg", "rvr", "srr", "safe_rvr", "needrisk_hit", \
"unneeded_rvr"}
        Which metric; see :mod:`skriskrank.metrics`. ``"mrr"`` only sees the first ``k``
        predicted tools (``predict`` returns no more), so it is MRR@k: a query whose first
        relevant tool is ranked below ``k`` scores 0, where :func:`mrr` on a full ranking
        would give it ``1/rank``.
    k : int, default=5
        Rank cutoff.
    registry : ToolRegistry or mapping of str to int or None, default=None
        Risk levels. Required by every metric except ``"ndcg"`` and ``"mrr"``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``. The lower-is-better metrics ``"rvr"``,
        ``"srr"``, ``"safe_rvr"`` and ``"unneeded_rvr"`` return the **negated** value (a
        scorer is always maximized), so ``cv_results_["mean_test_rvr"]`` holds -RVR@k.
        ``"safe_rvr"`` and ``"needrisk_hit"`` return NaN on a test fold with no eligible
        query (the metric is undefined there; a made-up 0 would bias the mean): GridSearchCV
        then warns and ranks the candidate last, so use folds that each hold safe and
        risk-needing queries.

    Raises
    ------
    ValueError
        For an unknown metric name (listing the valid ones), a bad ``k``, or a risk metric
        without a registry.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from skriskrank.metrics import make_ranking_scorer
    >>> class Fixed(BaseEstimator):  # scorers read the estimator's tags
    ...     def predict(self, X):
    ...         return np.array([["a", "b"]] * len(X), dtype=object)
    >>> risk = {"a": 1, "b": 3}
    >>> make_ranking_scorer("ndcg", k=2)(Fixed(), ["q1", "q2"], [{"a"}, {"b"}])
    0.8154...
    >>> make_ranking_scorer("rvr", k=2, registry=risk)(Fixed(), ["q1", "q2"], [{"a"}, {"b"}])
    -0.5
    """
    if not isinstance(metric, str) or metric not in _METRIC_NAMES:
        raise ValueError(MSG_UNKNOWN_METRIC.format(metric=metric, valid=sorted(_METRIC_NAMES)))
    k = _check_k(k)
    if registry is not None and not isinstance(registry, (ToolRegistry, Mapping)):
        raise ValueError(MSG_BAD_REGISTRY.format(type=type(registry).__name__))
    if metric not in _NO_RISK and registry is None:
        raise ValueError(MSG_NEEDS_REGISTRY.format(metric=metric))
    return make_scorer(_ranking_score, response_method="predict",
                       greater_is_better=metric not in _LOWER_IS_BETTER, metric=metric, k=k,
                       registry=None if metric in _NO_RISK else registry)


@dataclasses.dataclass(frozen=True)
class _BestUnderRiskBudget:
    """The refit rule; a module-level class (not a closure), so a search holding it pickles."""

    max_rvr: float
    ndcg_key: str
    rvr_key: str

    def __repr__(self) -> str:
        return (f"best_under_risk_budget({self.max_rvr!r}, ndcg_key={self.ndcg_key!r}, "
                f"rvr_key={self.rvr_key!r})")

    def _column(self, cv_results, name) -> np.ndarray:
        key = f"mean_test_{name}"
        if key not in cv_results:
            available = sorted(c for c in cv_results if c.startswith("mean_test_"))
            raise ValueError(MSG_MISSING_RESULT.format(key=key, metric=name, available=available))
        return np.asarray(cv_results[key], dtype=np.float64)

    def __call__(self, cv_results) -> int:
        ndcg = self._column(cv_results, self.ndcg_key)
        # The scorer negates RVR (greater is better), so undo that here.
        rvr = -self._column(cv_results, self.rvr_key)
        finite = np.isfinite(rvr)
        if not finite.any():
            raise ValueError(MSG_NO_FINITE_RVR.format(key=f"mean_test_{self.rvr_key}"))
        # A NaN NDCG (a failed fit) never wins while any candidate has a real score.
        ndcg = np.where(np.isnan(ndcg), -np.inf, ndcg)
        ok = np.flatnonzero(finite & (rvr <= self.max_rvr))
        if ok.size:
            return int(ok[np.argmax(ndcg[ok])])
        # Nothing meets the budget: the safest candidate, ties going to the higher NDCG.
        cand = np.flatnonzero(finite)
        return int(cand[np.lexsort((-ndcg[cand], rvr[cand]))[0]])


def best_under_risk_budget(max_rvr, *, ndcg_key="ndcg", rvr_key="rvr"):
    """A GridSearchCV ``refit`` rule: best NDCG among candidates within an RVR budget.

    Parameters
    ----------
    max_rvr : float
        The risk budget, in [0, 1]: the largest acceptable mean RVR@k.
    ndcg_key : str, default="ndcg"
        The scoring name whose ``mean_test_<ndcg_key>`` is maximized.
    rvr_key : str, default="rvr"
        The scoring name of a :func:`make_ranking_scorer` ``"rvr"`` scorer. Its
        ``mean_test_<rvr_key>`` holds -RVR (scorers negate lower-is-better metrics), which
        the rule negates back before comparing with ``max_rvr``.

    Returns
    -------
    refit : callable
        A picklable ``refit(cv_results) -> int``. It returns the index of the candidate with
        the highest mean NDCG among those with mean RVR <= ``max_rvr`` (ties: the first
        one). If no candidate meets the budget it returns the one with the lowest mean RVR
        (ties: the higher NDCG, then the first), so the search still refits the safest
        model instead of failing. Candidates whose RVR is NaN never qualify; a NaN NDCG
        ranks below every real one. GridSearchCV sets ``best_index_`` and ``best_params_``
        from it, but not ``best_score_``.

    Raises
    ------
    ValueError
        If ``max_rvr`` is not in [0, 1]. The returned callable raises ValueError when
        ``cv_results`` lacks one of the two columns, or when every RVR is NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank.metrics import best_under_risk_budget
    >>> cv = {"mean_test_ndcg": np.array([0.40, 0.35, 0.30]),
    ...       "mean_test_rvr": np.array([-0.20, -0.10, -0.05])}
    >>> best_under_risk_budget(0.12)(cv)
    1
    >>> best_under_risk_budget(0.01)(cv)
    2
    """
    not_a_number = isinstance(max_rvr, (bool, np.bool_)) or not isinstance(max_rvr, Real)
    if not_a_number or not 0.0 <= max_rvr <= 1.0:  # the range check also rejects NaN
        raise ValueError(MSG_BAD_MAX_RVR.format(value=max_rvr))
    for name, value in (("ndcg_key", ndcg_key), ("rvr_key", rvr_key)):
        if not isinstance(value, str) or not value:
            raise ValueError(MSG_BAD_KEY.format(name=name, value=value))
    return _BestUnderRiskBudget(float(max_rvr), ndcg_key, rvr_key)
