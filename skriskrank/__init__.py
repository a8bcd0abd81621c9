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
from ._batch import RankingBatch
from ._embedding import FrozenEmbedder
from ._explain import explain
from ._filter import RuleFilter, rule_filter
from ._graph import EDGE_TYPES, GraphSmoother, build_tool_graph
from ._hints import HINT_DEFAULTS
from ._need import NeedAwareFilter
from ._permissions import DEFAULT_PERMISSION_KEYWORDS, PERMISSION_CATEGORIES, derive_permissions
from ._persist import ModelFileError, UntrustedTypeError, load, save
from ._pipeline import build_pipeline, catalogue_pipeline
from ._registry import ToolRegistry
from ._reranker import RiskAwareReranker
from ._retriever import DenseRetriever
from ._rubric import UNKNOWN_RISK
from ._tool_text import format_parameters
from ._tools import load_tools
from .metrics import best_under_risk_budget, make_ranking_scorer, ranking_report

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_PERMISSION_KEYWORDS", "EDGE_TYPES", "HINT_DEFAULTS", "PERMISSION_CATEGORIES",
    "UNKNOWN_RISK", "DenseRetriever", "FrozenEmbedder", "GraphSmoother", "ModelFileError",
    "NeedAwareFilter", "RankingBatch", "RiskAuditor", "RiskAwareReranker", "RuleFilter",
    "ToolRegistry", "UntrustedTypeError", "best_under_risk_budget", "build_pipeline",
    "build_tool_graph", "catalogue_pipeline", "derive_permissions", "explain",
    "format_parameters", "load", "load_tools", "make_ranking_scorer", "ranking_report",
    "rule_filter", "save",
]
