"""pretrained_pipeline: a fitted pipeline for a catalogue that has no training queries."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from ._batch import RankingBatch
from ._embedding import FrozenEmbedder
from ._encoder import DEFAULT_BACKEND, DEFAULT_MAX_SEQ_LENGTH
from ._filter import RuleFilter
from ._gold_model import _GoldModel
from ._graph import SERVER_EDGE, GraphSmoother
from ._need import NeedAwareFilter
from ._persist import read_weights
from ._retriever import DenseRetriever
from ._tool_text import tool_texts

__all__ = ["pretrained_pipeline"]

#: The packaged weights of :func:`pretrained_pipeline`, an ``.npz`` read without pickle.
PRETRAINED_FILE = "pretrained_pipeline.npz"

#: Format version of the ``.npz`` written by :func:`save_pretrained`.
_FORMAT = 1

MSG_BAD_FILE = "{path} is not a skriskrank pretrained-pipeline file: {error}."

#: First-stage candidates, the weight of a query's best sentence (``FrozenEmbedder``'s
#: ``sentence_weight``), the strength of the server graph's smoothing and the tools' text
#: (``FrozenEmbedder``'s ``tool_text``): chosen on the development split of the real-MCP tasks
#: (``benchmarks/results/real_mcp.md``).
N_CANDIDATES, SENTENCE_WEIGHT, ALPHA, TOOL_TEXT = 100, 0.7, 2 / 3, "brief"


def catalogue_texts(registry) -> list[str]:
    """Every text ``serve --tools`` and the gateway encode for a catalogue, once each.

    The whole texts the auditor grades, then the brief ones the pretrained pipeline ranks by.
    """
    return list(dict.fromkeys([*registry.texts, *tool_texts(registry, TOOL_TEXT)]))


def save_pretrained(path, relevance_model: _GoldModel) -> None:
    """Write the need model of :func:`pretrained_pipeline` to an ``.npz`` (no pickle).

    ``relevance_model`` is a fitted :class:`~skriskrank._gold_model._GoldModel` without the
    query-neighbour feature (a new catalogue has no training queries to read it from); its
    scaling is folded into the logistic regression's weights, the three numbers stored.
    """
    if relevance_model.knn or relevance_model.model_ is None:
        raise ValueError("the relevance model must be fitted, without the neighbour feature")
    scaler, logreg = relevance_model.model_[0], relevance_model.model_[-1]
    coef = logreg.coef_ / scaler.scale_
    intercept = logreg.intercept_ - coef @ scaler.mean_
    config = {"format": _FORMAT, "fit_rank": int(relevance_model.fit_rank)}
    np.savez_compressed(path, coef=coef, intercept=intercept,
                        config=np.array(json.dumps(config, sort_keys=True)))


def _load(path) -> _GoldModel:
    """The need model of a weights file, checked."""
    config, arrays = read_weights(path, ("coef", "intercept"), version=_FORMAT,
                                  message=MSG_BAD_FILE, fields=("fit_rank",))
    try:
        coef, intercept = (np.asarray(a, dtype=np.float64) for a in arrays)
        if (coef.shape != (1, 2) or intercept.shape != (1,)
                or not (np.isfinite(coef).all() and np.isfinite(intercept).all())):
            raise ValueError("the need model's weights have the wrong shape or values")
        fit_rank = int(config["fit_rank"])
        if fit_rank < 1:
            raise ValueError(f"fit_rank {fit_rank} < 1")
    except (TypeError, ValueError) as err:
        raise ValueError(MSG_BAD_FILE.format(path=path, error=err)) from None
    logreg = LogisticRegression()
    logreg.coef_, logreg.intercept_, logreg.n_features_in_ = coef, intercept, 2
    logreg.classes_ = np.array([False, True])
    gold = _GoldModel(False, fit_rank)
    gold.model_ = logreg
    return gold


def pretrained_pipeline(registry, *, k=5, need_aware=True, need_threshold=0.5, model=None,
                        cache=True, backend=DEFAULT_BACKEND, max_seq_length=DEFAULT_MAX_SEQ_LENGTH,
                        tool_text=TOOL_TEXT, weights=None):
    """A fitted pipeline for any catalogue, with no training queries.

    Built from what carries over to catalogues nobody labelled queries for (measured on
    real MCP tasks, ``benchmarks/results/real_mcp.md``): the encoder reads each tool's brief
    text (:func:`brief_text`: its name's words, its description's first sentence, its
    parameters' names) and scores it by its match with the whole task and, weighted 0.7, its
    best match with any one sentence of it (:class:`FrozenEmbedder`'s ``sentence_weight``
    and ``tool_text``), the retriever keeps the best
    candidates, the graph of the tools that share a server (``ToolRegistry.servers``) lifts
    the tools of the servers the task is about (:class:`GraphSmoother`), and the filter
    decides what a list may expose.
    The need filter's relevance model was trained once on public tasks written against real
    MCP servers, which need several tools each (the data card, ``docs/data.md``); it ships
    inside the package and is read without pickle.
    Grade the tools without a level first with :meth:`RiskAuditor.grade`: unknown risk
    counts as high risk. Train a pipeline on a catalogue's own use with ``skriskrank fit
    --log``.

    Parameters
    ----------
    registry : ToolRegistry
        The catalogue, with levels declared or graded.
    k : int, default=5
        Length of the predicted lists (at most the catalogue's size).
    need_aware : bool, default=True
        End with :class:`NeedAwareFilter`, which admits a tool of risk >= 3 when the
        pretrained relevance model gives it a probability of being needed of at least 0.5;
        ``False`` ends with the paper's :class:`RuleFilter`.
    need_threshold : float in [0, 1], default=0.5
        The need-aware filter's operating point, as for :class:`NeedAwareFilter`: lower
        values admit more tools of risk >= 3, those a task needs and those it does not (the
        trade-off on real MCP tasks: ``benchmarks/results/real_mcp.md``); values above the
        probability the need model gives a list's first candidate admit none. Read only when
        ``need_aware``.
    model, cache, backend, max_seq_length
        As for :class:`FrozenEmbedder`.
    tool_text : {"brief", "full"}, default="brief"
        What the encoder reads of each tool, as for :class:`FrozenEmbedder`. The brief text
        ranks real MCP servers' tools better; ``"full"`` ranked UltraTool's better, whose
        synthetic snake_case names repeat their one-sentence descriptions
        (``benchmarks/results/real_mcp.md``).
    weights : str or path-like, default=None
        A weights file written like the packaged one; ``None`` reads the packaged
        ``skriskrank/data/pretrained_pipeline.npz``. Read only when ``need_aware``.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Fitted steps ``embed``, ``retrieve``, ``smooth`` and ``filter``.

    Raises
    ------
    ValueError
        If ``weights`` is not a pretrained-pipeline file.

    See Also
    --------
    build_pipeline : The paper's pipeline, to fit on labelled queries.

    Examples
    --------
    >>> from skriskrank import pretrained_pipeline
    >>> from skriskrank.datasets import load_demo
    >>> pipe = pretrained_pipeline(load_demo().registry, k=3)
    >>> [name for name, _ in pipe.steps]
    ['embed', 'retrieve', 'smooth', 'filter']
    >>> pipe.predict(["delete the old log files"]).shape
    (1, 3)
    """
    if need_aware:
        need = _load(weights or resources.files("skriskrank") / "data" / PRETRAINED_FILE)
    embed = FrozenEmbedder(registry, model=model, cache=cache, backend=backend,
                           max_seq_length=max_seq_length,
                           sentence_weight=SENTENCE_WEIGHT, tool_text=tool_text).fit(None)
    tools = embed.tool_embeddings_
    # A batch of no queries over the catalogue: what the steps fit on when nothing is learned
    # from queries (the retriever's index, the graph and the filter's per-tool rules).
    empty = RankingBatch.full_pool(registry, np.empty((0, tools.shape[1]), np.float32), tools,
                                   encoder=embed.model_id_, queries=())
    k = min(k, len(registry))
    retrieve = DenseRetriever(n_candidates=min(N_CANDIDATES, len(registry)), k=k).fit(empty)
    smooth = GraphSmoother(alpha=ALPHA, edge_types=(SERVER_EDGE,), k=k)
    last = NeedAwareFilter(k=k, need_threshold=need_threshold) if need_aware else RuleFilter(k=k)
    last._validate_params()  # _bind below skips fit, where the parameters are checked
    return Pipeline([("embed", embed), ("retrieve", retrieve), ("smooth", smooth._bind(empty, [])),
                     ("filter", last._bind(empty, need if need_aware else None))])
