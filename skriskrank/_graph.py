"""The ToolGraph and the score smoother that propagates scores along it.

The graph is built from a sparse incidence product and row blocks of similarities, never an
``(n_tools, n_tools)`` dense matrix, so it scales to registries of 100k tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import RankingStepMixin, check_relevant
from ._fast import spread
from ._rubric import RISKY_LEVEL

__all__ = ["EDGE_TYPES", "GraphSmoother", "build_tool_graph"]

#: The paper's four edge types, in the order of the terms of the raw edge weight.
EDGE_TYPES = ("cooccurrence", "semantic", "permission", "risk")

#: Beyond the paper: tools of one server (``ToolRegistry.servers``), used together.
SERVER_EDGE = "server"

#: The paper's weights of the four terms of the raw edge weight, and of the server term.
_W_COOC, _W_SEM, _W_PERM, _W_RISK, _W_SERVER = 0.4, 0.3, 0.15, 0.15, 0.3

#: Elements (not bytes) of the largest temporary block: 2**24 float32 values are 64 MiB.
_BLOCK_ELEMENTS = 2**24

MSG_UNKNOWN_EDGE_TYPE = "Unknown edge type {name!r} in edge_types; expected a subset of {allowed}."
MSG_EDGE_TYPES_STR = ("edge_types must be a tuple or list of edge type names, not the string "
                      "{name!r}; write ({name!r},) for one type.")
MSG_EMBEDDINGS_SHAPE = ("tool_embeddings must be a 2-d array with one row per registry tool "
                        "({n_tools}); got shape {shape}.")
MSG_BAD_RELEVANT = ("relevant_indices[{i}] must hold registry indices in [0, {n_tools}); got "
                    "{value!r}.")
MSG_BLOCK_SIZE = "block_size must be a positive integer or None, got {value!r}."


def _incidence(relevant_indices, n_tools: int) -> sp.csr_array:
    """The (n_queries, n_tools) 0/1 matrix of the training queries' gold tools."""
    rows = []
    for i, rel in enumerate(relevant_indices):
        rel = np.asarray(rel)
        if (rel.ndim != 1 or rel.size == 0 or not np.issubdtype(rel.dtype, np.integer)
                or rel.min() < 0 or rel.max() >= n_tools):
            raise ValueError(MSG_BAD_RELEVANT.format(i=i, n_tools=n_tools, value=rel.tolist()))
        # A tool listed twice in one gold set still co-occurs once per query.
        rows.append(np.unique(rel).astype(np.int64))
    indptr = np.cumsum([0, *map(len, rows)])
    indices = np.concatenate([np.zeros(0, np.int64), *rows])
    return sp.csr_array((np.ones(len(indices), dtype=np.int64), indices, indptr),
                        shape=(len(rows), n_tools))


def _upper_pairs_blockwise(F: np.ndarray, keep, block_size):
    """``(i, j, F[i] @ F[j])`` for the pairs ``i < j`` that pass ``keep``, one band at a time."""
    n = len(F)
    if block_size is None:
        block_size = max(1, min(2048, _BLOCK_ELEMENTS // max(n, 1)))
    out_i, out_j, out_v = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, F.dtype)]
    for s in range(0, n, block_size):
        block = F[s:s + block_size] @ F[s:].T
        r, c = np.nonzero(keep(block))
        upper = c > r
        r, c = r[upper], c[upper]
        out_i.append(r + s)
        out_j.append(c + s)
        out_v.append(block[r, c])
    return np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_v)


