"""Benchmark: the encoder's backends (PyTorch, ONNX Runtime, int8, bfloat16), side by side.

Every measure runs the backends in one process, interleaved, so their ratios hold under
the shared machine's load:

- single-query latency: 300 distinct short requests, each encoded alone (no cache), the
  backends taking turns by blocks of 20, p50 and p99; a query runs through
  :func:`~skriskrank._encoder.query_backend` (``"onnx-int8"`` and ``"torch-bf16"`` encode
  queries with the fp32 graph);
- throughput: 1,000 and 10,000 real tool texts (the harvested MCP tools with their
  parameters, then UltraTool's and Seal-Tools' tools, as ``benchmarks.bench_audit`` builds
  them), best of two interleaved runs, and the cosine of each backend's embeddings with
  PyTorch's;
- quality, each against PyTorch: dense retrieval NDCG@5 on UltraTool (1,000 queries over
  2,032 tools) and Seal-Tools ``test_in_domain`` (700 over 4,076); the learned pipeline
  (embed -> retrieve(100) -> rerank) on UltraTool 5-fold, NDCG@5 and RVR@5; the auditor's
  pooled 5-fold QWK on both benchmarks' labels (with the harvested tools' hint bounds, as the
  packaged model is trained);
- neighbours: each of the 1,000 tool texts encoded among all of them and among every other
  one of them, the cosine of its two vectors (a backend that quantizes a batch's activations
  with one scale gives a text a vector that depends on the texts batched with it).

Run ``python -m benchmarks.bench_encoder --data ../shared/data`` (``--quick``: smaller;
``--speed`` or ``--quality``: those rows only, the others kept from the last run).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import (
    RESULTS,
    environment,
    in_turns,
    machine,
    md_table,
    measured_backends,
    write_json,
    write_md,
)
from skriskrank._encoder import BACKENDS


def _texts(data, n):
    from benchmarks.bench_audit import catalogue
    from skriskrank import load_tools

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tools.json"
        path.write_text(json.dumps(catalogue(data, n)))
        return load_tools([path], scan=False).texts


def _encode(texts, backend, **kwargs):
    from skriskrank._encoder import encode

    return encode(texts, cache=False, backend=backend, show_progress_bar=False, **kwargs)[0]


def latency(n_queries, backends=BACKENDS):
    from skriskrank._encoder import query_backend

    queries = [f"{v} {o} #{i}" for i, (v, o) in enumerate(
        (v, o) for v in ("delete", "archive", "email me", "translate", "summarise", "back up")
        for o in ("the old log files", "last week's invoices", "the sales report",
                  "all unread messages", "the meeting notes") * 10)][:n_queries]
    for b in backends:
        _encode(queries[:5], query_backend(b))
    lat = {b: [] for b in backends}
    for b, i in in_turns(len(queries), backends):
        t0 = time.perf_counter()
        _encode([queries[i]], query_backend(b))
        lat[b].append(1e3 * (time.perf_counter() - t0))
    return {b: {"p50": float(np.median(v)), "p99": float(np.percentile(v, 99))}
            for b, v in lat.items()}


def _best_of_two(texts, runs):
    """{key: (best seconds, embeddings)} of ``runs`` ({key: encode kwargs}), interleaved twice."""
    best = {key: (float("inf"), None) for key in runs}
    for _ in range(2):
        for key, kwargs in runs.items():
            t0 = time.perf_counter()
            emb = _encode(texts, **kwargs)
            best[key] = (min(best[key][0], time.perf_counter() - t0), emb)
    return best


def throughput(data, n, backends=BACKENDS):
    texts = _texts(data, n)
    best = _best_of_two(texts, {b: {"backend": b} for b in backends})
    cos = {b: (best["torch"][1] * best[b][1]).sum(axis=1) for b in backends[1:]}
    return {"seconds": {b: t for b, (t, _) in best.items()}, "n_texts": len(texts),
            "median_chars": float(np.median([len(t) for t in texts])),
            "cosine": {b: {"min": float(c.min()), "mean": float(c.mean())}
                       for b, c in cos.items()}}


#: The encoder's settings timed per backend, and the values tried (how the defaults were
#: chosen): a batch pads to its longest text and its activations must fit the caches, so
#: smaller batches of length-sorted texts can be faster; attention costs grow with the square
#: of the word pieces read.
SETTINGS = {"batch_size": (8, 16, 32, 64), "max_seq_length": (128, 256)}


def setting(data, n, name, backends=BACKENDS):
    """Seconds to encode ``n`` tool texts per backend and value of the encoder's setting
    ``name`` (the others at their defaults), best of two interleaved runs."""
    texts, values = _texts(data, n), SETTINGS[name]
    best = _best_of_two(texts, {(b, v): {"backend": b, name: v}
                                for v in values for b in backends})
    return {"n_texts": len(texts),
            "seconds": {b: {v: best[b, v][0] for v in values} for b in backends}}


def dense_ndcg(data, backends=BACKENDS):
    from skriskrank import FrozenEmbedder
    from skriskrank.datasets import load_sealtools, load_ultratool
    from skriskrank.metrics import ndcg_at_k

    out = {}
    for name, ds in (("UltraTool", load_ultratool(Path(data) / "ultratool")),
                     ("Seal-Tools", load_sealtools(Path(data) / "sealtools", "test_in_domain"))):
        out[name] = {}
        for b in backends:
            embed = FrozenEmbedder(ds.registry, backend=b, show_progress_bar=False).fit(None)
            top = embed.transform(ds.queries).ranked_names(5)
            out[name][b] = float(ndcg_at_k(top, ds.relevant, k=5))
    return out


def pipeline_ultratool(data, folds, backends=BACKENDS):
    """embed -> retrieve(100) -> rerank on UltraTool, 5-fold, as ``pipeline_quality`` runs it."""
    from sklearn.model_selection import KFold

    from benchmarks.pipeline_quality import _pipe, _report
    from skriskrank.datasets import load_ultratool

    ds = load_ultratool(Path(data) / "ultratool")
    runs = {b: [] for b in backends}
    for f, (tr, te) in enumerate(KFold(5, shuffle=True, random_state=0).split(ds.queries)):
        if f >= folds:
            break
        train, test = ds.subset(tr), ds.subset(te)
        for b in backends:
            pipe = _pipe(ds.registry, True, 100, 0, backend=b).fit(train.queries, train.relevant)
            rep = _report(pipe, test)
            runs[b].append([rep["ndcg@5"], rep["rvr@5"]])
    return {b: dict(zip(("ndcg@5", "rvr@5"), np.mean(v, axis=0).tolist(), strict=True))
            for b, v in runs.items()}


def auditor_qwk(data, folds, backends=BACKENDS):
    """The auditor's pooled k-fold QWK (coverage 0.5), as ``benchmarks.audit`` measures it."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    from benchmarks.audit import _measures, _quantile, harvest, pooled, training_registries
    from skriskrank import RiskAuditor

    texts, y, _ = pooled(training_registries(data))
    texts = np.asarray(texts, dtype=object)
    marked = harvest()
    out = {}
    for b in backends:
        auditor = RiskAuditor(backend=b, show_progress_bar=False)
        P = np.zeros((len(y), 5))
        for tr, te in StratifiedKFold(folds, shuffle=True, random_state=0).split(texts, y):
            fitted = clone(auditor).fit(list(texts[tr]) + list(marked["texts"]),
                                 [[v, v] for v in y[tr]] + marked["bounds"].tolist())
            P[te] = fitted.set_params(coverage=0.5).predict_proba(list(texts[te]))
        out[b] = _measures(y, _quantile(P, 0.5))["qwk"]
    return out


