"""``skriskrank audit TOOLS.json``: grade a tool catalogue that nobody has labelled."""

from __future__ import annotations

from pathlib import Path

__all__ = ["add_audit_parser", "audit_summary", "format_audit", "run_audit"]

MSG_OUT_SUFFIX = "--out must end in .csv or .json, got {path}."


def add_audit_parser(subparsers, backend) -> None:
    """Add the ``audit`` command to the ``skriskrank`` parser's subparsers."""
    p = subparsers.add_parser(
        "audit", help="grade the risk of MCP, OpenAI or Anthropic tools (offline)",
        description="Grade each tool on the paper's five-level risk rubric with the packaged "
        "RiskAuditor and say which tools a person should review.")
    p.add_argument("tools", nargs="+", help="JSON files: MCP tools/list results, OpenAI or "
                   "Anthropic tool lists")
    p.add_argument("--labels", help='JSON object of declared levels: {"tool": 1..5}')
    p.add_argument("--out", help="write the full audit to a .csv or .json file")
    p.add_argument("--coverage", type=float, default=None,
                   help="the conservative rule's probability (default: the auditor's)")
    p.add_argument("--trust-hints", action="store_true",
                   help="let readOnlyHint lower levels (only for servers you control)")
    p.add_argument("--all", action="store_true", help="print every tool, not only the first 50")
    p.add_argument("--backend", **backend)
    p.set_defaults(handler=run_audit)


def format_audit(frame, *, limit: int | None = 50) -> str:
    """The audit as a plain-text table, the tools to review first, riskiest first."""
    import pandas as pd

    order = frame.sort_values(["needs_review", "predicted", "p_risky"], ascending=False,
                              kind="stable")
    shown = order if limit is None else order.head(limit)
    rows = [[str(r["name"]), "" if pd.isna(r["declared"]) else str(r["declared"]),
             str(r["predicted"]), str(r["median"]), f"{r['p_risky']:.2f}", r["hints"] or "-",
             ("REVIEW: " + r["reason"]) if r["needs_review"] else ""]
            for _, r in shown.iterrows()]
    heads = ["tool", "declared", "level", "median", "P(>=3)", "hints", "review"]
    widths = [max(map(len, column)) for column in zip(heads, *rows, strict=True)]
    # rstrip: no padding after the last column
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in [heads, *rows]]
    if len(shown) < len(frame):
        lines.append(f"... {len(frame) - len(shown)} more (--all shows every tool)")
    return "\n".join(lines)


def run_audit(args) -> int:
    """Run ``skriskrank audit`` (bad input: ``main`` prints one line, exit status 2)."""
    from . import RiskAuditor, load_tools
    from ._rubric import RISKY_LEVEL
    from ._tools import read_levels

    labels = read_levels(args.labels) if args.labels else None
    if args.out:
        from ._persist import _check_output

        if Path(args.out).suffix.lower() not in (".csv", ".json"):
            raise ValueError(MSG_OUT_SUFFIX.format(path=args.out))
        _check_output(args.out)
    registry = load_tools(args.tools, risk=labels, trust_hints=args.trust_hints)
    params = {"show_progress_bar": True}
    if args.coverage is not None:
        params["coverage"] = args.coverage
    auditor = RiskAuditor.pretrained(**params, backend=args.backend)
    frame = auditor.audit(registry)
    print(f"skriskrank audit: {len(frame)} tools from {len(args.tools)} file(s); "
          f"{int((frame['predicted'] >= RISKY_LEVEL).sum())} at level >= 3; "
          f"{int(frame['needs_review'].sum())} to review")
    print(f"level: the lowest level L with P(level <= L) >= {auditor.coverage} (errs towards "
          "risk); median: the median level (coverage 0.5); P(>=3): the chance of level 3..5")
    print(format_audit(frame, limit=None if args.all else 50))
    if args.out:
        out = Path(args.out)
        if out.suffix.lower() == ".csv":
            frame.to_csv(out, index=False)
        else:
            out.write_text(frame.to_json(orient="records", indent=2) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    return 0


def audit_summary(registry) -> str:
    """One line: how the packaged auditor's levels compare with a registry's declared ones."""
    from . import RiskAuditor
    from ._rubric import RISKY_LEVEL
    from .metrics import agreement

    auditor = RiskAuditor.pretrained(show_progress_bar=False)
    frame = auditor.audit(registry)
    known = frame["declared"].notna().to_numpy()
    risky = int((frame["predicted"] >= RISKY_LEVEL).sum())
    line = (f"audit (RiskAuditor.pretrained(), coverage {auditor.coverage}): {risky} of "
            f"{len(frame)} tools at level >= 3, {int(frame['needs_review'].sum())} to review")
    if known.sum() >= 2:
        stats = agreement(frame.loc[known, "declared"].astype(int), frame.loc[known, "median"])
        line += (f"; median level vs declared: exact {stats['exact']:.2f}, within one "
                 f"{stats['within_one']:.2f}, QWK {stats['qwk']:.2f}")
    return line
