"""DenseRetriever: keep each query's top candidates, the paper's candidate-matched setting."""

from __future__ import annotations

import os
from numbers import Integral

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import RankingStepMixin
from ._fast import Int8CosineIndex, cpu_count, omp_num_threads

__all__ = ["DenseRetriever"]

#: From this many tools, ``search="auto"`` scans the int8 index.
_INDEX_MIN_TOOLS = 20_000
#: Batches up to this many queries go through the index; larger ones amortize one GEMM.
_INDEX_MAX_QUERIES = 2


class DenseRetriever(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Keep each query's ``n_candidates`` best tools by current score, as ranked lists.

    Placed right after :class:`FrozenEmbedder`, this is first-stage dense retrieval: the
    paper's top-100 candidate-matched setting, where every later step only reorders the
    retriever's candidates. Without it, later steps score the full pool.

    Parameters
    ----------
    n_candidates : int, default=100
        Candidates kept per query (all of them when the batch has fewer); at most the
        catalogue's size.
    k : int, default=5
        Length of the list :meth:`predict` returns; at most the catalogue's size.
    search : {"auto", "exact", "int8"}, default="auto"
        How a small batch (one or two queries) fresh from :class:`FrozenEmbedder` finds its
        top candidates: ``"exact"`` computes the float32 cosine against every tool;
        ``"int8"`` scans an int8 copy of the tool embeddings and rescores in float32 only the
        tools its error bound cannot rule out, so it returns the same top candidates (see
        ``skriskrank._fast._index``); ``"auto"`` is ``"int8"`` from 20,000 tools. Larger
        batches, and batches whose scores an earlier step changed, take the exact path.
    n_jobs : int, default=None
        Threads that share the int8 scan of one call. ``None`` means 1 unless in a
        :func:`joblib.parallel_config` context; ``-1`` means every core. Never more than
        the cores the process may run on, nor ``OMP_NUM_THREADS`` when set (as joblib's
        process workers set it), so a ``GridSearchCV(n_jobs=...)`` worker does not
        oversubscribe. The result does not depend on it.

    Attributes
    ----------
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.

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

    _caches = ("_index",)  # the int8 index, per tool array
    _catalogue_sized = ("k", "n_candidates")

    _parameter_constraints: dict = {
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "search": [StrOptions({"auto", "exact", "int8"})],
        "n_jobs": [Integral, None],
    }

    def __init__(self, *, n_candidates=100, k=5, search="auto", n_jobs=None):
        self.n_candidates = n_candidates
        self.k = k
        self.search = search
        self.n_jobs = n_jobs

    def _fit_step(self, X, y):
        self._threads()  # n_jobs=0 fails here, not on the first online call
        self._index = None
        if self._uses_index(len(X.registry)):
            # Built here so that the first online query does not pay for it.
            self._index_of(X.tool_embeddings)

    def _uses_index(self, n_tools) -> bool:
        return self.search == "int8" or (self.search == "auto" and n_tools >= _INDEX_MIN_TOOLS)

    def _index_of(self, tool_emb):
        # An array the index cannot take (not float32, not finite) is remembered as None,
        # so that the exact path does not retry the O(n_tools) build on every call.
        def build():
            try:
                return Int8CosineIndex(tool_emb)
            except ValueError:
                return None

        return self._cached("_index", (tool_emb,), build)

    def _threads(self) -> int:
        if self.n_jobs is not None and self.n_jobs < 0:
            threads = cpu_count() + 1 + self.n_jobs
        else:
            # None: 1, unless a joblib.parallel_config context sets n_jobs; raises for 0.
            threads = effective_n_jobs(self.n_jobs)
        limits = [cpu_count()]
        # Read live: the affinity mask can change after the count was cached.
        if hasattr(os, "sched_getaffinity"):
            limits.append(len(os.sched_getaffinity(0)))
        if omp := omp_num_threads():
            limits.append(omp)
        return max(1, min(threads, *limits))

    def _transform(self, X):
        n = min(self.n_candidates, X.n_candidates)
        if (X.scores_pending and n < X.n_candidates and X.n_queries <= _INDEX_MAX_QUERIES
                and self._uses_index(X.n_candidates) and np.isfinite(X.query_embeddings).all()):
            index = self._index_of(X.tool_embeddings)
            if index is not None:
                cand, scores = index.top(X.query_embeddings, n, n_threads=self._threads())
                return X.replace(candidates=cand, scores=scores)
        return X.top(n)
