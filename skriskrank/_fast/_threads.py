"""The CPUs this process may use, the thread pool that shares a scan, and block-parallel GEMMs."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from joblib import cpu_count as _joblib_cpu_count
from threadpoolctl import ThreadpoolController

_LOCK = threading.Lock()
_STATE: dict = {"pid": None, "cpus": 1, "pool": None, "size": 0}
#: Held while run_blocks limits BLAS, so that two callers do not interleave the limit.
_BLAS_LOCK = threading.Lock()
_BLAS: list = []  # the one ThreadpoolController (it reads the loaded libraries once)


def _this_process():
    # A fork inherits the parent's state but none of its threads: start afresh.
    if _STATE["pid"] != os.getpid():
        _STATE.update(pid=os.getpid(), cpus=max(1, int(_joblib_cpu_count())), pool=None,
                      size=0)


def cpu_count() -> int:
    """Joblib's count of the CPUs this process may use (cgroup quotas included).

    Read once per process: it reads cgroup files, 60 us or more a call, which an online
    call at 100k tools measured as a tenth of its retrieval step.
    """
    with _LOCK:
        _this_process()
        return _STATE["cpus"]


def thread_pool(n_workers: int) -> ThreadPoolExecutor:
    """A pool of this process with at least ``n_workers`` threads (kernels release the GIL)."""
    with _LOCK:
        _this_process()
        if _STATE["size"] < n_workers:
            if _STATE["pool"] is not None:
                # A larger request replaces the pool; its threads end once idle.
                _STATE["pool"].shutdown(wait=False)
            _STATE.update(size=n_workers, pool=ThreadPoolExecutor(
                n_workers, thread_name_prefix="skriskrank"))
        return _STATE["pool"]


def run_blocks(fn, args) -> None:
    """``fn(*a)`` for each ``a`` in ``args``, spread over BLAS's threads, one BLAS thread each.

    A full-pool scoring is a series of thin GEMMs, each followed by a compiled pass over its
    output. Left to BLAS's own threads, 1,000 x 2,032 pairs at d = 384 took 0.09 s in one
    minute and 0.20 s in the next on a shared 2-core machine (more than on one thread,
    0.14 s); spread over the same number of threads, a block each, they took 0.10-0.13 s
    throughout, measured side by side in one process. The threads are as many as BLAS
    has, so a limit set by the user or a joblib worker holds. The limit to one BLAS thread
    is process-wide while it lasts, as in scikit-learn's KMeans; a lock keeps two callers
    from interleaving it.
    """
    with _LOCK:
        if not _BLAS:
            _BLAS.append(ThreadpoolController().select(user_api="blas"))
    n = max([c.num_threads for c in _BLAS[0].lib_controllers] or [1])
    if n < 2 or len(args) < 2:
        for a in args:
            fn(*a)
        return
    with _BLAS_LOCK, _BLAS[0].limit(limits=1):
        list(thread_pool(n).map(lambda a: fn(*a), args))
