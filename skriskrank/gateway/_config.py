"""The MCP host configuration file that the gateway reads: which servers to connect to.

The format every MCP host uses (Claude Desktop, Claude Code, VS Code, Cursor, Cline, Gemini
CLI)::

    {"mcpServers": {"name": {"command": "...", "args": [...], "env": {...}, "cwd": "..."},
                    "other": {"url": "https://...", "headers": {...}}}}

so that a host's own file can be pointed at as it is:

- ``"disabled": true`` skips a server; ``"type"`` (or Cline's ``"transportType"``) names the
  transport, and Gemini CLI's ``"httpUrl"`` is a ``"url"``;
- ``"envFile"`` (VS Code, Cursor) adds the variables of a ``.env`` file (relative to the
  configuration's directory) under those of ``"env"``;
- ``${NAME}``, ``${NAME:-default}`` and VS Code's ``${env:NAME}`` in a command, its
  arguments, ``env``, ``cwd``, a url or a header are replaced by the gateway's environment
  variable, as Claude Code and VS Code do; an unset one without a default is an error, and
  so are the host's own variables (``${workspaceFolder}``, ``${input:...}``);
- Gemini CLI's ``"includeTools"`` and ``"excludeTools"`` keep a server's tools out of the
  catalogue: the gateway neither lists nor runs them;
- the hosts' approval and display keys (``alwaysAllow``, ``autoApprove``, ``trust``,
  ``timeout``, ``description``) are read and ignored: the gateway's policy decides what runs,
  not the approvals a host kept for itself, and ``--call-timeout`` how long a call may take.

A file is untrusted input: every field is checked, with one error that names the file, the
server and the field; an unknown key is an error (a typo must not drop a setting).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

__all__ = ["ServerSpec", "load_config"]

#: Server names become the prefix of clashing tool names (``server__tool``), so they follow
#: MCP's tool-name charset, shorter.
SERVER_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
#: The keys a server entry may have; ``type`` is VS Code's transport name.
_KEYS = {"command", "args", "env", "cwd", "url", "headers", "type", "disabled", "envFile",
         "httpUrl", "transportType", "includeTools", "excludeTools"}
#: Other hosts' keys that say nothing about how to reach a server (see the module docstring).
_IGNORED = {"alwaysAllow", "autoApprove", "trust", "timeout", "description"}
_TYPES = {"stdio", "http", "streamable-http", "streamableHttp"}
#: Bounds of a configuration: bytes of the file (and of an ``envFile``) and servers in it.
MAX_CONFIG_BYTES, MAX_SERVERS = 1 << 20, 256
#: ``${NAME}``, ``${NAME:-default}``, ``${env:NAME}``; any other ``${...}`` is a host's own.
_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{([^}]*)\}")
#: VS Code's own variables, which an environment rarely has.
_HOST_VARIABLES = {"workspaceFolder", "workspaceFolderBasename", "workspaceRoot", "userHome",
                   "pathSeparator", "cwd", "file", "fileDirname", "execPath"}

MSG_CONFIG = "{path}: {problem}"
MSG_SSE = ("the SSE transport is not supported: give the server's streamable HTTP address "
           '(type "http")')
MSG_UNSET = "the environment variable {name} is not set (and ${{{name}}} has no default)"
MSG_HOST_VARIABLE = ("${{{variable}}} is a variable of another host: write its value, or use "
                     "an environment variable, ${{NAME}}")


@dataclasses.dataclass(frozen=True)
class ServerSpec:
    """One downstream MCP server: a command to launch (stdio) or a URL (streamable HTTP).

    ``include`` (None: every tool) and ``exclude`` name the server's tools the gateway
    serves; ``exclude`` wins.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    def serves(self, tool: str) -> bool:
        """Whether the gateway serves this server's tool ``tool``."""
        return tool not in self.exclude and (self.include is None or tool in self.include)


def _expand(value: str, where: str, environ) -> str:
    def variable(found):
        name, default, other = found.groups()
        if other is not None:
            raise ValueError(f"{where}: " + MSG_HOST_VARIABLE.format(variable=other[:40]))
        if name in environ:
            return environ[name]
        if default is None and name in _HOST_VARIABLES:
            raise ValueError(f"{where}: " + MSG_HOST_VARIABLE.format(variable=name))
        if default is None:
            raise ValueError(f"{where}: " + MSG_UNSET.format(name=name))
        return default

    return _VARIABLE.sub(variable, value)


def _env_file(value, where, base: Path, environ) -> dict:
    from dotenv import dotenv_values

    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string")
    path = base / _expand(value, where, environ)
    if not path.is_file():
        raise ValueError(f"{where}: no such file {str(path)!r}")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ValueError(f"{where}: larger than {MAX_CONFIG_BYTES:,} bytes")
    return {k: v for k, v in dotenv_values(path, interpolate=False).items() if v is not None}


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


