"""A risk-aware MCP gateway: one search and one guarded call over the user's MCP servers.

``skriskrank gateway CONFIG`` reads an MCP host configuration, connects to its servers with
the official SDK, builds one graded catalogue of their tools, and serves an MCP server with
two tools: ``search_tools`` (the risk-aware top k) and ``call_tool`` (forwarded to the tool's
server once the gateway's policy lets it through). See ``docs/user_guide/gateway.rst``.
"""

from ._catalogue import SEPARATOR, build_catalogue, tool_hash
from ._config import ServerSpec, load_config
from ._log import EventLog, read_log
from ._policy import Policy
from ._run import check, review, run
from ._server import CALL_TOOL, SEARCH_TOOL, Gateway

__all__ = [
    "CALL_TOOL", "SEARCH_TOOL", "SEPARATOR", "EventLog", "Gateway", "Policy", "ServerSpec",
    "build_catalogue", "check", "load_config", "read_log", "review", "run", "tool_hash",
]
