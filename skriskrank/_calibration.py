"""The calibrated scales of the reranker's trade-off: Platt scaling of f_rel, isotonic risk."""

import numpy as np
from scipy.special import logit
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from ._rubric import penalty

__all__ = ["_logit", "_platt", "_risk_scale"]


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
    """Breakpoints of an isotonic map from labelled tools' f_risk to the rubric's penalty."""
    if len(risk) < 2:
        return np.array([[0.0, 1.0], [0.0, 1.0]])  # no labels: the identity
    iso = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(f_risk, penalty(risk))
    return np.array([iso.X_thresholds_, iso.y_thresholds_])
