"""Benchmark, demo and user data loaders.

:func:`load_ultratool` and :func:`load_sealtools` read the UltraTool and Seal-Tools
benchmarks, with the paper's released risk labels, from a directory laid out like the
upstream release; :func:`load_registry_csv` and :func:`load_queries_jsonl` read a user's own
tool catalogue and queries; :func:`load_demo` reads the small catalogue that ships with the
package. The query loaders return a :class:`ToolRetrievalDataset`, whose ``queries`` and
``relevant`` are the ``X`` and ``y`` of a skriskrank pipeline.
"""

from ._demo import DEMO_DOMAINS, DemoData, load_demo
from ._loaders import (
    SEALTOOLS_SPLITS,
    ToolRetrievalDataset,
    load_queries_jsonl,
    load_registry_csv,
    load_sealtools,
    load_ultratool,
)

__all__ = [
    "DEMO_DOMAINS", "SEALTOOLS_SPLITS", "DemoData", "ToolRetrievalDataset", "load_demo",
    "load_queries_jsonl", "load_registry_csv", "load_sealtools", "load_ultratool",
]
