"""HeadWeights, the one inference path of the heads, against the torch module's forward."""

import numpy as np
import pytest
import torch
from _reference import module_scores
from hypothesis import given, settings
from hypothesis import strategies as st

from skriskrank._head_weights import HeadWeights
from skriskrank._heads import DualHeadModule

#: The relevance heads: the paper's concatenation, and the residual head with projected
#: (the default) or elementwise interaction features.
HEADS = {
    "concat": dict(relevance_head="concat"),
    "residual": dict(relevance_head="residual", interaction_rank=3),
    "residual-elementwise": dict(relevance_head="residual", interaction_rank=None),
}
KINDS = tuple(HEADS)
def _unit(rng, n, d):
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _module(kind, dim, hidden, seed):
    torch.manual_seed(seed)
    module = DualHeadModule(dim, hidden=hidden, **HEADS[kind])
    with torch.no_grad():
        # The residual head starts with a zero last layer; random weights exercise every term.
        for p in module.parameters():
            p.normal_(0.0, 0.3)
    return module


def _reference(module, q, t, candidates=None):
    return module_scores(module, q, t, candidates)[0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("block", [1, 1000, 1 << 24])
def test_full_pool_matches_concatenation(kind, block):
    rng = np.random.default_rng(0)
    d, hidden = 16, 8
    q, t = _unit(rng, 7, d), _unit(rng, 301, d)
    module = _module(kind, d, hidden, seed=1)
    heads = HeadWeights.from_module(module)
    got = heads.relevance(q, t, block=block)
    assert got.shape == (7, 301) and got.dtype == np.float32
    np.testing.assert_allclose(got, _reference(module, q, t), atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_non_finite_embedding_scores_nan_not_a_number(kind):
    # The compiled ReLU keeps NaN as np.maximum does: a broken embedding is never scored as
    # if it were a real tool.
    rng = np.random.default_rng(7)
    d = 6
    q, t = _unit(rng, 5, d), _unit(rng, 9, d)
    t[4, 2] = np.nan
    heads = HeadWeights.from_module(_module(kind, d, 5, seed=8))
    got = heads.relevance(q, t)
    assert np.isnan(got[:, 4]).all()
    assert np.isfinite(np.delete(got, 4, axis=1)).all()
    # The same on each query's own candidates.
    cand = np.array([[4, 0, 1], [2, 4, 3], [5, 6, 7], [8, 4, 0], [1, 2, 4]])
    got = heads.relevance(q, t, cand)
    np.testing.assert_array_equal(np.isnan(got), cand == 4)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("block", [1, 500, 1 << 24])
def test_candidates_match_concatenation(kind, block):
    rng = np.random.default_rng(1)
    d, hidden = 12, 5
    q, t = _unit(rng, 9, d), _unit(rng, 40, d)
    cand = np.stack([rng.choice(40, size=11, replace=False) for _ in range(9)]).astype(np.int32)
    module = _module(kind, d, hidden, seed=2)
    heads = HeadWeights.from_module(module)
    got = heads.relevance(q, t, cand, block=block)
    assert got.shape == (9, 11) and got.dtype == np.float32
    np.testing.assert_allclose(got, _reference(module, q, t, cand), atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_candidate_subset_equals_full_pool_columns(kind):
    rng = np.random.default_rng(2)
    d = 10
    q, t = _unit(rng, 5, d), _unit(rng, 33, d)
    heads = HeadWeights.from_module(_module(kind, d, 6, seed=3))
    full = heads.relevance(q, t)
    cand = np.stack([rng.permutation(33)[:7] for _ in range(5)])
    np.testing.assert_allclose(
        heads.relevance(q, t, cand), np.take_along_axis(full, cand, axis=1), atol=1e-6
    )
    # A full-pool candidate matrix takes the candidate path and must agree with the fast one.
    every = np.broadcast_to(np.arange(33), (5, 33))
    np.testing.assert_allclose(heads.relevance(q, t, every), full, atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_precomputed_tool_hidden_gives_the_same_scores(kind):
    rng = np.random.default_rng(3)
    d = 8
    q, t = _unit(rng, 4, d), _unit(rng, 20, d)
    heads = HeadWeights.from_module(_module(kind, d, 4, seed=4))
    hidden = heads.tool_side(t)
    np.testing.assert_array_equal(
        heads.relevance(q, t, tool_side=hidden), heads.relevance(q, t)
    )
    # The per-tool part is the tool block of the first layer (and the tool projection).
    np.testing.assert_allclose(hidden[:, :4], t @ heads.Wt.T, atol=1e-6)
    assert hidden.shape == (20, 4 + heads.Pt.shape[0])


@pytest.mark.parametrize("kind", ["concat", "residual"])
def test_tool_blocks_cover_a_pool_larger_than_one_block(kind):
    # More tools than one cache block holds: the blocked heads walk several tool blocks.
    rng = np.random.default_rng(4)
    d, hidden = 6, 4
    block = 1 << 12
    n_tools = block // hidden + 37
    q, t = _unit(rng, 3, d), _unit(rng, n_tools, d)
    module = _module(kind, d, hidden, seed=5)
    got = HeadWeights.from_module(module).relevance(q, t, block=block)
    np.testing.assert_allclose(got, _reference(module, q, t), atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_tool_risk_matches_module(kind):
    rng = np.random.default_rng(5)
    d = 14
    t = _unit(rng, 25, d)
    module = _module(kind, d, 7, seed=6)
    with torch.no_grad():
        want = module.risk(torch.from_numpy(t)).numpy()
    got = HeadWeights.from_module(module).risk(t)
    assert got.dtype == np.float32 and got.shape == (25,)
    np.testing.assert_allclose(got, want, atol=1e-6)


@settings(deadline=None, max_examples=25)
@given(
    kind=st.sampled_from(KINDS),
    n_q=st.integers(1, 6),
    n_t=st.integers(1, 50),
    d=st.integers(1, 9),
    hidden=st.integers(1, 6),
    chunk=st.integers(1, 400),
    seed=st.integers(0, 2**16),
)
def test_any_shape_and_block_matches_concatenation(kind, n_q, n_t, d, hidden, chunk, seed):
    rng = np.random.default_rng(seed)
    q, t = _unit(rng, n_q, d), _unit(rng, n_t, d)
    module = _module(kind, d, hidden, seed=seed)
    heads = HeadWeights.from_module(module)
    np.testing.assert_allclose(
        heads.relevance(q, t, block=chunk), _reference(module, q, t),
        atol=1e-5, rtol=0,
    )
    m = int(rng.integers(1, n_t + 1))
    cand = np.stack([rng.permutation(n_t)[:m] for _ in range(n_q)])
    np.testing.assert_allclose(
        heads.relevance(q, t, cand, block=chunk),
        _reference(module, q, t, cand), atol=1e-5, rtol=0,
    )


def _blas_threads():
    from threadpoolctl import threadpool_info

    return {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_run_blocks_runs_each_block_on_one_blas_thread_and_restores_the_limit():
    from threadpoolctl import threadpool_limits

    from skriskrank._fast import run_blocks

    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        seen = []
        run_blocks(lambda i: seen.append((i, set(_blas_threads().values()))),
                   [(i,) for i in range(6)])
        assert sorted(i for i, _ in seen) == list(range(6))
        assert all(threads == {1} for _, threads in seen)
        assert _blas_threads() == before
        # A failing block raises in the caller, and the limit is still restored.
        with pytest.raises(ZeroDivisionError):
            run_blocks(lambda x: 1 / x, [(1,), (0,), (2,)])
        assert _blas_threads() == before
