"""load_tools: an agent's own tool catalogue (MCP, OpenAI, Anthropic) as a ToolRegistry."""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike
from pathlib import Path

from ._inputs import MCP_TOOL_NAME
from ._registry import ToolRegistry
from ._rubric import is_level

__all__ = ["load_tools"]


MSG_EMPTY_SOURCE = "{where}: no tools found (an empty file, list or tools/list result)."
MSG_BAD_JSON = "{where}, line {line}: not valid JSON ({error})."
MSG_UNKNOWN_SHAPE = (
    "{where}: unrecognised tool catalogue, got {got}. Expected an MCP tools/list result "
    '({{"tools": [...]}}) or several of them (a list, or an object mapping server names to '
    'results), or a list of tools: MCP ({{"name", "description", "inputSchema"}}), OpenAI '
    'Chat Completions ({{"type": "function", "function": {{"name", "description", '
    '"parameters"}}}}), OpenAI Responses ({{"type": "function", "name", "description", '
    '"parameters"}}) or Anthropic ({{"name", "description", "input_schema"}}).'
)
MSG_UNKNOWN_TOOL_SHAPE = ("{where}, tool #{i}: unrecognised tool {got}; expected an MCP, OpenAI "
                          'or Anthropic tool definition (an object with a "name", or {{"type": '
                          '"function", "function": {{...}}}}).')
MSG_NO_NAME = "{where}, tool #{i}: the tool has no name (a non-empty string), got {name!r}."
MSG_BAD_NAME = ("{where}, tool #{i}: the name {name} ({n} characters) is not a valid tool name: "
                "MCP allows 1 to 128 letters, digits, '_', '-' and '.'.")
MSG_BAD_SCHEMA = ("{where}, tool {name!r}: {field} must be a JSON Schema object "
                  '({{"type": "object", "properties": {{...}}}}), got {value!r}.')
MSG_BAD_PROPERTIES = ("{where}, tool {name!r}: {field}.properties must map parameter names to "
                      "schemas, got {value!r}.")
MSG_BAD_DESCRIPTION = "{where}, tool {name!r}: description must be a string, got {value!r}."
MSG_BAD_ANNOTATIONS = "{where}, tool {name!r}: annotations must be an object, got {value!r}."
MSG_MISSING_FILE = "Tool catalogue not found: {path}"
MSG_DUPLICATE_TOOL = "Duplicate tool name {name!r}: defined by {first} and by {second}."
MSG_RISK_NOT_MAPPING = ("risk must map tool names to levels 1..5 (or to {{\"risk_level\": "
                        "level}}), got {type}.")
MSG_RISK_UNKNOWN = "risk names tool(s) not in the catalogue: {names}."
MSG_LABELS = ("{path}: labels must be a JSON object mapping tool names to levels 1..5 "
              '(or to {{"risk_level": level}}), got {type}.')
MSG_BAD_LEVEL = "Tool {name!r}: risk level must be an integer in 1..5 or null, got {value!r}."


def _describe(obj) -> str:
    if isinstance(obj, Mapping):
        keys = ", ".join(repr(k) for k in list(obj)[:6])
        return f"an object with keys [{keys}]"
    if isinstance(obj, list):
        return f"a list of {len(obj)} {type(obj[0]).__name__ if obj else 'items'}"
    return f"a {type(obj).__name__}"


def _tool_format(tool) -> str | None:
    """Which format one tool definition is in, or None if it is not a tool."""
    if not isinstance(tool, Mapping):
        return None
    if isinstance(tool.get("function"), Mapping):
        return "openai-chat"
    if tool.get("type") == "function":
        return "openai-responses"
    if "input_schema" in tool:
        return "anthropic"
    if "inputSchema" in tool or "annotations" in tool:
        return "mcp"
    if "parameters" in tool:
        return "openai-responses"  # a bare function definition: OpenAI's flat form
    if "name" in tool or "description" in tool:
        # MCP requires inputSchema, but some servers leave it out; a described object without
        # a name is a tool that lacks one (and is reported so).
        return "mcp"
    return None


