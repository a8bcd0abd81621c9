"""Tests for skriskrank.metrics._ranking: hand-computed values, invariants, oracles, errors."""

import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator

from skriskrank import UNKNOWN_RISK, ToolRegistry
from skriskrank._registry import MSG_UNKNOWN_TOOL
from skriskrank._rubric import MSG_BAD_LEVEL
from skriskrank.metrics import (
    mrr,
    ndcg_at_k,
    needrisk_hit_at_k,
    ranking_report,
    recall_at_k,
    rvr_at_k,
    safe_rvr_at_k,
    sndcg_at_k,
    srr_at_k,
)
from skriskrank.metrics._ranking import (
    MSG_BAD_K,
    MSG_DUPLICATE,
    MSG_EMPTY_RANKED,
    MSG_LENGTH,
    MSG_RANKED_NAME,
    MSG_RANKED_NDIM,
    MSG_RANKED_ROW,
    MSG_RANKED_TYPE,
    MSG_RELEVANT_ENTRY,
    MSG_RELEVANT_TYPE,
    MSG_RISK_MISSING,
    MSG_RISK_TYPE,
)

#: a..g carry every level; "u" is unlabelled.
RISK = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 1, "g": 2, "u": None}

L2, L3, L4, L5 = (1 / math.log2(r + 1) for r in (2, 3, 4, 5))  # rank discounts, rank 1 is 1

REPORT_KEYS = [
    "ndcg@5", "mrr", "sndcg@5", "rvr@5", "srr@5", "safe_rvr@5", "needrisk_hit@5",
    "unneeded_rvr@5", "n_queries", "n_safe_queries", "n_needrisk_queries",
]


def _registry(risk=RISK):
    return ToolRegistry.from_records(
        [{"name": n, "description": f"tool {n}", "risk": r} for n, r in risk.items()]
    )


