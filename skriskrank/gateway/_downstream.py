"""One downstream MCP server: its connection, its tools, and its restarts.

A :class:`Downstream` is run by one long-lived task that launches the server (stdio) or
connects to it (streamable HTTP) with the official SDK's client, initializes, lists its tools
(following pagination), and then watches it: a ``notifications/tools/list_changed`` re-lists
it, a lost connection (a call that finds it closed, or a ping that fails) restarts it with
backoff. Calls are forwarded unchanged with :meth:`Downstream.call`, under a time limit.

A stdio server's stderr is read through a pipe: each line is echoed to the gateway's stderr
with the server's name in front (an MCP host keeps it as the gateway's log), or not at all
for ``--check`` and ``--audit``, and the last lines are kept, so that a server that fails to
start says why beside its state rather than among the other servers' lines.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import re
import signal
import sys
import threading

import anyio

__all__ = ["Downstream", "DownstreamError"]

log = logging.getLogger("skriskrank.gateway")

#: Seconds between pings of an idle server; a server that died unnoticed is restarted then.
PING_INTERVAL = 10.0
#: Restart delays after a failure: doubling from the first to the last, in seconds.
BACKOFF = (0.5, 30.0)
#: Longest ``tools/list`` accepted from one server (pages and tools).
MAX_PAGES, MAX_TOOLS = 100, 5_000
#: Lines of a stdio server's stderr kept from its last start, and the bytes read as one line.
STDERR_LINES, STDERR_LINE_BYTES = 5, 4096
#: Seconds to wait, once a server's connection ended, for its last stderr lines.
STDERR_WAIT = 1.0
#: Terminal escape sequences (colours, cursor moves), removed from the kept lines.
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")

MSG_NOT_READY = (
    "server {server!r} is {state}{why}; the gateway restarts it by itself, try again in a "
    "few seconds"
)
MSG_TIMEOUT = (
    "{tool!r} on server {server!r} took longer than {timeout:g} s and was cancelled; try "
    "again, or ask for less"
)
MSG_LOST = "server {server!r} stopped during the call; it is being restarted, try again shortly"
MSG_REFUSED = "server {server!r} answered {tool!r} with a protocol error: {error}"


class DownstreamError(Exception):
    """A call that could not be forwarded or completed; the message says why."""


def _children() -> set[int]:
    """The pids of this process's children (Linux; empty where /proc does not tell)."""
    pids = set()
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{os.getpid()}/task"):
            with open(f"/proc/{os.getpid()}/task/{task}/children") as fh:
                pids.update(int(p) for p in fh.read().split())
    return pids


