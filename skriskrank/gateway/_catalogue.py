"""One catalogue over the tools of every downstream server: names, levels, and the index.

Tool names are unique across servers: a name that two servers share is namespaced as
``server__tool`` for each of them (:data:`SEPARATOR`), and so is a name that starts with
another server's namespace (``other__``), which belongs to that server; other names stay as
the servers wrote them. Levels come from the reviewed levels file first (``--labels``), then
the authors' hints (which only raise), then the pretrained :class:`~skriskrank.RiskAuditor`.
A tool whose definition is malformed, or longer than ``MAX_TOOL_CHARS`` (256 KiB of JSON), is
left out with a warning naming its server; a reviewed tool whose definition changed since (its
SHA-256 differs), or one whose definition changed while the gateway ran, is flagged
``changed`` and its calls are refused until it is reviewed.
Every tool is scanned for poisoning (:func:`~skriskrank.scan_tools`, with its server, so a tool
imitating another server's is found); a flagged tool is graded at least level 4, ranks after
the unflagged ones, and its flags are in the review file. The pretrained pipeline ranks the
catalogue, or a pipeline fitted on the gateway's own log (``skriskrank fit --gateway CONFIG
--log LOG``) while the catalogue is the one it was fitted on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging

from .._encoder import DEFAULT_BACKEND
from .._inputs import MCP_TOOL_NAME, ArgumentSchema
from .._poisoning import MAX_SCHEMA_DEPTH

__all__ = ["SEPARATOR", "Catalogue", "build_catalogue", "tool_hash"]

MSG_ACCEPT_FLAGS = ("--labels: tool {name!r}: accept_flags must be a list of flags among "
                    "{allowed}, got {value!r}.")
MSG_OTHER_CATALOGUE = (
    "--model: the model was fitted on another catalogue ({difference}); the pretrained "
    "pipeline ranks until it is fitted again: skriskrank fit --gateway CONFIG --log LOG")

log = logging.getLogger("skriskrank.gateway")

#: Between a server's name and a tool's in a namespaced name: ``filesystem__read_file``.
SEPARATOR = "__"
#: Longest tool definition accepted, as JSON characters: seven times the longest of the 3,361
#: harvested real tools (35,831, draw.io's XML guide), so that one tool cannot make the
#: catalogue's checks, scan and encoding take minutes.
MAX_TOOL_CHARS = 256 * 1024


def tool_hash(tool: dict) -> str:
    """SHA-256 of a tool's name, description and input schema, as canonical JSON.

    Parameters
    ----------
    tool : dict
        A tool of a ``tools/list`` result.

    Returns
    -------
    digest : str
        64 hexadecimal digits.

    Examples
    --------
    >>> from skriskrank.gateway import tool_hash
    >>> len(tool_hash({"name": "read_file", "description": "Read a file"}))
    64
    """
    body = {key: tool.get(key) for key in ("name", "description", "inputSchema")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Entry:
    """One tool of the catalogue: where it lives and what it was when it was listed."""

    name: str
    server: str
    tool_name: str
    definition: dict
    sha256: str
    changed: str = ""  # what it changed since: "it was reviewed", "the gateway first listed it"
    arguments: object = None  # its inputSchema, compiled (ArgumentSchema)


@dataclasses.dataclass(frozen=True)
class Catalogue:
    """The gateway's view of every tool.

    Entries by gateway name, the graded registry and the fitted pipeline that searches it
    (both None while no server has a tool).
    """

    entries: dict
    registry: object = None
    pipeline: object = None

    def level(self, name) -> int:
        """The tool's level (:data:`~skriskrank.UNKNOWN_RISK` when it has none)."""
        return int(self.registry.risk_of([name])[0])

    def flags(self, name) -> frozenset:
        """The tool's poisoning flags, those a review lifted left out."""
        return frozenset(self.registry.flags[int(self.registry.index_of([name])[0])])


#: What a withheld tool's ``inputSchema`` keeps (:func:`shown`): its shape, so that the
#: agent can still form a call, and none of its words (a default, an enum, an example, a
#: title or a nested description can give orders as well as a description can).
_SHAPE_KEYS = frozenset({"type", "required", "minimum", "maximum", "exclusiveMinimum",
                         "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems",
                         "uniqueItems", "multipleOf"})
# ``not`` is left out with its words: dropping it only loosens the shape.
_SHAPE_EACH = ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems")


