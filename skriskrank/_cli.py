"""The ``skriskrank`` command line: fit, rank, evaluate, audit, serve and a demo, offline.

Every command has ``--help``. Bad input (a missing file, a malformed catalogue, a model file
that is not one) ends with exit status 2 and one line on stderr, no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

# Only the standard library here: ``skriskrank --help`` imports nothing else. Each command
# imports what it uses.
from ._inputs import check_query

__all__ = ["main"]

# skriskrank._encoder.BACKENDS and DEFAULT_BACKEND, written out so that ``--help`` needs no
# numpy (a test checks that they agree).
_BACKENDS, _DEFAULT_BACKEND = ("torch", "onnx", "onnx-int8", "torch-bf16"), "onnx"

MSG_ONE_SOURCE = "give a model file or --tools, not both (and at least one)."
MSG_CACHE_BOTH = "give --cache DIR or --no-cache, not both."
MSG_NO_GATEWAY_TOOLS = ("--gateway {config}: no server listed a tool (skriskrank gateway "
                        "{config} --check shows why).")
MSG_NOT_PIPELINE = ("{path} holds a {type}, not a pipeline that starts with FrozenEmbedder; "
                    "skriskrank fit writes one.")
MSG_COUNT = "expected a whole number from 1 to {limit:,}, got {value!r}"
MSG_PROBABILITY = "expected a probability from 0 to 1, got {value!r}"
MSG_NOT_NEED_AWARE = ("--need-threshold sets a need-aware filter, but {path} ends with a "
                      "{type}; fit it with --need-aware.")

#: The largest count a command-line option takes (a list length or an epoch count).
_MAX_COUNT = 100_000


def number(parse, valid, message: str, **fields):
    """An argparse type: ``parse(value)`` if ``valid`` holds for it (never for NaN)."""

    def check(value: str):
        try:
            x = parse(value)
        except ValueError:
            x = None
        if x is None or not valid(x):
            raise argparse.ArgumentTypeError(message.format(value=value[:20], **fields))
        return x

    return check


_probability = number(float, lambda p: 0 <= p <= 1, MSG_PROBABILITY)
_count = number(int, lambda n: 1 <= n <= _MAX_COUNT, MSG_COUNT, limit=_MAX_COUNT)


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors in one line (``skriskrank rank: error: ...``), exit 2."""

    def error(self, message):
        _fail(self.prog, message)
        self.exit(2)


def _fail(prog: str, message) -> None:
    # One line, and printable whatever the message holds: a path or query from the command
    # line may hold undecodable bytes (lone surrogates), which print() would choke on.
    text = " ".join(str(message).split()).encode("utf-8", "backslashreplace").decode()
    print(f"{prog}: error: {text}", file=sys.stderr)


def _load_pipeline(path):
    """The fitted pipeline of a model file; anything else is a one-line error."""
    from sklearn.pipeline import Pipeline

    from . import FrozenEmbedder, load

    pipe = load(path)
    if not isinstance(pipe, Pipeline) or not isinstance(pipe.steps[0][1], FrozenEmbedder):
        raise ValueError(MSG_NOT_PIPELINE.format(path=path, type=type(pipe).__name__))
    return pipe


# -- loading --------------------------------------------------------------------------------
def _registry(paths, labels, backend, cache=None):
    """The catalogue of ``--tools`` files (or one CSV), unlabelled tools graded by the auditor.

    With ``cache`` (a directory), the tools' embeddings and scan findings are read from it
    where an earlier process wrote them, and the others written to it.
    """
    from . import RiskAuditor, load_tools
    from ._tools import read_levels
    from .datasets import load_registry_csv

    csv = len(paths) == 1 and str(paths[0]).lower().endswith(".csv")
    # load_tools scans each server's tools for poisoning (what an earlier process found in a
    # tool is read from the cache); a CSV is scanned when graded.
    registry = (load_registry_csv(paths[0]) if csv
                else load_tools(paths, risk=read_levels(labels) if labels else None,
                                cache=cache))
    if cache is not None:
        from ._encoder import prefetch
        from ._pretrained import catalogue_texts

        prefetch(catalogue_texts(registry), cache, backend=backend)  # a bar past 1,000 texts
    return RiskAuditor.pretrained(show_progress_bar=True, backend=backend).grade(registry,
                                                                                 scan=csv)


def _cache(args):
    """The directory of ``--cache`` / ``--no-cache``: the default one, or None for neither."""
    from ._onnx import _cache_dir

    if args.no_cache and args.cache:
        raise ValueError(MSG_CACHE_BOTH)
    return None if args.no_cache else args.cache or _cache_dir() / "embeddings"


