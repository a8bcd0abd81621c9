"""Model files without pickle: ``save`` and ``load`` with skops, and nothing else trusted.

A fitted pipeline is a tree of scikit-learn estimators, numpy arrays, a sparse graph and the
registry. :func:`save` writes it with :mod:`skops.io` (a zip of a JSON schema and ``.npy``
members, no pickle); the encoder is referenced by model name or path, never stored. A model
file from elsewhere is untrusted input, so :func:`load` checks its sizes
(:data:`MODEL_FILE_LIMITS`), node types (``TRUSTED_NODES``, the exact pairs :func:`save`
writes), array headers and cycles before skops builds anything; ``docs/security.md`` ("A
model file never runs code") says what each check refuses.
"""

from __future__ import annotations

import functools
import io
import json
import zipfile
from pathlib import Path

from ._files import write_atomically

__all__ = ["MODEL_FILE_LIMITS", "ModelFileError", "UntrustedTypeError", "load", "save"]

#: Bounds of a model file that :func:`load` reads: the file and the zip's declared
#: uncompressed bytes (a 100,000-tool pipeline is about 0.4 GB), its members, the JSON
#: schema, and the schema's nesting depth and node count.
MODEL_FILE_LIMITS = {"file_bytes": 2 << 30, "unpacked_bytes": 4 << 30, "members": 100_000,
                     "schema_bytes": 64 << 20, "depth": 64, "nodes": 1_000_000}

MSG_NOT_MODEL = ("{path!r} is not a skriskrank model file (truncated, corrupted or not written by "
                 "skriskrank.save): {error}")
MSG_UNTRUSTED = ("Refusing to load {path!r}: it names type(s) that skriskrank.save never writes: "
                 "{types}. Only files written by skriskrank.save load; nothing in the file was "
                 "imported or built.")
MSG_TOO_LARGE = "{what} exceeds the limit of {limit:,} {unit}"
MSG_NOT_ESTIMATOR = "{path!r} holds a {type}, not an estimator."
MSG_CANNOT_SAVE = ("Cannot save {name} with skops: its state holds {what}, outside the types "
                   "skriskrank.load trusts. Save skriskrank pipelines, steps and auditors (use "
                   "joblib for anything else).")
MSG_NO_DIRECTORY = "cannot write {path}: the directory {parent} does not exist."


class ModelFileError(ValueError):
    """A file that is not a readable skriskrank model (truncated, corrupted or tampered)."""


class UntrustedTypeError(ModelFileError):
    """A model file that names a type outside the trusted list; ``types`` lists them."""

    def __init__(self, path, types):
        self.types = sorted(types)
        super().__init__(MSG_UNTRUSTED.format(path=str(path), types=", ".join(self.types)))


