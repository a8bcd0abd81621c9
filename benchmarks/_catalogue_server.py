"""An MCP server (the SDK's low-level Server, stdio) that lists the tools of a JSON file.

Used by ``bench_gateway`` to put a catalogue of 1,000 real tool descriptions behind the
gateway; every tool answers with its own name, and ``noop`` answers nothing.
Run: ``python -m benchmarks._catalogue_server TOOLS.json``.
"""

import json
import sys

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server


async def main(path):
    tools = [types.Tool.model_validate(t) for t in json.loads(open(path).read())["tools"]]
    tools.append(types.Tool(name="noop", description="Do nothing.",
                            input_schema={"type": "object"}))

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    server = Server("catalogue", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