def _shape(schema, depth=0):
    """A JSON schema's structure: types, bounds and property names, no text."""
    if isinstance(schema, bool) or not isinstance(schema, dict):
        return schema if isinstance(schema, bool) else {}
    out = {key: value for key, value in schema.items() if key in _SHAPE_KEYS}
    if depth >= MAX_SCHEMA_DEPTH:  # as deep as the scan reads a schema (schema_text)
        return out
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {name: _shape(sub, depth + 1)
                             for name, sub in schema["properties"].items()}
    for key in _SHAPE_EACH:
        value = schema.get(key)
        if isinstance(value, list):
            out[key] = [_shape(sub, depth + 1) for sub in value]
        elif isinstance(value, (dict, bool)):
            out[key] = _shape(value, depth + 1)
    return out


def shown(definition: dict, flags) -> dict:
    """A tool's definition as the agent is shown it: withheld when its flags say so.

    A tool flagged ``injection``, ``stuffing`` or ``changed`` (``WITHHELD_FLAGS``, as
    ``search`` withholds its description) keeps its name, the notice in place of its
    description, and its ``inputSchema``'s shape (types, bounds, property names); its other
    words are left out. Other tools are shown as their server listed them.
    """
    from .._poisoning import shown_description, withheld

    if not withheld(flags):
        return definition
    return {"name": definition["name"],
            "description": shown_description(definition.get("description", ""), flags),
            "inputSchema": _shape(definition.get("inputSchema") or {"type": "object"})}


def _checked(server, tool):
    """A tool of a ``tools/list`` as ``(JSON, compiled inputSchema)``; None if malformed.

    A malformed tool is left out with a warning naming its server.
    """
    from .. import load_tools

    definition = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    name = definition.get("name")
    size = len(json.dumps(definition))
    if size > MAX_TOOL_CHARS:
        log.warning("server %r: tool %r skipped: its definition is %s characters long, more "
                    "than %s", server, str(name)[:64], f"{size:,}", f"{MAX_TOOL_CHARS:,}")
        return None
    try:
        # Name, description, schema shape, hints; the scan runs once, on the whole catalogue.
        load_tools({"tools": [definition]}, scan=False)
        arguments = ArgumentSchema(definition.get("inputSchema") or {"type": "object"})
    except ValueError as err:
        log.warning("server %r: tool %r skipped: %s", server, name, " ".join(
            str(err).split())[:300])
        return None
    return definition, arguments


def _accepted_flags(name, label) -> set:
    """The flags a person lifted in a review row (``accept_flags``), checked."""
    from .._poisoning import POISONING_FLAGS

    flags = label.get("accept_flags") if isinstance(label, dict) else None
    if flags is None:
        return set()
    allowed = set(POISONING_FLAGS) - {"changed"}
    if not isinstance(flags, list) or not set(flags) <= allowed:
        raise ValueError(MSG_ACCEPT_FLAGS.format(name=name, value=flags, allowed=sorted(allowed)))
    return set(flags)