def neighbours(data, n, backends=BACKENDS):
    """Cosine, per backend, of a text's vectors among ``n`` texts and among every other one."""
    texts = _texts(data, n)
    out = {}
    for b in backends:
        whole = _encode(texts, b)
        apart = np.empty_like(whole)
        for start in (0, 1):
            apart[start::2] = _encode(texts[start::2], b)
        cos = (whole * apart).sum(axis=1)
        out[b] = {"min": float(cos.min()), "mean": float(cos.mean())}
    return {"n_texts": len(texts), "cosine": out}


def speed(data, *, n_queries, sizes, backends=BACKENDS):
    """The speed rows: latency, the batch-size and text-length tables, throughput."""
    return {"latency_ms": latency(n_queries, backends),
            **{name: setting(data, sizes[0], name, backends) for name in SETTINGS},
            "throughput": {n: throughput(data, n, backends) for n in sizes}}


def quality(data, *, folds, n_neighbours, backends=BACKENDS):
    """The quality rows, with the encoder settings they were measured at."""
    from skriskrank._encoder import DEFAULT_BATCH_SIZE, DEFAULT_MAX_SEQ_LENGTH

    return {"dense_ndcg5": dense_ndcg(data, backends),
            "pipeline_ultratool": pipeline_ultratool(data, folds, backends),
            "auditor_qwk": auditor_qwk(data, folds, backends),
            "neighbours": neighbours(data, n_neighbours, backends),
            "quality_settings": {"batch_size": DEFAULT_BATCH_SIZE,
                                 "max_seq_length": DEFAULT_MAX_SEQ_LENGTH}}


