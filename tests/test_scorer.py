"""Tests for skriskrank.metrics._model_selection: scorers, GridSearchCV, the risk-budget refit."""

import math
import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, KFold

from skriskrank import ToolRegistry
from skriskrank.metrics import (
    best_under_risk_budget,
    make_ranking_scorer,
    mrr,
    ndcg_at_k,
    needrisk_hit_at_k,
    rvr_at_k,
    safe_rvr_at_k,
    sndcg_at_k,
    srr_at_k,
    unneeded_rvr_at_k,
)
from skriskrank.metrics._model_selection import (
    MSG_BAD_KEY,
    MSG_BAD_MAX_RVR,
    MSG_BAD_REGISTRY,
    MSG_MISSING_RESULT,
    MSG_NEEDS_REGISTRY,
    MSG_NO_FINITE_RVR,
    MSG_UNKNOWN_METRIC,
)
from skriskrank.metrics._ranking import MSG_BAD_K

METRICS = ["ndcg", "mrr", "sndcg", "rvr", "srr", "safe_rvr", "needrisk_hit", "unneeded_rvr"]
LOWER_IS_BETTER = {"rvr", "srr", "safe_rvr", "unneeded_rvr"}
RISK_METRICS = {"sndcg", "rvr", "srr", "safe_rvr", "needrisk_hit", "unneeded_rvr"}

RISK = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 1, "g": 2, "h": 1}
REGISTRY = ToolRegistry.from_records(
    [{"name": n, "description": f"tool {n}", "risk": r} for n, r in RISK.items()]
)


class FixedRanker(BaseEstimator):
    """Predicts the same ranked names for every query."""

    def __init__(self, names=("a", "c", "b")):
        self.names = names

    def predict(self, X):
        return np.array([list(self.names)] * len(X), dtype=object)


class PenaltyRanker(BaseEstimator):
    """A dummy ranking estimator: each row of X is a query's candidate pool, most relevant first.

    The score of the candidate at position j is ``-j - penalty * risk``, so ``penalty=0``
    keeps the pool order and a large penalty pushes risky tools down.
    """

    #: predict calls of every instance (clones included); tests reset it.
    calls = []

    def __init__(self, *, penalty=0.0, k=3, registry=None):
        self.penalty = penalty
        self.k = k
        self.registry = registry

    def fit(self, X, y):
        self.n_fit_queries_ = len(X)
        return self

    def predict(self, X):
        PenaltyRanker.calls.append(len(X))
        X = np.asarray(X, dtype=object)
        risk = self.registry.risk_of(X.ravel()).reshape(X.shape)
        scores = -np.arange(X.shape[1])[None, :] - self.penalty * risk
        order = np.argsort(-scores, axis=1, kind="stable")[:, : self.k]
        return np.take_along_axis(X, order, axis=1)


def _pool_data(n=12):
    """Candidate pools (most relevant first) and gold sets of two kinds of query.

    Two in three queries need only the safe "a" but list the L4 distractor "d" first; every
    third query needs the L3 tool "c", listed first. By hand, over the three penalties of
    :func:`_search` (0, 0.6, 10) and k=3:

    - 0 keeps the pool order: NDCG (2/log2(3) + 1) / 3, RVR 1/3;
    - 0.6 puts "a" above "d" and "c": NDCG (2 + 1/log2(3)) / 3, RVR 1/3;
    - 10 drops "c" and "d" from every top 3: NDCG 2/3, RVR 0.
    """
    pools, gold = [], []
    for i in range(n):
        if i % 3 == 0:
            pools.append(["c", "a", "b", "f"])
            gold.append({"c"})
        else:
            pools.append(["d", "a", "f", "g"])
            gold.append({"a"})
    return np.array(pools, dtype=object), gold


L2 = 1 / math.log2(3)
EXPECTED_NDCG = [(2 * L2 + 1) / 3, (2 + L2) / 3, 2 / 3]
EXPECTED_RVR = [1 / 3, 1 / 3, 0.0]