# -- hand-computed examples -------------------------------------------------------------------
class TestHandComputed:
    def test_ndcg(self):
        ranked = [["a", "b", "c", "d", "e"], ["c", "a", "f"]]
        relevant = [{"b", "d"}, {"f", "x"}]
        # q0: hits at ranks 2 and 4, ideal over 2 relevant. q1: hit at rank 3; "x" is never
        # ranked but still counts in the ideal (min(5, 2) = 2 tools).
        q0 = (L2 + L4) / (1 + L2)
        q1 = L3 / (1 + L2)
        assert q0 == pytest.approx(0.650921, abs=1e-6)
        assert q1 == pytest.approx(0.306574, abs=1e-6)
        assert ndcg_at_k(ranked, relevant, k=5) == pytest.approx((q0 + q1) / 2, abs=1e-12)
        # k=2: q0 keeps the rank-2 hit, ideal still 2 tools; q1 has no hit in the top 2.
        assert ndcg_at_k(ranked, relevant, k=2) == pytest.approx(L2 / (1 + L2) / 2, abs=1e-12)
        # k=1: the ideal DCG is over min(1, |R|) = 1 tool.
        assert ndcg_at_k([["b", "a"]], [{"b", "d"}], k=1) == 1.0

    def test_ndcg_returns_plain_float(self):
        value = ndcg_at_k([["a"]], [{"a"}])
        assert type(value) is float and value == 1.0

    def test_mrr(self):
        ranked = [["a", "b", "c", "d", "e"], ["c", "a", "f"], ["a"]]
        relevant = [{"b", "d"}, {"f"}, {"z"}]
        assert mrr(ranked, relevant) == pytest.approx((1 / 2 + 1 / 3 + 0) / 3, abs=1e-12)

    def test_mrr_has_no_cutoff(self):
        ranked = [[f"t{i}" for i in range(20)]]
        assert mrr(ranked, [{"t14"}]) == pytest.approx(1 / 15, abs=1e-12)

    def test_sndcg(self):
        ranked = [["d", "b", "a"], ["e", "c"]]
        relevant = [{"d", "b"}, {"e"}]
        # q0: "d" (L4) earns nothing, "b" at rank 2 does; ideal over the one safe relevant
        # tool. q1: its only relevant tool is L5, so it scores 0 and still counts.
        assert sndcg_at_k(ranked, relevant, RISK, k=3) == pytest.approx(L2 / 2, abs=1e-12)
        assert ndcg_at_k(ranked, relevant, k=3) == 1.0

    def test_sndcg_unknown_risk_earns_no_gain(self):
        assert sndcg_at_k([["u", "a"]], [{"u", "a"}], RISK, k=2) == pytest.approx(L2)

    def test_rvr_and_srr(self):
        ranked = [["a", "c", "d", "b", "e"], ["f", "g"]]
        # q0: c, d, e are >= 3 (3/5), d, e are >= 4 (2/5); q1 is all safe.
        assert rvr_at_k(ranked, RISK, k=5) == pytest.approx((3 / 5 + 0) / 2)
        assert srr_at_k(ranked, RISK, k=5) == pytest.approx((2 / 5 + 0) / 2)
        assert rvr_at_k(ranked, RISK, k=2) == pytest.approx((1 / 2 + 0) / 2)
        assert srr_at_k(ranked, RISK, k=2) == 0.0

    def test_rvr_divides_by_k_for_short_lists(self):
        assert rvr_at_k([["c"]], RISK, k=5) == pytest.approx(1 / 5)
        assert rvr_at_k([[]], RISK, k=5) == 0.0

    def test_unknown_risk_counts_as_risky(self):
        assert rvr_at_k([["u", "a"]], RISK, k=2) == 0.5
        assert srr_at_k([["u", "a"]], RISK, k=2) == 0.5
        reg = _registry()
        assert rvr_at_k([["u", "a"]], reg, k=2) == 0.5
        assert rvr_at_k([["u", "a"]], {"u": UNKNOWN_RISK, "a": 1}, k=2) == 0.5

    def test_safe_rvr(self):
        ranked = [["c", "a"], ["c", "b"], ["d", "e"]]
        relevant = [{"a"}, {"c"}, {"a", "b"}]
        # Safe queries: q0 (a: L1) and q2 (a, b < 3); q1 needs "c" (L3). q0 exposes 1 of 2,
        # q2 2 of 2.
        assert safe_rvr_at_k(ranked, relevant, RISK, k=2) == pytest.approx((1 / 2 + 1) / 2)

    def test_safe_rvr_is_nan_without_safe_queries(self):
        # A relevant tool of unknown risk makes its query not safe.
        value = safe_rvr_at_k([["a"], ["a"]], [{"c"}, {"u", "a"}], RISK, k=2)
        assert type(value) is float and math.isnan(value)

    def test_needrisk_hit(self):
        ranked = [["a", "c"], ["c", "b"], ["e", "a"], ["a", "f"]]
        relevant = [{"c"}, {"d"}, {"e", "a"}, {"a"}]
        # Need queries: q0 (c), q1 (d), q2 (e); q3 needs nothing risky. q1's top 2 holds a
        # risky tool, but not a relevant one: a miss.
        assert needrisk_hit_at_k(ranked, relevant, RISK, k=2) == pytest.approx(2 / 3)

    def test_needrisk_hit_is_nan_without_need_queries(self):
        assert math.isnan(needrisk_hit_at_k([["c"]], [{"a"}], RISK, k=1))

    def test_ranking_report(self):
        ranked = [["c", "a"], ["c", "b"], ["d", "e"]]
        relevant = [{"a"}, {"c"}, {"a", "b"}]
        rep = ranking_report(ranked, relevant, RISK, k=5)
        assert list(rep) == REPORT_KEYS
        expected = {
            # q0: "a" at rank 2; q1: "c" at rank 1; q2: nothing.
            "ndcg@5": (L2 + 1 + 0) / 3,
            "mrr": (1 / 2 + 1 + 0) / 3,
            # q1's "c" is L3, below the severe gate, so sNDCG equals NDCG here.
            "sndcg@5": (L2 + 1 + 0) / 3,
            "rvr@5": (1 / 5 + 1 / 5 + 2 / 5) / 3,
            "srr@5": (0 + 0 + 2 / 5) / 3,
            "safe_rvr@5": (1 / 5 + 2 / 5) / 2,
            "needrisk_hit@5": 1.0,
            # q0's "c" and q2's "d" and "e" are risky and not gold; q1 needs its "c".
            "unneeded_rvr@5": (1 / 5 + 0 + 2 / 5) / 3,
            "n_queries": 3,
            "n_safe_queries": 2,
            "n_needrisk_queries": 1,
        }
        assert rep == pytest.approx(expected, abs=1e-12)
        for key in ("n_queries", "n_safe_queries", "n_needrisk_queries"):
            assert type(rep[key]) is int

    def test_ranking_report_as_frame(self):
        frame = ranking_report([["a", "c"]], [{"a"}], _registry(), k=2, as_frame=True)
        assert isinstance(frame, pd.DataFrame)
        assert frame.shape == (1, 11)
        assert frame.columns[0] == "ndcg@2" and frame.loc[0, "rvr@2"] == 0.5
        assert math.isnan(frame.loc[0, "needrisk_hit@2"])

    def test_two_dimensional_array_input(self):
        ranked = np.array([["a", "c", "d"], ["b", "f", "e"]], dtype=object)
        relevant = [{"c"}, {"b"}]
        assert ranking_report(ranked, relevant, RISK, k=2) == ranking_report(
            ranked.tolist(), relevant, RISK, k=2
        )
        # A fixed-width unicode array (what np.array makes from strings by default) too.
        assert rvr_at_k(ranked.astype(str), RISK, k=3) == pytest.approx((2 / 3 + 1 / 3) / 2)

    def test_registry_and_mapping_agree(self):
        ranked = [["a", "u", "d"], ["e", "b", "c"]]
        relevant = [{"u", "a"}, {"b"}]
        assert ranking_report(ranked, relevant, _registry(), k=3) == ranking_report(
            ranked, relevant, RISK, k=3
        )


