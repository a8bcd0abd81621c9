"""Tests of the baseline reranking steps (risk penalty, MMR, BM25, cross-encoder)."""

import pickle
import re
import tracemalloc

import numpy as np
import pytest
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

import skriskrank
from skriskrank import DenseRetriever, RankingBatch, ToolRegistry
from skriskrank.baselines import (
    BM25Reranker,
    CrossEncoderReranker,
    MMRReranker,
    RiskPenaltyReranker,
)
from skriskrank.baselines._rerankers import (
    MSG_BM25_INDEX,
    MSG_CROSS_ENCODER_UNAVAILABLE,
    MSG_NO_QUERY_TEXT,
)

STEPS = [RiskPenaltyReranker, MMRReranker, BM25Reranker, CrossEncoderReranker]


def _unit(rng, n, d):
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def batch(tiny_registry):
    rng = np.random.default_rng(0)
    tools = _unit(rng, len(tiny_registry), 8)
    queries = _unit(rng, 3, 8)
    return RankingBatch.full_pool(
        tiny_registry, queries, tools,
        queries=["delete the old file", "what is the weather", "send an email to bob"],
    )


# -- sklearn conventions ---------------------------------------------------------------------
@pytest.mark.parametrize("cls", STEPS)
@pytest.mark.parametrize(
    "check",
    [check_estimator_cloneable, check_no_attributes_set_in_init, check_get_params_invariance,
     check_set_params, check_parameters_default_constructible,
     check_do_not_raise_errors_in_init_or_set_params],
)
def test_data_free_sklearn_checks(cls, check):
    check(cls.__name__, cls())


@pytest.mark.parametrize("cls", [RiskPenaltyReranker, MMRReranker, BM25Reranker])
def test_unfitted_and_fit_returns_self(cls, batch):
    step = cls()
    with pytest.raises(NotFittedError):
        step.predict(batch)
    assert step.fit(batch) is step
    assert step.predict(batch).shape == (3, 5)
    assert clone(step).get_params() == step.get_params()


@pytest.mark.parametrize("cls", [RiskPenaltyReranker, MMRReranker, BM25Reranker])
def test_rejects_other_registry(cls, batch):
    other = ToolRegistry.from_records(
        [{"name": f"x{i}", "description": f"other {i}", "risk": 1} for i in range(6)]
    )
    step = cls().fit(batch)
    foreign = batch.replace(registry=other)
    with pytest.raises(ValueError, match="was fitted on registry"):
        step.transform(foreign)


@pytest.mark.parametrize("cls", [RiskPenaltyReranker, MMRReranker, BM25Reranker])
def test_transform_keeps_candidate_set(cls, batch):
    top = DenseRetriever(n_candidates=4).fit(batch).transform(batch)
    out = cls().fit(top).transform(top)
    assert out.candidates.shape == top.candidates.shape
    for a, b in zip(out.candidates, top.candidates, strict=True):
        assert sorted(a.tolist()) == sorted(b.tolist())
    assert out.query_embeddings is top.query_embeddings  # not copied


# -- risk penalty ----------------------------------------------------------------------------
def test_penalty_formula_and_unknown_risk_as_level_5():
    reg = ToolRegistry.from_records(
        [{"name": "a", "description": "a", "risk": 1},
         {"name": "b", "description": "b", "risk": 3},
         {"name": "c", "description": "c", "risk": None},
         {"name": "d", "description": "d", "risk": 5}]
    )
    emb = np.eye(4, dtype=np.float32)
    batch = RankingBatch.full_pool(reg, np.ones((1, 4), np.float32) / 2, emb)
    out = RiskPenaltyReranker(risk_weight=0.4, k=4).fit(batch).transform(batch)
    expected = 0.5 - 0.4 * np.array([0.0, 0.5, 1.0, 1.0])
    np.testing.assert_allclose(out.scores[0], expected, rtol=1e-6)
    # Unknown risk is penalised exactly like level 5, never like a safe tool.
    assert out.scores[0, 2] == out.scores[0, 3]
    # On ranked lists the penalised scores re-sort each list.
    top = DenseRetriever(n_candidates=4, k=4).fit(batch).transform(batch)
    ranked = RiskPenaltyReranker(risk_weight=0.4, k=4).fit(top).transform(top)
    assert ranked.ranked_names().tolist() == [["a", "b", "c", "d"]]
    np.testing.assert_allclose(ranked.scores[0], expected, rtol=1e-6)


