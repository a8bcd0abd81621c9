"""NeedAwareFilter: expose a high-risk tool when the query shows it needs it, and only then."""

from __future__ import annotations

from numbers import Real

from sklearn.utils._param_validation import Interval

from ._filter import RuleFilter
from ._rubric import RISKY_LEVEL

__all__ = ["NeedAwareFilter"]


class NeedAwareFilter(RuleFilter):
    """The rule filter, with high-risk tools admitted on evidence that the query needs them.

    For every candidate it estimates ``p``, the probability that it is a gold tool of the
    query, and admits a high-risk tool (risk ``>= high_risk_level``, or unknown) only when
    ``p >= need_threshold``; the permission and redundancy rules and the fixed-length
    fallback are :class:`RuleFilter`'s (:ref:`filters`). ``p`` is :class:`RuleFilter`'s
    relevance model with one more feature: the kernel-weighted share of the 10 training
    queries nearest to this one (by embedding) whose gold set (read in ``fit`` only) holds
    the tool.

    Parameters
    ----------
    need_threshold : float or None, default=0.5
        The probability of being needed from which a high-risk tool is admitted; the one
        parameter that sets the operating point (lower exposes more risky tools that tasks
        need, and more that they do not). ``None`` ignores need: the filter is then exactly
        ``RuleFilter`` with the same caps.
    max_high_risk : int or None, default=0
        High-risk tools allowed in a list without evidence of need.
    k, high_risk_level, max_broad, broad_level, redundancy_threshold
        As for :func:`rule_filter`; ``k`` is also the length of ``predict``'s output.
    relevance_floor : float or None, default=None
        As for :class:`RuleFilter`: candidates with ``p`` below it are left out.

    Attributes
    ----------
    relevance_model_ : object
        The fitted estimate of ``p``; ``predict_proba(X, positions)`` gives it per candidate.
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.

    See Also
    --------
    RuleFilter : The paper's filter, which this one equals with ``need_threshold=None``.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import NeedAwareFilter, RankingBatch, ToolRegistry
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": n, "description": n, "risk": r} for n, r in [
    ...         ("read_secret", 4), ("list_users", 1), ("wipe_disk", 5), ("get_time", 1)]])
    >>> tools = np.eye(4, dtype=np.float32)
    >>> rng = np.random.default_rng(0)
    >>> q = np.repeat(np.eye(4, dtype=np.float32)[[0, 2]], 20, axis=0)
    >>> q = q + 0.3 * rng.random(q.shape, dtype=np.float32)
    >>> q /= np.linalg.norm(q, axis=1, keepdims=True)
    >>> y = [{"read_secret"}] * 20 + [{"list_users"}] * 20
    >>> train = RankingBatch.full_pool(reg, q, tools)
    >>> filt = NeedAwareFilter(k=2).fit(train, y)
    >>> test = RankingBatch.full_pool(reg, q[[0, 20]], tools)
    >>> filt.predict(test).tolist()
    [['read_secret', 'list_users'], ['list_users', 'get_time']]
    """

    _parameter_constraints: dict = {**RuleFilter._parameter_constraints,
                                    "need_threshold": [Interval(Real, 0, 1, closed="both"), None]}
    _requires_y = True
    _knn_feature = True

    def __init__(self, *, need_threshold=0.5, k=5, max_high_risk=0, high_risk_level=RISKY_LEVEL,
                 max_broad=2, broad_level=2, redundancy_threshold=0.9, relevance_floor=None):
        super().__init__(k=k, max_high_risk=max_high_risk, high_risk_level=high_risk_level,
                         max_broad=max_broad, broad_level=broad_level,
                         redundancy_threshold=redundancy_threshold,
                         relevance_floor=relevance_floor)
        self.need_threshold = need_threshold

    def _needs_model(self):
        return self.need_threshold is not None or self.relevance_floor is not None

    def _admit(self, p):
        return None if self.need_threshold is None else p >= self.need_threshold