def _is_server_result(obj) -> bool:
    if not isinstance(obj, Mapping):
        return False
    if isinstance(obj.get("result"), Mapping) and "tools" in obj["result"]:
        return True  # a whole JSON-RPC response
    return "tools" in obj and _tool_format(obj) is None


def _server_tools(obj, where: str, server) -> tuple[str, str | None, list]:
    """``(where, server, tools)`` of one server's tools/list result."""
    if "tools" not in obj and isinstance(obj.get("result"), Mapping):
        obj = obj["result"]
    tools = obj.get("tools")
    if not isinstance(tools, list):
        raise ValueError(MSG_UNKNOWN_SHAPE.format(where=where,
                                                  got=f"'tools' as {_describe(tools)}"))
    return where, server, tools


def _catalogues(source, where: str, server=None) -> list[tuple[str, str | None, list]]:
    """``(where, server, tools)`` per server of a parsed source (``server``: a file's stem)."""
    if isinstance(source, Mapping):
        if _is_server_result(source):
            return [_server_tools(source, where, server)]
        if _tool_format(source) is not None:
            return [(where, server, [source])]
        if source and all(_is_server_result(v) for v in source.values()):
            # {"filesystem": {"tools": [...]}, "git": {...}}: several servers, by name.
            return [_server_tools(v, f"{where}, server {k!r}", str(k))
                    for k, v in source.items()]
        raise ValueError(MSG_UNKNOWN_SHAPE.format(where=where, got=_describe(source)))
    if isinstance(source, list):
        if source and all(_is_server_result(s) for s in source):
            return [_server_tools(s, f"{where}, result #{j}", f"{server or 'result'} #{j}")
                    for j, s in enumerate(source)]
        if any(_is_server_result(s) for s in source):
            raise ValueError(MSG_UNKNOWN_SHAPE.format(where=where,
                                                      got="a list mixing results and tools"))
        return [(where, server, source)]
    raise ValueError(MSG_UNKNOWN_SHAPE.format(where=where, got=_describe(source)))


def _parameters(schema, name: str, where: str, field: str) -> list[tuple[str, str]]:
    """``(name, description)`` of each top-level property of an input schema."""
    if schema is None:
        return []
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise ValueError(MSG_BAD_SCHEMA.format(where=where, name=name, field=field, value=schema))
    props = schema.get("properties", {})
    if props is None:
        return []
    if not isinstance(props, Mapping):
        raise ValueError(MSG_BAD_PROPERTIES.format(where=where, name=name, field=field,
                                                   value=props))
    params = []
    for pname, pschema in props.items():
        # A title is the next best thing when a schema has no description.
        desc = (pschema.get("description") or pschema.get("title")
                if isinstance(pschema, Mapping) else "")
        params.append((str(pname), desc if isinstance(desc, str) else ""))
    return params


def _normalise(tool, i: int, where: str) -> dict:
    """One tool, whatever its format, as a ToolRegistry record."""
    fmt = _tool_format(tool)
    if fmt is None:
        raise ValueError(MSG_UNKNOWN_TOOL_SHAPE.format(where=where, i=i, got=_describe(tool)))
    body = tool["function"] if fmt == "openai-chat" else tool
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(MSG_NO_NAME.format(where=where, i=i, name=name))
    if not MCP_TOOL_NAME.fullmatch(name):
        shown = repr(name[:60]) + ("..." if len(name) > 60 else "")
        raise ValueError(MSG_BAD_NAME.format(where=where, i=i, name=shown, n=len(name)))
    field = {"mcp": "inputSchema", "anthropic": "input_schema"}.get(fmt, "parameters")
    params = _parameters(body.get(field), name, where, field)
    annotations = tool.get("annotations") if fmt == "mcp" else None
    if annotations is not None and not isinstance(annotations, Mapping):
        raise ValueError(MSG_BAD_ANNOTATIONS.format(where=where, name=name, value=annotations))
    desc = body.get("description")
    if desc is not None and not isinstance(desc, str):
        raise ValueError(MSG_BAD_DESCRIPTION.format(where=where, name=name, value=desc))
    if not desc or not desc.strip():
        titles = [tool.get("title"), (annotations or {}).get("title")]
        desc = next((t for t in titles if isinstance(t, str) and t.strip()), name)
    return {"name": name, "description": " ".join(desc.split()), "parameters": params,
            "annotations": annotations, "schema": body.get(field)}