def test_penalty_zero_weight_is_identity(batch):
    out = RiskPenaltyReranker(risk_weight=0.0).fit(batch).transform(batch)
    np.testing.assert_array_equal(out.scores, batch.scores)


# -- MMR -------------------------------------------------------------------------------------
def test_mmr_weight_one_keeps_score_order(batch):
    out = MMRReranker(relevance_weight=1.0).fit(batch).transform(batch)
    np.testing.assert_array_equal(out.ranked_indices(), batch.ranked_indices())


def test_mmr_skips_near_duplicate():
    reg = ToolRegistry.from_records(
        [{"name": n, "description": n, "risk": 1} for n in ["a", "a_copy", "b", "c"]]
    )
    tools = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    q = np.array([[0.9, 0.3, 0.1]], dtype=np.float32)
    batch = RankingBatch.full_pool(reg, q, tools)
    assert batch.ranked_names(2).tolist() == [["a", "a_copy"]]
    out = MMRReranker(relevance_weight=0.5, k=2).fit(batch)
    assert out.predict(batch).tolist() == [["a", "b"]]
    # The rest follow in score order, and each candidate keeps its score.
    assert out.rank(batch).tolist() == [[0, 2, 1, 3]]
    np.testing.assert_array_equal(out.transform(batch).scores[0],
                                  batch.scores[0, [0, 2, 1, 3]])


@settings(deadline=None, max_examples=25)
@given(seed=st.integers(0, 10_000), lam=st.floats(0, 1), k=st.integers(1, 8),
       n_cand=st.integers(1, 12))
def test_mmr_output_is_a_permutation(seed, lam, k, n_cand):
    rng = np.random.default_rng(seed)
    reg = ToolRegistry.from_records(
        [{"name": f"t{i}", "description": f"tool {i}", "risk": 1} for i in range(12)]
    )
    batch = RankingBatch.full_pool(reg, _unit(rng, 4, 6), _unit(rng, 12, 6))
    batch = DenseRetriever(n_candidates=n_cand).fit(batch).transform(batch)
    out = MMRReranker(relevance_weight=lam, k=k).fit(batch).transform(batch)
    for a, b in zip(out.candidates, batch.candidates, strict=True):
        assert sorted(a.tolist()) == sorted(b.tolist())
    # The first pick is always the best-scored candidate.
    np.testing.assert_array_equal(out.candidates[:, 0], batch.ranked_indices(1)[:, 0])