def build_tool_graph(registry, tool_embeddings, relevant_indices, *,
                     edge_types: Sequence[str] = EDGE_TYPES, min_cooccurrence: int = 2,
                     semantic_threshold: float = 0.65, permission_edges: str = "all",
                     block_size: int | None = None) -> tuple[sp.csr_array, dict[str, int]]:
    """Build the paper's normalized ToolGraph over a registry.

    The raw weight of a pair of tools ``i != j`` is the sum of the enabled terms

    - ``0.4 * c_ij / c_max`` if the two tools are gold together in at least
      ``min_cooccurrence`` training queries (``c_max`` is the largest co-occurrence count);
    - ``0.3 * cos(d_i, d_j)`` if the cosine of their embeddings exceeds
      ``semantic_threshold``;
    - ``0.15 * m_ij / 5`` if they share ``m_ij >= 1`` of the five permission categories;
    - ``0.15`` if both have risk level 3 or above (unknown risk counts as risky) and they are
      gold together in at least one training query;
    - beyond the paper, with ``"server"`` among the edge types: ``0.3`` if both come from one
      server (``ToolRegistry.servers``), whose tools tasks use together.

    A pair with any non-zero term is an edge. Weights are divided by the largest one and the
    matrix is normalized symmetrically, ``A_hat = D^-1/2 A D^-1/2``; isolated tools keep an
    all-zero row.

    Parameters
    ----------
    registry : ToolRegistry
        The catalogue; its risk levels and permission matrix give the last two terms.
    tool_embeddings : ndarray of shape (n_tools, dim)
        One embedding per registry tool; rows are L2-normalized here.
    relevant_indices : sequence of array-like of int
        Registry indices of each training query's gold tools.
    edge_types : sequence of str, default=("cooccurrence", "semantic", "permission", "risk")
        The terms that contribute; a subset of :data:`EDGE_TYPES` and ``"server"``.
    min_cooccurrence : int, default=2
        Fewest training queries a pair must share to get the co-occurrence term.
    semantic_threshold : float, default=0.65
        Cosine a pair must exceed to get the semantic term. A non-positive cosine never
        makes an edge (the normalization needs positive weights): a negative threshold acts
        as 0.
    permission_edges : {"all", "linked"}, default="all"
        ``"all"`` is the paper's definition: every pair sharing a permission category is an
        edge, quadratic in the number of tools holding a common category. ``"linked"`` (a
        deviation for large registries) adds the permission term only to pairs that have
        another enabled term: it re-weights edges but creates none.
    block_size : int, default=None
        Rows of the similarity and permission products held at once (memory, not result);
        ``None`` picks a block of at most ``2**24`` elements.

    Returns
    -------
    graph : scipy.sparse.csr_array of float64, shape (n_tools, n_tools)
        The symmetric normalized adjacency ``A_hat`` with sorted indices and a zero diagonal.
    edge_counts : dict of str to int
        For each of the four edge types (and ``"server"`` when asked for), the number of
        (unordered) pairs where its term is non-zero; 0 for a disabled type.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import ToolRegistry, build_tool_graph
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": n, "description": n + " tool", "risk": r}
    ...      for n, r in [("a", 1), ("b", 3), ("c", 4)]])
    >>> graph, counts = build_tool_graph(
    ...     reg, np.eye(3), [[0, 1], [0, 1], [1, 2]], edge_types=("cooccurrence", "risk"))
    >>> counts
    {'cooccurrence': 1, 'semantic': 0, 'permission': 0, 'risk': 1}
    >>> graph.toarray().round(3)
    array([[0.   , 0.853, 0.   ],
           [0.853, 0.   , 0.522],
           [0.   , 0.522, 0.   ]])
    """
    if isinstance(edge_types, str):  # a bare string would iterate as its characters
        raise ValueError(MSG_EDGE_TYPES_STR.format(name=edge_types))
    edge_types = tuple(edge_types)
    known = (*EDGE_TYPES, SERVER_EDGE)
    for name in edge_types:
        if name not in known:
            raise ValueError(MSG_UNKNOWN_EDGE_TYPE.format(name=name, allowed=list(known)))
    bad_type = isinstance(block_size, (bool, np.bool_)) or not isinstance(block_size, Integral)
    if block_size is not None and (bad_type or block_size < 1):
        raise ValueError(MSG_BLOCK_SIZE.format(value=block_size))
    if permission_edges not in ("all", "linked"):
        raise ValueError(f"permission_edges must be 'all' or 'linked', got {permission_edges!r}.")
    n_tools = len(registry)
    E = np.asarray(tool_embeddings)
    if E.ndim != 2 or E.shape[0] != n_tools:
        raise ValueError(MSG_EMBEDDINGS_SHAPE.format(n_tools=n_tools, shape=E.shape))

    Y = _incidence(relevant_indices, n_tools)
    C = sp.triu(Y.T @ Y, k=1, format="coo")
    ci, cj, cv = C.row.astype(np.int64), C.col.astype(np.int64), C.data
    c_max = cv.max() if cv.size else 0

    # term -> (i, j, value) over pairs i < j; every value is > 0.
    terms: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    if "cooccurrence" in edge_types:
        keep = cv >= min_cooccurrence
        terms["cooccurrence"] = (ci[keep], cj[keep], _W_COOC * cv[keep] / c_max)
    if "risk" in edge_types:
        risky = registry.risk >= RISKY_LEVEL
        keep = risky[ci] & risky[cj]
        terms["risk"] = (ci[keep], cj[keep], np.full(int(keep.sum()), _W_RISK))
    if "semantic" in edge_types:
        En = E.astype(np.float32, copy=True)
        norms = np.linalg.norm(En, axis=1, keepdims=True)
        # A zero embedding has no direction: it stays zero, with no semantic neighbours.
        np.divide(En, norms, out=En, where=norms > 0)
        i, j, v = _upper_pairs_blockwise(En, lambda b: b > semantic_threshold, block_size)
        # A non-positive cosine above a negative threshold adds nothing: no edge.
        pos = v > 0
        terms["semantic"] = (i[pos], j[pos], _W_SEM * v[pos].astype(np.float64))
    if SERVER_EDGE in edge_types:
        named = [k for k, s in enumerate(registry.servers) if s is not None]
        codes = np.unique([registry.servers[k] for k in named], return_inverse=True)[1]
        S = sp.csr_array((np.ones(len(named)), (np.array(named, np.int64), codes)),
                         shape=(n_tools, int(codes.max(initial=-1)) + 1))
        pairs = sp.triu(S @ S.T, k=1, format="coo")
        terms[SERVER_EDGE] = (pairs.row.astype(np.int64), pairs.col.astype(np.int64),
                              np.full(pairs.nnz, _W_SERVER))

    if "permission" in edge_types:
        P = np.asarray(registry.permission_matrix, dtype=bool)
        if permission_edges == "all":
            holders = np.flatnonzero(P.any(axis=1))
            # Small integers are exact in float32, and float32 products use BLAS.
            i, j, v = _upper_pairs_blockwise(P[holders].astype(np.float32), lambda b: b > 0.5,
                                             block_size)
            i, j = holders[i], holders[j]
            m = np.rint(v)
        else:
            # The pairs that another enabled term links (terms holds no permission term yet).
            keys = [np.zeros(0, np.int64)] + [t[0] * n_tools + t[1] for t in terms.values()]
            i, j = np.divmod(np.unique(np.concatenate(keys)), n_tools)
            m = (P[i] & P[j]).sum(axis=1)
            keep = m >= 1
            i, j, m = i[keep], j[keep], m[keep]
        terms["permission"] = (i, j, _W_PERM * m.astype(np.float64) / P.shape[1])
    counted = (*EDGE_TYPES, SERVER_EDGE) if SERVER_EDGE in edge_types else EDGE_TYPES
    edge_counts = {name: len(terms[name][2]) if name in terms else 0 for name in counted}
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    rows, cols, vals = (np.concatenate(x) for x in zip(empty, *terms.values(), strict=True))
    W = sp.coo_array((vals, (rows, cols)), shape=(n_tools, n_tools)).tocsr()
    if W.nnz:
        W.data /= W.data.max()
    A = (W + W.T).tocsr()
    A.sort_indices()
    deg = A.sum(axis=1)
    dinv = np.zeros(n_tools)
    np.divide(1.0, np.sqrt(deg), out=dinv, where=deg > 0)
    row_of = np.repeat(np.arange(n_tools), np.diff(A.indptr))
    A.data *= dinv[row_of] * dinv[A.indices]
    return A, edge_counts


