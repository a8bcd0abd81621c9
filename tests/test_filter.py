"""Tests for the greedy rule filter (skriskrank._filter)."""

import pickle
import re

import numpy as np
import pytest
from _reference import greedy_filter as oracle
from _reference import similarity
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

from skriskrank import UNKNOWN_RISK, RankingBatch, RuleFilter, ToolRegistry, rule_filter
from skriskrank._filter import (
    MSG_DUPLICATE,
    MSG_EMBEDDINGS_MISSING,
    MSG_EMBEDDINGS_NONFINITE,
    MSG_LENGTH,
    MSG_NOTHING_ACCEPTABLE,
    MSG_OUT_OF_RANGE,
    MSG_PERMISSION_COUNT,
    MSG_RANKED_DTYPE,
    MSG_RANKED_SHAPE,
)

OFF = dict(max_high_risk=None, max_broad=None, redundancy_threshold=None)


# -- strategies -----------------------------------------------------------------------------
@st.composite
def problems(draw, max_tools=12):
    n_tools = draw(st.integers(1, max_tools))
    dim = draw(st.integers(1, 4))
    # Small integer grids give exact duplicates and similarities right at the threshold.
    raw = np.array(
        draw(st.lists(st.lists(st.integers(-2, 2), min_size=dim, max_size=dim),
                      min_size=n_tools, max_size=n_tools)), dtype=float)
    raw[np.all(raw == 0, axis=1), 0] = 1.0
    emb = (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(
        draw(st.sampled_from([np.float32, np.float64])))
    risk = np.array(draw(st.lists(st.sampled_from([1, 2, 3, 4, 5, UNKNOWN_RISK, 0, -1, 6]),
                                  min_size=n_tools, max_size=n_tools)))
    counts = np.array(draw(st.lists(st.integers(0, 3), min_size=n_tools, max_size=n_tools)))
    n = draw(st.integers(0, n_tools))
    ranked = np.array(draw(st.permutations(range(n_tools)))[:n], dtype=np.int64)
    options = dict(
        k=draw(st.integers(1, 6)),
        max_high_risk=draw(st.one_of(st.none(), st.integers(0, 3))),
        high_risk_level=draw(st.integers(2, 5)),
        max_broad=draw(st.one_of(st.none(), st.integers(0, 3))),
        broad_level=draw(st.integers(1, 3)),
        redundancy_threshold=draw(st.one_of(
            st.none(), st.sampled_from([-0.5, 0.0, 0.5, 0.7071067811865476, 0.8, 0.9, 1.0]))),
    )
    return ranked, risk, counts, emb, options


# -- property tests -------------------------------------------------------------------------
@settings(deadline=None, max_examples=120)
@given(problems())
def test_matches_oracle_and_is_a_permutation(p):
    ranked, risk, counts, emb, options = p
    out = rule_filter(ranked, risk, counts, emb, **options)
    assert sorted(out.tolist()) == sorted(ranked.tolist())
    acc, dfr, rest = oracle(ranked, risk, counts, emb, **options)
    assert out.tolist() == acc + dfr + rest


@settings(deadline=None, max_examples=80)
@given(problems())
def test_invariants_of_the_top_k(p):
    ranked, risk, counts, emb, options = p
    k = options["k"]
    out = rule_filter(ranked, risk, counts, emb, **options)
    acc, dfr, rest = oracle(ranked, risk, counts, emb, **options)
    # Accepted and deferred tools each keep their relative order.
    pos = {t: i for i, t in enumerate(ranked.tolist())}
    assert [pos[t] for t in acc] == sorted(pos[t] for t in acc)
    assert [pos[t] for t in dfr] == sorted(pos[t] for t in dfr)
    top = out[: min(k, len(out))].tolist()
    if len(acc) == k:
        # No fallback: the top-k are the accepted ones, within every rule.
        assert top == acc
        level = options["high_risk_level"]
        n_high = sum(not (1 <= risk[t] < level) for t in top)
        if options["max_high_risk"] is not None:
            assert n_high <= options["max_high_risk"]
        if options["max_broad"] is not None:
            assert sum(counts[t] >= options["broad_level"] for t in top) <= options["max_broad"]
        thr = options["redundancy_threshold"]
        if thr is not None and thr < 1:
            for i, a in enumerate(top):
                for b in top[i + 1:]:
                    assert similarity(emb[a], emb[b]) <= thr
    else:
        # Fallback only when fewer than k pass: then the scan saw everything.
        assert rest == []
        assert top == (acc + dfr)[: len(top)]


@settings(deadline=None, max_examples=60)
@given(problems(), st.sampled_from(["max_high_risk", "max_broad"]), st.integers(1, 3))
def test_raising_a_count_cap_never_lowers_the_number_accepted(p, cap, step):
    ranked, risk, counts, emb, options = p
    # With the redundancy rule off, the count caps are monotone (see the hand example
    # below for why they are not with it on).
    options = dict(options, redundancy_threshold=None)
    low = options[cap] if options[cap] is not None else 0
    n_low = len(oracle(ranked, risk, counts, emb, **dict(options, **{cap: low}))[0])
    out_low = rule_filter(ranked, risk, counts, emb, **dict(options, **{cap: low}))
    for higher in (low + step, None):
        n_high = len(oracle(ranked, risk, counts, emb, **dict(options, **{cap: higher}))[0])
        assert n_high >= n_low
    assert out_low.tolist() == sum(oracle(ranked, risk, counts, emb,
                                          **dict(options, **{cap: low})), [])


def test_raising_a_cap_can_lower_the_count_when_redundancy_interacts():
    # Tool 0 is high risk; 1 and 2 are each near-duplicates of 0 but not of each other.
    emb = np.array([[1.0, 0.0, 0.0], [0.93, 0.3676, 0.0], [0.93, 0.0, 0.3676]])
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    risk, counts = np.array([4, 1, 1]), np.zeros(3, int)
    tight = rule_filter([0, 1, 2], risk, counts, emb, k=3, max_high_risk=0)
    loose = rule_filter([0, 1, 2], risk, counts, emb, k=3, max_high_risk=1)
    assert tight.tolist() == [1, 2, 0]  # two accepted
    assert loose.tolist() == [0, 1, 2]  # one accepted, two deferred


@settings(deadline=None, max_examples=50)
@given(problems())
def test_all_caps_off_is_the_identity(p):
    ranked, risk, counts, emb, options = p
    out = rule_filter(ranked, risk, counts, emb, options["k"], high_risk_level=3, **OFF)
    assert out.tolist() == ranked.tolist()
    # Caps of k or more and a threshold of 1.0 are off too.
    k = options["k"]
    out = rule_filter(ranked, risk, counts, emb, k, max_high_risk=k, max_broad=k,
                      redundancy_threshold=1.0)
    assert out.tolist() == ranked.tolist()


@pytest.mark.parametrize("bad_risk", [UNKNOWN_RISK, 0, -1, 6, np.nan, 2.5])
def test_unknown_or_invalid_risk_is_high_risk(bad_risk):
    risk = np.array([4.0, bad_risk, 1.0])
    out = rule_filter([0, 1, 2], risk, np.zeros(3, int), None, k=2, max_high_risk=1,
                      max_broad=None, redundancy_threshold=None)
    assert out.tolist() == [0, 2, 1]


@st.composite
def batches(draw):
    ranked, risk, counts, emb, options = draw(problems(max_tools=10))
    n_tools = len(risk)
    m = draw(st.integers(0, n_tools))
    n_q = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rows = np.array([rng.permutation(n_tools)[:m] for _ in range(n_q)], dtype=np.int64)
    return rows.reshape(n_q, m), risk, counts, emb, options


@settings(deadline=None, max_examples=120)
@given(batches())
def test_2d_rankings_filter_row_by_row(b):
    rows, risk, counts, emb, options = b
    expected = np.array([sum(oracle(r, risk, counts, emb, **options), []) for r in rows],
                        dtype=np.int64).reshape(rows.shape)
    np.testing.assert_array_equal(rule_filter(rows, risk, counts, emb, **options), expected)


def test_2d_rankings_on_random_embeddings():
    rng = np.random.default_rng(1)
    n_tools, dim = 300, 16
    centers = rng.standard_normal((20, dim))
    emb = centers[rng.integers(20, size=n_tools)] + 0.3 * rng.standard_normal((n_tools, dim))
    emb = (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32)
    risk = rng.choice([1, 2, 3, 4, 5, UNKNOWN_RISK], size=n_tools, p=[.4, .3, .1, .1, .05, .05])
    counts = rng.integers(0, 4, size=n_tools)
    rows = np.array([rng.permutation(n_tools)[:40] for _ in range(200)])
    expected = np.array([sum(oracle(r, risk, counts, emb), []) for r in rows])
    np.testing.assert_array_equal(rule_filter(rows, risk, counts, emb), expected)


def test_similarity_at_the_threshold_is_decided_exactly():
    # cos = 0.8 exactly; "0.8 > 0.8" is false, so both tools are accepted, in either order.
    emb = np.array([[1.0, 0.0], [0.8, 0.6]], dtype=np.float64)
    assert similarity(emb[0], emb[1]) == 0.8
    out = rule_filter([[0, 1], [1, 0]], np.ones(2, int), np.zeros(2, int), emb, k=2,
                      redundancy_threshold=0.8)
    assert out.tolist() == [[0, 1], [1, 0]]


# -- hand examples --------------------------------------------------------------------------
def test_hand_example():
    risk = np.array([1, 4, 5, 1, UNKNOWN_RISK, 2])
    counts = np.array([0, 1, 0, 3, 0, 2])
    emb = np.eye(6)
    emb[5] = emb[0]
    # 0 ok; 1 first high; 2 second high -> deferred; 3 broad #1; 4 unknown = high -> deferred;
    # 5 duplicate of 0 -> deferred. Only 3 accepted of k=4: deferred fill the top-k.
    out = rule_filter([0, 1, 2, 3, 4, 5], risk, counts, emb, k=4)
    assert out.tolist() == [0, 1, 3, 2, 4, 5]
    # With k=2 the scan stops after 0 and 1; the rest keeps its order.
    assert rule_filter([0, 1, 2, 3, 4, 5], risk, counts, emb, k=2).tolist() == [0, 1, 2, 3, 4, 5]
    # The broad cap: 3 and 5 are broad, max_broad=1 defers 5 even without the duplicate.
    out = rule_filter([3, 5, 0], risk, counts, emb, k=3, max_broad=1, redundancy_threshold=None)
    assert out.tolist() == [3, 0, 5]


def test_empty_and_single():
    risk, counts, emb = np.array([1]), np.array([0]), np.ones((1, 2)) / np.sqrt(2)
    assert rule_filter(np.array([], dtype=int), risk, counts, emb).tolist() == []
    assert rule_filter([0], risk, counts, emb, k=1).tolist() == [0]
    assert rule_filter(np.zeros((3, 0), int), risk, counts, emb).shape == (3, 0)
    assert rule_filter(np.zeros((0, 1), int), risk, counts, emb).shape == (0, 1)


# -- bad input ------------------------------------------------------------------------------
RISK, COUNTS, EMB = np.array([1, 2, 3]), np.array([0, 1, 2]), np.eye(3)


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(k=0), "'k' parameter"),
        (dict(k=2.0), "'k' parameter"),
        (dict(k=True), "'k' parameter"),
        (dict(max_high_risk=-1), "'max_high_risk' parameter"),
        (dict(max_broad=1.5), "'max_broad' parameter"),
        (dict(high_risk_level=6), "'high_risk_level' parameter"),
        (dict(high_risk_level=0), "'high_risk_level' parameter"),
        (dict(broad_level=0), "'broad_level' parameter"),
        (dict(redundancy_threshold=1.5), "'redundancy_threshold' parameter"),
        (dict(redundancy_threshold="0.9"), "'redundancy_threshold' parameter"),
        (dict(max_high_risk=0, high_risk_level=1), re.escape(MSG_NOTHING_ACCEPTABLE)),
    ],
)
def test_bad_options(kwargs, msg):
    for ranked in ([0, 1], [[0, 1]]):
        with pytest.raises(ValueError, match=msg):
            rule_filter(ranked, RISK, COUNTS, EMB, **kwargs)


