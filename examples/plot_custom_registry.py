"""Rerank your own tool catalogue: build a ToolRegistry, fit on labelled queries, inspect.

    python examples/custom_registry.py
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from skriskrank import ToolRegistry, ranking_report  # noqa: E402, I001
from skriskrank import build_pipeline  # noqa: E402
from skriskrank.datasets import load_demo  # noqa: E402

# Any catalogue works; risk=None marks an unaudited tool, which is treated as high risk.
demo = load_demo()
registry = ToolRegistry.from_frame(demo.registry.to_frame())
print(registry, "risk levels:", sorted(set(registry.risk.tolist())))

pipe = build_pipeline(registry, n_candidates=50, risk_weight=0.2)
pipe.fit(demo.queries[:400], demo.relevant[:400])
held_out = demo.queries[400:]
top5 = pipe.predict(held_out)
for query, tools in list(zip(held_out, top5, strict=True))[:3]:
    print(query, "->", [(t, int(registry.risk_of([t])[0])) for t in tools])
print(ranking_report(top5, demo.relevant[400:], registry, k=5, as_frame=True).T)
