"""The estimate of whether a candidate is a gold tool of its query, that the filters read."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import logit, softmax
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ._fast import topk_rows
from ._graph import _incidence

MSG_ONE_CLASS = ("No candidate of rank below {rank} in the training batch is {what}a gold tool: "
                 "the relevance model cannot learn, so every candidate gets p={p:g}.")


def _rows(cand):
    """The row index of each entry of ``cand``, flattened (for sparse fancy indexing)."""
    return np.repeat(np.arange(len(cand)), cand.shape[1])


class _GoldModel:
    """P(a candidate is a gold tool of its query), the filters' ``relevance_model_``.

    The features are those RuleFilter and NeedAwareFilter describe; the neighbours weigh
    ``softmax(cosine / temperature)``, and in ``fit`` each query leaves itself out. The
    logistic regression (standardized features, C=1) fits candidates of rank below ``fit_rank``.
    """

    def __init__(self, knn, fit_rank, n_neighbors=10, temperature=0.05):
        self.knn, self.fit_rank = knn, fit_rank
        self.n_neighbors, self.temperature = n_neighbors, temperature

    def _features(self, X, positions, leave_out=False):
        cand = np.take_along_axis(X.candidates, positions, axis=1)
        s = np.take_along_axis(X.scores, positions, axis=1).astype(np.float64)
        rank = np.broadcast_to(np.arange(cand.shape[1]), cand.shape)
        cols = [np.log1p(rank), s[:, :1] - s]
        if self.knn:
            sim = X.query_embeddings @ self.queries_.T
            if leave_out:
                np.fill_diagonal(sim, -np.inf)
            n = min(self.n_neighbors, sim.shape[1] - leave_out)
            near = topk_rows(sim, n)
            w = softmax(np.take_along_axis(sim, near, axis=1) / self.temperature, axis=1)
            # (queries, n_neighbors) weights times the neighbours' gold rows, at the candidates.
            weights = sp.csr_array((w.ravel(), near.ravel(), np.arange(0, w.size + 1, n)),
                                   shape=(len(w), len(self.queries_)))
            rate = (weights @ self.gold_).tocsr()[_rows(cand), cand.ravel()]
            cols.append(logit(np.clip(np.asarray(rate).reshape(cand.shape), 0.01, 0.99)))
        return np.stack([c.ravel() for c in cols], axis=1), cand

    def fit(self, X, relevant):
        self.queries_ = X.query_embeddings
        self.gold_ = _incidence(relevant, len(X.registry))
        positions = X.order(self.fit_rank)
        feats, cand = self._features(X, positions, leave_out=True)
        target = np.asarray(self.gold_[_rows(cand), cand.ravel()]).ravel() > 0
        self.constant_ = float(target.mean()) if len(target) else 0.0
        if self.constant_ in (0.0, 1.0):
            # One class (e.g. an upstream that never ranks a gold tool this high): nothing to
            # learn, so every candidate gets that class's probability, and the user is told.
            warnings.warn(MSG_ONE_CLASS.format(rank=self.fit_rank, p=self.constant_,
                                               what="" if self.constant_ == 0.0 else "not "),
                          UserWarning, stacklevel=4)
            self.model_ = None
        else:
            self.model_ = make_pipeline(
                StandardScaler(), LogisticRegression(C=1.0, max_iter=1000)).fit(feats, target)
        return self

    def predict_proba(self, X, positions):
        """(n_queries, m) probabilities of the candidates at ``positions``, in that order."""
        if self.model_ is None:
            return np.full(positions.shape, self.constant_)
        feats, cand = self._features(X, positions)
        return self.model_.predict_proba(feats)[:, 1].reshape(cand.shape)