@pytest.mark.parametrize(
    "ranked, msg",
    [
        ([[[0, 1]]], MSG_RANKED_SHAPE.format(shape=(1, 1, 2))),
        (5, MSG_RANKED_SHAPE.format(shape=())),
        ([0.0, 1.0], MSG_RANKED_DTYPE.format(dtype="float64")),
        ([True, False], MSG_RANKED_DTYPE.format(dtype="bool")),
        ([0, 2, 0], MSG_DUPLICATE.format(where="ranked", index=0, first=0, second=2)),
        ([0, 3], MSG_OUT_OF_RANGE.format(where="ranked", index=3, pos=1, n_max=2, n_tools=3)),
        ([-1, 0], MSG_OUT_OF_RANGE.format(where="ranked", index=-1, pos=0, n_max=2, n_tools=3)),
    ],
)
def test_bad_ranked(ranked, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        rule_filter(ranked, RISK, COUNTS, EMB)


@pytest.mark.parametrize(
    "ranked, msg",
    [
        ([[0, 1], [2, 2]], MSG_DUPLICATE.format(where="ranked[1]", index=2, first=0,
                                                 second=1)),
        ([[0, 1], [1, 7]], MSG_OUT_OF_RANGE.format(where="ranked[1]", index=7, pos=1,
                                                    n_max=2, n_tools=3)),
    ],
)
def test_bad_ranked_2d(ranked, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        rule_filter(ranked, RISK, COUNTS, EMB)


def test_bad_tool_arrays():
    fn = rule_filter
    for ranked in ([0, 1], [[0, 1]]):
        with pytest.raises(ValueError, match=re.escape(MSG_LENGTH.format(
                n_risk=3, n_perm=2, n_emb=3))):
            fn(ranked, RISK, COUNTS[:2], EMB)
        with pytest.raises(ValueError, match=re.escape(MSG_LENGTH.format(
                n_risk=3, n_perm=3, n_emb=2))):
            fn(ranked, RISK, COUNTS, EMB[:2])
        emb = EMB.copy()
        emb[1, 2] = np.nan
        with pytest.raises(ValueError, match=re.escape(MSG_EMBEDDINGS_NONFINITE.format(row=1))):
            fn(ranked, RISK, COUNTS, emb)
        with pytest.raises(ValueError, match=re.escape(MSG_EMBEDDINGS_MISSING.format(thr=0.9))):
            fn(ranked, RISK, COUNTS, None)
        with pytest.raises(ValueError, match=re.escape(MSG_PERMISSION_COUNT.format(
                index=1, value=-1))):
            fn(ranked, RISK, np.array([0, -1, 0]), EMB)
    # A NaN row the ranking never references is not an error.
    emb = EMB.copy()
    emb[2] = np.nan
    assert rule_filter([1, 0], RISK, COUNTS, emb).tolist() == [1, 0]


def test_small_calls_check_and_flag_only_the_ranked_tools():
    # Ranking 3 of 40 tools takes the O(ranked) path: the flags of the ranked tools are
    # the same, a bad count there names its registry index, one elsewhere is never read.
    risk = np.tile([1, 5, 2, 4], 10)
    counts = np.tile([0, 3, 1, 0], 10)
    ranked = [[37, 5, 20]]
    full = rule_filter(np.array([[37, 5, 20] + [i for i in range(40)
                                                      if i not in (37, 5, 20)]]),
                             risk, counts, None, 2, max_high_risk=0, max_broad=0,
                             redundancy_threshold=None)
    small = rule_filter(ranked, risk, counts, None, 2, max_high_risk=0, max_broad=0,
                              redundancy_threshold=None)
    assert small.tolist()[0] == [i for i in full[0].tolist() if i in (37, 5, 20)]
    bad = counts.copy()
    bad[5] = -2
    with pytest.raises(ValueError, match=re.escape(MSG_PERMISSION_COUNT.format(
            index=5, value=-2))):
        rule_filter(ranked, risk, bad, None, 2, redundancy_threshold=None)
    bad = counts.copy()
    bad[6] = -2
    rule_filter(ranked, risk, bad, None, 2, redundancy_threshold=None)


# -- RuleFilter -----------------------------------------------------------------------------
@pytest.fixture
def batch(tiny_registry):
    rng = np.random.default_rng(0)
    t_emb = rng.standard_normal((len(tiny_registry), 8)).astype(np.float32)
    t_emb[3] = t_emb[0]  # delete_file duplicates read_file
    t_emb /= np.linalg.norm(t_emb, axis=1, keepdims=True)
    q_emb = rng.standard_normal((4, 8)).astype(np.float32)
    q_emb /= np.linalg.norm(q_emb, axis=1, keepdims=True)
    return RankingBatch.full_pool(tiny_registry, q_emb, t_emb)


def test_rule_filter_step(batch):
    filt = RuleFilter(k=3)
    assert filt.fit(batch) is filt
    out = filt.transform(batch)
    reg = batch.registry
    expected = rule_filter(batch.ranked_indices(), reg.risk, reg.permission_counts,
                                 batch.tool_embeddings, 3)
    np.testing.assert_array_equal(out.ranked_indices(), expected)
    np.testing.assert_array_equal(filt.rank(batch), expected)
    assert filt.predict(batch).tolist() == reg.names[expected[:, :3]].tolist()
    # Each candidate keeps its score; the input batch is untouched.
    score_of = dict(zip(batch.candidates[0].tolist(), batch.scores[0].tolist(), strict=True))
    assert out.scores[0].tolist() == [score_of[t] for t in out.candidates[0].tolist()]
    assert batch.is_full_pool and not out.is_full_pool
    assert out.tool_embeddings is batch.tool_embeddings
    assert filt.fit_transform(batch).candidates.tolist() == out.candidates.tolist()


def test_rule_filter_not_fitted_and_other_registry(batch):
    with pytest.raises(NotFittedError):
        RuleFilter().predict(batch)
    filt = RuleFilter().fit(batch)
    other = ToolRegistry.from_records([{"name": "x", "description": "x tool", "risk": 1}])
    other_batch = RankingBatch.full_pool(other, np.ones((1, 2), np.float32),
                                         np.full((1, 2), 2 ** -0.5, np.float32))
    with pytest.raises(ValueError, match="fitted on registry"):
        filt.transform(other_batch)


def test_rule_filter_rejects_incompatible_options(batch):
    with pytest.raises(ValueError, match="'high_risk_level' parameter"):
        RuleFilter(high_risk_level=7).fit(batch)
    with pytest.raises(ValueError, match=re.escape(MSG_NOTHING_ACCEPTABLE)):
        RuleFilter(max_high_risk=0, high_risk_level=1).fit(batch)
    with pytest.raises(ValueError, match="redundancy_threshold"):
        RuleFilter(redundancy_threshold=2.0).fit(batch)


def test_rule_filter_params_and_pickle(batch):
    filt = RuleFilter(k=2, max_broad=None)
    assert clone(filt).get_params() == filt.get_params()
    filt.set_params(redundancy_threshold=0.5)
    assert filt.get_params()["redundancy_threshold"] == 0.5
    filt.fit(batch)
    again = pickle.loads(pickle.dumps(filt))
    np.testing.assert_array_equal(again.rank(batch), filt.rank(batch))
    tags = filt.__sklearn_tags__()
    assert tags.input_tags.two_d_array is False and tags.target_tags.required is False


def test_rule_filter_step_caches_the_tool_half_and_follows_changes(batch):
    # The step validates the per-tool inputs once per tool arrays and options; every change
    # of either must still give rule_filter's answer.
    reg = batch.registry
    filt = RuleFilter(k=3).fit(batch)

    def expected(b, **options):
        return rule_filter(b.ranked_indices(), reg.risk, reg.permission_counts,
                                 b.tool_embeddings, 3, **options)

    np.testing.assert_array_equal(filt.rank(batch), expected(batch))
    first = filt._tools
    filt.rank(batch)
    assert filt._tools is first  # reused
    for options in ({"high_risk_level": 2}, {"broad_level": 1, "max_broad": 0},
                    {"redundancy_threshold": None}, {"redundancy_threshold": 0.2}):
        filt.set_params(**options)
        np.testing.assert_array_equal(filt.rank(batch), expected(batch, **options))
        filt.set_params(**RuleFilter(k=3).get_params())
    # Other tool embeddings of the same registry: recomputed for those.
    rng = np.random.default_rng(1)
    other_emb = rng.standard_normal(batch.tool_embeddings.shape).astype(np.float32)
    other_emb[5] = other_emb[1]
    other_emb /= np.linalg.norm(other_emb, axis=1, keepdims=True)
    other = RankingBatch.full_pool(reg, batch.query_embeddings, other_emb)
    np.testing.assert_array_equal(filt.rank(other), expected(other))
    # Not pickled, and pickling leaves the estimator's own cache alone (it once popped it
    # from the live __dict__); a non-finite embedding of any tool is named, ranked or not.
    cache = filt._tools
    assert "_tools" not in pickle.loads(pickle.dumps(filt)).__dict__
    assert filt._tools is cache
    bad_emb = other_emb.copy()
    bad_emb[2, 0] = np.nan
    bad = RankingBatch(reg, batch.query_embeddings, bad_emb, np.array([[0, 1]] * 4),
                       np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match=r"row 2\b"):
        filt.rank(bad)


@pytest.mark.parametrize(
    "check",
    [
        check_estimator_cloneable,
        check_no_attributes_set_in_init,
        check_get_params_invariance,
        check_set_params,
        check_parameters_default_constructible,
        check_do_not_raise_errors_in_init_or_set_params,
    ],
)
def test_sklearn_data_free_checks(check):
    check("RuleFilter", RuleFilter())


# -- the benchmark --------------------------------------------------------------------------
def test_benchmark_quick_smoke(tmp_path):
    from benchmarks.bench_filter import main

    res = main(["--quick", "--out", str(tmp_path)])
    assert res["identical"] is True
    assert (tmp_path / "bench_filter.json").is_file()
    assert "speedup" in (tmp_path / "bench_filter.md").read_text()