def _gateway_registry(config, labels, backend, cache):
    """The catalogue a gateway serves for ``config``: its servers started once and listed.

    Read through the gateway's embedding cache, the tools' vectors, and so the levels the
    auditor grades from them, are the ones the gateway reads: the model's catalogue is then
    the gateway's to the bit, with any backend (int8's vectors depend on their batch).
    """
    import anyio

    from ._tools import read_levels
    from .gateway import Gateway, load_config
    from .gateway._run import build_once

    gateway = Gateway(load_config(config), labels=read_levels(labels) if labels else None,
                      backend=backend, echo_stderr=False, cache=cache)
    registry = anyio.run(build_once, gateway).registry
    if registry is None:
        raise ValueError(MSG_NO_GATEWAY_TOOLS.format(config=config))
    return registry


# -- the commands ---------------------------------------------------------------------------
def fit(args) -> int:
    from . import build_pipeline, save
    from ._graph import EDGE_TYPES, SERVER_EDGE
    from ._persist import _check_output
    from ._pretrained import SENTENCE_WEIGHT, TOOL_TEXT
    from .datasets import load_queries_jsonl
    from .gateway import read_log

    _check_output(args.output)  # before any work: a bad path fails now, not after training
    cache = _cache(args)
    registry = (_gateway_registry(args.gateway, args.labels, args.backend, cache)
                if args.gateway else _registry(args.tools, args.labels, args.backend, cache))
    log = args.log is not None
    data = read_log(args.log, registry) if log else load_queries_jsonl(args.queries, registry)
    # From a log: what the pretrained pipeline reads (sentences, brief texts, servers), with a
    # reranker and need model trained on what the agent called after each search.
    pipe = build_pipeline(registry, k=args.k, need_aware=args.need_aware or log,
                          epochs=args.epochs, backend=args.backend, risk_weight=args.risk_weight,
                          verbose=1, sentence_weight=SENTENCE_WEIGHT if log else 0.0,
                          tool_text=TOOL_TEXT if log else "full",
                          edge_types=(*EDGE_TYPES, SERVER_EDGE) if log else EDGE_TYPES)
    t0 = time.perf_counter()
    pipe.fit(data.queries, data.relevant)
    # Bars while fitting; the saved model shows one only for large encodes (rank, serve).
    save(pipe.set_params(embed__show_progress_bar=None), args.output)
    summary = {"model": str(args.output), "tools": len(registry), "queries": len(data),
               "predicted_levels": int(registry.risk_predicted.sum()),
               "seconds": round(time.perf_counter() - t0, 1)}
    print(json.dumps(summary) if args.json else
          f"fitted on {len(data)} queries over {len(registry)} tools "
          f"({summary['predicted_levels']} levels from the auditor) in {summary['seconds']} s;"
          f" saved {args.output}")
    return 0


def rank(args) -> int:
    from ._explain import search

    rows = search(_load_pipeline(args.model), check_query(args.query), args.k,
                  dropped=args.explain)
    if args.json:
        print(json.dumps({"query": args.query, "tools": [r for r in rows if r["rank"]]},
                         indent=2))
        return 0
    for r in rows:
        if r["rank"] is None:
            if not r["reason"].startswith("not reached"):
                print(f"  -  {r['name']}  {r['reason']}")
            continue
        level = "?" if r["risk_level"] is None else r["risk_level"]
        line = f"{r['rank']:>2}. {r['name']}  [risk {level}]  score {r['score']:.3f}"
        print(line + (f"  - {r['reason']}" if args.explain else ""))
    return 0


def evaluate(args) -> int:
    from .datasets import load_queries_jsonl
    from .metrics import ranking_report

    pipe = _load_pipeline(args.model)
    registry = pipe.steps[0][1].registry
    data = load_queries_jsonl(args.queries, registry)
    k = getattr(pipe.steps[-1][1], "k", 5)
    report = ranking_report(pipe.predict(data.queries), data.relevant, registry, k=k)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    width = max(map(len, report))
    for key, value in report.items():
        print(f"{key:<{width}}  {value:.3f}" if isinstance(value, float)
              else f"{key:<{width}}  {value}")
    return 0


def serve(args) -> int:
    from . import NeedAwareFilter, pretrained_pipeline
    from ._serve import serve as run

    if (args.model is None) == (not args.tools):
        raise ValueError(MSG_ONE_SOURCE)
    pipe = (_load_pipeline(args.model) if args.model
            else pretrained_pipeline(_registry(args.tools, args.labels, args.backend,
                                               _cache(args)), k=args.k, backend=args.backend))
    if args.need_threshold is not None:
        name, last = pipe.steps[-1]
        if not isinstance(last, NeedAwareFilter):
            raise ValueError(MSG_NOT_NEED_AWARE.format(path=args.model, type=type(last).__name__))
        pipe.set_params(**{f"{name}__need_threshold": args.need_threshold})
    run(pipe)
    return 0


