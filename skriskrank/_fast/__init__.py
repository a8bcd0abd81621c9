"""Compiled kernels: the one implementation of each hot operation.

Everything numba compiles lives here, one kernel per operation, with no numpy twin; the
tests compare each with a plain reference (``tests/_reference.py``). numba is a required
dependency, so there is no engine to select. Kernels compile on first call and are cached
on disk (``cache=True``).
"""

from ._filter import (
    ACCEPTED,
    BELOW_FLOOR,
    BROAD,
    HIGH_RISK,
    NOT_NEEDED,
    REDUNDANT,
    dot_error_bound,
    filter_scan,
)
from ._graph import spread
from ._hidden_layer import hidden_layer
from ._index import Int8CosineIndex
from ._threads import cpu_count, omp_num_threads, run_blocks, thread_pool
from ._topk import topk_rows

__all__ = ["ACCEPTED", "BELOW_FLOOR", "BROAD", "HIGH_RISK", "NOT_NEEDED", "REDUNDANT",
           "Int8CosineIndex", "cpu_count", "dot_error_bound", "filter_scan", "hidden_layer",
           "omp_num_threads", "run_blocks", "spread", "thread_pool", "topk_rows"]
