"""The baseline steps of :mod:`skriskrank.baselines`."""

from __future__ import annotations

import os
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval

from .._base import RankingStepMixin
from .._encoder import check_device, load_model, resolve_model
from .._rubric import level_scale

__all__ = ["BM25Reranker", "CrossEncoderReranker", "MMRReranker", "RiskPenaltyReranker"]

MSG_NO_QUERY_TEXT = ("{step} reads the query texts, but the batch has none (queries=None); build "
                     "the batch with FrozenEmbedder.transform on raw query strings.")
MSG_CROSS_ENCODER_UNAVAILABLE = (
    "Could not load the cross-encoder {model!r} offline: {error}. Give a local directory "
    "holding a sentence-transformers CrossEncoder (or a Hugging Face sequence-classification "
    "model with its tokenizer), or a model name already in the Hugging Face cache.")
MSG_BM25_MISSING = "BM25Reranker needs the bm25s package: pip install bm25s ({error})."
MSG_BM25_INDEX = ("BM25Reranker: the index scores {got} tools but the registry has {expected}; "
                  "refit it.")
#: Queries whose candidates' embeddings MMR gathers at once ((queries, m, dim) floats).
_MMR_CHUNK = 64


class RiskPenaltyReranker(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Subtract a fixed penalty per audited risk level from the current scores.

    ``s = score - risk_weight * (r - 1) / 4``, where ``r`` is the registry's risk level of
    the tool; an unlabelled tool is penalised as level 5 (a traced batch records the
    ``risk_penalty``). The paper's "dense + risk-label penalty" baseline: it punishes a
    risky tool whether or not the query needs it.

    Parameters
    ----------
    risk_weight : float, default=0.1
        Penalty per unit of normalized risk ``(r - 1) / 4``.
    k : int, default=5
        Length of the list :meth:`predict` returns.

    Attributes
    ----------
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, ToolRegistry
    >>> from skriskrank.baselines import RiskPenaltyReranker
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

    _parameter_constraints: dict = {"risk_weight": [Interval(Real, 0, None, closed="left")],
                                    "k": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, *, risk_weight=0.1, k=5):
        self.risk_weight = risk_weight
        self.k = k

    def _transform(self, X):
        penalty = np.float32(self.risk_weight) * level_scale(X.registry.risk)[X.candidates]
        return X.with_parts(risk_penalty=penalty).with_scores(
            (X.scores - penalty).astype(np.float32))


class MMRReranker(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Maximal marginal relevance over the current scores (Carbonell and Goldstein, 1998).

    The first ``k`` places are filled greedily: each step takes the candidate maximizing
    ``relevance_weight * score - (1 - relevance_weight) * max_sim``, where ``max_sim`` is its
    largest cosine similarity (tool embeddings) to the tools already taken; the others follow
    in score order. Each candidate keeps its score. It diversifies the top-k but knows
    nothing about risk.

    Parameters
    ----------
    relevance_weight : float, default=0.7
        MMR's lambda: 1 keeps the score order, 0 maximizes diversity only.
    k : int, default=5
        Places filled greedily, and the length of :meth:`predict`'s list.

    Attributes
    ----------
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, ToolRegistry
    >>> from skriskrank.baselines import MMRReranker
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": n, "description": n, "risk": 1} for n in ["a", "a2", "b"]])
    >>> tools = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    >>> batch = RankingBatch.full_pool(reg, np.array([[0.9, 0.5]], np.float32), tools)
    >>> batch.ranked_names(k=2).tolist()
    [['a', 'a2']]
    >>> MMRReranker(relevance_weight=0.5, k=2).fit(batch).predict(batch).tolist()
    [['a', 'b']]
    """

    _parameter_constraints: dict = {"relevance_weight": [Interval(Real, 0, 1, closed="both")],
                                    "k": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, *, relevance_weight=0.7, k=5):
        self.relevance_weight = relevance_weight
        self.k = k

    def _transform(self, X):
        positions = X.order()
        ranked = np.take_along_axis(X.candidates, positions, axis=1)
        scores = np.take_along_axis(X.scores, positions, axis=1).astype(np.float64)
        n_q, m = ranked.shape
        n_pick = min(self.k, m)
        lam = float(self.relevance_weight)
        cols = np.empty((n_q, m), dtype=np.int64)
        for s in range(0, n_q, _MMR_CHUNK):
            chunk = slice(s, s + _MMR_CHUNK)
            emb = X.tool_embeddings[ranked[chunk]]  # (queries, m, dim)
            rows = np.arange(len(emb))
            taken = np.zeros((len(rows), m), dtype=bool)
            max_sim = np.full((len(rows), m), -np.inf)
            for step in range(n_pick):
                gain = scores[chunk].copy()
                if step:
                    gain = lam * gain - (1.0 - lam) * max_sim
                gain[taken] = -np.inf
                # argmax takes the first maximum, so ties keep the score order.
                col = np.argmax(gain, axis=1)
                cols[chunk, step] = col
                taken[rows, col] = True
                sims = np.vecdot(emb, emb[rows, col][:, None, :])
                np.maximum(max_sim, sims, out=max_sim)
            cols[chunk, n_pick:] = np.argsort(taken, axis=1, kind="stable")[:, : m - n_pick]
        return X.take(np.take_along_axis(positions, cols, axis=1))


def _query_texts(step, X) -> list[str]:
    if X.queries is None:
        raise ValueError(MSG_NO_QUERY_TEXT.format(step=type(step).__name__))
    return list(X.queries)


class BM25Reranker(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Score each candidate by BM25 between the query text and the tool text.

    A lexical baseline over ``registry.texts`` (``"{name}: {description}"``), with the
    ``bm25s`` package (Lucene BM25, English stopwords removed). After
    :class:`~skriskrank.FrozenEmbedder` it ranks the whole registry; after
    :class:`~skriskrank.DenseRetriever`, the dense candidates (ties keep their order). The
    batch must carry the query texts.

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
        The index over the registry's tool texts; a model file (:func:`~skriskrank.save`)
        holds the registry, and :func:`~skriskrank.load` builds the index again from it.
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, ToolRegistry
    >>> from skriskrank.baselines import BM25Reranker
    >>> reg = ToolRegistry.from_records([
    ...     {"name": "get_weather", "description": "Weather forecast for a city", "risk": 1},
    ...     {"name": "send_email", "description": "Send an email message", "risk": 3}])
    >>> emb = np.eye(2, dtype=np.float32)
    >>> batch = RankingBatch.full_pool(reg, emb[:1], emb, queries=["email my boss"])
    >>> BM25Reranker(k=1).fit(batch).predict(batch).tolist()
    [['send_email']]
    """

    _parameter_constraints: dict = {"k1": [Interval(Real, 0, None, closed="left")],
                                    "b": [Interval(Real, 0, 1, closed="both")],
                                    "k": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, *, k1=1.5, b=0.75, k=5):
        self.k1 = k1
        self.b = b
        self.k = k

    def _fit_step(self, X, y):
        self.index_ = self._index(X.registry.texts)

    def _index(self, texts):
        try:
            import bm25s
        except ImportError as exc:
            raise ValueError(MSG_BM25_MISSING.format(error=exc)) from None
        index = bm25s.BM25(k1=self.k1, b=self.b)
        index.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False),
                    show_progress=False)
        return index

    # A model file holds the registry, not bm25s's objects (not among the types skriskrank.load
    # trusts): the index is built again from the registry's texts, the same as fit built it.
    def __getstate__(self):
        state = super().__getstate__()
        state.pop("index_", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "registry_" in state:
            self._validate_params()  # a file's k1 and b reach bm25s only once checked
            self.index_ = self._index(self.registry_.texts)

    def _transform(self, X):
        import bm25s

        tokens = bm25s.tokenize(_query_texts(self, X), stopwords="en", show_progress=False,
                                return_ids=False)
        n_tools = len(X.registry)
        # get_scores gives every registry tool's score for one tokenized query.
        full = np.stack([self.index_.get_scores(t) for t in tokens]).astype(np.float32)
        if full.shape[1] != n_tools:
            raise ValueError(MSG_BM25_INDEX.format(got=full.shape[1], expected=n_tools))
        return X.with_scores(np.take_along_axis(full, X.candidates, axis=1))


class CrossEncoderReranker(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Rescore each query's top candidates with a ``sentence_transformers.CrossEncoder``.

    The cross-encoder reads the query text (``batch.queries``) and the tool text
    (``registry.texts``) together. Only each query's ``n_rerank`` best candidates are
    rescored (one forward pass per pair), and only those are kept, ranked by the
    cross-encoder's score: the others were never scored by this step. The model is loaded
    offline (``local_files_only``), once per process, and never pickled.

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
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.
    device_ : str
        The checked torch device.

    Raises
    ------
    ValueError
        From ``fit``, when the model cannot be loaded offline; from ``transform``, when the
        batch carries no query texts.

    Examples
    --------
    >>> from skriskrank.baselines import CrossEncoderReranker
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

    def _cross_encoder(self):
        # The bi-encoder's resolution: a local directory by its absolute path, else a name.
        model = str(self.model)
        return load_model(resolve_model(model)[1], self.device_, model,
                           kind="CrossEncoder", message=MSG_CROSS_ENCODER_UNAVAILABLE)

    def _fit_step(self, X, y):
        # Load the cross-encoder now, so that a model that cannot load fails the fit.
        if self.model is None:
            raise ValueError(MSG_CROSS_ENCODER_UNAVAILABLE.format(model=None,
                                                                  error="no model given"))
        self.device_ = check_device(self.device)
        self._cross_encoder()

    def _transform(self, X):
        queries, top, texts = _query_texts(self, X), X.top(self.n_rerank), X.registry.texts
        pairs = [(q, texts[t]) for q, ts in zip(queries, top.candidates, strict=True) for t in ts]
        ce_scores = self._cross_encoder().predict(
            pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)
        # A model with several output labels scores a pair by its last one.
        ce_scores = np.asarray(ce_scores, np.float32).reshape(top.n_queries, top.n_candidates, -1)
        return top.with_scores(np.ascontiguousarray(ce_scores[..., -1]))
