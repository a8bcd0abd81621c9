"""Benchmark: the encoder's backends, PyTorch against ONNX Runtime, side by side in one run.

- single-query latency: 300 distinct short requests, each encoded by each backend in turn
  (no cache), p50 and p99;
- throughput: 1,000 and 10,000 tool texts of real length (Seal-Tools tools with their
  parameters, ``name: description Parameters: ...``), best of two interleaved runs;
- agreement: the cosine of the two backends' embeddings of every text;
- quality: dense retrieval NDCG@5 on UltraTool (1,000 queries over 2,032 tools) and on
  Seal-Tools ``test_in_domain`` (700 over 4,076) with each backend.

Run ``python -m benchmarks.bench_encoder --data ../shared/data`` (``--quick``: smaller).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks._common import RESULTS, environment, md_table, write_json, write_md

BACKENDS = ("torch", "onnx")


def _texts(data, n):
    tools = [json.loads(line) for line in open(Path(data) / "sealtools" / "tool.jsonl")]
    texts = []
    for t in tools:
        params = "; ".join(f"{k} ({v.get('description', '')})"
                           for k, v in (t.get("parameters") or {}).items())
        texts.append(f"{t['api_name']}: {t['api_description']} Parameters: {params}")
    rng = np.random.default_rng(0)
    return [texts[i % len(texts)] + ("" if i < len(texts) else f" ({i})")
            for i in rng.permutation(max(n, len(texts)))[:n]]


def _encoder(backend):
    from skriskrank._encoder import load_model, resolve_model

    return load_model(resolve_model(None)[1], "cpu", "default", backend=backend)


def _encode(model, texts):
    from skriskrank._encoder import _forward

    return _forward(model, texts, 64, False)


def run(data, *, n_queries, sizes):
    from skriskrank.datasets import load_sealtools, load_ultratool
    from skriskrank.metrics import ndcg_at_k

    models = {b: _encoder(b) for b in BACKENDS}
    queries = [f"{v} {o} #{i}" for i, (v, o) in enumerate(
        (v, o) for v in ("delete", "archive", "email me", "translate", "summarise", "back up")
        for o in ("the old log files", "last week's invoices", "the sales report",
                  "all unread messages", "the meeting notes") * 10)][:n_queries]
    for m in models.values():
        _encode(m, queries[:5])
    lat = {b: [] for b in BACKENDS}
    for q in queries:
        for b, m in models.items():
            t0 = time.perf_counter()
            _encode(m, [q])
            lat[b].append(1e3 * (time.perf_counter() - t0))
    result = {"latency_ms": {b: {"p50": float(np.median(v)), "p99": float(np.percentile(v, 99))}
                             for b, v in lat.items()}, "throughput": {}}
    for n in sizes:
        texts = _texts(data, n)
        best, emb = {b: float("inf") for b in BACKENDS}, {}
        for _ in range(2):
            for b, m in models.items():
                t0 = time.perf_counter()
                emb[b] = _encode(m, texts)
                best[b] = min(best[b], time.perf_counter() - t0)
        cos = (emb["torch"] * emb["onnx"]).sum(axis=1)
        result["throughput"][n] = {**{f"{b}_s": best[b] for b in BACKENDS},
                                   "median_chars": float(np.median([len(t) for t in texts])),
                                   "cosine_min": float(cos.min()),
                                   "cosine_mean": float(cos.mean())}
    quality = {}
    for name, ds in (("UltraTool", load_ultratool(Path(data) / "ultratool")),
                     ("Seal-Tools", load_sealtools(Path(data) / "sealtools", "test_in_domain"))):
        quality[name] = {}
        for b, m in models.items():
            tools, q = _encode(m, ds.registry.texts), _encode(m, ds.queries)
            top = np.argsort(-(q @ tools.T), axis=1, kind="stable")[:, :5]
            quality[name][b] = ndcg_at_k(ds.registry.names[top], ds.relevant, k=5)
    result["dense_ndcg5"] = quality
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.data, n_queries=50 if args.quick else 300,
                 sizes=(200,) if args.quick else (1_000, 10_000))
    result["environment"] = environment()
    lat, thr, q = result["latency_ms"], result["throughput"], result["dense_ndcg5"]
    rows = [["single query p50 (ms)", f"{lat['torch']['p50']:.2f}", f"{lat['onnx']['p50']:.2f}",
             f"{lat['torch']['p50'] / lat['onnx']['p50']:.2f}x"],
            ["single query p99 (ms)", f"{lat['torch']['p99']:.2f}", f"{lat['onnx']['p99']:.2f}",
             f"{lat['torch']['p99'] / lat['onnx']['p99']:.2f}x"]]
    rows += [[f"{n:,} tool texts (s; median {t['median_chars']:.0f} characters)",
              f"{t['torch_s']:.2f}", f"{t['onnx_s']:.2f}", f"{t['torch_s'] / t['onnx_s']:.2f}x"]
             for n, t in thr.items()]
    rows += [[f"dense NDCG@5, {name}", f"{v['torch']:.4f}", f"{v['onnx']:.4f}",
              f"{v['onnx'] - v['torch']:+.4f}"] for name, v in q.items()]
    cos = [f"{n:,}: min {t['cosine_min']:.6f}, mean {t['cosine_mean']:.6f}"
           for n, t in thr.items()]
    text = ("# The encoder's backends: PyTorch against ONNX Runtime (fp32)\n\n"
            + md_table(["measure", "torch", "onnx", "onnx vs torch"], rows)
            + "\n\nCosine of the two backends' embeddings of the same texts: "
            + "; ".join(cos) + ".\n")
    write_json(args.out, "bench_encoder", result)
    write_md(args.out, "bench_encoder", text)
    print(text)
    return result


if __name__ == "__main__":
    main()
