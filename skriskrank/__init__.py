"""Risk-aware reranking for agentic tool retrieval, as scikit-learn estimators.

An LLM agent's tool retriever returns the top-k tools for a query, and those k tools are
the actions the agent can take next. skriskrank reranks them so that relevant tools stay on
top while higher-risk tools (ordinal risk levels 1..5) are exposed less. It implements
*Risk-Aware Reranking for Agentic Tool Retrieval* (CIKM 2026): a frozen
sentence-transformers encoder, a dual-head reranker trained with skorch, a ToolGraph score
smoother and a greedy rule filter, each a scikit-learn estimator that composes in a
:class:`sklearn.pipeline.Pipeline`.
"""

import importlib

#: Where each public name lives. The modules load on first use (PEP 562), so that importing
#: the package, and the command line's --help, do not pay for scikit-learn, torch and numba.
_EXPORTS = {
    "._auditor": ["RiskAuditor"],
    "._batch": ["RankingBatch"],
    "._embedding": ["FrozenEmbedder"],
    "._explain": ["explain"],
    "._filter": ["RuleFilter", "rule_filter"],
    "._graph": ["EDGE_TYPES", "GraphSmoother", "build_tool_graph"],
    "._hints": ["HINT_DEFAULTS", "hint_bounds"],
    "._need": ["NeedAwareFilter"],
    "._permissions": ["DEFAULT_PERMISSION_KEYWORDS", "PERMISSION_CATEGORIES",
                      "derive_permissions"],
    "._persist": ["ModelFileError", "UntrustedTypeError", "load", "save"],
    "._poisoning": ["POISONING_FLAGS", "scan_tools", "schema_text"],
    "._pretrained": ["pretrained_pipeline"],
    "._pipeline": ["build_pipeline"],
    "._registry": ["ToolRegistry"],
    "._reranker": ["RiskAwareReranker"],
    "._retriever": ["DenseRetriever"],
    "._rubric": ["UNKNOWN_RISK"],
    "._tool_text": ["brief_text", "format_parameters"],
    "._tools": ["load_tools"],
    ".metrics": ["best_under_risk_budget", "make_ranking_scorer", "ranking_report"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
_SUBPACKAGES = {"baselines", "datasets", "gateway", "metrics"}


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_WHERE, *_SUBPACKAGES})


__version__ = "0.1.0"

__all__ = sorted(_WHERE)
