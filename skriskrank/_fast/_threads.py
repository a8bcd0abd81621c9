"""The CPUs this process may use, and the thread pool that shares a scan."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from joblib import cpu_count as _joblib_cpu_count

_LOCK = threading.Lock()
_STATE: dict = {"pid": None, "cpus": 1, "pool": None, "size": 0}


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
