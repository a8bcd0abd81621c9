"""Loaders for the UltraTool and Seal-Tools benchmarks and for users' own tool catalogues."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Iterator
from os import PathLike
from pathlib import Path

import numpy as np

from .._permissions import PERMISSION_CATEGORIES
from .._registry import ToolRegistry
from .._rubric import NO_PERMISSIONS, is_level, parse_permissions

__all__ = ["SEALTOOLS_SPLITS", "ToolRetrievalDataset", "load_queries_jsonl", "load_registry_csv",
           "load_sealtools", "load_ultratool"]

#: The Seal-Tools splits :func:`load_sealtools` accepts. ``test_out_domain`` is upstream's
#: out-of-domain test set; it is not in every copy of the data.
SEALTOOLS_SPLITS = ("dev", "test_in_domain", "test_out_domain")

ULTRATOOL_QUERIES = "test.json"
ULTRATOOL_LABELS = "ultratool_risk_labels_resolved.json"
SEALTOOLS_TOOLS = "tool.jsonl"
SEALTOOLS_LABELS = "sealtools_risk_labels_resolved.json"

MSG_MISSING_FILE = "Data file not found: {path}"
MSG_NOT_A_DIR = "Data directory not found: {path}"
MSG_BAD_SPLIT = "Unknown Seal-Tools split {split!r}; expected one of {allowed}."
MSG_BAD_JSON = "{path}, line {line}: not valid JSON ({error})."
MSG_NOT_AN_OBJECT = "{path}, line {line}: expected a JSON object, got {type}."
MSG_MISSING_FIELD = "{path}, line {line}: missing field {field!r}."
MSG_BAD_QUERY = "{path}, line {line}: the query must be a non-empty string, got {value!r}."
MSG_BAD_GOLD = ("{path}, line {line}: {field!r} must be a non-empty list of gold tools, got "
                "{value!r}.")
MSG_BAD_GOLD_ENTRY = "{path}, line {line}: gold tool entry {value!r} must be a {expected}."
MSG_UNKNOWN_GOLD = ("{path}, line {line}: gold tool(s) {tools} of query {query!r} not in the "
                    "registry.")
MSG_NO_QUERIES = "{path}: the file holds no queries."
MSG_NO_TOOLS = "the file holds no tools."
MSG_BAD_LABELS = ("{path}: expected a JSON object mapping each tool name to "
                  '{{"risk_level": 1..5, "description": str}}, got {type}.')
MSG_BAD_LABEL = ('{path}: the label of tool {name!r} must be an object with "risk_level" and '
                 '"description", got {value!r}.')
MSG_BAD_REGISTRY = "{path}: {error}"
MSG_CONFLICTING_TOOL = ("{path}, line {line}: tool {name!r} repeats line {first} with a different "
                        "description.")
MSG_CSV_COLUMNS = "{path}: the CSV needs columns {required}; its header is {header}."
MSG_CSV_RISK = ("{path}, line {line}: risk of tool {name!r} must be an integer 1..5 or blank "
                "(unknown), got {value!r}.")
MSG_BAD_FIELD = "{path}, line {line}: {field!r} must be a {expected}, got {value!r}."
MSG_MIXED_DOMAINS = ("{path}, line {line}: 'domain' is given for some queries but not for others; "
                     "give every query a domain or none.")
MSG_CSV_PERMISSIONS = ("{path}, line {line}: permissions of tool {name!r} must be categories of "
                       "{allowed} separated by ';', or {none!r}, got {value!r}.")
MSG_DATASET_LENGTHS = ("ToolRetrievalDataset fields must have one entry per query: {n} queries "
                       "but {counts}.")
MSG_DATASET_UNKNOWN = "Query #{i}: gold tool(s) {tools} not in the registry."
MSG_DATASET_EMPTY_GOLD = "Query #{i} has no gold tools."
MSG_SUBSET_INDICES = "subset() takes a 1-d array of integer indices or a boolean mask, got {got}."
MSG_SUBSET_RANGE = "subset() index {index} is out of range for a dataset of {n} queries."


@dataclasses.dataclass(frozen=True, eq=False)
class ToolRetrievalDataset:
    """Queries with their gold tools over one tool registry.

    Made by the loaders of :mod:`skriskrank.datasets`. ``queries`` is the ``X`` and
    ``relevant`` the ``y`` of a skriskrank pipeline.

    Parameters
    ----------
    name : str
        The benchmark, for example ``"ultratool"`` or ``"sealtools"``.
    split : str
        The split, for example ``"test"`` or ``"dev"``.
    registry : ToolRegistry
        The tool catalogue, with risk labels; shared by every subset.
    queries : list of str
        The query texts, stripped of surrounding whitespace.
    relevant : list of frozenset of str
        The gold tool names of each query; never empty, always in ``registry``.
    domains : list of str or None, default=None
        One domain per query where the benchmark has one (UltraTool's ``domain``).
    query_ids : list of str or None, default=None
        Stable query identifiers, kept by a subset; ``None`` numbers the queries from "0".

    Examples
    --------
    >>> from skriskrank import ToolRegistry
    >>> from skriskrank.datasets import ToolRetrievalDataset
    >>> reg = ToolRegistry.from_records([
    ...     {"name": "get_weather", "description": "Look up the forecast", "risk": 1},
    ...     {"name": "send_email", "description": "Send an email", "risk": 3},
    ... ])
    >>> ds = ToolRetrievalDataset(
    ...     name="toy", split="test", registry=reg,
    ...     queries=["Will it rain?", "Mail Bob the forecast"],
    ...     relevant=[{"get_weather"}, {"get_weather", "send_email"}])
    >>> len(ds), ds.query_ids
    (2, ['0', '1'])
    >>> sub = ds.subset([1])
    >>> sub.queries, sorted(sub.relevant[0]), sub.registry is ds.registry
    (['Mail Bob the forecast'], ['get_weather', 'send_email'], True)
    """

    name: str
    split: str
    registry: ToolRegistry
    queries: list[str]
    relevant: list[frozenset[str]]
    domains: list[str] | None = None
    query_ids: list[str] | None = None

    def __post_init__(self):
        queries = list(self.queries)
        relevant = [frozenset(g) for g in self.relevant]
        domains = None if self.domains is None else list(self.domains)
        ids = list(map(str, range(len(queries))) if self.query_ids is None else self.query_ids)
        fields = {"relevant": relevant, "query_ids": ids, "domains": domains}
        counts = {name: len(v) for name, v in fields.items() if v is not None}
        if any(c != len(queries) for c in counts.values()):
            raise ValueError(MSG_DATASET_LENGTHS.format(n=len(queries), counts=counts))
        for i, gold in enumerate(relevant):
            if not gold:
                raise ValueError(MSG_DATASET_EMPTY_GOLD.format(i=i))
            missing = sorted(g for g in gold if g not in self.registry)
            if missing:
                raise ValueError(MSG_DATASET_UNKNOWN.format(i=i, tools=missing))
        # Frozen: the normalised copies replace what the caller passed.
        self.__dict__.update(queries=queries, **fields)

    def __len__(self) -> int:
        return len(self.queries)

    def __repr__(self) -> str:
        return (f"ToolRetrievalDataset(name={self.name!r}, split={self.split!r}, "
                f"n_queries={len(self)}, n_tools={len(self.registry)})")

    def subset(self, indices) -> ToolRetrievalDataset:
        """The dataset restricted to some queries, over the same registry.

        Parameters
        ----------
        indices : array-like of int or of bool
            Query positions (repeats allowed, negative positions count from the end), or a
            boolean mask with one entry per query, as a
            :class:`sklearn.model_selection.KFold` split gives.

        Returns
        -------
        dataset : ToolRetrievalDataset
            The selected queries in the order given; ``registry`` is the same object.

        Raises
        ------
        ValueError
            If ``indices`` is neither integers nor a boolean mask of the right length.
        IndexError
            If an index is out of range.
        """
        idx = np.asarray(indices)
        if idx.ndim != 1:
            raise ValueError(MSG_SUBSET_INDICES.format(got=f"an array of shape {idx.shape}"))
        n = len(self)
        if idx.dtype == bool:
            if idx.size != n:
                got = f"a mask of {idx.size} entries for {n}"
                raise ValueError(MSG_SUBSET_INDICES.format(got=got))
            idx = np.flatnonzero(idx)
        elif idx.size == 0:
            idx = idx.astype(np.int64)
        elif not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(MSG_SUBSET_INDICES.format(got=f"dtype {idx.dtype}"))
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise IndexError(MSG_SUBSET_RANGE.format(index=int(bad[0]), n=n))
        pos = [int(i) for i in idx]
        domains = None if self.domains is None else [self.domains[i] for i in pos]
        return ToolRetrievalDataset(
            self.name, self.split, self.registry, [self.queries[i] for i in pos],
            [self.relevant[i] for i in pos], domains, [self.query_ids[i] for i in pos],
        )


# -- reading files ------------------------------------------------------------------------------
def _file(path, directory=None) -> Path:
    """``path`` (inside ``directory`` when given), checking that both exist."""
    if directory is not None and not Path(directory).is_dir():
        raise FileNotFoundError(MSG_NOT_A_DIR.format(path=Path(directory)))
    path = Path(path) if directory is None else Path(directory) / path
    if not path.is_file():
        raise FileNotFoundError(MSG_MISSING_FILE.format(path=path))
    return path


def _read_jsonl(path: Path) -> Iterator[tuple[dict, dict]]:
    """Yield ``(at, object)`` per non-blank line; ``at`` is ``{"path", "line"}`` (1-based)."""
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            # Every message about a line starts "{path}, line {line}: ".
            at = {"path": path, "line": lineno}
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(MSG_BAD_JSON.format(**at, error=err.msg)) from None
            if not isinstance(obj, dict):
                raise ValueError(MSG_NOT_AN_OBJECT.format(**at, type=type(obj).__name__))
            yield at, obj


def _read_labels(path: Path) -> dict[str, dict]:
    """The released risk labels, ``{tool_name: {"risk_level", "description"}}``."""
    try:
        labels = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(MSG_BAD_JSON.format(path=path, line=err.lineno, error=err.msg)) from None
    if not isinstance(labels, dict):
        raise ValueError(MSG_BAD_LABELS.format(path=path, type=type(labels).__name__))
    for name, label in labels.items():
        if not isinstance(label, dict):
            raise ValueError(MSG_BAD_LABEL.format(path=path, name=name, value=label))
    return labels


def _build_registry(path: Path, build, *args, **kwargs):
    try:
        return build(*args, **kwargs)
    except ValueError as err:
        # ToolRegistry names the tool; add the file it came from.
        raise ValueError(MSG_BAD_REGISTRY.format(path=path, error=err)) from None


def _field(at: dict, obj: dict, field: str):
    if field not in obj:
        raise ValueError(MSG_MISSING_FIELD.format(**at, field=field))
    return obj[field]


def _bad_field(at: dict, field: str, expected: str, value) -> ValueError:
    return ValueError(MSG_BAD_FIELD.format(**at, field=field, expected=expected, value=value))


def _domain(at: dict, obj: dict, *, required: bool) -> str | None:
    domain = obj.get("domain")
    if (required or domain is not None) and (not isinstance(domain, str) or not domain):
        raise _bad_field(at, "domain", "non-empty string", domain)
    return domain


def _gold_name(at: dict, entry, key: str | None) -> str:
    """A gold tool name: the entry itself (``key=None``) or its ``key`` field."""
    name = entry if key is None else entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(name, str) or not name:
        expected = f"object with a non-empty string {key!r}" if key else "non-empty tool name"
        raise ValueError(MSG_BAD_GOLD_ENTRY.format(**at, value=entry, expected=expected))
    return name


def _query_lines(path: Path, registry, query_field: str, gold_field: str, key: str | None):
    """Yield ``(at, object, query, gold tools)`` per line of a query JSONL, each checked."""
    n = 0
    for at, obj in _read_jsonl(path):
        query = _field(at, obj, query_field)
        if not isinstance(query, str) or not query.strip():
            raise ValueError(MSG_BAD_QUERY.format(**at, value=query))
        query = query.strip()
        entries = _field(at, obj, gold_field)
        if not isinstance(entries, list) or not entries:
            raise ValueError(MSG_BAD_GOLD.format(**at, field=gold_field, value=entries))
        gold = frozenset(_gold_name(at, e, key) for e in entries)
        missing = ", ".join(map(repr, sorted(g for g in gold if g not in registry)))
        if missing:
            raise ValueError(MSG_UNKNOWN_GOLD.format(**at, tools=missing, query=query))
        n += 1
        yield at, obj, query, gold
    if not n:
        raise ValueError(MSG_NO_QUERIES.format(path=path))


# -- benchmarks ---------------------------------------------------------------------------------
def load_ultratool(data_dir: str | PathLike) -> ToolRetrievalDataset:
    """Load the UltraTool test queries with the paper's released risk labels.

    Parameters
    ----------
    data_dir : str or path-like
        A directory holding ``test.json`` (the English test split, one JSON object per line)
        and ``ultratool_risk_labels_resolved.json`` (``{tool_name: {"risk_level": 1..5,
        "description": str}}``), as laid out in ``shared/data/ultratool``.

    Returns
    -------
    dataset : ToolRetrievalDataset
        ``name="ultratool"``, ``split="test"``. The registry holds every labelled tool in the
        labels file's order; a label without a ``risk_level`` (or with ``null``) is unknown
        risk, never level 1. ``queries`` are the ``question`` fields, ``relevant`` the
        ``name`` of each entry of ``tools``, ``domains`` the ``domain`` field, and
        ``query_ids`` ``"test-{i}"`` with ``i`` the query's 0-based position. There is no
        training split: cross-validate over :meth:`ToolRetrievalDataset.subset`.

    Raises
    ------
    FileNotFoundError
        Naming a missing directory or data file.
    ValueError
        As :func:`load_queries_jsonl`, for ``question`` and ``tools``.

    Examples
    --------
    >>> from skriskrank.datasets import load_ultratool
    >>> ds = load_ultratool("shared/data/ultratool")  # doctest: +SKIP
    >>> len(ds), len(ds.registry)  # doctest: +SKIP
    (1000, 2032)
    """
    labels_path = _file(ULTRATOOL_LABELS, data_dir)
    queries_path = _file(ULTRATOOL_QUERIES, data_dir)
    labels = _read_labels(labels_path)
    registry = _build_registry(labels_path, ToolRegistry, list(labels),
                               [label.get("description") for label in labels.values()],
                               [label.get("risk_level") for label in labels.values()])
    lines = _query_lines(queries_path, registry, "question", "tools", "name")
    rows = [(q, gold, _domain(at, obj, required=True)) for at, obj, q, gold in lines]
    queries, relevant, domains = zip(*rows, strict=True)
    ids = [f"test-{i}" for i in range(len(queries))]
    return ToolRetrievalDataset("ultratool", "test", registry, queries, relevant, domains, ids)


def load_sealtools(data_dir: str | PathLike,
                   split: str = "test_in_domain") -> ToolRetrievalDataset:
    """Load one Seal-Tools split with the paper's released risk labels.

    Parameters
    ----------
    data_dir : str or path-like
        A directory laid out like ``shared/data/sealtools``: ``tool.jsonl`` (the tools:
        ``api_name``, ``api_description``, ``field``, ...), ``sealtools_risk_labels_resolved.json``
        (``{api_name: {"risk_level": 1..5, "description": str}}``) and ``{split}.jsonl`` (one
        query per line: ``query`` and ``calling``, a list of ``{"api": name, ...}``).
    split : {"dev", "test_in_domain", "test_out_domain"}, default="test_in_domain"
        The query file to read.

    Returns
    -------
    dataset : ToolRetrievalDataset
        ``name="sealtools"``. The registry holds the tools of ``tool.jsonl`` in file order,
        described by ``api_description``; an ``api_name`` listed twice with the same
        description is kept once. A tool the labels file does not cover has unknown risk
        (:data:`skriskrank.UNKNOWN_RISK`, counted as high risk), never level 1. ``relevant``
        holds the distinct ``api`` names of ``calling``; ``query_ids`` the ``id`` field (the
        line number where it is missing). ``domains`` is ``None``: most queries call tools
        of two or more top-level ``field`` values. There is no training split: train on
        ``"dev"`` and evaluate on ``"test_in_domain"``.

    Raises
    ------
    ValueError
        For a split not in :data:`SEALTOOLS_SPLITS`; as :func:`load_queries_jsonl`, for
        ``query`` and ``calling``; naming the tool for a repeated ``api_name`` whose
        description differs from the first.
    FileNotFoundError
        Naming a missing directory or data file (``test_out_domain.jsonl`` is not in every copy).

    Examples
    --------
    >>> from skriskrank.datasets import load_sealtools
    >>> ds = load_sealtools("shared/data/sealtools", "dev")  # doctest: +SKIP
    >>> len(ds), len(ds.registry)  # doctest: +SKIP
    (700, 4076)
    """
    if split not in SEALTOOLS_SPLITS:
        raise ValueError(MSG_BAD_SPLIT.format(split=split, allowed=list(SEALTOOLS_SPLITS)))
    # Check the query file before the costlier registry, so a missing split fails fast.
    queries_path = _file(f"{split}.jsonl", data_dir)
    tools_path = _file(SEALTOOLS_TOOLS, data_dir)
    labels = _read_labels(_file(SEALTOOLS_LABELS, data_dir))
    first: dict[str, tuple[int, str]] = {}
    for at, obj in _read_jsonl(tools_path):
        name, desc = _field(at, obj, "api_name"), _field(at, obj, "api_description")
        # An exact repeat is the same tool listed twice: keep the first. A repeat that
        # disagrees would make the gold name ambiguous, so it is an error.
        line, first_desc = first.setdefault(name, (at["line"], desc))
        if desc != first_desc:
            raise ValueError(MSG_CONFLICTING_TOOL.format(**at, name=name, first=line))
    if not first:
        raise ValueError(MSG_BAD_REGISTRY.format(path=tools_path, error=MSG_NO_TOOLS))
    risk = [labels.get(n, {}).get("risk_level") for n in first]
    registry = _build_registry(tools_path, ToolRegistry, list(first),
                               [d for _, d in first.values()], risk)
    lines = _query_lines(queries_path, registry, "query", "calling", "api")
    rows = [(q, g, str(obj.get("id", f"{split}-line{at['line']}"))) for at, obj, q, g in lines]
    queries, relevant, ids = zip(*rows, strict=True)
    return ToolRetrievalDataset("sealtools", split, registry, queries, relevant, None, ids)


# -- users' own files ---------------------------------------------------------------------------
def load_registry_csv(path: str | PathLike, *, permission_keywords=None) -> ToolRegistry:
    r"""Load a tool catalogue from a CSV file, as ``ToolRegistry.to_frame`` writes it.

    Parameters
    ----------
    path : str or path-like
        A UTF-8 CSV (a byte-order mark is allowed) with a header row and columns ``name``,
        ``description``, and optionally ``risk`` (an integer 1..5; blank means unknown),
        ``permissions`` (categories of :data:`skriskrank.PERMISSION_CATEGORIES` separated by
        ``;``; a blank cell derives them from the name and description, and ``none``
        declares that the tool has none), ``risk_source`` (``declared`` or ``predicted``),
        ``flags`` (words separated by ``;``) and ``server``. Other columns are ignored.
    permission_keywords
        As for :class:`~skriskrank.ToolRegistry`.

    Returns
    -------
    registry : ToolRegistry
        The tools in file order. A tool with blank risk has unknown risk
        (:data:`skriskrank.UNKNOWN_RISK`), which counts as high risk.

    Raises
    ------
    FileNotFoundError
        Naming the missing file.
    ValueError
        Naming the file for missing columns, and the file, line and tool for a bad risk,
        an unknown permission category, a repeated or empty name or an empty description.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from skriskrank.datasets import load_registry_csv
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "tools.csv").write_text(
    ...     "name,description,risk,permissions\n"
    ...     "read_file,Read a text file,1,none\n"
    ...     "run_shell,Run a bash command,,\n")
    >>> reg = load_registry_csv(d / "tools.csv")
    >>> reg.risk.tolist(), [sorted(p) for p in reg.permissions]
    ([1, 99], [[], ['shell_execution']])
    """
    path = _file(path)
    with path.open(encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        header = [h.strip() for h in (reader.fieldnames or [])]
        if not {"name", "description"} <= set(header):
            required = ["name", "description"]
            raise ValueError(MSG_CSV_COLUMNS.format(path=path, required=required, header=header))
        reader.fieldnames = header
        # DictReader counts physical lines, so quoted multi-line cells keep numbers right.
        records = [_csv_record({"path": path, "line": reader.line_num}, row) for row in reader]
    if not records:
        raise ValueError(MSG_BAD_REGISTRY.format(path=path, error=MSG_NO_TOOLS))
    return _build_registry(path, ToolRegistry.from_records, records,
                           permission_keywords=permission_keywords)


def _csv_record(at: dict, row: dict) -> dict:
    """A registry record of a CSV row, its cells in the rubric's one format."""
    cells = {col: (row.get(col) or "").strip() for col in (
        "name", "description", "risk", "permissions", "risk_source", "flags", "server")}
    name, risk = cells["name"], cells["risk"]
    if risk and not (risk.isdigit() and is_level(int(risk))):
        raise ValueError(MSG_CSV_RISK.format(**at, name=name, value=risk))
    perms = parse_permissions(cells["permissions"])
    if perms is not None and not perms <= set(PERMISSION_CATEGORIES):
        raise ValueError(MSG_CSV_PERMISSIONS.format(
            **at, name=name, allowed=list(PERMISSION_CATEGORIES), none=NO_PERMISSIONS,
            value=cells["permissions"]))
    return {"name": name, "description": cells["description"],
            "risk": int(risk) if risk else None, "permissions": perms,
            "risk_source": cells["risk_source"] or None, "flags": cells["flags"] or None,
            "server": cells["server"] or None}