class GraphSmoother(RankingStepMixin, TransformerMixin, BaseEstimator):
    """Smooth each query's scores over the paper's ToolGraph.

    ``fit`` builds the graph with :func:`build_tool_graph` from the registry, the tool
    embeddings and the training queries' gold tools (not their scores). ``transform``
    propagates each query's scores one step along the graph restricted to that query's
    (distinct) candidates, so a candidate only receives score from other candidates::

        h0 = s
        h1 = (1 - alpha) * h0 + alpha * h0 @ A_hat.T
        s' = (h0 + h1) / 2

    A candidate without neighbours among the candidates gets ``(1 - alpha / 2) * s``. The
    scores are float32; a traced batch records the change of each score (``smoothing``).

    Parameters
    ----------
    alpha : float, default=0.2
        Weight of the neighbours' scores in ``h1``; 0 returns the scores unchanged.
    edge_types, min_cooccurrence, semantic_threshold, permission_edges
        As for :func:`build_tool_graph`, which ``fit`` calls; an empty ``edge_types`` gives
        no edges.
    k : int, default=5
        Number of tools :meth:`predict` returns per query.

    Attributes
    ----------
    graph_ : scipy.sparse.csr_array of float64, shape (n_tools, n_tools)
        The symmetric normalized adjacency ``A_hat``.
    n_edges_ : int
        Number of undirected edges in the graph.
    edge_counts_ : dict of str to int
        Per edge type, the number of pairs where its term is non-zero (0 when disabled).
    registry_, encoder_ : ToolRegistry, str
        The catalogue and the encoder identity seen in ``fit``; later batches must match.

    Examples
    --------
    >>> import numpy as np
    >>> from skriskrank import GraphSmoother, RankingBatch, ToolRegistry
    >>> reg = ToolRegistry.from_records(
    ...     [{"name": n, "description": n + " tool", "risk": 1} for n in "abc"])
    >>> emb = np.eye(3, dtype=np.float32)
    >>> train = RankingBatch.full_pool(reg, emb[:2], emb)
    >>> smoother = GraphSmoother(alpha=0.5, k=3).fit(train, [{"a", "b"}, {"a", "b"}])
    >>> smoother.n_edges_, smoother.edge_counts_["cooccurrence"]
    (1, 1)
    >>> batch = RankingBatch.full_pool(reg, emb[:1], emb)
    >>> batch.scores.tolist()
    [[1.0, 0.0, 0.0]]
    >>> smoother.transform(batch).scores.tolist()
    [[0.75, 0.25, 0.0]]
    """

    _requires_y = True
    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "edge_types": [tuple, list],
        "min_cooccurrence": [Interval(Integral, 1, None, closed="left")],
        "semantic_threshold": [Interval(Real, -1, 1, closed="both")],
        "permission_edges": [StrOptions({"all", "linked"})],
        "k": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, alpha=0.2, edge_types=EDGE_TYPES, min_cooccurrence=2,
                 semantic_threshold=0.65, permission_edges="all", k=5):
        self.alpha = alpha
        self.edge_types = edge_types
        self.min_cooccurrence = min_cooccurrence
        self.semantic_threshold = semantic_threshold
        self.permission_edges = permission_edges
        self.k = k

    def _fit_step(self, X, y):
        self._bind(X, check_relevant(y, X.registry, X.n_queries))

    def _bind(self, X, relevant):
        """The graph of the catalogue of ``X`` and of the gold sets ``relevant`` (maybe none)."""
        self.registry_, self.encoder_ = X.registry, X.encoder
        # build_tool_graph checks edge_types and permission_edges.
        self.graph_, self.edge_counts_ = build_tool_graph(
            X.registry, X.tool_embeddings, relevant, edge_types=self.edge_types,
            min_cooccurrence=self.min_cooccurrence, semantic_threshold=self.semantic_threshold,
            permission_edges=self.permission_edges)
        self.n_edges_ = int(self.graph_.nnz // 2)
        return self

    def _transform(self, X):
        alpha = float(self.alpha)
        if alpha == 0:
            smoothed = X.scores.astype(np.float32)
        else:
            # (h0 + h1) / 2 = (1 - alpha/2) h0 + alpha/2 h0 A^T, where h0 A^T sums over each
            # candidate's neighbours among the candidates (all of them for the full pool).
            candidates = None if X.is_full_pool else X.candidates
            neighbours = spread(self.graph_, candidates, X.scores)
            smoothed = ((1.0 - alpha / 2) * X.scores.astype(np.float64)
                        + (alpha / 2) * neighbours).astype(np.float32)
        return X.with_parts(smoothing=lambda: smoothed - X.scores).with_scores(smoothed)
