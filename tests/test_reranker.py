"""Tests for RiskAwareReranker, DualHeadModule and DualHeadNet.

Everything runs on small synthetic registries with random L2-normalized embeddings
(``RankingBatch.full_pool``): the reranker never sees text, so no encoder is needed.
"""

import dataclasses
import io
import pickle
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import joblib
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import skriskrank._reranker as reranker_module
import skriskrank._training as training_module
from skriskrank import RankingBatch, RiskAwareReranker, ToolRegistry
from skriskrank._base import MSG_Y_LENGTH
from skriskrank._batch import MSG_NOT_A_BATCH
from skriskrank._head_weights import HeadWeights
from skriskrank._heads import DualHeadModule, DualHeadNet
from skriskrank._reranker import MSG_NEGATIVES, MSG_NO_NEGATIVES
from skriskrank._rubric import UNKNOWN_RISK
from skriskrank._training import MSG_NO_VALIDATION, MSG_TOO_FEW_QUERIES
from skriskrank.metrics import ndcg_at_k

N_TOOLS, DIM, N_QUERIES = 24, 16, 40
#: Small and fast: a handful of optimizer steps per epoch.
FAST = dict(epochs=3, hidden=8, batch_size=16, validation_fraction=0, random_state=0)


def unit(a):
    return (a / np.linalg.norm(a, axis=-1, keepdims=True)).astype(np.float32)


def make_registry(n=N_TOOLS, risks=None, prefix="t"):
    risks = [1 + i % 5 for i in range(n)] if risks is None else risks
    return ToolRegistry.from_records(
        [{"name": f"{prefix}{i}", "description": f"tool number {i}", "risk": r}
         for i, r in enumerate(risks)]
    )


def make_data(registry=None, n_queries=N_QUERIES, seed=0, noise=0.6):
    """A full-pool batch whose query i is a noisy copy of its gold tool(s)."""
    registry = make_registry() if registry is None else registry
    n = len(registry)
    rng = np.random.default_rng(seed)
    tools = unit(rng.normal(size=(n, DIM)))
    gold = [sorted({int(i % n), int((3 * i + 1) % n)} if i % 3 == 0 else {int(i % n)})
            for i in range(n_queries)]
    queries = unit(
        np.stack([tools[g].mean(0) for g in gold]) + noise * rng.normal(size=(n_queries, DIM))
    )
    batch = RankingBatch.full_pool(registry, queries, tools, encoder="synthetic")
    y = [{registry.names[j] for j in g} for g in gold]
    return batch, y


def subset_batch(batch, m=8, seed=1):
    """The same queries with m random candidates each (not the full pool)."""
    rng = np.random.default_rng(seed)
    cand = np.stack([rng.choice(len(batch.registry), m, replace=False)
                     for _ in range(batch.n_queries)]).astype(np.int64)
    scores = np.take_along_axis(batch.scores, cand, axis=1)
    return batch.replace(candidates=cand, scores=scores)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # The heads here are tiny: with two threads on a busy machine, each optimizer step spends
    # most of its time in thread hand-offs (measured 6x slower than one thread).
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def data():
    return make_data()


@pytest.fixture(scope="module")
def fitted(data):
    batch, y = data
    return RiskAwareReranker(**FAST).fit(batch, y)


@pytest.fixture
def train_calls(monkeypatch):
    """Count the real trainings (fits that ``memory`` did not answer)."""
    calls = []
    original = reranker_module._train_heads

    def _train_heads(params, seed, q_emb, t_emb, candidates, hard_pool, gold, risk, device,
                     verbose=0):
        calls.append(params)
        return original(params, seed, q_emb, t_emb, candidates, hard_pool, gold, risk,
                        device, verbose)

    monkeypatch.setattr(reranker_module, "_train_heads", _train_heads)
    return calls


def randomized_module(dim, hidden, head, seed=0):
    """A module with every weight random (the residual head's output layer starts at zero)."""
    torch.manual_seed(seed)
    module = DualHeadModule(dim, hidden=hidden, relevance_head=head)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.5 * torch.randn_like(p))
    return module.eval()


