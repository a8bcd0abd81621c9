"""The tool catalogue: names, descriptions, risk levels, permissions, parameters and hints."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

import numpy as np

from ._hints import HINT_DEFAULTS, _check_hints, _declares_destructive, _hint_permissions
from ._inputs import check_tool_name, strip_invisible
from ._permissions import (
    MSG_BAD_PERMISSION,
    PERMISSION_CATEGORIES,
    _compile_keywords,
    _derive,
    _match_text,
)
from ._rubric import (
    UNKNOWN_RISK,
    check_level,
    format_permissions,
    is_missing,
    parse_permissions,
)
from ._tool_text import _check_parameters, _render_text

__all__ = ["RISK_SOURCES", "ToolRegistry"]

#: Where a tool's risk level came from: a person (or a released benchmark) declared it, or
#: :class:`~skriskrank.RiskAuditor` predicted it; ``"unknown"`` marks an unlabelled tool.
RISK_SOURCES = ("declared", "predicted", "unknown")

MSG_EMPTY_REGISTRY = "A ToolRegistry needs at least one tool."
MSG_BAD_NAME = "Tool #{i}: name must be a non-empty string, got {name!r}."
MSG_DUPLICATE_NAME = "Duplicate tool name {name!r} (records #{first} and #{second})."
MSG_EMPTY_DESCRIPTION = "Tool {name!r}: description must be a non-empty string, got {desc!r}."
MSG_UNKNOWN_TOOL = "Unknown tool name(s) not in the registry: {names}."
MSG_MISSING_COLUMN = "from_frame needs a {col!r} column; the frame has {cols}."
MSG_FLAGS_LENGTH = "flags must hold one set of flags per tool: {n} tools but {got}."
MSG_BAD_FLAGS = "Tool {name!r}: flags must be a list of words, got {value!r}."
MSG_BAD_RISK_SOURCE = "source must be one of {allowed}, got {source!r}."
MSG_RISK_LENGTH = "levels must have one entry per tool: {n} tools but {got} levels."
MSG_BAD_SERVER = ("Tool {name!r}: server must be a non-empty string of at most 256 characters, "
                  "got {value!r}.")

def _check_flags(name: str, flags) -> frozenset[str]:
    """A tool's flags as a frozenset of words (a cell such as ``"injection;stuffing"``)."""
    if is_missing(flags):
        return frozenset()
    if isinstance(flags, str):
        flags = flags.split(";")
    if not isinstance(flags, Iterable) or not all(isinstance(f, str) for f in flags):
        raise ValueError(MSG_BAD_FLAGS.format(name=name, value=flags))
    return frozenset(f.strip() for f in flags if f.strip())


