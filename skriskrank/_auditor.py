"""RiskAuditor: grade tools nobody has labelled on the paper's five-level risk rubric."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from numbers import Integral, Real

import numpy as np
from scipy import sparse
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score
from sklearn.preprocessing import normalize
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted, validate_data

from ._axes import rubric_axes, states_destruction
from ._embedding import MSG_QUERY_BAD, check_queries
from ._encoder import BACKENDS, DEFAULT_BACKEND, DEFAULT_BATCH_SIZE, DEFAULT_MAX_SEQ_LENGTH, encode
from ._encoder import resolve_model as _resolve_model
from ._hints import _hint_permissions, describe_hints
from ._permissions import _CAMEL
from ._persist import read_weights
from ._poisoning import flagged, scan_tools
from ._registry import ToolRegistry
from ._rubric import LEVELS, RISKY_LEVEL, SEVERE_LEVEL, UNKNOWN_RISK, is_level

__all__ = ["DEFAULT_COVERAGE", "LEVELS", "PRETRAINED_FILE", "RiskAuditor"]


#: ``coverage`` of :meth:`RiskAuditor.predict` unless set: the smallest value whose
#: cross-validated recall of level >= 3 tools reached 0.90 on the pooled UltraTool and
#: Seal-Tools labels (``benchmarks/audit.py``, 5-fold CV on the training data only).
DEFAULT_COVERAGE = 0.94

#: The packaged weights of :meth:`RiskAuditor.pretrained`, an ``.npz`` read without pickle.
PRETRAINED_FILE = "risk_auditor.npz"

#: Format version of the ``.npz`` written by :meth:`RiskAuditor.save` (2: the rubric's axes).
_FORMAT = 2

#: Rounds of fitting on level bounds (the expectation-maximisation of :meth:`RiskAuditor.fit`).
_BOUNDS_ROUNDS = 2

#: Longest tool text graded, in characters (a tool's text holds its schema's parameters).
_MAX_TEXT = 100_000

MSG_X_TYPE = ("X must be a ToolRegistry or a sequence of tool texts (non-empty strings), "
              "got {type}.")
MSG_X_EMPTY = "X is empty: give at least one tool."
MSG_X_TEXT = MSG_QUERY_BAD  # raised by check_queries, which checks the texts
MSG_Y_LENGTH = "y must have one level per tool: {n} tools but {got} levels."
MSG_Y_LEVEL = "{tool}: level must be an integer in 1..5, got {value!r}."
MSG_Y_BOUNDS = ("{tool}: bounds must be two levels [lowest, highest] in 1..5 with lowest <= "
                "highest, got {value!r}.")
MSG_Y_SCORE = "score needs exact levels, but y holds level bounds."
MSG_Y_UNKNOWN = ("y is None and the registry has {n} tool(s) without a declared level (first: "
                 "{name!r}); pass y, or fit on a labelled registry.")
MSG_Y_MAPPING = "y maps tool names to levels, which needs X to be a ToolRegistry."
MSG_ONE_LEVEL = ("y holds {levels} as exact levels; fitting needs at least two (bounds alone "
                 "teach no level).")
MSG_BAD_FILE = "{path}: not a RiskAuditor weights file ({error})."
MSG_ENCODER = ("The weights in {path} were fitted on encoder {fitted!r}; this auditor uses "
               "{model!r}.")


def _raise_to(P: np.ndarray, rows: np.ndarray, level: int) -> None:
    """Move the probability of ``rows`` below ``level`` onto ``level``, in place."""
    P[rows, level - 1] += P[rows, :level - 1].sum(axis=1)
    P[rows, :level - 1] = 0.0


class RiskAuditor(ClassifierMixin, BaseEstimator):
    """Grade tools on the paper's five-level risk rubric, erring on the side of risk.

    A multinomial logistic regression over the frozen encoder's embedding of each tool's
    text (:attr:`ToolRegistry.texts`, parameters included), a TF-IDF of its words and word
    pairs (hashed, so nothing but weights is stored) and the rubric's axes read from its
    name and text (the action, its reversibility and scope, the sensitivity of what it
    touches). It learns from exact levels and from bounds on levels (the rubric's reading
    of the hints of real tools, :func:`hint_bounds`). ``predict`` is conservative:
    it returns the lowest level ``L`` whose predicted probability ``P(level <= L)`` reaches
    ``coverage``, so that when the model is unsure the error falls on the higher level.

    A tool whose name says it destroys something (``delete_disk``) is at least level 3, and
    so is one its author marks destructive; declared hints lower a level only where they are
    trusted (:meth:`predict_proba`, :ref:`audit`).

    Parameters
    ----------
    coverage : float in (0, 1], default=DEFAULT_COVERAGE
        The conservative rule's probability: ``predict`` gives the lowest level ``L`` with
        ``P(level <= L) >= coverage``. ``0.5`` gives the median level; higher values give
        higher levels (never lower ones).
    C : float, default=3.0
        Inverse L2 regularisation of the logistic regression.
    lexical_weight : float, default=1.0
        Weight of the L2-normalised TF-IDF block beside the (unit-norm) embedding; ``0``
        uses the embedding alone.
    axes_weight : float, default=1.0
        Weight of the L2-normalised block of the rubric's axes (``0`` leaves them out).
    bounds_weight : float, default=10.0
        Weight in the loss of a tool known only within bounds, against one of weight 1
        with an exact level.
    n_lexical_features : int, default=32768
        Hash buckets of the TF-IDF block.
    min_df : int, default=2
        Words and word pairs in fewer training tools than this are ignored.
    class_weight : {"sqrt_balanced", "balanced"}, dict or None, default="sqrt_balanced"
        Weights of the levels in the loss. ``"balanced"`` is scikit-learn's
        ``n_tools / (n_levels * count)``; ``"sqrt_balanced"`` its square root, which lifts the
        rare high levels (1 in 60 of the training tools is at level 4 or 5) without letting
        five level-5 tools dominate; a dict maps levels to weights.
    review_margin : float, default=0.25
        ``audit`` flags a tool as unsure when ``P(level >= 3)`` lies within this margin of
        0.5.
    model : str or None, default=None
        The sentence-transformers encoder, as for :class:`FrozenEmbedder`; ``None`` is the
        packaged all-MiniLM-L6-v2 (the pipeline's default), whose embeddings are cached per
        process and shared with the pipeline.
    batch_size : int, default=16
        Texts per encoder forward pass, as for :class:`FrozenEmbedder`.
    cache : bool or str, default=True
        Embedding cache, as for :class:`FrozenEmbedder`: in memory, plus on disk when a
        directory is given.
    backend : {"torch", "onnx", "onnx-int8", "torch-bf16"}, default="onnx"
        What runs the encoder, as for :class:`FrozenEmbedder`.
    max_seq_length : int or None, default=128
        Word pieces of a text the encoder reads, as for :class:`FrozenEmbedder`.
    show_progress_bar : bool or None, default=None
        A tqdm progress bar while encoding; ``None`` shows one for more than 1,000 texts.

    Attributes
    ----------
    classes_ : ndarray of int, shape (5,)
        ``[1, 2, 3, 4, 5]``, the columns of ``predict_proba``.
    coef_ : ndarray of float32, shape (5, n_features)
        Weights per level over ``[embedding, TF-IDF, axes]``; rows of levels absent from the
        training labels are zero (their probability is zero).
    intercept_ : ndarray of float32, shape (5,)
        Intercepts per level (``-inf`` for levels absent from the training labels).
    idf_ : ndarray of float32, shape (n_lexical_features,)
        Inverse document frequencies of the hash buckets (zero below ``min_df``).
    embedding_dim_ : int
        Dimension of the encoder's embeddings.
    encoder_ : str
        Identity of the encoder the weights were fitted on.

    See Also
    --------
    load_tools : Reads MCP, OpenAI and Anthropic tool lists.
    ToolRegistry.with_risk : Gives a registry the auditor's levels.

    Examples
    --------
    >>> from skriskrank import RiskAuditor, ToolRegistry
    >>> reg = ToolRegistry.from_records([
    ...     {"name": "get_weather", "description": "Look up the weather forecast", "risk": 1},
    ...     {"name": "read_file", "description": "Read a text file", "risk": 1},
    ...     {"name": "send_email", "description": "Send an email to a contact", "risk": 3},
    ...     {"name": "delete_database", "description": "Drop every table of a database",
    ...      "risk": 5},
    ... ])
    >>> auditor = RiskAuditor(coverage=0.5, min_df=1).fit(reg)
    >>> auditor.classes_.tolist()
    [1, 2, 3, 4, 5]
    >>> auditor.predict_proba(reg).shape
    (4, 5)
    >>> auditor.predict(["get_weather: Look up the weather forecast"]).tolist()
    [1]
    """

    _parameter_constraints: dict = {
        "coverage": [Interval(Real, 0, 1, closed="right")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "lexical_weight": [Interval(Real, 0, None, closed="left")],
        "axes_weight": [Interval(Real, 0, None, closed="left")],
        "bounds_weight": [Interval(Real, 0, None, closed="neither")],
        "n_lexical_features": [Interval(Integral, 1, None, closed="left")],
        "min_df": [Interval(Integral, 1, None, closed="left")],
        "class_weight": [StrOptions({"balanced", "sqrt_balanced"}), dict, None],
        "review_margin": [Interval(Real, 0, 0.5, closed="both")],
        "model": [str, os.PathLike, None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "cache": ["boolean", str, os.PathLike],
        "backend": [StrOptions(set(BACKENDS))],
        "max_seq_length": [Interval(Integral, 1, None, closed="left"), None],
        "show_progress_bar": ["boolean", None],
    }

    def __init__(self, *, coverage=DEFAULT_COVERAGE, C=3.0, lexical_weight=1.0, axes_weight=1.0,
                 bounds_weight=10.0, n_lexical_features=32768, min_df=2,
                 class_weight="sqrt_balanced", review_margin=0.25, model=None,
                 batch_size=DEFAULT_BATCH_SIZE, cache=True, backend=DEFAULT_BACKEND,
                 max_seq_length=DEFAULT_MAX_SEQ_LENGTH, show_progress_bar=None):
        self.coverage = coverage
        self.C = C
        self.lexical_weight = lexical_weight
        self.axes_weight = axes_weight
        self.bounds_weight = bounds_weight
        self.n_lexical_features = n_lexical_features
        self.min_df = min_df
        self.class_weight = class_weight
        self.review_margin = review_margin
        self.model = model
        self.batch_size = batch_size
        self.cache = cache
        self.backend = backend
        self.max_seq_length = max_seq_length
        self.show_progress_bar = show_progress_bar

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.poor_score = True
        return tags

    # -- inputs -------------------------------------------------------------------------------
    @staticmethod
    def _texts(X) -> tuple[list[str], list[str]]:
        """``(names, texts)``; a text's name is what precedes its first colon."""
        if isinstance(X, ToolRegistry):
            return list(X.names), X.texts
        texts = check_queries(X, type_msg=MSG_X_TYPE, empty_msg=MSG_X_EMPTY, limit=_MAX_TEXT)
        return [t.split(":", 1)[0] for t in texts], texts

    @staticmethod
    def _labels(X, y, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(lowest, highest)`` level of each tool: equal for an exact level."""
        names = X.names if isinstance(X, ToolRegistry) else None
        if y is None and names is not None:
            unknown = np.flatnonzero(~X.risk_known)
            if unknown.size:
                raise ValueError(MSG_Y_UNKNOWN.format(n=unknown.size, name=names[unknown[0]]))
            y = X.risk
        if y is None:
            raise ValueError(MSG_Y_LENGTH.format(n=n, got=0))
        if isinstance(y, Mapping):
            # Levels by tool name: in registry order (a tool left out is an error below).
            if names is None:
                raise ValueError(MSG_Y_MAPPING)
            y = [y.get(name) for name in names]
        # A list stays a list, so that ragged bounds reach the check below.
        y = list(y) if isinstance(y, (list, tuple)) else list(np.asarray(y, dtype=object))
        if len(y) != n:
            raise ValueError(MSG_Y_LENGTH.format(n=n, got=len(y)))
        bounds = np.zeros((n, 2), dtype=np.int64)
        for i, v in enumerate(y):
            tool = f"tool {names[i]!r}" if names is not None else f"y[{i}]"
            if np.ndim(v) == 1 and len(v) == 2 and all(map(is_level, v)) and v[0] <= v[1]:
                bounds[i] = v
            elif np.ndim(v):
                raise ValueError(MSG_Y_BOUNDS.format(tool=tool, value=v))
            elif is_level(v):
                bounds[i] = v, v
            else:
                raise ValueError(MSG_Y_LEVEL.format(tool=tool, value=v))
        return bounds[:, 0], bounds[:, 1]

    def _embed(self, texts: list[str]) -> tuple[np.ndarray, str]:
        # The pipeline's own encoder and process cache: a registry the auditor has graded is
        # not encoded again when the pipeline fits on it (same texts, same model).
        return encode(texts, model=self.model, batch_size=self.batch_size, cache=self.cache,
                      show_progress_bar=self.show_progress_bar, backend=self.backend,
                      max_seq_length=self.max_seq_length)

    def _lexical(self, texts: list[str]) -> sparse.csr_matrix:
        # Hashing needs no vocabulary to store, so the weights file stays small and pickle-free.
        hasher = HashingVectorizer(
            n_features=self.n_lexical_features, ngram_range=(1, 2), alternate_sign=False,
            norm=None, token_pattern=r"(?u)\b\w+\b",
            preprocessor=lambda text: _CAMEL.sub(" ", text).lower(),  # deleteFile: delete file
        )
        counts = hasher.transform(texts).tocsr()
        counts.data = np.log1p(counts.data)  # sublinear term frequency
        return counts

    def _features(self, names, texts, E=None) -> sparse.csr_matrix:
        if E is None:
            E, _ = self._embed(texts)
        T = normalize(self._lexical(texts).multiply(self.idf_).tocsr())
        A = normalize(rubric_axes(names, texts))
        return sparse.hstack([sparse.csr_matrix(E.astype(np.float64)), self.lexical_weight * T,
                              sparse.csr_matrix(self.axes_weight * A)], format="csr")

    # -- fitting ------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the auditor on tools with levels, or with bounds on their levels.

        A tool known only within bounds (``[3, 5]`` for a tool its author marks destructive,
        :func:`hint_bounds`) teaches the model that its level lies there, not which one: the
        fit is repeated, each time weighting each level within the bounds by the previous
        fit's probability of it (expectation-maximisation), so the exact levels decide
        between them.

        Parameters
        ----------
        X : ToolRegistry or sequence of str
            The tools: a registry (its :attr:`~ToolRegistry.texts`) or tool texts such as
            ``"name: description"``.
        y : array-like of shape (n_tools,) or (n_tools, 2), mapping of str, or None
            Levels 1..5, or ``[lowest, highest]`` bounds on levels (equal for an exact level,
            ``[1, 5]`` for a tool that teaches nothing), in order or by tool name (with a
            registry). ``None`` takes the registry's levels (every tool needs one).

        Returns
        -------
        self : RiskAuditor
        """
        validate_data(self, X, skip_check_array=True, ensure_2d=False)
        names, texts = self._texts(X)
        lo, hi = self._labels(X, y, len(texts))
        exact = lo == hi
        bounded = ~exact & ((lo > 1) | (hi < len(LEVELS)))
        if np.unique(lo[exact]).size < 2:
            raise ValueError(MSG_ONE_LEVEL.format(levels=np.unique(lo[exact]).tolist()))
        E, self.encoder_ = self._embed(texts)
        counts = self._lexical(texts)
        # A bucket seen in fewer than min_df tools carries noise.
        idf = TfidfTransformer().fit(counts).idf_
        idf[np.bincount(counts.indices, minlength=counts.shape[1]) < self.min_df] = 0.0
        self.idf_ = idf.astype(np.float32)
        F = self._features(names, texts, E)
        y = lo[exact]
        if isinstance(self.class_weight, str):
            weight = compute_sample_weight("balanced", y)
            weight = np.sqrt(weight) if self.class_weight == "sqrt_balanced" else weight
        else:
            weight = np.array([(self.class_weight or {}).get(int(v), 1.0) for v in y])
        # One row per level a bounded tool may have, weighted by the chance of that level:
        # uniform at first, then the previous fit's probabilities within the bounds.
        rows = np.flatnonzero(bounded).repeat(hi[bounded] - lo[bounded] + 1)
        levels = np.concatenate([np.arange(a, b + 1) for a, b in zip(lo[bounded], hi[bounded],
                                                                    strict=True)] or [[]])
        share = 1.0 / (hi[rows] - lo[rows] + 1)
        F_all = sparse.vstack([F[exact], F[rows]], format="csr")
        y_all = np.r_[y, levels].astype(np.int64)
        lr = LogisticRegression(C=self.C, max_iter=5000, tol=1e-6, warm_start=True)
        for _ in range(_BOUNDS_ROUNDS if rows.size else 1):
            lr.fit(F_all, y_all, sample_weight=np.r_[weight, self.bounds_weight * share])
            if rows.size:
                P = lr.predict_proba(F[rows])[np.arange(rows.size),
                                              np.searchsorted(lr.classes_, levels)]
                share = P / np.bincount(rows, weights=P, minlength=len(texts))[rows]
        self.coef_ = np.zeros((len(LEVELS), F.shape[1]), dtype=np.float32)
        self.intercept_ = np.full(len(LEVELS), -np.inf, dtype=np.float32)
        rows = np.searchsorted(LEVELS, lr.classes_)
        W, b = lr.coef_, lr.intercept_
        if len(rows) == 2:
            # Two levels: scikit-learn keeps one row, the logit of the higher level against
            # the lower; as softmax logits that is (0, w.x + b).
            W, b = np.vstack([np.zeros_like(W), W]), np.r_[0.0, b]
        self.coef_[rows], self.intercept_[rows] = W, b
        self.classes_ = np.array(LEVELS)
        self.embedding_dim_ = int(E.shape[1])
        return self

    # -- prediction ---------------------------------------------------------------------------
    def predict_proba(self, X) -> np.ndarray:
        """Probability of each level 1..5 per tool, after the hints' and the flags' bounds.

        A tool whose name says it destroys something or whose author marks it destructive has
        its probability below level 3 moved to level 3; a trusted read-only tool has its
        probability above level 3 moved to level 3; a tool flagged for poisoning
        (:func:`scan_tools`) has its probability below level 4 moved to level 4.

        Parameters
        ----------
        X : ToolRegistry or sequence of str
            The tools to grade.

        Returns
        -------
        proba : ndarray of float, shape (n_tools, 5)
            Columns in the order of ``classes_`` (levels 1..5).
        """
        return self._probabilities(X)[3]

    def _probabilities(self, X):
        """``(names, texts, the text's probabilities, those within the hints' bounds)``."""
        check_is_fitted(self)
        validate_data(self, X, skip_check_array=True, ensure_2d=False, reset=False)
        names, texts = self._texts(X)
        logits = self._features(names, texts) @ self.coef_.T.astype(np.float64)
        text_P = softmax(logits + self.intercept_.astype(np.float64), axis=1)
        _raise_to(text_P, states_destruction(names), RISKY_LEVEL)
        P = text_P.copy()
        if isinstance(X, ToolRegistry):
            poisoned = flagged(X)
            low = X.declares_destructive & ~poisoned
            read_only = np.array([h.get("readOnlyHint") is True for h in X.declared_hints],
                                 dtype=bool)
            high = ~low & ~poisoned & X.hints_trusted & read_only
            _raise_to(P, low, RISKY_LEVEL)
            _raise_to(P, poisoned, SEVERE_LEVEL)
            P[high, RISKY_LEVEL - 1] += P[high, RISKY_LEVEL:].sum(axis=1)
            P[high, RISKY_LEVEL:] = 0.0
        return names, texts, text_P, P

    def _quantile(self, P: np.ndarray, coverage: float) -> np.ndarray:
        cum = np.cumsum(P, axis=1)
        # A float tolerance, so coverage=1.0 is met by a cumulative sum of 0.9999999.
        return self.classes_[np.argmax(cum >= coverage - 1e-9, axis=1)]

    def predict(self, X) -> np.ndarray:
        """The conservative level of each tool.

        Parameters
        ----------
        X : ToolRegistry or sequence of str
            The tools to grade.

        Returns
        -------
        levels : ndarray of int, shape (n_tools,)
            The lowest level ``L`` with ``P(level <= L) >= coverage`` (of
            :meth:`predict_proba`, so the hints' bounds hold).
        """
        return self._quantile(self.predict_proba(X), self.coverage)

    def score(self, X, y=None, sample_weight=None) -> float:
        """Quadratically weighted kappa of :meth:`predict` against ``y``.

        Parameters
        ----------
        X : ToolRegistry or sequence of str
            The tools.
        y : array-like of int, default=None
            True levels; ``None`` takes the registry's declared levels.
        sample_weight : array-like, default=None
            Per-tool weights.

        Returns
        -------
        qwk : float
        """
        y, high = self._labels(X, y, len(self._texts(X)[1]))
        if (y != high).any():
            raise ValueError(MSG_Y_SCORE)
        return float(cohen_kappa_score(y, self.predict(X), weights="quadratic",
                                       labels=list(LEVELS), sample_weight=sample_weight))

    # -- persistence --------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the fitted weights to an ``.npz`` file that loads without pickle.

        Parameters
        ----------
        path : str or path-like
            The file to write (numpy's compressed ``.npz``).
        """
        check_is_fitted(self)
        config = {
            "format": _FORMAT, "encoder": self.encoder_, "embedding_dim": self.embedding_dim_,
            "params": {k: (os.fspath(v) if isinstance(v, os.PathLike) else v)
                       for k, v in self.get_params().items()},
        }
        np.savez_compressed(path, coef=self.coef_, intercept=self.intercept_, idf=self.idf_,
                            config=np.array(json.dumps(config, sort_keys=True)))

    @classmethod
    def load(cls, path, **params) -> RiskAuditor:
        """An auditor with the weights of an ``.npz`` written by :meth:`save`.

        The file is read with ``numpy.load(allow_pickle=False)``: it holds arrays and a JSON
        configuration, never code.

        Parameters
        ----------
        path : str or path-like
            The weights file.
        **params
            Parameters to override, for example ``coverage``; those that shape the features
            (``lexical_weight``, ``n_lexical_features``) keep the saved values.

        Returns
        -------
        auditor : RiskAuditor
            Fitted.

        Raises
        ------
        ValueError
            If the file is not a RiskAuditor weights file, an override is not a valid
            parameter value, or ``model`` names an encoder other than the one the weights
            were fitted on.
        """
        config, (coef, intercept, idf) = read_weights(
            path, ("coef", "intercept", "idf"), version=_FORMAT, message=MSG_BAD_FILE,
            fields=("params", "encoder", "embedding_dim"))
        saved = config["params"]
        if not isinstance(saved, dict) or not set(saved) <= set(cls._parameter_constraints):
            raise ValueError(MSG_BAD_FILE.format(path=path, error="parameters RiskAuditor "
                                                 "does not take"))
        # Where the trainer cached embeddings, and what ran its encoder, are this caller's choice.
        saved.pop("cache", None)
        saved.pop("backend", None)
        # A file from before max_seq_length was fitted on what the model reads by itself.
        saved.setdefault("max_seq_length", None)
        if isinstance(saved.get("class_weight"), dict):  # JSON made the level keys strings
            saved["class_weight"] = {int(k): v for k, v in saved["class_weight"].items()}
        for fixed in ("lexical_weight", "axes_weight", "bounds_weight", "n_lexical_features",
                      "min_df", "C", "class_weight"):
            params.pop(fixed, None)
        auditor = cls(**{**saved, **params})
        # It comes back fitted, so fit's validation never runs: check the overrides here.
        auditor._validate_params()
        model_id = _resolve_model(auditor.model)[0]
        if model_id != config["encoder"]:
            raise ValueError(MSG_ENCODER.format(path=path, fitted=config["encoder"],
                                                model=model_id))
        auditor.coef_, auditor.intercept_, auditor.idf_ = coef, intercept, idf
        auditor.encoder_ = config["encoder"]
        auditor.embedding_dim_ = int(config["embedding_dim"])
        auditor.classes_ = np.array(LEVELS)
        return auditor

    @classmethod
    def pretrained(cls, **params) -> RiskAuditor:
        """The auditor fitted on labelled benchmark tools and on real MCP tools' hints.

        The data card (``docs/data.md``) lists the tools it learns from, their sources and
        licences, and how the weights were made. They ship inside the package
        (``skriskrank/data/risk_auditor.npz``, read without pickle), for the packaged
        all-MiniLM-L6-v2 encoder; neither the data nor a network are needed.

        Parameters
        ----------
        **params
            Parameters to override, for example ``coverage=0.5`` or
            ``show_progress_bar=True``.

        Returns
        -------
        auditor : RiskAuditor
            Fitted.

        Examples
        --------
        >>> from skriskrank import RiskAuditor
        >>> auditor = RiskAuditor.pretrained()
        >>> auditor.predict(["run_shell: Run any shell command on the host",
        ...                  "get_weather: Look up the weather forecast for a city"]).tolist()
        [5, 1]
        """
        ref = resources.files("skriskrank") / "data" / PRETRAINED_FILE
        with resources.as_file(ref) as path:
            return cls.load(path, **params)

    # -- auditing -----------------------------------------------------------------------------
    def grade(self, registry: ToolRegistry, *, scan: bool = True) -> ToolRegistry:
        """The registry with a level for every tool that has none, from :meth:`predict`.

        Declared levels stay as they are; the new ones are marked predicted
        (:attr:`ToolRegistry.risk_source`), so a person can tell them apart.

        Parameters
        ----------
        registry : ToolRegistry
            The catalogue, for example from :func:`load_tools`.
        scan : bool, default=True
            Add what :func:`scan_tools` finds to the registry's flags first. Off, the
            registry's own flags are used as they are (the gateway scans with each tool's
            server and lifts the flags a person accepted).

        Returns
        -------
        registry : ToolRegistry
            The same registry when every tool has a level and nothing is flagged; otherwise
            a copy with what :func:`scan_tools` found added to the flags and the unknown
            levels graded (conservatively, with this auditor's ``coverage``; a flagged tool
            at least level 4).

        Examples
        --------
        >>> from skriskrank import RiskAuditor, load_tools
        >>> reg = load_tools({"tools": [{"name": "wipe_disk", "description": "Erase a disk"},
        ...                             {"name": "get_time", "description": "Current time"}]},
        ...                  risk={"get_time": 1})
        >>> graded = RiskAuditor.pretrained().grade(reg)
        >>> graded.risk_source.tolist(), bool(graded.risk[0] >= 3)
        (['predicted', 'declared'], True)
        """
        findings = scan_tools(registry) if scan else ()
        registry = registry.with_flags(findings) if any(findings) else registry
        unknown = ~registry.risk_known
        if not unknown.any():
            return registry
        levels = self.predict(registry)
        return registry.with_risk(dict(zip(registry.names[unknown], levels[unknown].tolist(),
                                           strict=True)))

    def audit(self, X, *, labels=None):
        """One row per tool: what the auditor predicts, why, and whether a person should look.

        Parameters
        ----------
        X : ToolRegistry or sequence of str
            The tools. A registry's declared levels, hints and permissions are shown.
        labels : mapping of str to int, or array-like of int, default=None
            Declared levels to compare with, by tool name or in order; ``None`` takes the
            registry's declared (not predicted) levels.

        Returns
        -------
        report : pandas.DataFrame
            Columns ``name``, ``declared`` (nullable ``Int64``), ``predicted``, ``median``
            (the ``coverage=0.5`` level), ``p_risky`` (``P(level >= 3)``), ``hints`` (the
            declared hints in words, ``"read-only, closed-world"``), ``permissions``,
            ``flags`` (what :func:`scan_tools` found, ``"injection;shadowing"``),
            ``needs_review`` (bool) and ``reason`` (why, ``""`` when not). A tool needs
            review when it is flagged (and is then graded at least level 4), when the model
            is unsure (``p_risky`` within ``review_margin`` of 0.5), when it disagrees with a
            declared level by two or more levels, or when a hint contradicts the text (a
            read-only hint on a tool whose text deletes or writes, or a non-destructive hint
            on a tool the text grades at level 4 or 5). A sequence of texts is not scanned.
        """
        import pandas as pd

        reg = X if isinstance(X, ToolRegistry) else None
        findings = scan_tools(reg) if reg is not None else None
        if findings is not None and any(findings):
            X = reg = reg.with_flags(findings)
        names, texts, text_P, P = self._probabilities(X)
        n = len(texts)
        findings = findings or [{}] * n  # a sequence of texts is not scanned
        predicted = self._quantile(P, self.coverage)
        median = self._quantile(P, 0.5)
        p_risky = np.clip(P[:, RISKY_LEVEL - 1:].sum(axis=1), 0.0, 1.0)  # 1 + 1e-16 is 1
        hints = reg.declared_hints if reg is not None else [{}] * n  # a title is ignored
        perms = reg.permissions if reg is not None else [frozenset()] * n
        declared = [None] * n
        if hasattr(labels, "items"):
            declared = [labels.get(nm) for nm in names]
        elif labels is not None:
            declared = list(labels)
            if len(declared) != n:
                raise ValueError(MSG_Y_LENGTH.format(n=n, got=len(declared)))
        elif reg is not None:  # declared levels only: a predicted one reads as unknown
            declared = np.where(reg.risk_predicted, UNKNOWN_RISK, reg.risk).tolist()
        declared = [None if d is None or d == UNKNOWN_RISK else d for d in declared]
        for i, d in enumerate(declared):
            if d is not None and not is_level(d):
                raise ValueError(MSG_Y_LEVEL.format(tool=f"tool {names[i]!r}", value=d))
        text_level = self._quantile(text_P, 0.5)
        text_risky = text_P[:, RISKY_LEVEL - 1:].sum(axis=1)
        reasons = []
        for i, (tool_hints, tool_perms) in enumerate(zip(hints, perms, strict=True)):
            why = [f"{flag}: {found}" for flag, found in findings[i].items()]
            if abs(p_risky[i] - 0.5) < self.review_margin:
                why.append(f"unsure: P(level >= 3) = {p_risky[i]:.2f}")
            if declared[i] is not None and abs(int(declared[i]) - int(median[i])) >= 2:
                why.append(f"declared level {declared[i]} but the text reads as level {median[i]}")
            # The text's own signals: keyword permissions (not those the hints added) and the
            # model's reading of the text before the hints bounded it.
            writes = ("file_write" in (tool_perms - _hint_permissions(tool_hints))
                      or text_risky[i] >= 0.5)
            if (tool_hints.get("readOnlyHint") is True and writes
                    and "hint_mismatch" not in findings[i]):
                why.append("marked read-only but its text writes, deletes or is risky")
            if tool_hints.get("destructiveHint") is False and not tool_hints.get("readOnlyHint") \
                    and text_level[i] >= SEVERE_LEVEL:
                why.append(f"marked non-destructive but its text reads as level {text_level[i]}")
            reasons.append("; ".join(why))
        return pd.DataFrame({
            "name": names, "declared": pd.array(declared, dtype="Int64"), "predicted": predicted,
            "median": median, "p_risky": p_risky, "hints": [describe_hints(h) for h in hints],
            "permissions": [";".join(sorted(p)) for p in perms],
            "flags": [";".join(sorted(f)) for f in findings],
            "needs_review": [bool(r) for r in reasons], "reason": reasons})
