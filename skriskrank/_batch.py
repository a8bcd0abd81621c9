"""The object that flows between skriskrank's pipeline steps."""

from __future__ import annotations

import numpy as np

from ._fast import topk_rows
from ._registry import ToolRegistry

__all__ = ["RankingBatch", "check_batch"]

MSG_REGISTRY = "RankingBatch: registry must be a ToolRegistry, got {type}."
MSG_ARRAY = "RankingBatch: {name} must be a {ndim}-d {dtype} array{hint}; got {what}."
MSG_SHAPE = "RankingBatch: {name} has shape {shape}, expected {expected} ({why})."
MSG_RANGE = "RankingBatch: candidates[{i}, {j}] is {value}, not a registry index in 0..{n_max}."
MSG_SCORES_NEEDED = ("RankingBatch: a batch of ranked candidate lists needs their scores; only a "
                     "full-pool batch may leave scores=None (the cosine, computed on first read).")
MSG_LENGTHS = ("RankingBatch: lengths must hold, for ranked lists, one count per query between 0 "
               "and the number of candidates.")
MSG_REPLACE_SCORES = ("RankingBatch.replace: new candidates need their own scores; pass scores= "
                      "too.")
MSG_REPLACE_PARTS = ("RankingBatch.replace: new candidates would leave the recorded parts behind; "
                     "use take().")
MSG_NOT_A_BATCH = ("{step} expects the RankingBatch made by FrozenEmbedder.transform (put "
                   "FrozenEmbedder first in the pipeline); got {type}.")
MSG_OTHER_REGISTRY = ("{step} was fitted on registry {fitted} but got a batch built from registry "
                      "{got}: refit it, or build the batch with the embedder of the fitted "
                      "registry.")
MSG_OTHER_ENCODER = ("{step} was fitted on embeddings from {fitted!r} but got embeddings from "
                     "{got!r}.")


def _check_array(name, value, ndim, dtype, hint=""):
    if not isinstance(value, np.ndarray) or value.ndim != ndim or value.dtype != dtype:
        what = (f"a {value.ndim}-d {value.dtype} array" if isinstance(value, np.ndarray)
                else type(value).__name__)
        raise ValueError(MSG_ARRAY.format(name=name, ndim=ndim, dtype=np.dtype(dtype).name,
                                          hint=hint, what=what))
    return value