def load_queries_jsonl(path: str | PathLike, registry: ToolRegistry, *, name: str | None = None,
                       split: str = "custom") -> ToolRetrievalDataset:
    """Load a user's queries and gold tools over a registry.

    Parameters
    ----------
    path : str or path-like
        A UTF-8 JSON-lines file, one object per line: ``{"query": str, "relevant": [tool
        names]}``, optionally with ``"id"`` and ``"domain"`` (strings). Blank lines are
        skipped.
    registry : ToolRegistry
        The catalogue the gold tools come from, for example from :func:`load_registry_csv`.
    name : str, default=None
        The dataset name; ``None`` uses the file's stem.
    split : str, default="custom"
        The split name stored on the dataset.

    Returns
    -------
    dataset : ToolRetrievalDataset
        ``domains`` holds the ``domain`` fields when every query has one, else ``None``;
        ``query_ids`` the ``id`` fields, or ``"line{n}"`` where a line has none.

    Raises
    ------
    FileNotFoundError
        Naming the missing file.
    ValueError
        Naming the file and line of a malformed JSON line, an empty or non-string query, a
        missing or empty ``relevant`` list, a gold tool that is not in ``registry``, or a
        ``domain`` missing from some queries only.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from skriskrank import ToolRegistry
    >>> from skriskrank.datasets import load_queries_jsonl
    >>> reg = ToolRegistry.from_records([
    ...     {"name": "get_weather", "description": "Look up the forecast", "risk": 1}])
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "queries.jsonl"
    >>> _ = p.write_text(json.dumps({"query": "Rain today?", "relevant": ["get_weather"]}))
    >>> ds = load_queries_jsonl(p, reg)
    >>> ds.name, ds.queries, ds.relevant
    ('queries', ['Rain today?'], [frozenset({'get_weather'})])
    """
    path = _file(path)
    rows = []
    for at, obj, query, gold in _query_lines(path, registry, "query", "relevant", None):
        qid = obj.get("id", f"line{at['line']}")
        if not isinstance(qid, (str, int)) or isinstance(qid, bool):
            raise _bad_field(at, "id", "string", qid)
        domain = _domain(at, obj, required=False)
        if rows and (domain is None) != (rows[0][3] is None):
            raise ValueError(MSG_MIXED_DOMAINS.format(**at))
        rows.append((query, gold, str(qid), domain))
    queries, relevant, ids, domains = zip(*rows, strict=True)
    return ToolRetrievalDataset(path.stem if name is None else name, split, registry, queries,
                                relevant, None if domains[0] is None else domains, ids)
