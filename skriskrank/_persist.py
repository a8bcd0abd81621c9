"""Model files without pickle: ``save`` and ``load`` with skops.

A fitted pipeline is a tree of scikit-learn estimators, numpy arrays, a sparse graph and the
registry. :func:`save` writes it with :mod:`skops.io`: a zip of a JSON description and ``.npy``
members, no pickle. :func:`load` reads the file's list of types first and refuses it, before
importing or building anything, when it names a type outside skriskrank's trusted list; a
truncated or altered file is a :class:`ModelFileError` that names the path. The encoder is
referenced by model name or path, never stored.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

__all__ = ["ModelFileError", "UntrustedTypeError", "load", "save"]

MSG_NOT_MODEL = (
    "{path!r} is not a skriskrank model file (truncated, corrupted or not written by "
    "skriskrank.save): {error}"
)
MSG_UNTRUSTED = (
    "Refusing to load {path!r}: it names type(s) outside skriskrank's trusted list: {types}. "
    "Only files written by skriskrank.save load; nothing in the file was imported or built."
)
MSG_NOT_ESTIMATOR = "{path!r} holds a {type}, not an estimator."
MSG_CANNOT_SAVE = (
    "Cannot save {name} with skops: its state holds {what}, outside the types skriskrank.load "
    "trusts. Save skriskrank pipelines, steps and auditors (use joblib for anything else)."
)


class ModelFileError(ValueError):
    """A file that is not a readable skriskrank model (truncated, corrupted or tampered)."""


class UntrustedTypeError(ModelFileError):
    """A model file that names a type outside the trusted list; ``types`` lists them."""

    def __init__(self, path, types):
        self.types = sorted(types)
        super().__init__(MSG_UNTRUSTED.format(path=str(path), types=", ".join(self.types)))


def _trusted() -> frozenset[str]:
    """The type names a skriskrank model file may hold beyond skops' defaults.

    Every class defined in skriskrank's own modules, scipy's CSR array (the ToolGraph) and
    ``frozenset`` (permission sets): skops checks concrete class names, and its defaults list
    neither of the last two.
    """
    import scipy.sparse as sp

    import skriskrank.baselines  # noqa: F401  (its classes must be known when loading)

    names = {
        f"{name}.{obj.__name__}"
        for name, module in list(sys.modules.items())
        if name == "skriskrank" or name.startswith("skriskrank.")
        for obj in vars(module).values()
        if isinstance(obj, type) and obj.__module__ == name
    }
    return frozenset(names | {f"{sp.csr_array.__module__}.csr_array", "builtins.frozenset"})


def save(estimator, path) -> None:
    """Write a fitted (or unfitted) skriskrank estimator to ``path`` without pickle.

    Parameters
    ----------
    estimator : estimator
        A skriskrank step, a :class:`~sklearn.pipeline.Pipeline` of them, or an auditor.
    path : str or path-like
        The file to write (conventionally ``*.skops``); written atomically.

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

    name = type(estimator).__name__
    try:
        data = sio.dumps(estimator)
    except Exception as exc:  # torch objects, unsupported dtypes: say what, not skops' words
        raise TypeError(MSG_CANNOT_SAVE.format(
            name=name, what=f"{type(exc).__name__}: {exc}")) from exc
    extra = sorted(set(sio.get_untrusted_types(data=data)) - _trusted())
    if extra:  # load() would refuse the file: fail now, not on the other side
        raise TypeError(MSG_CANNOT_SAVE.format(name=name, what=", ".join(extra)))
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path):
    """Load an estimator written by :func:`save`, refusing any other type.

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
        If the file names a type outside the trusted list (checked before anything in the
        file is imported or built).
    ModelFileError
        If the file is empty, truncated, corrupted or holds something else than an estimator.
    """
    import skops.io as sio
    from sklearn.base import BaseEstimator

    data = Path(path).read_bytes()
    try:
        if not data:
            raise ValueError("the file is empty")
        # Reads the zip and its schema and lists the types; imports and builds nothing.
        untrusted = set(sio.get_untrusted_types(data=data))
    except Exception as exc:  # BadZipFile, KeyError, JSONDecodeError, ...: all one answer
        raise ModelFileError(MSG_NOT_MODEL.format(path=str(path), error=exc)) from exc
    trusted = _trusted()
    if untrusted - trusted:
        raise UntrustedTypeError(path, untrusted - trusted)
    try:
        obj = sio.loads(data, trusted=sorted(trusted))  # skops audits again before building
    except Exception as exc:
        raise ModelFileError(MSG_NOT_MODEL.format(path=str(path), error=exc)) from exc
    if not isinstance(obj, BaseEstimator):
        raise ModelFileError(MSG_NOT_ESTIMATOR.format(path=str(path), type=type(obj).__name__))
    return obj