# -- single scorer ----------------------------------------------------------------------------
class TestScorer:
    @pytest.mark.parametrize("metric", METRICS)
    def test_matches_metric_function_and_sign(self, metric):
        X = ["q0", "q1", "q2"]
        y = [{"a"}, {"c", "d"}, {"b", "e"}]
        ranked = FixedRanker().predict(X)
        expected = {
            "ndcg": ndcg_at_k(ranked, y, k=3),
            "mrr": mrr(ranked, y),
            "sndcg": sndcg_at_k(ranked, y, RISK, k=3),
            "rvr": rvr_at_k(ranked, RISK, k=3),
            "srr": srr_at_k(ranked, RISK, k=3),
            "safe_rvr": safe_rvr_at_k(ranked, y, RISK, k=3),
            "needrisk_hit": needrisk_hit_at_k(ranked, y, RISK, k=3),
            "unneeded_rvr": unneeded_rvr_at_k(ranked, y, RISK, k=3),
        }[metric]
        scorer = make_ranking_scorer(metric, k=3, registry=REGISTRY)
        got = scorer(FixedRanker(), X, y)
        sign = -1 if metric in LOWER_IS_BETTER else 1
        assert type(got) is float
        assert got == pytest.approx(sign * expected, abs=1e-12)
        assert scorer._sign == sign

    def test_hand_computed_values(self):
        X, y = ["q0", "q1"], [{"a"}, {"b"}]
        est = FixedRanker(("a", "c", "b"))
        # q0: "a" at rank 1 -> 1. q1: "b" at rank 3 -> 1/log2(4) = 0.5.
        assert make_ranking_scorer("ndcg", k=3)(est, X, y) == pytest.approx(0.75)
        # "c" (L3) is 1 of 3 for both queries; the scorer reports -RVR.
        assert make_ranking_scorer("rvr", k=3, registry=RISK)(est, X, y) == pytest.approx(-1 / 3)
        assert make_ranking_scorer("srr", k=3, registry=RISK)(est, X, y) == 0.0

    def test_mrr_scorer_sees_only_top_k(self):
        X, y = ["q0"], [{"d"}]
        est = FixedRanker(("a", "b", "c", "d"))
        assert make_ranking_scorer("mrr", k=4)(est, X, y) == pytest.approx(1 / 4)
        # The same prediction cut at k=3 misses "d": MRR@3 = 0, though mrr() gives 1/4.
        assert make_ranking_scorer("mrr", k=3)(est, X, y) == 0.0
        assert mrr(est.predict(X), y) == pytest.approx(1 / 4)

    @pytest.mark.parametrize("metric", ["safe_rvr", "needrisk_hit"])
    def test_nan_on_empty_subset(self, metric):
        # Every query needs "c": no safe query; no query needs a risky tool with gold {"a"}.
        y = [{"c"}] if metric == "safe_rvr" else [{"a"}]
        got = make_ranking_scorer(metric, k=2, registry=RISK)(FixedRanker(), ["q"], y)
        assert math.isnan(got)

    @pytest.mark.parametrize("metric", METRICS)
    def test_pickles(self, metric):
        scorer = make_ranking_scorer(metric, k=2, registry=REGISTRY)
        again = pickle.loads(pickle.dumps(scorer))
        X, y = ["q0", "q1"], [{"a"}, {"c"}]
        assert again(FixedRanker(), X, y) == scorer(FixedRanker(), X, y)

    def test_metrics_without_risk_need_no_registry(self):
        for metric in ("ndcg", "mrr"):
            assert make_ranking_scorer(metric)(FixedRanker(), ["q"], [{"a"}]) == 1.0

    @settings(deadline=None, max_examples=40)
    @given(
        st.sampled_from(METRICS),
        st.lists(st.sampled_from(sorted(RISK)), min_size=1, max_size=6, unique=True),
        st.lists(
            st.sets(st.sampled_from(sorted(RISK)), min_size=1, max_size=3), min_size=1, max_size=5
        ),
        st.integers(1, 6),
    )
    def test_sign_aside_values_in_unit_interval(self, metric, names, y, k):
        value = make_ranking_scorer(metric, k=k, registry=RISK)(FixedRanker(names), y, y)
        sign = -1 if metric in LOWER_IS_BETTER else 1
        assert math.isnan(value) or 0.0 <= sign * value <= 1.0


class TestScorerErrors:
    @pytest.mark.parametrize("metric", ["NDCG", "ndcg@5", "recall", None, 3])
    def test_unknown_metric(self, metric):
        msg = MSG_UNKNOWN_METRIC.format(metric=metric, valid=sorted(METRICS))
        with pytest.raises(ValueError, match=re.escape(msg)):
            make_ranking_scorer(metric, registry=RISK)

    @pytest.mark.parametrize("metric", sorted(RISK_METRICS))
    def test_risk_metric_needs_registry(self, metric):
        with pytest.raises(ValueError, match=re.escape(MSG_NEEDS_REGISTRY.format(metric=metric))):
            make_ranking_scorer(metric, k=5)

    @pytest.mark.parametrize("k", [0, 1.5, True, None])
    def test_bad_k(self, k):
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_K.format(k=k))):
            make_ranking_scorer("ndcg", k=k)

    @pytest.mark.parametrize("registry", [[1, 2], "reg"])
    def test_bad_registry(self, registry):
        msg = MSG_BAD_REGISTRY.format(type=type(registry).__name__)
        with pytest.raises(ValueError, match=re.escape(msg)):
            make_ranking_scorer("rvr", registry=registry)


