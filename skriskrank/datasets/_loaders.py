"""Loaders for the UltraTool and Seal-Tools benchmarks and for users' own tool catalogues."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Iterator
from os import PathLike
from pathlib import Path

import numpy as np

from .._registry import PERMISSION_CATEGORIES, ToolRegistry

__all__ = [
    "SEALTOOLS_SPLITS",
    "ToolRetrievalDataset",
    "load_queries_jsonl",
    "load_registry_csv",
    "load_sealtools",
    "load_ultratool",
]

#: The Seal-Tools splits :func:`load_sealtools` accepts. ``test_out_domain`` is upstream's
#: out-of-domain test set; it is not in every copy of the data.
SEALTOOLS_SPLITS = ("dev", "test_in_domain", "test_out_domain")

ULTRATOOL_QUERIES = "test.json"
ULTRATOOL_LABELS = "ultratool_risk_labels_resolved.json"
SEALTOOLS_TOOLS = "tool.jsonl"
SEALTOOLS_LABELS = "sealtools_risk_labels_resolved.json"

#: In a user's registry CSV, this ``permissions`` cell declares that a tool has none (a blank
#: cell derives them from the name and description instead).
NO_PERMISSIONS = "none"

MSG_MISSING_FILE = "Data file not found: {path}"
MSG_NOT_A_DIR = "Data directory not found: {path}"
MSG_BAD_SPLIT = "Unknown Seal-Tools split {split!r}; expected one of {allowed}."
MSG_BAD_JSON = "{path}, line {line}: not valid JSON ({error})."
MSG_NOT_AN_OBJECT = "{path}, line {line}: expected a JSON object, got {type}."
MSG_MISSING_FIELD = "{path}, line {line}: missing field {field!r}."
MSG_BAD_QUERY = "{path}, line {line}: the query must be a non-empty string, got {value!r}."
MSG_BAD_GOLD = (
    "{path}, line {line}: {field!r} must be a non-empty list of gold tools, got {value!r}."
)
MSG_BAD_GOLD_ENTRY = (
    "{path}, line {line}: gold tool entry {value!r} must be a {expected}."
)
MSG_UNKNOWN_GOLD = (
    "{path}, line {line}: gold tool(s) {tools} of query {query!r} not in the registry."
)
MSG_NO_QUERIES = "{path}: the file holds no queries."
MSG_NO_TOOLS = "the file holds no tools."
MSG_BAD_LABELS = (
    "{path}: expected a JSON object mapping each tool name to "
    '{{"risk_level": 1..5, "description": str}}, got {type}.'
)
MSG_BAD_LABEL = (
    '{path}: the label of tool {name!r} must be an object with "risk_level" and '
    '"description", got {value!r}.'
)
MSG_BAD_REGISTRY = "{path}: {error}"
MSG_CONFLICTING_TOOL = (
    "{path}, line {line}: tool {name!r} repeats line {first} with a different description."
)
MSG_CSV_COLUMNS = "{path}: the CSV needs columns {required}; its header is {header}."
MSG_CSV_RISK = (
    "{path}, line {line}: risk of tool {name!r} must be an integer 1..5 or blank (unknown), "
    "got {value!r}."
)
MSG_BAD_FIELD = "{path}, line {line}: {field!r} must be a {expected}, got {value!r}."
MSG_MIXED_DOMAINS = (
    "{path}, line {line}: 'domain' is given for some queries but not for others; give every "
    "query a domain or none."
)
MSG_CSV_PERMISSIONS = (
    "{path}, line {line}: permissions of tool {name!r} must be categories of {allowed} "
    "separated by ';', or {none!r}, got {value!r}."
)
MSG_DATASET_LENGTHS = (
    "ToolRetrievalDataset fields must have one entry per query: {n} queries but {counts}."
)
MSG_DATASET_UNKNOWN = "Query #{i}: gold tool(s) {tools} not in the registry."
MSG_DATASET_EMPTY_GOLD = "Query #{i} has no gold tools."
MSG_SUBSET_INDICES = "subset() takes a 1-d array of integer indices or a boolean mask, got {got}."
MSG_SUBSET_RANGE = "subset() index {index} is out of range for a dataset of {n} queries."


@dataclasses.dataclass(frozen=True, eq=False)
class ToolRetrievalDataset:
    """Queries with their gold tools over one tool registry.

    Made by :func:`load_ultratool`, :func:`load_sealtools` and :func:`load_queries_jsonl`.
    ``queries`` is the ``X`` and ``relevant`` the ``y`` of a skriskrank pipeline.

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
        One domain per query where the benchmark has one (UltraTool's ``domain``), else
        ``None``.
    query_ids : list of str or None, default=None
        Stable query identifiers (Seal-Tools' ``id``; ``"test-{i}"`` for UltraTool). ``None``
        numbers the queries ``"0"``, ``"1"``, ...; a subset keeps the ids of the queries it
        holds.

    See Also
    --------
    load_ultratool : The UltraTool benchmark.
    load_sealtools : The Seal-Tools benchmark.
    load_queries_jsonl : A user's own queries.

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
        ids = [str(i) for i in range(len(queries))] if self.query_ids is None else list(
            self.query_ids
        )
        counts = {"relevant": len(relevant), "query_ids": len(ids)}
        if domains is not None:
            counts["domains"] = len(domains)
        if any(c != len(queries) for c in counts.values()):
            raise ValueError(MSG_DATASET_LENGTHS.format(n=len(queries), counts=counts))
        for i, gold in enumerate(relevant):
            if not gold:
                raise ValueError(MSG_DATASET_EMPTY_GOLD.format(i=i))
            missing = sorted(g for g in gold if g not in self.registry)
            if missing:
                raise ValueError(MSG_DATASET_UNKNOWN.format(i=i, tools=missing))
        # Frozen: the normalised copies replace what the caller passed.
        object.__setattr__(self, "queries", queries)
        object.__setattr__(self, "relevant", relevant)
        object.__setattr__(self, "domains", domains)
        object.__setattr__(self, "query_ids", ids)

    def __len__(self) -> int:
        return len(self.queries)

    def __repr__(self) -> str:
        return (
            f"ToolRetrievalDataset(name={self.name!r}, split={self.split!r}, "
            f"n_queries={len(self)}, n_tools={len(self.registry)})"
        )

    def subset(self, indices) -> ToolRetrievalDataset:
        """The dataset restricted to some queries, over the same registry.

        Parameters
        ----------
        indices : array-like of int or of bool
            Query positions (repeats allowed, negative positions count from the end), or a
            boolean mask with one entry per query, as returned by a
            :class:`sklearn.model_selection.KFold` split.

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
                raise ValueError(
                    MSG_SUBSET_INDICES.format(got=f"a mask of {idx.size} entries for {n}")
                )
            idx = np.flatnonzero(idx)
        elif idx.size == 0:
            idx = idx.astype(np.int64)
        elif not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(MSG_SUBSET_INDICES.format(got=f"dtype {idx.dtype}"))
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise IndexError(MSG_SUBSET_RANGE.format(index=int(bad[0]), n=n))
        pos = [int(i) for i in idx]
        return ToolRetrievalDataset(
            name=self.name,
            split=self.split,
            registry=self.registry,
            queries=[self.queries[i] for i in pos],
            relevant=[self.relevant[i] for i in pos],
            domains=None if self.domains is None else [self.domains[i] for i in pos],
            query_ids=[self.query_ids[i] for i in pos],
        )


# -- reading files ------------------------------------------------------------------------------
def _data_file(directory, filename: str) -> Path:
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(MSG_NOT_A_DIR.format(path=directory))
    path = directory / filename
    if not path.is_file():
        raise FileNotFoundError(MSG_MISSING_FILE.format(path=path))
    return path


def _user_file(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(MSG_MISSING_FILE.format(path=path))
    return path


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` per non-blank line, 1-based as editors count."""
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(
                    MSG_BAD_JSON.format(path=path, line=lineno, error=err.msg)
                ) from None
            if not isinstance(obj, dict):
                raise ValueError(
                    MSG_NOT_AN_OBJECT.format(path=path, line=lineno, type=type(obj).__name__)
                )
            yield lineno, obj


def _read_labels(path: Path) -> dict[str, dict]:
    """The released risk labels, ``{tool_name: {"risk_level", "description"}}``."""
    text = path.read_text(encoding="utf-8")
    try:
        labels = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(MSG_BAD_JSON.format(path=path, line=err.lineno, error=err.msg)) from None
    if not isinstance(labels, dict):
        raise ValueError(MSG_BAD_LABELS.format(path=path, type=type(labels).__name__))
    for name, label in labels.items():
        if not isinstance(label, dict):
            raise ValueError(MSG_BAD_LABEL.format(path=path, name=name, value=label))
    return labels


def _build_registry(path: Path, names, descriptions, risk, permissions=None, **kwargs):
    try:
        return ToolRegistry(names, descriptions, risk, permissions, **kwargs)
    except ValueError as err:
        # ToolRegistry names the tool; add the file it came from.
        raise ValueError(MSG_BAD_REGISTRY.format(path=path, error=err)) from None


def _query_text(path: Path, lineno: int, obj: dict, field: str) -> str:
    if field not in obj:
        raise ValueError(MSG_MISSING_FIELD.format(path=path, line=lineno, field=field))
    text = obj[field]
    if not isinstance(text, str) or not text.strip():
        raise ValueError(MSG_BAD_QUERY.format(path=path, line=lineno, value=text))
    return text.strip()


def _gold_list(path: Path, lineno: int, obj: dict, field: str) -> list:
    if field not in obj:
        raise ValueError(MSG_MISSING_FIELD.format(path=path, line=lineno, field=field))
    gold = obj[field]
    if not isinstance(gold, list) or not gold:
        raise ValueError(MSG_BAD_GOLD.format(path=path, line=lineno, field=field, value=gold))
    return gold


def _gold_names(path: Path, lineno: int, entries: list, key: str | None) -> frozenset[str]:
    """Gold tool names from a list of names (``key=None``) or of objects holding ``key``."""
    names = []
    for entry in entries:
        if key is None:
            name, expected = entry, "non-empty tool name"
        else:
            name = entry.get(key) if isinstance(entry, dict) else None
            expected = f"object with a non-empty string {key!r}"
        if not isinstance(name, str) or not name:
            raise ValueError(
                MSG_BAD_GOLD_ENTRY.format(path=path, line=lineno, value=entry, expected=expected)
            )
        names.append(name)
    return frozenset(names)


def _check_gold(path: Path, lineno: int, query: str, gold, registry: ToolRegistry) -> None:
    missing = sorted(g for g in gold if g not in registry)
    if missing:
        raise ValueError(
            MSG_UNKNOWN_GOLD.format(
                path=path, line=lineno, tools=", ".join(map(repr, missing)), query=query
            )
        )


# -- benchmarks ---------------------------------------------------------------------------------
def load_ultratool(data_dir: str | PathLike) -> ToolRetrievalDataset:
    """Load the UltraTool test queries with the paper's released risk labels.

    Parameters
    ----------
    data_dir : str or path-like
        A directory holding ``test.json`` (UltraTool's English test split, one JSON object
        per line) and ``ultratool_risk_labels_resolved.json`` (the registry: ``{tool_name:
        {"risk_level": 1..5, "description": str}}``), as laid out in ``shared/data/ultratool``.

    Returns
    -------
    dataset : ToolRetrievalDataset
        ``name="ultratool"``, ``split="test"``. The registry holds every labelled tool in the
        labels file's order; a label without a ``risk_level`` (or with ``null``) is unknown
        risk, never level 1. ``queries`` are the ``question`` fields stripped of whitespace,
        ``relevant`` the ``name`` of each entry of ``tools``, ``domains`` the ``domain``
        field, and ``query_ids`` ``"test-{i}"`` with ``i`` the query's 0-based position.

    Raises
    ------
    FileNotFoundError
        Naming a missing directory or data file.
    ValueError
        Naming the file and line of a malformed JSON line, an empty or non-string question, a
        missing or empty ``tools`` list, or a gold tool that is not in the registry.

    See Also
    --------
    load_sealtools : The Seal-Tools benchmark.

    Notes
    -----
    UltraTool's training split is not public in this form; evaluate with query-level K-fold
    cross-validation over :meth:`ToolRetrievalDataset.subset`.

    Examples
    --------
    >>> from skriskrank.datasets import load_ultratool
    >>> ds = load_ultratool("shared/data/ultratool")  # doctest: +SKIP
    >>> len(ds), len(ds.registry)  # doctest: +SKIP
    (1000, 2032)
    """
    labels_path = _data_file(data_dir, ULTRATOOL_LABELS)
    queries_path = _data_file(data_dir, ULTRATOOL_QUERIES)
    labels = _read_labels(labels_path)
    registry = _build_registry(
        labels_path,
        list(labels),
        [label.get("description") for label in labels.values()],
        [label.get("risk_level") for label in labels.values()],
    )
    queries, relevant, domains = [], [], []
    for lineno, obj in _read_jsonl(queries_path):
        query = _query_text(queries_path, lineno, obj, "question")
        gold = _gold_names(
            queries_path, lineno, _gold_list(queries_path, lineno, obj, "tools"), "name"
        )
        _check_gold(queries_path, lineno, query, gold, registry)
        domain = obj.get("domain")
        if not isinstance(domain, str) or not domain:
            raise ValueError(
                MSG_BAD_FIELD.format(
                    path=queries_path, line=lineno, field="domain", expected="non-empty string",
                    value=domain,
                )
            )
        queries.append(query)
        relevant.append(gold)
        domains.append(domain)
    if not queries:
        raise ValueError(MSG_NO_QUERIES.format(path=queries_path))
    return ToolRetrievalDataset(
        name="ultratool",
        split="test",
        registry=registry,
        queries=queries,
        relevant=relevant,
        domains=domains,
        query_ids=[f"test-{i}" for i in range(len(queries))],
    )


def _sealtools_registry(data_dir) -> ToolRegistry:
    tools_path = _data_file(data_dir, SEALTOOLS_TOOLS)
    labels_path = _data_file(data_dir, SEALTOOLS_LABELS)
    labels = _read_labels(labels_path)
    first: dict[str, tuple[int, str]] = {}
    for lineno, obj in _read_jsonl(tools_path):
        for field in ("api_name", "api_description"):
            if field not in obj:
                raise ValueError(
                    MSG_MISSING_FIELD.format(path=tools_path, line=lineno, field=field)
                )
        name, desc = obj["api_name"], obj["api_description"]
        if name in first:
            # An exact repeat is the same tool listed twice: keep the first. A repeat that
            # disagrees would make the gold name ambiguous, so it is an error.
            if desc != first[name][1]:
                raise ValueError(
                    MSG_CONFLICTING_TOOL.format(
                        path=tools_path, line=lineno, name=name, first=first[name][0]
                    )
                )
            continue
        first[name] = (lineno, desc)
    names = list(first)
    descriptions = [desc for _, desc in first.values()]
    if not names:
        raise ValueError(MSG_BAD_REGISTRY.format(path=tools_path, error=MSG_NO_TOOLS))
    # A tool without a label gets None, which the registry stores as unknown (high) risk.
    risk = [labels[n].get("risk_level") if n in labels else None for n in names]
    return _build_registry(tools_path, names, descriptions, risk)


def load_sealtools(
    data_dir: str | PathLike, split: str = "test_in_domain"
) -> ToolRetrievalDataset:
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
        described by ``api_description``. ``relevant`` holds the distinct ``api`` names of
        ``calling``; ``query_ids`` the ``id`` field (the line number where it is missing).
        ``domains`` is ``None``: a Seal-Tools query has no domain of its own, and most
        queries call tools from two or more top-level ``field`` values, so none of them would
        be the query's domain.

    Raises
    ------
    ValueError
        For a split not in :data:`SEALTOOLS_SPLITS`; naming the file and line of a malformed
        JSON line, an empty or non-string query, a missing or empty ``calling`` list, or a gold
        ``api`` that is not in ``tool.jsonl``; naming the tool for a repeated ``api_name``
        whose description differs from the first.
    FileNotFoundError
        Naming a missing directory or data file (``test_out_domain.jsonl`` is not in every copy).

    See Also
    --------
    load_ultratool : The UltraTool benchmark.

    Notes
    -----
    An ``api_name`` listed twice with the same description is kept once, at its first line.
    A tool of ``tool.jsonl`` that the labels file does not cover gets unknown risk
    (:data:`skriskrank.UNKNOWN_RISK`, counted as high risk), never level 1; labels of tools
    not in ``tool.jsonl`` are ignored. The shipped copy has no repeated names and labels every
    tool. Seal-Tools' training split is not public in this form: train on ``"dev"`` and
    evaluate on ``"test_in_domain"``.

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
    queries_path = _data_file(data_dir, f"{split}.jsonl")
    registry = _sealtools_registry(data_dir)
    queries, relevant, ids = [], [], []
    for lineno, obj in _read_jsonl(queries_path):
        query = _query_text(queries_path, lineno, obj, "query")
        gold = _gold_names(
            queries_path, lineno, _gold_list(queries_path, lineno, obj, "calling"), "api"
        )
        _check_gold(queries_path, lineno, query, gold, registry)
        queries.append(query)
        relevant.append(gold)
        ids.append(str(obj.get("id", f"{split}-line{lineno}")))
    if not queries:
        raise ValueError(MSG_NO_QUERIES.format(path=queries_path))
    return ToolRetrievalDataset(
        name="sealtools",
        split=split,
        registry=registry,
        queries=queries,
        relevant=relevant,
        domains=None,
        query_ids=ids,
    )


# -- users' own files ---------------------------------------------------------------------------
def load_registry_csv(path: str | PathLike, *, permission_keywords=None) -> ToolRegistry:
    r"""Load a tool catalogue from a CSV file.

    Parameters
    ----------
    path : str or path-like
        A UTF-8 CSV (a byte-order mark is allowed) with a header row and columns ``name``,
        ``description``, and optionally ``risk`` (an integer 1..5; blank means unknown) and
        ``permissions`` (categories of :data:`skriskrank.PERMISSION_CATEGORIES` separated by
        ``;``; a blank cell derives them from the name and description, and ``none``
        declares that the tool has none). Other columns are ignored.
    permission_keywords : mapping of str to iterable of str, default=None
        Keyword rules for the tools whose permissions are derived; ``None`` uses
        :data:`skriskrank.DEFAULT_PERMISSION_KEYWORDS`.

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

    See Also
    --------
    load_queries_jsonl : Queries over the registry this returns.
    skriskrank.ToolRegistry.from_frame : The same from a DataFrame.

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
    path = _user_file(path)
    with path.open(encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        header = [h.strip() for h in (reader.fieldnames or [])]
        if not {"name", "description"} <= set(header):
            raise ValueError(
                MSG_CSV_COLUMNS.format(path=path, required=["name", "description"], header=header)
            )
        reader.fieldnames = header
        names, descriptions, risks, perms = [], [], [], []
        for row in reader:
            # DictReader counts physical lines, so quoted multi-line cells keep numbers right.
            lineno = reader.line_num
            name = (row.get("name") or "").strip()
            names.append(name)
            descriptions.append((row.get("description") or "").strip())
            risks.append(_csv_risk(path, lineno, name, row.get("risk")))
            perms.append(_csv_permissions(path, lineno, name, row.get("permissions")))
    if not names:
        raise ValueError(MSG_BAD_REGISTRY.format(path=path, error=MSG_NO_TOOLS))
    return _build_registry(
        path, names, descriptions, risks, perms, permission_keywords=permission_keywords
    )


def _csv_risk(path: Path, lineno: int, name: str, cell) -> int | None:
    cell = (cell or "").strip()
    if not cell:
        return None
    try:
        value = int(cell)
    except ValueError:
        value = None
    if value is None or not 1 <= value <= 5:
        raise ValueError(MSG_CSV_RISK.format(path=path, line=lineno, name=name, value=cell))
    return value


def _csv_permissions(path: Path, lineno: int, name: str, cell) -> list[str] | None:
    cell = (cell or "").strip()
    if not cell:
        return None
    if cell.lower() == NO_PERMISSIONS:
        return []
    perms = [p.strip() for p in cell.split(";") if p.strip()]
    bad = [p for p in perms if p not in PERMISSION_CATEGORIES]
    if bad:
        raise ValueError(
            MSG_CSV_PERMISSIONS.format(
                path=path, line=lineno, name=name, allowed=list(PERMISSION_CATEGORIES),
                none=NO_PERMISSIONS, value=cell,
            )
        )
    return perms


def load_queries_jsonl(
    path: str | PathLike,
    registry: ToolRegistry,
    *,
    name: str | None = None,
    split: str = "custom",
) -> ToolRetrievalDataset:
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

    See Also
    --------
    load_registry_csv : The matching registry loader.

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
    path = _user_file(path)
    queries, relevant, ids, domains = [], [], [], []
    for lineno, obj in _read_jsonl(path):
        query = _query_text(path, lineno, obj, "query")
        gold = _gold_names(path, lineno, _gold_list(path, lineno, obj, "relevant"), None)
        _check_gold(path, lineno, query, gold, registry)
        qid = obj.get("id", f"line{lineno}")
        if not isinstance(qid, (str, int)) or isinstance(qid, bool):
            raise ValueError(
                MSG_BAD_FIELD.format(
                    path=path, line=lineno, field="id", expected="string", value=qid
                )
            )
        domain = obj.get("domain")
        if domain is not None and (not isinstance(domain, str) or not domain):
            raise ValueError(
                MSG_BAD_FIELD.format(
                    path=path, line=lineno, field="domain", expected="non-empty string",
                    value=domain,
                )
            )
        if domains and (domain is None) != (domains[0] is None):
            raise ValueError(MSG_MIXED_DOMAINS.format(path=path, line=lineno))
        queries.append(query)
        relevant.append(gold)
        ids.append(str(qid))
        domains.append(domain)
    if not queries:
        raise ValueError(MSG_NO_QUERIES.format(path=path))
    return ToolRetrievalDataset(
        name=path.stem if name is None else name,
        split=split,
        registry=registry,
        queries=queries,
        relevant=relevant,
        domains=None if domains[0] is None else domains,
        query_ids=ids,
    )

