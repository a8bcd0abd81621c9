"""Helpers shared by the performance benchmarks: timing, memory, environment, writers.

The machines these run on are shared and noisy, so every benchmark reports ratios of
implementations timed side by side in one process (best of a few interleaved repeats), or
growth rates over sizes, never absolute times alone.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"

#: The real MCP servers' ``tools/list`` answers harvested for the auditor (``docs/data.md``).
HARVEST = Path(__file__).resolve().parent / "data" / "mcp_harvest"


def harvested_files(directory=HARVEST) -> list[Path]:
    """The harvested servers' files (``<registry>__<server>.json``), in name order."""
    return sorted(Path(directory).glob("*__*.json"))


def best_of(fns: dict, repeats: int, min_seconds: float = 0.0) -> dict:
    """Best wall time of one call of each callable, the callables interleaved every repeat.

    Interleaving puts every implementation under the same background load, which is what
    makes their ratio meaningful on a shared machine. Within a repeat each callable runs
    until it has taken ``min_seconds`` (at least once), as ``timeit``'s autorange does: a
    0.1 s call is far more exposed to a burst of load on the shared cores than a 5 s one,
    whose single run already averages over it.
    """
    best = {name: float("inf") for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            spent = 0.0
            while True:
                t0 = time.perf_counter()
                fn()
                dt = time.perf_counter() - t0
                best[name] = min(best[name], dt)
                spent += dt
                if spent >= min_seconds:
                    break
    return best


def in_turns(n: int, names, block: int = 20):
    """``(name, i)`` for every name and every ``i < n``, the names taking turns by blocks of ``i``.

    By blocks of calls, not call by call: a runtime's threads keep spinning for a while after
    a call, and would slow another runtime's next call.
    """
    for chunk in np.array_split(np.arange(n), max(1, n // block)):
        for name in names:
            for i in chunk:
                yield name, int(i)


def percentiles(samples, qs=(50, 90, 99)) -> dict:
    arr = np.asarray(samples, dtype=float)
    return {f"p{q}": float(np.percentile(arr, q)) for q in qs} | {
        "mean": float(arr.mean()), "min": float(arr.min()), "max": float(arr.max())
    }


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def current_rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        return peak_rss_bytes()


class StageMeter:
    """Wall time, peak traced (numpy/Python) memory and RSS growth of named stages.

    ``tracemalloc`` sees numpy and Python allocations but not torch's own allocator, so the
    process-wide peak RSS is recorded as well.
    """

    def __init__(self):
        self.stages: dict[str, dict] = {}
        if not tracemalloc.is_tracing():
            tracemalloc.start()

    @contextlib.contextmanager
    def stage(self, name: str):
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        rss0 = current_rss_bytes()
        t0 = time.perf_counter()
        try:
            yield
        finally:
            wall = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1] - base
            self.stages[name] = {
                "seconds": wall,
                "peak_traced_bytes": int(max(peak, 0)),
                "rss_after_bytes": current_rss_bytes(),
                "rss_growth_bytes": current_rss_bytes() - rss0,
                "peak_rss_bytes": peak_rss_bytes(),
            }


def environment() -> dict:
    """Machine and library facts that a reader needs to judge the numbers."""
    info = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
    }
    with contextlib.suppress(OSError):
        info["load_average"] = os.getloadavg()
    with contextlib.suppress(ImportError):
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
        # The instructions the int8 and bfloat16 backends' speed depends on.
        caps = getattr(torch.cpu, "get_capabilities", dict)()
        info["cpu"] = {k: caps[k] for k in ("cpu_name", "avx2", "avx512_f", "avx512_vnni",
                                            "avx_vnni", "avx512_bf16", "amx_int8") if k in caps}
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_info

        info["threadpools"] = [
            {k: p.get(k) for k in ("user_api", "internal_api", "num_threads", "version")}
            for p in threadpool_info()
        ]
    return info


def machine(env) -> str:
    """The CPU the figures hold for: int8's and bfloat16's speed depend on its instructions."""
    cpu = env.get("cpu")
    if not cpu:
        return ""
    keys = ("avx2", "avx512_f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_int8")
    has, lacks = ([k for k in keys if bool(cpu.get(k)) is want] for want in (True, False))
    return (f"Measured on {env.get('cpu_count')} cores of an {cpu.get('cpu_name', 'unknown CPU')}"
            f" (with: {', '.join(has) or 'none'}; without: {', '.join(lacks) or 'none'}).")


def measured_backends() -> tuple:
    """The encoder backends worth measuring on this CPU: every one but ``torch-bf16`` where
    the CPU lacks bfloat16 instructions (PyTorch would emulate them: that measures the
    emulation, not the backend, and takes hours)."""
    from skriskrank._encoder import BACKENDS
    from skriskrank._onnx import native_bf16

    return tuple(b for b in BACKENDS if b != "torch-bf16" or native_bf16())


def write_json(out: Path, name: str, payload: dict) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, default=_jsonable) + "\n")
    return path


def write_md(out: Path, name: str, text: str) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.md"
    path.write_text(text if text.endswith("\n") else text + "\n")
    return path


