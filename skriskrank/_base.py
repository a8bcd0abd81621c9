"""Shared behaviour of the pipeline steps that rank a :class:`RankingBatch`."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils.validation import check_is_fitted, validate_data

from ._batch import RankingBatch, check_batch

__all__ = ["RankingStepMixin", "check_relevant", "rank_reason"]

MSG_Y_LENGTH = "y has {n_y} entries but X has {n_x} queries: give one set of gold tools per query."
MSG_Y_ENTRY = "y[{i}] must be a non-empty set (or list) of tool names, got {value!r}."
MSG_Y_UNKNOWN = "y[{i}] names tool(s) missing from the registry: {names}."
MSG_TOO_MANY = "{step}: {param}={value} is more than the catalogue's {n} tools; use at most {n}."


def check_relevant(y, registry, n_queries: int | None = None) -> list[np.ndarray]:
    """Each query's gold tool names (``n_queries`` sets if given) as sorted registry indices."""
    if y is None:
        raise ValueError("y is required: one set of gold tool names per query.")
    y = list(y)
    if n_queries is not None and len(y) != n_queries:
        raise ValueError(MSG_Y_LENGTH.format(n_y=len(y), n_x=n_queries))
    out = []
    for i, gold in enumerate(y):
        if isinstance(gold, str) or not isinstance(gold, Iterable) or not (gold := list(gold)):
            raise ValueError(MSG_Y_ENTRY.format(i=i, value=gold))
        missing = [g for g in gold if g not in registry]
        if missing:
            raise ValueError(MSG_Y_UNKNOWN.format(i=i, names=", ".join(map(repr, missing))))
        out.append(np.unique(registry.index_of(gold)))
    return out


def rank_reason(step, j: int, k: int) -> str:
    """The reason of a step that ranks by score: its place in words."""
    return f"ranked {j + 1} by {type(step).__name__}" if j < k else f"below the top {k}"


class RankingStepMixin:
    """What every step that takes and returns a :class:`RankingBatch` shares.

    ``predict`` and ``rank``, so that any prefix of a skriskrank pipeline ending in such a
    step is a complete ranker; the tags of a step that takes no arrays; ``fit``, which
    records the batch's registry and encoder and calls the step's ``_fit_step(X, y)`` hook;
    and ``transform``, which checks the batch and calls the step's ``_transform(X)``.
    Subclasses define ``_transform``, a ``k`` parameter and ``_parameter_constraints``.
    """

    #: Whether ``fit`` needs ``y``, the gold tool sets.
    _requires_y = False
    #: Parameters that count tools: at most the catalogue's size.
    _catalogue_sized = ("k",)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = self._requires_y
        # transform returns a RankingBatch, not an array of the input's dtype.
        tags.transformer_tags.preserves_dtype = []
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the batch, record its registry and encoder, and learn what the step needs.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step.
        y : sequence of set of str, default=None
            Gold tool names per query, for the steps that learn from them.

        Returns
        -------
        self : object
            The fitted step.
        """
        X = self._check_input(X, reset=True)
        self.registry_, self.encoder_ = X.registry, X.encoder  # what transform must match
        self._fit_step(X, y)
        return self

    def _fit_step(self, X, y) -> None:
        """Anything a step builds in ``fit`` from a checked batch (nothing by default)."""

    def _check_input(self, X, *, reset: bool) -> RankingBatch:
        # A batch is not an array: validate_data does fit's bookkeeping (feature names, the
        # y-required tag) and check_batch the content; at transform it would check nothing.
        if reset:
            validate_data(self, X, skip_check_array=True, ensure_2d=False)
            X = check_batch(self, X, allow_empty=not self._requires_y)
        else:
            check_is_fitted(self)
            X = check_batch(self, X, registry=self.registry_, encoder=self.encoder_)
        for param in self._catalogue_sized:
            # A list longer than the catalogue means nothing, and a huge one allocates.
            if (value := getattr(self, param)) > len(X.registry):
                raise ValueError(MSG_TOO_MANY.format(step=type(self).__name__, param=param,
                                                     value=value, n=len(X.registry)))
        return X

    def transform(self, X):
        """The step's new batch: the candidates rescored or reordered (see the class).

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step, over the fitted registry.

        Returns
        -------
        batch : RankingBatch
            A new batch; ``X`` is left as it was. A traced batch
            (:meth:`~skriskrank.RankingBatch.traced`) also records what the step adds (``parts``).
        """
        return self._transform(self._check_input(X, reset=False))

    def rank(self, X, *, k: int | None = None) -> np.ndarray:
        """Each query's candidates as registry indices, best first.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step.
        k : int, default=None
            Keep the first ``k`` per query; ``None`` keeps the full ranked candidate list.

        Returns
        -------
        ranking : ndarray of int, shape (n_queries, k or n_candidates)
        """
        return self.transform(X).ranked_indices(k)

    def predict(self, X) -> np.ndarray:
        """The top-``k`` tool names per query, best first.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step.

        Returns
        -------
        top_k : ndarray of object, shape (n_queries, min(k, n_candidates))
        """
        return self.transform(X).ranked_names(self.k)

    def reason(self, batch: RankingBatch, i: int, j: int) -> str:
        """Why candidate ``j`` of query ``i`` of this step's output ``batch`` is there.

        Parameters
        ----------
        batch : RankingBatch
            What this step's ``transform`` returned, as ranked lists.
        i, j : int
            The query and the candidate's position in its list.

        Returns
        -------
        reason : str
            In words, for a person or an agent: ``"ranked 2 by RiskAwareReranker"``.
        """
        return rank_reason(self, j, self.k)

    #: Attributes that :meth:`_cached` fills; never pickled, recomputed on first use.
    _caches = ()

    def _cached(self, name: str, key: tuple, build):
        """``build()``, kept in attribute ``name`` for as long as ``key`` stays the same.

        Arrays in ``key`` compare by identity: batches from one embedder share one tool
        array, and a batch built on other embeddings of the same registry must not reuse
        what was built for these.
        """
        cached = self.__dict__.get(name)
        if cached is None or any(a is not b if isinstance(a, np.ndarray) else a != b
                                 for a, b in zip(cached[0], key, strict=True)):
            cached = self.__dict__[name] = (key, build())
        return cached[1]

    def __getstate__(self):
        # A copy: BaseEstimator.__getstate__ may return the live __dict__ itself.
        state = dict(super().__getstate__())
        for name in self._caches:
            state.pop(name, None)
        return state
