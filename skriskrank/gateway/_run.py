"""Running the gateway: serving it, checking its servers, writing its review file."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import anyio

from .._files import write_atomically

__all__ = ["build_once", "check", "review", "run"]


async def run(gateway, *, http=None) -> None:
    """Serve ``gateway`` over stdio, or over streamable HTTP.

    Parameters
    ----------
    gateway : Gateway
        The gateway to serve; its servers start here.
    http : tuple of (str, int) or None, default=None
        ``(host, port)`` to serve streamable HTTP at ``/mcp``; ``None`` serves stdio.

    Returns when the client closes the connection (stdio) or the process is interrupted
    (HTTP); every server the gateway started has ended by then.
    """
    from .._serve import answer_unreadable

    server = gateway.server()
    options = gateway.initialization_options(server)
    try:
        async with anyio.create_task_group() as tg:
            await gateway.start(tg)
            if http is None:
                from mcp.server.stdio import stdio_server

                async with stdio_server() as (read, write), \
                        answer_unreadable(read, write) as guarded:
                    # stdio_server moved fd 1 to the protocol; a stray print goes to stderr.
                    with contextlib.redirect_stdout(sys.stderr):
                        await server.run(guarded, write, options)
            else:
                import uvicorn

                host, port = http
                # The HTTP session manager asks for the options without arguments.
                server.create_initialization_options = lambda *args, **kwargs: options
                app = server.streamable_http_app(host=host)
                await uvicorn.Server(uvicorn.Config(app, host=host, port=port,
                                                    log_level="warning")).serve()
            tg.cancel_scope.cancel()
    finally:
        gateway.log.close()


async def check(gateway) -> list[dict]:
    """Start every server once, and return each one's state, tool count and error.

    Parameters
    ----------
    gateway : Gateway
        The gateway whose servers to check.

    Returns
    -------
    status : list of dict
        ``server``, ``state`` (``"ready"`` or ``"failed"``), ``tools``, ``error`` and
        ``stderr`` (a stdio server's last lines on its stderr, which say why it failed).
    """
    async with _started(gateway):
        return gateway.status()


async def build_once(gateway):
    """Start every server once, build the catalogue of their tools, and stop them.

    Parameters
    ----------
    gateway : Gateway
        The gateway whose servers to list; its ``labels`` are applied.

    Returns
    -------
    catalogue : Catalogue
        The catalogue the gateway would serve, graded and scanned: what ``skriskrank fit
        --gateway`` fits a model on.
    """
    async with _started(gateway):
        return await anyio.to_thread.run_sync(gateway.build)


@contextlib.asynccontextmanager
async def _started(gateway):
    """Every server of ``gateway`` started once and settled; all stopped on leaving."""
    async with anyio.create_task_group() as tg:
        for downstream in gateway.downstreams:
            tg.start_soon(downstream.run)
        await gateway.settled()
        yield
        tg.cancel_scope.cancel()


async def review(gateway, path) -> dict:
    """Grade every tool of the servers and write the review file a person checks once.

    The file is a JSON object from each tool's gateway name to its row of the audit
    (:meth:`~skriskrank.RiskAuditor.audit`), its server, the SHA-256 of its definition and the
    ``risk_level`` the gateway will use: the declared one where there is one, else the
    auditor's. A person edits ``risk_level`` where they disagree, and lists in
    ``accept_flags`` the poisoning flags (the row's ``flags``) they judged false; ``--labels``
    reads the file back, and a tool whose definition no longer matches its SHA-256 is
    refused until it is reviewed again.

    Parameters
    ----------
    gateway : Gateway
        The gateway whose servers to grade; its ``labels`` are applied.
    path : str or path-like
        The JSON file to write.

    Returns
    -------
    rows : dict
        What was written.
    """
    catalogue = await build_once(gateway)
    rows = {}
    if catalogue.registry is not None:
        frame = gateway.auditor.audit(catalogue.registry)
        for record in json.loads(frame.to_json(orient="records")):
            entry = catalogue.entries[record["name"]]
            declared = record["declared"]
            label = (gateway.labels or {}).get(entry.name)
            kept = label.get("accept_flags", []) if isinstance(label, dict) else []
            rows[entry.name] = {"risk_level": declared if declared is not None
                                else record["predicted"], "server": entry.server,
                                "tool": entry.tool_name, "sha256": entry.sha256,
                                "accept_flags": [] if entry.changed else kept, **record}
    # Whole or not at all: the file may be the one a person reviewed, read above.
    text = json.dumps(rows, indent=2) + "\n"
    write_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return rows
