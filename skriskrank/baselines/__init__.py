"""Baseline reranking steps: risk-label penalty, MMR, BM25 and a cross-encoder.

The paper (*Risk-Aware Reranking for Agentic Tool Retrieval*, CIKM 2026) compares its
learned reranker against simple alternatives a practitioner would try first. Each is a
pipeline step over a :class:`~skriskrank.RankingBatch`, so it drops into the same
:class:`~sklearn.pipeline.Pipeline` as the learned steps and has the same ``predict`` and
``rank``.
"""

from ._rerankers import BM25Reranker, CrossEncoderReranker, MMRReranker, RiskPenaltyReranker

__all__ = ["BM25Reranker", "CrossEncoderReranker", "MMRReranker", "RiskPenaltyReranker"]
