"""Tests for the ToolGraph and GraphSmoother against a dense reference of the paper's formulas."""

import pickle
import re

import numpy as np
import pytest
import scipy.sparse as sp
from _reference import dense_spread
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import (
    check_estimator_cloneable,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

from skriskrank import PERMISSION_CATEGORIES, RankingBatch, ToolRegistry
from skriskrank._base import MSG_Y_LENGTH
from skriskrank._fast import spread
from skriskrank._graph import (
    EDGE_TYPES,
    MSG_BAD_RELEVANT,
    MSG_BLOCK_SIZE,
    MSG_EDGE_TYPES_STR,
    MSG_EMBEDDINGS_SHAPE,
    MSG_UNKNOWN_EDGE_TYPE,
    GraphSmoother,
    build_tool_graph,
)

# -- dense reference, written straight from the paper's definitions ---------------------------

#: The paper's edge types and the server edges.
ALL_TYPES = (*EDGE_TYPES, "server")


def dense_reference_graph(
    registry, emb, relevant, *, edge_types=EDGE_TYPES, min_cooccurrence=2,
    semantic_threshold=0.65, permission_edges="all",
):
    n = len(registry)
    Y = np.zeros((len(relevant), n))
    for q, rel in enumerate(relevant):
        Y[q, rel] = 1
    c = Y.T @ Y
    np.fill_diagonal(c, 0)
    c_max = c.max()
    d = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    cos = d @ d.T
    P = registry.permission_matrix.astype(float)
    m = P @ P.T
    risky = registry.risk >= 3
    terms = {
        "cooccurrence": np.where(c >= min_cooccurrence, 0.4 * c / max(c_max, 1), 0.0),
        "semantic": np.where((cos > semantic_threshold) & (cos > 0), 0.3 * cos, 0.0),
        "permission": np.where(m >= 1, 0.15 * m / 5, 0.0),
        "risk": np.where(risky[:, None] & risky[None, :] & (c >= 1), 0.15, 0.0),
        "server": np.array([[0.3 if a is not None and a == b else 0.0 for b in registry.servers]
                            for a in registry.servers]),
    }
    for t in terms.values():
        np.fill_diagonal(t, 0)
    enabled = [t for t in ALL_TYPES if t in edge_types]
    if permission_edges == "linked" and "permission" in enabled:
        others = sum((terms[t] for t in enabled if t != "permission"), np.zeros((n, n)))
        terms["permission"] = np.where(others > 0, terms["permission"], 0.0)
    w = sum((terms[t] for t in enabled), np.zeros((n, n)))
    if w.max() > 0:
        w = w / w.max()
    deg = w.sum(axis=1)
    dinv = np.where(deg > 0, 1 / np.sqrt(np.where(deg > 0, deg, 1)), 0.0)
    a_hat = dinv[:, None] * w * dinv[None, :]
    counted = ALL_TYPES if "server" in edge_types else EDGE_TYPES
    counts = {
        t: int(np.count_nonzero(np.triu(terms[t], 1))) if t in enabled else 0 for t in counted
    }
    return a_hat, counts


def dense_reference_smooth(a_hat, candidates, scores, alpha):
    out = np.empty(scores.shape)
    for q in range(len(scores)):
        c = candidates[q]
        sub = a_hat[np.ix_(c, c)]
        h0 = scores[q].astype(np.float64)
        h1 = (1 - alpha) * h0 + alpha * h0 @ sub.T
        out[q] = (h0 + h1) / 2
    return out


# -- random problems ---------------------------------------------------------------------------


def random_problem(seed, n_tools=None, n_train=None):
    """A random registry with explicit permissions, low-dimensional embeddings, gold sets."""
    rng = np.random.default_rng(seed)
    n = int(n_tools or rng.integers(5, 25))  # at least the default k
    risks = rng.choice([1, 2, 3, 4, 5, None], size=n).tolist()
    records = []
    for i in range(n):
        perms = [c for c in PERMISSION_CATEGORIES if rng.random() < 0.2]
        records.append(
            {"name": f"tool_{i}", "description": f"tool number {i}", "risk": risks[i],
             "permissions": perms, "server": rng.choice(["git", "fs", None])}
        )
    reg = ToolRegistry.from_records(records)
    # dim 3 makes cosines above 0.65 common, so the semantic term is exercised.
    emb = rng.normal(size=(n, 3)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    n_q = int(n_train or rng.integers(1, 30))
    # Gold sets drawn from a small pool so pairs repeat and reach min_cooccurrence.
    pool = rng.choice(n, size=min(n, 6), replace=False)
    gold = [
        {f"tool_{j}" for j in rng.choice(pool, size=rng.integers(1, min(4, len(pool)) + 1),
                                         replace=False)}
        for _ in range(n_q)
    ]
    return reg, emb, gold


def train_batch(reg, emb, n_q):
    return RankingBatch.full_pool(reg, emb[np.arange(n_q) % len(reg)], emb)


def query_batch(reg, emb, seed, n_q=7, m=None):
    """A batch of random scores, full pool when ``m`` is None, else random candidate subsets."""
    rng = np.random.default_rng(seed + 1000)
    full = RankingBatch.full_pool(reg, rng.normal(size=(n_q, emb.shape[1])).astype(np.float32),
                                  emb)
    if m is None:
        return full
    cand = np.stack([rng.choice(len(reg), size=m, replace=False) for _ in range(n_q)])
    scores = rng.normal(size=cand.shape).astype(np.float32)
    return full.replace(candidates=cand, scores=scores)


def scores_at(out, candidates):
    """``out``'s scores in the order of ``candidates`` (each row a permutation of out's)."""
    got = []
    for row_c, row_s, want in zip(out.candidates, out.scores, np.asarray(candidates), strict=True):
        of = dict(zip(row_c.tolist(), row_s.tolist(), strict=True))
        got.append([of[c] for c in want.tolist()])
    return np.array(got, dtype=np.float32).reshape(np.shape(candidates))


def relevant_of(reg, gold):
    return [np.unique(reg.index_of(sorted(g))) for g in gold]


edge_subsets = st.sets(st.sampled_from(ALL_TYPES)).map(
    lambda s: tuple(t for t in ALL_TYPES if t in s)
)

# -- graph construction ------------------------------------------------------------------------


@settings(deadline=None, max_examples=40)
@given(
    seed=st.integers(0, 10_000),
    edge_types=edge_subsets,
    min_cooccurrence=st.integers(1, 3),
    semantic_threshold=st.sampled_from([-0.5, 0.0, 0.3, 0.65, 0.9]),
    permission_edges=st.sampled_from(["all", "linked"]),
)
def test_graph_matches_dense_reference(
    seed, edge_types, min_cooccurrence, semantic_threshold, permission_edges
):
    reg, emb, gold = random_problem(seed)
    params = dict(edge_types=edge_types, min_cooccurrence=min_cooccurrence,
                  semantic_threshold=semantic_threshold, permission_edges=permission_edges)
    rel = relevant_of(reg, gold)
    graph, counts = build_tool_graph(reg, emb, rel, **params)
    ref, ref_counts = dense_reference_graph(reg, emb.astype(np.float64), rel, **params)
    assert isinstance(graph, sp.csr_array)
    np.testing.assert_allclose(graph.toarray(), ref, atol=1e-6, rtol=0)
    assert counts == ref_counts
    dense = graph.toarray()
    np.testing.assert_array_equal(dense, dense.T)
    assert np.all(np.diag(dense) == 0)
    assert np.all(graph.data > 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("block_size", [1, 2, 5])
def test_block_size_does_not_change_graph(seed, block_size):
    reg, emb, gold = random_problem(seed, n_tools=23)
    rel = relevant_of(reg, gold)
    default, counts = build_tool_graph(reg, emb, rel, semantic_threshold=0.3)
    tiny, tiny_counts = build_tool_graph(reg, emb, rel, semantic_threshold=0.3,
                                         block_size=block_size)
    assert tiny_counts == counts
    # Same edges; weights equal up to float32 BLAS rounding, which depends on block shape.
    assert ((default != 0) != (tiny != 0)).nnz == 0
    np.testing.assert_allclose(tiny.toarray(), default.toarray(), atol=1e-7, rtol=0)


def test_graph_by_hand():
    # (a, b) co-occur twice: 0.4; (b, c) once, both risky: 0.15; c and d share two
    # permission categories: 0.15 * 2 / 5 = 0.06; e is isolated.
    reg = ToolRegistry.from_records([
        {"name": "a", "description": "a tool", "risk": 1, "permissions": []},
        {"name": "b", "description": "b tool", "risk": 3, "permissions": []},
        {"name": "c", "description": "c tool", "risk": None,
         "permissions": ["file_write", "network_access"]},
        {"name": "d", "description": "d tool", "risk": 1,
         "permissions": ["file_write", "network_access", "code_execution"]},
        {"name": "e", "description": "e tool", "risk": 5, "permissions": []},
    ])
    graph, counts = build_tool_graph(reg, np.eye(5), [[0, 1], [0, 1], [1, 2], [4]])
    assert counts == {"cooccurrence": 1, "semantic": 0, "permission": 1, "risk": 1}
    w = np.zeros((5, 5))
    w[0, 1] = 1.0
    w[1, 2] = 0.15 / 0.4  # unknown risk counts as risky
    w[2, 3] = 0.06 / 0.4
    w = w + w.T
    deg = w.sum(axis=1)
    with np.errstate(divide="ignore"):
        dinv = np.where(deg > 0, deg ** -0.5, 0)
    np.testing.assert_allclose(graph.toarray(), dinv[:, None] * w * dinv[None, :], atol=1e-12)
    assert graph[[4]].nnz == 0


def test_permission_linked_only_reweights_existing_edges():
    reg, emb, gold = random_problem(3, n_tools=24, n_train=20)
    rel = relevant_of(reg, gold)
    g_all, c_all = build_tool_graph(reg, emb, rel, permission_edges="all")
    g_linked, c_linked = build_tool_graph(reg, emb, rel, permission_edges="linked")
    g_none, _ = build_tool_graph(reg, emb, rel,
                                 edge_types=("cooccurrence", "semantic", "risk"))
    assert c_linked["permission"] <= c_all["permission"]
    assert c_all["permission"] > c_linked["permission"]  # this seed has permission-only pairs
    # linked: the same edges as without the permission term, only re-weighted
    assert ((g_linked != 0) != (g_none != 0)).nnz == 0
    assert g_all.nnz > g_linked.nnz


def test_build_tool_graph_bad_input():
    reg, emb, gold = random_problem(0, n_tools=5)
    rel = relevant_of(reg, gold)
    with pytest.raises(ValueError, match=re.escape(MSG_EMBEDDINGS_SHAPE.format(
            n_tools=5, shape=(4, 3)))):
        build_tool_graph(reg, emb[:4], rel)
    with pytest.raises(ValueError, match=re.escape(MSG_BAD_RELEVANT.format(
            i=1, n_tools=5, value=[0, 5]))):
        build_tool_graph(reg, emb, [[0], [0, 5]])
    for edge_types in (EDGE_TYPES, ("cooccurrence",)):  # checked even when no product runs
        with pytest.raises(ValueError, match=re.escape(MSG_BLOCK_SIZE.format(value=0))):
            build_tool_graph(reg, emb, rel, edge_types=edge_types, block_size=0)
    with pytest.raises(ValueError, match=re.escape(MSG_UNKNOWN_EDGE_TYPE.format(
            name="social", allowed=list(ALL_TYPES)))):
        build_tool_graph(reg, emb, rel, edge_types=("semantic", "social"))
    with pytest.raises(ValueError, match="permission_edges"):
        build_tool_graph(reg, emb, rel, permission_edges="some")


# -- smoothing ---------------------------------------------------------------------------------


@settings(deadline=None, max_examples=30)
@given(
    seed=st.integers(0, 10_000),
    alpha=st.floats(0, 1),
    edge_types=edge_subsets,
    subset=st.booleans(),
)
def test_smoothing_matches_dense_reference(seed, alpha, edge_types, subset):
    reg, emb, gold = random_problem(seed)
    smoother = GraphSmoother(alpha=alpha, edge_types=edge_types, semantic_threshold=0.3)
    smoother.fit(train_batch(reg, emb, len(gold)), gold)
    ref_graph, _ = dense_reference_graph(reg, emb.astype(np.float64), relevant_of(reg, gold),
                                         edge_types=edge_types, semantic_threshold=0.3)
    m = max(1, len(reg) // 2) if subset else None
    batch = query_batch(reg, emb, seed, m=m)
    out = smoother.transform(batch)
    assert out.scores.dtype == np.float32
    assert out.is_full_pool == batch.is_full_pool
    expected = dense_reference_smooth(ref_graph, np.asarray(batch.candidates), batch.scores,
                                      alpha)
    np.testing.assert_allclose(scores_at(out, batch.candidates), expected, atol=1e-5,
                               rtol=1e-5)
    # Ranked lists come back sorted by the smoothed scores.
    assert (np.diff(out.scores, axis=1) <= 0).all() or batch.is_full_pool


@settings(deadline=None, max_examples=30)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 12), n_q=st.integers(1, 6),
       full=st.booleans())
def test_compiled_spread_matches_the_dense_reference(seed, m, n_q, full):
    reg, emb, gold = random_problem(seed)
    smoother = GraphSmoother(semantic_threshold=0.3).fit(train_batch(reg, emb, len(gold)), gold)
    batch = query_batch(reg, emb, seed, n_q=n_q, m=None if full else min(m, len(reg)))
    cand = None if full else batch.candidates
    np.testing.assert_allclose(spread(smoother.graph_, cand, batch.scores),
                               dense_spread(smoother.graph_, cand, batch.scores),
                               rtol=1e-12, atol=1e-12)


def test_full_pool_path_equals_subset_path():
    reg, emb, gold = random_problem(5, n_tools=15, n_train=20)
    smoother = GraphSmoother(alpha=0.5, semantic_threshold=0.3).fit(
        train_batch(reg, emb, len(gold)), gold)
    full = query_batch(reg, emb, 5, n_q=4)
    assert full.is_full_pool
    perm = np.stack([np.random.default_rng(i).permutation(len(reg)) for i in range(4)])
    shuffled = full.replace(candidates=perm,
                            scores=np.take_along_axis(full.scores, perm, axis=1))
    assert not shuffled.is_full_pool
    a = smoother.transform(full).scores
    b = scores_at(smoother.transform(shuffled), perm)
    np.testing.assert_allclose(np.take_along_axis(a, perm, axis=1), b, atol=1e-6)


class _UnsliceableGraph(sp.csr_array):
    """A graph that fails if anything indexes it: the full pool must use its CSR arrays."""

    def __getitem__(self, key):
        raise AssertionError(f"the graph was sliced with {key!r}")


def test_full_pool_transform_never_slices_the_graph():
    # Regression: up to dc87686 every full-pool transform re-sliced graph[linked][:, linked],
    # a copy of the graph's linked block per call; checked to fail there with this wrapper.
    reg, emb, gold = random_problem(6, n_tools=15, n_train=20)
    smoother = GraphSmoother(alpha=0.5, semantic_threshold=0.3).fit(
        train_batch(reg, emb, len(gold)), gold)
    assert smoother.n_edges_ > 0
    batch = query_batch(reg, emb, 6, n_q=4)
    assert batch.is_full_pool
    expected = smoother.transform(batch).scores
    smoother.graph_ = _UnsliceableGraph(smoother.graph_)
    np.testing.assert_array_equal(smoother.transform(batch).scores, expected)


def test_candidate_only_receives_from_its_own_query_candidates():
    reg = ToolRegistry.from_records(
        [{"name": n, "description": n + " tool", "risk": 1} for n in "abc"])
    emb = np.eye(3, dtype=np.float32)
    smoother = GraphSmoother(alpha=1.0, k=2).fit(
        RankingBatch.full_pool(reg, emb[:2], emb), [{"a", "b"}, {"a", "b"}])
    base = RankingBatch.full_pool(reg, emb[:2], emb)
    # Query 0 has a and c (b, a's only neighbour, is missing); query 1 has a and b.
    batch = base.replace(candidates=np.array([[0, 2], [0, 1]]),
                         scores=np.array([[0.0, 1.0], [0.0, 1.0]], dtype=np.float32))
    out = scores_at(smoother.transform(batch), batch.candidates)
    np.testing.assert_allclose(out, [[0.0, 0.5], [0.5, 0.5]])


def test_alpha_zero_leaves_scores_unchanged():
    reg, emb, gold = random_problem(7, n_tools=12, n_train=20)
    for m in (None, 5):
        batch = query_batch(reg, emb, 7, m=m)
        smoother = GraphSmoother(alpha=0.0, semantic_threshold=0.3).fit(
            train_batch(reg, emb, len(gold)), gold)
        assert smoother.n_edges_ > 0
        out = smoother.transform(batch)
        np.testing.assert_array_equal(scores_at(out, batch.candidates), batch.scores)


@pytest.mark.parametrize("m", [None, 6])
def test_no_edges_keeps_ranking_and_scales_scores(m):
    # The paper's formula gives an isolated node (1 - alpha / 2) * s: the same ranking.
    reg, emb, gold = random_problem(8, n_tools=12, n_train=20)
    smoother = GraphSmoother(alpha=0.4, edge_types=()).fit(
        train_batch(reg, emb, len(gold)), gold)
    assert smoother.n_edges_ == 0 and smoother.graph_.nnz == 0
    assert smoother.edge_counts_ == dict.fromkeys(EDGE_TYPES, 0)
    batch = query_batch(reg, emb, 8, m=m)
    out = smoother.transform(batch)
    np.testing.assert_allclose(scores_at(out, batch.candidates), 0.8 * batch.scores, rtol=1e-6)
    ranked = np.take_along_axis(batch.candidates, np.argsort(-batch.scores, axis=1,
                                                             kind="stable"), axis=1)
    np.testing.assert_array_equal(out.ranked_indices(), ranked)


def test_semantic_only():
    reg, emb, gold = random_problem(9, n_tools=16, n_train=20)
    smoother = GraphSmoother(edge_types=["semantic"], semantic_threshold=0.3).fit(
        train_batch(reg, emb, len(gold)), gold)
    counts = smoother.edge_counts_
    assert counts["semantic"] == smoother.n_edges_ > 0
    assert counts["cooccurrence"] == counts["permission"] == counts["risk"] == 0
    cos = emb @ emb.T
    linked = smoother.graph_.toarray() > 0
    np.testing.assert_array_equal(linked, (cos > 0.3) & ~np.eye(len(reg), dtype=bool))


def test_isolated_node_row_is_zero_and_score_scaled():
    reg, emb, gold = random_problem(10, n_tools=10, n_train=15)
    smoother = GraphSmoother(alpha=0.6, edge_types=("cooccurrence",)).fit(
        train_batch(reg, emb, len(gold)), gold)
    dense = smoother.graph_.toarray()
    isolated = np.flatnonzero(~dense.any(axis=1))
    assert isolated.size > 0  # at most 6 tools are ever gold
    assert not dense[:, isolated].any()
    batch = query_batch(reg, emb, 10)
    out = smoother.transform(batch).scores
    np.testing.assert_allclose(out[:, isolated], 0.7 * batch.scores[:, isolated], rtol=1e-6)


def test_graph_attributes():
    reg, emb, gold = random_problem(11, n_tools=18, n_train=25)
    smoother = GraphSmoother(semantic_threshold=0.3).fit(train_batch(reg, emb, len(gold)), gold)
    g = smoother.graph_
    assert isinstance(g, sp.csr_array) and g.has_sorted_indices
    assert (g != g.T).nnz == 0
    assert smoother.n_edges_ == g.nnz // 2
    counts = smoother.edge_counts_
    assert set(counts) == set(EDGE_TYPES)
    assert max(counts.values()) <= smoother.n_edges_ <= sum(counts.values())
    assert smoother.registry_ is reg
    _, ref_counts = dense_reference_graph(reg, emb.astype(np.float64), relevant_of(reg, gold),
                                          semantic_threshold=0.3)
    assert counts == ref_counts


def test_fit_transform_equals_fit_then_transform_and_input_untouched():
    reg, emb, gold = random_problem(12, n_tools=10, n_train=12)
    batch = train_batch(reg, emb, len(gold))
    before = batch.scores.copy()
    a = GraphSmoother(semantic_threshold=0.3).fit_transform(batch, gold)
    b = GraphSmoother(semantic_threshold=0.3).fit(batch, gold).transform(batch)
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(batch.scores, before)


# -- estimator API -----------------------------------------------------------------------------


def test_fit_returns_self_and_predict():
    reg, emb, gold = random_problem(13, n_tools=9, n_train=10)
    smoother = GraphSmoother(k=3)
    assert smoother.fit(train_batch(reg, emb, len(gold)), gold) is smoother
    batch = query_batch(reg, emb, 13)
    top = smoother.predict(batch)
    assert top.shape == (batch.n_queries, 3)
    np.testing.assert_array_equal(top, smoother.transform(batch).ranked_names(3))
    np.testing.assert_array_equal(smoother.rank(batch, k=2),
                                  smoother.transform(batch).ranked_indices(2))


def test_not_fitted():
    reg, emb, _ = random_problem(14, n_tools=5)
    batch = query_batch(reg, emb, 14)
    with pytest.raises(NotFittedError):
        GraphSmoother().transform(batch)
    with pytest.raises(NotFittedError):
        GraphSmoother().predict(batch)


def test_clone_and_params_round_trip():
    smoother = GraphSmoother(alpha=0.5, edge_types=("semantic",), min_cooccurrence=3,
                             semantic_threshold=0.8, permission_edges="linked", k=7)
    params = smoother.get_params()
    assert params == {"alpha": 0.5, "edge_types": ("semantic",), "min_cooccurrence": 3,
                      "semantic_threshold": 0.8, "permission_edges": "linked", "k": 7}
    cloned = clone(smoother)
    assert cloned is not smoother and cloned.get_params() == params
    assert GraphSmoother().set_params(**params).get_params() == params


@pytest.mark.parametrize(
    "check",
    [check_estimator_cloneable, check_no_attributes_set_in_init, check_get_params_invariance,
     check_set_params, check_parameters_default_constructible],
)
def test_sklearn_data_free_checks(check):
    check("GraphSmoother", GraphSmoother())


def test_tags():
    tags = GraphSmoother().__sklearn_tags__()
    assert not tags.input_tags.two_d_array
    assert tags.target_tags.required


def test_pickle_round_trip():
    reg, emb, gold = random_problem(15, n_tools=12, n_train=15)
    smoother = GraphSmoother(semantic_threshold=0.3).fit(train_batch(reg, emb, len(gold)), gold)
    loaded = pickle.loads(pickle.dumps(smoother))
    batch = query_batch(reg, emb, 15, m=5)
    np.testing.assert_array_equal(loaded.transform(batch).scores,
                                  smoother.transform(batch).scores)
    assert (loaded.graph_ != smoother.graph_).nnz == 0


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("edge_types", [("semantic", "social"), ["social"]])
def test_unknown_edge_type(edge_types):
    reg, emb, gold = random_problem(16, n_tools=5, n_train=3)
    with pytest.raises(ValueError, match=re.escape(MSG_UNKNOWN_EDGE_TYPE.format(
            name="social", allowed=list(ALL_TYPES)))):
        GraphSmoother(edge_types=edge_types).fit(train_batch(reg, emb, 3), gold)


def test_edge_types_bare_string():
    reg, emb, gold = random_problem(16, n_tools=5, n_train=3)
    with pytest.raises(ValueError, match=re.escape(MSG_EDGE_TYPES_STR.format(name="semantic"))):
        build_tool_graph(reg, emb, relevant_of(reg, gold), edge_types="semantic")
    with pytest.raises(InvalidParameterError, match="edge_types"):
        GraphSmoother(edge_types="semantic").fit(train_batch(reg, emb, 3), gold)


@pytest.mark.parametrize(
    "params", [{"alpha": 1.5}, {"min_cooccurrence": 0}, {"semantic_threshold": 2.0}, {"k": 0},
               {"permission_edges": "none"}, {"edge_types": None}],
)
def test_bad_parameters(params):
    reg, emb, gold = random_problem(17, n_tools=5, n_train=3)
    with pytest.raises(InvalidParameterError):
        GraphSmoother(**params).fit(train_batch(reg, emb, 3), gold)


def test_y_with_unknown_tool():
    reg, emb, gold = random_problem(18, n_tools=5, n_train=3)
    gold[1] = {"tool_0", "no_such_tool"}
    with pytest.raises(ValueError, match="no_such_tool"):
        GraphSmoother().fit(train_batch(reg, emb, 3), gold)


def test_y_length_mismatch():
    reg, emb, gold = random_problem(19, n_tools=5, n_train=3)
    with pytest.raises(ValueError, match=re.escape(MSG_Y_LENGTH.format(n_y=3, n_x=4))):
        GraphSmoother().fit(train_batch(reg, emb, 4), gold)


def test_y_required():
    reg, emb, _ = random_problem(20, n_tools=5)
    with pytest.raises(ValueError, match="y is required"):
        GraphSmoother().fit(train_batch(reg, emb, 3), None)


def test_batch_from_another_registry():
    reg, emb, gold = random_problem(21, n_tools=6, n_train=4)
    other, other_emb, _ = random_problem(22, n_tools=6)
    smoother = GraphSmoother().fit(train_batch(reg, emb, 4), gold)
    with pytest.raises(ValueError, match="was fitted on registry"):
        smoother.transform(query_batch(other, other_emb, 0))


def test_not_a_batch():
    with pytest.raises(TypeError, match="RankingBatch"):
        GraphSmoother().fit(np.zeros((3, 3)), [{"a"}] * 3)


# -- real data ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_ultratool_graph(ultratool):
    reg = ultratool.registry
    gold = list(ultratool.relevant)
    rng = np.random.default_rng(0)
    # Random unit embeddings stand in for the encoder: the cosines of 2,032 random
    # 384-d directions stay far below 0.65, so no semantic edges appear.
    emb = rng.normal(size=(len(reg), 384)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    smoother = GraphSmoother().fit(train_batch(reg, emb, len(gold)), gold)
    g = smoother.graph_
    counts = smoother.edge_counts_
    assert isinstance(g, sp.csr_array) and g.shape == (len(reg), len(reg))
    assert (g != g.T).nnz == 0
    assert np.all(g.diagonal() == 0)
    assert counts["semantic"] == 0
    # 436 distinct gold tools, each in at least one query: hundreds of repeated pairs, far
    # fewer than all 436 * 435 / 2 pairs.
    assert 100 < counts["cooccurrence"] < 436 * 435 // 2
    assert counts["permission"] > 0
    assert 0 < counts["risk"] < counts["cooccurrence"] * 10
    assert max(counts.values()) <= smoother.n_edges_ <= sum(counts.values())
    # Every stored weight is positive, so exactly the tools with an edge have a non-zero row.
    assert np.all(g.data > 0)
    assert np.count_nonzero(np.diff(g.indptr)) == np.count_nonzero(g.sum(axis=1))
    cand = np.stack([rng.choice(len(reg), size=100, replace=False) for _ in range(len(gold))])
    batch = train_batch(reg, emb, len(gold))
    sub = batch.replace(candidates=cand, scores=rng.random(cand.shape, dtype=np.float32))
    out = smoother.transform(sub)
    assert out.scores.shape == (len(gold), 100) and np.all(np.isfinite(out.scores))


def test_zero_embedding_has_no_semantic_edges():
    reg, emb, gold = random_problem(23, n_tools=8)
    emb = emb.copy()
    emb[2] = 0
    graph, counts = build_tool_graph(reg, emb, relevant_of(reg, gold),
                                     edge_types=("semantic",), semantic_threshold=-1)
    dense = graph.toarray()
    assert np.all(np.isfinite(dense))
    assert not dense[2].any()
    assert counts["semantic"] == graph.nnz // 2 > 0


@pytest.mark.parametrize("pattern", ["random", "stride", "dense_block"])
def test_compiled_spread_hash_table_matches_the_reference(pattern):
    # The kernel finds candidate columns through a small hash table; strided ids (multiples
    # of a power of two) and long candidate lists must all give the dense reference's sums.
    rng = np.random.default_rng(11)
    n = 4096
    a = sp.random_array((n, n), density=0.01, format="csr", rng=rng, dtype=np.float64)
    a = sp.csr_array(a + a.T)
    n_q, m = 4, 300
    if pattern == "random":
        cand = np.stack([rng.choice(n, m, replace=False) for _ in range(n_q)])
    elif pattern == "stride":
        cand = np.tile(np.arange(0, m * 8, 8), (n_q, 1)) % n
    else:
        cand = np.tile(np.arange(m), (n_q, 1))
    scores = rng.normal(size=cand.shape).astype(np.float32)
    np.testing.assert_allclose(spread(a, cand, scores), dense_spread(a, cand, scores),
                               rtol=1e-12, atol=1e-12)
