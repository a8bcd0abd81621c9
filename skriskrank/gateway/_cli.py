"""``skriskrank gateway CONFIG``: the command line of the gateway."""

from __future__ import annotations

import argparse
import logging
import sys

from .._cli import _count, number

__all__ = ["add_gateway_parser"]

#: ``--http`` binds these addresses only: the gateway has no authentication of its own.
LOOPBACK = {"127.0.0.1", "localhost", "::1"}

MSG_HTTP = ("--http takes HOST:PORT on a loopback address (127.0.0.1, localhost, ::1), got "
            "{value!r}")


def _http(value: str):
    host, _, port = value.rpartition(":")
    host = host.strip("[]")
    if host not in LOOPBACK or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(MSG_HTTP.format(value=value[:60]))
    return host, int(port)


_seconds = number(float, lambda s: 0 < s <= 3600, "expected seconds in (0, 3600], got {value!r}")
_level = number(int, lambda n: 1 <= n <= 5, "expected a risk level 1..5, got {value!r}")


def add_gateway_parser(subparsers, backend, need) -> None:
    """Add the ``gateway`` command to the ``skriskrank`` parser's subparsers."""
    from .._cli import _add_cache

    p = subparsers.add_parser(
        "gateway", help="a risk-aware MCP gateway in front of your MCP servers",
        description="Connect to the MCP servers of an MCP host configuration and serve one "
        "MCP server with two tools: search_tools (the risk-aware top k of all their tools) "
        "and call_tool (forwarded to the tool's server when the policy allows it).")
    p.add_argument("config", help='an MCP host configuration: {"mcpServers": {name: '
                   '{"command", "args", "env", "cwd"} | {"url", "headers"}}}')
    p.add_argument("--http", type=_http, metavar="HOST:PORT",
                   help="serve streamable HTTP on a loopback address instead of stdio")
    p.add_argument("--labels", help="reviewed levels: the file --audit writes, or "
                   '{"tool": 1..5}')
    p.add_argument("--audit", metavar="OUT", help="write the graded catalogue (a review file "
                   "for --labels, JSON) and exit")
    p.add_argument("--check", action="store_true",
                   help="start each server, print its state and tool count, and exit (1 if "
                   "any failed)")
    p.add_argument("--k", type=_count, default=8, help="search_tools' default k (default 8)")
    p.add_argument("--need-threshold", default=0.5, **need)
    p.add_argument("--confirm-level", type=_level, default=3, metavar="LEVEL",
                   help="tools of this level or above run only if a search returned them "
                   "(default 3)")
    p.add_argument("--confirm", action="store_true",
                   help="ask the user (MCP elicitation) before any call of level 4 or above")
    p.add_argument("--read-only", action="store_true", help="only tools of levels 1-2 run")
    p.add_argument("--allow", action="append", default=[], metavar="PATTERN",
                   help="only tools matching a glob on server__tool or tool run (repeatable)")
    p.add_argument("--deny", action="append", default=[], metavar="PATTERN",
                   help="tools matching a glob on server__tool or tool never run "
                   "(repeatable)")
    p.add_argument("--expose", action="store_true",
                   help="also list the last search's tools in the gateway's tools/list")
    p.add_argument("--call-timeout", type=_seconds, default=60.0, metavar="SECONDS",
                   help="cancel a call after this long (default 60)")
    p.add_argument("--start-timeout", type=_seconds, default=60.0, metavar="SECONDS",
                   help="give each server this long to start (default 60)")
    p.add_argument("--log", metavar="PATH", help="append every search and call as a JSON line")
    p.add_argument("--log-arguments", action="store_true",
                   help="also log the arguments of each call")
    p.add_argument("--model", metavar="FILE", help="a model fitted on this gateway's log "
                   "(skriskrank fit --gateway CONFIG --log LOG): it ranks while the catalogue "
                   "is the one it was fitted on, the pretrained pipeline otherwise")
    _add_cache(p)
    p.add_argument("--backend", **backend)
    p.set_defaults(handler=run_gateway)


def run_gateway(args) -> int:
    """Run ``skriskrank gateway`` (bad input: one line, exit status 2)."""
    import anyio

    from .._cli import _cache, _load_pipeline
    from .._persist import _check_output
    from .._rubric import RISKY_LEVEL, UNKNOWN_RISK
    from .._tools import read_levels
    from . import EventLog, Gateway, Policy, check, load_config, review, run
    from ._catalogue import _accepted_flags

    servers = load_config(args.config)
    model = _load_pipeline(args.model) if args.model else None
    cache = _cache(args)
    labels = read_levels(args.labels) if args.labels else None
    for name, label in (labels or {}).items():
        _accepted_flags(name, label)  # a malformed review row fails here, not mid-session
    for path in (args.audit, args.log):
        if path:
            _check_output(path)
    # The gateway's own messages on stderr (stdout is the protocol's); other libraries keep
    # their defaults.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("skriskrank gateway: %(message)s"))
    logger = logging.getLogger("skriskrank.gateway")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    policy = Policy(confirm_level=args.confirm_level, confirm=args.confirm,
                    read_only=args.read_only, allow=tuple(args.allow), deny=tuple(args.deny))
    gateway = Gateway(servers, policy=policy, labels=labels, k=args.k,
                      need_threshold=args.need_threshold,
                      call_timeout=args.call_timeout, start_timeout=args.start_timeout,
                      log=EventLog(args.log, log_arguments=args.log_arguments),
                      expose=args.expose, backend=args.backend,
                      # A check or review prints its own report; a failed server's last
                      # lines are part of it.
                      echo_stderr=not (args.check or args.audit), model=model, cache=cache)
    if args.check:
        status = anyio.run(check, gateway)
        width = max(len(s["server"]) for s in status)
        for s in status:
            error = f"  {s['error']}" if s["error"] else ""
            print(f"{s['server']:<{width}}  {s['state']:<10} {s['tools']:>4} tools{error}")
            if s["state"] != "ready":
                for line in s["stderr"]:
                    print(f"{'':<{width}}  | {line}")
        return 1 if any(s["state"] != "ready" for s in status) else 0
    if args.audit:
        rows = anyio.run(review, gateway, args.audit)
        risky = sum(1 for r in rows.values() if (r["risk_level"] or UNKNOWN_RISK) >= RISKY_LEVEL)
        review_count = sum(1 for r in rows.values() if r["needs_review"])
        print(f"wrote {args.audit}: {len(rows)} tools, {risky} at level >= 3, "
              f"{review_count} to review")
        return 0
    anyio.run(lambda: run(gateway, http=args.http))
    return 0