def demo(args) -> int:
    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import Pipeline

    from . import NeedAwareFilter
    from ._audit_cli import audit_summary
    from ._pipeline import build_pipeline
    from ._rubric import RISKY_LEVEL, UNKNOWN_RISK
    from .datasets import load_demo, load_queries_jsonl, load_registry_csv
    from .metrics import ranking_report

    t0 = time.perf_counter()
    if (args.registry is None) != (args.queries is None):
        raise ValueError("give both --registry and --queries, or neither.")
    ds = (load_demo().as_dataset() if args.registry is None
          else load_queries_jsonl(args.queries, load_registry_csv(args.registry)))
    reg = ds.registry
    train, test = train_test_split(np.arange(len(ds)), test_size=args.test_size,
                                   random_state=args.seed)
    train_ds, test_ds = ds.subset(train), ds.subset(test)
    print(f"skriskrank demo: {len(reg)} tools, {len(ds)} queries "
          f"({len(train)} to fit, {len(test)} held out)")
    pipe = build_pipeline(reg, model=args.model, n_candidates=min(100, len(reg)),
                          risk_weight=args.risk_weight, random_state=args.seed,
                          cache=args.cache or True)
    pipe.fit(train_ds.queries, train_ds.relevant)
    need = Pipeline([*pipe.steps[:-1], ("filter", NeedAwareFilter())])
    need.steps[-1][1].fit(Pipeline(pipe.steps[:-1]).transform(train_ds.queries),
                          train_ds.relevant)
    print(f"fitted in {time.perf_counter() - t0:.1f} s")
    print(audit_summary(reg))

    # The same fitted steps, cut at different points: every prefix is a complete ranker.
    rerank, queries = pipe.named_steps["rerank"], test_ds.queries
    rows = {"dense retrieval": Pipeline(pipe.steps[:2]).predict(queries)}
    rerank.set_params(risk_weight=0.0)
    rows["relevance only (lambda=0)"] = Pipeline(pipe.steps[:3]).predict(queries)
    rerank.set_params(risk_weight=args.risk_weight)
    rows[f"risk-aware (lambda={args.risk_weight:g})"] = Pipeline(pipe.steps[:3]).predict(queries)
    rows["+ graph + rule filter"] = pipe.predict(queries)
    rows["+ graph + need-aware filter"] = need.predict(queries)

    def fmt(names):
        return ", ".join(f"{n} [r{'?' if r == UNKNOWN_RISK else r}]"
                         for n, r in zip(names, reg.risk_of(list(names)), strict=True))

    # Show the queries where the rankings differ most: those whose dense top-k is riskiest.
    dense_risk = (reg.risk_of(rows["dense retrieval"].ravel()).reshape(
        rows["dense retrieval"].shape) >= RISKY_LEVEL).sum(axis=1)
    for i in np.argsort(-dense_risk, kind="stable")[: args.show]:
        print(f"\nQuery: {queries[i]}")
        print(f"  gold: {fmt(sorted(test_ds.relevant[i]))}")
        for name in list(rows)[1:]:
            print(f"  {name:<30} {fmt(rows[name][i])}")
    print(f"\nHeld-out metrics over {len(queries)} queries (k=5; RVR/SRR lower is better):")
    keys = ["ndcg@5", "mrr", "rvr@5", "srr@5", "safe_rvr@5", "needrisk_hit@5", "unneeded_rvr@5"]
    print(f"  {'ranker':<30} " + " ".join(f"{k:>14}" for k in keys))
    for name, top in rows.items():
        rep = ranking_report(top, test_ds.relevant, reg, k=5)
        print(f"  {name:<30} " + " ".join(f"{rep[k]:>14.3f}" for k in keys))
    print(f"\ndone in {time.perf_counter() - t0:.1f} s")
    return 0


# -- the parser -----------------------------------------------------------------------------
def _add_cache(p) -> None:
    """``--cache DIR`` and ``--no-cache``: where the tools' embeddings outlive the process."""
    p.add_argument("--cache", metavar="DIR", help="keep the tools' embeddings (and, for the "
                   "gateway, what the poisoning scan found in each tool) here from one start "
                   "to the next (default: $SKRISKRANK_CACHE/embeddings or "
                   "~/.cache/skriskrank/embeddings; queries are never kept)")
    p.add_argument("--no-cache", action="store_true",
                   help="encode every tool at every start, keeping nothing on disk")


