"""
Why was a tool offered, or held back? ``explain``
=================================================

:func:`~skriskrank.explain` runs a fitted pipeline on a request step by step and returns
one row per candidate that reached the last step: where it ranks (if it made the list),
the reason in words, and each part of its score: the first-stage cosine, the reranker's
calibrated relevance ``p_rel`` and the risk penalty it subtracted, and the graph
smoothing's change. Its top ``k`` equals ``predict``.
"""

# %%
# Fit a pipeline
# --------------
# The paper's pipeline, fitted on the demo catalogue's requests, with the need-aware
# filter at the end: it admits a tool of risk level 3 or more only when it estimates that
# the request needs it.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skriskrank import NeedAwareFilter, build_pipeline, explain
from skriskrank.datasets import load_demo

demo = load_demo()
pipe = build_pipeline(demo.registry, n_candidates=100, risk_weight=0.1, random_state=0)
pipe.set_params(filter=NeedAwareFilter(k=5))
pipe.fit(demo.queries, demo.relevant)

# %%
# The explanation of one request
# ------------------------------
# A request that sounds destructive but only needs to look: the candidates of level 3
# or more rank high on relevance, and the filter has to decide about each.
request = "Check how much disk space is left before I delete anything"
table = explain(pipe, [request])
shown = ["tool", "rank", "reason", "risk", "cosine", "p_rel", "risk_penalty", "smoothing",
         "score"]
table[shown].head(12).round(3)

# %%
# The rows with a ``rank`` are the list the agent gets, and they equal ``predict``:
print(pipe.predict([request])[0].tolist())
print(table.loc[table["rank"].notna(), "tool"].tolist())

# %%
# The score, part by part
# -----------------------
# For the first twelve candidates: the calibrated relevance ``p_rel`` (what the tool is
# worth to this request), minus ``risk_weight`` times the risk penalty, plus the graph
# smoothing's change. Offered tools are drawn solid, held-back ones hatched.
top = table.head(12).iloc[::-1]
labels = [f"{t} (r{r})" for t, r in zip(top["tool"], top["risk"].astype("string"),
                                         strict=True)]
offered = top["rank"].notna().to_numpy()
y = np.arange(len(top))
fig, ax = plt.subplots(figsize=(7.5, 4.8))
parts = [("p_rel", "#2c7fb8", top["p_rel"]),
         ("- risk penalty", "#d7301f", -top["risk_penalty"]),
         ("smoothing", "#7a7a7a", top["smoothing"])]
for name, color, values in parts:
    values = values.to_numpy(dtype=float)
    for solid in (True, False):
        mask = offered == solid
        ax.barh(y[mask], values[mask], color=color if solid else "white",
                edgecolor=color, hatch=None if solid else "///",
                label=name if solid else None, height=0.6)
ax.axvline(0, color="black", linewidth=0.8)
ax.set_yticks(y, labels, fontsize=8)
ax.set(xlabel="contribution to the score",
       title="explain(): why each candidate ranks where it does")
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()

# %%
# Reasons across many requests
# ----------------------------
# ``explain`` takes a list of requests. Counting the filter's reasons over the first 100
# demo requests shows how often it defers a tool for risk, breadth of permissions or
# redundancy, and how often a deferred tool still fills a list.
many = explain(pipe, demo.queries[:100])
words = many["reason"].str.replace(r"\(.*\)|, cosine.*|near-duplicate of \S+", "",
                                   regex=True).str.strip()
pd.Series(words).value_counts().rename("candidates").to_frame()

plt.show()
