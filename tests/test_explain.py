"""explain: per-candidate reasons whose top-k equals predict, on every pipeline prefix."""

import numpy as np
import pytest
from sklearn.pipeline import Pipeline

from skriskrank import (
    DenseRetriever,
    FrozenEmbedder,
    GraphSmoother,
    NeedAwareFilter,
    RiskAwareReranker,
    RuleFilter,
    explain,
)

pytestmark = pytest.mark.slow


def _pipe(registry, last):
    return Pipeline([
        ("embed", FrozenEmbedder(registry)),
        ("retrieve", DenseRetriever(n_candidates=30)),
        ("rerank", RiskAwareReranker(epochs=2, random_state=0)),
        ("smooth", GraphSmoother()),
        ("filter", last),
    ])


def _check_top_k_equals_predict(pipe, queries, k):
    table = explain(pipe, queries)
    top = (table[table["rank"].notna()].sort_values(["query", "rank"], kind="stable")
           .groupby("query", sort=False)["tool"].apply(list))
    expected = pipe.predict(queries)
    for q, row in zip(queries, expected, strict=True):
        # A relevance floor may leave a query with no tool: no ranked row, an all-None row.
        assert top.get(q, []) == [t for t in row.tolist() if t is not None]
    assert set(table["query"]) == set(queries)
    return table


@pytest.mark.parametrize("dataset", ["ultratool", "sealtools_dev"])
def test_every_prefix_explains_its_own_predict(request, dataset):
    ds = request.getfixturevalue(dataset)
    train, test = ds.subset(np.arange(150)), ds.subset(np.arange(150, 190))
    pipe = _pipe(ds.registry, RuleFilter()).fit(train.queries, train.relevant)
    for n in range(2, len(pipe.steps) + 1):  # from embed + retrieve: the first ranking
        prefix = Pipeline(pipe.steps[:n])
        table = _check_top_k_equals_predict(prefix, test.queries, 5)
        names = [name for name, _ in pipe.steps[:n]]
        if "rerank" in names:
            assert {"f_rel", "p_rel", "f_risk", "risk_penalty"} <= set(table.columns)
            np.testing.assert_allclose(
                table["risk_penalty"],
                0.1 * pipe["rerank"].risk_penalty_[ds.registry.index_of(table["tool"])],
                rtol=1e-6)
        if "smooth" in names:
            assert "smoothing" in table.columns
    # The other last steps, fitted (as Pipeline.fit would) on what the upstream steps emit
    # for the training queries; the upstream is trained once.
    upstream = Pipeline(pipe.steps[:-1])
    batch = upstream.transform(train.queries)
    for last in (RuleFilter(), NeedAwareFilter(), NeedAwareFilter(relevance_floor=0.3)):
        full = Pipeline([*upstream.steps, ("filter", last.fit(batch, train.relevant))])
        table = _check_top_k_equals_predict(full, test.queries, 5)
        assert table["reason"].str.len().gt(0).all()
        kept = table[table["rank"].notna()]
        assert kept["reason"].str.startswith(("accepted", "kept to fill")).all()


def test_reasons_read_like_the_rules(tiny_registry):
    from skriskrank import RankingBatch

    emb = np.eye(6, dtype=np.float32)
    emb[3] = emb[0]  # delete_file duplicates read_file
    q = np.array([[0.9, 0.1, 0.5, 0.85, 0.6, 0.2]], dtype=np.float32)
    batch = RankingBatch.full_pool(tiny_registry, q / np.linalg.norm(q), emb)
    filt = RuleFilter(k=3).fit(batch)
    out = filt.transform(batch.traced())
    words = {tiny_registry.names[t]: filt.reason(out, 0, j)
             for j, t in enumerate(out.candidates[0])}
    assert words["read_file"] == "accepted"
    assert words["delete_file"] == "deferred: near-duplicate of read_file, cosine 1.00"
    assert words["run_shell"] == "accepted"  # the first tool of risk >= 3 (0.6)
    assert words["send_email"] == "deferred: a second tool of risk >= 3"


def test_an_untraced_batch_records_nothing_and_a_traced_one_the_same_ranking(tiny_registry):
    from skriskrank import RankingBatch

    rng = np.random.default_rng(0)
    emb = rng.normal(size=(6, 4)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    batch = RankingBatch.full_pool(tiny_registry, emb[:2] + 0.1, emb)
    filt = RuleFilter(k=3).fit(batch)
    plain, traced = filt.transform(batch), filt.transform(batch.traced())
    assert plain.parts is None and set(traced.parts) == {"decision", "duplicate_of"}
    np.testing.assert_array_equal(plain.candidates, traced.candidates)
    np.testing.assert_array_equal(plain.scores, traced.scores)
