"""MCP tool annotations (hints): their defaults, their checks, and what they imply.

A hint is the server author's word, not a guarantee: it can raise a tool's risk (a tool
marked destructive gets the ``file_write`` category and a level of at least 3), never lower
it unless the user trusts the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ._rubric import is_missing

__all__ = ["HINT_DEFAULTS", "describe_hints", "hint_bounds"]

#: The MCP specification's tool annotations and their defaults: a hint a server leaves out
#: takes this value. ``destructiveHint`` matters only when ``readOnlyHint`` is false.
HINT_DEFAULTS: Mapping[str, bool] = MappingProxyType(
    {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
     "openWorldHint": True})

MSG_BAD_HINT = "Tool {name!r}: annotation {hint!r} must be true or false, got {value!r}."
MSG_UNKNOWN_HINT = "Tool {name!r}: unknown annotation {hint!r}; expected one of {allowed}."


def _check_hints(name: str, hints) -> Mapping[str, object]:
    """The hints a tool's author declared (no defaults filled in), as a read-only mapping."""
    if is_missing(hints):
        return MappingProxyType({})
    if not isinstance(hints, Mapping):
        raise ValueError(MSG_BAD_HINT.format(name=name, hint="annotations", value=hints))
    out = {}
    for key, value in hints.items():
        if key == "title":
            if value is not None and not isinstance(value, str):
                raise ValueError(MSG_BAD_HINT.format(name=name, hint=key, value=value))
            if value:
                out[key] = value
            continue
        if key not in HINT_DEFAULTS:
            raise ValueError(MSG_UNKNOWN_HINT.format(name=name, hint=key,
                                                     allowed=["title", *HINT_DEFAULTS]))
        if value is None:
            continue  # JSON null: not declared, the default applies
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(MSG_BAD_HINT.format(name=name, hint=key, value=value))
        out[key] = bool(value)
    return MappingProxyType(dict(sorted(out.items())))


def _declares_destructive(hints: Mapping[str, object]) -> bool:
    """Whether the author marks the tool destructive (see ToolRegistry.declares_destructive)."""
    if not ({"readOnlyHint", "destructiveHint"} & hints.keys()):
        return False
    full = {**HINT_DEFAULTS, **hints}
    return not full["readOnlyHint"] and bool(full["destructiveHint"])


def _hint_permissions(hints: Mapping[str, object]) -> frozenset[str]:
    """Permission categories that a tool's declared hints add (they never remove any)."""
    perms = set()
    if _declares_destructive(hints):
        # A destructive tool changes or deletes what it touches: the filter's "write" category.
        perms.add("file_write")
    if hints.get("openWorldHint") is True and hints.get("readOnlyHint") is not True:
        perms.add("network_access")
    return frozenset(perms)


#: How :func:`describe_hints` words each declared hint: ``(when true, when false)``.
_HINT_WORDS = {"readOnlyHint": ("read-only", "not read-only"),
               "destructiveHint": ("destructive", "non-destructive"),
               "idempotentHint": ("idempotent", "not idempotent"),
               "openWorldHint": ("open-world", "closed-world")}


def describe_hints(hints) -> str:
    """The declared hints in words, ``"read-only, closed-world"`` (``""`` for none)."""
    return ", ".join(_HINT_WORDS[k][not v] for k, v in sorted(hints.items()) if k in _HINT_WORDS)


def hint_bounds(registry) -> np.ndarray:
    """The levels each tool's hints allow by the rubric, as ``[lowest, highest]`` per tool.

    Marks are not levels: a read-only tool is level 1 or 2, or up to 3 when it reads secrets
    (sensitive data access is level 3); a tool its author marks destructive (as
    :attr:`ToolRegistry.declares_destructive` reads the hints) is level 3 to 5; one that
    writes but is marked non-destructive is level 2 to 4; a tool without hints could be any
    level. :meth:`RiskAuditor.fit` learns from such bounds beside exact levels.

    Parameters
    ----------
    registry : ToolRegistry
        The tools, with the hints their authors declared.

    Returns
    -------
    bounds : ndarray of int, shape (n_tools, 2)
        The lowest and highest level each tool's hints allow (``[1, 5]`` without hints).

    Examples
    --------
    >>> from skriskrank import hint_bounds, load_tools
    >>> reg = load_tools({"tools": [
    ...     {"name": "list_files", "annotations": {"readOnlyHint": True}},
    ...     {"name": "read_secret", "annotations": {"readOnlyHint": True}},
    ...     {"name": "drop_table", "annotations": {"destructiveHint": True}},
    ...     {"name": "add_tag", "annotations": {"readOnlyHint": False, "destructiveHint": False}},
    ...     {"name": "get_weather"}]}, scan=False)
    >>> hint_bounds(reg).tolist()
    [[1, 2], [1, 3], [3, 5], [2, 4], [1, 5]]
    """
    from ._axes import AXES
    from ._permissions import _words

    secrets = [bool(set(_words(text)) & AXES["secrets"]) for text in registry.texts]
    bounds = np.tile([1, 5], (len(registry), 1))
    for i, (hints, destructive) in enumerate(
            zip(registry.declared_hints, registry.declares_destructive, strict=True)):
        if hints.get("readOnlyHint") is True:
            bounds[i] = 1, 3 if secrets[i] else 2
        elif destructive:
            bounds[i] = 3, 5
        elif hints.get("destructiveHint") is False:
            bounds[i] = 2, 4
    return bounds
