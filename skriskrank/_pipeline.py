"""The paper's full pipeline, assembled."""

from __future__ import annotations

from sklearn.pipeline import Pipeline

from ._embedding import FrozenEmbedder
from ._encoder import DEFAULT_BACKEND
from ._filter import RuleFilter
from ._graph import EDGE_TYPES, GraphSmoother
from ._need import NeedAwareFilter
from ._reranker import RiskAwareReranker
from ._retriever import DenseRetriever

__all__ = ["build_pipeline"]


def build_pipeline(registry, *, model=None, n_candidates=100, risk_weight=0.1, alpha=0.2, k=5,
                   need_aware=False, random_state=0, cache=True, backend=DEFAULT_BACKEND,
                   sentence_weight=0.0, tool_text="full", edge_types=EDGE_TYPES, verbose=0,
                   **reranker_params):
    """The paper's full pipeline: embed -> retrieve -> rerank -> smooth -> filter.

    Parameters
    ----------
    registry : ToolRegistry
        The tool catalogue.
    model, cache, backend, sentence_weight, tool_text
        As for :class:`FrozenEmbedder`.
    n_candidates : int or None, default=100
        First-stage candidates per query, at most the catalogue's size (a smaller catalogue
        keeps all its tools); ``None`` drops the retriever (full pool).
    risk_weight : float, default=0.1
        The paper's lambda.
    alpha : float, default=0.2
        Graph smoothing strength.
    edge_types : sequence of str, default=EDGE_TYPES
        The graph's edge types (:func:`build_tool_graph`); add ``"server"`` for a catalogue
        of several servers.
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
                                      show_progress_bar=bool(verbose) or None,
                                      sentence_weight=sentence_weight, tool_text=tool_text))]
    if n_candidates is not None:
        steps.append(("retrieve", DenseRetriever(n_candidates=min(n_candidates, len(registry)),
                                                 k=k)))
    steps += [
        ("rerank", RiskAwareReranker(risk_weight=risk_weight, k=k, random_state=random_state,
                                     verbose=verbose, **reranker_params)),
        ("smooth", GraphSmoother(alpha=alpha, edge_types=edge_types, k=k)),
        ("filter", NeedAwareFilter(k=k) if need_aware else RuleFilter(k=k)),
    ]
    return Pipeline(steps)
