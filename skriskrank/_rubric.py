"""The paper's five-level risk rubric: levels, thresholds, unknown risk, and their scales.

Every reader and writer of risk levels uses this module, so a level means one thing
everywhere:

- the levels 1 (read-only, no side effects) to 5 (large-scale harm, system intrusion or
  severe privacy loss); level 3 is sensitive data access or persistent writes, level 4
  irreversible actions, security controls or system-level permissions;
- the *risky* and *severe* thresholds (:data:`RISKY_LEVEL`, :data:`SEVERE_LEVEL`) and the
  level of an unlabelled tool, :data:`UNKNOWN_RISK`, which both count;
- the annotation protocol's span rule (:func:`resolve_span`);
- the one cell format of a level and of a permission set in CSV and frame files.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

__all__ = ["LEVELS", "RISKY_LEVEL", "SEVERE_LEVEL", "UNKNOWN_RISK", "check_level",
           "format_permissions", "is_level", "is_missing", "level_scale", "parse_permissions",
           "penalty", "resolve_span"]

#: The five levels, in the column order of :meth:`RiskAuditor.predict_proba`.
LEVELS = (1, 2, 3, 4, 5)
#: Levels at or above this one are risky: RVR@k, the filters' caps and the graph count them.
RISKY_LEVEL = 3
#: Levels at or above this one are severe: SRR@k counts them, sNDCG@k gives them no gain.
SEVERE_LEVEL = 4
#: The level of a tool without a label. It compares above every real level (1..5), so any
#: ``risk >= level`` test counts an unlabelled tool as risky instead of silently safe.
UNKNOWN_RISK = 99

#: The permission cell of a tool that has none (a blank cell means "derive them").
NO_PERMISSIONS = "none"

MSG_BAD_LEVEL = "{what}: risk must be an integer in 1..5 or None (unknown), got {value!r}."


def is_missing(value) -> bool:
    """Whether a cell is empty: None, a float NaN or pandas.NA (pandas is not imported)."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    return type(value).__name__ == "NAType"


def is_level(value) -> bool:
    """Whether ``value`` is a risk level: an integer (or integral float) in 1..5."""
    # bool is an Integral subclass but never a risk level.
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, Real)):
        return False
    return float(value).is_integer() and 1 <= value <= 5


def check_level(value, what: str) -> int:
    """``value`` as a stored level: 1..5, or :data:`UNKNOWN_RISK` for a missing one."""
    if is_missing(value) or (isinstance(value, Integral) and not isinstance(value, bool)
                             and value == UNKNOWN_RISK):
        return UNKNOWN_RISK
    if not is_level(value):
        raise ValueError(MSG_BAD_LEVEL.format(what=what, value=value))
    return int(value)


def level_scale(levels, unknown=1.0) -> np.ndarray:
    """Levels mapped to [0, 1] as ``(level - 1) / 4``; an unknown level maps to ``unknown``.

    The risk head learns this scale (with ``unknown=nan``: no target), and the risk-label
    penalty baseline penalises it (with the default: unknown as the worst level).
    """
    levels = np.asarray(levels)
    return np.where(levels == UNKNOWN_RISK, unknown, (levels - 1) / 4.0).astype(np.float32)


def penalty(levels) -> np.ndarray:
    """The rubric's penalty: 0 for levels 1-2, 0.5 for 3, 1 for 4-5 and unknown risk."""
    return np.clip((np.asarray(levels, dtype=np.float64) - 2) / 2.0, 0.0, 1.0)


def resolve_span(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(span, median, needs_review)`` per row of votes (NaN: missing), by the span rule.

    :func:`~skriskrank.metrics.resolve_votes` states the rule.
    """
    span = (np.nanmax(votes, axis=1) - np.nanmin(votes, axis=1)).astype(int)
    median = np.ceil(np.nanmedian(votes, axis=1)).astype(int)
    return span, median, span >= 2


def format_permissions(permissions) -> str:
    """A permission set's cell: categories joined by ``;``, :data:`NO_PERMISSIONS` for none."""
    return ";".join(sorted(permissions)) or NO_PERMISSIONS


def parse_permissions(cell):
    """A permission cell read back: ``None`` (blank: derive them), or a frozenset."""
    if is_missing(cell):
        return None
    if not isinstance(cell, str):
        return frozenset(cell)
    if not cell.strip():
        return None
    if cell.strip().lower() == NO_PERMISSIONS:
        return frozenset()
    return frozenset(p.strip() for p in cell.replace(",", ";").replace("|", ";").split(";")
                     if p.strip())
