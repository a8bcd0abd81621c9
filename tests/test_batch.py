"""RankingBatch: validation, its two forms, and the compiled top-k it ranks the full pool by."""

import re

import numpy as np
import pytest
from _reference import stable_order
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from skriskrank import RankingBatch, ToolRegistry
from skriskrank._batch import MSG_ARRAY, MSG_RANGE, MSG_REPLACE_SCORES, MSG_SCORES_NEEDED
from skriskrank._fast import topk_rows
from skriskrank._fast._topk import MSG_TOPK_K

#: Few distinct values, so that ties (and ties across the k-th place) are common.
SCORE = st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.0, np.inf, -np.inf, np.nan])


@settings(deadline=None, max_examples=150)
@given(
    scores=hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=2, max_side=40),
                      elements=SCORE),
    k=st.integers(0, 45),
)
def test_topk_is_the_stable_descending_sort(scores, k):
    k = min(k, scores.shape[1])
    np.testing.assert_array_equal(topk_rows(scores, k), stable_order(scores, k))


def test_topk_on_long_rows():
    # The full-pool shape the heap is for: few winners among many scores, float64 too.
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(7, 5000))
    scores[:, ::50] = scores[:, :1]  # ties with a row's first score
    np.testing.assert_array_equal(topk_rows(scores, 100), stable_order(scores, 100))
    s32 = scores.astype(np.float32)
    np.testing.assert_array_equal(topk_rows(s32, 1), stable_order(s32, 1))


@pytest.mark.parametrize("k", [-1, 4, 100])
def test_topk_refuses_k_outside_the_row(k):
    # The kernel does not bound-check: a k above the row's width read past its end.
    with pytest.raises(ValueError, match=re.escape(MSG_TOPK_K.format(k=k, m=3))):
        topk_rows(np.zeros((2, 3), np.float32), k)


def _registry(n):
    return ToolRegistry.from_records(
        [{"name": f"t{i}", "description": f"tool {i}", "risk": 1} for i in range(n)])


def test_full_pool_and_ranked_lists_read_the_same_way():
    reg = _registry(6)
    tools = np.eye(6, dtype=np.float32)
    q = np.array([[0.3, 0.9, 0.3, 0.0, 0.9, 0.1]], dtype=np.float32)
    batch = RankingBatch.full_pool(reg, q, tools)
    assert batch.is_full_pool and batch.scores_pending
    assert batch.order(3).tolist() == [[1, 4, 0]]
    assert not batch.scores_pending
    assert batch.ranked_names(2).tolist() == [["t1", "t4"]]
    top = batch.top(4)
    assert not top.is_full_pool and top.candidates.dtype == np.int64
    assert top.candidates.tolist() == [[1, 4, 0, 2]]
    np.testing.assert_array_equal(top.scores, np.float32([[0.9, 0.9, 0.3, 0.3]]))
    assert top.ranked_indices().tolist() == batch.ranked_indices(4).tolist()
    # A step that rescores ranked lists re-sorts them, ties keeping the incoming order.
    again = top.with_scores(np.array([[0.0, 1.0, 1.0, 0.5]], dtype=np.float32))
    assert again.candidates.tolist() == [[4, 0, 2, 1]]
    assert again.scores.tolist() == [[1.0, 1.0, 0.5, 0.0]]
    # Reordering keeps each candidate's score.
    moved = again.take(np.array([[3, 0, 1, 2]]))
    assert moved.candidates.tolist() == [[1, 4, 0, 2]]
    assert moved.scores.tolist() == [[0.0, 1.0, 1.0, 0.5]]
    assert top.top(2).candidates.tolist() == [[1, 4]]


def test_rescoring_a_shortened_list_keeps_the_dropped_candidates_out():
    # A filter that keeps fewer than the list holds records each row's length; a later
    # step that rescores the list must not bring a dropped candidate back into it.
    reg = _registry(5)
    batch = RankingBatch(reg, np.ones((2, 5), np.float32), np.eye(5, dtype=np.float32),
                         np.array([[0, 1, 2, 3], [4, 3, 2, 1]]),
                         np.float32([[4, 3, 2, 1], [4, 3, 2, 1]]), lengths=np.array([2, 3]))
    again = batch.with_scores(np.float32([[0, 1, 9, 9], [0, 1, 2, 9]]))
    assert again.lengths.tolist() == [2, 3]
    assert again.ranked_indices().tolist() == [[1, 0, -1, -1], [2, 3, 4, -1]]


def test_the_full_pool_is_explicit_and_shares_one_arange():
    reg = _registry(4)
    emb = np.eye(4, dtype=np.float32)
    full = RankingBatch.full_pool(reg, emb[:2], emb)
    ranked = RankingBatch(reg, emb[:2], emb, np.array([[0, 1, 2, 3]] * 2),
                          np.zeros((2, 4), np.float32))
    assert full.is_full_pool and not ranked.is_full_pool
    assert full.candidates.strides[0] == 0  # a broadcast, not a copy
    assert full.n_candidates == ranked.n_candidates == 4


def test_bad_batches_are_named():
    reg = _registry(3)
    emb = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match=re.escape(MSG_ARRAY.format(
            name="query_embeddings", ndim=2, dtype="float32", hint=" (use .astype(np.float32))",
            what="a 2-d float64 array"))):
        RankingBatch.full_pool(reg, np.eye(3)[:1], emb)
    with pytest.raises(ValueError, match="tool_embeddings has shape"):
        RankingBatch.full_pool(reg, emb[:1], emb[:2])
    with pytest.raises(ValueError, match="candidates must be a 2-d int64 array"):
        RankingBatch(reg, emb[:1], emb, np.array([[0, 1]], np.int32), np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match=re.escape(MSG_RANGE.format(i=0, j=1, value=3, n_max=2))):
        RankingBatch(reg, emb[:1], emb, np.array([[0, 3]]), np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match=re.escape(MSG_SCORES_NEEDED)):
        RankingBatch(reg, emb[:1], emb, np.array([[0, 1]]))
    with pytest.raises(ValueError, match="scores has shape"):
        RankingBatch(reg, emb[:1], emb, np.array([[0, 1]]), np.zeros((1, 3), np.float32))
    full = RankingBatch.full_pool(reg, emb[:1], emb)
    with pytest.raises(ValueError, match=re.escape(MSG_REPLACE_SCORES)):
        full.replace(candidates=np.array([[0, 1]]))
    assert full.scores_pending  # the failed replace did not compute the cosine
