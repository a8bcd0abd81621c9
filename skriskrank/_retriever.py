"""DenseRetriever: keep each query's top candidates, the paper's candidate-matched setting."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ._base import RankingStepMixin

__all__ = ["DenseRetriever"]


class DenseRetriever(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Keep each query's ``n_candidates`` best tools by current score.

    Placed right after :class:`FrozenEmbedder`, this is first-stage dense retrieval: the
    paper's top-100 candidate-matched setting, where every later step only reorders the
    retriever's candidates. Without it, later steps score the full pool.

    Parameters
    ----------
    n_candidates : int, default=100
        Candidates kept per query (all of them when the batch has fewer).
    k : int, default=5
        Length of the list :meth:`predict` returns.

    Attributes
    ----------
    registry_ : ToolRegistry
        The catalogue seen in ``fit``; ``transform`` rejects batches from another one.
    encoder_ : str
        The encoder identity seen in ``fit``.

    See Also
    --------
    FrozenEmbedder : Produces the batch this step narrows.
    RiskAwareReranker : Reranks the kept candidates.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import DenseRetriever, RankingBatch, ToolRegistry
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": f"t{i}", "description": f"tool {i}", "risk": 1} for i in range(4)])
    >>> tools = np.eye(4, dtype=np.float32)
    >>> query = np.array([[0.1, 0.9, 0.4, 0.0]], dtype=np.float32)
    >>> batch = RankingBatch.full_pool(reg, query, tools)
    >>> retr = DenseRetriever(n_candidates=2, k=2).fit(batch)
    >>> retr.transform(batch).candidates.tolist()
    [[1, 2]]
    >>> retr.predict(batch).tolist()
    [['t1', 't2']]
    """

    _parameter_constraints: dict = {
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "k": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, n_candidates=100, k=5):
        self.n_candidates = n_candidates
        self.k = k

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = False
        tags.transformer_tags.preserves_dtype = []
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Record the batch's registry and encoder; there is nothing to learn.

        Parameters
        ----------
        X : RankingBatch
            Training batch.
        y : None
            Ignored.

        Returns
        -------
        self : DenseRetriever
        """
        X = self._check_input(X, reset=True)
        self._fit_batch_state(X)
        return self

    def transform(self, X):
        """Keep the top ``n_candidates`` of each query.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step.

        Returns
        -------
        batch : RankingBatch
            Candidates cut to ``min(n_candidates, X.n_candidates)`` per query, best first.
        """
        check_is_fitted(self)
        X = self._check_input(X, reset=False)
        n = min(self.n_candidates, X.n_candidates)
        order = X.order(n)
        return X.replace(
            candidates=np.take_along_axis(X.candidates, order, axis=1).astype(np.int32),
            scores=np.take_along_axis(X.scores, order, axis=1),
        )
