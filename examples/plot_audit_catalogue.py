"""
Auditing a tool catalogue that nobody has labelled
==================================================

An agent arrives with the ``tools/list`` results of its MCP servers (or the tool lists
it passes to the OpenAI or Anthropic APIs) and no risk levels. skriskrank treats a tool
without a level as high risk, so on day one the rule filter would see every tool as
risky. :func:`~skriskrank.load_tools` reads such catalogues, and
:class:`~skriskrank.RiskAuditor` grades each tool on the paper's five-level rubric,
offline.

Here the demo catalogue plays an MCP server's catalogue: its tools are written out as a
``tools/list`` result with names and descriptions only, graded by the packaged auditor,
and the grades are compared with the demo's hand-assigned levels, which the auditor
never saw (it was fitted on the UltraTool and Seal-Tools labels).
"""

# %%
# An unlabelled catalogue
# -----------------------
# :func:`~skriskrank.load_tools` recognises the format from its shape: an MCP
# ``tools/list`` result, OpenAI Chat Completions or Responses tools, or Anthropic tools,
# from a JSON file or the parsed JSON. Every tool of this one has unknown risk.
import json
import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skriskrank import UNKNOWN_RISK, RiskAuditor, load_tools
from skriskrank.datasets import load_demo

demo = load_demo()
listing = {"tools": [
    {"name": name, "description": description,
     "inputSchema": {"type": "object", "properties": {}}}
    for name, description in zip(demo.registry.names, demo.registry.descriptions, strict=True)
]}
path = Path(tempfile.mkdtemp(prefix="skriskrank-audit-")) / "server.json"
path.write_text(json.dumps(listing), encoding="utf-8")

tools = load_tools(path)
print(tools)
print("tools with a known level:", int(tools.risk_known.sum()),
      "| stored level of an unlabelled tool:", UNKNOWN_RISK)

# %%
# Grade the tools
# ---------------
# :meth:`RiskAuditor.pretrained() <skriskrank.RiskAuditor.pretrained>` loads weights that
# ship in the package. ``predict`` is conservative: it returns the lowest level ``L``
# whose predicted probability ``P(level <= L)`` reaches ``coverage`` (0.93 by default,
# chosen by cross-validation on the paper's labels so that 9 in 10 of their tools of
# level 3 or more are graded 3 or more), so an unsure grade errs towards the higher
# level. ``audit`` adds the median level, the probability of level 3 or more, and which
# tools a person should review. The riskiest tools by that probability:
auditor = RiskAuditor.pretrained()
audit = auditor.audit(tools)
audit.sort_values("p_risky", ascending=False).head(12)[
    ["name", "predicted", "median", "p_risky", "needs_review", "reason"]].round(2)

# %%
# Against the hand-assigned levels
# --------------------------------
# Rows are the demo's levels, columns the auditor's. The conservative rule moves mass to
# the right of the diagonal (over-grading) on purpose; the median level (``coverage=0.5``)
# is closer to the diagonal but misses more risky tools.
true = demo.registry.risk
median = audit["median"].to_numpy()
conservative = audit["predicted"].to_numpy()
levels = [1, 2, 3, 4, 5]


def confusion(predicted):
    """Counts of (true level, predicted level) over the catalogue."""
    return pd.crosstab(pd.Series(true, name="true level"),
                       pd.Series(predicted, name="predicted level")).reindex(
        index=levels, columns=levels, fill_value=0)


fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
for ax, (title, predicted) in zip(axes, [("median level (coverage 0.5)", median),
                                         (f"conservative (coverage {auditor.coverage})",
                                          conservative)], strict=True):
    table = confusion(predicted)
    ax.imshow(table.to_numpy(), cmap="Blues")
    for (r, c), n in np.ndenumerate(table.to_numpy()):
        ax.text(c, r, n, ha="center", va="center", color="white" if n > 25 else "black")
    ax.set(xticks=range(5), xticklabels=levels, yticks=range(5), yticklabels=levels,
           xlabel="predicted level", title=title)
axes[0].set_ylabel("true level (demo labels)")
fig.suptitle("RiskAuditor.pretrained() on the demo catalogue (202 tools)")
fig.tight_layout()

# %%
# The numbers that matter for the filter: how many truly risky tools (level 3 or more)
# are graded risky, how many safe ones are flagged, and the quadratically weighted kappa
# (``score``) of each rule. The demo catalogue is unlike the auditor's training data, and
# it shows: the conservative rule catches fewer risky tools here than the 9 in 10 it was
# tuned for, and flags more safe ones. This is the transfer problem the benchmark
# measures between UltraTool and Seal-Tools.
rows = {}
for name, predicted in [("median", median), ("conservative", conservative)]:
    rows[name] = {
        "recall of level >= 3": np.mean(predicted[true >= 3] >= 3),
        "level 1 flagged >= 3": np.mean(predicted[true == 1] >= 3),
        "level 2 flagged >= 3": np.mean(predicted[true == 2] >= 3),
        "exact": np.mean(predicted == true),
    }
rows["median"]["QWK"] = RiskAuditor.pretrained(coverage=0.5).score(tools, true)
rows["conservative"]["QWK"] = auditor.score(tools, true)
pd.DataFrame(rows).T.round(3)

# %%
# Use the grades
# --------------
# :meth:`~skriskrank.ToolRegistry.with_risk` gives the registry the predicted levels and
# remembers where they came from, so a pipeline built on it ranks with the auditor's
# levels while ``risk_source`` still tells predicted from declared ones. The same audit
# runs from the command line: ``skriskrank audit server.json --out audit.csv``.
graded = tools.with_risk(conservative, source="predicted")
pd.Series(graded.risk_source).value_counts()

# %%
# Treat predicted levels as a first pass for a person to review (the ``needs_review``
# column), not as labels: the auditor's benchmark in ``benchmarks/results/audit.md``
# shows how well it transfers between catalogues, and how often it does not.
shutil.rmtree(path.parent, ignore_errors=True)
plt.show()
