"""Baseline reranking steps: risk-label penalty, MMR, BM25 and a cross-encoder.

The paper (*Risk-Aware Reranking for Agentic Tool Retrieval*, CIKM 2026) compares its learned
reranker against simple alternatives a practitioner would try first. Each is a pipeline step
over a :class:`RankingBatch`, so it drops into the same :class:`~sklearn.pipeline.Pipeline` as
the learned steps and has the same ``predict`` / ``rank``:

- :class:`RiskPenaltyReranker`: ``s = score - risk_weight * (r - 1) / 4`` with the audited
  labels, unknown risk counted as level 5.
- :class:`MMRReranker`: maximal marginal relevance over the current scores.
- :class:`BM25Reranker`: lexical BM25 scores (the ``bm25s`` package) of each candidate.
- :class:`CrossEncoderReranker`: a ``sentence_transformers.CrossEncoder`` rescoring each
  query's top candidates from the query text and the tool text.
"""

from __future__ import annotations

import os
from numbers import Integral, Real
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ._base import RankingStepMixin
from ._embedding import _check_device, _load_model
from ._registry import UNKNOWN_RISK

__all__ = ["BM25Reranker", "CrossEncoderReranker", "MMRReranker", "RiskPenaltyReranker"]

MSG_NO_QUERY_TEXT = (
    "{step} reads the query texts, but the batch has none (queries=None); build the batch "
    "with FrozenEmbedder.transform on raw query strings."
)
MSG_CROSS_ENCODER_UNAVAILABLE = (
    "Could not load the cross-encoder {model!r} offline: {error}. Give a local directory "
    "holding a sentence-transformers CrossEncoder (or a Hugging Face sequence-classification "
    "model with its tokenizer), or a model name already in the Hugging Face cache."
)
MSG_BM25_MISSING = "BM25Reranker needs the bm25s package: pip install bm25s ({error})."


def _rank_scores(n_rows: int, m: int) -> np.ndarray:
    """Strictly decreasing float32 scores ``m, m - 1, ..., 1`` for each row."""
    return np.tile(np.arange(m, 0, -1, dtype=np.float32), (n_rows, 1))


