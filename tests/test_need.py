"""NeedAwareFilter and the relevance floor of the filters."""

import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

from skriskrank import UNKNOWN_RISK, NeedAwareFilter, RankingBatch, RuleFilter, ToolRegistry
from skriskrank._fast import NOT_NEEDED
from skriskrank._filter import MSG_NEEDS_Y, MSG_ONE_QUERY


def _problem(seed, n_tools=30, n_train=60, n_test=12, dim=8, unknown=False):
    """Queries near a few 'task' directions, each task needing one tool (some risky)."""
    rng = np.random.default_rng(seed)
    risks = rng.choice([1, 2, 3, 4, 5], size=n_tools, p=[.4, .3, .15, .1, .05]).tolist()
    if unknown:
        risks[3] = None
    reg = ToolRegistry.from_records(
        [{"name": f"t{i}", "description": f"tool {i}", "risk": r} for i, r in enumerate(risks)])
    tools = rng.normal(size=(n_tools, dim)).astype(np.float32)
    tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    tasks = rng.integers(0, n_tools, size=n_train + n_test)
    q = tools[tasks] + 0.4 * rng.normal(size=(len(tasks), dim)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    y = [{f"t{t}"} for t in tasks]
    train = RankingBatch.full_pool(reg, q[:n_train], tools).top(15)
    test = RankingBatch.full_pool(reg, q[n_train:], tools).top(15)
    return train, y[:n_train], test, y[n_train:]


@pytest.fixture(scope="module")
def problem():
    return _problem(0)


@pytest.mark.parametrize(
    "check",
    [check_estimator_cloneable, check_no_attributes_set_in_init, check_get_params_invariance,
     check_set_params, check_parameters_default_constructible,
     check_do_not_raise_errors_in_init_or_set_params],
)
def test_data_free_sklearn_checks(check):
    check("NeedAwareFilter", NeedAwareFilter())


def test_fit_clone_pickle(problem):
    train, y, test, _ = problem
    filt = NeedAwareFilter(k=3)
    assert filt.fit(train, y) is filt
    top = filt.predict(test)
    assert top.shape == (test.n_queries, 3)
    again = pickle.loads(pickle.dumps(filt))
    np.testing.assert_array_equal(again.predict(test), top)
    twin = clone(filt)
    assert twin.get_params() == filt.get_params() and not hasattr(twin, "relevance_model_")
    tags = filt.__sklearn_tags__()
    assert tags.target_tags.required and not tags.input_tags.two_d_array


def test_fit_needs_the_gold_sets(problem):
    train = problem[0]
    with pytest.raises(ValueError, match=re.escape(MSG_NEEDS_Y.format(step="NeedAwareFilter"))):
        NeedAwareFilter().fit(train)
    with pytest.raises(ValueError, match=re.escape(MSG_NEEDS_Y.format(step="RuleFilter"))):
        RuleFilter(relevance_floor=0.1).fit(train)


def test_need_evidence_needs_a_second_training_query(problem):
    # Each training query leaves itself out of its neighbours: with one query there are none
    # (this crashed in a zero-size reduction). The floor alone does not read neighbours.
    train, y, test, _ = problem
    one = RankingBatch(train.registry, train.query_embeddings[:1], train.tool_embeddings,
                       train.candidates[:1], train.scores[:1])
    with pytest.raises(ValueError, match=re.escape(MSG_ONE_QUERY.format(step="NeedAwareFilter"))):
        NeedAwareFilter().fit(one, y[:1])
    assert RuleFilter(relevance_floor=0.2).fit(one, y[:1]).predict(test).shape[0] == test.n_queries


@settings(deadline=None, max_examples=20)
@given(seed=st.integers(0, 10_000), threshold=st.floats(0, 1), k=st.integers(1, 6),
       cap=st.sampled_from([None, 0, 1, 2]), unknown=st.booleans())
def test_lists_are_k_distinct_tools(seed, threshold, k, cap, unknown):
    train, y, test, _ = _problem(seed, unknown=unknown)
    filt = NeedAwareFilter(need_threshold=threshold, k=k, max_high_risk=cap).fit(train, y)
    out = filt.transform(test)
    for row, before in zip(out.candidates, test.candidates, strict=True):
        assert len(set(row.tolist())) == len(row)
        assert sorted(row.tolist()) == sorted(before.tolist())
    assert filt.predict(test).shape == (test.n_queries, k)
    assert out.lengths is None  # fixed length without a floor


@settings(deadline=None, max_examples=15)
@given(seed=st.integers(0, 10_000), cap=st.sampled_from([None, 0, 1, 2]), k=st.integers(1, 6))
def test_ignoring_need_is_exactly_the_rule_filter(seed, cap, k):
    train, y, test, _ = _problem(seed, unknown=True)
    need = NeedAwareFilter(need_threshold=None, k=k, max_high_risk=cap).fit(train, y)
    rule = RuleFilter(k=k, max_high_risk=cap).fit(train)
    np.testing.assert_array_equal(need.rank(test), rule.rank(test))


def test_a_needed_risky_tool_is_admitted_and_an_unneeded_one_deferred():
    reg = ToolRegistry.from_records(
        [{"name": n, "description": n, "risk": r} for n, r in [
            ("read_secret", 4), ("list_users", 1), ("wipe_disk", 5), ("get_time", 1),
            ("mystery", None)]])
    tools = np.eye(5, dtype=np.float32)
    rng = np.random.default_rng(0)
    q = np.repeat(tools[[0, 2]], 20, axis=0) + 0.3 * rng.random((40, 5), dtype=np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    y = [{"read_secret"}] * 20 + [{"list_users"}] * 20
    filt = NeedAwareFilter(k=2).fit(RankingBatch.full_pool(reg, q, tools), y)
    test = RankingBatch.full_pool(reg, q[[0, 20]], tools)
    assert filt.predict(test).tolist() == [["read_secret", "list_users"],
                                           ["list_users", "get_time"]]
    out = filt.transform(test.traced())
    # wipe_disk (ranked first for query 2) was deferred as not needed.
    wipe = list(reg.names[out.candidates[1]]).index("wipe_disk")
    assert out.parts["decision"][1, wipe] == NOT_NEEDED
    assert filt.reason(out, 1, wipe).startswith("deferred: not needed for this query (p=")
    # The rule filter would have shown it, and hidden read_secret for nothing in return.
    rule = RuleFilter(k=2).fit(test)
    assert rule.predict(test)[1].tolist() == ["wipe_disk", "list_users"]
    # Unknown risk stays high risk: never admitted without evidence.
    assert "mystery" not in filt.predict(test).ravel()
    assert UNKNOWN_RISK in reg.risk


def test_relevance_floor_serves_shorter_lists(problem):
    train, y, test, _ = problem
    fixed = RuleFilter(k=5).fit(train)
    floored = RuleFilter(k=5, relevance_floor=0.2).fit(train, y)
    out = floored.transform(test)
    assert out.lengths is not None and (out.lengths <= 5).all() and (out.lengths < 5).any()
    names = floored.predict(test)
    assert names.shape == (test.n_queries, 5)
    for row, n in zip(names, out.lengths, strict=True):
        assert all(v is not None for v in row[:n]) and all(v is None for v in row[n:])
    # What a shorter list keeps is the fixed list's head when no rule deferred anything.
    p = floored.relevance_model_.predict_proba(test, test.order())
    assert ((p >= 0) & (p <= 1)).all()
    assert fixed.predict(test).shape == (test.n_queries, 5)
    # The need-aware filter serves them too.
    need = NeedAwareFilter(k=5, relevance_floor=0.2).fit(train, y)
    assert need.transform(test).lengths is not None


def test_an_upstream_that_never_ranks_gold_high_gives_a_constant_need_model(problem):
    # The gold sets name tools that are never among the training batch's top 2k candidates:
    # nothing to learn. The filter warns, rates every candidate p = 0 and so admits risky
    # tools only under the count cap, exactly as RuleFilter(max_high_risk=0) does.
    train, _, test, _ = problem
    ranked = np.take_along_axis(train.candidates, train.order(), axis=1)
    never = [{train.registry.names[row[-1]]} for row in ranked]  # rank 15 of 15
    with pytest.warns(UserWarning, match=re.escape("cannot learn, so every candidate gets p=0")):
        need = NeedAwareFilter(k=5).fit(train, never)
    rule = RuleFilter(k=5, max_high_risk=0).fit(train)
    np.testing.assert_array_equal(need.transform(test).candidates,
                                  rule.transform(test).candidates)
