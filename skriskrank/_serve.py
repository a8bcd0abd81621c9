"""``skriskrank serve``: a risk-aware tool search for agents, as a Model Context Protocol server.

One tool, ``search_tools`` (``INPUT_SCHEMA``, ``OUTPUT_SCHEMA``): the risk-aware top-k of a
fitted pipeline, as structured content and the same JSON as text. The server speaks over
stdio with the official ``mcp`` SDK (the ``skriskrank[mcp]`` extra).
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading

from ._inputs import MAX_QUERY_LENGTH, ArgumentSchema, check_query

__all__ = ["SEARCH_TOOL", "make_server", "serve"]

SEARCH_TOOL = "search_tools"
DEFAULT_K = 5
MSG_NO_MCP = "skriskrank serve needs the mcp package: pip install 'skriskrank[mcp]' ({error})."

INPUT_SCHEMA = {"type": "object", "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_LENGTH,
              "description": "What the agent wants to do, in plain words."},
    "k": {"type": "integer", "minimum": 1, "maximum": 50, "default": DEFAULT_K,
          "description": "How many tools to return (default 5)."}},
    "required": ["query"], "additionalProperties": False}
OUTPUT_SCHEMA = {"type": "object", "properties": {
    "query": {"type": "string"}, "k": {"type": "integer"},
    "tools": {"type": "array", "items": {"type": "object", "properties": {
        "rank": {"type": "integer"}, "name": {"type": "string"},
        "description": {"type": "string"},
        "risk_level": {"type": ["integer", "null"]},  # null: unknown risk
        "risk_predicted": {"type": "boolean"},
        "score": {"type": "number"}, "reason": {"type": "string"},
        # poisoning flags; a tool flagged injection, stuffing or changed has its text withheld
        "flags": {"type": "array", "items": {"type": "string"}}},
        "required": ["rank", "name", "description", "risk_level", "score", "reason"]}}},
    "required": ["query", "k", "tools"]}


def make_server(pipeline, name="skriskrank"):
    """An ``mcp.server.Server`` whose one tool, ``search_tools``, searches a fitted pipeline."""
    try:
        import anyio
        import jsonschema_rs  # noqa: F401 - ArgumentSchema's, part of the mcp extra
        import mcp.types as types
        from mcp.server import Server
        from mcp.shared.exceptions import MCPError
    except ImportError as exc:
        raise ImportError(MSG_NO_MCP.format(error=exc)) from exc
    from ._explain import search

    # A request without k gets the served pipeline's own list length (``serve --k``).
    default_k = getattr(pipeline.steps[-1][1], "k", DEFAULT_K)
    schema = {**INPUT_SCHEMA, "properties": {**INPUT_SCHEMA["properties"], "k": {
        **INPUT_SCHEMA["properties"]["k"], "default": default_k,
        "description": f"How many tools to return (default {default_k})."}}}
    arguments = ArgumentSchema(schema)
    tool = types.Tool(
        name=SEARCH_TOOL, title="Search tools (risk-aware)",
        description="Find the tools that fit a task: the top-k by relevance, with tools of "
        "higher risk exposed only when the task needs them. Each result has its risk level "
        "(1-5) and the reason it was kept.",
        input_schema=schema, output_schema=OUTPUT_SCHEMA,
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True,
                                          destructive_hint=False, open_world_hint=False))
    # Requests run concurrently; the pipeline serves threads, but one search at a time keeps
    # a busy server from oversubscribing its cores.
    lock = threading.Lock()

    def error(message):
        return types.CallToolResult(content=[types.TextContent(type="text", text=message)],
                                    is_error=True)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx, params):
        if params.name != SEARCH_TOOL:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name!r}")
        args = params.arguments or {}
        problems = arguments.errors(args)
        if problems:
            return error(f"Invalid arguments for {SEARCH_TOOL}: {problems}")
        query, k = args["query"], int(args.get("k", default_k))
        try:
            check_query(query)
        except ValueError as exc:
            return error(f"Invalid arguments for {SEARCH_TOOL}: {exc}")

        def run():
            with lock:
                return search(pipeline, query, k)

        try:
            rows = await anyio.to_thread.run_sync(run)
        except Exception as exc:  # noqa: BLE001 - the agent gets a readable tool error
            return error(f"{SEARCH_TOOL} failed: {type(exc).__name__}: {exc}")
        result = {"query": query, "k": k, "tools": rows}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result))],
            structured_content=result)

    return Server(name, instructions="Risk-aware tool search: call search_tools with a task.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


MSG_UNREADABLE = ("The request could not be read: {error} (a string that is not valid Unicode, "
                  "such as a lone surrogate escape, is refused).")


@contextlib.asynccontextmanager
async def answer_unreadable(read, write):
    r"""``read``, with each request the SDK cannot parse answered by a JSON-RPC error.

    The SDK's transports hand a message they cannot validate (pydantic refuses a lone
    surrogate escape such as ``"\ud800"`` that Python's JSON accepts) to the session as
    an exception, and the client waits forever for an answer. Here such a request gets an
    error for its id, read with Python's parser; without a readable id, ``id: null``.
    """
    import anyio
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    send, receive = anyio.create_memory_object_stream(0)

    async def relay():
        async with send:
            async for item in read:
                if not isinstance(item, Exception):
                    await send.send(item)
                    continue
                try:
                    line = item.errors()[0]["input"]
                    request_id = json.loads(line).get("id")
                except Exception:  # noqa: BLE001 - not even Python's JSON: a parse error
                    request_id = None
                if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
                    error = types.ErrorData(code=types.INVALID_PARAMS, message=MSG_UNREADABLE
                                            .format(error="invalid request"))
                else:
                    request_id = None
                    error = types.ErrorData(code=types.PARSE_ERROR, message=MSG_UNREADABLE
                                            .format(error="not JSON-RPC"))
                await write.send(SessionMessage(types.JSONRPCError(
                    jsonrpc="2.0", id=request_id, error=error)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay)
        yield receive
        tg.cancel_scope.cancel()


async def run_stdio(server) -> None:
    """Run an MCP ``server`` over stdio until the client closes the connection."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write), answer_unreadable(read, write) as guarded:
        # stdio_server moved fd 1 to the protocol; a stray print must go to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            await server.run(guarded, write, server.create_initialization_options())


def serve(pipeline) -> None:
    """Serve ``pipeline`` over stdio until the client closes the connection."""
    import anyio

    server = make_server(pipeline)
    anyio.run(run_stdio, server)