def build_catalogue(downstreams, *, labels=None, auditor=None, k=5, need_threshold=0.5,
                    backend=DEFAULT_BACKEND, model=None, cache=None, pins=None) -> Catalogue:
    """The catalogue of the listed tools of ``downstreams``, graded and indexed.

    Parameters
    ----------
    downstreams : list of Downstream
        The servers; each contributes the tools of its last listing.
    labels : mapping of str to int or dict, default=None
        Reviewed levels by gateway name: a level, or a row of a review file
        (``{"risk_level": 2, "sha256": ..., "accept_flags": ["shadowing"]}``). A row whose
        SHA-256 no longer matches the tool is not applied, and the tool is flagged
        ``changed``; otherwise the flags a person listed in ``accept_flags`` are lifted
        (``changed`` never is).
    auditor : RiskAuditor, default=None
        Grades the tools without a level; ``None`` is :meth:`~skriskrank.RiskAuditor.pretrained`.
    k : int, default=5
        The list length of the pipeline.
    need_threshold : float, default=0.5
        The operating point of its need-aware filter, as for
        :func:`~skriskrank.pretrained_pipeline`.
    backend : {"torch", "onnx", "onnx-int8", "torch-bf16"}, default="onnx"
        What runs the encoder.
    model : sklearn.pipeline.Pipeline, default=None
        A pipeline fitted on this catalogue (``skriskrank fit --gateway``), which ranks it
        when the catalogue is the one it was fitted on: the same tools, texts, servers,
        levels and flags (the registries' fingerprints are equal). Otherwise the pretrained
        pipeline ranks, and a warning says what differs.
    cache : str or path-like, default=None
        A directory that keeps the tools' embeddings, and what the scan found in each tool's
        own text, across processes: a tool encoded or scanned by an earlier start is read
        from it, not encoded or scanned again (queries are never written).
    pins : mapping of str to str, default=None
        The SHA-256 each tool had when the gateway first listed it (trust on first use): a
        tool without a reviewed SHA-256 in ``labels`` whose definition differs from its pin
        is flagged ``changed``, as a reviewed one that differs from its review is.

    Returns
    -------
    catalogue : Catalogue
    """
    from .. import RiskAuditor, load_tools, pretrained_pipeline, scan_tools
    from .._encoder import prefetch
    from .._pretrained import catalogue_texts

    listed = [(d.spec.name, _checked(d.spec.name, t)) for d in downstreams for t in d.tools]
    listed = [(server, *checked) for server, checked in listed if checked is not None]
    counts: dict[str, int] = {}
    for _, tool, _ in listed:
        counts[tool["name"]] = counts.get(tool["name"], 0) + 1
    prefixes = {d.spec.name: d.spec.name + SEPARATOR for d in downstreams}

    def gateway_name(server, name):
        # A name is kept when it is unique and not in another server's namespace: a server
        # that calls its tool "filesystem__read_file" must not take the name the gateway
        # gives the filesystem server's read_file (whichever of them is configured first).
        if counts[name] == 1 and not any(name.startswith(prefix) for other, prefix in
                                         prefixes.items() if other != server):
            return name
        return prefixes[server] + name

    labels = dict(labels or {})
    # Tools by server, in the order the servers listed them (load_tools names the servers).
    entries, by_server, levels, accepted = {}, {}, {}, {}
    for server, tool, arguments in listed:
        name = gateway_name(server, tool["name"])
        if not MCP_TOOL_NAME.fullmatch(name) or name in entries:
            log.warning("server %r: tool %r skipped: its gateway name %r is not a valid, "
                        "unique tool name", server, tool["name"], name[:140])
            continue
        digest = tool_hash(tool)
        label = labels.get(name)
        reviewed = label.get("sha256") if isinstance(label, dict) else None
        changed = ("it was reviewed" if reviewed is not None and reviewed != digest
                   else "the gateway first listed it" if reviewed is None
                   and (pins or {}).get(name, digest) != digest else "")
        if label is not None and not changed:
            levels[name] = label
            accepted[name] = _accepted_flags(name, label)
        entries[name] = Entry(name, server, tool["name"], tool, digest, changed, arguments)
        by_server.setdefault(server, {"tools": []})["tools"].append({**tool, "name": name})
    if not by_server:
        return Catalogue(entries={})
    registry = load_tools(by_server, risk=levels, scan=False)
    # Scanned with each tool's server, so a tool imitating another server's is found; a
    # changed tool is flagged too, and every flag grades a tool at least level 4.
    findings = scan_tools(registry, servers=[entries[n].server for n in registry.names],
                          cache=cache, schemas=[entries[n].definition.get("inputSchema")
                                                for n in registry.names])
    registry = registry.with_flags([
        {*(found.keys() - accepted.get(n, set())), *(("changed",) if entries[n].changed else ())}
        for n, found in zip(registry.names, findings, strict=True)])
    if cache is not None:
        texts = catalogue_texts(registry)
        encoded = prefetch(texts, cache, backend=backend)
        if encoded is not None:
            log.info("%d of %d tool texts encoded, the others read from %s", encoded,
                     len(texts), cache)
    registry = (auditor or RiskAuditor.pretrained()).grade(registry, scan=False)
    if model is not None:
        fitted = model.steps[0][1].registry
        if fitted.fingerprint == registry.fingerprint:
            return Catalogue(entries=entries, registry=registry, pipeline=model)
        log.warning(MSG_OTHER_CATALOGUE.format(difference=_difference(fitted, registry)))
    pipeline = pretrained_pipeline(registry, k=min(k, len(registry)),
                                   need_threshold=need_threshold, backend=backend)
    return Catalogue(entries=entries, registry=registry, pipeline=pipeline)


def _difference(fitted, registry) -> str:
    """What tells a catalogue from the one a model was fitted on, in a few words."""
    before, now = ({n: (text, int(level)) for n, text, level in zip(
        reg.names, reg.texts, reg.risk, strict=True)} for reg in (fitted, registry))
    common = now.keys() & before.keys()
    counts = (len(now.keys() - before.keys()), len(before.keys() - now.keys()),
              sum(before[n][0] != now[n][0] for n in common),
              sum(before[n][1] != now[n][1] for n in common))
    parts = [f"{n} {what}" for n, what in zip(counts, ("tools added", "removed", "changed",
                                                       "with other levels"), strict=True) if n]
    return ", ".join(parts) or "the tools' servers, hints or flags differ"