def _name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@functools.cache
def _trusted_nodes() -> frozenset[tuple[str, str]]:
    """TRUSTED_NODES, built from the classes themselves so that a moved module follows."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from . import (
        DenseRetriever,
        FrozenEmbedder,
        GraphSmoother,
        NeedAwareFilter,
        RiskAuditor,
        RiskAwareReranker,
        RuleFilter,
        ToolRegistry,
    )
    from ._gold_model import _GoldModel
    from ._head_weights import HeadWeights
    from .baselines import BM25Reranker, CrossEncoderReranker, MMRReranker, RiskPenaltyReranker

    # Each class here was reviewed: its state is plain data, rebuilt by __dict__ or by a
    # __setstate__ that reads no bytes (tests/test_security.py checks both).
    objects = (Pipeline, LogisticRegression, StandardScaler, ToolRegistry, HeadWeights,
               _GoldModel, FrozenEmbedder, DenseRetriever, RiskAwareReranker, GraphSmoother,
               RuleFilter, NeedAwareFilter, RiskAuditor, CrossEncoderReranker, MMRReranker,
               RiskPenaltyReranker, BM25Reranker)
    return frozenset({
        *(("ObjectNode", _name(c)) for c in objects), ("DictNode", "builtins.dict"),
        ("ListNode", "builtins.list"), ("TupleNode", "builtins.tuple"),
        ("JsonNode", "builtins.str"), ("TypeNode", "builtins.str"), ("TypeNode", "builtins.int"),
        ("ConstructorFromReduceNode", "builtins.frozenset"), ("NdArrayNode", "numpy.ndarray"),
        ("NdArrayNode", _name(np.float64)), ("SparseMatrixNode", _name(sp.csr_array))})


def __getattr__(name):
    # TRUSTED_NODES imports the estimators; computed on first use, not at import.
    if name == "TRUSTED_NODES":
        return _trusted_nodes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_size(what, value, limit, unit="bytes"):
    if value > limit:
        raise ValueError(MSG_TOO_LARGE.format(what=what, limit=limit, unit=unit))


def _schema_types(schema) -> set[str]:
    """The node types of ``schema`` outside TRUSTED_NODES; checks depth, size and cycles."""
    trusted, limits = _trusted_nodes(), MODEL_FILE_LIMITS
    untrusted, n_nodes = set(), 0
    # Depth-first without recursion; ``path`` holds the ids of the current node's ancestors.
    stack = [(schema, 0, frozenset())]
    while stack:
        node, depth, path = stack.pop()
        n_nodes += 1
        _check_size("the schema's nesting", depth, limits["depth"], "levels")
        _check_size("the schema", n_nodes, limits["nodes"], "nodes")
        if isinstance(node, list):
            stack.extend((child, depth + 1, path) for child in node)
            continue
        if not isinstance(node, dict):
            continue
        if "__loader__" in node:
            kind = (str(node.get("__loader__")),
                    f"{node.get('__module__')}.{node.get('__class__')}")
            if kind not in trusted:
                untrusted.add(kind[1] if kind[0] in {k for k, _ in trusted}
                              else f"{kind[1]} ({kind[0]})")
            node_id = node.get("__id__")
            if node_id is not None:
                if node_id in path:
                    raise ValueError("the schema holds a cycle (a node contains itself)")
                path = path | {node_id}
        stack.extend((child, depth + 1, path) for child in node.values())
    return untrusted


def _check_members(archive: zipfile.ZipFile) -> None:
    """The archive's member count and unpacked size, within :data:`MODEL_FILE_LIMITS`."""
    infos, limits = archive.infolist(), MODEL_FILE_LIMITS
    _check_size("the number of members", len(infos), limits["members"], "members")
    _check_size("the unpacked size", sum(i.file_size for i in infos), limits["unpacked_bytes"])


def _check_arrays(archive: zipfile.ZipFile) -> None:
    """Each ``.npy`` member: a header that describes exactly its bytes, no object dtype."""
    import numpy as np
    from numpy.lib import format as npy

    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            continue
        with archive.open(info) as fh:
            read = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}
            shape, _, dtype = read[npy.read_magic(fh)](fh, max_header_size=10_000)
            if dtype.hasobject:
                raise ValueError(f"{info.filename} holds Python objects")
            expected = fh.tell() + int(np.prod(shape, dtype=np.uint64)) * dtype.itemsize
            if expected != info.file_size:
                raise ValueError(f"{info.filename}'s header does not match its size")


def read_weights(path, names, *, version: int, message: str, fields=()) -> tuple[dict, list]:
    """The JSON configuration and the arrays ``names`` of a weights ``.npz``, checked.

    Read without pickle, within :data:`MODEL_FILE_LIMITS`, each array's header matching its
    bytes, the configuration an object with ``format`` equal to ``version`` and the keys
    ``fields``; anything else raises ValueError with ``message`` formatted with the path and
    the error.
    """
    import numpy as np

    try:
        with open(path, "rb") as fh:  # opened once: checked, then read
            with zipfile.ZipFile(fh) as archive:
                _check_members(archive)
                _check_arrays(archive)
            fh.seek(0)
            with np.load(fh, allow_pickle=False) as z:
                config = json.loads(str(z["config"]))
                arrays = [z[name] for name in names]
        found = config.get("format") if isinstance(config, dict) else None
        if found != version:
            raise ValueError(f"format {found!r}, expected {version}")
        missing = [field for field in fields if field not in config]
        if missing:
            raise ValueError(f"its configuration has no {', '.join(missing)}")
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(message.format(path=path, error=err)) from None
    return config, arrays


