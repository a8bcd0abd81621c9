"""The CPUs this process may use, the thread pool that shares a scan, and block-parallel GEMMs."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from joblib import cpu_count as _joblib_cpu_count
from threadpoolctl import ThreadpoolController

_LOCK = threading.Lock()
_STATE: dict = {"pid": None, "cpus": 1, "pool": None, "size": 0}
_BLAS_LOCK = threading.Lock()  # held while run_blocks limits BLAS


def _this_process():
    # A fork inherits the parent's state but none of its threads: start afresh.
    if _STATE["pid"] != os.getpid():
        _STATE.update(pid=os.getpid(), cpus=max(1, int(_joblib_cpu_count())), pool=None,
                      size=0)


def cpu_count() -> int:
    """Joblib's count of the CPUs this process may use (cgroup quotas included), read once."""
    with _LOCK:
        _this_process()
        return _STATE["cpus"]


def omp_num_threads() -> int | None:
    """``OMP_NUM_THREADS`` when it is a positive integer, read live, else ``None``.

    joblib's process workers set it to their share of the cores and Dask's to 1; the
    runtimes that ignore it (the int8 scan's pool, ONNX Runtime) are sized by it here.
    """
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdecimal() and int(value) > 0 else None


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
    """``fn(*a)`` for each ``a`` in ``args``, on as many threads as BLAS has, one BLAS thread each.

    The limit is process-wide while it lasts, as in scikit-learn's KMeans; the lock keeps
    callers from interleaving it.
    """
    with _LOCK:  # one controller per process: it reads the loaded libraries once
        if "blas" not in _STATE:
            _STATE["blas"] = ThreadpoolController().select(user_api="blas")
        blas = _STATE["blas"]
    n = max([c.num_threads for c in blas.lib_controllers] or [1])
    if n < 2 or len(args) < 2:
        for a in args:
            fn(*a)
        return
    with _BLAS_LOCK, blas.limit(limits=1):
        list(thread_pool(n).map(lambda a: fn(*a), args))
