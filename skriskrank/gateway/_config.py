"""The MCP host configuration file that the gateway reads: which servers to connect to.

The format every MCP host uses (Claude Desktop, VS Code, Cursor)::

    {"mcpServers": {"name": {"command": "...", "args": [...], "env": {...}, "cwd": "..."},
                    "other": {"url": "https://...", "headers": {...}}}}

A server entry with ``"disabled": true`` is skipped. A file is untrusted input: every field
is checked, with one error that names the file, the server and the field.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

__all__ = ["ServerSpec", "load_config"]

#: Server names become the prefix of clashing tool names (``server__tool``), so they follow
#: MCP's tool-name charset, shorter.
SERVER_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
#: The keys a server entry may have; ``type`` is VS Code's transport name.
_KEYS = {"command", "args", "env", "cwd", "url", "headers", "type", "disabled"}
_TYPES = {"stdio", "http", "streamable-http", "streamableHttp"}
#: Bounds of a configuration: bytes of the file and servers in it.
MAX_CONFIG_BYTES, MAX_SERVERS = 1 << 20, 256

MSG_CONFIG = "{path}: {problem}"


@dataclasses.dataclass(frozen=True)
class ServerSpec:
    """One downstream MCP server: a command to launch (stdio) or a URL (streamable HTTP)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


def _strings(value, what, *, mapping=False):
    """``value`` checked as a list of strings, or (``mapping``) an object of string values."""
    if mapping:
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ValueError(f"{what} must be an object of strings")
        return tuple(sorted(value.items()))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return tuple(value)


def _server(name, entry) -> ServerSpec | None:
    where = f"server {name!r}"
    if not SERVER_NAME.fullmatch(name):
        raise ValueError(f"{where}: a server name is 1 to 64 letters, digits, '_', '-' or '.'")
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected "
                         "command, args, env, cwd (stdio) or url, headers (HTTP)")
    if entry.get("disabled") is True:
        return None
    if "type" in entry and entry["type"] not in _TYPES:
        raise ValueError(f"{where}: type must be one of {sorted(_TYPES)}")
    if ("command" in entry) == ("url" in entry):
        raise ValueError(f"{where} needs either a command (stdio) or a url (HTTP), not "
                         f"{'both' if 'command' in entry else 'neither'}")
    if "url" in entry:
        url = entry["url"]
        if not isinstance(url, str) or not re.match(r"https?://[^\s]+$", url):
            raise ValueError(f"{where}: url must be an http:// or https:// address")
        if set(entry) & {"args", "env", "cwd"}:
            raise ValueError(f"{where}: args, env and cwd belong to a command, not a url")
        return ServerSpec(name, url=url, headers=_strings(entry.get("headers", {}),
                                                          f"{where}: headers", mapping=True))
    command = entry["command"]
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"{where}: command must be a non-empty string")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError(f"{where}: cwd must be a string")
    if "headers" in entry:
        raise ValueError(f"{where}: headers belong to a url, not a command")
    return ServerSpec(name, command=command, args=_strings(entry.get("args", []),
                                                           f"{where}: args"),
                      env=_strings(entry.get("env", {}), f"{where}: env", mapping=True), cwd=cwd)


def load_config(path) -> list[ServerSpec]:
    """The servers of an MCP host configuration file, checked.

    Parameters
    ----------
    path : str or path-like
        A JSON file ``{"mcpServers": {name: {"command", "args", "env", "cwd"} |
        {"url", "headers"}}}`` (``"servers"``, VS Code's key, is read too).

    Returns
    -------
    servers : list of ServerSpec
        In file order, disabled servers left out.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        Naming the file and what is wrong: not JSON, no servers, a server with neither
        ``command`` nor ``url``, a field of the wrong type, an unknown key.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from skriskrank.gateway import load_config
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "mcp.json"
    >>> _ = path.write_text(json.dumps({"mcpServers": {
    ...     "time": {"command": "mcp-server-time"},
    ...     "docs": {"url": "https://example.com/mcp"}}}))
    >>> [(s.name, s.command, s.url) for s in load_config(path)]
    [('time', 'mcp-server-time', None), ('docs', None, 'https://example.com/mcp')]
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Configuration file not found: {path}")
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ValueError(f"larger than {MAX_CONFIG_BYTES:,} bytes")
        try:
            config = json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as err:
            raise ValueError(f"line {err.lineno}: not valid JSON ({err.msg})") from None
        except UnicodeDecodeError:
            raise ValueError("not UTF-8 text") from None
        servers = config.get("mcpServers", config.get("servers")) if isinstance(
            config, dict) else None
        if not isinstance(servers, dict) or not servers:
            raise ValueError('expected {"mcpServers": {name: {...}, ...}} with at least one '
                             "server")
        if len(servers) > MAX_SERVERS:
            raise ValueError(f"more than {MAX_SERVERS} servers")
        specs = [_server(name, entry) for name, entry in servers.items()]
    except ValueError as err:
        raise ValueError(MSG_CONFIG.format(path=path, problem=err)) from None
    return [s for s in specs if s is not None]
