"""The paper's annotation protocol: resolving annotators' votes and measuring agreement."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._rubric import LEVELS, is_level, is_missing, resolve_span

__all__ = ["agreement", "ordinal_alpha", "resolve_votes"]

#: How :func:`resolve_votes` settles an item, by the span (max - min) of its votes.
RESOLUTIONS = ("unanimous", "median", "review")

MSG_VOTES_SHAPE = ("votes must be a 2-d array-like of levels, one row per tool and one column per "
                   "annotator, or a mapping of tool names to lists of levels; got {got}.")
MSG_VOTE_LEVEL = "{item}: votes must be integers in 1..5 (or missing), got {value!r}."
MSG_NO_VOTES = "{item}: no votes (every annotator's vote is missing)."
MSG_PAIR_LENGTH = "y_a and y_b must have one level per tool; got {a} and {b}."
MSG_PAIR_EMPTY = "y_a and y_b are empty: agreement needs at least one tool."


def _level(item: str, v) -> float:
    if is_missing(v):
        return np.nan
    if not is_level(v):
        raise ValueError(MSG_VOTE_LEVEL.format(item=item, value=v))
    return float(v)


def _vote_matrix(votes) -> tuple[list[str], np.ndarray]:
    """``(item labels, float matrix with NaN for a missing vote)``."""
    if isinstance(votes, Mapping):
        names = [str(k) for k in votes]
        rows = [list(v) if not np.isscalar(v) else None for v in votes.values()]
    elif hasattr(votes, "to_numpy"):  # a DataFrame
        names = [str(k) for k in votes.index]
        rows = votes.to_numpy(dtype=object).tolist()
    else:
        rows = [list(r) if not np.isscalar(r) else None for r in votes]
        names = [f"tool #{i}" for i in range(len(rows))]
    if not rows or any(r is None for r in rows) or len({len(r) for r in rows}) != 1:
        got = "ragged or scalar rows" if rows else "nothing"
        raise ValueError(MSG_VOTES_SHAPE.format(got=got))
    mat = np.array([[_level(n, v) for v in r] for n, r in zip(names, rows, strict=True)],
                   dtype=float)
    if mat.shape[1] == 0:  # rows of equal length make a 2-d matrix; none may be empty
        raise ValueError(MSG_VOTES_SHAPE.format(got=f"shape {mat.shape}"))
    return names, mat


def resolve_votes(votes):
    """Resolve several annotators' levels per tool by the paper's span rule.

    The span is the highest vote minus the lowest. Span 0: the annotators agree and the level
    is kept. Span 1: the median is taken (rounded up, towards the higher risk, when an even
    number of votes gives a half level). Span 2 or more: the tool goes to human review and
    gets no level.

    Parameters
    ----------
    votes : array-like of shape (n_tools, n_annotators), DataFrame, or mapping
        Levels 1..5; ``None`` or NaN is a missing vote (ignored). A mapping goes from tool
        names to their votes, and a DataFrame's index names the tools.

    Returns
    -------
    resolved : pandas.DataFrame
        One row per tool (indexed by the tool names where given): ``level`` (nullable
        ``Int64``, ``<NA>`` where review is needed), ``span``, ``n_votes`` and ``resolution``
        (``"unanimous"``, ``"median"`` or ``"review"``).

    Raises
    ------
    ValueError
        For a vote outside 1..5 or a tool without votes (naming the tool), or ragged rows.

    See Also
    --------
    agreement : Exact, within-one, QWK and Krippendorff's alpha between two raters.

    Examples
    --------
    >>> from skriskrank.metrics import resolve_votes
    >>> out = resolve_votes({"read_file": [1, 1, 1], "send_email": [2, 3, 3],
    ...                      "run_shell": [2, 5, 4]})
    >>> out["level"].tolist(), out["resolution"].tolist()
    ([1, 3, <NA>], ['unanimous', 'median', 'review'])
    """
    import pandas as pd

    names, mat = _vote_matrix(votes)
    n_votes = (~np.isnan(mat)).sum(axis=1)
    if (n_votes == 0).any():
        raise ValueError(MSG_NO_VOTES.format(item=names[np.argmin(n_votes)]))
    span, median, review = resolve_span(mat)
    resolution = np.array(RESOLUTIONS)[np.minimum(span, 2)]  # by the span of the votes
    level = pd.array([None if r else int(m) for r, m in zip(review, median, strict=True)],
                     dtype="Int64")
    # Named rows (a mapping, a DataFrame) keep their names; a list or array its positions.
    index = names if (isinstance(votes, Mapping) or hasattr(votes, "to_numpy")) else None
    return pd.DataFrame({"level": level, "span": span, "n_votes": n_votes,
                         "resolution": resolution}, index=index)


def ordinal_alpha(votes) -> float:
    """Krippendorff's alpha at the ordinal level over several annotators.

    Computed by the ``krippendorff`` package with ``level_of_measurement="ordinal"`` over
    the five levels; missing votes are allowed.

    Parameters
    ----------
    votes : array-like of shape (n_tools, n_annotators), DataFrame, or mapping
        As for :func:`resolve_votes`.

    Returns
    -------
    alpha : float
        1 for perfect agreement, 0 for chance level, negative below chance; NaN when the
        votes hold a single level (alpha is undefined without variation).

    Examples
    --------
    >>> from skriskrank.metrics import ordinal_alpha
    >>> round(ordinal_alpha([[1, 1], [2, 2], [4, 4], [5, 4]]), 3)
    0.91
    """
    import krippendorff

    _, mat = _vote_matrix(votes)
    if np.unique(mat[~np.isnan(mat)]).size < 2:
        return float("nan")
    # krippendorff wants raters as rows and units (tools) as columns.
    return float(krippendorff.alpha(reliability_data=mat.T, level_of_measurement="ordinal",
                                    value_domain=list(LEVELS)))


def agreement(y_a, y_b) -> dict[str, float]:
    """Agreement between two raters' levels (say a human auditor and the released labels).

    Parameters
    ----------
    y_a, y_b : array-like of int, shape (n_tools,)
        Levels 1..5 of the same tools.

    Returns
    -------
    stats : dict
        ``n`` (tools), ``exact`` (share of equal levels), ``within_one`` (share at most one
        level apart), ``qwk`` (quadratically weighted Cohen's kappa, scikit-learn's
        ``cohen_kappa_score(weights="quadratic")``) and ``alpha`` (Krippendorff's ordinal
        alpha of the two, :func:`ordinal_alpha`).

    Examples
    --------
    >>> from skriskrank.metrics import agreement
    >>> stats = agreement([1, 2, 3, 4, 5, 1], [1, 2, 4, 4, 3, 1])
    >>> stats["exact"], stats["within_one"], round(stats["qwk"], 3)
    (0.6666666666666666, 0.8333333333333334, 0.783)
    """
    from sklearn.metrics import cohen_kappa_score

    a, b = list(y_a), list(y_b)
    if len(a) != len(b):
        raise ValueError(MSG_PAIR_LENGTH.format(a=len(a), b=len(b)))
    if not a:
        raise ValueError(MSG_PAIR_EMPTY)
    a = np.array([_level(f"y_a[{i}]", v) for i, v in enumerate(a)])
    b = np.array([_level(f"y_b[{i}]", v) for i, v in enumerate(b)])
    both = ~(np.isnan(a) | np.isnan(b))
    a, b = a[both].astype(int), b[both].astype(int)
    diff = np.abs(a - b)
    qwk = cohen_kappa_score(a, b, weights="quadratic", labels=list(LEVELS)) if len(
        np.unique(np.r_[a, b])) > 1 else float("nan")
    return {"n": len(a), "exact": float(np.mean(diff == 0)),
            "within_one": float(np.mean(diff <= 1)), "qwk": float(qwk),
            "alpha": ordinal_alpha(np.c_[a, b])}
