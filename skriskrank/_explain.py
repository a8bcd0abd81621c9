"""Why each tool was kept or dropped, read from the batch that ``predict`` itself makes."""

from __future__ import annotations

import copy

import numpy as np

from ._base import rank_reason
from ._embedding import FrozenEmbedder
from ._poisoning import shown_description
from ._rubric import UNKNOWN_RISK

__all__ = ["explain", "search", "trace"]

MSG_NOT_A_PIPELINE = ("explain takes a fitted Pipeline whose first step is a FrozenEmbedder (or "
                      "any prefix of one), got {type}.")

#: Parts a filter records that its reasons put into words (they are not score columns).
_DECISION_PARTS = ("decision", "duplicate_of")


def trace(pipeline, queries, k=None):
    """``(batch, steps)``: the last step's output on ``queries``, and the pipeline's steps.

    The steps (``"passthrough"`` left out) run as ``pipeline.predict`` runs them, once, on a
    traced batch (:meth:`RankingBatch.traced`): each records its parts (``f_rel``, ``p_rel``,
    ``f_risk``, ``risk_penalty``, ``smoothing``, a filter's ``decision`` ...) beside the
    scores, and they follow the candidates to the last step, whose top ``k`` (``None``: its
    own ``k``; the pipeline is left as it was) is ``predict``'s.
    """
    steps = [step for _, step in getattr(pipeline, "steps", [])
             if step not in (None, "passthrough")]
    if not steps or not isinstance(steps[0], FrozenEmbedder):
        raise ValueError(MSG_NOT_A_PIPELINE.format(type=type(pipeline).__name__))
    if k is not None and len(steps) > 1 and steps[-1].k != k:
        # A shallow copy shares the fitted state; the caller's step keeps its k.
        steps[-1] = copy.copy(steps[-1]).set_params(k=int(k))
    batch = steps[0].transform(list(queries)).traced()
    for step in steps[1:]:
        batch = step.transform(batch)
    return batch, steps


def reasoner(step, k):
    """``step.reason``, or for a step that does not rank (the embedder) its place in words."""
    return getattr(step, "reason", lambda batch, i, j: rank_reason(step, j, k))


def search(pipeline, query, k, *, dropped=False):
    """One query's top ``k`` as rows for an agent: what ``skriskrank serve`` answers.

    A dict per tool, best first: ``rank``, ``name``, ``description``, ``risk_level`` (None
    when unknown), ``risk_predicted``, ``score``, ``reason`` and ``flags`` (sorted); the
    tools of ``pipeline.predict`` with the last step's ``k`` set to ``k`` (a relevance floor
    may give fewer), then, with ``dropped``, the candidates it left out, with ``rank`` None.
    The description of a tool flagged ``injection``, ``stuffing`` or ``changed`` is withheld
    (``MSG_WITHHELD``): a filter may still list such a tool to fill a list, and an agent
    reads what a search returns.
    """
    batch, steps = trace(pipeline, [query], k)
    if batch.is_full_pool:
        batch = batch.top(k)
    reason, reg = reasoner(steps[-1], k), batch.registry
    ranked = batch.ranked_indices(k)[0]
    rows = []
    for j, t in enumerate(batch.candidates[0].tolist()):
        kept = j < len(ranked) and ranked[j] >= 0
        if not (kept or dropped):
            break
        level, flags = int(reg.risk[t]), sorted(reg.flags[t])
        rows.append({"rank": j + 1 if kept else None, "name": str(reg.names[t]),
                     "description": shown_description(str(reg.descriptions[t]), flags),
                     "risk_level": None if level == UNKNOWN_RISK else level,
                     "risk_predicted": bool(reg.risk_predicted[t]),
                     "score": float(batch.scores[0, j]), "reason": reason(batch, 0, j),
                     "flags": flags})
    return rows


def explain(pipeline, queries, k=None):
    """Every candidate that reached a pipeline's last step, with why it was kept or dropped.

    Runs the fitted pipeline (or any prefix of it, such as ``Pipeline(pipe.steps[:3])``) on
    ``queries`` once, as ``predict`` does (``trace``), and reads each final candidate's
    score, broken down into the parts each step added, from the batch it returns. Its top
    ``k`` per query (rows with a ``rank``) equals ``pipeline.predict``.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        A fitted skriskrank pipeline whose first step is a :class:`FrozenEmbedder`.
    queries : list of str
        The queries to explain.
    k : int or None, default=None
        How many tools a list offers; ``None`` is the last step's ``k``.

    Returns
    -------
    explanation : pandas.DataFrame
        One row per (query, candidate of the last step), in the last step's order, with the
        columns ``query``, ``tool``, ``rank`` (1-based; missing outside the top ``k``),
        ``reason`` (the last step's decision in words), ``risk`` (missing when unknown),
        ``risk_predicted``, ``cosine`` (the first-stage query-tool cosine), the parts the
        pipeline's steps recorded (``f_rel``, ``p_rel``, ``f_risk``, ``risk_penalty``,
        ``smoothing``, ``p_gold``: see each step's class), and ``score`` (the last step's).

    Examples
    --------
    >>> from sklearn.pipeline import Pipeline
    >>> from skriskrank import FrozenEmbedder, RuleFilter, explain
    >>> from skriskrank.datasets import load_demo
    >>> demo = load_demo()
    >>> pipe = Pipeline([("embed", FrozenEmbedder(demo.registry)),
    ...                  ("filter", RuleFilter(k=3))]).fit(demo.queries[:20])
    >>> table = explain(pipe, ["delete the old log files"])
    >>> table.loc[table["rank"].notna(), ["tool", "rank", "reason"]].shape
    (3, 3)
    """
    import pandas as pd

    batch, steps = trace(pipeline, queries, k)
    last = steps[-1]
    k = getattr(last, "k", 5)
    if batch.is_full_pool:  # as ranked lists, so that rows and parts are in rank order
        batch = batch.top(batch.n_candidates)
    reason = reasoner(last, k)
    reg, n_q, m = batch.registry, batch.n_queries, batch.n_candidates
    ranked = batch.ranked_indices()  # -1 marks an empty slot of a shortened list
    cand = np.where(ranked < 0, batch.candidates, ranked)
    risk = reg.risk[cand].ravel()
    cols = {"query": np.repeat(batch.queries, m), "tool": reg.names[cand].ravel(),
            "rank": pd.arrays.IntegerArray(np.tile(np.arange(1, m + 1), n_q),
                                           ~((ranked >= 0) & (np.arange(m) < k)).ravel()),
            "reason": [reason(batch, i, j) for i in range(n_q) for j in range(m)],
            "risk": pd.arrays.IntegerArray(risk, risk == UNKNOWN_RISK),
            "risk_predicted": reg.risk_predicted[cand].ravel(),
            "cosine": np.einsum("qd,qmd->qm", batch.query_embeddings,
                                batch.tool_embeddings[cand]).ravel()}
    cols |= {name: np.asarray(part).ravel() for name, part in batch.parts.items()
             if name not in _DECISION_PARTS}
    cols["score"] = batch.scores.ravel()
    return pd.DataFrame(cols)