class _BaselineStep(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Shared ``fit`` and tags of the baseline steps: nothing is learned from ``y``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = False
        tags.transformer_tags.preserves_dtype = []
        return tags

    def _fit(self, X):
        X = self._check_input(X, reset=True)
        self._fit_batch_state(X)
        return X


# --------------------------------------------------------------------------------------------
class RiskPenaltyReranker(_BaselineStep):
    """Subtract a fixed penalty per audited risk level from the current scores.

    ``s = score - risk_weight * (r - 1) / 4``, where ``r`` is the registry's risk level of
    the tool. An unlabelled tool is penalised as level 5, never treated as safe. This is the
    paper's "dense + risk-label penalty" baseline: it needs no training, but it punishes a
    risky tool equally whether or not the query needs it.

    Parameters
    ----------
    risk_weight : float, default=0.1
        Penalty per unit of normalized risk ``(r - 1) / 4``.
    k : int, default=5
        Length of the list :meth:`predict` returns.

    Attributes
    ----------
    registry_ : ToolRegistry
        The catalogue seen in ``fit``.
    encoder_ : str
        The encoder identity seen in ``fit``.

    See Also
    --------
    RiskAwareReranker : Learns the risk term instead of reading it from the labels.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, ToolRegistry
    >>> from skriskrank._baselines import RiskPenaltyReranker
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": n, "description": n, "risk": r} for n, r in [("a", 5), ("b", 1)]])
    >>> batch = RankingBatch.full_pool(reg, np.array([[1.0, 0.9]], np.float32),
    ...                                np.eye(2, dtype=np.float32))
    >>> step = RiskPenaltyReranker(risk_weight=0.2, k=2).fit(batch)
    >>> step.predict(batch).tolist()
    [['b', 'a']]
    >>> [round(float(v), 3) for v in step.transform(batch).scores[0]]
    [0.8, 0.9]
    """

    _parameter_constraints: dict = {
        "risk_weight": [Interval(Real, 0, None, closed="left")],
        "k": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, risk_weight=0.1, k=5):
        self.risk_weight = risk_weight
        self.k = k

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
        self : RiskPenaltyReranker
        """
        self._fit(X)
        return self

    def transform(self, X):
        """Penalise each candidate by its normalized risk level.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step.

        Returns
        -------
        batch : RankingBatch
            The same candidates with penalised scores.
        """
        check_is_fitted(self)
        X = self._check_input(X, reset=False)
        risk = X.registry.risk
        # Unknown risk is penalised as the worst real level.
        level = np.where(risk == UNKNOWN_RISK, 5, risk).astype(np.float32)
        penalty = np.float32(self.risk_weight) * (level - 1.0) / 4.0
        return X.replace(scores=(X.scores - penalty[X.candidates]).astype(np.float32))


# --------------------------------------------------------------------------------------------
class MMRReranker(_BaselineStep):
    """Maximal marginal relevance over the current scores (Carbonell and Goldstein, 1998).

    The first ``k`` places are filled greedily: each step takes the candidate maximizing
    ``relevance_weight * score - (1 - relevance_weight) * max_sim``, where ``max_sim`` is its
    largest cosine similarity (tool embeddings) to the tools already taken. The remaining
    candidates follow in their original score order. This is the classic diversified
    reranker: it spreads the top-k across kinds of tools, but knows nothing about risk.

    Parameters
    ----------
    relevance_weight : float, default=0.7
        MMR's lambda: 1 keeps the score order, 0 maximizes diversity only.
    k : int, default=5
        Places filled greedily, and the length of :meth:`predict`'s list.

    Attributes
    ----------
    registry_ : ToolRegistry
        The catalogue seen in ``fit``.
    encoder_ : str
        The encoder identity seen in ``fit``.

    See Also
    --------
    RuleFilter : Also diversifies the top-k, by risk, permissions and redundancy.

    Notes
    -----
    ``transform`` returns rank-derived scores (``m - position`` for ``m`` candidates), like
    :class:`RuleFilter`, so that ranking by score reproduces the MMR order.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, ToolRegistry
    >>> from skriskrank._baselines import MMRReranker
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": n, "description": n, "risk": 1} for n in ["a", "a2", "b"]])
    >>> tools = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    >>> batch = RankingBatch.full_pool(reg, np.array([[0.9, 0.5]], np.float32), tools)
    >>> batch.ranked_names(k=2).tolist()
    [['a', 'a2']]
    >>> MMRReranker(relevance_weight=0.5, k=2).fit(batch).predict(batch).tolist()
    [['a', 'b']]
    """

    _parameter_constraints: dict = {
        "relevance_weight": [Interval(Real, 0, 1, closed="both")],
        "k": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, relevance_weight=0.7, k=5):
        self.relevance_weight = relevance_weight
        self.k = k

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
        self : MMRReranker
        """
        self._fit(X)
        return self

    def transform(self, X):
        """Reorder each query's candidates by MMR.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step.

        Returns
        -------
        batch : RankingBatch
            Candidates in MMR order with rank-derived scores.
        """
        check_is_fitted(self)
        X = self._check_input(X, reset=False)
        ranked = X.ranked_indices()
        order_scores = np.take_along_axis(X.scores, X.order(), axis=1).astype(np.float64)
        n_q, m = ranked.shape
        n_pick = min(self.k, m)
        lam = float(self.relevance_weight)
        emb = X.tool_embeddings
        rows = np.arange(n_q)
        taken = np.zeros((n_q, m), dtype=bool)
        max_sim = np.full((n_q, m), -np.inf)
        picks = np.empty((n_q, n_pick), dtype=np.int64)
        for step in range(n_pick):
            if step == 0:
                gain = order_scores.copy()
            else:
                gain = lam * order_scores - (1.0 - lam) * max_sim
            gain[taken] = -np.inf
            # argmax takes the first maximum, so ties keep the score order.
            col = np.argmax(gain, axis=1)
            picks[:, step] = col
            taken[rows, col] = True
            # Similarity of every registry tool to the tool just taken, gathered at the
            # candidates: no (n_queries, m, dim) array is ever formed.
            sims = emb[ranked[rows, col]] @ emb.T
            max_sim = np.maximum(max_sim, np.take_along_axis(sims, ranked, axis=1))
        rest = np.argsort(taken, axis=1, kind="stable")[:, : m - n_pick]
        cols = np.concatenate([picks, rest], axis=1)
        return X.replace(
            candidates=np.take_along_axis(ranked, cols, axis=1).astype(np.int32),
            scores=_rank_scores(n_q, m),
        )


# --------------------------------------------------------------------------------------------
def _query_texts(step, X) -> list[str]:
    if X.queries is None:
        raise ValueError(MSG_NO_QUERY_TEXT.format(step=type(step).__name__))
    return list(X.queries)


class BM25Reranker(_BaselineStep):
    """Score each candidate by BM25 between the query text and the tool text.

    A lexical baseline over ``registry.texts`` (``"{name}: {description}"``), with the
    ``bm25s`` package (Lucene BM25, English stopwords removed). Right after
    :class:`FrozenEmbedder` it ranks the whole registry; after :class:`DenseRetriever` it
    reranks the dense candidates (the candidate-matched setting).

    Parameters
    ----------
    k1 : float, default=1.5
        BM25 term-frequency saturation.
    b : float, default=0.75
        BM25 length normalization.
    k : int, default=5
        Length of the list :meth:`predict` returns.

    Attributes
    ----------
    index_ : bm25s.BM25
        The index over the registry's tool texts.
    registry_ : ToolRegistry
        The catalogue seen in ``fit``.
    encoder_ : str
        The encoder identity seen in ``fit``.

    Notes
    -----
    Ties (a query sharing no word with a tool scores 0) keep the incoming order, so the
    dense order breaks them.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, ToolRegistry
    >>> from skriskrank._baselines import BM25Reranker
    >>> reg = ToolRegistry.from_records([
    ...     {"name": "get_weather", "description": "Weather forecast for a city", "risk": 1},
    ...     {"name": "send_email", "description": "Send an email message", "risk": 3}])
    >>> emb = np.eye(2, dtype=np.float32)
    >>> batch = RankingBatch.full_pool(reg, emb[:1], emb, queries=["email my boss"])
    >>> BM25Reranker(k=1).fit(batch).predict(batch).tolist()
    [['send_email']]
    """

    _parameter_constraints: dict = {
        "k1": [Interval(Real, 0, None, closed="left")],
        "b": [Interval(Real, 0, 1, closed="both")],
        "k": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, k1=1.5, b=0.75, k=5):
        self.k1 = k1
        self.b = b
        self.k = k

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Index the registry's tool texts.

        Parameters
        ----------
        X : RankingBatch
            Training batch (only its registry is used).
        y : None
            Ignored.

        Returns
        -------
        self : BM25Reranker
        """
        try:
            import bm25s
        except ImportError as exc:
            raise ValueError(MSG_BM25_MISSING.format(error=exc)) from None
        X = self._fit(X)
        index = bm25s.BM25(k1=self.k1, b=self.b)
        index.index(
            bm25s.tokenize(X.registry.texts, stopwords="en", show_progress=False),
            show_progress=False,
        )
        self.index_ = index
        return self

    def transform(self, X):
        """Replace the scores by BM25 scores.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step; it must carry the query texts.

        Returns
        -------
        batch : RankingBatch
            The same candidates, scored by BM25 (float32).
        """
        import bm25s

        check_is_fitted(self)
        X = self._check_input(X, reset=False)
        tokens = bm25s.tokenize(
            _query_texts(self, X), stopwords="en", show_progress=False, return_ids=False
        )
        n_tools = len(X.registry)
        # get_scores gives every registry tool's score for one tokenized query.
        full = np.stack([self.index_.get_scores(t) for t in tokens]).astype(np.float32)
        assert full.shape[1] == n_tools
        return X.replace(scores=np.take_along_axis(full, np.asarray(X.candidates), axis=1))


# --------------------------------------------------------------------------------------------
def _load_cross_encoder(model: str, device: str):
    path = Path(model).expanduser()
    load_from = str(path.resolve()) if path.is_dir() else model
    return _load_model(load_from, device, model, kind="CrossEncoder",
                       message=MSG_CROSS_ENCODER_UNAVAILABLE)


class CrossEncoderReranker(_BaselineStep):
    """Rescore each query's top candidates with a ``sentence_transformers.CrossEncoder``.

    The cross-encoder reads the query text (``batch.queries``) and the tool text
    (``registry.texts``) together, the usual second stage of a retrieve-then-rerank system.
    Only each query's ``n_rerank`` best candidates are rescored (cross-encoders cost one
    forward pass per pair); they are placed first, in cross-encoder order, and the other
    candidates follow in their incoming order.

    The model is loaded lazily, once per process, with no network access
    (``local_files_only``), and is never pickled: a saved pipeline reloads it by name or path.

    Parameters
    ----------
    model : str or path-like
        A local directory holding a cross-encoder, or a model name already in the Hugging
        Face cache (for example ``"cross-encoder/ms-marco-MiniLM-L6-v2"``).
    n_rerank : int, default=100
        Candidates rescored per query.
    batch_size : int, default=32
        Pairs per forward pass.
    device : str, default="cpu"
        Torch device of the cross-encoder.
    k : int, default=5
        Length of the list :meth:`predict` returns.

    Attributes
    ----------
    registry_ : ToolRegistry
        The catalogue seen in ``fit``.
    encoder_ : str
        The (bi-)encoder identity of the batch seen in ``fit``.
    device_ : str
        The checked torch device.

    Raises
    ------
    ValueError
        From ``fit``, when the model cannot be loaded offline; from ``transform``, when the
        batch carries no query texts.

    Notes
    -----
    ``transform`` returns rank-derived scores (``m - position``), as cross-encoder scores
    of the rescored candidates and the incoming scores of the others are not comparable.

    Examples
    --------
    >>> from skriskrank._baselines import CrossEncoderReranker
    >>> CrossEncoderReranker(model="path/to/cross-encoder", n_rerank=50)
    CrossEncoderReranker(model='path/to/cross-encoder', n_rerank=50)
    """

    _parameter_constraints: dict = {
        "model": [str, os.PathLike, None],
        "n_rerank": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "device": [str],
        "k": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, model=None, *, n_rerank=100, batch_size=32, device="cpu", k=5):
        self.model = model
        self.n_rerank = n_rerank
        self.batch_size = batch_size
        self.device = device
        self.k = k

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_model", None)  # the weights reload by name or path
        return state

    def _cross_encoder(self):
        if getattr(self, "_model", None) is None:
            self._model = _load_cross_encoder(str(self.model), self.device_)
        return self._model

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the batch and load the cross-encoder; nothing is trained.

        Parameters
        ----------
        X : RankingBatch
            Training batch.
        y : None
            Ignored.

        Returns
        -------
        self : CrossEncoderReranker
        """
        if self.model is None:
            raise ValueError(
                MSG_CROSS_ENCODER_UNAVAILABLE.format(model=None, error="no model given")
            )
        self._fit(X)
        self.device_ = _check_device(self.device)
        self._model = None
        self._cross_encoder()
        return self

    def transform(self, X):
        """Rescore the top ``n_rerank`` candidates of each query.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step; it must carry the query texts.

        Returns
        -------
        batch : RankingBatch
            Candidates reordered (rescored ones first), with rank-derived scores.
        """
        check_is_fitted(self)
        X = self._check_input(X, reset=False)
        queries = _query_texts(self, X)
        ranked = X.ranked_indices()
        n_q, m = ranked.shape
        n = min(self.n_rerank, m)
        texts = X.registry.texts
        pairs = [(q, texts[t]) for q, row in zip(queries, ranked[:, :n]) for t in row]
        ce_scores = np.asarray(
            self._cross_encoder().predict(
                pairs, batch_size=self.batch_size, show_progress_bar=False,
                convert_to_numpy=True,
            ),
            dtype=np.float64,
        ).reshape(n_q, n, -1)[..., -1]
        head = np.argsort(-ce_scores, axis=1, kind="stable")
        cols = np.concatenate(
            [head, np.broadcast_to(np.arange(n, m), (n_q, m - n))], axis=1
        )
        return X.replace(
            candidates=np.take_along_axis(ranked, cols, axis=1).astype(np.int32),
            scores=_rank_scores(n_q, m),
        )
