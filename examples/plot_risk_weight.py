"""
Choosing ``risk_weight`` with GridSearchCV and a risk budget
============================================================

The reranker scores a candidate tool by ``p_rel - risk_weight * penalty``: the
calibrated probability that the tool is one the request needs, minus a penalty of 0 for
risk levels 1-2, 0.5 for level 3 and 1 for levels 4-5 (and for unknown risk). A larger
``risk_weight`` (the paper's lambda) exposes fewer risky tools and costs relevance.

This example picks lambda the scikit-learn way: a ``GridSearchCV`` scored by two
ranking metrics, NDCG@5 and RVR@5, whose ``refit`` rule,
:func:`~skriskrank.metrics.best_under_risk_budget`, takes the best NDCG@5 among the
values whose mean RVR@5 stays within a budget.
"""

# %%
# The search
# ----------
# :func:`~skriskrank.metrics.make_ranking_scorer` turns a metric into a scorer that calls
# ``predict`` (the top-k tool names per query) and compares it with ``y``, the gold tool
# sets. RVR is lower-is-better, so its scorer returns -RVR, as scikit-learn's error
# scorers do.
#
# ``risk_weight`` acts at prediction time only, so the candidates of a grid over it
# differ in nothing that training sees. With ``memory``, the reranker caches its trained
# heads under a key of the training parameters and data: each fold trains once, and the
# other values of lambda reuse those heads.
import shutil
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import Pipeline

from skriskrank import DenseRetriever, FrozenEmbedder, RiskAwareReranker
from skriskrank.datasets import load_demo
from skriskrank.metrics import best_under_risk_budget, make_ranking_scorer, ranking_report

demo = load_demo()
data = demo.as_dataset()
train_idx, test_idx = train_test_split(np.arange(len(data)), test_size=0.3, random_state=0)
train, test = data.subset(train_idx), data.subset(test_idx)

cache = tempfile.mkdtemp(prefix="skriskrank-heads-")
pipe = Pipeline([
    ("embed", FrozenEmbedder(demo.registry)),
    ("retrieve", DenseRetriever(n_candidates=100)),
    ("rerank", RiskAwareReranker(random_state=0, memory=cache)),
])
risk_weights = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0]
max_rvr = 0.25  # the risk budget: at most a quarter of the offered tools at level >= 3
search = GridSearchCV(
    pipe,
    {"rerank__risk_weight": risk_weights},
    scoring={"ndcg": make_ranking_scorer("ndcg", k=5),
             "rvr": make_ranking_scorer("rvr", k=5, registry=demo.registry)},
    refit=best_under_risk_budget(max_rvr=max_rvr),
    cv=KFold(3, shuffle=True, random_state=0),
)
search.fit(train.queries, train.relevant)
print("chosen:", search.best_params_)

# %%
# The cross-validated trade-off
# -----------------------------
# ``cv_results_`` holds ``mean_test_ndcg`` and ``mean_test_rvr`` (negated) per value of
# lambda.
cv = search.cv_results_
results = pd.DataFrame({
    "risk_weight": risk_weights,
    "NDCG@5": cv["mean_test_ndcg"],
    "NDCG@5 std": cv["std_test_ndcg"],
    "RVR@5": -cv["mean_test_rvr"],
    "RVR@5 std": cv["std_test_rvr"],
    "within budget": -cv["mean_test_rvr"] <= max_rvr,
})
results.round(3)

# %%
# Each point is one value of lambda (mean over the three folds, with its standard
# deviation); the shaded band is the budget, and the ringed point is the value the refit
# rule chose: the highest NDCG@5 inside the band. Had no value met the budget, the rule
# would have refitted the safest one instead of failing.
best = search.best_index_
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.axvspan(0, max_rvr, color="#d9f0d3", label=f"budget: RVR@5 <= {max_rvr}")
ax.errorbar(results["RVR@5"], results["NDCG@5"], xerr=results["RVR@5 std"],
            yerr=results["NDCG@5 std"], fmt="o-", color="#2c7fb8", capsize=3)
for _, row in results.iterrows():
    ax.annotate(f"λ={row['risk_weight']:g}", (row["RVR@5"], row["NDCG@5"]),
                textcoords="offset points", xytext=(6, 6), fontsize=8)
ax.scatter(results["RVR@5"][best], results["NDCG@5"][best], s=250, facecolors="none",
           edgecolors="#d7301f", linewidths=2, label="chosen by the refit rule", zorder=3)
ax.set(xlabel="RVR@5 (cross-validated, lower is safer)", ylabel="NDCG@5 (cross-validated)",
       title="risk_weight: relevance against risk exposure")
ax.set_xlim(0, None)
ax.legend(loc="lower right")
fig.tight_layout()

# %%
# The refitted pipeline on held-out queries
# -----------------------------------------
# ``best_estimator_`` is the pipeline refitted on all training queries with the chosen
# lambda. On queries the search never saw, its exposure should sit near the budget too.
held_out = search.best_estimator_.predict(test.queries)
report = ranking_report(held_out, test.relevant, demo.registry, k=5)
print({key: round(report[key], 3) for key in ("ndcg@5", "rvr@5", "needrisk_hit@5")})

shutil.rmtree(cache, ignore_errors=True)  # the cached heads of this search
plt.show()
