"""Quick variants of the performance benchmarks: they run and their outputs are right.

These check correctness (same scores, same predictions, files written, fit cache hits),
never speed: timings on a shared machine are not assertions.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import bench_latency, bench_scale, bench_scoring
from benchmarks._common import (
    best_of,
    in_turns,
    md_table,
    synthetic_queries,
    synthetic_registry,
)


def _outputs(out, name, png=False):
    data = json.loads((out / f"{name}.json").read_text())
    assert (out / f"{name}.md").read_text().startswith("# ")
    if png:
        assert (out / f"{name}.png").stat().st_size > 0
    return data


def test_synthetic_registry_is_clustered_and_labelled():
    reg, emb, cluster = synthetic_registry(200, 64, cluster_size=10, seed=0)
    assert len(reg) == 200 and emb.shape == (200, 64)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert set(np.unique(reg.risk)) <= {1, 2, 3, 4, 5}
    cos = emb @ emb.T
    same = cluster[:, None] == cluster[None, :]
    np.fill_diagonal(same, False)
    # Tools of one cluster are near each other and far from the others.
    assert cos[same].mean() > 0.5 > 0.2 > np.abs(cos[~same]).mean()
    q, gold = synthetic_queries(emb, cluster, 30, seed=1)
    assert q.shape == (30, 64)
    for g in gold:
        assert 1 <= len(g) <= 3 and len(set(cluster[g])) == 1


def test_reference_relevance_is_the_concatenation(tmp_path):
    # The benchmark's reference against the torch module on one block, both heads.
    torch = pytest.importorskip("torch")
    from skriskrank._heads import DualHeadModule

    rng = np.random.default_rng(0)
    q = rng.normal(size=(5, 8)).astype(np.float32)
    t = rng.normal(size=(13, 8)).astype(np.float32)
    for params in bench_scoring.HEADS.values():
        torch.manual_seed(0)
        module = DualHeadModule(8, hidden=4, **params)
        with torch.no_grad():
            module.rel_out.weight.normal_()
        want = bench_scoring.torch_relevance(module, q, t, block=2)
        got = bench_scoring.reference_relevance(module, q, t, block=3)
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_bench_scoring_quick(tmp_path):
    res = bench_scoring.main(["--quick", "--out", str(tmp_path)])
    data = _outputs(tmp_path, "bench_scoring")
    assert len(data["results"]) == 6
    assert {(r["dim"], r["head"]) for r in data["results"]} == {
        (d, k) for d in (16, 32) for k in ("concat", "residual", "residual-elementwise")
    }
    for r in res["results"]:
        assert r["same_scores"], r["max_abs_diff"]
        assert r["library_flops"] < r["reference_flops"]
        assert r["library_gemm_flops_per_s"] > 0


def test_bench_scale_quick(tmp_path):
    res = bench_scale.main(["--quick", "--out", str(tmp_path)])
    data = _outputs(tmp_path, "bench_scale", png=True)
    assert [r["n_tools"] for r in data["results"]] == [300, 900]
    for r in res["results"]:
        # The stage-by-stage run predicts exactly what Pipeline.predict does.
        assert r["matches_pipeline_predict"]
        assert r["n_edges"] > 0 and r["edge_counts"]["semantic"] > 0
        assert r["recall_at_5"] > 0.5
        for stage in ("fit/rerank", "fit/smooth", "predict/filter"):
            assert r["stages"][stage]["seconds"] >= 0
    assert set(data["growth_vs_tools"]) >= {"fit/smooth", "predict/rerank"}


def test_bench_latency_quick(tmp_path):
    res = bench_latency.main(["--quick", "--out", str(tmp_path)])
    _outputs(tmp_path, "bench_latency")
    for r in res["results"]:
        assert r["single_matches_batched"]
        assert r["n_calls"] == 40
        assert set(r["single_stage_means"]) >= {"retrieve", "rerank", "smooth", "filter"}


@pytest.mark.slow
def test_bench_gridsearch_quick(tmp_path, data_dir):
    from benchmarks import bench_gridsearch

    # The shared on-disk embedding cache, when this machine has one, spares encoding the
    # registry again; otherwise the packaged encoder fills a fresh one.
    shared = Path("/tmp/embcache")
    cache = shared if shared.is_dir() else tmp_path / "embcache"
    res = bench_gridsearch.main(
        ["--quick", "--out", str(tmp_path), "--data", str(data_dir), "--cache", str(cache),
         "--skip-threads"]
    )
    _outputs(tmp_path, "bench_gridsearch")
    ms = res["model_selection"]
    # risk_weight acts at inference only: the grid trains once per fold, like cross_validate.
    assert ms["trainings"]["cross_validate"] == ms["folds"]
    assert ms["trainings"]["grid"] == ms["folds"]
    # Everything was encoded while warming up, nothing during the timed runs.
    assert ms["texts_encoded"] == 0


@pytest.mark.slow
def test_bench_dask_quick(tmp_path):
    pytest.importorskip("distributed")  # a guard: the test extra installs it
    from benchmarks import bench_dask

    # The demo data, a 2 x 2 grid over 2 folds; the cache=True cluster run (which loads the
    # encoder in both workers) is left to the full benchmark.
    res = bench_dask.main(["--quick", "--out", str(tmp_path), "--skip-default-cache"])
    data = _outputs(tmp_path, "bench_dask")
    main = res["main"]
    assert main["n_fits"] == 8 and data["main"]["ratio"] > 0
    assert main["cv_results_equal"]["identical"]
    assert len(main["workers"]) == 2
    for worker in main["workers"]:
        assert worker["texts_encoded"] == 0 and not worker["encoder_loaded"]
    assert main["texts_encoded_by_this_process_during_searches"] == 0


def test_thread_probe_is_a_pass_through(tmp_path):
    from benchmarks.bench_gridsearch import ThreadProbe

    probe = ThreadProbe(str(tmp_path)).fit([1, 2])
    assert probe.transform("batch") == "batch"
    (log,) = tmp_path.glob("*.json")
    state = json.loads(log.read_text())
    assert state["torch_threads"] >= 1 and "threadpools" in state


def test_helpers():
    calls = []
    best = best_of({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, 2)
    assert calls == ["a", "b", "a", "b"] and set(best) == {"a", "b"}
    assert md_table(["x", "y"], [[1, 2.5]]).splitlines()[2] == "| 1 | 2.5 |"
    # Every (name, i) once; the names take turns by blocks of calls, not call by call.
    assert list(in_turns(4, "ab", block=2)) == [
        ("a", 0), ("a", 1), ("b", 0), ("b", 1), ("a", 2), ("a", 3), ("b", 2), ("b", 3)]


@pytest.mark.slow
def test_bench_latency_end_to_end_encodes_with_each_backend():
    # The quick run's vectors are 32-d; the end-to-end rows need the packaged 384-d encoder.
    r = bench_latency.run_size(200, n_train=30, n_calls=10, dim=384, epochs=1, rounds=1,
                               n_encode=3)
    by = r["end_to_end"]["seconds"]
    assert set(by) == {r["end_to_end"]["default"], "torch"}
    for b in by.values():  # the whole call includes its encoding
        assert b["end_to_end"]["p50"] >= b["encoding"]["p50"] > 0
    text = bench_latency._markdown({"results": [r], "environment": {}, "config": {"rounds": 1}})
    assert "## One query end to end at 200 tools, encoding included" in text
