"""Risk-aware reranking for agentic tool retrieval, as scikit-learn estimators.

An LLM agent's tool retriever returns the top-k tools for a query, and those k tools are
the actions the agent can take next. skriskrank reranks them so that relevant tools stay on
top while higher-risk tools (ordinal risk levels 1..5) are exposed less. It implements
*Risk-Aware Reranking for Agentic Tool Retrieval* (CIKM 2026): a frozen
sentence-transformers encoder, a dual-head reranker trained with skorch, a ToolGraph score
smoother and a greedy rule filter, each a scikit-learn estimator that composes in a
:class:`sklearn.pipeline.Pipeline`.
"""

import warnings

from ._auditor import RiskAuditor
from ._batch import RankingBatch
from ._embedding import FrozenEmbedder
from ._explain import explain
from ._filter import RuleFilter, rule_filter, rule_filter_batch
from ._graph import EDGE_TYPES, GraphSmoother, build_tool_graph
from ._need import NeedAwareFilter
from ._persist import ModelFileError, UntrustedTypeError, load, save
from ._pipeline import build_pipeline
from ._registry import (
    DEFAULT_PERMISSION_KEYWORDS,
    HINT_DEFAULTS,
    PERMISSION_CATEGORIES,
    UNKNOWN_RISK,
    ToolRegistry,
    derive_permissions,
    format_parameters,
)
from ._reranker import RiskAwareReranker
from ._retriever import DenseRetriever
from ._tools import load_tools
from .metrics import best_under_risk_budget, make_ranking_scorer, ranking_report

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_PERMISSION_KEYWORDS", "EDGE_TYPES", "HINT_DEFAULTS", "PERMISSION_CATEGORIES",
    "UNKNOWN_RISK", "DenseRetriever", "FrozenEmbedder", "GraphSmoother", "ModelFileError",
    "NeedAwareFilter", "RankingBatch", "RiskAuditor", "RiskAwareReranker", "RuleFilter",
    "ToolRegistry", "UntrustedTypeError", "best_under_risk_budget", "build_pipeline",
    "build_tool_graph", "derive_permissions", "explain", "format_parameters", "load",
    "load_tools", "make_ranking_scorer", "ranking_report", "rule_filter", "rule_filter_batch",
    "save",
]

#: Names that moved, kept importable from here for one release.
_MOVED = {name: "skriskrank.baselines" for name in (
    "BM25Reranker", "CrossEncoderReranker", "MMRReranker", "RiskPenaltyReranker")}

MSG_MOVED = (
    "skriskrank.{name} moved to {module}.{name}; the old name will be removed in the next "
    "release."
)


def __getattr__(name):
    if name in _MOVED:
        import importlib

        warnings.warn(MSG_MOVED.format(name=name, module=_MOVED[name]), FutureWarning,
                      stacklevel=2)
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module 'skriskrank' has no attribute {name!r}")