# --------------------------------------------------------------------------------------------
# DualHeadModule
# --------------------------------------------------------------------------------------------
def n_trainable(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def test_concat_head_has_the_papers_parameter_count():
    # Relevance 2d -> 64 -> 1 and risk d -> 64 -> 1 with d = 1024:
    # (2048 * 64 + 64) + (64 + 1) + (1024 * 64 + 64) + (64 + 1) = 196,866.
    assert n_trainable(DualHeadModule(1024, hidden=64, relevance_head="concat")) == 196_866


def test_residual_head_parameter_count():
    # Elementwise interactions: relevance 3d -> 64 -> 1 over [e_q; e_t; e_q * e_t] plus the
    # cosine scale and bias: (3072 * 64 + 64) + (64 + 1) + 2 + the risk head (65,665) = 262,404.
    assert n_trainable(DualHeadModule(1024, hidden=64, relevance_head="residual",
                                      interaction_rank=None)) == 262_404
    # Projected, rank 32 (the default): relevance (2d + 32) -> 64 -> 1, two 1024 -> 32
    # projections without bias: (2080 * 64 + 64) + 65 + 2 + 2 * 32,768 + 65,665 = 264,452.
    assert n_trainable(DualHeadModule(1024, hidden=64, relevance_head="residual")) == 264_452
    assert n_trainable(DualHeadModule(1024, hidden=64)) == 264_452  # residual is the default


def test_projected_interactions_start_as_a_projection_of_the_cosine():
    # Both projections start as the same orthonormal rows: with r = d, sum((P q) * (P t))
    # is exactly q . t, so the interaction features start as a rotation of e_q * e_t's.
    module = DualHeadModule(DIM, hidden=4, interaction_rank=DIM)
    pq, pt = module.rel_proj_q.weight, module.rel_proj_t.weight
    torch.testing.assert_close(pq, pt)
    q, t = torch.randn(5, DIM), torch.randn(5, DIM)
    with torch.no_grad():
        torch.testing.assert_close(((q @ pq.T) * (t @ pt.T)).sum(1), (q * t).sum(1))
    # The concat head has no interaction features, whatever the rank.
    assert not hasattr(DualHeadModule(DIM, relevance_head="concat"), "rel_proj_q")


@pytest.mark.parametrize("head", ["concat", "residual"])
def test_forward_shapes_and_ranges(head):
    module = randomized_module(DIM, 8, head)
    rel, risk = module(torch.randn(3, DIM), torch.randn(3, 5, DIM))
    assert rel.shape == risk.shape == (3, 5)
    assert ((rel > 0) & (rel < 1)).all() and ((risk > 0) & (risk < 1)).all()
    # f_risk depends on the tool only.
    tools = torch.randn(1, 4, DIM).expand(2, -1, -1)
    _, risk = module(torch.randn(2, DIM), tools)
    torch.testing.assert_close(risk[0], risk[1])


@pytest.mark.parametrize("head", ["concat", "residual"])
@pytest.mark.parametrize("subset", [False, True])
def test_numpy_scoring_equals_torch_forward(head, subset):
    batch, _ = make_data(n_queries=7)
    module = randomized_module(DIM, 8, head, seed=3)
    heads = HeadWeights.from_module(module)
    b = subset_batch(batch, m=9) if subset else batch
    cand = np.asarray(b.candidates)
    with torch.no_grad():
        rel_t, risk_t = module(
            torch.from_numpy(b.query_embeddings), torch.from_numpy(b.tool_embeddings[cand])
        )
    rel = heads.relevance(b.query_embeddings, b.tool_embeddings, cand if subset else None)
    np.testing.assert_allclose(rel, rel_t.numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(
        heads.risk(b.tool_embeddings)[cand], risk_t.numpy(), atol=1e-5, rtol=0
    )
    # Blocking over queries changes nothing.
    chunked = heads.relevance(b.query_embeddings, b.tool_embeddings,
                              cand if subset else None, block=1)
    np.testing.assert_allclose(chunked, rel, atol=1e-6, rtol=0)


def test_residual_head_at_initialization_ranks_like_cosine():
    batch, _ = make_data(n_queries=12)
    torch.manual_seed(0)
    heads = HeadWeights.from_module(DualHeadModule(DIM, hidden=8))
    for b in (batch, subset_batch(batch, m=10)):
        cand = None if b.is_full_pool else np.asarray(b.candidates)
        rel = heads.relevance(b.query_embeddings, b.tool_embeddings, cand)
        ranked_rel = np.argsort(-rel, axis=1, kind="stable")
        ranked_cos = np.argsort(-b.scores, axis=1, kind="stable")
        np.testing.assert_array_equal(ranked_rel, ranked_cos)
        # ... and is exactly sigmoid(10 cos - 5).
        np.testing.assert_allclose(rel, 1 / (1 + np.exp(-(10 * b.scores - 5))), atol=1e-6)


def test_concat_head_at_initialization_does_not_rank_like_cosine():
    # The contrast that motivates the residual head: a fresh concat head ignores cosine.
    batch, _ = make_data(n_queries=12)
    torch.manual_seed(0)
    heads = HeadWeights.from_module(DualHeadModule(DIM, hidden=8, relevance_head="concat"))
    rel = heads.relevance(batch.query_embeddings, batch.tool_embeddings)
    assert not np.array_equal(np.argsort(-rel, axis=1), np.argsort(-batch.scores, axis=1))


# --------------------------------------------------------------------------------------------
# DualHeadNet.get_loss
# --------------------------------------------------------------------------------------------
def _net(margin=0.1, risk_loss_weight=0.5):
    net = DualHeadNet(
        DualHeadModule, module__dim=4, criterion=torch.nn.MSELoss, margin=margin,
        risk_loss_weight=risk_loss_weight, train_split=None,
    )
    return net.initialize()


def test_loss_is_margin_plus_weighted_risk_mse():
    net = _net(margin=0.2, risk_loss_weight=0.5)
    rel = torch.tensor([[0.9, 0.8, 0.1], [0.3, 0.6, 0.2]])
    risk = torch.tensor([[0.1, 0.5, 0.9], [0.2, 0.2, 0.2]])
    target = torch.tensor([[0.0, 0.5, 1.0], [0.25, 0.0, 0.5]])
    loss = net.get_loss((rel, risk), target)
    margin = torch.relu(0.2 - rel[:, :1] + rel[:, 1:]).mean()
    mse = ((risk - target) ** 2).mean()
    torch.testing.assert_close(loss, margin + 0.5 * mse)


def test_unknown_risk_targets_are_left_out_of_the_risk_loss():
    net = _net(margin=0.1, risk_loss_weight=1.0)
    rel = torch.tensor([[0.9, 0.1, 0.1]])
    risk = torch.tensor([[0.3, 0.9, 0.4]], requires_grad=True)
    target = torch.tensor([[0.5, float("nan"), 0.0]])
    loss = net.get_loss((rel, risk), target)
    expected = ((0.3 - 0.5) ** 2 + 0.4**2) / 2  # margin term is 0 here
    assert torch.isfinite(loss)
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    loss.backward()
    assert risk.grad[0, 1] == 0  # no push at all on the unknown tool's risk
    # All unknown: the risk term vanishes but the loss stays differentiable.
    risk2 = torch.tensor([[0.3, 0.9, 0.4]], requires_grad=True)
    loss = net.get_loss((rel, risk2), torch.full((1, 3), float("nan")))
    assert loss.item() == 0.0
    loss.backward()
    assert torch.equal(risk2.grad, torch.zeros(1, 3))


# --------------------------------------------------------------------------------------------
# The estimator: fit, predict, rank
# --------------------------------------------------------------------------------------------
def test_fit_returns_self_and_fitted_attributes(data):
    batch, y = data
    rr = RiskAwareReranker(**FAST)
    assert rr.fit(batch, y) is rr
    assert isinstance(rr.net_, DualHeadNet)
    assert rr.tool_risk_.shape == (N_TOOLS,) and rr.tool_risk_.dtype == np.float32
    assert ((rr.tool_risk_ > 0) & (rr.tool_risk_ < 1)).all()
    assert rr.n_epochs_ == 3
    assert rr.best_epoch_ == 3  # no validation: the last epoch is kept
    assert rr.validation_scores_ == []
    assert rr.registry_ is batch.registry
    assert rr.encoder_ == "synthetic"
    assert isinstance(rr.heads_, HeadWeights) and rr.heads_.cos_scale != 0


def test_predict_and_rank(fitted, data):
    batch, _ = data
    top = fitted.predict(batch)
    assert top.shape == (N_QUERIES, 5)
    assert set(top.ravel()) <= set(batch.registry.names)
    ranked = fitted.rank(batch)
    assert ranked.shape == (N_QUERIES, N_TOOLS)
    assert (np.sort(ranked, axis=1) == np.arange(N_TOOLS)).all()  # a permutation per row
    np.testing.assert_array_equal(batch.registry.names[ranked[:, :5]], top)
    np.testing.assert_array_equal(fitted.rank(batch, k=3), ranked[:, :3])
    # The ranking follows the transformed scores.
    scores = fitted.transform(batch).scores
    assert (np.diff(np.take_along_axis(scores, ranked, axis=1), axis=1) <= 0).all()
    assert fitted.set_params(k=2).predict(batch).shape == (N_QUERIES, 2)
    fitted.set_params(k=5)


def test_transform_on_candidate_subsets(fitted, data):
    batch, _ = data
    sub = subset_batch(batch, m=6)
    out = fitted.transform(sub)
    # The same candidates with new scores, each row sorted by them.
    np.testing.assert_array_equal(np.sort(out.candidates, axis=1),
                                  np.sort(sub.candidates, axis=1))
    assert (np.diff(out.scores, axis=1) <= 0).all()
    assert out.tool_embeddings is batch.tool_embeddings
    full = fitted.transform(batch).scores
    np.testing.assert_allclose(
        out.scores, np.take_along_axis(full, out.candidates, axis=1), atol=1e-6
    )
    assert fitted.predict(sub).shape == (N_QUERIES, 5)
    assert fitted.rank(sub).shape == (N_QUERIES, 6)
    assert set(fitted.rank(sub)[0]) == set(sub.candidates[0])
    np.testing.assert_array_equal(fitted.predict_risk(sub), fitted.tool_risk_[sub.candidates])
    # The input batch is not changed in place.
    np.testing.assert_array_equal(
        sub.scores, np.take_along_axis(batch.scores, np.asarray(sub.candidates), axis=1)
    )


def test_training_learns_the_synthetic_task(data):
    # A smoke check that the heads learn something: the trained ranking of the training
    # queries finds gold tools far above the 5/24 a random ranking would.
    batch, y = data
    rr = RiskAwareReranker(epochs=20, hidden=16, lr=1e-2, risk_weight=0.0,
                           validation_fraction=0, relevance_head="concat", random_state=0)
    top = rr.fit(batch, y).predict(batch)
    hits = np.mean([bool(set(row) & gold) for row, gold in zip(top, y, strict=True)])
    assert hits > 0.6


def test_other_tool_embeddings_of_the_same_registry_are_not_scored_with_stale_ones(fitted,
                                                                                   data):
    batch, _ = data
    before = fitted.transform(batch).scores
    rng = np.random.default_rng(7)
    other = rng.standard_normal(batch.tool_embeddings.shape).astype(np.float32)
    other /= np.linalg.norm(other, axis=1, keepdims=True)
    moved = RankingBatch.full_pool(batch.registry, batch.query_embeddings, other,
                                   encoder=batch.encoder)
    fresh = clone(fitted).fit(*data)  # same training (fit cache), empty tool cache
    np.testing.assert_allclose(fitted.transform(moved).scores, fresh.transform(moved).scores,
                               atol=1e-6)
    assert not np.allclose(fitted.transform(moved).scores, before, atol=1e-3)
    np.testing.assert_allclose(fitted.transform(batch).scores, before, atol=1e-6)


def test_not_fitted(data):
    batch, _ = data
    rr = RiskAwareReranker()
    for method in (rr.predict, rr.transform, rr.rank, rr.relevance_scores, rr.predict_risk):
        with pytest.raises(NotFittedError):
            method(batch)


# --------------------------------------------------------------------------------------------
# risk_weight at inference
# --------------------------------------------------------------------------------------------
def test_risk_weight_acts_at_inference_without_refit(data, train_calls):
    batch, y = data
    rr = RiskAwareReranker(**{**FAST, "risk_weight": 0.0}).fit(batch, y)
    assert len(train_calls) == 1
    rel = rr.transform(batch).scores
    np.testing.assert_allclose(rel, rr.relevance_proba(batch), rtol=1e-6)
    heads = rr.heads_
    for lam in (0.05, 0.3, 2.0):
        scores = rr.set_params(risk_weight=lam).transform(batch).scores
        np.testing.assert_allclose(scores, rel - lam * rr.risk_penalty_[batch.candidates],
                                   atol=1e-6)
        assert not np.allclose(scores, rel)
    assert rr.heads_ is heads and len(train_calls) == 1
    # A large weight leaves the k least penalised tools on top: p_rel lies in [0, 1], so the
    # top-k's summed penalty is within k / lambda of the k smallest.
    lam = 100.0
    top = rr.set_params(risk_weight=lam).rank(batch, k=5)
    least = np.sort(rr.risk_penalty_)[:5].sum()
    assert (rr.risk_penalty_[top].sum(axis=1) <= least + 5 / lam + 1e-4).all()


def test_the_trade_off_is_on_calibrated_scales(data):
    batch, y = data
    rr = RiskAwareReranker(**{**FAST, "validation_fraction": 0.25, "epochs": 5, "lr": 1e-2})
    rr.fit(batch, y)
    # p_rel is a monotone map of f_rel: the same ranking.
    f_rel, p_rel = rr.relevance_scores(batch), rr.relevance_proba(batch)
    np.testing.assert_array_equal(np.argsort(-f_rel, axis=1, kind="stable"),
                                  np.argsort(-p_rel, axis=1, kind="stable"))
    assert ((p_rel >= 0) & (p_rel <= 1)).all()
    a, b = rr.relevance_calibration_
    assert a > 0
    # The penalty follows f_risk upwards and sits on the rubric's scale in [0, 1].
    order = np.argsort(rr.tool_risk_)
    assert (np.diff(rr.risk_penalty_[order]) >= -1e-6).all()
    assert ((rr.risk_penalty_ >= 0) & (rr.risk_penalty_ <= 1)).all()


def test_unknown_risk_takes_the_full_penalty():
    registry = make_registry(risks=[None if i % 4 == 0 else 1 + i % 5 for i in range(N_TOOLS)])
    batch, y = make_data(registry)
    rr = RiskAwareReranker(**FAST).fit(batch, y)
    unknown = ~registry.risk_known
    assert (rr.risk_penalty_[unknown] == 1).all()
    assert (rr.risk_penalty_[~unknown] < 1).any()


@pytest.fixture(scope="module")
def risk_model(data):
    """A model whose risk head learned the registry's levels (so lambda has work to do)."""
    batch, y = data
    rr = RiskAwareReranker(**{**FAST, "epochs": 5, "lr": 1e-2}).fit(batch, y)
    # The risk head has learned the audited levels, and over the grid of the property test
    # (lambda in [0, 3]) the top-5 of most queries changes: the property is not vacuous.
    assert np.corrcoef(rr.tool_risk_, batch.registry.risk)[0, 1] > 0.3
    top0 = rr.set_params(risk_weight=0.0).rank(batch, k=5)
    top3 = rr.set_params(risk_weight=3.0).rank(batch, k=5)
    assert (top0 != top3).any(axis=1).mean() > 0.5
    return rr


@settings(deadline=None, max_examples=25)
@given(st.lists(st.integers(0, 300), min_size=2, max_size=8, unique=True), st.integers(1, 8))
def test_mean_top_k_risk_never_increases_with_risk_weight(risk_model, data, grid, k):
    batch, _ = data
    rr = clone(risk_model)  # unfitted copy, to leave the shared fixture alone
    rr.__dict__.update({a: v for a, v in risk_model.__dict__.items() if a.endswith("_")})
    previous = None
    for lam in sorted(g / 100 for g in grid):
        top = rr.set_params(risk_weight=lam).rank(batch, k=k)
        mean_risk = rr.tool_risk_[top].astype(np.float64).mean(axis=1)
        if previous is not None:
            # Per query: a top-k set by rel - lambda * risk cannot get riskier as lambda
            # grows (exchange argument); the slack covers float32 score rounding.
            assert (mean_risk <= previous + 1e-5).all()
        previous = mean_risk


def test_risk_weight_zero_is_relevance_only(fitted, data):
    batch, _ = data
    rr = clone(fitted)
    rr.__dict__.update({a: v for a, v in fitted.__dict__.items() if a.endswith("_")})
    rr.set_params(risk_weight=0)
    np.testing.assert_array_equal(rr.transform(batch).scores, rr.relevance_proba(batch))


# --------------------------------------------------------------------------------------------
# memory and reproducibility
# --------------------------------------------------------------------------------------------
def assert_same_heads(a, b):
    for field in dataclasses.fields(HeadWeights):
        np.testing.assert_array_equal(getattr(b.heads_, field.name),
                                      getattr(a.heads_, field.name))


def test_memory_shares_the_training_of_fits_differing_only_at_inference(data, train_calls,
                                                                         tmp_path):
    batch, y = data
    params = {**FAST, "memory": str(tmp_path)}
    a = RiskAwareReranker(**{**params, "risk_weight": 0.0}).fit(batch, y)
    b = RiskAwareReranker(**{**params, "risk_weight": 0.5, "verbose": 0}).fit(batch, y)
    c = clone(a).set_params(risk_weight=0.2).fit(batch, y)
    assert len(train_calls) == 1
    for other in (b, c):
        assert_same_heads(a, other)
        np.testing.assert_array_equal(other.tool_risk_, a.tool_risk_)
    assert not np.allclose(a.transform(batch).scores, b.transform(batch).scores)
    # Without validation, k is only predict's cutoff: no new training either.
    RiskAwareReranker(**{**params, "k": 3}).fit(batch, y)
    assert len(train_calls) == 1
    # A training parameter, the data or the seed changing means a new training.
    RiskAwareReranker(**{**params, "margin": 0.2}).fit(batch, y)
    RiskAwareReranker(**{**params, "random_state": 1}).fit(batch, y)
    RiskAwareReranker(**params).fit(batch, y[::-1])
    RiskAwareReranker(**params).fit(subset_batch(batch, m=10), y)
    assert len(train_calls) == 5
    # With validation, k is the cutoff of the early-stopping NDCG: it changes training.
    valid = {**params, "validation_fraction": 0.2}
    RiskAwareReranker(**{**valid, "k": 5}).fit(batch, y)
    RiskAwareReranker(**{**valid, "k": 3}).fit(batch, y)
    RiskAwareReranker(**{**valid, "k": 3, "risk_weight": 0.7}).fit(batch, y)
    assert len(train_calls) == 7


def test_without_memory_every_fit_trains(data, train_calls):
    batch, y = data
    RiskAwareReranker(**FAST).fit(batch, y)
    RiskAwareReranker(**{**FAST, "risk_weight": 0.3}).fit(batch, y)
    assert len(train_calls) == 2


def test_concat_fits_differing_only_in_interaction_rank_share_the_training(data, train_calls,
                                                                          tmp_path):
    batch, y = data
    params = {**FAST, "relevance_head": "concat", "memory": str(tmp_path)}
    a = RiskAwareReranker(**{**params, "interaction_rank": 8}).fit(batch, y)
    b = RiskAwareReranker(**{**params, "interaction_rank": None}).fit(batch, y)
    assert len(train_calls) == 1
    np.testing.assert_array_equal(a.transform(batch).scores, b.transform(batch).scores)
    # The residual head uses the rank, so there it still means a new training.
    RiskAwareReranker(**{**FAST, "interaction_rank": 8, "memory": str(tmp_path)}).fit(batch, y)
    RiskAwareReranker(**{**FAST, "interaction_rank": None, "memory": str(tmp_path)}).fit(batch,
                                                                                         y)
    assert len(train_calls) == 3


def test_unseeded_fits_are_never_cached(data, train_calls, tmp_path):
    batch, y = data
    params = {**FAST, "random_state": None, "memory": str(tmp_path)}
    RiskAwareReranker(**params).fit(batch, y)
    RiskAwareReranker(**params).fit(batch, y)
    RiskAwareReranker(**{**params, "random_state": np.random.RandomState(0)}).fit(batch, y)
    assert len(train_calls) == 3
    assert not any(tmp_path.rglob("output.pkl"))


_FRESH_FIT = """
import pickle, sys
sys.path.insert(0, {tests!r})
from test_reranker import make_data, RiskAwareReranker, FAST
batch, y = make_data()
rr = RiskAwareReranker(**{{**FAST, "validation_fraction": 0.25, "epochs": 4, "k": 2}})
rr.fit(batch, y)
sys.stdout.buffer.write(pickle.dumps((rr.heads_, rr.validation_scores_, rr.best_epoch_)))
"""


def test_a_refit_with_another_k_gets_what_a_fresh_process_gets(data):
    # k is the cutoff of the early-stopping NDCG: a refit with another k in the same
    # process must not inherit anything from the first fit.
    import pathlib
    import subprocess
    import sys

    batch, y = data
    params = {**FAST, "validation_fraction": 0.25, "epochs": 4}
    RiskAwareReranker(**{**params, "k": 5}).fit(batch, y)
    here = RiskAwareReranker(**{**params, "k": 2}).fit(batch, y)
    code = _FRESH_FIT.format(tests=str(pathlib.Path(__file__).parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    heads, scores, best = pickle.loads(out)
    assert here.validation_scores_ == scores and here.best_epoch_ == best
    assert_same_heads(type("Fresh", (), {"heads_": heads}), here)


def test_same_random_state_gives_identical_predictions(data, train_calls):
    batch, y = data
    params = {**FAST, "validation_fraction": 0.2}
    a = RiskAwareReranker(**params).fit(batch, y)
    b = RiskAwareReranker(**params).fit(batch, y)
    assert len(train_calls) == 2  # both really trained
    assert a.net_ is not b.net_
    np.testing.assert_array_equal(a.transform(batch).scores, b.transform(batch).scores)
    np.testing.assert_array_equal(a.predict(batch), b.predict(batch))
    assert a.validation_scores_ == b.validation_scores_
    assert_same_heads(a, b)
    c = RiskAwareReranker(**{**params, "random_state": 1}).fit(batch, y)
    assert not np.array_equal(c.heads_.Wq, a.heads_.Wq)


def test_fits_on_two_threads_at_once_equal_sequential_fits(data):
    # Each fit draws from generators of its own, so concurrent fits cannot interleave draws.
    batch, y = data
    params = [{**FAST, "validation_fraction": 0.2, "relevance_head": head}
              for head in ("residual", "concat", "residual", "concat")]
    expected = [RiskAwareReranker(**p).fit(batch, y).module_state_ for p in params]
    start = threading.Barrier(2)

    def fit(p):
        start.wait()
        return RiskAwareReranker(**p).fit(batch, y).module_state_

    with ThreadPoolExecutor(2) as pool:
        states = list(pool.map(fit, params))
    for state, want in zip(states, expected, strict=True):
        assert state.keys() == want.keys()
        assert all(np.array_equal(state[name], want[name]) for name in want)


def test_fit_leaves_torch_process_state_alone(data, monkeypatch):
    # The global generator and the thread count are shared by every thread of the process.
    batch, y = data

    def refuse(*args):
        raise AssertionError("fit set torch's process-wide thread count")

    torch.manual_seed(123)
    seed, state, threads = torch.initial_seed(), torch.get_rng_state(), torch.get_num_threads()
    monkeypatch.setattr(torch, "set_num_threads", refuse)
    RiskAwareReranker(**{**FAST, "validation_fraction": 0.2}).fit(batch, y)
    assert torch.initial_seed() == seed
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.get_num_threads() == threads


# --------------------------------------------------------------------------------------------
# Early stopping on the validation ranking
# --------------------------------------------------------------------------------------------
class _RecordingStopper(training_module._EarlyStopping):
    """Keeps a copy of the held-out data and every score it computes."""

    instances = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kept = (self.q_emb.copy(), self.candidates, list(self.relevant))
        self.scores = []
        _RecordingStopper.instances.append(self)

    def score(self, net):
        value = super().score(net)
        self.scores.append(value)
        return value


@pytest.mark.parametrize("head, lr", [("residual", 3e-2), ("concat", 1e-2)])
def test_early_stopping_keeps_the_best_validation_epoch(data, monkeypatch, head, lr):
    batch, y = data
    _RecordingStopper.instances.clear()
    monkeypatch.setattr(training_module, "_EarlyStopping", _RecordingStopper)
    rr = RiskAwareReranker(epochs=8, hidden=8, batch_size=8, lr=lr, patience=2,
                           validation_fraction=0.25, relevance_head=head, random_state=0)
    rr.fit(batch, y)
    (val,) = _RecordingStopper.instances
    q_valid, cand_valid, rel_valid = val.kept
    assert len(q_valid) == 10  # 25% of 40 queries
    assert cand_valid is None  # the full pool
    assert val.q_emb is None  # the held-out data is dropped after training

    start, per_epoch = val.scores[0], val.scores[1:]
    assert rr.validation_scores_ == per_epoch
    assert 1 <= rr.n_epochs_ <= 8 and len(per_epoch) == rr.n_epochs_
    assert 0 <= rr.best_epoch_ <= rr.n_epochs_
    history = [start, *per_epoch]
    assert history[rr.best_epoch_] == max(history)
    if rr.n_epochs_ < 8:  # stopped early: patience epochs without improvement
        assert rr.n_epochs_ - rr.best_epoch_ == 2
    # The weights kept are the ones that scored best.
    kept = rr.heads_.relevance(q_valid, batch.tool_embeddings)
    top = batch.registry.names[np.argsort(-kept, axis=1, kind="stable")[:, :rr.k]]
    gold = [set(batch.registry.names[g]) for g in rel_valid]
    assert ndcg_at_k(top, gold, k=rr.k) == pytest.approx(max(history), abs=1e-9)


def test_early_stopping_can_keep_the_untrained_start(data, monkeypatch):
    # A learning rate that wrecks the first epoch: the residual head's dense-ranking start
    # must win, and the kept heads then rank exactly like cosine similarity.
    batch, y = data
    _RecordingStopper.instances.clear()
    monkeypatch.setattr(training_module, "_EarlyStopping", _RecordingStopper)
    rr = RiskAwareReranker(epochs=4, hidden=8, batch_size=8, lr=0.5, patience=2,
                           validation_fraction=0.25, risk_weight=0.0, random_state=0)
    rr.fit(batch, y)
    (val,) = _RecordingStopper.instances
    assert max(val.scores[1:]) < val.scores[0]
    assert rr.best_epoch_ == 0
    assert rr.n_epochs_ == 2  # patience
    np.testing.assert_array_equal(
        np.argsort(-rr.relevance_scores(batch), axis=1, kind="stable"),
        np.argsort(-batch.scores, axis=1, kind="stable"),
    )


# --------------------------------------------------------------------------------------------
# Options and bad input
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank", [32, 3, None])
def test_interaction_rank_sets_the_heads_and_scores_like_the_module(data, rank):
    batch, y = data
    rr = RiskAwareReranker(**{**FAST, "interaction_rank": rank}).fit(batch, y)
    if rank is None:
        # Elementwise interactions are the identity projection of the one algebraic form.
        np.testing.assert_array_equal(rr.heads_.Pq, np.eye(DIM, dtype=np.float32))
        assert rr.heads_.Wx.shape == (8, DIM)
    else:
        assert rr.heads_.Pq.shape == rr.heads_.Pt.shape == (rank, DIM)
        assert rr.heads_.Wx.shape == (8, rank)
    cand = np.asarray(batch.candidates)
    with torch.no_grad():
        rel, _ = rr.net_.module_(torch.from_numpy(batch.query_embeddings),
                                 torch.from_numpy(batch.tool_embeddings[cand]))
    np.testing.assert_allclose(rr.relevance_scores(batch), rel.numpy(), atol=1e-5)


def test_concat_head_trains_and_predicts(data):
    batch, y = data
    rr = RiskAwareReranker(**{**FAST, "relevance_head": "concat"}).fit(batch, y)
    assert rr.heads_.Wx.shape == (8, 0) and rr.heads_.cos_scale == 0
    assert rr.predict(batch).shape == (N_QUERIES, 5)
    assert rr.predict(subset_batch(batch)).shape == (N_QUERIES, 5)
    assert n_trainable(rr.net_.module_) == (2 * DIM * 8 + 8 + 9) + (DIM * 8 + 8 + 9)


# (5, 0): more hard negatives than the pool of 4 holds; the rest are drawn from the registry.
@pytest.mark.parametrize("n_negatives, corpus_negatives",
                         [(1, 1), (3, 0), (5, 5), (2, 1), (5, 0)])
def test_negative_mix(data, n_negatives, corpus_negatives):
    batch, y = data
    rr = RiskAwareReranker(**{**FAST, "epochs": 1}, n_negatives=n_negatives,
                           corpus_negatives=corpus_negatives, hard_negative_pool=4)
    assert rr.fit(subset_batch(batch, m=6), y).predict(batch).shape == (N_QUERIES, 5)


def test_corpus_negatives_cannot_exceed_n_negatives(data):
    batch, y = data
    with pytest.raises(ValueError, match=re.escape(MSG_NEGATIVES.format(corpus=6, n=5))):
        RiskAwareReranker(corpus_negatives=6, n_negatives=5).fit(batch, y)


@pytest.mark.parametrize("n_negatives, corpus_negatives", [(5, 2), (4, 0), (3, 3)])
def test_negatives_never_include_gold_tools(data, n_negatives, corpus_negatives):
    batch, y = data
    sub = subset_batch(batch, m=8)
    captured = []
    original = training_module._TripletDataset.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        captured.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(training_module._TripletDataset, "__init__", spy)
        RiskAwareReranker(**{**FAST, "epochs": 1}, n_negatives=n_negatives,
                          corpus_negatives=corpus_negatives, hard_negative_pool=4).fit(sub, y)
    (ds,) = captured
    assert len(ds) == sum(len(g) for g in y)  # one sample per (query, gold tool) pair
    gold = [set(batch.registry.index_of(list(g)).tolist()) for g in y]
    # The hard pool: each query's 4 best-scored candidates of the incoming batch.
    top4 = [set(row.tolist()) for row in sub.ranked_indices(4)]
    n_hard = n_negatives - corpus_negatives
    for _ in range(5):  # negatives are drawn afresh: look at several draws
        tools = ds.sample_tools(np.arange(len(ds)))
        assert tools.shape == (len(ds), 1 + n_negatives)
        for pair, row in enumerate(tools):
            qi = int(ds.pair_query[pair])
            assert row[0] in gold[qi]
            assert not set(row[1:].tolist()) & gold[qi]
            assert ((row >= 0) & (row < N_TOOLS)).all()
            pool = top4[qi] - gold[qi]
            hard = row[1 : 1 + n_hard].tolist()
            # Hard negatives come from the pool, without replacement, while it lasts.
            assert set(hard[: len(pool)]) <= pool
            assert len(set(hard[: len(pool)])) == len(hard[: len(pool)])
    X, target = next(iter(training_module._TripletBatches(ds, batch_size=4)))
    assert X["tools"].shape == (4, 1 + n_negatives, DIM)
    assert X["query"].shape == (4, DIM)
    assert target.shape == (4, 1 + n_negatives)


def test_y_unknown_tool_and_wrong_length(data):
    batch, y = data
    rr = RiskAwareReranker(**FAST)
    bad = list(y)
    bad[3] = {"t1", "launch_rocket"}
    with pytest.raises(ValueError, match=r"y\[3\] names tool\(s\) missing .*'launch_rocket'"):
        rr.fit(batch, bad)
    with pytest.raises(ValueError, match=re.escape(MSG_Y_LENGTH.format(n_y=39, n_x=40))):
        rr.fit(batch, y[:-1])
    with pytest.raises(ValueError, match=r"y\[0\] must be a non-empty set"):
        rr.fit(batch, [set()] + y[1:])
    with pytest.raises(ValueError, match="y is required"):
        rr.fit(batch, None)


def test_batch_from_another_registry(fitted):
    other, _ = make_data(make_registry(prefix="u"))
    with pytest.raises(ValueError, match="was fitted on registry"):
        fitted.transform(other)
    with pytest.raises(ValueError, match="was fitted on registry"):
        fitted.predict(other)


def test_batch_from_another_encoder(fitted, data):
    batch, _ = data
    with pytest.raises(ValueError, match="was fitted on embeddings from 'synthetic'"):
        fitted.transform(batch.replace(encoder="another-model"))


@pytest.mark.parametrize("X", [np.zeros((3, DIM)), ["a query"], None])
def test_x_not_a_batch(fitted, data, X):
    _, y = data
    match = re.escape(MSG_NOT_A_BATCH.split("{type}")[0].format(step="RiskAwareReranker"))
    with pytest.raises(TypeError, match=match):
        RiskAwareReranker(**FAST).fit(X, y)
    with pytest.raises(TypeError, match=match):
        fitted.transform(X)


def test_unknown_risk_tools_are_left_out_of_the_risk_loss(data, monkeypatch):
    batch, y = data
    risks = [None if i % 4 == 0 else 1 + i % 5 for i in range(N_TOOLS)]
    reg = make_registry(risks=risks)
    assert (reg.risk == UNKNOWN_RISK).sum() == N_TOOLS // 4
    unknown_batch = RankingBatch.full_pool(
        reg, batch.query_embeddings, batch.tool_embeddings, encoder="synthetic"
    )
    targets, losses = [], []
    original = DualHeadNet.get_loss

    def spy(self, y_pred, y_true, X=None, training=False):
        targets.append(y_true.detach().clone())
        loss = original(self, y_pred, y_true, X=X, training=training)
        losses.append(loss.item())
        return loss

    monkeypatch.setattr(DualHeadNet, "get_loss", spy)
    rr = RiskAwareReranker(**FAST).fit(unknown_batch, y)
    seen = torch.cat([t.ravel() for t in targets])
    assert torch.isnan(seen).any() and not torch.isnan(seen).all()
    known = seen[~torch.isnan(seen)]
    assert set(np.round(known.numpy() * 4 + 1).astype(int)) <= {1, 2, 3, 4, 5}
    assert np.isfinite(losses).all()
    assert np.isfinite(rr.tool_risk_).all()
    assert rr.predict(unknown_batch).shape == (N_QUERIES, 5)


def test_all_risks_unknown_still_trains(data):
    batch, y = data
    reg = make_registry(risks=[None] * N_TOOLS)
    b = RankingBatch.full_pool(reg, batch.query_embeddings, batch.tool_embeddings)
    rr = RiskAwareReranker(**FAST).fit(b, y)
    assert np.isfinite(rr.transform(b).scores).all()


def test_query_whose_gold_is_the_whole_registry():
    reg = make_registry(n=3)
    batch, _ = make_data(reg, n_queries=4)
    y = [{"t0"}, {"t0", "t1", "t2"}, {"t1"}, {"t2"}]
    with pytest.raises(ValueError, match=re.escape(MSG_NO_NEGATIVES.format(i=1))):
        RiskAwareReranker(**FAST, k=3).fit(batch, y)


def test_validation_ndcg_with_k_above_the_candidates(data):
    # The early-stopping NDCG asked the top-k kernel for more positions than a row has
    # (IndexError, or reads past the row); it ranks what there is, as ndcg_at_k does.
    batch, y = data
    short = subset_batch(batch, m=3)
    rr = RiskAwareReranker(**{**FAST, "validation_fraction": 0.25}, k=6).fit(short, y)
    assert len(rr.validation_scores_) == rr.n_epochs_
    assert all(0 <= s <= 1 for s in rr.validation_scores_)


def test_validation_needs_training_queries():
    batch, y = make_data(n_queries=2)
    with pytest.raises(ValueError, match=re.escape(
            MSG_TOO_FEW_QUERIES.format(frac=0.9, n_train=0))):
        RiskAwareReranker(**{**FAST, "validation_fraction": 0.9}).fit(batch, y)
    # Two queries: one trains, one validates.
    rr = RiskAwareReranker(**{**FAST, "validation_fraction": 0.5}).fit(batch, y)
    assert len(rr.validation_scores_) == rr.n_epochs_
    # One query trains without validation, and says so when validation was asked for.
    one, y1 = make_data(n_queries=1)
    RiskAwareReranker(**FAST).fit(one, y1)
    with pytest.warns(UserWarning, match=re.escape(
            MSG_NO_VALIDATION.format(frac=0.5, epochs=FAST["epochs"]))):
        rr = RiskAwareReranker(**{**FAST, "validation_fraction": 0.5}).fit(one, y1)
    assert rr.validation_scores_ == [] and rr.n_epochs_ == FAST["epochs"]


def test_extreme_logits_score_without_overflow():
    module = randomized_module(DIM, 8, "concat")
    with torch.no_grad():
        module.rel_out.bias.fill_(-200.0)
        module.risk_out.bias.fill_(-200.0)
    heads = HeadWeights.from_module(module)
    batch, _ = make_data(n_queries=3)
    rel = heads.relevance(batch.query_embeddings, batch.tool_embeddings)
    risk = heads.risk(batch.tool_embeddings)
    assert np.isfinite(rel).all() and np.isfinite(risk).all()


@pytest.mark.parametrize(
    "params",
    [{"risk_weight": -0.1}, {"hidden": 0}, {"lr": 0.0}, {"relevance_head": "mlp"},
     {"validation_fraction": 1.0}, {"k": 0}, {"corpus_negatives": -1},
     {"interaction_rank": 0}, {"interaction_rank": 2.5}],
)
def test_invalid_parameters(data, params):
    batch, y = data
    with pytest.raises(ValueError, match=f"'{next(iter(params))}' parameter"):
        RiskAwareReranker(**params).fit(batch, y)


def test_unavailable_device(data):
    batch, y = data
    with pytest.raises(ValueError, match="is not available on this machine"):
        RiskAwareReranker(**FAST, device="nonsense").fit(batch, y)


# --------------------------------------------------------------------------------------------
# Persistence and parameters
# --------------------------------------------------------------------------------------------
def test_pickle_and_joblib_round_trip(fitted, data):
    batch, _ = data
    sub = subset_batch(batch)
    expected = [fitted.transform(b).scores for b in (batch, sub)]
    buffer = io.BytesIO()
    joblib.dump(fitted, buffer)
    buffer.seek(0)
    for loaded in (pickle.loads(pickle.dumps(fitted)), joblib.load(buffer)):
        # Recomputed on first use, never pickled.
        assert "_tool_side" not in loaded.__dict__ and "_net" not in loaded.__dict__
        for b, scores in zip((batch, sub), expected, strict=True):
            np.testing.assert_array_equal(loaded.transform(b).scores, scores)
        np.testing.assert_array_equal(loaded.predict(batch), fitted.predict(batch))
        assert loaded.get_params() == fitted.get_params()


def test_pickle_does_not_carry_training_data(data):
    # Trimmed net and dropped validation data: the file stays small whatever the data size.
    batch, y = data
    rr = RiskAwareReranker(**{**FAST, "validation_fraction": 0.2}).fit(batch, y)
    assert len(pickle.dumps(rr)) < 60_000


def test_the_dual_head_net_pickles(fitted, data):
    batch, _ = data
    net = pickle.loads(pickle.dumps(fitted.net_))
    assert isinstance(net, DualHeadNet)
    assert (net.margin, net.risk_loss_weight) == (fitted.margin, fitted.risk_loss_weight)
    cand = np.asarray(batch.candidates)
    with torch.no_grad():
        rel, risk = net.module_(
            torch.from_numpy(batch.query_embeddings), torch.from_numpy(batch.tool_embeddings[cand])
        )
    np.testing.assert_allclose(rel.numpy(), fitted.relevance_scores(batch), atol=1e-5)
    np.testing.assert_allclose(risk.numpy(), fitted.tool_risk_[cand], atol=1e-5)


def test_clone_get_set_params(fitted):
    params = fitted.get_params()
    assert params["risk_weight"] == 0.1 and params["relevance_head"] == "residual"
    twin = clone(fitted)
    assert twin.get_params() == params
    assert not hasattr(twin, "heads_")
    assert twin.set_params(risk_weight=0.3, epochs=2) is twin
    assert (twin.risk_weight, twin.epochs) == (0.3, 2)
    assert fitted.risk_weight == 0.1
    defaults = RiskAwareReranker().get_params()
    assert defaults == {
        "risk_weight": 0.1, "hidden": 64, "epochs": 10, "batch_size": 64, "lr": 1e-3,
        "n_negatives": 5, "corpus_negatives": 2, "hard_negative_pool": 100, "margin": 0.1,
        "risk_loss_weight": 0.5, "relevance_head": "residual", "interaction_rank": 32,
        "validation_fraction": 0.1,
        "patience": 3, "k": 5, "memory": None, "random_state": None, "device": "cpu",
        "verbose": 0,
    }


def test_tags():
    tags = RiskAwareReranker().__sklearn_tags__()
    assert tags.input_tags.two_d_array is False
    assert tags.target_tags.required is True
    assert tags.non_deterministic is True
    assert RiskAwareReranker(random_state=0).__sklearn_tags__().non_deterministic is False


def test_early_stopping_uses_no_private_skorch_api(data, monkeypatch):
    # It once called skorch's private EarlyStopping._calc_new_threshold.
    from skorch.callbacks import EarlyStopping

    def private(*args, **kwargs):
        raise AssertionError("skorch's private EarlyStopping API was called")

    monkeypatch.setattr(EarlyStopping, "_calc_new_threshold", private)
    batch, y = data
    rr = RiskAwareReranker(**{**FAST, "validation_fraction": 0.25}).fit(batch, y)
    assert len(rr.validation_scores_) == rr.n_epochs_
