"""The gateway: an MCP server in front of the user's MCP servers that searches and guards.

The agent sees two tools. ``search_tools(query, k)`` returns the risk-aware top ``k`` of one
catalogue over every downstream server, each tool with its server, full ``inputSchema``,
risk level, reason and poisoning flags, so that the agent can call it next; the words of a
tool flagged ``injection``, ``stuffing`` or ``changed`` are withheld (its description, and its
schema's but for its shape) until a person reviews it. ``call_tool(name, arguments)``
forwards a call to the tool's server and returns the server's result unchanged, once the
policy (:class:`Policy`) lets it through. With ``expose=True`` the gateway's own
``tools/list`` also holds the last search's tools, for hosts that call tools directly; the
same policy applies to them.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import json
import logging
import threading
import time

import anyio

from .._encoder import DEFAULT_BACKEND
from .._inputs import MAX_QUERY_LENGTH, ArgumentSchema, check_query
from ._catalogue import Catalogue, build_catalogue, shown
from ._downstream import Downstream, DownstreamError
from ._log import EventLog
from ._policy import MSG_CANNOT_ASK, MSG_CONFIRM, MSG_CONFIRM_FLAGGED, MSG_DECLINED, Policy

__all__ = ["CALL_TOOL", "SEARCH_TOOL", "Gateway"]

log = logging.getLogger("skriskrank.gateway")

#: The gateway's search tool: ``{"query": str, "k": int}``.
SEARCH_TOOL = "search_tools"
#: The gateway's guarded call: ``{"name": str, "arguments": object}``.
CALL_TOOL = "call_tool"
#: Sessions whose searches the gateway remembers (HTTP; stdio has one).
MAX_SESSIONS = 1_000
#: Seconds a first search waits for the catalogue while the servers start.
READY_TIMEOUT = 120.0
#: Least seconds from the end of one rebuild of the catalogue to the start of the next; the
#: pause is also at least as long as the last rebuild took, so a server that announces
#: changes without end gets at most half of the gateway's time.
MIN_REBUILD_PAUSE = 1.0
#: How many tools' first SHA-256 the gateway keeps: past it, the pins of tools no server
#: lists any more are dropped (one that comes back is trusted anew), so a server that renames
#: its tools without end cannot grow the gateway's memory.
MAX_PINS = 100_000
#: A server's question to the user (MCP elicitation), as the gateway relays it: the user is
#: told which server asks, since its words are the server's, not the agent's.
MSG_RELAYED = "The {server} server asks: {message}"

SEARCH_INPUT = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_LENGTH,
                  "description": "The task, in plain words."},
        "k": {"type": "integer", "minimum": 1, "maximum": 50,
              "description": "How many tools to return."},
    },
    "required": ["query"],
    "additionalProperties": False,
}
CALL_INPUT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 128,
                 "description": "The tool's name, as search_tools returned it."},
        "arguments": {"type": "object", "description": "The tool's arguments, as its "
                      "inputSchema (in search_tools' answer) describes them."},
    },
    "required": ["name"],
    "additionalProperties": False,
}
MSG_NO_TOOLS = ("no tool is available: {n_failed} of {n} servers failed to start ({failed}); "
                "skriskrank gateway CONFIG --check shows why")
MSG_STARTING = "the gateway's servers are still starting; try again in a few seconds"


@dataclasses.dataclass
class _Session:
    """What one client session did: the tools its searches returned, the last search's."""

    exposed: set = dataclasses.field(default_factory=set)
    last: list = dataclasses.field(default_factory=list)
    upstream: object = None


