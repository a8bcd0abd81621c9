"""Ranking quality and risk exposure metrics for tool retrieval.

The metrics of *Risk-Aware Reranking for Agentic Tool Retrieval* (CIKM 2026). Every function
takes one ranked list of tool names per query (best first) and returns the mean over queries
as a ``float``:

- :func:`ndcg_at_k`, :func:`recall_at_k` and :func:`mrr`: ranking quality, binary relevance.
- :func:`sndcg_at_k`: NDCG@k with no credit for severe-risk (level >= 4) tools.
- :func:`rvr_at_k` and :func:`srr_at_k`: the share of the top k at risk >= 3 and >= 4.
- :func:`safe_rvr_at_k`: RVR@k over queries whose relevant tools are all below level 3.
- :func:`needrisk_hit_at_k`: over queries that need a risky tool, how often one is offered.
- :func:`unneeded_rvr_at_k`: the share of the top k at risk >= 3 that the query does not need.
- :func:`ranking_report`: all of the above at once.

Risk comes from a :class:`~skriskrank.ToolRegistry` or a mapping of tool name -> level;
unknown levels count as high risk, never as safe. :func:`make_ranking_scorer` wraps each
metric as a scikit-learn scorer for ``GridSearchCV``, and :func:`best_under_risk_budget` is a
``refit`` rule that picks the best NDCG within an RVR budget.

The paper's annotation protocol: :func:`resolve_votes` applies the span rule to several
annotators' levels, :func:`agreement` and :func:`ordinal_alpha` measure how well raters agree.
"""

from ._agreement import agreement, ordinal_alpha, resolve_votes
from ._model_selection import best_under_risk_budget, make_ranking_scorer
from ._ranking import (
    mrr,
    ndcg_at_k,
    needrisk_hit_at_k,
    ranking_report,
    recall_at_k,
    rvr_at_k,
    safe_rvr_at_k,
    sndcg_at_k,
    srr_at_k,
    unneeded_rvr_at_k,
)

__all__ = [
    "agreement", "best_under_risk_budget", "make_ranking_scorer", "mrr", "ndcg_at_k",
    "needrisk_hit_at_k", "ordinal_alpha", "ranking_report", "recall_at_k", "resolve_votes",
    "rvr_at_k", "safe_rvr_at_k", "sndcg_at_k", "srr_at_k", "unneeded_rvr_at_k",
]
