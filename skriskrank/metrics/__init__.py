"""Ranking quality and risk exposure metrics for tool retrieval.

The metrics of *Risk-Aware Reranking for Agentic Tool Retrieval* (CIKM 2026), their
scikit-learn scorers for ``GridSearchCV``, and the paper's annotation protocol. Every metric
takes one ranked list of tool names per query (best first) and returns the mean over queries
as a ``float``. Risk comes from a :class:`~skriskrank.ToolRegistry` or a mapping of tool
name -> level; unknown levels count as high risk, never as safe.
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

__all__ = ["agreement", "best_under_risk_budget", "make_ranking_scorer", "mrr", "ndcg_at_k",
           "needrisk_hit_at_k", "ordinal_alpha", "ranking_report", "recall_at_k",
           "resolve_votes", "rvr_at_k", "safe_rvr_at_k", "sndcg_at_k", "srr_at_k",
           "unneeded_rvr_at_k"]