def load_tools(source, *, risk=None, trust_hints: bool = False, scan: bool = True,
               text_template=None, cache=None) -> ToolRegistry:
    """Load an agent's tool catalogue, in MCP, OpenAI or Anthropic form, as a registry.

    The format is recognised from the shape of ``source`` and of each tool, so one call can
    read several MCP servers' ``tools/list`` results, or a list of OpenAI or Anthropic
    tools; the same tools in any of these forms give the same registry.

    Parameters
    ----------
    source : str, path-like, dict, list, or list of str or path-like
        A JSON file, or the parsed JSON, holding one of:

        - an MCP ``tools/list`` result ``{"tools": [...]}`` (or the JSON-RPC response
          around it), several of them in a list, or an object mapping server names to
          results; each tool has ``name``, optional ``title`` and ``description``,
          ``inputSchema`` and optional ``annotations``;
        - OpenAI Chat Completions tools ``[{"type": "function", "function": {"name",
          "description", "parameters"}}]`` or the Responses API's flat form
          ``[{"type": "function", "name", "description", "parameters"}]``;
        - Anthropic tools ``[{"name", "description", "input_schema"}]``.

        A list of paths reads several files as one catalogue.
    risk : mapping of str to int or None, default=None
        Declared levels 1..5 by tool name (a value may also be the paper's
        ``{"risk_level": level}``); tools it leaves out have unknown risk
        (:data:`skriskrank.UNKNOWN_RISK`, counted as high risk) until audited.
    trust_hints : bool, default=False
        Mark the hints of these servers as trusted: :class:`RiskAuditor` then lets a
        ``readOnlyHint: true`` lower a level. Leave it off for servers you do not control;
        the MCP specification says hints from untrusted servers are not guarantees.
    scan : bool, default=True
        Read the tools for signs of poisoning with :func:`scan_tools` (each server, or each
        file, counts as a server for ``shadowing``) and flag what is found
        (``ToolRegistry.flags``): a flagged tool is graded at least level 4 and ranks
        after every unflagged one. Turn it off only for servers you control.
    text_template : str or callable, default=None
        As for :class:`ToolRegistry`.
    cache : str or path-like, default=None
        A directory that keeps what the scan found in each tool's own text across
        processes, as for :func:`scan_tools` (``skriskrank serve --tools`` passes its
        ``--cache``): a restart looks each tool up instead of scanning it again.

    Returns
    -------
    registry : ToolRegistry
        Tools in source order, with their parameters (``ToolRegistry.parameters``), the
        hints their authors declared (``ToolRegistry.declared_hints``) and permission
        categories derived from the name, description, parameters and hints: a tool its
        author marks destructive gets ``file_write``, one marked open-world and not
        read-only ``network_access``. When the source holds several servers, each tool's
        server (``ToolRegistry.servers``) is its key in a mapping of servers, the name of
        its file (``"filesystem"`` for ``filesystem.json``), or its place in a list of
        results (``"result #1"``).

    Raises
    ------
    FileNotFoundError
        Naming a missing file.
    ValueError
        For an empty file or catalogue, invalid JSON (naming the line), an unknown shape
        (naming what was expected), a tool without a name, an input schema that is not an
        object, a non-boolean hint (naming the tool), a name defined twice (naming both
        places), or a ``risk`` level outside 1..5 or for a tool not in the catalogue.

    See Also
    --------
    RiskAuditor : Grades the tools that nobody has labelled.
    ToolRegistry.with_risk : Gives the registry the auditor's levels.

    Notes
    -----
    A tool's description is optional in MCP; without one the title stands in for it, and
    without a title the name. Only MCP tools have annotations (hints) to read.

    Examples
    --------
    >>> from skriskrank import load_tools
    >>> reg = load_tools({"tools": [
    ...     {"name": "read_file", "description": "Read a file",
    ...      "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    ...      "annotations": {"readOnlyHint": True}},
    ...     {"name": "delete_file", "description": "Delete a file",
    ...      "inputSchema": {"type": "object", "properties": {
    ...          "path": {"type": "string", "description": "File to delete"}}},
    ...      "annotations": {"destructiveHint": True}},
    ... ]})
    >>> reg.texts[1]
    'delete_file: Delete a file Parameters: path (File to delete)'
    >>> reg.risk.tolist(), reg.declares_destructive.tolist()
    ([99, 99], [False, True])
    >>> openai = load_tools([{"type": "function", "function": {
    ...     "name": "read_file", "description": "Read a file",
    ...     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])
    >>> openai.texts == reg.texts[:1]
    True
    """
    paths = [source] if isinstance(source, (str, PathLike)) else source
    if isinstance(paths, list) and paths and all(isinstance(p, (str, PathLike)) for p in paths):
        catalogues = [c for p in map(Path, paths) for c in _catalogues(
            _read_json(p, MSG_MISSING_FILE, MSG_EMPTY_SOURCE), str(p), p.stem)]
    else:
        catalogues = _catalogues(source, "tools")
    records, first, servers = [], {}, []
    for where, server, tools in catalogues:
        for i, tool in enumerate(tools):
            rec = _normalise(tool, i, where)
            here = f"{where} (tool #{i})"
            if rec["name"] in first:
                raise ValueError(MSG_DUPLICATE_TOOL.format(name=rec["name"],
                                                           first=first[rec["name"]], second=here))
            first[rec["name"]] = here
            rec["trust_hints"] = bool(trust_hints)
            # Servers group tools only where there are several of them.
            rec["server"] = server if len(catalogues) > 1 else None
            records.append(rec)
            servers.append(where)
    if not records:
        raise ValueError(MSG_EMPTY_SOURCE.format(where=", ".join(w for w, _, _ in catalogues)
                                                 or "tools"))
    if risk is not None:
        if not isinstance(risk, Mapping):
            raise ValueError(MSG_RISK_NOT_MAPPING.format(type=type(risk).__name__))
        unknown = sorted(set(risk) - set(first))
        if unknown:
            raise ValueError(MSG_RISK_UNKNOWN.format(names=", ".join(map(repr, unknown[:10]))))
        for rec in records:
            level = risk.get(rec["name"])
            if isinstance(level, Mapping):
                level = level.get("risk_level", level.get("risk"))
            if level is not None and not is_level(level):
                raise ValueError(MSG_BAD_LEVEL.format(name=rec["name"], value=level))
            rec["risk"] = level  # the registry stores it as an int
    # The registry keeps each schema's top-level parameters; the scan reads the rest too.
    schemas = [rec.pop("schema") for rec in records]
    registry = ToolRegistry.from_records(records, text_template=text_template)
    if scan:
        from ._poisoning import scan_tools

        findings = scan_tools(registry, servers=servers, cache=cache, schemas=schemas)
        if any(findings):
            registry = registry.with_flags(findings)
    return registry


def _read_json(path: Path, missing: str, empty: str | None = None):
    """The JSON of a file (a byte-order mark is allowed), naming the file in every error."""
    if not path.is_file():
        raise FileNotFoundError(missing.format(path=path))
    text = path.read_text(encoding="utf-8-sig")
    if empty and not text.strip():
        raise ValueError(empty.format(where=path))
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(MSG_BAD_JSON.format(where=path, line=err.lineno, error=err.msg)) from None


def read_levels(path) -> dict:
    """The levels file of ``--labels``: a JSON object of tool names to levels 1..5."""
    path = Path(path)
    labels = _read_json(path, "Labels file not found: {path}")
    if not isinstance(labels, dict):
        raise ValueError(MSG_LABELS.format(path=path, type=type(labels).__name__))
    return labels