def md_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(c):
    if isinstance(c, float):
        return f"{c:.3g}" if abs(c) < 1000 else f"{c:,.0f}"
    return str(c)


def _jsonable(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def mib(n_bytes) -> float:
    return float(n_bytes) / 2**20


# --------------------------------------------------------------------------------------------
# Synthetic registries: clustered embeddings, names, descriptions, risk and permissions
# --------------------------------------------------------------------------------------------
#: UltraTool's risk distribution (L1..L5 of 2,032 tools).
RISK_P = np.array([958, 799, 155, 115, 5], dtype=float) / 2032
#: Share of tools holding 1, 2 or 3 permission categories (UltraTool's derived counts are
#: about 94% zero).
PERMISSION_P = (0.94, 0.045, 0.012, 0.003)
_VERBS = ("get", "list", "create", "update", "delete", "send", "search", "run", "read", "sync")
_NOUNS = ("file", "email", "invoice", "event", "record", "ticket", "user", "log", "order", "vm")


def unit_rows(x):
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def synthetic_registry(n_tools, dim=384, *, cluster_size=16, spread=0.45, seed=0):
    """A ToolRegistry with clustered unit embeddings, and the embeddings.

    Tools come in clusters of about ``cluster_size`` around random centres; with the default
    spread, tools of one cluster have cosines around 0.8 and tools of different clusters
    around 0, so the number of semantic edges grows linearly with the number of tools, as in
    a real registry where a tool has a handful of near-duplicates.
    """
    from skriskrank import PERMISSION_CATEGORIES, ToolRegistry

    rng = np.random.default_rng(seed)
    n_clusters = max(1, n_tools // cluster_size)
    centres = unit_rows(rng.normal(size=(n_clusters, dim)))
    cluster = rng.integers(0, n_clusters, size=n_tools)
    noise = rng.normal(size=(n_tools, dim)).astype(np.float32) * (spread / np.sqrt(dim))
    emb = unit_rows(centres[cluster] + noise)
    risk = rng.choice(np.arange(1, 6), size=n_tools, p=RISK_P)
    n_perm = rng.choice(len(PERMISSION_P), size=n_tools, p=PERMISSION_P)
    cats = np.array(PERMISSION_CATEGORIES, dtype=object)
    perms = [frozenset(rng.choice(cats, size=k, replace=False)) if k else frozenset()
             for k in n_perm]
    verbs = rng.integers(0, len(_VERBS), size=n_tools)
    nouns = rng.integers(0, len(_NOUNS), size=n_tools)
    names = [f"{_VERBS[v]}_{_NOUNS[n]}_{i}"
             for i, (v, n) in enumerate(zip(verbs, nouns, strict=True))]
    descriptions = [
        f"{_VERBS[v].capitalize()} a {_NOUNS[n]} in service {c}"
        for v, n, c in zip(verbs, nouns, cluster, strict=True)
    ]
    reg = ToolRegistry(names, descriptions, risk.tolist(), perms)
    return reg, emb, cluster


def synthetic_queries(tool_emb, cluster, n_queries, *, seed=1, noise=0.6, max_gold=3):
    """Query embeddings near 1..max_gold gold tools of one cluster, and the gold names idx."""
    rng = np.random.default_rng(seed)
    n_tools, dim = tool_emb.shape
    members: dict[int, np.ndarray] = {}
    order = np.argsort(cluster, kind="stable")
    bounds = np.searchsorted(cluster[order], np.arange(cluster.max() + 2))
    q = np.empty((n_queries, dim), dtype=np.float32)
    gold = []
    for i in range(n_queries):
        first = int(rng.integers(0, n_tools))
        c = int(cluster[first])
        if c not in members:
            members[c] = order[bounds[c]: bounds[c + 1]]
        pool = members[c]
        k = int(min(len(pool), rng.integers(1, max_gold + 1)))
        g = np.unique(np.concatenate([[first], rng.choice(pool, size=k, replace=False)]))[:k]
        gold.append(g)
        q[i] = tool_emb[g].mean(axis=0) + rng.normal(size=dim) * (noise / np.sqrt(dim))
    return unit_rows(q), gold


def warm_compiled_kernels(dim=384):
    """Load (or, on a fresh checkout, compile) every numba kernel outside the timed stages.

    Fits and predicts the scale benchmark's pipeline once on a tiny synthetic registry, so
    the top-k, scoring, smoothing and rule-filter kernels are each called with the dtypes
    the real runs use.
    """
    from benchmarks.bench_scale import make_steps
    from skriskrank import RankingBatch
    from skriskrank._fast import Int8CosineIndex

    reg, emb, cluster = synthetic_registry(300, dim, seed=99)
    q, gold = synthetic_queries(emb, cluster, 40, seed=98)
    batch = RankingBatch.full_pool(reg, q, emb)
    y = [set(reg.names[g]) for g in gold]
    for name, step in make_steps(1, 0):
        step.fit(batch, y if name in ("rerank", "smooth") else None)
        batch = step.transform(batch)
    batch.ranked_names(5)
    Int8CosineIndex(emb).top(q[:1], 10)
