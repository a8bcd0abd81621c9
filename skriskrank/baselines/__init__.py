"""Baseline reranking steps: risk-label penalty, MMR, BM25 and a cross-encoder.

The paper (*Risk-Aware Reranking for Agentic Tool Retrieval*, CIKM 2026) compares its
learned reranker against simple alternatives a practitioner would try first. Each is a
pipeline step over a :class:`~skriskrank.RankingBatch`, so it drops into the same
:class:`~sklearn.pipeline.Pipeline` as the learned steps and has the same ``predict`` and
``rank``:

- :class:`RiskPenaltyReranker`: ``s = score - risk_weight * (r - 1) / 4`` with the audited
  labels, unknown risk counted as level 5.
- :class:`MMRReranker`: maximal marginal relevance over the current scores.
- :class:`BM25Reranker`: lexical BM25 scores (the ``bm25s`` package) of each candidate.
- :class:`CrossEncoderReranker`: a ``sentence_transformers.CrossEncoder`` rescoring each
  query's top candidates from the query text and the tool text.
"""

from ._rerankers import BM25Reranker, CrossEncoderReranker, MMRReranker, RiskPenaltyReranker

__all__ = ["BM25Reranker", "CrossEncoderReranker", "MMRReranker", "RiskPenaltyReranker"]