class ToolRegistry:
    """The audited tool catalogue that every skriskrank step ranks over.

    A registry is immutable: build it with :meth:`from_records` or :meth:`from_frame`. It is
    shared, not copied, by :func:`copy.deepcopy` and therefore by :func:`sklearn.base.clone`,
    so a ``GridSearchCV`` over a pipeline holding a registry keeps one catalogue in memory.

    Parameters
    ----------
    names : sequence of str
        Unique, non-empty tool names, without control or invisible characters.
    descriptions : sequence of str
        Non-empty descriptions, one per tool.
    risk : sequence of int or None
        Ordinal risk levels 1..5; ``None`` marks an unlabelled tool (stored as
        :data:`UNKNOWN_RISK`).
    permissions : sequence of iterable of str or None, default=None
        Explicit permission categories per tool. ``None`` (for the whole argument or one tool)
        derives them from the name and description with ``permission_keywords``.
    permission_keywords : mapping of str to iterable of str, default=None
        Keyword rules for derived permissions; ``None`` uses :data:`DEFAULT_PERMISSION_KEYWORDS`.
    parameters : sequence of sequence of (str, str) or None, default=None
        Each tool's parameters as ``(name, description)`` pairs (``""`` for no description)
        or a mapping from names to descriptions; they join the encoder's text and the words
        permissions are derived from.
    annotations : sequence of mapping or None, default=None
        The MCP hints each tool's author declared (``readOnlyHint``, ``destructiveHint``,
        ``idempotentHint``, ``openWorldHint``, booleans, and ``title``); absent hints take
        :data:`HINT_DEFAULTS`. Declared hints add permission categories, never remove them.
    risk_source : sequence of {"declared", "predicted"} or None, default=None
        Where each level came from; ``None`` means declared.
    trust_hints : sequence of bool or None, default=None
        Per tool, whether its hints come from a server the user controls (see
        :class:`RiskAuditor`); ``None`` trusts none.
    flags : sequence of iterable of str or None, default=None
        What a review found in each tool, for example ``"injection"``; a tool whose
        description held invisible characters (removed here) is flagged ``"injection"``.
    servers : sequence of str or None, default=None
        The MCP server (or other source) each tool comes from; ``None`` for one not known.
        Tools of one server are used together, which :class:`GraphSmoother` can read.
    text_template : str or callable, default=None
        The encoder's text per tool: a format string with ``{name}``, ``{description}`` and
        ``{parameters}`` (:func:`format_parameters`), or a callable ``(name, description,
        parameters) -> str`` given the ``(name, description)`` pairs. ``None`` is
        ``"{name}: {description}"`` for a tool without parameters and
        ``"{name}: {description} Parameters: {parameters}"`` for one with parameters.

    Attributes
    ----------
    names : ndarray of object, shape (n_tools,)
        Tool names, in registry order.
    descriptions : ndarray of object, shape (n_tools,)
        Tool descriptions.
    risk : ndarray of int, shape (n_tools,)
        Risk levels; unlabelled tools hold :data:`UNKNOWN_RISK`, which compares as high risk.
    permissions : tuple of frozenset of str
        Permission categories per tool.
    permission_matrix : ndarray of bool, shape (n_tools, 5)
        Column ``j`` is :data:`PERMISSION_CATEGORIES` ``[j]``.
    permission_counts : ndarray of int, shape (n_tools,)
        Number of high-risk permission categories per tool.
    parameters : tuple of tuple of (str, str)
        Each tool's ``(name, description)`` parameter pairs (empty for none).
    declared_hints : tuple of mapping
        The hints each tool's author set, read-only; :attr:`annotations` adds the defaults
        and :attr:`declares_destructive` tells which tools are marked destructive.
    risk_predicted : ndarray of bool, shape (n_tools,)
        True where the level was predicted (:meth:`with_risk`); :attr:`risk_source` in words.
    hints_trusted : ndarray of bool, shape (n_tools,)
        True where the tool's hints may lower its level (``load_tools(trust_hints=True)``).
    flags : tuple of frozenset of str
        Per tool, what was found in its text (see the ``flags`` parameter).
    servers : tuple of str or None
        Per tool, its server (see the ``servers`` parameter).
    fingerprint : str
        A SHA-1 of names, descriptions, risk and permissions, and, for tools that have them,
        of the encoder's text, the declared hints, trust and predicted-level flags; two
        registries with the same fingerprint hold the same catalogue.

    See Also
    --------
    skriskrank.datasets.load_ultratool : A registry with the paper's released risk labels.

    Examples
    --------
    >>> from skriskrank import ToolRegistry
    >>> reg = ToolRegistry.from_records([
    ...     {"name": "read_file", "description": "Read a text file", "risk": 1},
    ...     {"name": "delete_file", "description": "Delete a file from disk", "risk": 4},
    ...     {"name": "run_shell", "description": "Run a bash command", "risk": None},
    ... ])
    >>> len(reg)
    3
    >>> reg.risk.tolist()
    [1, 4, 99]
    >>> reg.permission_counts.tolist()
    [0, 1, 1]
    >>> reg.index_of(["run_shell", "read_file"]).tolist()
    [2, 0]
    """

    def __init__(self, names, descriptions, risk, permissions=None, *,
                 permission_keywords: Mapping[str, Iterable[str]] | None = None, parameters=None,
                 annotations=None, risk_source=None, trust_hints=None, flags=None, servers=None,
                 text_template: str | Callable | None = None):
        names, descriptions, risk = list(names), list(descriptions), list(risk)
        if not names:
            raise ValueError(MSG_EMPTY_REGISTRY)
        if not (len(names) == len(descriptions) == len(risk)):
            raise ValueError(f"names, descriptions and risk must have one entry per tool; got "
                             f"{len(names)}, {len(descriptions)} and {len(risk)}.")
        per_tool = {"permissions": permissions, "parameters": parameters,
                    "annotations": annotations, "risk_source": risk_source,
                    "trust_hints": trust_hints, "flags": flags, "servers": servers}
        for field, values in per_tool.items():
            values = [None] * len(names) if values is None else list(values)
            if len(values) != len(names):
                raise ValueError(f"{field} must have one entry per tool; got {len(values)} for "
                                 f"{len(names)} tools.")
            per_tool[field] = values
        compiled = _compile_keywords(permission_keywords)
        seen: dict[str, int] = {}
        risks, perms, params_all, hints_all, predicted, trusted, texts, flags_all, servers_all = (
            [] for _ in range(9))
        rows = zip(names, descriptions, risk, *per_tool.values(), strict=True)
        for i, (name, desc, r, p, params, hints, source, trust, flag, server) in enumerate(rows):
            if not isinstance(name, str) or not name.strip():
                raise ValueError(MSG_BAD_NAME.format(i=i, name=name))
            check_tool_name(name, f"Tool #{i}'s name")
            if name in seen:
                raise ValueError(MSG_DUPLICATE_NAME.format(name=name, first=seen[name], second=i))
            seen[name] = i
            if not isinstance(desc, str) or not desc.strip():
                raise ValueError(MSG_EMPTY_DESCRIPTION.format(name=name, desc=desc))
            flag = _check_flags(name, flag)
            desc, hidden = strip_invisible(desc, f"Tool {name!r}'s description")
            params = _check_parameters(name, params)
            stripped = [strip_invisible(f"{pn}\x1f{pd}", f"Tool {name!r}'s parameters")
                        for pn, pd in params]
            params = tuple(tuple(text.split("\x1f", 1)) for text, _ in stripped)
            if hidden or any(h for _, h in stripped):
                flag = flag | {"injection"}
            if not desc.strip():
                raise ValueError(MSG_EMPTY_DESCRIPTION.format(name=name, desc=desc))
            flags_all.append(flag)
            if is_missing(server):
                server = None
            elif not isinstance(server, str) or not server.strip() or len(server) > 256:
                raise ValueError(MSG_BAD_SERVER.format(name=name, value=str(server)[:80]))
            servers_all.append(server)
            descriptions[i] = desc
            risks.append(check_level(r, f"Tool {name!r}"))
            hints = _check_hints(name, hints)
            if is_missing(source) or source == "unknown":  # to_frame's word for no level
                source = "declared"
            if source not in RISK_SOURCES[:2]:
                raise ValueError(MSG_BAD_RISK_SOURCE.format(allowed=RISK_SOURCES[:2],
                                                            source=source))
            params_all.append(params)
            hints_all.append(hints)
            # An unknown level was neither declared nor predicted.
            predicted.append(source == "predicted" and risks[-1] != UNKNOWN_RISK)
            trusted.append(bool(trust))
            texts.append(_render_text(text_template, name, desc, params))
            p = parse_permissions(p)  # a set, a CSV cell ("file_write;network_access"), None
            if p is None:
                # Parameters are part of what a tool does: a "url" or "password" parameter
                # derives its category like the same word in the description.
                text = " ".join([name, desc, *(f"{pn} {pd}" for pn, pd in params)])
                p = _derive(_match_text(text), compiled) | _hint_permissions(hints)
            bad = sorted(p - set(PERMISSION_CATEGORIES))
            if bad:
                raise ValueError(MSG_BAD_PERMISSION.format(
                    name=name, perm=bad[0], allowed=list(PERMISSION_CATEGORIES)))
            perms.append(p)
        self._index = seen
        self.names = np.array(names, dtype=object)
        self.descriptions = np.array(descriptions, dtype=object)
        self.risk = np.array(risks, dtype=np.int64)
        self.permissions = tuple(perms)
        self.permission_matrix = np.array([[c in p for c in PERMISSION_CATEGORIES] for p in perms],
                                          dtype=bool)
        self.permission_counts = self.permission_matrix.sum(axis=1, dtype=np.int64)
        self.parameters = tuple(params_all)
        self.declared_hints = tuple(hints_all)
        self.risk_predicted = np.array(predicted, dtype=bool)
        self.hints_trusted = np.array(trusted, dtype=bool)
        self.flags = tuple(flags_all)
        self.servers = tuple(servers_all)
        self.text_template = text_template
        self._texts = tuple(texts)
        for arr in self._arrays():
            arr.flags.writeable = False
        h = hashlib.sha1()
        default_text = text_template is None
        for i, (n, d, r, p) in enumerate(zip(names, descriptions, risks, perms, strict=True)):
            h.update(f"{n}\x1f{d}\x1f{r}\x1f{','.join(sorted(p))}\x1e".encode())
            # The fields that came with parameters and hints join the hash only where a tool
            # has them, so a registry without them keeps the fingerprint it always had (the
            # embedding and fit caches are keyed by it).
            if flags_all[i]:
                h.update(f"\x1c{','.join(sorted(flags_all[i]))}".encode())
            if servers_all[i] is not None:
                h.update(f"\x1b{servers_all[i]}".encode())
            if params_all[i] or hints_all[i] or predicted[i] or trusted[i] or not default_text:
                hints = ",".join(f"{k}={v}" for k, v in hints_all[i].items())
                h.update(f"\x1d{texts[i]}\x1f{hints}\x1f{int(predicted[i])}\x1f{int(trusted[i])}"
                         "\x1e".encode())
        self.fingerprint = h.hexdigest()

    def _arrays(self):
        return (self.names, self.descriptions, self.risk, self.permission_matrix,
                self.permission_counts, self.risk_predicted, self.hints_trusted)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_records(cls, records: Iterable[Mapping], *,
                     permission_keywords: Mapping[str, Iterable[str]] | None = None,
                     text_template: str | Callable | None = None) -> ToolRegistry:
        """Build a registry from mappings (``name``, ``description``, ``risk``, ``permissions``).

        Parameters
        ----------
        records : iterable of mapping
            Each has ``name`` and ``description``; ``risk`` (int 1..5 or None),
            ``permissions`` (iterable of categories), ``parameters`` (``(name,
            description)`` pairs), ``annotations`` (declared MCP hints), ``risk_source``
            (``"declared"`` or ``"predicted"``), ``trust_hints`` (bool), ``flags`` and
            ``server`` (str) are optional.
            Explicit permissions win over derived ones.
        permission_keywords, text_template
            As for :class:`ToolRegistry`.

        Returns
        -------
        registry : ToolRegistry
        """
        records = list(records)
        for i, rec in enumerate(records):
            if not isinstance(rec, Mapping):
                raise ValueError(f"Tool record #{i} must be a mapping, got {type(rec).__name__}.")
        fields = ("name", "description", "risk", "permissions", "parameters", "annotations",
                  "risk_source", "trust_hints", "flags")
        columns = {key: [rec.get(key) for rec in records] for key in fields}
        columns["servers"] = [rec.get("server") for rec in records]
        return cls(columns.pop("name"), columns.pop("description"), **columns,
                   permission_keywords=permission_keywords, text_template=text_template)

    @classmethod
    def from_frame(cls, df, *,
                   permission_keywords: Mapping[str, Iterable[str]] | None = None) -> ToolRegistry:
        """Build a registry from a :class:`pandas.DataFrame`, as :meth:`to_frame` writes it.

        Parameters
        ----------
        df : pandas.DataFrame
            Columns ``name`` and ``description``, optionally ``risk`` (missing values mean
            unknown), ``permissions`` (sets, or cells of the one format: categories
            joined by ``;``, ``"none"`` for none, blank to derive them), ``risk_source``,
            ``flags`` and ``server``.
        permission_keywords
            As for :class:`ToolRegistry`.

        Returns
        -------
        registry : ToolRegistry
        """
        for col in ("name", "description"):
            if col not in df.columns:
                raise ValueError(MSG_MISSING_COLUMN.format(col=col, cols=list(df.columns)))
        fields = ("name", "description", "risk", "permissions", "risk_source", "flags", "server")
        return cls.from_records(df[[c for c in fields if c in df.columns]].to_dict("records"),
                                permission_keywords=permission_keywords)

    # -- access -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name) -> bool:
        return name in self._index

    def __repr__(self) -> str:
        return f"ToolRegistry(n_tools={len(self)}, fingerprint={self.fingerprint[:10]!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, ToolRegistry) and other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __deepcopy__(self, memo):
        return self

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.declared_hints = tuple(MappingProxyType(h) for h in self.declared_hints)
        for arr in self._arrays():
            arr.flags.writeable = False

    def __getstate__(self):
        state = self.__dict__.copy()
        # MappingProxyType does not pickle: store the declared hints as plain dicts.
        state["declared_hints"] = tuple(dict(h) for h in self.declared_hints)
        return state

    @property
    def texts(self) -> list[str]:
        """The text the encoder embeds, per tool (see the ``text_template`` parameter)."""
        return list(self._texts)

    @property
    def annotations(self) -> tuple[Mapping[str, object], ...]:
        """Each tool's MCP hints, absent ones at the cautious :data:`HINT_DEFAULTS`.

        A tool without hints (every OpenAI or Anthropic tool, every tool of a CSV) reads as
        not read-only, destructive and open-world; ``declared_hints`` holds only what was set.
        """
        return tuple(
            MappingProxyType({**HINT_DEFAULTS, **{k: v for k, v in h.items() if k != "title"}})
            for h in self.declared_hints)

    @property
    def declares_destructive(self) -> np.ndarray:
        """True where the tool's author marks it destructive (see ``declared_hints``).

        ``destructiveHint: true``, or ``readOnlyHint: false`` with ``destructiveHint`` left at
        its default; a tool whose author set neither hint has declared nothing.
        """
        return np.array([_declares_destructive(h) for h in self.declared_hints], dtype=bool)

    @property
    def risk_source(self) -> np.ndarray:
        """Per tool ``"declared"``, ``"predicted"`` or ``"unknown"``."""
        src = np.where(self.risk_predicted, "predicted", "declared").astype(object)
        src[~self.risk_known] = "unknown"
        return src

    @property
    def risk_known(self) -> np.ndarray:
        """Boolean mask, False where the tool has no risk label."""
        return self.risk != UNKNOWN_RISK

    def index_of(self, names) -> np.ndarray:
        """Registry indices of tool names.

        Parameters
        ----------
        names : str or iterable of str
            Tool names.

        Returns
        -------
        indices : ndarray of int
            One index per name (a 0-d array for a single string).

        Raises
        ------
        ValueError
            Naming every tool that is not in the registry.
        """
        if isinstance(names, str):
            return np.asarray(self.index_of([names])[0])
        names = list(names)
        missing = [n for n in names if n not in self._index]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:10])
            more = f" (and {len(missing) - 10} more)" if len(missing) > 10 else ""
            raise ValueError(MSG_UNKNOWN_TOOL.format(names=shown + more))
        return np.fromiter((self._index[n] for n in names), dtype=np.int64, count=len(names))

    def risk_of(self, names) -> np.ndarray:
        """Risk levels of tool names (unknown as :data:`UNKNOWN_RISK`)."""
        return self.risk[self.index_of(names)]

    def _records(self) -> list[dict]:
        return [{"name": n, "description": d, "risk": None if r == UNKNOWN_RISK else int(r),
                 "permissions": p, "parameters": params, "annotations": dict(h),
                 "risk_source": "predicted" if pred else "declared", "trust_hints": bool(t),
                 "flags": f, "server": server}
                for n, d, r, p, params, h, pred, t, f, server in zip(
                    self.names, self.descriptions, self.risk, self.permissions, self.parameters,
                    self.declared_hints, self.risk_predicted, self.hints_trusted, self.flags,
                    self.servers, strict=True)]

    def with_risk(self, levels, *, source: str = "predicted") -> ToolRegistry:
        """A copy of the registry with new risk levels, remembering where they came from.

        The pipeline's metrics, risk head and rule filter read ``risk`` and treat a
        predicted level like a declared one; :attr:`risk_source` tells them apart.

        Parameters
        ----------
        levels : array-like of int, or mapping of str to int or None
            One level 1..5 (or ``None``, unknown) per tool in registry order, for example
            ``RiskAuditor().predict(registry)``; or a mapping from tool names to levels, which
            changes only the tools it names.
        source : {"predicted", "declared"}, default="predicted"
            Recorded for the new levels in :attr:`risk_source`.

        Returns
        -------
        registry : ToolRegistry
            Same tools, texts, hints and permissions; new ``risk`` and ``risk_source``.

        Raises
        ------
        ValueError
            If ``source`` is unknown, ``levels`` has the wrong length, names a tool that is
            not in the registry, or holds a level outside 1..5 (naming the tool).

        Examples
        --------
        >>> from skriskrank import ToolRegistry
        >>> reg = ToolRegistry.from_records([
        ...     {"name": "read_file", "description": "Read a text file"},
        ...     {"name": "delete_file", "description": "Delete a file", "risk": 4}])
        >>> reg.risk.tolist(), reg.risk_source.tolist()
        ([99, 4], ['unknown', 'declared'])
        >>> new = reg.with_risk({"read_file": 1})
        >>> new.risk.tolist(), new.risk_source.tolist()
        ([1, 4], ['predicted', 'declared'])
        """
        if source not in RISK_SOURCES[:2]:
            raise ValueError(MSG_BAD_RISK_SOURCE.format(allowed=RISK_SOURCES[:2], source=source))
        records = self._records()
        if isinstance(levels, Mapping):
            updates = dict(zip(self.index_of(list(levels)).tolist(), levels.values(), strict=True))
        else:
            levels = list(np.asarray(levels, dtype=object).ravel()) if hasattr(
                levels, "__array__") else list(levels)
            if len(levels) != len(self):
                raise ValueError(MSG_RISK_LENGTH.format(n=len(self), got=len(levels)))
            updates = dict(enumerate(levels))
        for i, level in updates.items():
            if not is_missing(level) and level == UNKNOWN_RISK:
                level = None  # the registry's own unknown marker, handed back
            records[i].update(risk=level, risk_source=source)
        # Permissions as they are (derived ones included), so the copy changes only risk.
        return ToolRegistry.from_records(records, text_template=self.text_template)

    def with_flags(self, flags) -> ToolRegistry:
        """A copy of the registry with more flags: each tool keeps its own and gains these.

        Parameters
        ----------
        flags : sequence of iterable of str
            One collection of flags per tool in registry order, for example the keys of
            :func:`scan_tools`'s findings. Flags are only added, never removed.

        Returns
        -------
        registry : ToolRegistry
            Same tools, levels, hints and permissions; the union of the flags.

        Examples
        --------
        >>> from skriskrank import ToolRegistry
        >>> reg = ToolRegistry.from_records([{"name": "add", "description": "Add numbers"}])
        >>> reg.with_flags([{"stuffing"}]).flags
        (frozenset({'stuffing'}),)
        """
        flags = list(flags)
        if len(flags) != len(self):
            raise ValueError(MSG_FLAGS_LENGTH.format(n=len(self), got=len(flags)))
        records = self._records()
        for record, new in zip(records, flags, strict=True):
            record["flags"] = record["flags"] | _check_flags(record["name"], new)
        return ToolRegistry.from_records(records, text_template=self.text_template)

    def to_frame(self):
        """The registry as a :class:`pandas.DataFrame`, cells in the rubric's one format.

        ``risk`` is a nullable ``Int64`` column, ``<NA>`` where unknown; ``permissions`` joins
        each tool's categories with ``;`` (``"none"`` for none). A registry with predicted
        levels adds ``risk_source``, one with flagged tools ``flags``, one that knows its tools'
        servers ``server``. :meth:`from_frame`
        and :func:`~skriskrank.datasets.load_registry_csv` read all of them back.
        """
        import pandas as pd

        frame = pd.DataFrame({
            "name": self.names,
            "description": self.descriptions,
            # Nullable integers: a plain column would turn the unknown levels into NaN and
            # every level into a float.
            "risk": pd.array([None if r == UNKNOWN_RISK else int(r) for r in self.risk],
                             dtype="Int64"),
            "permissions": [format_permissions(p) for p in self.permissions],
        })
        # Only registries that have them grow these columns, so a registry of declared
        # levels keeps the four columns of load_registry_csv's format.
        if self.risk_predicted.any():
            frame["risk_source"] = self.risk_source
        if any(self.flags):
            frame["flags"] = [";".join(sorted(f)) for f in self.flags]
        if any(s is not None for s in self.servers):
            frame["server"] = pd.array(self.servers, dtype=object)
        return frame
