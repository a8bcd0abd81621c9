"""The paper's full pipeline, assembled; and a fitted pipeline for a catalogue alone."""

from __future__ import annotations

import numpy as np
from sklearn.pipeline import Pipeline

from ._batch import RankingBatch
from ._embedding import FrozenEmbedder
from ._filter import RuleFilter
from ._graph import GraphSmoother
from ._need import NeedAwareFilter
from ._reranker import RiskAwareReranker
from ._retriever import DenseRetriever

__all__ = ["build_pipeline", "catalogue_pipeline"]


def build_pipeline(registry, *, model=None, n_candidates=100, risk_weight=0.1, alpha=0.2, k=5,
                   need_aware=False, random_state=0, cache=True, backend="torch", verbose=0,
                   **reranker_params):
    """The paper's full pipeline: embed -> retrieve -> rerank -> smooth -> filter.

    Parameters
    ----------
    registry : ToolRegistry
        The tool catalogue.
    model, cache, backend
        As for :class:`FrozenEmbedder`.
    n_candidates : int or None, default=100
        First-stage candidates per query, at most the catalogue's size (a smaller catalogue
        keeps all its tools); ``None`` drops the retriever (full pool).
    risk_weight : float, default=0.1
        The paper's lambda.
    alpha : float, default=0.2
        Graph smoothing strength.
    k : int, default=5
        Length of the predicted lists.
    need_aware : bool, default=False
        End with :class:`NeedAwareFilter` instead of the paper's :class:`RuleFilter`.
    random_state : int or None, default=0
        Seed of the reranker.
    verbose : int, default=0
        1 shows progress bars while encoding the tools and training.
    **reranker_params
        Further :class:`RiskAwareReranker` parameters.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Steps ``embed``, (``retrieve``), ``rerank``, ``smooth``, ``filter``.

    Examples
    --------
    >>> from skriskrank import build_pipeline
    >>> from skriskrank.datasets import load_demo
    >>> demo = load_demo()
    >>> pipe = build_pipeline(demo.registry, n_candidates=50, epochs=2)
    >>> [name for name, _ in pipe.steps]
    ['embed', 'retrieve', 'rerank', 'smooth', 'filter']
    """
    steps = [("embed", FrozenEmbedder(registry, model=model, cache=cache, backend=backend,
                                      show_progress_bar=bool(verbose) or None))]
    if n_candidates is not None:
        steps.append(("retrieve", DenseRetriever(n_candidates=min(n_candidates, len(registry)),
                                                 k=k)))
    steps += [
        ("rerank", RiskAwareReranker(risk_weight=risk_weight, k=k, random_state=random_state,
                                     verbose=verbose, **reranker_params)),
        ("smooth", GraphSmoother(alpha=alpha, k=k)),
        ("filter", NeedAwareFilter(k=k) if need_aware else RuleFilter(k=k)),
    ]
    return Pipeline(steps)


def catalogue_pipeline(registry, *, model=None, n_candidates=100, k=5, cache=True,
                       backend="torch"):
    """A fitted pipeline for a catalogue that has no training queries.

    Dense retrieval and the paper's rule filter: the steps that learn nothing from queries,
    fitted on the catalogue alone (its tools are encoded; no query stands in for training
    data). Tools without a level count as high risk: grade them first with
    :meth:`RiskAuditor.grade`.

    Parameters
    ----------
    registry, model, k, cache, backend
        As for :func:`build_pipeline`.
    n_candidates : int, default=100
        First-stage candidates per query (at most the catalogue's size).

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Fitted steps ``embed``, ``retrieve`` and ``filter``.

    Examples
    --------
    >>> from skriskrank import catalogue_pipeline
    >>> from skriskrank.datasets import load_demo
    >>> pipe = catalogue_pipeline(load_demo().registry, k=3)
    >>> pipe.predict(["delete the old log files"]).shape
    (1, 3)
    """
    embed = FrozenEmbedder(registry, model=model, cache=cache, backend=backend).fit(None)
    # A batch of no queries over the catalogue: what the steps fit on when nothing is learned
    # from queries (the retriever's index and the filter's per-tool rules are built here).
    tools = embed.tool_embeddings_
    empty = RankingBatch.full_pool(registry, np.empty((0, tools.shape[1]), np.float32), tools,
                                   encoder=embed.model_id_, queries=())
    retrieve = DenseRetriever(n_candidates=min(n_candidates, len(registry)), k=k).fit(empty)
    return Pipeline([("embed", embed), ("retrieve", retrieve),
                     ("filter", RuleFilter(k=k).fit(empty))])