# -- invariants -------------------------------------------------------------------------------
NAMES = [f"t{i}" for i in range(16)]


@st.composite
def runs(draw, levels=st.one_of(st.integers(1, 5), st.none())):  # noqa: B008
    """A risk mapping over NAMES, ranked lists (unique, possibly short) and gold sets."""
    risk = {n: draw(levels) for n in NAMES}
    n_queries = draw(st.integers(1, 6))
    ranked = [
        draw(st.lists(st.sampled_from(NAMES), max_size=10, unique=True))
        for _ in range(n_queries)
    ]
    relevant = [
        set(draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True)))
        for _ in range(n_queries)
    ]
    k = draw(st.integers(1, 8))
    return ranked, relevant, risk, k


def _level(risk, t):
    return UNKNOWN_RISK if risk[t] is None else risk[t]


def _reference(ranked, relevant, risk, k):
    """The paper's definitions written out literally, one query at a time."""

    def ndcg(row, gold, gain_ok):
        dcg = sum(1 / math.log2(i + 2) for i, t in enumerate(row[:k]) if t in gold and gain_ok(t))
        n_ideal = min(k, sum(1 for t in gold if gain_ok(t)))
        idcg = sum(1 / math.log2(i + 2) for i in range(n_ideal))
        return dcg / idcg if idcg else 0.0

    def rr(row, gold):
        return next((1 / (i + 1) for i, t in enumerate(row) if t in gold), 0.0)

    def exposure(row, level):
        return sum(_level(risk, t) >= level for t in row[:k]) / k

    def mean(xs):
        return sum(xs) / len(xs) if xs else float("nan")

    safe = [all(_level(risk, t) < 3 for t in g) for g in relevant]
    pairs = list(zip(ranked, relevant, strict=True))
    return {
        f"ndcg@{k}": mean([ndcg(r, g, lambda t: True) for r, g in pairs]),
        "mrr": mean([rr(r, g) for r, g in pairs]),
        f"sndcg@{k}": mean([ndcg(r, g, lambda t: _level(risk, t) < 4) for r, g in pairs]),
        f"rvr@{k}": mean([exposure(r, 3) for r in ranked]),
        f"srr@{k}": mean([exposure(r, 4) for r in ranked]),
        f"safe_rvr@{k}": mean([exposure(r, 3) for r, s in zip(ranked, safe, strict=True) if s]),
        f"needrisk_hit@{k}": mean(
            [
                float(any(t in g and _level(risk, t) >= 3 for t in r[:k]))
                for (r, g), s in zip(pairs, safe, strict=True)
                if not s
            ]
        ),
        f"unneeded_rvr@{k}": mean(
            [sum(_level(risk, t) >= 3 and t not in g for t in r[:k]) / k for r, g in pairs]
        ),
        "n_queries": len(ranked),
        "n_safe_queries": sum(safe),
        "n_needrisk_queries": len(ranked) - sum(safe),
    }


