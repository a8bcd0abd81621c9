"""
UltraTool: choose lambda by cross-validation and save the pipeline
==================================================================

Fit the paper's pipeline on the UltraTool benchmark, choose ``risk_weight`` (lambda) by
cross-validation under a risk budget, and save the result. It needs the UltraTool files
(with the paper's risk labels), so the documentation shows it without running it::

    python examples/ultratool_grid_search.py ../shared/data/ultratool

The grid over ``risk_weight`` trains the reranker once per fold: lambda acts at inference
only, and the embeddings are encoded once for the whole search.
"""

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import joblib  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

from skriskrank import (  # noqa: E402
    DenseRetriever,
    FrozenEmbedder,
    GraphSmoother,
    RiskAwareReranker,
    RuleFilter,
    best_under_risk_budget,
    make_ranking_scorer,
)
from skriskrank.datasets import load_ultratool  # noqa: E402

ds = load_ultratool(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/ultratool")
pipe = Pipeline([
    ("embed", FrozenEmbedder(ds.registry)),
    ("retrieve", DenseRetriever(n_candidates=100)),
    # memory caches the trained heads: the other values of lambda reuse each fold's fit.
    ("rerank", RiskAwareReranker(risk_weight=0.1, random_state=0, memory="cache/")),
    ("smooth", GraphSmoother(alpha=0.2)),
    ("filter", RuleFilter(k=5)),
])
search = GridSearchCV(
    pipe,
    {"rerank__risk_weight": [0.0, 0.05, 0.1, 0.2]},
    scoring={"ndcg": make_ranking_scorer("ndcg", k=5),
             "rvr": make_ranking_scorer("rvr", k=5, registry=ds.registry)},
    # The best NDCG@5 whose RVR@5 stays within budget.
    refit=best_under_risk_budget(max_rvr=0.10),
    cv=KFold(5, shuffle=True, random_state=0),
)
search.fit(ds.queries, ds.relevant)
cv = search.cv_results_
for params, ndcg, rvr in zip(cv["params"], cv["mean_test_ndcg"], cv["mean_test_rvr"], strict=True):
    print(f"{params}  NDCG@5={ndcg:.3f}  RVR@5={-rvr:.3f}")
print("chosen:", search.best_params_)
print(search.best_estimator_.predict(["delete yesterday's log files and email me a summary"]))
joblib.dump(search.best_estimator_, "pipe.joblib")  # a pickle: load only trusted files