class Gateway:
    """The gateway's state: the downstream servers, the catalogue, the sessions and the log.

    Parameters
    ----------
    servers : list of ServerSpec
        The servers of the host configuration (:func:`load_config`).
    policy : Policy, default=Policy()
        What calls may run.
    labels : mapping, default=None
        Reviewed levels by tool name (a review file written by ``--audit``, or
        ``{"tool": level}``).
    k : int, default=8
        The default list length of ``search_tools``: real MCP tasks need several tools (a
        median of 9 in ``benchmarks/results/real_mcp.md``), and recall grows fastest up to
        8.
    need_threshold : float, default=0.5
        From which probability of being needed a search shows a tool of risk >= 3, as for
        :func:`~skriskrank.pretrained_pipeline` (lower: more of them).
    call_timeout : float, default=60.0
        Seconds a forwarded call may take before it is cancelled.
    start_timeout : float, default=60.0
        Seconds a server has to start and list its tools.
    log : EventLog, default=None
        Where searches and calls are recorded.
    expose : bool, default=False
        List the last search's tools in the gateway's own ``tools/list``.
    backend : {"torch", "onnx", "onnx-int8", "torch-bf16"}, default="onnx"
        What runs the encoder that grades and searches.
    echo_stderr : bool, default=True
        Echo the stdio servers' stderr lines to the gateway's own, each after its server's
        name; their last lines are kept either way (:meth:`status`).
    model : sklearn.pipeline.Pipeline, default=None
        A pipeline fitted on this gateway's catalogue and log (``skriskrank fit --gateway
        CONFIG --log LOG``): it ranks while the catalogue is the one it was fitted on, the
        pretrained pipeline otherwise (:func:`build_catalogue`). A copy of its need-aware
        filter takes ``need_threshold``; the model passed is left unchanged.
    cache : str or path-like, default=None
        A directory that keeps the tools' embeddings from one start to the next, so that a
        restart encodes only the tools that are new (:func:`build_catalogue`).
    """

    def __init__(self, servers, *, policy=None, labels=None, k=8, need_threshold=0.5,
                 call_timeout=60.0, start_timeout=60.0, log=None, expose=False,
                 backend=DEFAULT_BACKEND, echo_stderr=True, model=None, cache=None):
        spawn_lock = anyio.Lock()
        self.downstreams = [Downstream(s, call_timeout=call_timeout, start_timeout=start_timeout,
                                       on_change=self._changed, spawn_lock=spawn_lock,
                                       echo_stderr=echo_stderr, on_elicit=self._elicit)
                            for s in servers]
        self._calling: dict[str, list] = {}  # each server's calls in flight: the callers' ctx
        self.policy, self.labels, self.k = policy or Policy(), labels, k
        self.need_threshold = need_threshold
        if model is not None and "need_threshold" in model.steps[-1][1].get_params():
            # A copy of its filter takes the threshold: the caller's model is left as it was.
            from sklearn.pipeline import Pipeline

            name, last = model.steps[-1]
            model = Pipeline([*model.steps[:-1],
                              (name, copy.copy(last).set_params(need_threshold=need_threshold))])
        self.model, self.cache = model, cache
        self.log, self.expose, self.backend = log or EventLog(None), expose, backend
        self.catalogue = Catalogue(entries={})
        self.ready = anyio.Event()
        self._dirty = anyio.Event()
        self._sessions: collections.OrderedDict = collections.OrderedDict()
        self._search_lock = threading.Lock()  # one search at a time: BLAS uses both cores
        # The gateway's own tools' schemas, compiled once (each tool's is in its Entry).
        self._own_arguments = {SEARCH_TOOL: ArgumentSchema(SEARCH_INPUT),
                               CALL_TOOL: ArgumentSchema(CALL_INPUT)}
        self._auditor = None
        self._pins: dict[str, str] = {}  # each tool's SHA-256 when first listed

    # -- the downstream side --------------------------------------------------------------------
    async def start(self, tg) -> None:
        """Start every server and the catalogue's upkeep in the task group ``tg``."""
        for downstream in self.downstreams:
            tg.start_soon(downstream.run)
        tg.start_soon(self._keep_catalogue)

    async def settled(self) -> None:
        """Wait until every server has started or failed once."""
        for downstream in self.downstreams:
            await downstream.settled.wait()

    async def _changed(self, downstream) -> None:
        self._dirty.set()

    async def _elicit(self, downstream, params):
        """A server's question to the user, asked through the agent's client that called it.

        The question goes to the session whose call to this server is in flight, prefixed
        with the server's name; with no such call, or calls of several sessions (whose
        question it is cannot be told), a question for a URL, or a client that cannot ask,
        the answer is a decline.
        """
        import mcp.types as types

        callers = self._calling.get(downstream.spec.name, [])
        decline = types.ElicitResult(action="decline")
        if len(set(id(c.session) for c in callers)) != 1 or not isinstance(
                params, types.ElicitRequestFormParams):
            return decline
        question = MSG_RELAYED.format(server=downstream.spec.name, message=params.message)
        answer = await _ask(callers[0], question, params.requested_schema)
        if answer is None:
            return decline
        self.log.write("elicit", self._session(callers[0])[0], server=downstream.spec.name,
                       action=answer.action)
        return answer

    async def _keep_catalogue(self) -> None:
        await self.settled()
        while True:
            self._dirty = anyio.Event()
            started = anyio.current_time()
            await self.rebuild()
            self.ready.set()
            ended = anyio.current_time()
            await self._dirty.wait()
            # Changes announced meanwhile join the next rebuild, which lists them all.
            await anyio.sleep_until(ended + max(MIN_REBUILD_PAUSE, ended - started))

    @property
    def auditor(self):
        """The packaged :class:`~skriskrank.RiskAuditor` that grades the tools (loaded once)."""
        if self._auditor is None:
            from .. import RiskAuditor

            self._auditor = RiskAuditor.pretrained(backend=self.backend)
        return self._auditor

    def build(self):
        """The catalogue of the servers' current tools, graded and indexed (blocking).

        Each tool's SHA-256 the first time it is listed is kept: a later definition that
        differs is flagged ``changed`` unless a review file holds its SHA-256.

        Returns
        -------
        catalogue : Catalogue
            What :func:`build_catalogue` makes of them with this gateway's settings.
        """
        catalogue = build_catalogue(self.downstreams, labels=self.labels, auditor=self.auditor,
                                    k=self.k, need_threshold=self.need_threshold,
                                    backend=self.backend, model=self.model, cache=self.cache,
                                    pins=self._pins)
        for entry in catalogue.entries.values():  # a changed tool keeps its first pin
            self._pins.setdefault(entry.name, entry.sha256)
        if len(self._pins) > MAX_PINS:
            self._pins = {n: d for n, d in self._pins.items() if n in catalogue.entries}
        return catalogue

    async def rebuild(self) -> None:
        """Build the catalogue anew from the servers' tools (graded and indexed, off-loop)."""
        t0 = time.perf_counter()
        catalogue = await anyio.to_thread.run_sync(self.build)
        self.catalogue = catalogue
        log.info("catalogue: %d tools from %d servers in %.1f s, ranked by %s",
                 len(catalogue.entries), sum(d.state == "ready" for d in self.downstreams),
                 time.perf_counter() - t0,
                 "the --model" if self.model is not None and catalogue.pipeline is self.model
                 else "the pretrained pipeline")
        if self.expose:
            for state in list(self._sessions.values()):
                if state.upstream is not None:
                    with contextlib.suppress(Exception):
                        await state.upstream.send_tool_list_changed()

    # -- the upstream side ----------------------------------------------------------------------
    def _session(self, ctx) -> tuple[str, _Session]:
        request = getattr(ctx, "request", None)
        key = "stdio"
        if request is not None and hasattr(request, "headers"):
            key = "http:" + str(request.headers.get("mcp-session-id", ""))[:64]
        state = self._sessions.get(key)
        if state is None:
            state = self._sessions[key] = _Session()
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        state.upstream = ctx.session
        return key, state

    async def _wait_ready(self) -> bool:
        """Wait (a bounded time) for the first catalogue; whether it is there."""
        with anyio.move_on_after(READY_TIMEOUT):
            await self.ready.wait()
        return self.ready.is_set()

    def _tool_list(self, state) -> list:
        import mcp.types as types

        readonly = types.ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                         idempotent_hint=True, open_world_hint=False)
        tools = [
            types.Tool(name=SEARCH_TOOL, title="Search tools (risk-aware)",
                       input_schema=SEARCH_INPUT,
                       description="Find the tools for a task among every connected server: "
                       "the top k by relevance, tools of higher risk only when the task needs "
                       "them, each with its server, inputSchema, risk level (1-5) and reason. "
                       f"Call them with {CALL_TOOL}.", annotations=readonly),
            types.Tool(name=CALL_TOOL, title="Call a tool", input_schema=CALL_INPUT,
                       description="Run a tool that search_tools returned, on its server. "
                       "Risky tools run only for the task a search found them for; the "
                       "gateway's policy may refuse a call and says why."),
        ]
        if self.expose and state is not None:
            entries = self.catalogue.entries
            tools += [types.Tool.model_validate({**shown(entries[n].definition,
                                                         self.catalogue.flags(n)), "name": n})
                      for n in state.last if n in entries]
        return tools

    async def _search(self, ctx, arguments):
        from .._explain import search

        key, state = self._session(ctx)
        problems = self._own_arguments[SEARCH_TOOL].errors(arguments)
        if problems:
            return _error(f"Invalid arguments for {SEARCH_TOOL}: {problems}")
        try:
            query = check_query(arguments["query"])
        except ValueError as exc:
            return _error(f"Invalid arguments for {SEARCH_TOOL}: {exc}")
        await self._wait_ready()
        catalogue = self.catalogue
        if catalogue.pipeline is None:
            failed = [d.spec.name for d in self.downstreams if d.state != "ready"]
            message = (MSG_NO_TOOLS.format(n_failed=len(failed), n=len(self.downstreams),
                                           failed=", ".join(failed))
                       if self.ready.is_set() else MSG_STARTING)
            return _error(message)
        k = min(int(arguments.get("k", self.k)), len(catalogue.entries))
        t0 = time.perf_counter()

        def run():
            with self._search_lock:
                return search(catalogue.pipeline, query, k)

        rows = await anyio.to_thread.run_sync(run)
        tools = []
        for row in rows:
            entry = catalogue.entries[row["name"]]
            definition = shown(entry.definition, row["flags"])
            tools.append({"rank": row["rank"], "name": row["name"], "server": entry.server,
                          "description": row["description"],
                          "inputSchema": definition.get("inputSchema", {"type": "object"}),
                          "risk_level": row["risk_level"],
                          "risk_predicted": row["risk_predicted"], "score": row["score"],
                          "reason": row["reason"], "flags": row["flags"]})
        state.exposed.update(t["name"] for t in tools)
        state.last = [t["name"] for t in tools]
        self.log.write("search", key, query=query, k=k, latency_ms=_ms(t0), tools=[
            {"name": t["name"], "server": t["server"], "risk_level": t["risk_level"],
             "reason": t["reason"]} for t in tools])
        if self.expose:
            with contextlib.suppress(Exception):
                await ctx.session.send_tool_list_changed()
        return _result({"query": query, "k": k, "tools": tools})

    async def _call(self, ctx, name, arguments, params):
        import mcp.types as types

        key, state = self._session(ctx)
        t0 = time.perf_counter()
        if not await self._wait_ready():
            return _error(MSG_STARTING)
        catalogue = self.catalogue
        entry = catalogue.entries.get(name)
        logged = {"tool": name[:128], "arguments": arguments}
        refusal = self.policy.refusal(name, catalogue, exposed=state.exposed,
                                      arguments=arguments)
        if refusal:
            self.log.write("call", key, decision="refused", reason=refusal,
                           latency_ms=_ms(t0), **logged)
            return _error(refusal)
        level = catalogue.level(name)
        decision = "allowed"
        if self.policy.needs_confirmation(level):
            question = MSG_CONFIRM.format(name=name, server=entry.server, level=level)
            flags = catalogue.flags(name)
            if flags:
                question += MSG_CONFIRM_FLAGGED.format(flags=" and ".join(sorted(flags)))
            answer = await _confirm(ctx, params, question)
            if isinstance(answer, types.InputRequiredResult):
                return answer
            if answer != "accept":
                refusal = (MSG_CANNOT_ASK.format(name=name, level=level) if answer is None
                           else MSG_DECLINED.format(name=name, action=answer))
                self.log.write("call", key, decision="declined" if answer else "refused",
                               reason=refusal, latency_ms=_ms(t0), **logged)
                return _error(refusal)
            decision = "confirmed"
        downstream = next(d for d in self.downstreams if d.spec.name == entry.server)
        calling = self._calling.setdefault(entry.server, [])
        calling.append(ctx)  # so that the server's questions to the user reach this client
        try:
            result = await downstream.call(entry.tool_name, arguments)
        except DownstreamError as exc:
            self.log.write("call", key, decision=decision, error=str(exc), latency_ms=_ms(t0),
                           server=entry.server, **logged)
            return _error(str(exc))
        finally:
            calling.remove(ctx)
        self.log.write("call", key, decision=decision, server=entry.server,
                       is_error=bool(result.is_error), latency_ms=_ms(t0), **logged)
        return result

    def server(self):
        """The MCP server (the official SDK's low-level ``Server``) that the agent talks to."""
        import mcp.types as types
        from mcp.server import Server
        from mcp.shared.exceptions import MCPError

        async def list_tools(ctx, params):
            return types.ListToolsResult(tools=self._tool_list(self._session(ctx)[1]))

        async def call_tool(ctx, params):
            arguments = params.arguments or {}
            if params.name == SEARCH_TOOL:
                return await self._search(ctx, arguments)
            if params.name == CALL_TOOL:
                problems = self._own_arguments[CALL_TOOL].errors(arguments)
                if problems:
                    return _error(f"Invalid arguments for {CALL_TOOL}: {problems}")
                return await self._call(ctx, arguments["name"], arguments.get("arguments", {}),
                                        params)
            if self.expose:
                return await self._call(ctx, params.name, arguments, params)
            raise MCPError(code=types.INVALID_PARAMS, message=(
                f"Unknown tool {params.name[:128]!r}: call {SEARCH_TOOL}, then {CALL_TOOL}"))

        return Server("skriskrank-gateway", instructions=(
            f"Risk-aware gateway to the user's MCP servers: call {SEARCH_TOOL} with a task, "
            f"then {CALL_TOOL} with a tool it returned."),
            on_list_tools=list_tools, on_call_tool=call_tool)

    def initialization_options(self, server):
        """The server's initialization options: ``tools.listChanged`` when tools are exposed."""
        from mcp.server import NotificationOptions

        return server.create_initialization_options(
            NotificationOptions(tools_changed=self.expose))

    def status(self) -> list[dict]:
        """Each server's name, state, number of tools, error and last stderr lines, in order."""
        return [{"server": d.spec.name, "state": d.state, "tools": len(d.tools),
                 "error": d.error, "stderr": d.stderr} for d in self.downstreams]