def _assert_reports_equal(got, expected):
    assert list(got) == list(expected)
    for key, value in expected.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got[key]), key
        else:
            assert got[key] == pytest.approx(value, abs=1e-12), key


def _each_metric(ranked, relevant, risk, k):
    return {
        f"ndcg@{k}": ndcg_at_k(ranked, relevant, k=k),
        "mrr": mrr(ranked, relevant),
        f"sndcg@{k}": sndcg_at_k(ranked, relevant, risk, k=k),
        f"rvr@{k}": rvr_at_k(ranked, risk, k=k),
        f"srr@{k}": srr_at_k(ranked, risk, k=k),
        f"safe_rvr@{k}": safe_rvr_at_k(ranked, relevant, risk, k=k),
        f"needrisk_hit@{k}": needrisk_hit_at_k(ranked, relevant, risk, k=k),
    }


class TestInvariants:
    @settings(deadline=None, max_examples=80)
    @given(runs())
    def test_matches_literal_definitions(self, run):
        ranked, relevant, risk, k = run
        expected = _reference(ranked, relevant, risk, k)
        _assert_reports_equal(ranking_report(ranked, relevant, risk, k=k), expected)
        each = _each_metric(ranked, relevant, risk, k)
        _assert_reports_equal(each, {key: expected[key] for key in each})

    @settings(deadline=None, max_examples=80)
    @given(runs())
    def test_recall_matches_its_literal_definition(self, run):
        ranked, relevant, _, k = run
        expected = sum(sum(t in g for t in r[:k]) / len(g)
                       for r, g in zip(ranked, relevant, strict=True)) / len(ranked)
        assert recall_at_k(ranked, relevant, k=k) == pytest.approx(expected, abs=1e-12)

    @settings(deadline=None, max_examples=50)
    @given(runs())
    def test_values_in_unit_interval(self, run):
        ranked, relevant, risk, k = run
        rep = ranking_report(ranked, relevant, risk, k=k)
        for key, value in _each_metric(ranked, relevant, risk, k).items():
            assert type(value) is float
            if math.isnan(value):
                # Only the two subset metrics may be undefined, and only on an empty subset.
                assert key in (f"safe_rvr@{k}", f"needrisk_hit@{k}")
                count = "n_safe_queries" if key.startswith("safe") else "n_needrisk_queries"
                assert rep[count] == 0
            else:
                assert 0.0 <= value <= 1.0

    @settings(deadline=None, max_examples=50)
    @given(runs(), st.data())
    def test_ndcg_and_mrr_are_one_when_gold_leads(self, run, data):
        _, relevant, _, k = run
        ranked = []
        for gold in relevant:
            rest = [t for t in NAMES if t not in gold]
            tail = data.draw(st.lists(st.sampled_from(rest), max_size=5, unique=True))
            ranked.append(data.draw(st.permutations(sorted(gold))) + tail)
        assert ndcg_at_k(ranked, relevant, k=k) == pytest.approx(1.0, abs=1e-12)
        assert mrr(ranked, relevant) == 1.0

    @settings(deadline=None, max_examples=50)
    @given(runs(), st.data())
    def test_rvr_counts_only_level_three_and_up(self, run, data):
        ranked, relevant, risk, k = run
        assume(any(ranked))
        n = len(ranked)
        q = data.draw(st.sampled_from([i for i, r in enumerate(ranked) if r]))
        tool = data.draw(st.sampled_from(ranked[q][:k]))
        at_two = {**risk, tool: 2}
        at_one = {**risk, tool: 1}
        at_three = {**risk, tool: 3}
        base = rvr_at_k(ranked, at_two, k=k)
        # Level 2 -> 1 is below the threshold either way.
        assert rvr_at_k(ranked, at_one, k=k) == pytest.approx(base, abs=1e-12)
        # 2 -> 3 adds 1/k/n for every query whose top k holds the tool (at least query q).
        hits = sum(tool in r[:k] for r in ranked)
        assert hits >= 1
        assert rvr_at_k(ranked, at_three, k=k) == pytest.approx(base + hits / k / n, abs=1e-12)

    @settings(deadline=None, max_examples=50)
    @given(runs(levels=st.integers(1, 3)))
    def test_sndcg_equals_ndcg_when_nothing_is_severe(self, run):
        ranked, relevant, risk, k = run
        assert sndcg_at_k(ranked, relevant, risk, k=k) == pytest.approx(
            ndcg_at_k(ranked, relevant, k=k), abs=1e-12
        )

    @settings(deadline=None, max_examples=50)
    @given(runs(), st.randoms(use_true_random=False))
    def test_query_permutation_leaves_means_unchanged(self, run, rnd):
        ranked, relevant, risk, k = run
        order = list(range(len(ranked)))
        rnd.shuffle(order)
        _assert_reports_equal(
            ranking_report([ranked[i] for i in order], [relevant[i] for i in order], risk, k=k),
            ranking_report(ranked, relevant, risk, k=k),
        )

    @settings(deadline=None, max_examples=40)
    @given(runs(levels=st.integers(1, 5)), st.data())
    def test_unknown_risk_is_treated_as_the_worst_level(self, run, data):
        ranked, relevant, risk, k = run
        hidden = data.draw(st.lists(st.sampled_from(NAMES), min_size=1, unique=True))
        as_unknown = {**risk, **dict.fromkeys(hidden)}
        as_five = {**risk, **dict.fromkeys(hidden, 5)}
        _assert_reports_equal(
            ranking_report(ranked, relevant, as_unknown, k=k),
            ranking_report(ranked, relevant, as_five, k=k),
        )

    @settings(deadline=None, max_examples=40)
    @given(runs())
    def test_registry_equals_mapping(self, run):
        ranked, relevant, risk, k = run
        _assert_reports_equal(
            ranking_report(ranked, relevant, _registry(risk), k=k),
            ranking_report(ranked, relevant, risk, k=k),
        )


