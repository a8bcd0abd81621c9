"""Loaders of the benchmarks, of the demo, and of users' own tool catalogues and queries."""

from ._demo import DEMO_DOMAINS, DemoData, load_demo
from ._loaders import (
    SEALTOOLS_SPLITS,
    ToolRetrievalDataset,
    load_queries_jsonl,
    load_registry_csv,
    load_sealtools,
    load_ultratool,
)

__all__ = ["DEMO_DOMAINS", "SEALTOOLS_SPLITS", "DemoData", "ToolRetrievalDataset", "load_demo",
           "load_queries_jsonl", "load_registry_csv", "load_sealtools", "load_ultratool"]
