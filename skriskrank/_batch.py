"""The object that flows between skriskrank's pipeline steps."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from . import _filter_kernel, _topk
from ._registry import ToolRegistry

__all__ = ["RankingBatch", "check_batch"]


class _CosineUntilSet:
    """Dataclass field descriptor: ``scores`` left as ``None`` is the cosine, made on first read.

    A single query's full-pool cosine reads the whole tool matrix; a first-stage index (see
    ``DenseRetriever``) can find the same top candidates without it, so the full-pool batch
    defers the product until a step actually reads ``scores``.
    """

    def __set_name__(self, owner, name):
        self._slot = "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return None  # the field's default
        value = obj.__dict__.get(self._slot)
        if value is None:
            value = _cosine(obj.query_embeddings, obj.tool_embeddings, obj.candidates)
            obj.__dict__[self._slot] = value
        return value

    def __set__(self, obj, value):
        # Only the dataclass __init__ gets here: the frozen class's __setattr__ raises first.
        obj.__dict__[self._slot] = value


@functools.lru_cache(maxsize=16)
def _pool(n_tools) -> np.ndarray:
    """The read-only ``arange(n_tools)`` that every full-pool batch of that size broadcasts."""
    pool = np.arange(n_tools, dtype=np.int32)
    pool.flags.writeable = False
    return pool


def _is_full_pool(candidates, n_tools) -> bool:
    # A broadcast view of arange has stride 0 along the query axis.
    if candidates.shape[1] != n_tools or not (candidates.strides[0] == 0
                                              or candidates.shape[0] <= 1):
        return False
    pool = _pool(n_tools)
    # The shared arange itself, in order: O(1) instead of comparing n_tools entries (0.15 ms
    # at 100k tools, paid by every step of a single-query call).
    if (candidates.base is pool and candidates.dtype == pool.dtype
            and candidates.strides[1] == pool.itemsize
            and candidates.__array_interface__["data"][0]
            == pool.__array_interface__["data"][0]):
        return True
    return bool(np.array_equal(candidates[0], pool))


def _order(scores, k=None, engine=None):
    """``np.argsort(-scores, axis=1, kind="stable")[:, :k]``, without the full sort."""
    m = scores.shape[1]
    if k is None or k >= m:
        return np.argsort(-scores, axis=1, kind="stable")
    if (engine or _filter_kernel.default_engine()) == "numba":
        # One pass with a k-heap per row (_topk): 0.24 s for 1,000 x 100,000 where the
        # argpartition below took 1.1-2.1 s and 800 MB of int64 indices.
        return _topk.topk_rows(scores, k)
    # argpartition finds the k best in O(m); sorting those by (score, position) keeps
    # tie-breaking identical to the full stable sort, except where a tie straddles the
    # k-th place: those rare rows get the full sort.
    neg = -scores
    part = np.argpartition(neg, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(neg, part, axis=1)
    out = np.take_along_axis(part, np.lexsort((part, vals), axis=1), axis=1)
    kth = vals.max(axis=1, keepdims=True)
    # A NaN k-th value (fewer than k numbers in the row) never compares equal, so which NaN
    # argpartition kept is arbitrary: those rows take the full sort too.
    straddle = np.flatnonzero(((neg == kth).sum(axis=1) != (vals == kth).sum(axis=1))
                              | np.isnan(kth[:, 0]))
    if straddle.size:
        out[straddle] = np.argsort(neg[straddle], axis=1, kind="stable")[:, :k]
    return out


def _cosine(q, tools, candidates):
    if _is_full_pool(candidates, len(tools)):
        return np.asarray(q @ tools.T, dtype=np.float32)
    return np.asarray(np.vecdot(tools[candidates], q[:, None, :]), dtype=np.float32)

MSG_NOT_A_BATCH = (
    "{step} expects the RankingBatch made by FrozenEmbedder.transform (put FrozenEmbedder "
    "first in the pipeline); got {type}."
)
MSG_OTHER_REGISTRY = (
    "{step} was fitted on registry {fitted} but got a batch built from registry {got}: "
    "refit it, or build the batch with the embedder of the fitted registry."
)
MSG_OTHER_ENCODER = (
    "{step} was fitted on embeddings from {fitted!r} but got embeddings from {got!r}."
)


@dataclasses.dataclass(frozen=True, eq=False)
class RankingBatch:
    """A batch of queries with their candidate tools and current scores.

    This is the contract between skriskrank's pipeline steps. :class:`FrozenEmbedder`
    makes it from raw query strings; every later step (``DenseRetriever``,
    ``RiskAwareReranker``, ``GraphSmoother``, ``RuleFilter``) takes one and returns a new one
    from ``transform``, never changing its input in place. Steps keep the shared arrays
    (``tool_embeddings``, the registry) by reference: nothing is copied per query.

    Parameters
    ----------
    registry : ToolRegistry
        The catalogue the candidates index into.
    query_embeddings : ndarray of float32, shape (n_queries, dim)
        L2-normalized query embeddings.
    tool_embeddings : ndarray of float32, shape (n_tools, dim)
        L2-normalized embeddings of ``registry.texts``; one array shared by every batch.
    candidates : ndarray of int, shape (n_queries, n_candidates)
        Registry indices of each query's candidate tools. For the full pool this is a
        zero-copy broadcast view of ``arange(n_tools)``.
    scores : ndarray of float32, shape (n_queries, n_candidates) or None, default=None
        The current score of ``candidates[i, j]`` for query ``i``; higher is better. The
        order of candidates within a row carries no meaning: rank by score (ties keep the
        row order, a stable sort). ``None`` stands for the cosine of each query and
        candidate, computed on first read (so a step that never reads it, such as an
        indexed :class:`DenseRetriever`, never pays for it).
    encoder : str, default=""
        Identity of the encoder that produced the embeddings (model name or path).
    queries : tuple of str or None, default=None
        The raw query texts, for steps that read text (BM25, cross-encoders).

    Attributes
    ----------
    n_queries : int
        Number of queries.
    n_candidates : int
        Candidates per query.
    is_full_pool : bool
        True when every query's candidates are the whole registry.
    scores_pending : bool
        True while ``scores`` is the cosine that no step has read yet.

    See Also
    --------
    FrozenEmbedder.transform : Makes the first batch.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, ToolRegistry
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": n, "description": n + " tool", "risk": r}
    ...      for n, r in [("a", 1), ("b", 3), ("c", 2)]])
    >>> emb = np.eye(3, dtype=np.float32)
    >>> batch = RankingBatch.full_pool(reg, emb[:1], emb)
    >>> batch.candidates.shape, batch.is_full_pool
    ((1, 3), True)
    >>> batch.ranked_names(k=2).tolist()
    [['a', 'b']]
    """

    registry: ToolRegistry
    query_embeddings: np.ndarray
    tool_embeddings: np.ndarray
    candidates: np.ndarray
    scores: np.ndarray | None = _CosineUntilSet()
    encoder: str = ""
    queries: tuple | None = None

    @classmethod
    def full_pool(cls, registry, query_embeddings, tool_embeddings, *, encoder="", queries=None):
        """A batch whose candidates are the whole registry, scored by cosine similarity.

        The cosine (``query_embeddings @ tool_embeddings.T``) is computed on the first read
        of ``scores``.
        """
        n_tools = len(registry)
        cand = np.broadcast_to(_pool(n_tools), (len(query_embeddings), n_tools))
        return cls(
            registry, query_embeddings, tool_embeddings, cand, None, encoder,
            None if queries is None else tuple(queries),
        )

    @property
    def scores_pending(self) -> bool:
        """True while ``scores`` is the cosine not yet computed (reading it computes it)."""
        return self.__dict__.get("_scores") is None

    @property
    def n_queries(self) -> int:
        return self.candidates.shape[0]

    @property
    def n_candidates(self) -> int:
        return self.candidates.shape[1]

    @property
    def is_full_pool(self) -> bool:
        return _is_full_pool(self.candidates, len(self.registry))

    def __len__(self) -> int:
        return self.n_queries

    def replace(self, **changes) -> RankingBatch:
        """A new batch with some fields replaced (the arrays not named stay shared)."""
        return dataclasses.replace(self, **changes)

    def order(self, k: int | None = None) -> np.ndarray:
        """Column positions of each row sorted by descending score, stable, first ``k``."""
        return _order(self.scores, k)

    def ranked_indices(self, k: int | None = None) -> np.ndarray:
        """Registry indices of each query's candidates, best first, first ``k`` per row."""
        return np.take_along_axis(self.candidates, self.order(k), axis=1).astype(np.int64)

    def ranked_names(self, k: int | None = None) -> np.ndarray:
        """Tool names of each query's candidates, best first, first ``k`` per row."""
        return self.registry.names[self.ranked_indices(k)]


def check_batch(step, X, *, registry=None, encoder=None) -> RankingBatch:
    """Check that ``X`` is a :class:`RankingBatch`, from ``registry`` when one is given."""
    name = type(step).__name__
    if not isinstance(X, RankingBatch):
        raise TypeError(MSG_NOT_A_BATCH.format(step=name, type=type(X).__name__))
    if registry is not None and X.registry.fingerprint != registry.fingerprint:
        raise ValueError(
            MSG_OTHER_REGISTRY.format(
                step=name, fitted=repr(registry), got=repr(X.registry)
            )
        )
    if encoder is not None and encoder and X.encoder and X.encoder != encoder:
        raise ValueError(MSG_OTHER_ENCODER.format(step=name, fitted=encoder, got=X.encoder))
    if X.n_queries == 0:
        raise ValueError(f"{name} got an empty batch (0 queries).")
    return X
