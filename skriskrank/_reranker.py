"""RiskAwareReranker: the paper's dual-head reranker, trained with skorch.

Risk-Aware Reranking for Agentic Tool Retrieval (CIKM 2026), Section 3.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import torch
from scipy.special import expit
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, check_memory
from torch import nn

from ._base import RankingStepMixin, check_relevant
from ._calibration import _logit, _risk_scale
from ._encoder import check_device as _check_device
from ._heads import DualHeadModule, DualHeadNet
from ._training import _train_heads

__all__ = ["RiskAwareReranker"]

MSG_NEGATIVES = ("corpus_negatives={corpus} cannot exceed n_negatives={n}: corpus negatives "
                 "are part of the n_negatives drawn per positive.")
MSG_NO_NEGATIVES = "Every tool of the registry is a gold tool of query {i}: no negative exists."

class RiskAwareReranker(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Rerank candidates by calibrated relevance minus ``risk_weight`` times a risk penalty.

    A relevance head ``f_rel`` and a risk head ``f_risk`` over frozen embeddings, trained
    jointly by a skorch :class:`~skriskrank._heads.DualHeadNet`. The score is ``s = p_rel -
    risk_weight * penalty``: ``p_rel`` is the Platt-calibrated probability that the tool is
    a gold tool of the query, ``penalty`` in [0, 1] the isotonic map of ``f_risk`` onto the
    rubric's penalty (:ref:`pipeline`). ``risk_weight`` acts at inference only:
    ``set_params`` on a fitted reranker changes the next ``transform`` without a refit.
    ``transform`` re-sorts ranked lists by the new scores; a traced batch records ``f_rel``,
    ``p_rel``, ``f_risk`` and ``risk_penalty`` (``risk_weight`` times the penalty).

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
        ``"concat"`` is the paper's ``MLP([e_q; e_t])``, kept for faithful reproduction;
        ``"residual"`` corrects the cosine score and starts from the dense ranking.
    interaction_rank : int or None, default=32
        Rank of the residual head's projected interaction features; ``None``: the
        elementwise product. See :class:`~skriskrank._heads.DualHeadModule`.
    validation_fraction : float, default=0.1
        Share of training queries held out for early stopping on their NDCG@k (the best epoch
        is kept, the untrained start included), so that the relevance head does not fall
        below the ranking it reranks; 0 trains on all of them for exactly ``epochs`` epochs.
    patience : int, default=3
        Epochs without a better validation NDCG@k before training stops.
    k : int, default=5
        Cut-off of :meth:`predict` and of the validation NDCG (so it changes training when
        ``validation_fraction > 0``).
    memory : str, object with the joblib.Memory interface or None, default=None
        Caches the trained heads, keyed on every parameter that changes training and on the
        training data, as ``Pipeline(memory=...)`` caches fitted transformers (a string is
        the cache directory; ``None`` caches nothing). Only fits with an integer
        ``random_state`` are cached; clear the heads of every distinct fit with ``memory.clear()``.
    random_state : int or None, default=None
        Seeds the initial weights, the negative sampling, the shuffling and the validation
        split, each through a generator of the fit's own (torch's global one is left alone).
        The same value gives identical predictions from two fits, also two at once.
    device : str, default="cpu"
        Torch device for training.
    verbose : int, default=0
        1 shows a progress bar over the epochs (tqdm, on stderr); 2 adds skorch's
        per-epoch table (on stdout).

    Attributes
    ----------
    module_state_ : dict of str to ndarray
        The ``state_dict`` of the trained :class:`~skriskrank._heads.DualHeadModule`, in numpy.
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
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.

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

    def _fit_step(self, X, y):
        relevant = check_relevant(y, X.registry, X.n_queries)
        if self.corpus_negatives > self.n_negatives:
            raise ValueError(
                MSG_NEGATIVES.format(corpus=self.corpus_negatives, n=self.n_negatives))
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
        vars(self).update(fitted)
        self.tool_risk_ = self.heads_.risk(X.tool_embeddings)
        known = X.registry.risk_known
        self.risk_calibration_ = _risk_scale(self.tool_risk_[known], X.registry.risk[known])
        penalty = np.interp(self.tool_risk_, *self.risk_calibration_)
        # Unknown risk is never safe: the full penalty.
        self.risk_penalty_ = np.where(known, penalty, 1.0).astype(np.float32)
        self._tool_side = self._net = None

    @property
    def net_(self) -> DualHeadNet:
        """The trained skorch net, rebuilt from ``module_state_`` (prediction only)."""
        check_is_fitted(self)
        if self.__dict__.get("_net") is None:
            # The shape from the weights: set_params may have changed the parameters since.
            state = self.module_state_
            proj = state.get("rel_proj_q.weight")
            net = DualHeadNet(
                DualHeadModule, module__dim=state["risk_hidden.weight"].shape[1],
                module__hidden=state["rel_hidden.weight"].shape[0],
                module__relevance_head="residual" if "cos_scale" in state else "concat",
                module__interaction_rank=None if proj is None else proj.shape[0],
                criterion=nn.MSELoss, margin=self.margin, risk_loss_weight=self.risk_loss_weight,
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
        return self._relevance(self._check_input(X, reset=False))

    def _relevance(self, X):
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

    def _transform(self, X):
        rel = self._relevance(X)
        p_rel = self._calibrated(rel)
        penalty = np.float32(self.risk_weight) * self.risk_penalty_[X.candidates]
        X = X.with_parts(f_rel=rel, p_rel=p_rel, f_risk=lambda: self.tool_risk_[X.candidates],
                         risk_penalty=penalty)
        return X.with_scores(p_rel - penalty if self.risk_weight else p_rel)

    def _calibrated(self, rel):
        a, b = self.relevance_calibration_
        return expit((a * _logit(rel) + b).astype(np.float32))

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
        return self._calibrated(self.relevance_scores(X))  # which checks that it is fitted