# -- risk-budget refit ------------------------------------------------------------------------
def _cv(ndcg, neg_rvr):
    return {
        "mean_test_ndcg": np.array(ndcg, dtype=float),
        "mean_test_rvr": np.array(neg_rvr, dtype=float),
    }


class TestBestUnderRiskBudget:
    def test_best_ndcg_within_budget(self):
        cv = _cv([0.50, 0.45, 0.40, 0.30], [-0.30, -0.10, -0.08, -0.02])
        assert best_under_risk_budget(0.10)(cv) == 1  # 0.10 <= 0.10 qualifies
        assert best_under_risk_budget(0.09)(cv) == 2
        assert best_under_risk_budget(1.0)(cv) == 0

    def test_ties_go_to_the_first_candidate(self):
        cv = _cv([0.4, 0.5, 0.5], [-0.1, -0.1, -0.1])
        assert best_under_risk_budget(0.2)(cv) == 1

    def test_fallback_is_lowest_rvr_then_highest_ndcg(self):
        cv = _cv([0.50, 0.20, 0.30, 0.10], [-0.30, -0.20, -0.20, -0.25])
        assert best_under_risk_budget(0.05)(cv) == 2

    def test_nan_rvr_never_qualifies_and_nan_ndcg_never_wins(self):
        cv = _cv([0.9, np.nan, 0.2], [np.nan, -0.01, -0.02])
        assert best_under_risk_budget(0.5)(cv) == 2
        cv = _cv([0.9, 0.8], [np.nan, -0.6])
        assert best_under_risk_budget(0.5)(cv) == 1  # fallback over the finite RVRs only

    def test_all_nan_rvr(self):
        msg = MSG_NO_FINITE_RVR.format(key="mean_test_rvr")
        with pytest.raises(ValueError, match=re.escape(msg)):
            best_under_risk_budget(0.5)(_cv([0.1, 0.2], [np.nan, np.nan]))

    def test_custom_keys(self):
        cv = {"mean_test_n": np.array([0.3, 0.6]), "mean_test_r": np.array([-0.1, -0.4])}
        assert best_under_risk_budget(0.2, ndcg_key="n", rvr_key="r")(cv) == 0

    def test_missing_key(self):
        cv = {"mean_test_ndcg": np.array([0.3]), "mean_test_srr": np.array([-0.1])}
        msg = MSG_MISSING_RESULT.format(
            key="mean_test_rvr", metric="rvr", available=["mean_test_ndcg", "mean_test_srr"]
        )
        with pytest.raises(ValueError, match=re.escape(msg)):
            best_under_risk_budget(0.2)(cv)

    @pytest.mark.parametrize("value", [-0.01, 1.01, float("nan"), True, "0.1", None])
    def test_bad_max_rvr(self, value):
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_MAX_RVR.format(value=value))):
            best_under_risk_budget(value)

    @pytest.mark.parametrize("key", ["", None, 3])
    def test_bad_keys(self, key):
        for name in ("ndcg_key", "rvr_key"):
            msg = MSG_BAD_KEY.format(name=name, value=key)
            with pytest.raises(ValueError, match=re.escape(msg)):
                best_under_risk_budget(0.1, **{name: key})

    def test_pickles_and_compares(self):
        refit = best_under_risk_budget(0.1, rvr_key="risk")
        again = pickle.loads(pickle.dumps(refit))
        assert again == refit and hash(again) == hash(refit)
        assert again != best_under_risk_budget(0.2, rvr_key="risk")
        assert repr(again) == "best_under_risk_budget(0.1, ndcg_key='ndcg', rvr_key='risk')"

    @settings(deadline=None, max_examples=60)
    @given(
        st.lists(
            st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=8
        ),
        st.floats(0, 1),
    )
    def test_choice_is_optimal(self, cands, budget):
        ndcg = np.array([c[0] for c in cands])
        rvr = np.array([c[1] for c in cands])
        best = best_under_risk_budget(budget)(_cv(ndcg, -rvr))
        assert type(best) is int and 0 <= best < len(cands)
        within = rvr <= budget
        if within.any():
            assert within[best] and ndcg[best] == ndcg[within].max()
        else:
            assert rvr[best] == rvr.min()