#: What else was tried for a faster encoder that keeps the scores (research scripts outside
#: the repository; 1,000 of the tool texts above unless said, 2 shared cores, one run each).
RESEARCH_NOTES = """\
## What else was tried

- **A fused fp32 graph.** ONNX Runtime's transformer optimizer (`optimize_model`, BERT: one
  `Attention`, `SkipLayerNormalization` and `BiasGelu` node per layer) encoded the 1,000
  texts in 11.98 s against the exported graph's 12.50 s (PyTorch 15.87 s), cosine 1.0000:
  the session's own optimisations already do most of it.
- **int8 with some layers left in fp32** (PyTorch 14.55 s in that run; cosine with PyTorch,
  mean / min): every layer int8 4.89 s, 0.9942 / 0.9883; the feed-forward output in fp32
  7.06 s, 0.9970 / 0.9936; the attention output in fp32 5.38 s, 0.9942 / 0.9837; the last
  layer in fp32 5.95 s, 0.9945 / 0.9883; the first 6.04 s, 0.9957 / 0.9903. One layer kept in
  fp32 cost about a fifth of int8's speed for little of its error.
- **Where int8 loses** (simulated in PyTorch on 400 texts, mean cosine): int8 weights alone
  0.9996; activations quantized with one scale per batch, as ONNX Runtime's dynamic
  quantization does, 0.9949; one scale per token 0.9995. The loss comes from one scale shared
  by every token of a batch.
- **SmoothQuant** (each input channel's scale moved from the activations into the weights,
  with exponent alpha, from the activations' largest values on calibration texts). Calibrated
  on the demo catalogue's 202 tools alone: dense NDCG@5 minus PyTorch's on UltraTool /
  Seal-Tools at alpha 0.7, 0.8, 0.9: -0.0017 / -0.0006, +0.0044 / -0.0017, +0.0067 / -0.0043
  (unsmoothed int8: -0.0070 / -0.0057), but on the real MCP texts alpha 0.8 gave a mean cosine
  of 0.9896, below unsmoothed int8's 0.9942: the scales fit the calibration texts. Calibrated
  on those 202 and 500 real MCP tools of other servers than the 1,000 above: alpha 0.7:
  -0.0017 / +0.0001, cosine on the 1,000 mean 0.9976, min 0.9943, 5.59 s against unsmoothed
  int8's 5.19 s and PyTorch's 16.52 s (2.95x); alpha 0.8: +0.0053 / -0.0012, 0.9977 / 0.9934,
  5.85 s (2.82x).
- **One scale per token in ONNX Runtime**, whose int8 kernels take one scale per batch, so the
  per-token scale is applied by other operators: a 1,024 x 384 by 384 x 1,536 product took
  5.98 ms in fp32, 1.66 ms with dynamic int8, 3.15 ms with per-token uint8 and 18.4 ms with
  per-token int8 (int8 activations by int8 weights).
- **Fewer operators around the smoothing.** Query, key and value sharing one scale (one
  multiplication of their common input instead of three) and the attention output's scale
  folded into the value's weights (its input is a weighted mean of the values) compute the
  same function (largest difference 1.6e-7) with 111 `Mul` nodes instead of 129; best of
  three runs 5.21 s against the shipped smoothing's 5.31 s and unsmoothed int8's 5.04 s
  (medians 5.73, 5.50, 5.15 s), cosine with fp32 mean 0.9974 in both: within the machine's
  noise, and it ties the smoothing to BERT's module layout. Not kept.
- **Fused attention in int8** (unsmoothed graphs, against unsmoothed int8). ONNX Runtime's
  optimizer, then dynamic quantization: with its
  `Attention` fusion (quantized to `QAttention`, and the embeddings to
  `QEmbedLayerNormalization`) 5.97 s against the exported graph's int8 5.24 s, slower; with
  `MultiHeadAttention` and int8 projections 5.78 s against 6.05 s in another run (4%), the
  cosine unchanged. The session's own fusions (`DynamicQuantizeMatMul`,
  `SkipLayerNormalization`) already run the int8 graph; half of its time is in those
  int8 products (ONNX Runtime's profiler on the 9,469 texts: 14.6 of 28.6 s of kernel time).
- **Static int8** (each activation's scale fixed from the calibration texts, MinMax, the 36
  weight products only, weights per channel): mean cosine with fp32 0.938 (min 0.887) against
  the dynamic smoothed graph's 0.9974, and slower (6.04 s against 5.42 s). A fixed scale
  would make a text's vector independent of the texts batched with it (the neighbours row
  above), but it must cover every text's range, which leaves the common ones few levels.
- **Batch size for int8 on short texts** (the 9,469 texts, best of two): batch 2 36.5 s,
  4 34.3 s, 8 26.5 s, 16 28.2 s, 32 30.1 s, 64 30.3 s, 128 30.3 s; batch 16 took 31.0 s in
  another run. The default stays 16 for every backend. One text per batch would give each
  text its own activation scale, and so a vector independent of its neighbours: on the 1,000
  texts 7.14 s against 6.52 s in batches of 16 (PyTorch 16.02 s: 2.24x against 2.46x), mean
  cosine with PyTorch 0.9976 against 0.9974.
- **More threads or sessions.** The exported graph encoded the 1,000 texts in 23.47 s on one
  thread and 12.04 s on two; two sessions of one thread each, on alternate texts, took
  12.22 s (int8: 9.95, 5.26, 5.23 s). Both cores are already busy.
- **int8 on a CPU without VNNI.** The notes above were measured on a CPU with AVX512-BF16
  (and so AVX512-VNNI); the table at the top on one with AVX2 only. There ONNX Runtime
  multiplies uint8 activations by int8 weights with `VPMADDUBSW`, which adds two products in
  int16 and saturates past 32,767: a 64 x 384 by 384 x 384 product of large values came out
  up to 40% off the exact sums with weights up to 127, exact with weights up to 64. With 8-bit
  weights (per channel, so each column reaches 127) the int8 graph's mean cosine with fp32 on
  the 1,000 texts was 0.9935 (min 0.9851), and dense NDCG@5 moved by -0.018 on UltraTool
  (0.3313 against fp32 ONNX's 0.3497) and -0.004 on Seal-Tools: the same graph, other
  results on another CPU. In 7 bits (`reduce_range`, ONNX Runtime's own remedy) every CPU
  sums the products exactly: 0.9957 (min 0.9920), +0.0004 and -0.004, no slower (best of
  two interleaved runs, 9.55 s against 8-bit's 10.23 s, fp32 14.31 s): kept. Tried with it:
  SmoothQuant alpha 0.5, 0.6, 0.8, 0.9, 1.0 gave a mean cosine of 0.9827, 0.9932, 0.9965,
  0.9949, 0.9941 (0.7: 0.9957), but alpha 0.8 moved dense NDCG@5 by -0.008 / +0.0001, so 0.7
  stays; uint8 weights
  (`QUInt8`, which ONNX Runtime multiplies without the int16 step): 0.9975, -0.006 /
  -0.0005, but 11.78 s against 7-bit's 9.55 s. One activation scale per token, not per
  batch (its zero point taken out after the product, as ONNX Runtime's int8 products take one
  zero point per matrix): each vector independent of its neighbours (cosine 0.999999) and
  0.9976 with fp32, but 12.10 s against 9.66 s (fp32 14.01 s).
- **ONNX Runtime's `MatMulNBits`** (its weight-only quantizer: weights in 8 bits per block
  of 32 or 128 inputs, activations quantized to int8 per row and block as it runs,
  `accuracy_level=4`), on the same AVX2 CPU and 1,000 texts, best of two: each text's vector
  independent of its neighbours (cosine 0.999999) and a cosine with fp32 of 0.9997 (min
  0.9995) in blocks of 32, 0.9993 in blocks of 128, but 25.0 s and 22.4 s against fp32's
  15.3 s and the shipped int8's 11.7 s: slower than fp32 here. Weights in 4 bits: 17.1 s,
  mean cosine 0.965.

`onnx-int8` now smooths the packaged encoder at alpha 0.7, with statistics measured on the
demo's 202 tools and 2,279 real MCP tools that leave out the 1,000 above
(`benchmarks/int8_calibration.py`), and quantizes its weights in 7 bits: the table at the top
measures it. "Unsmoothed int8" in these notes is the backend before.
"""