class RankingBatch:
    """A batch of queries, each with its candidate tools and their scores.

    The contract between skriskrank's pipeline steps (:ref:`ranking_batch`):
    :class:`FrozenEmbedder` makes it from raw query strings; every later step takes one and
    returns a new one from ``transform``, never changing its input. It is either **the full
    pool** (``candidates=None``: every registry tool is a candidate of every query, ranked
    by ``scores``) or **ranked lists** (row ``i`` is query ``i``'s candidates, best first).
    ``scores[i, j]`` is the score of candidate ``j`` of query ``i`` under the last step that
    scored it (higher is better); a step that only reorders leaves it as it was.

    Parameters
    ----------
    registry : ToolRegistry
        The catalogue the candidates index into.
    query_embeddings : ndarray of float32 of shape (n_queries, dim)
        L2-normalized query embeddings.
    tool_embeddings : ndarray of float32 of shape (n_tools, dim)
        L2-normalized embeddings of ``registry.texts``, one row per registry tool.
    candidates : ndarray of int64 of shape (n_queries, m) or None, default=None
        Registry indices of each query's candidates, best first; ``None`` is the full pool.
    scores : ndarray of float32 of shape (n_queries, m) or None, default=None
        The score of each candidate (``m = n_tools`` for the full pool). Only the full pool
        may leave it ``None``: it is then the cosine, computed on first read (a step that
        never reads it, such as an indexed :class:`DenseRetriever`, never pays for it).
    encoder : str, default=""
        Identity of the encoder that produced the embeddings (model name or path).
    queries : tuple of str or None, default=None
        The raw query texts, for steps that read text (BM25, cross-encoders).
    lengths : ndarray of int64 of shape (n_queries,) or None, default=None
        For ranked lists a filter may shorten: how many of each row's candidates the list
        holds (the rest were left out, for instance below a relevance floor). ``None``: every
        row holds all its candidates.
    parts : dict of str to ndarray of shape (n_queries, m), or None, default=None
        What each step added to each candidate's score, when the batch is traced
        (:meth:`traced`): ``None`` records nothing (and costs nothing). Each array is
        aligned with ``candidates`` and follows them through :meth:`take`, so the batch a
        pipeline returns carries its own explanation (see :func:`~skriskrank.explain`).

    Attributes
    ----------
    n_queries : int
        Number of queries.
    n_candidates : int
        Candidates per query.
    is_full_pool : bool
        True for the full-pool form.
    scores_pending : bool
        True while ``scores`` is the full pool's cosine that nobody has read yet.

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
    >>> batch = RankingBatch.full_pool(reg, emb[:1] + emb[1:2] / 2, emb)
    >>> batch.is_full_pool, batch.scores.tolist()
    (True, [[1.0, 0.5, 0.0]])
    >>> top = batch.top(2)
    >>> top.candidates.tolist(), top.ranked_names().tolist()
    ([[0, 1]], [['a', 'b']])
    """

    def __init__(self, registry, query_embeddings, tool_embeddings, candidates=None,
                 scores=None, *, encoder="", queries=None, lengths=None, parts=None):
        if not isinstance(registry, ToolRegistry):
            raise ValueError(MSG_REGISTRY.format(type=type(registry).__name__))
        q, t = (_check_array(name, value, 2, np.float32, " (use .astype(np.float32))")
                for name, value in (("query_embeddings", query_embeddings),
                                    ("tool_embeddings", tool_embeddings)))
        n_q, n_tools = q.shape[0], len(registry)
        if t.shape != (n_tools, q.shape[1]):
            raise ValueError(MSG_SHAPE.format(
                name="tool_embeddings", shape=t.shape, expected=(n_tools, q.shape[1]),
                why="one row per registry tool, as wide as the query embeddings"))
        if candidates is not None:
            _check_array("candidates", candidates, 2, np.int64, " of registry indices")
            if candidates.shape[0] != n_q:
                raise ValueError(MSG_SHAPE.format(name="candidates", shape=candidates.shape,
                                                  expected=f"({n_q}, m)", why="one row per query"))
            if candidates.size and (candidates.min() < 0 or candidates.max() >= n_tools):
                i, j = np.argwhere((candidates < 0) | (candidates >= n_tools))[0]
                raise ValueError(MSG_RANGE.format(i=i, j=j, value=candidates[i, j],
                                                  n_max=n_tools - 1))
            if scores is None:
                raise ValueError(MSG_SCORES_NEEDED)
        m = n_tools if candidates is None else candidates.shape[1]
        if lengths is not None:
            _check_array("lengths", lengths, 1, np.int64)
            if (lengths.shape != (n_q,) or (lengths < 0).any()
                    or (lengths > (-1 if candidates is None else m)).any()):
                raise ValueError(MSG_LENGTHS)
        shaped = {f"parts[{name!r}]": part for name, part in (parts or {}).items()}
        if scores is not None:
            shaped = {"scores": _check_array("scores", scores, 2, np.float32), **shaped}
        for name, value in shaped.items():
            if np.shape(value) != (n_q, m):
                raise ValueError(MSG_SHAPE.format(name=name, shape=np.shape(value),
                                                  expected=(n_q, m), why="one per candidate"))
        fields = dict(registry=registry, query_embeddings=q, tool_embeddings=t,
                      _candidates=candidates, _scores=scores, encoder=encoder,
                      queries=None if queries is None else tuple(queries), lengths=lengths,
                      parts=None if parts is None else dict(parts))
        self.__dict__.update(fields)  # past the __setattr__ that keeps a batch immutable

    def __setattr__(self, name, value):
        # Steps share batches (and their arrays) by reference, so a batch never changes.
        raise AttributeError(f"RankingBatch is immutable; use replace() to change {name!r}.")

    @classmethod
    def full_pool(cls, registry, query_embeddings, tool_embeddings, *, encoder="",
                  queries=None):
        """A full-pool batch scored by cosine similarity (computed on first read).

        Parameters
        ----------
        registry, query_embeddings, tool_embeddings, encoder, queries
            As in the constructor.

        Returns
        -------
        batch : RankingBatch
        """
        return cls(registry, query_embeddings, tool_embeddings, encoder=encoder, queries=queries)

    # -- fields --------------------------------------------------------------------------------
    @property
    def is_full_pool(self) -> bool:
        """True when every registry tool is a candidate of every query."""
        return self._candidates is None

    @property
    def candidates(self) -> np.ndarray:
        """Registry indices (n_queries, m); the full pool's is a broadcast ``arange``."""
        if self._candidates is None:
            pool = np.arange(len(self.registry), dtype=np.int64)
            return np.broadcast_to(pool, (self.n_queries, len(pool)))
        return self._candidates

    @property
    def scores(self) -> np.ndarray:
        """The score of each candidate under the last step that scored it, float32."""
        if self._scores is None:
            # Computing the cosine fills in what the batch already meant, so it is no change.
            object.__setattr__(self, "_scores", np.asarray(
                self.query_embeddings @ self.tool_embeddings.T, dtype=np.float32))
        return self._scores

    @property
    def scores_pending(self) -> bool:
        """True while ``scores`` is the full pool's cosine that nobody has read yet."""
        return self._scores is None

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.query_embeddings.shape[0]

    @property
    def n_candidates(self) -> int:
        """Candidates per query."""
        return len(self.registry) if self._candidates is None else self._candidates.shape[1]

    def __len__(self) -> int:
        return self.n_queries

    def __repr__(self) -> str:
        form = "full pool" if self.is_full_pool else f"{self.n_candidates} ranked candidates"
        return f"RankingBatch(n_queries={self.n_queries}, {form}, registry={self.registry!r})"

    # -- new batches ---------------------------------------------------------------------------
    def replace(self, **changes) -> RankingBatch:
        """A new batch with some fields replaced (new candidates need new scores)."""
        if "candidates" in changes and "scores" not in changes:
            raise ValueError(MSG_REPLACE_SCORES)
        new = "candidates" in changes
        if new and self.parts and "parts" not in changes:
            raise ValueError(MSG_REPLACE_PARTS)
        fields = dict(registry=self.registry, query_embeddings=self.query_embeddings,
                      tool_embeddings=self.tool_embeddings, candidates=self._candidates,
                      scores=self._scores, encoder=self.encoder, queries=self.queries,
                      # New candidates make a new list: its length is theirs unless given.
                      lengths=None if new else self.lengths, parts=self.parts)
        return RankingBatch(**{**fields, **changes})

    def traced(self) -> RankingBatch:
        """The batch, recording from here on what each step adds to the scores (``parts``)."""
        return self if self.parts is not None else self.replace(parts={})

    def with_parts(self, **parts) -> RankingBatch:
        """The batch with ``parts`` added when it is traced; itself, at no cost, when not.

        Each value is an array aligned with ``candidates``, or a callable that makes one (so
        an untraced batch never computes it).
        """
        if self.parts is None:
            return self
        made = {name: np.asarray(part() if callable(part) else part)
                for name, part in parts.items()}
        return self.replace(parts={**self.parts, **made})

    def with_scores(self, scores) -> RankingBatch:
        """New scores for the candidates; ranked lists are re-sorted by them, stably.

        A shortened list (``lengths``) is re-sorted within its length: a candidate a filter
        dropped stays out whatever its new score.
        """
        if self.is_full_pool:
            return self.replace(scores=scores)
        key = scores if self.lengths is None else np.where(
            np.arange(self.n_candidates) < self.lengths[:, None], scores, -np.inf)
        return self.replace(scores=scores).take(np.argsort(-key, axis=1, kind="stable"),
                                                self.lengths)

    def take(self, columns, lengths=None) -> RankingBatch:
        """Ranked lists of the given candidate positions of each row, with their scores."""
        columns = np.asarray(columns, dtype=np.int64)
        parts = None if self.parts is None else {
            name: np.take_along_axis(part, columns, axis=1) for name, part in self.parts.items()}
        return self.replace(candidates=np.take_along_axis(self.candidates, columns, axis=1),
                            scores=np.take_along_axis(self.scores, columns, axis=1),
                            lengths=lengths, parts=parts)

    def order(self, k=None) -> np.ndarray:
        """Each row's first ``k`` positions by rank (full pool: by score, ties by index)."""
        m = self.n_candidates
        k = m if k is None else min(int(k), m)
        if not self.is_full_pool:
            return np.broadcast_to(np.arange(k, dtype=np.int64), (self.n_queries, k))
        if k == m:
            return np.argsort(-self.scores, axis=1, kind="stable")
        return topk_rows(self.scores, k)

    def top(self, k) -> RankingBatch:
        """The first ``k`` candidates of each query, as ranked lists: cutting to ``k``."""
        lengths = None if self.lengths is None else np.minimum(self.lengths, int(k))
        return self.take(self.order(k), lengths)

    def ranked_indices(self, k=None) -> np.ndarray:
        """Registry indices of each query's list, best first, the first ``k`` (-1 pads)."""
        out = np.take_along_axis(self.candidates, self.order(k), axis=1)
        if self.lengths is not None:
            out[np.arange(out.shape[1]) >= self.lengths[:, None]] = -1
        return out

    def ranked_names(self, k=None) -> np.ndarray:
        """Tool names of each query's list, best first, the first ``k`` (None pads)."""
        idx = self.ranked_indices(k)
        names = self.registry.names[idx]
        names[idx < 0] = None
        return names


def check_batch(step, X, *, registry=None, encoder=None, allow_empty=False) -> RankingBatch:
    """Check that ``X`` is a :class:`RankingBatch`, from ``registry`` if given.

    A batch of no queries is refused unless ``allow_empty``: a step that learns nothing from
    queries fits on the catalogue alone.
    """
    name = type(step).__name__
    if not isinstance(X, RankingBatch):
        raise TypeError(MSG_NOT_A_BATCH.format(step=name, type=type(X).__name__))
    if registry is not None and X.registry.fingerprint != registry.fingerprint:
        raise ValueError(MSG_OTHER_REGISTRY.format(step=name, fitted=repr(registry),
                                                   got=repr(X.registry)))
    if encoder and X.encoder and X.encoder != encoder:
        raise ValueError(MSG_OTHER_ENCODER.format(step=name, fitted=encoder, got=X.encoder))
    if X.n_queries == 0 and not allow_empty:
        raise ValueError(f"{name} got an empty batch (0 queries).")
    return X
