"""Why each tool was kept or dropped: a per-candidate breakdown of a fitted pipeline."""

from __future__ import annotations

import numpy as np

from ._batch import RankingBatch
from ._embedding import FrozenEmbedder
from ._fast import ACCEPTED, BELOW_FLOOR, BROAD, HIGH_RISK, NOT_NEEDED, REDUNDANT, UNSCANNED
from ._filter import RuleFilter
from ._graph import GraphSmoother
from ._registry import UNKNOWN_RISK
from ._reranker import RiskAwareReranker

__all__ = ["explain"]

MSG_NOT_A_PIPELINE = (
    "explain takes a fitted Pipeline whose first step is a FrozenEmbedder (or any prefix of "
    "one), got {type}."
)


def _at(batch: RankingBatch, cand):
    """The scores of ``batch`` at the candidates ``cand``, row by row."""
    if batch.is_full_pool:
        return np.take_along_axis(batch.scores, cand, axis=1)
    pos = np.argsort(batch.candidates, axis=1)
    sorted_c = np.take_along_axis(batch.candidates, pos, axis=1)
    idx = np.take_along_axis(pos, np.stack([np.searchsorted(s, c) for s, c in zip(
        sorted_c, cand, strict=True)]), axis=1)
    return np.take_along_axis(batch.scores, idx, axis=1)


def _filter_reasons(step, batch, out, scan=None):
    """The filter's decision for each candidate of its output ``out``, in words.

    ``scan`` is ``step._scan(batch)`` when the caller has it already.
    """
    decision, other, _, _, p = step._scan(batch) if scan is None else scan
    ranked = np.take_along_axis(batch.candidates, batch.order(), axis=1)  # the scan's order
    names, emb = batch.registry.names, batch.tool_embeddings
    second = "a second" if step.max_high_risk == 1 else "one more"

    def reason(i, j, t):  # candidate t, at position j of query i's scan
        d = decision[i, j]
        if d == ACCEPTED:
            return "accepted"
        if d == HIGH_RISK:
            return f"deferred: {second} tool of risk >= {step.high_risk_level}"
        if d == BROAD:
            return "deferred: broad permissions"
        if d == REDUNDANT:
            u = int(other[i, j])
            return f"deferred: near-duplicate of {names[u]}, cosine {emb[u] @ emb[t]:.2f}"
        if d == NOT_NEEDED:
            return (f"deferred: not needed for this query (p={p[i, j]:.2f} < "
                    f"{step.need_threshold:g})")
        if d == BELOW_FLOOR:
            return f"below the relevance floor (p={p[i, j]:.2f} < {step.relevance_floor:g})"
        return "not reached: the list was full" if d == UNSCANNED else f"decision {d}"

    at = [{int(t): j for j, t in enumerate(row)} for row in ranked]
    return [[reason(i, at[i][t], t) for t in row.tolist()] for i, row in enumerate(out.candidates)]


def explain(pipeline, queries, k=None):
    """Every candidate that reached a pipeline's last step, with why it was kept or dropped.

    Runs the fitted pipeline (or any prefix of it, such as ``Pipeline(pipe.steps[:3])``) on
    ``queries`` step by step and breaks each final candidate's score down into the parts each
    step added. Its top ``k`` per query (rows with a ``rank``) equals ``pipeline.predict``.

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
        ``risk_predicted``, ``cosine`` (the first-stage query-tool cosine), and where the
        pipeline has the step: ``f_rel``, ``p_rel`` (calibrated relevance), ``f_risk``,
        ``risk_penalty`` (``risk_weight`` times the penalty that is subtracted), ``smoothing``
        (the graph smoothing's change of the score), and ``score`` (the last step's score).

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

    steps = getattr(pipeline, "steps", None)
    if not steps or not isinstance(steps[0][1], FrozenEmbedder):
        raise ValueError(MSG_NOT_A_PIPELINE.format(type=type(pipeline).__name__))
    steps = [step for _, step in steps if step not in (None, "passthrough")]
    queries = list(queries)
    batches = [steps[0].transform(queries)]
    for step in steps[1:-1]:
        batches.append(step.transform(batches[-1]))
    last, scan = steps[-1], None
    if isinstance(last, RuleFilter):
        # The filter's scan gives both its output (as transform builds it) and its reasons.
        scan = last._scan(batches[-1])
        batches.append(batches[-1].take(scan[2], scan[3]))
    elif last is not steps[0]:
        batches.append(last.transform(batches[-1]))
    out = batches[-1]
    k = getattr(last, "k", 5) if k is None else int(k)
    reg = out.registry
    ranked = out.ranked_indices()  # -1 marks an empty slot of a shortened list
    cand = np.where(ranked < 0, out.candidates, ranked)
    n_q, m = cand.shape
    cols = {
        "query": np.repeat(queries, m),
        "tool": reg.names[cand].ravel(),
        "rank": pd.arrays.IntegerArray(np.tile(np.arange(1, m + 1), n_q),
                                       ~((ranked >= 0) & (np.arange(m) < k)).ravel()),
    }
    risk = reg.risk[cand].ravel()
    cols["risk"] = pd.arrays.IntegerArray(risk, risk == UNKNOWN_RISK)
    cols["risk_predicted"] = reg.risk_predicted[cand].ravel()
    cols["cosine"] = np.einsum("qd,qmd->qm", out.query_embeddings,
                               out.tool_embeddings[cand]).ravel()
    probe = RankingBatch(reg, out.query_embeddings, out.tool_embeddings, cand,
                         np.zeros(cand.shape, np.float32), encoder=out.encoder)
    for step, before, after in zip(steps[1:], batches[:-1], batches[1:], strict=True):
        if isinstance(step, RiskAwareReranker):
            cols["f_rel"] = step.relevance_scores(probe).ravel()
            cols["p_rel"] = step.relevance_proba(probe).ravel()
            cols["f_risk"] = step.tool_risk_[cand].ravel()
            cols["risk_penalty"] = (step.risk_weight * step.risk_penalty_[cand]).ravel()
        elif isinstance(step, GraphSmoother):
            cols["smoothing"] = (_at(after, cand) - _at(before, cand)).ravel()
    cols["score"] = _at(out, cand).ravel()
    if isinstance(last, RuleFilter):
        reasons = _filter_reasons(last, batches[-2], out, scan)
    else:
        name = type(last).__name__
        reasons = [[f"ranked {j + 1} by {name}" if j < k else f"below the top {k}"
                    for j in range(m)] for _ in range(n_q)]
    cols["reason"] = np.array(reasons, dtype=object).ravel()
    frame = pd.DataFrame(cols)
    # A deferred tool still fills the list when fewer than k pass: say both.
    filled = frame["rank"].notna() & frame["reason"].str.startswith("deferred: ")
    frame.loc[filled, "reason"] = "kept to fill the list, though " + frame.loc[filled, "reason"]
    front = ["query", "tool", "rank", "reason"]
    return frame[front + [c for c in frame.columns if c not in front]]
