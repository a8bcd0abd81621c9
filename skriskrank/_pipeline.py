"""The paper's full pipeline, assembled."""

from __future__ import annotations

from sklearn.pipeline import Pipeline

from ._embedding import FrozenEmbedder
from ._filter import RuleFilter
from ._graph import GraphSmoother
from ._reranker import RiskAwareReranker
from ._retriever import DenseRetriever

__all__ = ["build_pipeline"]


def build_pipeline(registry, *, model=None, n_candidates=100, risk_weight=0.1, alpha=0.2, k=5,
                   random_state=0, cache=True, **reranker_params):
    """The paper's full pipeline: embed -> retrieve -> rerank -> smooth -> filter.

    Parameters
    ----------
    registry : ToolRegistry
        The tool catalogue.
    model : str or None, default=None
        Sentence-transformers model name or path; ``None`` is the packaged all-MiniLM-L6-v2.
    n_candidates : int or None, default=100
        First-stage candidates per query; ``None`` drops the retriever (full pool).
    risk_weight : float, default=0.1
        The paper's lambda.
    alpha : float, default=0.2
        Graph smoothing strength.
    k : int, default=5
        Length of the predicted lists.
    random_state : int or None, default=0
        Seed of the reranker.
    cache : bool or str, default=True
        Embedding cache of :class:`FrozenEmbedder`.
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
    steps = [("embed", FrozenEmbedder(registry, model=model, cache=cache))]
    if n_candidates is not None:
        steps.append(("retrieve", DenseRetriever(n_candidates=n_candidates, k=k)))
    steps += [
        ("rerank", RiskAwareReranker(risk_weight=risk_weight, k=k, random_state=random_state,
                                     **reranker_params)),
        ("smooth", GraphSmoother(alpha=alpha, k=k)),
        ("filter", RuleFilter(k=k)),
    ]
    return Pipeline(steps)