def _check_file(data: bytes) -> set[str]:
    """Bounds, schema and arrays of a model file's bytes; the untrusted types it names."""
    if not data:
        raise ValueError("the file is empty")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        _check_members(archive)
        info = archive.getinfo("schema.json")
        _check_size("schema.json", info.file_size, MODEL_FILE_LIMITS["schema_bytes"])
        schema = json.loads(archive.read(info))
        untrusted = _schema_types(schema)
        if not untrusted:
            _check_arrays(archive)
    return untrusted


def _check_output(path) -> Path:
    """``path`` as a Path whose directory exists, checked before any work is done."""
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(MSG_NO_DIRECTORY.format(path=path, parent=path.parent))
    return path


def save(estimator, path) -> None:
    """Write a fitted (or unfitted) skriskrank estimator to ``path`` without pickle.

    Parameters
    ----------
    estimator : estimator
        A skriskrank step, a :class:`~sklearn.pipeline.Pipeline` of them, or an auditor.
    path : str or path-like
        The file to write (conventionally ``*.skops``); written atomically.

    Raises
    ------
    TypeError
        If the estimator's state holds a type that :func:`load` would refuse.
    FileNotFoundError
        If the directory of ``path`` does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from skriskrank import RuleFilter, load, save
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "filter.skops"
    >>> save(RuleFilter(k=3), path)
    >>> load(path)
    RuleFilter(k=3)
    """
    import skops.io as sio

    path = _check_output(path)
    name = type(estimator).__name__
    try:
        data = sio.dumps(estimator)
    except Exception as exc:  # torch objects, unsupported dtypes: say what, not skops' words
        raise TypeError(MSG_CANNOT_SAVE.format(
            name=name, what=f"{type(exc).__name__}: {exc}")) from exc
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        extra = _schema_types(json.loads(archive.read("schema.json")))
    if extra:  # load() would refuse the file: fail now, not on the other side
        raise TypeError(MSG_CANNOT_SAVE.format(name=name, what=", ".join(sorted(extra))))
    write_atomically(path, lambda tmp: Path(tmp).write_bytes(data))


def load(path):
    """Load an estimator written by :func:`save`, refusing anything else before building it.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save`.

    Returns
    -------
    estimator : estimator
        The estimator, as saved; its encoder reloads by name or path on first use.

    Raises
    ------
    UntrustedTypeError
        If the file names a type that :func:`save` never writes (checked before anything in
        the file is imported or built).
    ModelFileError
        If the file is empty, larger than ``MODEL_FILE_LIMITS`` allows, truncated,
        corrupted, or holds something else than an estimator with valid parameters.
    """
    import skops.io as sio
    from sklearn.base import BaseEstimator

    path = Path(path)
    try:
        if not path.is_file():
            raise FileNotFoundError(f"Model file not found: {path}")
        _check_size("the file", path.stat().st_size, MODEL_FILE_LIMITS["file_bytes"])
        data = path.read_bytes()
        untrusted = _check_file(data)  # imports and builds nothing
        if untrusted:
            raise UntrustedTypeError(path, untrusted)
        trusted = sorted({name for _, name in _trusted_nodes()})
        obj = sio.loads(data, trusted=trusted)  # skops audits again before building
        if not isinstance(obj, BaseEstimator):
            raise ModelFileError(MSG_NOT_ESTIMATOR.format(path=str(path),
                                                          type=type(obj).__name__))
        _validate_tree(obj)
    except (FileNotFoundError, ModelFileError):
        raise
    except (Exception, RecursionError) as exc:  # BadZipFile, KeyError, JSON errors, ...
        raise ModelFileError(MSG_NOT_MODEL.format(path=str(path), error=exc)) from exc
    return obj


def _validate_tree(estimator) -> None:
    """Check the parameters of ``estimator`` and of every estimator inside it."""
    from sklearn.base import BaseEstimator

    if hasattr(estimator, "_validate_params"):
        estimator._validate_params()
    steps = [step for _, step in getattr(estimator, "steps", ())]
    for value in [*estimator.get_params(deep=False).values(), *steps]:
        if isinstance(value, BaseEstimator):
            _validate_tree(value)
