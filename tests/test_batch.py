"""RankingBatch.order: the stable descending sort, by either engine, ties and NaN included."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from skriskrank import RankingBatch, ToolRegistry, _topk
from skriskrank._batch import _order

ENGINES = ["numba", "numpy"] if _topk.available() else ["numpy"]

#: Few distinct values, so that ties (and ties across the k-th place) are common.
SCORE = st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.0, np.inf, -np.inf, np.nan])


@settings(deadline=None, max_examples=150)
@given(
    scores=hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=2, max_side=40),
                      elements=SCORE),
    k=st.integers(1, 45),
    engine=st.sampled_from(ENGINES),
)
def test_order_is_the_stable_descending_sort(scores, k, engine):
    want = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    got = _order(scores, k, engine)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_order_on_long_rows(engine):
    # The full-pool shape the heap is for: few winners among many scores, float64 too.
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(7, 5000))
    scores[:, ::50] = scores[:, :1]  # ties with a row's first score
    want = np.argsort(-scores, axis=1, kind="stable")[:, :100]
    np.testing.assert_array_equal(_order(scores, 100, engine), want)
    np.testing.assert_array_equal(_order(scores.astype(np.float32), 1, engine),
                                  np.argsort(-scores.astype(np.float32), axis=1,
                                             kind="stable")[:, :1])


def test_batch_order_uses_the_same_ranking():
    reg = ToolRegistry.from_records(
        [{"name": f"t{i}", "description": f"tool {i}", "risk": 1} for i in range(6)])
    tools = np.eye(6, dtype=np.float32)
    q = np.array([[0.3, 0.9, 0.3, 0.0, 0.9, 0.1]], dtype=np.float32)
    batch = RankingBatch.full_pool(reg, q, tools)
    assert batch.order(3).tolist() == [[1, 4, 0]]
    assert batch.order().tolist() == [[1, 4, 0, 2, 5, 3]]
    assert batch.ranked_names(2).tolist() == [["t1", "t4"]]
