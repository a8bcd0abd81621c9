"""RiskAwareReranker: the paper's dual-head reranker, trained with skorch.

The paper's score is ``s(q, t) = f_rel(q, t) - risk_weight * f_risk(t)``: a relevance head
over the query and tool embeddings and a risk head over the tool embedding alone, trained
jointly with a pairwise margin loss and a risk-regression loss (Risk-Aware Reranking for
Agentic Tool Retrieval, CIKM 2026, Section 3). Both heads are put on a calibrated scale before
they are combined, so that ``risk_weight`` means the same for every head.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import torch
from scipy.special import expit, logit
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, check_memory
from skorch import NeuralNet
from skorch.callbacks import Callback
from torch import nn

from ._base import RankingStepMixin, check_relevant
from ._embedding import _check_device
from ._fast import topk_rows
from ._registry import UNKNOWN_RISK
from ._scoring import HeadWeights
from .metrics import ndcg_at_k

__all__ = ["RiskAwareReranker", "DualHeadModule", "DualHeadNet"]

MSG_NEGATIVES = (
    "corpus_negatives={corpus} cannot exceed n_negatives={n}: corpus negatives are part of "
    "the n_negatives drawn per positive."
)
MSG_TOO_FEW_QUERIES = (
    "validation_fraction={frac} leaves {n_train} training queries; give more queries or "
    "set validation_fraction=0."
)
MSG_NO_VALIDATION = (
    "validation_fraction={frac} holds out no query of a single training query: training "
    "runs all {epochs} epochs without early stopping. Give more queries, or set "
    "validation_fraction=0 to say so."
)
MSG_NO_NEGATIVES = "Every tool of the registry is a gold tool of query {i}: no negative exists."

# --------------------------------------------------------------------------------------------
# The torch module and the skorch net
# --------------------------------------------------------------------------------------------
class DualHeadModule(nn.Module):
    """The two heads: ``forward(query, tools)`` returns ``(f_rel, f_risk)``, relevance first.

    Parameters
    ----------
    dim : int
        Embedding dimension ``d``.
    hidden : int, default=64
        Hidden units of each head.
    relevance_head : {"residual", "concat"}, default="residual"
        ``"concat"`` is the paper's ``MLP([e_q; e_t])`` (2d -> hidden -> 1, ReLU, sigmoid).
        ``"residual"`` learns a correction on top of the frozen cosine similarity:
        ``sigmoid(a * cos(q, t) + b + MLP([e_q; e_t; x(q, t)]))`` with the MLP's last layer
        initialised to zero, so that training starts from the dense ranking.
    interaction_rank : int or None, default=32
        The residual head's interaction features ``x(q, t)``. ``None``: the elementwise
        product ``e_q * e_t`` (``d`` features). An int ``r``: ``(P_q e_q) * (P_t e_t)``,
        the product of two learned ``r``-dimensional projections (both start as the same
        random orthonormal rows, so ``x`` starts as a projection of the cosine's terms).
        Scoring a (query, tool) pair then costs ``O(r * hidden)`` instead of
        ``O(d * hidden)``. Ignored by the ``"concat"`` head.
    """

    def __init__(self, dim, hidden=64, relevance_head="residual", interaction_rank=32):
        super().__init__()
        self.relevance_head = relevance_head
        self.interaction_rank = None
        if relevance_head == "concat":
            n_in = 2 * dim
        elif interaction_rank is None:
            n_in = 3 * dim
        else:
            self.interaction_rank = int(interaction_rank)
            self.rel_proj_q = nn.Linear(dim, self.interaction_rank, bias=False)
            self.rel_proj_t = nn.Linear(dim, self.interaction_rank, bias=False)
            with torch.no_grad():
                nn.init.orthogonal_(self.rel_proj_q.weight)
                self.rel_proj_t.weight.copy_(self.rel_proj_q.weight)
            n_in = 2 * dim + self.interaction_rank
        self.rel_hidden = nn.Linear(n_in, hidden)
        self.rel_out = nn.Linear(hidden, 1)
        self.risk_hidden = nn.Linear(dim, hidden)
        self.risk_out = nn.Linear(hidden, 1)
        if relevance_head == "residual":
            nn.init.zeros_(self.rel_out.weight)
            nn.init.zeros_(self.rel_out.bias)
            # cos in [0, 1] mapped to a usable slope of the sigmoid.
            self.cos_scale = nn.Parameter(torch.tensor(10.0))
            self.cos_bias = nn.Parameter(torch.tensor(-5.0))

    def relevance_logit(self, query, tools):
        """Pre-sigmoid relevance of ``tools`` (B, n, d) for ``query`` (B, d)."""
        q = query.unsqueeze(1).expand(-1, tools.shape[1], -1)
        parts = [q, tools]
        if self.interaction_rank is not None:
            parts.append(self.rel_proj_q(query).unsqueeze(1) * self.rel_proj_t(tools))
        elif self.relevance_head == "residual":
            parts.append(q * tools)
        z = self.rel_out(torch.relu(self.rel_hidden(torch.cat(parts, dim=-1)))).squeeze(-1)
        if self.relevance_head == "residual":
            z = z + self.cos_scale * (q * tools).sum(-1) + self.cos_bias
        return z

    def risk(self, tools):
        """f_risk of ``tools`` (..., d) in [0, 1]."""
        return torch.sigmoid(self.risk_out(torch.relu(self.risk_hidden(tools))).squeeze(-1))

    def forward(self, query, tools):
        """Both heads' scores of ``tools`` for ``query``.

        Parameters
        ----------
        query : torch.Tensor of shape (B, d)
            The batch's query embeddings.
        tools : torch.Tensor of shape (B, n, d)
            The embeddings of each query's ``n`` tools.

        Returns
        -------
        f_rel : torch.Tensor of shape (B, n)
            Relevance in [0, 1].
        f_risk : torch.Tensor of shape (B, n)
            Risk in [0, 1].
        """
        return torch.sigmoid(self.relevance_logit(query, tools)), self.risk(tools)


class DualHeadNet(NeuralNet):
    """skorch net for :class:`DualHeadModule` with the paper's joint loss.

    ``loss = mean(relu(margin - f_rel(q, t+) + f_rel(q, t-))) + risk_loss_weight *
    MSE(f_risk(t), (r_t - 1) / 4)`` over the tools of the batch whose risk is known. Each
    training sample is a query with its tools ``[t+, t-_1, ..., t-_n]``; ``y`` holds their
    risk targets (NaN where unknown).

    Parameters
    ----------
    *args, **kwargs
        As for :class:`skorch.NeuralNet`.
    margin : float, default=0.1
        Margin of the pairwise loss.
    risk_loss_weight : float, default=0.5
        Weight of the risk-regression term.
    """

    def __init__(self, *args, margin=0.1, risk_loss_weight=0.5, **kwargs):
        super().__init__(*args, **kwargs)
        self.margin = margin
        self.risk_loss_weight = risk_loss_weight

    def get_loss(self, y_pred, y_true, X=None, training=False):
        rel, risk = y_pred
        pos, neg = rel[:, :1], rel[:, 1:]
        rank_loss = torch.relu(self.margin - pos + neg).mean()
        target = y_true.to(risk.device, risk.dtype)
        known = ~torch.isnan(target)
        risk_loss = (self.criterion_(risk[known], target[known]) if known.any()
                     else risk.sum() * 0.0)
        return rank_loss + self.risk_loss_weight * risk_loss


class _TripletDataset(torch.utils.data.Dataset):
    """(query, [t+, t-...]) samples with negatives drawn afresh every epoch.

    Training goes through :class:`_TripletBatches`, which samples a whole epoch of
    negatives at once: per-item sampling and collation cost more than the heads' arithmetic.
    """

    def __init__(self, q_emb, t_emb, pair_query, pair_pos, hard_pool, gold_keys, n_hard,
                 n_corpus, risk_target, seed):
        self.q_emb, self.t_emb = q_emb, t_emb
        self.pair_query, self.pair_pos = pair_query, pair_pos
        # hard_pool: (n_queries, L) registry indices padded with -1.
        self.hard_pool, self.hard_len = hard_pool, (hard_pool >= 0).sum(axis=1)
        self.gold_keys = gold_keys  # sorted query * n_tools + tool of every gold pair
        self.n_hard, self.n_corpus = n_hard, n_corpus
        self.risk_target = risk_target
        self.rng = np.random.default_rng(seed)
        self.n_tools = len(t_emb)

    def __len__(self):
        return len(self.pair_query)

    def _is_gold(self, queries, tools):
        keys = queries.astype(np.int64) * self.n_tools + tools
        pos = np.searchsorted(self.gold_keys, keys).clip(max=len(self.gold_keys) - 1)
        return self.gold_keys[pos] == keys

    def sample_tools(self, pairs) -> np.ndarray:
        """Tool indices ``[t+, hard..., corpus...]`` for the given pairs, shape (n, 1 + neg)."""
        q = self.pair_query[pairs]
        n = len(pairs)
        tools = np.full((n, 1 + self.n_hard + self.n_corpus), -1, dtype=np.int64)
        tools[:, 0] = self.pair_pos[pairs]
        if self.n_hard:
            # Sampling without replacement from each query's pool: the positions of the
            # n_hard smallest random keys, with padding keyed past every real entry.
            width = self.hard_pool.shape[1]
            keys = self.rng.random((n, width))
            keys[np.arange(width)[None, :] >= self.hard_len[q][:, None]] = 2.0
            pick = np.argpartition(keys, min(self.n_hard, width) - 1, axis=1)[:, : self.n_hard]
            # A pool narrower than n_hard fills what it can; the rest stay -1.
            tools[:, 1 : 1 + pick.shape[1]] = self.hard_pool[q[:, None], pick]
        # Slots still -1 (corpus negatives, hard slots a short pool left empty): uniform non-gold.
        rows, cols = np.nonzero(tools < 0)
        while rows.size:
            draw = self.rng.integers(0, self.n_tools, size=rows.size)
            tools[rows, cols] = draw
            bad = self._is_gold(q[rows], draw)
            rows, cols = rows[bad], cols[bad]
        return tools


class _TripletBatches:
    """skorch ``iterator_train``: shuffled mini-batches of a :class:`_TripletDataset`.

    Each pass samples fresh negatives for the whole epoch in a few vectorized calls.
    """

    def __init__(self, dataset, batch_size=64, generator=None):
        self.dataset, self.batch_size, self.generator = dataset, batch_size, generator

    def __len__(self):
        return -(-len(self.dataset) // self.batch_size)

    def __iter__(self):
        ds = self.dataset
        n = len(ds)
        order = torch.randperm(n, generator=self.generator).numpy()
        tools = ds.sample_tools(order)
        pair_query = ds.pair_query[order]
        for s in range(0, n, self.batch_size):
            idx = tools[s : s + self.batch_size]
            # Gathering in numpy makes fresh (writable) arrays: the shared embeddings are
            # read-only, and torch.from_numpy warns on those.
            yield (
                {"query": torch.from_numpy(ds.q_emb[pair_query[s : s + self.batch_size]]),
                 "tools": torch.from_numpy(ds.t_emb[idx])},
                torch.from_numpy(ds.risk_target[idx]),
            )


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------
class _EarlyStopping(Callback):
    """Early stopping on the held-out queries' NDCG@k of the relevance head.

    The untrained start (epoch 0) is a candidate too: with the residual head it is the
    dense ranking itself, and if no epoch beats it training ends with the weights it
    started from. Training stops after ``patience`` epochs without a better score (by
    raising ``KeyboardInterrupt``, which skorch's ``fit`` catches, as its own
    ``EarlyStopping`` does). Only the relevance head goes back to its best epoch: the risk
    head has its own loss term and disjoint parameters, and keeps its last state.
    """

    def __init__(self, q_emb, t_emb, candidates, relevant, k, patience):
        self.q_emb, self.t_emb, self.candidates = q_emb, t_emb, candidates
        self.relevant, self.k, self.patience = relevant, k, patience

    def score(self, net):
        rel = HeadWeights.from_module(net.module_).relevance(self.q_emb, self.t_emb,
                                                             self.candidates)
        order = topk_rows(rel, min(self.k, rel.shape[1]))  # a list may be shorter than k
        top = order if self.candidates is None else np.take_along_axis(self.candidates, order,
                                                                       axis=1)
        # The metric itself, over tool indices standing in for names.
        return ndcg_at_k(top.astype(str), [set(map(str, g)) for g in self.relevant], k=self.k)

    def _keep(self, net, score, epoch):
        self.best_score_, self.best_epoch_, self.misses_ = score, epoch, 0
        self.best_weights_ = {name: value.detach().clone()
                              for name, value in net.module_.state_dict().items()
                              if name.startswith(("rel_", "cos_"))}  # the relevance head

    def on_train_begin(self, net, **kwargs):
        self._keep(net, self.score(net), 0)

    def on_epoch_end(self, net, **kwargs):
        score = self.score(net)
        net.history.record("valid_ndcg", score)
        if score > self.best_score_:
            self._keep(net, score, len(net.history))
            return
        self.misses_ += 1
        if self.misses_ >= self.patience:
            raise KeyboardInterrupt

    def on_train_end(self, net, **kwargs):
        if self.best_epoch_ != len(net.history):
            # The best relevance weights over the current state: the risk head keeps its own.
            # (Not load_state_dict(best, strict=False): a blanket fix of ``strict=`` keywords
            # turned that strict twice, which fails whenever an earlier epoch wins.)
            state = net.module_.state_dict()
            state.update(self.best_weights_)
            net.module_.load_state_dict(state)
        # Drop the data and weights so that the pickled net does not carry them.
        self.q_emb = self.t_emb = self.candidates = self.relevant = self.best_weights_ = None


class _EpochBar(Callback):
    """A tqdm bar over the epochs (on stderr), with the loss and the held-out NDCG."""

    def on_train_begin(self, net, **kwargs):
        from tqdm.auto import tqdm

        self.bar_ = tqdm(total=net.max_epochs, desc="training", unit="epoch")

    def on_epoch_end(self, net, **kwargs):
        last = net.history[-1]
        self.bar_.set_postfix({key: f"{last[key]:.4f}" for key in ("train_loss", "valid_ndcg")
                               if key in last}, refresh=False)
        self.bar_.update()

    def on_train_end(self, net, **kwargs):
        self.bar_.close()
        del self.bar_  # a tqdm object in the pickled net would drag its lock along


def _logit(p):
    # Clipped: a saturated float32 f_rel of exactly 0 or 1 would give an infinite logit.
    return logit(np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6))


def _platt(rel, gold):
    """(a, b) of ``P(gold) = sigmoid(a logit(f_rel) + b)``; (1, 0) when one class is absent."""
    if gold.all() or not gold.any():
        return np.array([1.0, 0.0])
    model = LogisticRegression(C=1e4, max_iter=1000).fit(_logit(rel).reshape(-1, 1),
                                                          gold.ravel())
    return np.array([model.coef_[0, 0], model.intercept_[0]])


def _risk_scale(f_risk, risk):
    """Breakpoints of an isotonic map from f_risk to the rubric's penalty.

    Fitted on the labelled tools' ``f_risk`` and levels ``risk``: the penalty is
    ``clip((r - 2) / 2, 0, 1)``, 0 at levels 1-2, 0.5 at 3, 1 at 4-5.
    """
    if len(risk) < 2:
        return np.array([[0.0, 1.0], [0.0, 1.0]])  # no labels: the identity
    iso = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(
        f_risk, np.clip((risk - 2) / 2.0, 0, 1))
    return np.array([iso.X_thresholds_, iso.y_thresholds_])


def _train_heads(params, seed, q_emb, t_emb, candidates, hard_pool, gold, risk, device,
                 verbose=0):
    """Train the two heads; a pure function of its arguments, so ``memory`` can cache it.

    ``params``: the reranker's parameters that affect training; ``candidates``: None for the
    full pool; ``hard_pool``: each query's best non-gold candidates (-1 pads); ``gold``: each
    query's gold indices as ``(concatenated, offsets)`` (arrays, which ``memory`` records
    quickly, unlike a list of arrays). Returns the fitted attributes.
    """
    relevant = np.split(*gold)
    n_q = len(q_emb)
    perm = np.random.default_rng(seed).permutation(n_q)
    frac = params["validation_fraction"]
    n_valid = int(round(frac * n_q))
    if frac > 0 and n_valid == 0:
        if n_q >= 2:
            n_valid = 1
        else:
            # Holding out the only query would leave nothing to train on.
            warnings.warn(MSG_NO_VALIDATION.format(frac=frac, epochs=params["epochs"]),
                          UserWarning, stacklevel=3)
    if n_q - n_valid < 1:
        raise ValueError(MSG_TOO_FEW_QUERIES.format(frac=frac, n_train=n_q - n_valid))
    valid, train = np.sort(perm[:n_valid]), np.sort(perm[n_valid:])
    n_tools = len(t_emb)
    gold_keys = np.unique(np.concatenate([i * n_tools + relevant[i] for i in range(n_q)]))
    pair_query = np.concatenate([np.full(len(relevant[i]), i) for i in train])
    pair_pos = np.concatenate([relevant[i] for i in train])
    risk_target = np.where(risk == UNKNOWN_RISK, np.nan, (risk - 1) / 4.0).astype(np.float32)
    n_neg, n_corpus = params["n_negatives"], params["corpus_negatives"]
    dataset = _TripletDataset(q_emb, t_emb, pair_query, pair_pos, hard_pool, gold_keys,
                              n_neg - n_corpus, n_corpus, risk_target, seed)
    callbacks = []
    if n_valid:
        callbacks = [("early_stopping", _EarlyStopping(
            q_emb[valid], t_emb, None if candidates is None else candidates[valid],
            [relevant[i] for i in valid], params["k"], params["patience"]))]
    if verbose:
        callbacks.append(("progress", _EpochBar()))
    torch.manual_seed(seed)
    net = DualHeadNet(
        DualHeadModule, module__dim=t_emb.shape[1], module__hidden=params["hidden"],
        module__relevance_head=params["relevance_head"],
        module__interaction_rank=params.get("interaction_rank"), criterion=nn.MSELoss,
        optimizer=torch.optim.Adam, lr=params["lr"], max_epochs=params["epochs"],
        batch_size=params["batch_size"], train_split=None, iterator_train=_TripletBatches,
        iterator_train__generator=torch.Generator().manual_seed(seed), callbacks=callbacks,
        predict_nonlinearity=None, margin=params["margin"],
        risk_loss_weight=params["risk_loss_weight"], device=device, verbose=int(verbose > 1))
    # The heads' mini-batches are too small for intra-op threads to pay off (measured 6x
    # slower with 2 threads on a busy 2-core machine), and one thread per fit keeps
    # GridSearchCV(n_jobs=...) workers from oversubscribing the cores.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        net.fit(dataset, y=None)
    finally:
        torch.set_num_threads(threads)
    stopper = dict(net.callbacks_).get("early_stopping")
    heads = HeadWeights.from_module(net.module_)
    # The scales of the trade-off, learned on queries training did not see where it can.
    calib = valid if n_valid else train
    rel = heads.relevance(q_emb[calib], t_emb, None if candidates is None else candidates[calib])
    cand = (np.broadcast_to(np.arange(n_tools), rel.shape) if candidates is None
            else candidates[calib])
    gold = np.stack([np.isin(c, relevant[i]) for c, i in zip(cand, calib, strict=True)])
    fitted = {
        "heads_": heads,
        "relevance_calibration_": _platt(rel, gold),
        "n_epochs_": len(net.history),
        "best_epoch_": stopper.best_epoch_ if stopper is not None else len(net.history),
        "validation_scores_": [h["valid_ndcg"] for h in net.history if "valid_ndcg" in h],
    }
    # The weights as numpy: a fitted reranker holds no torch object, so it pickles small
    # and saves to skops files, and the net is rebuilt from them on demand (net_).
    state = {name: v.detach().cpu().numpy() for name, v in net.module_.state_dict().items()}
    return {"module_state_": state, **fitted}


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------
class RiskAwareReranker(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Rerank candidates by calibrated relevance minus ``risk_weight`` times a risk penalty.

    A relevance head ``f_rel`` and a risk head ``f_risk`` over frozen embeddings, trained
    jointly by a skorch :class:`~skriskrank._reranker.DualHeadNet`: a pairwise margin loss
    over (query, gold tool, negative tool) triplets plus ``risk_loss_weight`` times the MSE
    between ``f_risk(t)`` and the audited ``(r_t - 1) / 4``. The score is
    ``s = p_rel - risk_weight * penalty``:

    - ``p_rel``, the probability that the tool is a gold tool of the query:
      ``sigmoid(a logit(f_rel) + b)`` (Platt scaling, fitted on the held-out validation
      queries; a monotone map of ``f_rel``, so ``risk_weight=0`` ranks by ``f_rel``);
    - ``penalty`` in [0, 1]: ``f_risk`` mapped (an isotonic fit over the registry's labelled
      tools) onto the rubric's ``clip((r - 2) / 2, 0, 1)``, so 0 for levels 1-2, 0.5 for
      level 3 and 1 for levels 4-5, and 1 for a tool of unknown risk.

    So ``risk_weight = 0.1`` means a level-4 or level-5 tool must be 10 points (a level-3 tool
    5 points) more likely relevant than a safe tool to outrank it, whatever the head: the
    raw ``f_rel`` of different heads spreads over different ranges, and a fixed ``lambda``
    on it moved the default head's ranking far less than the paper's (see
    ``docs/design.md``). ``risk_weight`` acts at inference only: ``set_params`` on a fitted
    reranker changes the next ``transform`` without a refit. To make a ``GridSearchCV`` over
    it cheap, give ``memory``: fits whose training parameters and data match reuse the cached
    heads, as ``Pipeline(memory=...)`` reuses fitted transformers.

    Training holds out ``validation_fraction`` of the training queries and stops on their
    NDCG@k (keeping the best epoch, the untrained start included), so that the relevance
    head does not fall below the ranking it reranks.

    Parameters
    ----------
    risk_weight : float, default=0.1
        lambda in ``s = p_rel - lambda * penalty``, in probability points per unit of
        penalty; inference only.
    hidden : int, default=64
        Hidden units of each head.
    epochs : int, default=10
        Maximum training epochs.
    batch_size : int, default=64
        Triplets per optimizer step.
    lr : float, default=1e-3
        Adam learning rate.
    n_negatives : int, default=5
        Negatives per (query, gold tool) pair, drawn afresh every epoch.
    corpus_negatives : int, default=2
        How many of the ``n_negatives`` come from the whole registry; the rest are hard
        negatives from the query's top ``hard_negative_pool`` candidates (heads that never
        saw a tool outside the top-100 rank the full pool poorly).
    hard_negative_pool : int, default=100
        Hard negatives come from this many best-scored candidates of the incoming batch;
        hard negatives a smaller pool cannot supply are drawn from the whole registry.
    margin : float, default=0.1
        Margin of the pairwise loss.
    risk_loss_weight : float, default=0.5
        Weight of the risk-regression term.
    relevance_head : {"residual", "concat"}, default="residual"
        ``"concat"`` is the paper's ``MLP([e_q; e_t])``, kept for faithful reproduction.
        ``"residual"`` learns a correction on top of the cosine score and starts from the
        dense ranking; see :class:`~skriskrank._reranker.DualHeadModule`.
    interaction_rank : int or None, default=32
        Query-tool interaction features of the residual head: ``(P_q e_q) * (P_t e_t)``
        with two learned ``interaction_rank``-dimensional projections, or, for ``None``,
        the elementwise product ``e_q * e_t``. A pair then costs ``O(interaction_rank *
        hidden)`` instead of ``O(d * hidden)`` (``benchmarks/results/head_ablation.md``
        measures the quality). Ignored by the ``"concat"`` head.
    validation_fraction : float, default=0.1
        Share of training queries held out for early stopping; 0 trains on all of them
        for exactly ``epochs`` epochs.
    patience : int, default=3
        Epochs without a better validation NDCG@k before training stops.
    k : int, default=5
        Cut-off of :meth:`predict` and of the validation NDCG (so it changes training when
        ``validation_fraction > 0``).
    memory : str, object with the joblib.Memory interface or None, default=None
        Caches the trained heads, keyed on every parameter that changes training and on the
        training data, as ``Pipeline(memory=...)`` caches fitted transformers; a string is
        the path of the cache directory. ``None`` caches nothing. Only fits with an integer
        ``random_state`` are cached (an unseeded fit is not reproducible). The cache holds
        the trained heads of every distinct fit: clear it with ``memory.clear()``.
    random_state : int or None, default=None
        Seeds torch, the negative sampling, the shuffling and the validation split. The same
        value gives identical predictions from two fits.
    device : str, default="cpu"
        Torch device for training.
    verbose : int, default=0
        1 shows a progress bar over the epochs (tqdm, on stderr); 2 adds skorch's
        per-epoch table (on stdout).

    Attributes
    ----------
    module_state_ : dict of str to ndarray
        The trained :class:`~skriskrank._reranker.DualHeadModule`'s ``state_dict``, as
        numpy arrays.
    heads_ : HeadWeights
        The trained weights as float32 arrays in the one form that inference uses.
    tool_risk_ : ndarray of float32, shape (n_tools,)
        f_risk of every registry tool.
    relevance_calibration_ : ndarray of shape (2,)
        The Platt scaling ``(a, b)`` of ``p_rel``.
    risk_calibration_ : ndarray of shape (2, n_breakpoints)
        The isotonic map from ``f_risk`` to the penalty, as breakpoints.
    risk_penalty_ : ndarray of float32, shape (n_tools,)
        The penalty of every registry tool (1 for unknown risk).
    n_epochs_ : int
        Epochs trained.
    best_epoch_ : int
        Epoch whose weights were kept (0 means the untrained start).
    validation_scores_ : list of float
        Validation NDCG@k after each epoch (empty without validation).
    registry_ : ToolRegistry
        The catalogue seen in ``fit``.
    encoder_ : str
        The encoder identity seen in ``fit``.

    See Also
    --------
    GraphSmoother : Smooths the reranked scores over the ToolGraph.
    RuleFilter : Enforces risk, permission and redundancy caps on the top-k.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import RankingBatch, RiskAwareReranker, ToolRegistry
    >>> rng = np.random.default_rng(0)
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": f"t{i}", "description": f"tool {i}", "risk": 1 + i % 5} for i in range(20)])
    >>> tools = rng.normal(size=(20, 8)).astype(np.float32)
    >>> tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    >>> queries = tools[:10] + 0.1 * rng.normal(size=(10, 8)).astype(np.float32)
    >>> batch = RankingBatch.full_pool(reg, queries, tools)
    >>> y = [{f"t{i}"} for i in range(10)]
    >>> rr = RiskAwareReranker(epochs=2, validation_fraction=0, random_state=0).fit(batch, y)
    >>> rr.predict(batch).shape
    (10, 5)
    >>> rr.tool_risk_.shape
    (20,)
    """

    _caches = ("_tool_side", "_net")  # the tool layer per tool array; the rebuilt net

    _parameter_constraints: dict = {
        "risk_weight": [Interval(Real, 0, None, closed="left")],
        "hidden": [Interval(Integral, 1, None, closed="left")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "n_negatives": [Interval(Integral, 1, None, closed="left")],
        "corpus_negatives": [Interval(Integral, 0, None, closed="left")],
        "hard_negative_pool": [Interval(Integral, 1, None, closed="left")],
        "margin": [Interval(Real, 0, None, closed="left")],
        "risk_loss_weight": [Interval(Real, 0, None, closed="left")],
        "relevance_head": [StrOptions({"residual", "concat"})],
        "interaction_rank": [Interval(Integral, 1, None, closed="left"), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "patience": [Interval(Integral, 1, None, closed="left")],
        "k": [Interval(Integral, 1, None, closed="left")],
        "memory": [None, str, HasMethods(["cache"])],
        "random_state": ["random_state"],
        "device": [str],
        "verbose": ["verbose"],
    }

    def __init__(self, *, risk_weight=0.1, hidden=64, epochs=10, batch_size=64, lr=1e-3,
                 n_negatives=5, corpus_negatives=2, hard_negative_pool=100, margin=0.1,
                 risk_loss_weight=0.5, relevance_head="residual", interaction_rank=32,
                 validation_fraction=0.1, patience=3, k=5, memory=None, random_state=None,
                 device="cpu", verbose=0):
        self.risk_weight = risk_weight
        self.hidden = hidden
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.n_negatives = n_negatives
        self.corpus_negatives = corpus_negatives
        self.hard_negative_pool = hard_negative_pool
        self.margin = margin
        self.risk_loss_weight = risk_loss_weight
        self.relevance_head = relevance_head
        self.interaction_rank = interaction_rank
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.k = k
        self.memory = memory
        self.random_state = random_state
        self.device = device
        self.verbose = verbose

    _requires_y = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    # -- training ------------------------------------------------------------------------------
    def _training_params(self) -> dict:
        """The parameters that change the trained heads (the key of ``memory``'s cache)."""
        params = self.get_params()
        # random_state is given to _train_heads as the drawn seed.
        for name in ("risk_weight", "verbose", "memory", "random_state"):
            params.pop(name)
        if not self.validation_fraction:
            params.pop("k")  # k is only the cutoff of the validation NDCG
        if self.relevance_head == "concat":
            params.pop("interaction_rank")  # the concatenation head has no interactions
        return params

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train the relevance and risk heads.

        Parameters
        ----------
        X : RankingBatch
            Training queries with their candidates (from ``FrozenEmbedder`` and optionally
            ``DenseRetriever``).
        y : sequence of set of str
            Gold tool names per query.

        Returns
        -------
        self : RiskAwareReranker
            The fitted reranker.
        """
        X = self._check_input(X, reset=True)
        relevant = check_relevant(y, X.registry, X.n_queries)
        if self.corpus_negatives > self.n_negatives:
            raise ValueError(
                MSG_NEGATIVES.format(corpus=self.corpus_negatives, n=self.n_negatives))
        self._fit_batch_state(X)
        device = _check_device(self.device)
        # Hard negatives: each query's best-scored candidates that are not gold.
        order = X.ranked_indices(min(self.hard_negative_pool, X.n_candidates))
        hard_pool = np.full(order.shape, -1, dtype=np.int64)
        for i, gold in enumerate(relevant):
            if len(gold) >= len(X.registry):
                raise ValueError(MSG_NO_NEGATIVES.format(i=i))
            row = order[i][~np.isin(order[i], gold)]
            hard_pool[i, : len(row)] = row
        # check_random_state: the constraint also admits a RandomState instance.
        seed = check_random_state(self.random_state).randint(0, 2**31 - 1)
        train = _train_heads
        if isinstance(self.random_state, Integral):
            # An unseeded fit is not reproducible, so only seeded ones are cached.
            train = check_memory(self.memory).cache(_train_heads, ignore=["verbose"])
        gold = (np.concatenate(relevant), np.cumsum([len(g) for g in relevant])[:-1])
        fitted = train(self._training_params(), seed, X.query_embeddings, X.tool_embeddings,
                       None if X.is_full_pool else X.candidates, hard_pool, gold,
                       X.registry.risk, device, self.verbose)
        for name, value in fitted.items():
            setattr(self, name, value)
        self.tool_risk_ = self.heads_.risk(X.tool_embeddings)
        known = X.registry.risk_known
        self.risk_calibration_ = _risk_scale(self.tool_risk_[known], X.registry.risk[known])
        penalty = np.interp(self.tool_risk_, *self.risk_calibration_)
        # Unknown risk is never safe: the full penalty.
        self.risk_penalty_ = np.where(known, penalty, 1.0).astype(np.float32)
        self._tool_side = self._net = None
        return self

    # -- inference -----------------------------------------------------------------------------
    @property
    def net_(self) -> DualHeadNet:
        """The trained skorch net, rebuilt from ``module_state_`` (prediction only)."""
        check_is_fitted(self)
        if self.__dict__.get("_net") is None:
            # The module's shape comes from the weights, not from parameters that
            # set_params may have changed since.
            state = self.module_state_
            proj = state.get("rel_proj_q.weight")
            net = DualHeadNet(
                DualHeadModule, module__dim=state["risk_hidden.weight"].shape[1],
                module__hidden=state["rel_hidden.weight"].shape[0],
                module__relevance_head="residual" if "cos_scale" in state else "concat",
                module__interaction_rank=None if proj is None else proj.shape[0],
                criterion=nn.MSELoss,
                margin=self.margin, risk_loss_weight=self.risk_loss_weight,
                predict_nonlinearity=None, train_split=None, device="cpu").initialize()
            net.module_.load_state_dict(
                {name: torch.from_numpy(np.array(v)) for name, v in state.items()})
            self._net = net
        return self._net

    def relevance_scores(self, X) -> np.ndarray:
        """f_rel of each candidate of the batch.

        Parameters
        ----------
        X : RankingBatch
            A batch over the fitted registry.

        Returns
        -------
        f_rel : ndarray of float32 of shape (n_queries, n_candidates)
        """
        X = self._check_input(X, reset=False)
        tools = X.tool_embeddings
        side = self._cached("_tool_side", (tools,), lambda: self.heads_.tool_side(tools))
        return self.heads_.relevance(X.query_embeddings, tools,
                                     None if X.is_full_pool else X.candidates, tool_side=side)

    def predict_risk(self, X) -> np.ndarray:
        """f_risk of each candidate of the batch.

        Parameters
        ----------
        X : RankingBatch
            A batch over the fitted registry.

        Returns
        -------
        f_risk : ndarray of float32 of shape (n_queries, n_candidates)
        """
        X = self._check_input(X, reset=False)
        return self.tool_risk_[X.candidates]

    def transform(self, X):
        """Score each candidate by ``p_rel - risk_weight * risk_penalty``.

        Parameters
        ----------
        X : RankingBatch
            The batch from the previous step.

        Returns
        -------
        batch : RankingBatch
            The same candidates with the reranker's scores (ranked lists re-sorted by them).
        """
        scores = self.relevance_proba(X)
        if self.risk_weight:
            scores -= np.float32(self.risk_weight) * self.risk_penalty_[X.candidates]
        return X.with_scores(scores)

    def relevance_proba(self, X) -> np.ndarray:
        """Calibrated relevance: the probability that each candidate is a gold tool.

        ``sigmoid(a logit(f_rel) + b)`` with the (a, b) of ``relevance_calibration_``;
        a monotone map of ``f_rel``, so it ranks the same.

        Parameters
        ----------
        X : RankingBatch
            A batch over the fitted registry.

        Returns
        -------
        p_rel : ndarray of float32 of shape (n_queries, n_candidates)
        """
        rel = self.relevance_scores(X)  # checks that the reranker is fitted
        a, b = self.relevance_calibration_
        return expit((a * _logit(rel) + b).astype(np.float32))