def render(result) -> str:
    lat, thr = result["latency_ms"], result["throughput"]
    backends = result.get("backends", BACKENDS)

    def speed(label, values):  # seconds or ms: lower is better; the ratio is torch / backend
        return [label, *(f"{values[b]:.2f}" for b in backends),
                *(f"{values['torch'] / values[b]:.2f}x" for b in backends[1:])]

    def quality(label, values, fmt=".4f"):
        return [label, *(f"{values[b]:{fmt}}" for b in backends),
                *(f"{values[b] - values['torch']:+{fmt}}" for b in backends[1:])]

    rows = [speed("single query p50 (ms)", {b: lat[b]["p50"] for b in backends}),
            speed("single query p99 (ms)", {b: lat[b]["p99"] for b in backends})]
    rows += [speed(f"{t['n_texts']:,} tool texts (s; median {t['median_chars']:.0f} characters)",
                   t["seconds"]) for t in thr.values()]
    rows += [quality(f"dense NDCG@5, {name}", v) for name, v in result["dense_ndcg5"].items()]
    pipe = result["pipeline_ultratool"]
    rows += [quality(f"pipeline {m.upper()}, UltraTool 5-fold", {b: pipe[b][m] for b in backends})
             for m in ("ndcg@5", "rvr@5")]
    rows.append(quality("auditor pooled 5-fold QWK", result["auditor_qwk"]))
    if "neighbours" in result:
        near = result["neighbours"]
        rows.append(quality(f"same text among other neighbours, min cosine ({near['n_texts']:,} "
                            "texts, then every other one)",
                            {b: c["min"] for b, c in near["cosine"].items()}))

    def timed(name, label):
        by = result[name]
        values = list(by["seconds"]["torch"])
        return md_table(["backend", *(f"{label} {v}" for v in values)],
                        [[b, *(f"{by['seconds'][b][v]:.2f}" for v in values)]
                         for b in backends])
    cos = "; ".join(f"{b} at {t['n_texts']:,}: min {c['min']:.4f}, mean {c['mean']:.4f}"
                    for t in thr.values() for b, c in t["cosine"].items())
    return ("# The encoder's backends: PyTorch, ONNX Runtime, int8 and bfloat16\n\n"
            "`python -m benchmarks.bench_encoder`. Ratios are PyTorch's time over the "
            "backend's (higher is faster); differences are the backend's score minus "
            "PyTorch's. `onnx-int8` encodes tool texts with int8 weights and `torch-bf16` with "
            "bfloat16 ones in PyTorch; both encode queries with the fp32 graph, so their query "
            "latency is the fp32 graph's. " + machine(result.get("environment", {}))
            + ("" if "torch-bf16" in backends else " `torch-bf16` is left out: this CPU has "
               "neither AVX512-BF16 nor AMX, so PyTorch would emulate bfloat16 (its figures "
               "on a CPU that computes in it are this page at commit ccf9139).") + "\n\n"
            + md_table(["measure", *backends, *(f"{b} vs torch" for b in backends[1:])], rows)
            + f"\n\nCosine with PyTorch's embeddings of the same texts: {cos}. The quality rows "
            f"were measured in batches of {result['quality_settings']['batch_size']}, reading "
            f"{result['quality_settings']['max_seq_length']} word pieces of each text.\n\n"
            f"## Batch size and text length\n\nSeconds to encode the first "
            f"{result['batch_size']['n_texts']:,} tool texts above (each backend batches them "
            "longest first: PyTorch by characters, as sentence-transformers does, the other "
            "backends by word pieces), per batch size (the default is 16) and per number "
            "of word pieces read of each text (`max_seq_length`; the default is 128, the "
            "model's own setting 256; what it changes in the rankings: "
            "`benchmarks/results/real_mcp.md`).\n\n"
            + timed("batch_size", "batch") + "\n\n" + timed("max_seq_length", "reading")
            + "\n\n" + RESEARCH_NOTES)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--speed", action="store_true",
                      help="re-measure only the speed rows, keeping the quality rows of the "
                           "last run's bench_encoder.json (for a quieter machine)")
    only.add_argument("--quality", action="store_true",
                      help="re-measure only the quality rows, keeping the speed rows")
    args = parser.parse_args(argv)
    n_queries, sizes = (50, (200,)) if args.quick else (300, (1_000, 10_000))
    result = (json.loads((args.out / "bench_encoder.json").read_text())
              if args.speed or args.quality else {})
    backends = measured_backends()
    if result and tuple(result.get("backends", BACKENDS)) != backends:
        parser.error("--speed and --quality keep the other rows, which were measured with "
                     "other backends: run them all")
    result["backends"] = backends
    if not args.quality:
        result.update(speed(args.data, n_queries=n_queries, sizes=sizes, backends=backends))
    if not args.speed:
        result.update(quality(args.data, folds=2 if args.quick else 5, n_neighbours=sizes[0],
                              backends=backends))
    result["environment"] = environment()
    write_json(args.out, "bench_encoder", result)
    write_md(args.out, "bench_encoder", render(result))
    print(render(result))
    return result


if __name__ == "__main__":
    main()
