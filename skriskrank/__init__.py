"""Risk-aware reranking for agentic tool retrieval, as scikit-learn estimators.

An LLM agent's tool retriever returns the top-k tools for a query, and those k tools are
the actions the agent can take next. skriskrank reranks them so that relevant tools stay on
top while higher-risk tools (ordinal risk levels 1..5) are exposed less. It implements
*Risk-Aware Reranking for Agentic Tool Retrieval* (CIKM 2026): a frozen
sentence-transformers encoder, a dual-head reranker trained with skorch, a ToolGraph score
smoother and a greedy rule filter, each a scikit-learn estimator that composes in a
:class:`sklearn.pipeline.Pipeline`.
"""

from ._auditor import RiskAuditor
from ._baselines import BM25Reranker, CrossEncoderReranker, MMRReranker, RiskPenaltyReranker
from ._batch import RankingBatch
from ._cli import build_pipeline
from ._embedding import FrozenEmbedder
from ._filter import RuleFilter, rule_filter, rule_filter_batch
from ._graph import EDGE_TYPES, GraphSmoother, build_tool_graph
from ._reranker import RiskAwareReranker
from ._retriever import DenseRetriever
from .metrics import best_under_risk_budget, make_ranking_scorer, ranking_report
from ._registry import (
    DEFAULT_PERMISSION_KEYWORDS,
    HINT_DEFAULTS,
    PERMISSION_CATEGORIES,
    UNKNOWN_RISK,
    ToolRegistry,
    derive_permissions,
    format_parameters,
)
from ._tools import load_tools

__version__ = "0.1.0"

__all__ = [
    "BM25Reranker",
    "CrossEncoderReranker",
    "DEFAULT_PERMISSION_KEYWORDS",
    "PERMISSION_CATEGORIES",
    "UNKNOWN_RISK",
    "DenseRetriever",
    "EDGE_TYPES",
    "HINT_DEFAULTS",
    "GraphSmoother",
    "FrozenEmbedder",
    "MMRReranker",
    "RankingBatch",
    "RiskAuditor",
    "RiskAwareReranker",
    "RiskPenaltyReranker",
    "RuleFilter",
    "ToolRegistry",
    "best_under_risk_budget",
    "build_pipeline",
    "build_tool_graph",
    "derive_permissions",
    "format_parameters",
    "load_tools",
    "make_ranking_scorer",
    "ranking_report",
    "rule_filter",
    "rule_filter_batch",
]
