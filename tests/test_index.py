"""The int8 first-stage index and the lazy full-pool cosine it relies on."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skriskrank import DenseRetriever, RankingBatch, ToolRegistry, _retriever
from skriskrank._fast import Int8CosineIndex, _threads


def _unit(x):
    x = np.asarray(x, dtype=np.float32)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1)


def _registry(n):
    return ToolRegistry.from_records(
        [{"name": f"t{i}", "description": f"tool {i}", "risk": 1 + i % 5} for i in range(n)]
    )


@settings(deadline=None, max_examples=60)
@given(
    n_tools=st.integers(1, 300),
    dim=st.integers(1, 24),
    n_queries=st.integers(1, 3),
    n=st.integers(1, 40),
    dup=st.booleans(),
    peaked=st.booleans(),
    block=st.sampled_from([1, 3, 16, 256]),
    n_threads=st.sampled_from([1, 2, 3]),
    seed=st.integers(0, 2**16),
)
def test_index_top_is_the_exact_top(n_tools, dim, n_queries, n, dup, peaked, block, n_threads,
                                    seed):
    rng = np.random.default_rng(seed)
    tools = rng.normal(size=(n_tools, dim))
    if peaked:  # int8 scales (each row's peak) spread over a wide range
        tools *= rng.pareto(1.0, size=(n_tools, dim)) + 0.05
    tools = _unit(tools)
    if dup:  # exact ties: repeated rows, and queries equal to tools
        tools[rng.integers(0, n_tools, n_tools // 2)] = tools[0]
    q = _unit(rng.normal(size=(n_queries, dim)))
    q[0] = tools[rng.integers(0, n_tools)]
    n = min(n, n_tools)
    index = Int8CosineIndex(tools, block=block)
    idx, scores = index.top(q, n, n_threads=n_threads)
    # Threads share the scan, and nothing else: the same answer, bit for bit.
    single = index.top(q, n)
    np.testing.assert_array_equal(idx, single[0])
    np.testing.assert_array_equal(scores, single[1])
    assert idx.shape == scores.shape == (n_queries, n)
    for j in range(n_queries):
        exact = tools @ q[j]
        # Its own scores are float32 cosines, best first, ties by increasing index ...
        np.testing.assert_allclose(scores[j], exact[idx[j]], atol=1e-6)
        key = np.lexsort((idx[j], -scores[j]))
        assert (key == np.arange(n)).all()
        assert len(set(idx[j].tolist())) == n
        # ... and no tool left out beats the last one kept (beyond float32 rounding).
        left_out = np.setdiff1d(np.arange(n_tools), idx[j])
        if left_out.size:
            assert exact[left_out].max() <= scores[j, -1] + 1e-6


@pytest.mark.parametrize("block", [1, 7, 256])
def test_index_many_tied_candidates_grow_the_candidate_buffer(block):
    # 3,000 identical tools all tie with the query: every one stays a candidate (the buffer
    # starts at 1,024, so it is compacted and grown), and ties go by increasing index.
    rng = np.random.default_rng(5)
    tools = np.repeat(_unit(rng.normal(size=(1, 12))), 3000, axis=0)
    tools = np.concatenate([tools, _unit(rng.normal(size=(500, 12)))])
    perm = rng.permutation(len(tools))
    tools = tools[perm]
    idx, scores = Int8CosineIndex(tools, block=block).top(tools[perm.argsort()[:1]], 40)
    assert (idx[0] == np.sort(perm.argsort()[:3000])[:40]).all()
    assert (scores[0] == scores[0, 0]).all()


def test_index_block_that_mixes_scales():
    # Dense rows have small int8 scales (peak ~0.4 at d = 64), near one-hot rows large ones
    # (peak ~1). Sorted by scale, the last block of 100 holds 97 dense rows and the 3 peaked
    # ones, so its threshold must use the right extreme scale for the sign of the bound.
    # The dense rows cluster around u. For the query e0 + u, tau is high (~0.6) when the
    # block starts, and with the wrong scale the best match, e0 (cosine 0.74), is pruned;
    # for e0 - u every dense cosine is negative, and so is tau for n = 5.
    rng = np.random.default_rng(9)
    u = _unit(rng.normal(size=(1, 64)))
    dense = _unit(u + 0.05 * rng.normal(size=(997, 64)))
    peaked = _unit(np.eye(64)[:3] + 0.01 * rng.normal(size=(3, 64)))
    tools = np.concatenate([dense, peaked])
    for q in (_unit(1.2 * peaked[:1] + u), _unit(1.2 * peaked[:1] - u), dense[:1]):
        for n in (1, 5):
            idx, _ = Int8CosineIndex(tools, block=100).top(q, n)
            exact = np.argsort(-(q @ tools.T), axis=1, kind="stable")[:, :n]
            np.testing.assert_array_equal(idx, exact)


def test_index_rejects_a_bad_block_size():
    tools = _unit(np.random.default_rng(0).normal(size=(10, 4)))
    for block in (0, -1, 2.5, None):
        with pytest.raises(ValueError, match="block must be a positive integer"):
            Int8CosineIndex(tools, block=block)


def test_index_top_n_out_of_range():
    tools = _unit(np.random.default_rng(0).normal(size=(10, 4)))
    index = Int8CosineIndex(tools)
    idx, scores = index.top(tools[:2], 0)
    assert idx.shape == scores.shape == (2, 0)
    for n in (-1, 11):
        with pytest.raises(ValueError, match=r"n must be in \[0, 10\]"):
            index.top(tools[:2], n)
    bad = tools[:2].copy()
    bad[1, 0] = np.nan
    for q in (bad, tools[:2, :3], tools[0]):
        with pytest.raises(ValueError, match=r"queries must be a finite \(n_queries, 4\)"):
            index.top(q, 3)
    # n = n_tools is the full sort.
    idx, _ = index.top(tools[:1], 10)
    assert (idx[0] == np.argsort(-(tools @ tools[0]), kind="stable")).all()


def test_index_rejects_what_it_cannot_bound():
    with pytest.raises(ValueError, match="float32"):
        Int8CosineIndex(np.ones((3, 2)))
    bad = np.ones((3, 2), dtype=np.float32)
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        Int8CosineIndex(bad)


def test_full_pool_cosine_is_lazy_and_equal():
    rng = np.random.default_rng(0)
    tools = _unit(rng.normal(size=(50, 8)))
    q = _unit(rng.normal(size=(3, 8)))
    batch = RankingBatch.full_pool(_registry(50), q, tools)
    assert batch.scores_pending
    np.testing.assert_array_equal(batch.scores, (q @ tools.T).astype(np.float32))
    assert not batch.scores_pending
    # Ranked lists carry their own scores: only the full pool defers its cosine.
    with pytest.raises(ValueError, match="needs their scores"):
        RankingBatch(batch.registry, q, tools, np.array([[3, 1], [0, 49], [7, 6]]))
    with pytest.raises(AttributeError, match="immutable"):
        batch.scores = None
    with pytest.raises(AttributeError, match="immutable"):
        batch.registry = None


def test_int8_retriever_returns_the_exact_candidates():
    rng = np.random.default_rng(1)
    n_tools = 5_000
    centres = _unit(rng.normal(size=(300, 32)))
    tools = _unit(centres[rng.integers(0, 300, n_tools)] + 0.3 * rng.normal(size=(n_tools, 32)))
    q = _unit(centres[rng.integers(0, 300, 30)] + 0.5 * rng.normal(size=(30, 32)))
    reg = _registry(n_tools)
    train = RankingBatch.full_pool(reg, q, tools)
    exact = DenseRetriever(search="exact").fit(train)
    fast = DenseRetriever(search="int8").fit(train)
    for i in range(len(q)):
        single = RankingBatch.full_pool(reg, q[i : i + 1], tools)
        a, b = exact.transform(single), fast.transform(single)
        np.testing.assert_array_equal(a.candidates, b.candidates)
        np.testing.assert_allclose(a.scores, b.scores, atol=1e-6)
    # The indexed path never computed the full-pool cosine.
    fresh = RankingBatch.full_pool(reg, q[:1], tools)
    fast.transform(fresh)
    assert fresh.scores_pending
    # Batches larger than the index's bound take the exact path, with the same answer.
    big = fast.transform(RankingBatch.full_pool(reg, q, tools))
    np.testing.assert_array_equal(big.candidates, exact.transform(train).candidates)


def test_int8_index_follows_the_batch_arrays_and_is_not_pickled():
    rng = np.random.default_rng(2)
    tools = _unit(rng.normal(size=(400, 16)))
    other = _unit(rng.normal(size=(400, 16)))
    q = _unit(rng.normal(size=(1, 16)))
    reg = _registry(400)
    retr = DenseRetriever(n_candidates=10, search="int8")
    retr.fit(RankingBatch.full_pool(reg, q, tools))
    got = retr.transform(RankingBatch.full_pool(reg, q, other)).candidates
    want = np.argsort(-(q @ other.T), axis=1, kind="stable")[:, :10]
    np.testing.assert_array_equal(got, want)
    assert retr._index[1].tool_embeddings is other
    clone = pickle.loads(pickle.dumps(retr))
    assert "_index" not in clone.__dict__  # rebuilt on first use, never pickled
    np.testing.assert_array_equal(
        clone.transform(RankingBatch.full_pool(reg, q, other)).candidates, want
    )
    # A non-finite query goes the exact way instead of through the bounds.
    nan_q = np.full((1, 16), np.nan, dtype=np.float32)
    retr.transform(RankingBatch.full_pool(reg, nan_q, tools))


def test_int8_retriever_threads_follow_n_jobs_and_the_environment(monkeypatch):
    import joblib

    rng = np.random.default_rng(4)
    tools = _unit(rng.normal(size=(3_000, 16)))
    q = _unit(rng.normal(size=(1, 16)))
    reg = _registry(len(tools))
    batch = RankingBatch.full_pool(reg, q, tools)
    seen = []
    real_top = Int8CosineIndex.top

    def spy(self, queries, n, *, n_threads=1):
        seen.append(n_threads)
        return real_top(self, queries, n, n_threads=n_threads)

    monkeypatch.setattr(Int8CosineIndex, "top", spy)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(_retriever.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    answers = []
    for n_jobs in (None, 1, 2, -1, 64):
        retr = DenseRetriever(search="int8", n_jobs=n_jobs).fit(batch)
        answers.append(retr.transform(RankingBatch.full_pool(reg, q, tools)).candidates)
    # None is 1; -1 and anything larger are capped at the 2 cores the process may use.
    assert seen == [1, 1, 2, 2, 2]
    with joblib.parallel_config(n_jobs=2):
        retr = DenseRetriever(search="int8").fit(batch)
        retr.transform(RankingBatch.full_pool(reg, q, tools))
    assert seen[-1] == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # as joblib's process workers set it
    DenseRetriever(search="int8", n_jobs=-1).fit(batch).transform(
        RankingBatch.full_pool(reg, q, tools))
    assert seen[-1] == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "²")  # not a number: no limit (int() would raise)
    assert DenseRetriever(search="int8", n_jobs=-1)._threads() == 2
    for a in answers[1:]:
        np.testing.assert_array_equal(a, answers[0])
    with pytest.raises(ValueError, match="n_jobs == 0"):
        DenseRetriever(search="int8", n_jobs=0).fit(batch)


def test_cpu_count_is_read_once_per_process(monkeypatch):
    # joblib's cpu_count reads cgroup files (60 us or more): an online call must not pay it,
    # but a forked worker must read its own.
    calls = []
    monkeypatch.setattr(_threads, "_STATE", {"pid": None, "cpus": 1, "pool": None, "size": 0})
    monkeypatch.setattr(_threads, "_joblib_cpu_count", lambda: calls.append(1) or 3)
    assert [_threads.cpu_count() for _ in range(3)] == [3, 3, 3]
    assert len(calls) == 1
    monkeypatch.setattr(_threads.os, "getpid", lambda: -1)
    assert _threads.cpu_count() == 3
    assert len(calls) == 2
    monkeypatch.setattr(_retriever.os, "sched_getaffinity", lambda pid: set(range(8)),
                        raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    # -1 is every CPU joblib counts (3 here, fewer than the affinity mask's 8).
    assert DenseRetriever(n_jobs=-1)._threads() == 3
    assert DenseRetriever(n_jobs=-2)._threads() == 2


def test_scan_pool_grows_and_retires_the_smaller_one(monkeypatch):
    monkeypatch.setattr(_threads, "_STATE", {"pid": None, "cpus": 1, "pool": None, "size": 0})
    small = _threads.thread_pool(1)
    assert _threads.thread_pool(1) is small
    big = _threads.thread_pool(3)
    assert big is not small and _threads.thread_pool(2) is big
    with pytest.raises(RuntimeError, match="shutdown"):
        small.submit(int)
    big.shutdown()