def test_mmr_memory_stays_per_candidate_on_a_large_registry():
    # Regression: up to dc87686 every MMR step scored all registry tools against the pick,
    # a (queries, n_tools) array: 96.7 MB peak here against 2.3 MB now (both measured).
    n_tools, n_q, d, m = 60_000, 200, 32, 100
    rng = np.random.default_rng(0)
    names = [f"tool_{i}" for i in range(n_tools)]
    reg = ToolRegistry(names, names, np.ones(n_tools, dtype=int), [[]] * n_tools)
    cand = np.stack([rng.choice(n_tools, m, replace=False) for _ in range(n_q)])
    batch = RankingBatch(reg, _unit(rng, n_q, d), _unit(rng, n_tools, d), cand,
                         rng.random((n_q, m), dtype=np.float32))
    step = MMRReranker(k=5).fit(batch)
    tracemalloc.start()  # numpy reports its allocations to tracemalloc
    try:
        out = step.transform(batch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < n_q * n_tools * 4 / 8  # an eighth of one float32 (queries, n_tools) array
    for a, b in zip(out.candidates, batch.candidates, strict=True):
        assert sorted(a.tolist()) == sorted(b.tolist())


# -- BM25 ------------------------------------------------------------------------------------
def test_bm25_ranks_lexical_match_first(batch):
    step = BM25Reranker().fit(batch)
    top1 = step.transform(batch).ranked_names(1)[:, 0].tolist()
    assert top1 == ["delete_file", "get_weather", "send_email"]


def test_bm25_scores_follow_candidates(batch):
    step = BM25Reranker().fit(batch)
    full = step.transform(batch)
    top = DenseRetriever(n_candidates=3).fit(batch).transform(batch)
    sub = step.transform(top)
    np.testing.assert_allclose(sub.scores, np.take_along_axis(full.scores, sub.candidates, axis=1))
    for a, b in zip(sub.candidates, top.candidates, strict=True):
        assert sorted(a.tolist()) == sorted(b.tolist())


def test_bm25_index_of_the_wrong_size_is_a_value_error(batch):
    # Regression: up to dc87686 this was an assert (an AssertionError, or nothing under -O);
    # MSG_BM25_INDEX did not exist there, so the import alone fails on that version.
    step = BM25Reranker().fit(batch)

    class ShortIndex:  # an index built over another registry
        def get_scores(self, tokens):
            return np.zeros(len(batch.registry) - 1)

    step.index_ = ShortIndex()
    msg = MSG_BM25_INDEX.format(got=len(batch.registry) - 1, expected=len(batch.registry))
    with pytest.raises(ValueError, match=re.escape(msg)):
        step.transform(batch)


@pytest.mark.parametrize("cls", [BM25Reranker])
def test_text_steps_need_query_text(cls, batch):
    step = cls().fit(batch)
    with pytest.raises(ValueError, match=re.escape(MSG_NO_QUERY_TEXT.format(step=cls.__name__))):
        step.transform(batch.replace(queries=None))


# -- cross-encoder ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A randomly initialised 1-layer BERT cross-encoder saved to disk (no download)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path = tmp_path_factory.mktemp("tiny_ce")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
        "read the contents of a text file list files in folder send an email message delete "
        "from disk run bash command look up weather forecast old what is to bob"
    ).split()
    (path / "vocab.txt").write_text("\n".join(dict.fromkeys(words)) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(path / "vocab.txt"))
    config = BertConfig(
        vocab_size=len(dict.fromkeys(words)), hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64, num_labels=1,
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_cross_encoder_loads_local_model_and_reranks(tiny_cross_encoder, batch):
    step = CrossEncoderReranker(str(tiny_cross_encoder), n_rerank=4).fit(batch)
    out = step.transform(batch)
    ranked_in = batch.ranked_indices()
    assert out.n_candidates == 4  # only what the cross-encoder scored is kept
    for row_out, row_in in zip(out.candidates, ranked_in, strict=True):
        assert sorted(row_out.tolist()) == sorted(row_in[:4].tolist())
    assert np.all(np.diff(out.scores, axis=1) <= 0)
    assert step.predict(batch).shape == (3, 4)


def test_cross_encoder_order_matches_model_scores(tiny_cross_encoder, batch):
    from sentence_transformers import CrossEncoder

    step = CrossEncoderReranker(str(tiny_cross_encoder), n_rerank=6).fit(batch)
    out = step.transform(batch)
    ce = CrossEncoder(str(tiny_cross_encoder), device="cpu", local_files_only=True)
    texts = batch.registry.texts
    for q, row in zip(batch.queries, out.candidates, strict=True):
        s = ce.predict([(q, texts[t]) for t in row], show_progress_bar=False)
        assert np.all(np.diff(s) <= 1e-6)


def test_cross_encoder_pickle_drops_weights(tiny_cross_encoder, batch):
    step = CrossEncoderReranker(str(tiny_cross_encoder), n_rerank=3).fit(batch)
    before = step.predict(batch)
    blob = pickle.dumps(step)
    assert len(blob) < 50_000  # the model is not in the pickle
    again = pickle.loads(blob)
    np.testing.assert_array_equal(again.predict(batch), before)


def test_cross_encoder_unavailable_offline_is_a_clear_error(tmp_path, batch):
    missing = str(tmp_path / "no-such-model")
    prefix = MSG_CROSS_ENCODER_UNAVAILABLE.split("{error}")[0].format(model=missing)
    with pytest.raises(ValueError, match=re.escape(prefix)):
        CrossEncoderReranker(missing).fit(batch)


def test_cross_encoder_uncached_hub_name_fails_without_network(batch, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="offline"):
        CrossEncoderReranker("skriskrank-tests/definitely-not-cached-ce").fit(batch)


def test_cross_encoder_needs_a_model(batch):
    with pytest.raises(ValueError, match="no model given"):
        CrossEncoderReranker().fit(batch)


def test_cross_encoder_needs_query_text(tiny_cross_encoder, batch):
    step = CrossEncoderReranker(str(tiny_cross_encoder)).fit(batch)
    with pytest.raises(ValueError, match=re.escape(
            MSG_NO_QUERY_TEXT.format(step="CrossEncoderReranker"))):
        step.transform(batch.replace(queries=None))


def test_the_baselines_live_in_their_own_module():
    for cls in STEPS:
        assert not hasattr(skriskrank, cls.__name__)