def _parser():
    parser = _Parser(prog="skriskrank", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    tools = dict(action="append", metavar="TOOLS", help="a tool catalogue: an MCP tools/list "
                 "result, an OpenAI or Anthropic tool list (JSON), or a CSV; repeatable")
    backend = dict(choices=_BACKENDS, default=_DEFAULT_BACKEND,
                   help="what runs the encoder: ONNX Runtime on the CPU (default), PyTorch, or, "
                   "for the tools' texts, ONNX Runtime with int8 weights or PyTorch with "
                   "bfloat16 ones")
    labels = dict(help='JSON object of declared risk levels: {"tool": 1..5}; the packaged '
                  "RiskAuditor grades the other tools")
    need_help = ("show a tool of level >= 3 from this probability that the task needs it "
                 "(default 0.5{}; lower shows more of them)")
    need = dict(type=_probability, metavar="P", help=need_help.format(""))

    p = sub.add_parser("fit", help="fit a pipeline on a catalogue and labelled queries, or on "
                       "a gateway's log")
    catalogue = p.add_mutually_exclusive_group(required=True)
    catalogue.add_argument("--tools", **tools)
    catalogue.add_argument("--gateway", metavar="CONFIG", help="the catalogue a skriskrank "
                           "gateway serves for this MCP host configuration (its servers are "
                           "started once); the model then ranks in that gateway (--model)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--queries",
                        help='JSONL: {"query": str, "relevant": [tool names]} per line')
    source.add_argument("--log", help="a gateway's --log file: each search, with the tools the "
                        "agent called after it, is a labelled query")
    p.add_argument("--labels", **labels)
    p.add_argument("-o", "--output", required=True, help="the model file to write (.skops)")
    p.add_argument("--k", type=_count, default=5, help="tools per list (default 5)")
    p.add_argument("--epochs", type=_count, default=10, help="training epochs (default 10)")
    p.add_argument("--risk-weight", type=float, default=0.1, help="lambda (default 0.1)")
    p.add_argument("--need-aware", action="store_true",
                   help="end with the NeedAwareFilter instead of the paper's RuleFilter")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    _add_cache(p)
    p.add_argument("--backend", **backend)
    p.set_defaults(handler=fit)

    p = sub.add_parser("rank", help="rank the tools of a fitted model for one query")
    p.add_argument("model", help="a model file written by skriskrank fit")
    p.add_argument("query", help="the task, in plain words")
    p.add_argument("--k", type=_count, default=5, help="tools to show (default 5)")
    p.add_argument("--explain", action="store_true",
                   help="say why each tool was kept, and which were dropped and why")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=rank)

    p = sub.add_parser("evaluate", help="the metrics report of a model on labelled queries")
    p.add_argument("model", help="a model file written by skriskrank fit")
    p.add_argument("--queries", required=True, help="JSONL of labelled queries")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=evaluate)

    p = sub.add_parser("serve", help="serve a risk-aware search_tools over MCP (stdio)")
    p.add_argument("model", nargs="?", help="a model file written by skriskrank fit")
    p.add_argument("--tools", **tools)
    p.add_argument("--labels", **labels)
    p.add_argument("--k", type=_count, default=5, help="default list length (default 5)")
    p.add_argument("--need-threshold", **{**need, "help": need_help.format(
        ", or the model file's")})
    _add_cache(p)
    p.add_argument("--backend", **backend)
    p.set_defaults(handler=serve)

    p = sub.add_parser("demo", help="fit the pipeline and compare rankings on held-out queries")
    p.add_argument("--registry", help="CSV: name, description, risk, permissions")
    p.add_argument("--queries", help='JSONL: {"query": str, "relevant": [names]} per line')
    p.add_argument("--model", default=None, help="sentence-transformers name or path")
    p.add_argument("--risk-weight", type=float, default=0.1, help="lambda (default 0.1)")
    p.add_argument("--test-size", type=float, default=0.3, help="held-out share (default 0.3)")
    p.add_argument("--show", type=_count, default=4, help="queries to print (default 4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", default=None, help="directory for an on-disk embedding cache")
    p.set_defaults(handler=demo)

    from ._audit_cli import add_audit_parser
    from .gateway._cli import add_gateway_parser

    add_audit_parser(sub, backend)
    add_gateway_parser(sub, backend, need)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``skriskrank`` console script and ``python -m skriskrank``."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as done:  # --help exits 0 as argparse does; a usage error returns 2
        if done.code:
            return done.code
        raise
    # Offline by default: the packaged model needs no hub, and a hub lookup would hang here.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        return args.handler(args)
    except (ValueError, OSError, ImportError) as err:  # ModelFileError is a ValueError
        _fail(f"skriskrank {args.command}", err)
        return 2