async def _confirm(ctx, params, question):
    """The user's answer to ``question``: ``"accept"``, ``"decline"`` or ``"cancel"``.

    None when the client cannot ask; on a connection without a back-channel (the 2026
    protocol), an ``InputRequiredResult`` that the client answers by calling again.
    """
    import mcp.types as types

    schema = {"type": "object", "properties": {}}
    if not ctx.session.can_send_request:  # the 2026 protocol: ask through the client's retry
        answer = (params.input_responses or {}).get("confirm")
        if answer is not None:
            return getattr(answer, "action", None)
        return types.InputRequiredResult(input_requests={"confirm": types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=question, requested_schema=schema))})
    answer = await _ask(ctx, question, schema)
    return None if answer is None else answer.action


async def _ask(ctx, question, schema):
    """The user's ``ElicitResult`` for ``question``, asked through the client's back-channel.

    None when the client has no back-channel or cannot ask; a cancel when asking fails.
    """
    import mcp.types as types

    if not ctx.session.can_send_request or not ctx.session.check_client_capability(
            types.ClientCapabilities(elicitation=types.ElicitationCapability())):
        return None
    try:
        return await ctx.session.elicit_form(question, schema, related_request_id=ctx.request_id)
    except Exception as exc:  # noqa: BLE001 - a client that fails to ask has not accepted
        log.warning("elicitation failed: %s", exc)
        return types.ElicitResult(action="cancel")


def _ms(t0) -> float:
    return round(1e3 * (time.perf_counter() - t0), 3)


def _error(message: str):
    import mcp.types as types

    return types.CallToolResult(content=[types.TextContent(type="text", text=message)],
                                is_error=True)


def _result(payload: dict):
    import mcp.types as types

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload)
