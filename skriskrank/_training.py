"""Training of the reranker's heads: negative sampling, skorch callbacks, the training run."""

import warnings

import numpy as np
import torch
from skorch.callbacks import Callback
from threadpoolctl import threadpool_limits
from torch import nn

from ._calibration import _platt
from ._fast import topk_rows
from ._head_weights import HeadWeights
from ._heads import DualHeadModule, DualHeadNet
from ._rubric import level_scale
from .metrics import ndcg_at_k

__all__ = ["_TripletDataset", "_TripletBatches", "_EarlyStopping", "_EpochBar", "_train_heads"]

MSG_TOO_FEW_QUERIES = ("validation_fraction={frac} leaves {n_train} training queries; give "
                       "more queries or set validation_fraction=0.")
MSG_NO_VALIDATION = ("validation_fraction={frac} holds out no query of a single training query: "
                     "training runs all {epochs} epochs without early stopping. Give more "
                     "queries, or set validation_fraction=0 to say so.")


class _TripletDataset(torch.utils.data.Dataset):
    """(query, [t+, t-...]) samples with negatives drawn afresh every epoch."""

    def __init__(self, q_emb, t_emb, pair_query, pair_pos, hard_pool, gold_keys, n_hard,
                 n_corpus, risk_target, seed):
        self.q_emb, self.t_emb = q_emb, t_emb
        self.pair_query, self.pair_pos = pair_query, pair_pos
        # hard_pool: (n_queries, L) registry indices padded with -1.
        self.hard_pool, self.hard_len = hard_pool, (hard_pool >= 0).sum(axis=1)
        self.gold_keys = gold_keys  # query * n_tools + tool of every gold pair
        self.n_hard, self.n_corpus = n_hard, n_corpus
        self.risk_target = risk_target
        self.rng = np.random.default_rng(seed)
        self.n_tools = len(t_emb)

    def __len__(self):
        return len(self.pair_query)

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
            bad = np.isin(q[rows].astype(np.int64) * self.n_tools + draw, self.gold_keys)
            rows, cols = rows[bad], cols[bad]
        return tools


class _TripletBatches:
    """skorch ``iterator_train``: shuffled mini-batches of a :class:`_TripletDataset`.

    Each pass samples the whole epoch's negatives at once, in a few vectorized calls: per-item
    sampling and collation would cost more than the heads' arithmetic.
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
            yield ({"query": torch.from_numpy(ds.q_emb[pair_query[s : s + self.batch_size]]),
                    "tools": torch.from_numpy(ds.t_emb[idx])},
                   torch.from_numpy(ds.risk_target[idx]))


class _EarlyStopping(Callback):
    """Early stopping on the held-out queries' NDCG@k of the relevance head.

    The untrained start (epoch 0) is a candidate too: with the residual head it is the dense
    ranking itself. Training stops after ``patience`` epochs without a better score (raising
    ``KeyboardInterrupt``, which skorch's ``fit`` catches, as its own ``EarlyStopping``
    does). Only the relevance head goes back to its best epoch: the risk head has its own
    loss term and disjoint parameters, and keeps its last state.
    """

    def __init__(self, q_emb, t_emb, candidates, relevant, k, patience):
        self.q_emb, self.t_emb, self.candidates = q_emb, t_emb, candidates
        self.relevant, self.k, self.patience = relevant, k, patience

    def score(self, net):
        heads = HeadWeights.from_module(net.module_)
        rel = heads.relevance(self.q_emb, self.t_emb, self.candidates)
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


def _train_heads(params, seed, q_emb, t_emb, candidates, hard_pool, gold, risk, device,
                 verbose=0):
    """Train the two heads; a pure function of its arguments, so ``memory`` can cache it.

    ``params``: the parameters that affect training; ``candidates``: None for the full pool;
    ``hard_pool``: each query's best non-gold candidates (-1 pads); ``gold``: each query's gold
    indices as ``(concatenated, offsets)``, quick to hash. Returns the fitted attributes.
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
    gold_keys = np.concatenate([i * n_tools + relevant[i] for i in range(n_q)])
    pair_query = np.concatenate([np.full(len(relevant[i]), i) for i in train])
    pair_pos = np.concatenate([relevant[i] for i in train])
    risk_target = level_scale(risk, unknown=np.nan)
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
    # Generators of the fit's own: torch's global generator is shared by every thread.
    net = DualHeadNet(
        DualHeadModule, module__dim=t_emb.shape[1], module__hidden=params["hidden"],
        module__relevance_head=params["relevance_head"],
        module__interaction_rank=params.get("interaction_rank"), module__device="meta",
        seed=seed, criterion=nn.MSELoss, optimizer=torch.optim.Adam, lr=params["lr"],
        max_epochs=params["epochs"], batch_size=params["batch_size"], train_split=None,
        iterator_train=_TripletBatches,
        iterator_train__generator=torch.Generator().manual_seed(seed), callbacks=callbacks,
        predict_nonlinearity=None, margin=params["margin"],
        risk_loss_weight=params["risk_loss_weight"], device=device, verbose=int(verbose > 1))
    # The heads' mini-batches are too small for intra-op threads to pay off (a second thread
    # that a busy core does not schedule stalls every operation). OpenMP's thread count is a
    # per-thread setting: limiting it here leaves every other thread, and torch's own
    # process-wide setting, as they were. torch sets up this thread's OpenMP first.
    torch.get_num_threads()
    with threadpool_limits(limits=1, user_api="openmp"):
        net.fit(dataset, y=None)
    stopper = dict(net.callbacks_).get("early_stopping")
    heads = HeadWeights.from_module(net.module_)
    # The scales of the trade-off, learned on queries training did not see where it can.
    calib = valid if n_valid else train
    rel = heads.relevance(q_emb[calib], t_emb, None if candidates is None else candidates[calib])
    cand = (np.broadcast_to(np.arange(n_tools), rel.shape) if candidates is None
            else candidates[calib])
    gold = np.stack([np.isin(c, relevant[i]) for c, i in zip(cand, calib, strict=True)])
    # The weights as numpy: a fitted reranker holds no torch object, so it pickles small
    # and saves to skops files, and the net is rebuilt from them on demand (net_).
    state = {name: v.detach().cpu().numpy() for name, v in net.module_.state_dict().items()}
    return {"module_state_": state, "heads_": heads, "relevance_calibration_": _platt(rel, gold),
            "n_epochs_": len(net.history),
            "best_epoch_": stopper.best_epoch_ if stopper is not None else len(net.history),
            "validation_scores_": [h["valid_ndcg"] for h in net.history if "valid_ndcg" in h]}