class Downstream:
    """One server of the configuration, connected and kept connected.

    Parameters
    ----------
    spec : ServerSpec
        The server's entry in the host configuration.
    call_timeout : float
        Seconds a forwarded call may take before it is cancelled.
    start_timeout : float
        Seconds to launch, initialize and list the tools.
    on_change : callable
        ``on_change(downstream)``, an async function called after each (re-)listing of the
        tools.
    spawn_lock : anyio.Lock
        Held while a process is launched, so that its pid can be told apart.
    echo_stderr : bool, default=True
        Echo a stdio server's stderr lines to the gateway's stderr, after ``[name] ``.
    on_elicit : callable, default=None
        ``on_elicit(downstream, params)``, an async function that answers the server's
        request to ask the user something (MCP elicitation) with an ``ElicitResult``;
        ``None``: the gateway does not offer elicitation to the server.

    Attributes
    ----------
    state : str
        ``"starting"``, ``"ready"``, ``"restarting"``, ``"failed"`` (never started) or
        ``"stopped"``.
    error : str or None
        Why the last start or connection failed.
    tools : list of mcp.types.Tool
        The tools of the last listing (empty until the server was ready once; kept while
        it restarts).
    stderr : list of str
        The last of the :data:`STDERR_LINES` non-blank lines a stdio server wrote to its
        stderr in the start that last settled (became ready or failed; a restart under way
        does not hide why the last one failed), without terminal escapes or unprintable
        characters (those that hold nothing else left out), each at most 300 characters.
        For the person running the gateway: the server wrote them, so they never reach the
        agent.
    """

    def __init__(self, spec, *, call_timeout, start_timeout, on_change, spawn_lock,
                 echo_stderr=True, on_elicit=None):
        self.spec, self.on_elicit = spec, on_elicit
        self.call_timeout, self.start_timeout = call_timeout, start_timeout
        self.on_change, self.spawn_lock = on_change, spawn_lock
        self.echo_stderr = echo_stderr
        self._stderr: collections.deque = collections.deque(maxlen=STDERR_LINES)
        self._settled_stderr = self._stderr  # the lines of the start that last settled
        self._stderr_ended = threading.Event()
        self._stderr_ended.set()
        self.state, self.error, self.tools = "starting", None, []
        self.session, self.ever_ready = None, False
        self.settled = anyio.Event()  # set once the first start succeeded or failed
        self._lost = anyio.Event()
        self._relist = anyio.Event()

    @property
    def stderr(self) -> list[str]:
        """The last lines the server wrote to its stderr in the start that last settled."""
        cleaned = ("".join(c for c in _ESCAPE.sub("", line) if c.isprintable()).strip()
                   for line in list(self._settled_stderr))
        return [line[:300] for line in cleaned if line]

    # -- the task that owns the connection ----------------------------------------------------
    async def run(self) -> None:
        """Connect, serve, and reconnect with backoff, until cancelled."""
        delay = BACKOFF[0]
        try:
            while True:
                try:
                    await self._serve_once()
                except Exception as exc:  # noqa: BLE001 - any failure is a restart
                    error = _summary(exc)
                    # The process has been ended: its last lines are on their way.
                    await anyio.to_thread.run_sync(self._stderr_ended.wait, STDERR_WAIT)
                    self._settled_stderr = self._stderr
                    if error != self.error:  # once per kind of failure, not per retry
                        said = self.stderr
                        last = f" (its last output: {said[-1]})" if said else ""
                        log.warning("server %r: %s%s", self.spec.name, error, last)
                    self.error = error
                # The tools of the last listing stay in the catalogue while the server
                # restarts; their calls get a clear error until it is back.
                self.session = None
                self.state = "restarting" if self.ever_ready else "failed"
                self.settled.set()
                await anyio.sleep(delay)
                delay = min(2 * delay, BACKOFF[1])
        finally:
            self.state, self.session = "stopped", None

    async def _serve_once(self) -> None:
        import mcp.types as types
        from mcp import ClientSession

        async def on_message(message):
            if isinstance(message, types.ToolListChangedNotification):
                self._relist.set()

        async with contextlib.AsyncExitStack() as stack:
            # The transport and the session hold task groups of their own, so the time limit
            # covers the requests, not the entering of their contexts.
            read, write = await self._open(stack)
            elicit = {} if self.on_elicit is None else {
                "elicitation_callback": lambda context, params: self.on_elicit(self, params)}
            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=on_message, **elicit))
            with anyio.fail_after(self.start_timeout):
                await session.initialize()
                self.tools = await self._list_tools(session)
            self._lost, self._relist = anyio.Event(), anyio.Event()
            self.session, self.state, self.error = session, "ready", None
            self._settled_stderr = self._stderr
            self.ever_ready = True
            self.settled.set()
            await self.on_change(self)
            while True:
                with anyio.move_on_after(PING_INTERVAL) as idle:
                    async with anyio.create_task_group() as tg:
                        for event in (self._lost, self._relist):
                            tg.start_soon(_set_then_cancel, event, tg)
                if self._lost.is_set():
                    raise ConnectionError("the connection was lost")
                if self._relist.is_set():
                    self._relist = anyio.Event()
                    with anyio.fail_after(self.start_timeout):
                        self.tools = await self._list_tools(session)
                    await self.on_change(self)
                elif idle.cancelled_caught:
                    with anyio.fail_after(self.start_timeout):
                        await session.send_ping()

    async def _open(self, stack):
        """Launch or connect the transport; the process group dies with the stack."""
        if self.spec.url is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=dict(self.spec.headers), timeout=self.call_timeout + 5))
            read, write, *_ = await stack.enter_async_context(
                streamable_http_client(self.spec.url, http_client=http))
            return read, write
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=self.spec.command, args=list(self.spec.args),
                                       env=dict(self.spec.env) or None, cwd=self.spec.cwd)
        # The SDK ends the server (stdin closed, then signals); its process group, which the
        # server leads, is killed after that, so that no child of the server outlives it.
        spawned: set[int] = set()
        stack.callback(lambda: [_kill_group(pid) for pid in spawned])
        errlog = self._stderr_pipe()
        try:
            async with self.spawn_lock:
                before = _children()
                read, write = await stack.enter_async_context(stdio_client(params,
                                                                           errlog=errlog))
                spawned |= _children() - before
        finally:
            errlog.close()  # the server holds its own copy; the reader ends with the last
        return read, write

    def _stderr_pipe(self):
        """The write end of a pipe to give the server as its stderr; a thread reads the other.

        The thread keeps this start's last lines in a new :attr:`stderr` and echoes each
        line (if asked) until every process holding the write end has ended.
        """
        fd_read, fd_write = os.pipe()
        self._stderr = lines = collections.deque(maxlen=STDERR_LINES)
        self._stderr_ended = ended = threading.Event()
        prefix = f"[{self.spec.name}] "

        def drain():
            with open(fd_read, "rb") as pipe:
                # Bounded reads: a line without end costs a buffer, not the memory. The lines
                # are cleaned when read (stderr), not here: a chatty server costs little.
                while chunk := pipe.readline(STDERR_LINE_BYTES):
                    text = chunk.decode("utf-8", "replace").rstrip("\r\n")
                    if self.echo_stderr:
                        with contextlib.suppress(OSError, ValueError):
                            sys.stderr.write(prefix + text + "\n")  # stderr is line-buffered
                    if text and not text.isspace():
                        lines.append(text)
            ended.set()

        threading.Thread(target=drain, name=prefix.strip(), daemon=True).start()
        return open(fd_write, "w")

    async def _list_tools(self, session):
        from mcp.types import PaginatedRequestParams

        tools, cursor = [], None
        for _ in range(MAX_PAGES):
            page = await session.list_tools(
                params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor or len(tools) >= MAX_TOOLS:
                break
        if len(tools) > MAX_TOOLS or cursor:
            log.warning("server %r lists more than %s tools or %s pages; the first %s are served",
                        self.spec.name, f"{MAX_TOOLS:,}", MAX_PAGES, min(len(tools), MAX_TOOLS))
        return [t for t in tools[:MAX_TOOLS] if self.spec.serves(t.name)]

    # -- forwarding -----------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict):
        """The server's ``CallToolResult`` for ``tool``, passed through unchanged.

        Raises
        ------
        DownstreamError
            When the server is not running, stops during the call, takes longer than
            ``call_timeout``, or answers with a protocol error; the message says which.
        """
        import mcp.types as types
        from mcp.shared.exceptions import MCPError

        session = self.session
        if session is None or self.state != "ready":
            why = f" ({self.error})" if self.error else ""
            raise DownstreamError(MSG_NOT_READY.format(server=self.spec.name, state=self.state,
                                                       why=why))
        request = types.CallToolRequest(params=types.CallToolRequestParams(
            name=tool, arguments=arguments))
        try:
            with anyio.fail_after(self.call_timeout):
                # send_request, not call_tool: the SDK's call_tool re-validates the result and
                # may list the tools again; a gateway passes the result through as it came.
                return await session.send_request(request, types.CallToolResult)
        except TimeoutError:
            raise DownstreamError(MSG_TIMEOUT.format(tool=tool, server=self.spec.name,
                                                     timeout=self.call_timeout)) from None
        except MCPError as err:
            if err.code != types.CONNECTION_CLOSED:
                raise DownstreamError(MSG_REFUSED.format(server=self.spec.name, tool=tool,
                                                         error=err.message)) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        self._lost.set()
        raise DownstreamError(MSG_LOST.format(server=self.spec.name))


async def _set_then_cancel(event, tg):
    await event.wait()
    tg.cancel_scope.cancel()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _summary(exc: BaseException) -> str:
    """One line for an exception, looking inside the task groups the SDK raises."""
    while getattr(exc, "exceptions", None):  # an exception group
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())[:300]
    if isinstance(exc, TimeoutError):
        return "did not start in time"
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({text})"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