# -- in GridSearchCV --------------------------------------------------------------------------
def _search(refit, scoring=None, cv=3):
    scoring = scoring or {
        "ndcg": make_ranking_scorer("ndcg", k=3),
        "rvr": make_ranking_scorer("rvr", k=3, registry=REGISTRY),
    }
    return GridSearchCV(
        PenaltyRanker(registry=REGISTRY),
        {"penalty": [0.0, 0.6, 10.0]},
        scoring=scoring,
        refit=refit,
        cv=KFold(cv),
        error_score="raise",
    )


class TestGridSearch:
    def test_refit_on_ndcg(self):
        X, y = _pool_data()
        search = _search("ndcg").fit(X, y)
        cv = search.cv_results_
        for name in ("ndcg", "rvr"):
            for key in (f"mean_test_{name}", f"std_test_{name}", f"rank_test_{name}"):
                assert key in cv
            for i in range(3):
                assert f"split{i}_test_{name}" in cv
        np.testing.assert_allclose(cv["mean_test_ndcg"], EXPECTED_NDCG, rtol=0, atol=1e-12)
        assert search.best_index_ == int(np.argmax(cv["mean_test_ndcg"])) == 1
        assert search.best_score_ == cv["mean_test_ndcg"][1]
        assert search.best_estimator_.n_fit_queries_ == len(X)

    def test_rvr_is_negated_in_cv_results(self):
        X, y = _pool_data()
        search = _search("ndcg").fit(X, y)
        cv = search.cv_results_
        assert np.all(cv["mean_test_rvr"] <= 0)
        for i, (_, test) in enumerate(KFold(3).split(X)):
            for c, params in enumerate(cv["params"]):
                est = PenaltyRanker(registry=REGISTRY, **params)
                ranked = est.predict(X[test])
                expected = -rvr_at_k(ranked, REGISTRY, k=3)
                assert cv[f"split{i}_test_rvr"][c] == pytest.approx(expected, abs=1e-12)
        np.testing.assert_allclose(-cv["mean_test_rvr"], EXPECTED_RVR, rtol=0, atol=1e-12)
        # The lowest RVR ranks first.
        assert cv["rank_test_rvr"].tolist() == [2, 2, 1]

    def test_refit_on_risk_budget(self):
        X, y = _pool_data()
        refit = best_under_risk_budget(0.2)
        search = _search(refit).fit(X, y)
        cv = search.cv_results_
        rvr = -cv["mean_test_rvr"]
        ok = np.flatnonzero(rvr <= 0.2)
        assert search.best_index_ == int(ok[np.argmax(cv["mean_test_ndcg"][ok])]) == 2
        assert search.best_params_ == {"penalty": 10.0}
        assert not hasattr(search, "best_score_")
        # A looser budget admits the best-NDCG candidate, as refit="ndcg" would pick.
        assert _search(best_under_risk_budget(0.5)).fit(X, y).best_index_ == 1

    def test_fitted_search_pickles(self):
        X, y = _pool_data()
        search = _search(best_under_risk_budget(0.5)).fit(X, y)
        again = pickle.loads(pickle.dumps(search))
        assert again.best_index_ == search.best_index_
        np.testing.assert_array_equal(again.predict(X), search.predict(X))
        assert again.refit == search.refit

    def test_one_predict_per_split_for_two_scorers(self):
        X, y = _pool_data()
        PenaltyRanker.calls.clear()
        _search("ndcg").fit(X, y)
        # 3 candidates x 3 splits, each predicting once on its test fold; the refit does not
        # predict. Without the scorer cache this would be 18.
        assert len(PenaltyRanker.calls) == 9
        assert sorted(set(PenaltyRanker.calls)) == [4]

    def test_all_seven_scorers_share_predict(self):
        X, y = _pool_data()
        scoring = {m: make_ranking_scorer(m, k=3, registry=REGISTRY) for m in METRICS}
        PenaltyRanker.calls.clear()
        search = _search("ndcg", scoring=scoring).fit(X, y)
        assert len(PenaltyRanker.calls) == 9
        for m in METRICS:
            assert f"mean_test_{m}" in search.cv_results_

    def test_nan_fold_warns_and_keeps_going(self):
        # Every query needs a risky tool, so no fold has a safe query: safe_rvr is NaN.
        X = np.array([["c", "a", "b", "f"]] * 6, dtype=object)
        y = [{"c"}] * 6
        scoring = {
            "ndcg": make_ranking_scorer("ndcg", k=3),
            "safe_rvr": make_ranking_scorer("safe_rvr", k=3, registry=REGISTRY),
        }
        with pytest.warns(UserWarning, match="test scores are non-finite"):
            search = _search("ndcg", scoring=scoring).fit(X, y)
        assert np.isnan(search.cv_results_["mean_test_safe_rvr"]).all()
        assert search.best_index_ == 0