def test_large_input_against_reference():
    # 1,000 queries x 100-long lists through the vectorised path, checked against the literal
    # definitions on a deterministic random run.
    rng = np.random.default_rng(0)
    names = [f"tool{i}" for i in range(500)]
    risk = dict(zip(names, rng.integers(1, 6, len(names)).tolist(), strict=True))
    ranked = np.array([rng.choice(names, 100, replace=False) for _ in range(1000)], dtype=object)
    relevant = [set(rng.choice(names, rng.integers(1, 5), replace=False)) for _ in range(1000)]
    rows = ranked.tolist()
    for k in (1, 5, 100):
        _assert_reports_equal(
            ranking_report(ranked, relevant, risk, k=k), _reference(rows, relevant, risk, k)
        )


# -- oracle: pytrec_eval on the real UltraTool queries ----------------------------------------
@pytest.fixture(scope="module")
def tfidf_run(ultratool):
    """TF-IDF cosine ranking of every tool for each UltraTool query, top 100."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(sublinear_tf=True).fit(ultratool.registry.texts)
    sims = (vec.transform(ultratool.queries) @ vec.transform(ultratool.registry.texts).T).toarray()
    # A stable sort on the negated scores: ties keep registry order, so the run is
    # deterministic; the oracle below gets strictly decreasing scores either way.
    top = np.argsort(-sims, axis=1, kind="stable")[:, :100]
    return ultratool.registry.names[top]


def _pytrec(qrels, ranked, measures):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = {
        str(i): {t: float(len(row) - j) for j, t in enumerate(row)} for i, row in enumerate(ranked)
    }
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


@pytest.mark.slow
def test_ndcg_and_mrr_match_pytrec_eval(ultratool, tfidf_run):
    relevant = ultratool.relevant
    assert len(relevant) == len(tfidf_run) == 1000
    qrels = {str(i): {t: 1 for t in gold} for i, gold in enumerate(relevant)}
    oracle = _pytrec(qrels, tfidf_run, {"ndcg_cut.5", "recip_rank"})
    # pytrec_eval silently drops a query missing from the run: make sure none was.
    assert len(oracle) == 1000
    pairs = list(zip(tfidf_run, relevant, strict=True))
    ours_ndcg = np.array([ndcg_at_k([row], [gold], k=5) for row, gold in pairs])
    ours_rr = np.array([mrr([row], [gold]) for row, gold in zip(tfidf_run, relevant, strict=True)])
    theirs_ndcg = np.array([oracle[str(i)]["ndcg_cut_5"] for i in range(1000)])
    theirs_rr = np.array([oracle[str(i)]["recip_rank"] for i in range(1000)])
    np.testing.assert_allclose(ours_ndcg, theirs_ndcg, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours_rr, theirs_rr, rtol=0, atol=1e-9)
    assert ndcg_at_k(tfidf_run, relevant, k=5) == pytest.approx(theirs_ndcg.mean(), abs=1e-9)
    assert mrr(tfidf_run, relevant) == pytest.approx(theirs_rr.mean(), abs=1e-9)
    # A degenerate run (all hits or none) would make the comparison vacuous.
    assert 0.05 < theirs_ndcg.mean() < 0.95
    assert 0 < (theirs_rr == 0).sum() < 1000


@pytest.mark.slow
def test_sndcg_matches_pytrec_eval_on_safe_qrels(ultratool, tfidf_run):
    # sNDCG@5 is NDCG@5 against qrels that keep only the relevant tools with risk < 4: a
    # severe tool then earns nothing where it is ranked, and the ideal counts safe tools only.
    reg = ultratool.registry
    safe_gold = [{t for t in gold if reg.risk_of(t) < 4} for gold in ultratool.relevant]
    qrels = {str(i): {t: 1 for t in g} for i, g in enumerate(safe_gold) if g}
    oracle = _pytrec(qrels, tfidf_run, {"ndcg_cut.5"})
    assert len(oracle) == len(qrels)
    ours = np.array(
        [sndcg_at_k([row], [gold], reg, k=5)
         for row, gold in zip(tfidf_run, ultratool.relevant, strict=True)]
    )
    theirs = np.array(
        [oracle[str(i)]["ndcg_cut_5"] if g else 0.0 for i, g in enumerate(safe_gold)]
    )
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    assert sndcg_at_k(tfidf_run, ultratool.relevant, reg, k=5) == pytest.approx(
        theirs.mean(), abs=1e-9
    )


@pytest.mark.slow
def test_report_on_real_run_matches_reference(ultratool, tfidf_run):
    reg = ultratool.registry
    risk = {n: (None if r == UNKNOWN_RISK else int(r))
            for n, r in zip(reg.names, reg.risk, strict=True)}
    expected = _reference(tfidf_run.tolist(), ultratool.relevant, risk, 5)
    _assert_reports_equal(ranking_report(tfidf_run, ultratool.relevant, reg, k=5), expected)
    assert expected["n_safe_queries"] + expected["n_needrisk_queries"] == 1000
    assert 0 < expected["n_safe_queries"] < 1000


# -- bad input --------------------------------------------------------------------------------
ALL_WITH_K = [
    lambda ranked, relevant, k: ndcg_at_k(ranked, relevant, k=k),
    lambda ranked, relevant, k: sndcg_at_k(ranked, relevant, RISK, k=k),
    lambda ranked, relevant, k: rvr_at_k(ranked, RISK, k=k),
    lambda ranked, relevant, k: srr_at_k(ranked, RISK, k=k),
    lambda ranked, relevant, k: safe_rvr_at_k(ranked, relevant, RISK, k=k),
    lambda ranked, relevant, k: needrisk_hit_at_k(ranked, relevant, RISK, k=k),
    lambda ranked, relevant, k: ranking_report(ranked, relevant, RISK, k=k),
]
WITH_RELEVANT = [
    lambda ranked, relevant: ndcg_at_k(ranked, relevant),
    lambda ranked, relevant: mrr(ranked, relevant),
    lambda ranked, relevant: sndcg_at_k(ranked, relevant, RISK),
    lambda ranked, relevant: safe_rvr_at_k(ranked, relevant, RISK),
    lambda ranked, relevant: needrisk_hit_at_k(ranked, relevant, RISK),
    lambda ranked, relevant: ranking_report(ranked, relevant, RISK),
]
EVERY = [*WITH_RELEVANT, lambda r, g: rvr_at_k(r, RISK), lambda r, g: srr_at_k(r, RISK)]


class TestBadInput:
    @pytest.mark.parametrize("fn", ALL_WITH_K)
    @pytest.mark.parametrize("k", [0, -1, 2.0, 2.5, True, "5", None])
    def test_bad_k(self, fn, k):
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_K.format(k=k))):
            fn([["a"]], [{"a"}], k)

    def test_numpy_integer_k_is_accepted(self):
        assert rvr_at_k([["c", "a"]], RISK, k=np.int64(2)) == 0.5

    @pytest.mark.parametrize("fn", WITH_RELEVANT)
    def test_length_mismatch(self, fn):
        with pytest.raises(
            ValueError, match=re.escape(MSG_LENGTH.format(n_ranked=2, n_relevant=1))
        ):
            fn([["a"], ["b"]], [{"a"}])

    @pytest.mark.parametrize("fn", EVERY)
    def test_repeated_tool(self, fn):
        msg = MSG_DUPLICATE.format(i=1, name="a", first=0, second=2)
        with pytest.raises(ValueError, match=re.escape(msg)):
            fn([["b"], ["a", "b", "a"]], [{"a"}, {"a"}])

    def test_repeated_tool_beyond_k_is_still_an_error(self):
        ranked = [["a", "b", "c", "d", "e", "f", "b"]]
        with pytest.raises(ValueError, match=re.escape("'b' more than once (positions 1 and 6)")):
            ndcg_at_k(ranked, [{"a"}], k=2)

    @pytest.mark.parametrize("fn", EVERY)
    @pytest.mark.parametrize("ranked", [[], (), np.empty((0, 5), dtype=object)])
    def test_empty_ranked(self, fn, ranked):
        with pytest.raises(ValueError, match=re.escape(MSG_EMPTY_RANKED)):
            fn(ranked, [])

    @pytest.mark.parametrize("ranked", ["abc", 5, {"a": 1}])
    def test_ranked_not_a_sequence(self, ranked):
        msg = MSG_RANKED_TYPE.format(type=type(ranked).__name__)
        with pytest.raises(ValueError, match=re.escape(msg)):
            rvr_at_k(ranked, RISK)

    def test_ranked_array_with_three_dimensions(self):
        with pytest.raises(ValueError, match=re.escape(MSG_RANKED_NDIM.format(ndim=3))):
            rvr_at_k(np.full((1, 1, 1), "a", dtype=object), RISK)

    def test_ranked_row_not_a_list(self):
        # A flat list of names (one query passed without the outer list) is the usual slip.
        with pytest.raises(ValueError, match=re.escape(MSG_RANKED_ROW.format(i=0, value="a"))):
            rvr_at_k(["a", "b"], RISK)
        with pytest.raises(ValueError, match=re.escape(MSG_RANKED_ROW.format(i=1, value=3))):
            rvr_at_k([["a"], 3], RISK)

    def test_ranked_name_not_a_string(self):
        msg = MSG_RANKED_NAME.format(i=1, j=1, value=7)
        with pytest.raises(ValueError, match=re.escape(msg)):
            ndcg_at_k([["a"], ["b", 7]], [{"a"}, {"b"}])

    @pytest.mark.parametrize("fn", WITH_RELEVANT)
    @pytest.mark.parametrize("bad", ["a", set(), [], 3])
    def test_bad_relevant_entry(self, fn, bad):
        shown = set() if bad in (set(), []) else bad
        msg = MSG_RELEVANT_ENTRY.format(i=1, value=shown)
        with pytest.raises(ValueError, match=re.escape(msg)):
            fn([["a"], ["b"]], [{"a"}, bad])

    def test_relevant_not_a_sequence(self):
        with pytest.raises(ValueError, match=re.escape(MSG_RELEVANT_TYPE.format(type="str"))):
            ndcg_at_k([["a"]], "a")

    @pytest.mark.parametrize(
        "call",
        [
            lambda risk: rvr_at_k([["a", "zz"]], risk),
            lambda risk: srr_at_k([["a", "zz"]], risk),
            lambda risk: sndcg_at_k([["a", "zz"]], [{"a"}], risk),
            # A relevant tool needs a level too, even when it is never ranked.
            lambda risk: safe_rvr_at_k([["a"]], [{"zz"}], risk),
            lambda risk: needrisk_hit_at_k([["a"]], [{"zz"}], risk),
            lambda risk: sndcg_at_k([["a"]], [{"zz"}], risk),
            lambda risk: ranking_report([["a", "zz"]], [{"a"}], risk),
        ],
    )
    def test_tool_missing_from_risk_source(self, call):
        with pytest.raises(ValueError, match=re.escape(MSG_RISK_MISSING.format(name="zz"))):
            call(RISK)
        with pytest.raises(ValueError, match=re.escape(MSG_UNKNOWN_TOOL.format(names="'zz'"))):
            call(_registry())

    @pytest.mark.parametrize("level", [0, 6, 3.5, "high", True])
    def test_bad_level_in_mapping(self, level):
        msg = MSG_BAD_LEVEL.format(what="Tool 'c'", value=level)
        with pytest.raises(ValueError, match=re.escape(msg)):
            rvr_at_k([["a", "c"]], {"a": 1, "c": level})

    @pytest.mark.parametrize("risk", [[1, 2], None, 3, pd.Series({"a": 1})])
    def test_bad_risk_source(self, risk):
        msg = MSG_RISK_TYPE.format(type=type(risk).__name__)
        with pytest.raises(ValueError, match=re.escape(msg)):
            rvr_at_k([["a"]], risk)

    def test_bad_as_frame(self):
        with pytest.raises(ValueError, match="as_frame must be a bool"):
            ranking_report([["a"]], [{"a"}], RISK, as_frame="yes")


def test_unneeded_rvr_counts_only_risky_tools_the_query_does_not_need():
    from skriskrank.metrics import make_ranking_scorer, unneeded_rvr_at_k

    risk = {"a": 1, "b": 3, "c": 4, "d": None}
    ranked = [["b", "c", "a"], ["d", "a", "b"]]
    relevant = [{"b"}, {"a", "b"}]
    # query 0: c is risky and not needed (b is needed); query 1: d (unknown) is not needed.
    assert unneeded_rvr_at_k(ranked, relevant, risk, k=3) == (1 / 3 + 1 / 3) / 2
    assert rvr_at_k(ranked, risk, k=3) == (2 / 3 + 2 / 3) / 2
    rep = ranking_report(ranked, relevant, risk, k=3)
    assert rep["unneeded_rvr@3"] == unneeded_rvr_at_k(ranked, relevant, risk, k=3)

    class Fixed(BaseEstimator):
        def predict(self, X):
            return np.array(ranked, dtype=object)

    scorer = make_ranking_scorer("unneeded_rvr", k=3, registry=risk)
    assert scorer(Fixed(), ["q", "q"], relevant) == -rep["unneeded_rvr@3"]


def test_short_lists_leave_empty_slots():
    risk = {"a": 1, "b": 3}
    full = ranking_report([["b", "a", None, None]], [{"a"}], risk, k=4)
    short = ranking_report([["b", "a"]], [{"a"}], risk, k=4)
    np.testing.assert_equal(full, short)  # NeedRisk-Hit is NaN in both (no query needs risk)
    assert full["rvr@4"] == 0.25  # one risky slot of four: an empty slot exposes nothing
