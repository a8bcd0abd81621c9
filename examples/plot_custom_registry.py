"""
Your own catalogue: a ToolRegistry from a table
===============================================

Any catalogue works: a :class:`~skriskrank.ToolRegistry` is built from records or from a
table with the columns ``name``, ``description``, ``risk`` and ``permissions``. A tool
whose risk nobody has assessed yet keeps an empty cell: it is stored as
:data:`~skriskrank.UNKNOWN_RISK` and counted as high risk by the metrics, the reranker's
penalty and the filters, never as safe.

Run it as a script too::

    python examples/plot_custom_registry.py
"""

# %%
# A table with some unassessed tools
# ----------------------------------
# The demo catalogue's table stands in for yours; the risk of its shell tools is blanked
# out, as if nobody had audited them yet.
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pandas as pd  # noqa: E402

from skriskrank import UNKNOWN_RISK, ToolRegistry, build_pipeline, ranking_report  # noqa: E402
from skriskrank.datasets import load_demo  # noqa: E402

demo = load_demo()
table = demo.registry.to_frame()
unassessed = [name for name, domain in demo.tool_domains.items() if domain == "shell"]
table.loc[table["name"].isin(unassessed), "risk"] = pd.NA
registry = ToolRegistry.from_frame(table)
print(registry, "| unassessed:", int((~registry.risk_known).sum()), "tools, stored as",
      UNKNOWN_RISK)
table[table["name"].isin(unassessed)].head()

# %%
# Fit on labelled queries, rank held-out ones
# -------------------------------------------
# The first 400 demo queries train the pipeline; the remaining ones are held out.
pipe = build_pipeline(registry, n_candidates=50, risk_weight=0.2)
pipe.fit(demo.queries[:400], demo.relevant[:400])
held_out = demo.queries[400:]
top5 = pipe.predict(held_out)
for query, tools in list(zip(held_out, top5, strict=True))[:3]:
    levels = ["?" if r == UNKNOWN_RISK else int(r) for r in registry.risk_of(list(tools))]
    print(query, "->", list(zip(tools, levels, strict=True)))

# %%
# Held-out metrics. An unassessed tool in a list counts towards RVR@5 and SRR@5 as a
# risky one.
ranking_report(top5, demo.relevant[400:], registry, k=5, as_frame=True).transpose()