def _server(name, entry, base: Path, environ) -> ServerSpec | None:
    where = f"server {name!r}"
    if not SERVER_NAME.fullmatch(name):
        raise ValueError(f"{where}: a server name is 1 to 64 letters, digits, '_', '-' or '.'")
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object")
    unknown = sorted(set(entry) - _KEYS - _IGNORED)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected "
                         "command, args, env, cwd (stdio) or url, headers (HTTP)")
    if entry.get("disabled") is True:
        return None
    for key in ("type", "transportType"):
        if key in entry and entry[key] == "sse":
            raise ValueError(f"{where}: {MSG_SSE}")
        if key in entry and (not isinstance(entry[key], str) or entry[key] not in _TYPES):
            raise ValueError(f"{where}: {key} must be one of {sorted(_TYPES)}")
    if "httpUrl" in entry:
        if "url" in entry:
            raise ValueError(f"{where}: give url or httpUrl, not both")
        entry = {**entry, "url": entry["httpUrl"]}
    if ("command" in entry) == ("url" in entry):
        raise ValueError(f"{where} needs either a command (stdio) or a url (HTTP), not "
                         f"{'both' if 'command' in entry else 'neither'}")
    tools = {key: _strings(entry[key], f"{where}: {key}") for key in ("includeTools",
                                                                        "excludeTools")
             if key in entry}
    kept = {"include": tools.get("includeTools"), "exclude": tools.get("excludeTools", ())}

    def expanded(values, what):
        return tuple(_expand(v, f"{where}: {what}", environ) for v in values)

    if "url" in entry:
        url = entry["url"]
        if not isinstance(url, str):
            raise ValueError(f"{where}: url must be an http:// or https:// address")
        url = _expand(url, f"{where}: url", environ)
        if not re.match(r"https?://[^\s]+$", url):
            raise ValueError(f"{where}: url must be an http:// or https:// address")
        if set(entry) & {"args", "env", "cwd", "envFile"}:
            raise ValueError(f"{where}: args, env, envFile and cwd belong to a command, not a "
                             "url")
        headers = _strings(entry.get("headers", {}), f"{where}: headers", mapping=True)
        return ServerSpec(name, url=url, headers=tuple(zip(
            (k for k, _ in headers), expanded((v for _, v in headers), "headers"),
            strict=True)), **kept)
    command = entry["command"]
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"{where}: command must be a non-empty string")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError(f"{where}: cwd must be a string")
    if "headers" in entry:
        raise ValueError(f"{where}: headers belong to a url, not a command")
    env = dict(_env_file(entry["envFile"], f"{where}: envFile", base, environ)
               if "envFile" in entry else {})
    own = _strings(entry.get("env", {}), f"{where}: env", mapping=True)
    env.update(zip((k for k, _ in own), expanded((v for _, v in own), "env"), strict=True))
    return ServerSpec(name, command=_expand(command, f"{where}: command", environ),
                      args=expanded(_strings(entry.get("args", []), f"{where}: args"), "args"),
                      env=tuple(sorted(env.items())),
                      cwd=None if cwd is None else _expand(cwd, f"{where}: cwd", environ),
                      **kept)


def load_config(path, *, environ=None) -> list[ServerSpec]:
    """The servers of an MCP host configuration file, checked.

    Parameters
    ----------
    path : str or path-like
        A JSON file ``{"mcpServers": {name: {"command", "args", "env", "cwd"} |
        {"url", "headers"}}}`` (``"servers"``, VS Code's key, is read too; the other hosts'
        keys the module docstring lists are read as they are there).
    environ : mapping or None, default=None
        The variables ``${NAME}`` is replaced with; None reads the process's environment.

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
        ``command`` nor ``url``, a field of the wrong type, an unknown key, an unset
        variable, a missing ``envFile``.

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
    >>> _ = path.write_text(json.dumps({"mcpServers": {"docs": {
    ...     "httpUrl": "https://example.com/mcp", "trust": True, "excludeTools": ["delete"],
    ...     "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}))
    >>> (docs,) = load_config(path, environ={"DOCS_TOKEN": "t0k3n"})
    >>> docs.headers, docs.serves("search"), docs.serves("delete")
    ((('Authorization', 'Bearer t0k3n'),), True, False)
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
        environ = os.environ if environ is None else environ
        specs = [_server(name, entry, path.parent, environ) for name, entry in servers.items()]
    except ValueError as err:
        raise ValueError(MSG_CONFIG.format(path=path, problem=err)) from None
    return [s for s in specs if s is not None]
