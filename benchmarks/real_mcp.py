"""Tool search on catalogues nobody labelled: the pretrained pipeline against dense and BM25.

Real-MCP tasks: the tasks of Accenture/mcp-bench (``benchmarks/mcp_bench.py``), each query the
task's tool-free ``fuzzy_description`` and its gold the tools the task names (median 9). The
catalogue is the 257 tools of mcp-bench's 28 servers plus, as distractors, the 3,304 tools
of the harvested servers (``benchmarks/data/mcp_harvest``) that do not duplicate one of them:
3,561 tools of 134 servers. The encoder reads each tool as a gateway serves it (its own
name, description and parameters); levels are the packaged auditor's grades of those texts.
Dense retrieval, the baseline, encodes those whole texts; the pretrained pipeline encodes
each tool's brief text (``brief_text``: the name's words, the description's first sentence,
the parameters' names).

Every option is compared on the *development* split (52 tasks); the pretrained pipeline's
settings were chosen there, and the chosen pipeline is reported once on the *test* split (51
tasks). The need model the pipeline ships is trained on the development split's tasks
(``--train``): real tasks need about nine tools each, and a model trained on the benchmarks'
tasks of two or three gold tools gives the candidates of real tasks a far lower probability
of being needed than their gold rate (the calibration table). Its rows on the development
split are therefore in-sample (three numbers fitted); the test split is not. UltraTool and
Seal-Tools are never in its training data, so they evaluate it as they are.

    python -m benchmarks.real_mcp --data ../shared/data [--train | --readiness | --benchmarks
                                                         | --encoders | --lengths | --backends]

``--train`` writes the packaged weights (``skriskrank/data/pretrained_pipeline.npz``) before
measuring; the other options re-measure only their section.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from importlib import resources
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pandas as pd  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

from skriskrank import (  # noqa: E402
    DenseRetriever,
    FrozenEmbedder,
    RiskAuditor,
    RiskAwareReranker,
    ToolRegistry,
    load_tools,
    pretrained_pipeline,
)
from skriskrank._base import check_relevant  # noqa: E402
from skriskrank._encoder import (  # noqa: E402
    DEFAULT_BACKEND,
    DEFAULT_MAX_SEQ_LENGTH,
    encode,
    query_backend,
)
from skriskrank._gold_model import _GoldModel  # noqa: E402
from skriskrank._pretrained import (  # noqa: E402
    ALPHA,
    N_CANDIDATES,
    PRETRAINED_FILE,
    SENTENCE_WEIGHT,
    TOOL_TEXT,
    _load,
    save_pretrained,
)
from skriskrank._tool_text import _render_text, tool_texts  # noqa: E402
from skriskrank.baselines import BM25Reranker  # noqa: E402
from skriskrank.datasets import ToolRetrievalDataset, load_sealtools, load_ultratool  # noqa: E402
from skriskrank.metrics import ndcg_at_k, needrisk_hit_at_k, recall_at_k, rvr_at_k  # noqa: E402

from ._common import (  # noqa: E402
    RESULTS,
    environment,
    harvested_files,
    machine,
    md_table,
    measured_backends,
)

K = 5
PACKAGED = resources.files("skriskrank") / "data" / PRETRAINED_FILE
#: Harvested servers that do what an mcp-bench server does (maps, time, Context7, Reddit): as
#: distractors they would be right answers counted wrong, so they are left out.
DUPLICATES = ("google-maps", "context7", "mcp-server-time", "reddit", "amap", "mapbox")
COLUMNS = ("ndcg@5", "recall@5", "recall@10", "rvr@5", "risky@5", "needrisk_hit@5")


# -- data -------------------------------------------------------------------------------------
def union(datasets) -> ToolRetrievalDataset:
    """One dataset over the union of the datasets' catalogues (their tool names are disjoint)."""
    if len(datasets) == 1:
        # Rebuilt from its frame, a catalogue would lose its tools' parameters and text
        # template: one is ranked as the pipeline serves it.
        return datasets[0]
    registry = ToolRegistry.from_frame(
        pd.concat([d.registry.to_frame() for d in datasets], ignore_index=True))
    return ToolRetrievalDataset("+".join(d.name for d in datasets), "train", registry,
                                [q for d in datasets for q in d.queries],
                                [g for d in datasets for g in d.relevant])


def _words(name: str) -> str:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return " ".join(w for w in re.split(r"[_\-\s.]+", name) if w)


#: Tool texts compared beside the default (``load_tools``'s).
TEXTS = {
    "names split into words": lambda n, d, p: _render_text(None, _words(n), d, p),
    "parameter names only": lambda n, d, p: _render_text(None, n, d, [(x, "") for x, _ in p]),
}


def catalogue(split, *, distractors=True, text=None, auditor=None) -> ToolRetrievalDataset:
    """The split's tasks over the mcp-bench servers' tools (and the distractors).

    Tool ids are ``<server>__<tool>``; the encoder reads each tool's own name. Every text
    variant ranks over the levels the auditor gives the default texts, without its flags.
    """
    from .mcp_bench import DATA, load_mcp_bench

    ds = load_mcp_bench(split)
    files = sorted((DATA / "tools").glob("*.json"))
    if distractors:
        files += [f for f in harvested_files()
                  if not any(d in f.name for d in DUPLICATES)]
    source, own = {}, {}
    for f in files:
        server = f.stem.split("__", 1)[-1].replace("__", ".")
        tools = json.loads(f.read_text(encoding="utf-8"))["tools"]
        source[server] = {"tools": [{**t, "name": f"{server}__{t['name']}"} for t in tools]}
        own.update({f"{server}__{t['name']}": t["name"] for t in tools})

    def load(template):
        return load_tools(source, scan=False, text_template=lambda n, d, p: _render_text(
            template, own[n], d, p))

    levels = (auditor or RiskAuditor.pretrained()).grade(load(None)).risk
    # Levels only: what the scan flags (and the filter then holds back) is measured by
    # benchmarks/poisoning.py; here every option ranks the same unflagged tools.
    registry = load(text).with_risk(levels)
    return ToolRetrievalDataset(ds.name, ds.split, registry, ds.queries, ds.relevant,
                                query_ids=ds.query_ids)


# -- measures ---------------------------------------------------------------------------------
def scores(ranked, ds) -> dict:
    """NDCG@5, Recall@5/@10 and the risk columns of ranked registry indices (best first)."""
    top = [[ds.registry.names[i] for i in row[:10]] for row in ranked]
    rvr = rvr_at_k(top, ds.registry, k=K)
    return {"ndcg@5": ndcg_at_k(top, ds.relevant, k=K),
            "recall@5": recall_at_k(top, ds.relevant, k=K),
            "recall@10": recall_at_k(top, ds.relevant, k=10),
            "rvr@5": rvr,
            "risky@5": K * rvr,  # the share of the top 5 at level >= 3, as a count
            "needrisk_hit@5": needrisk_hit_at_k(top, ds.relevant, ds.registry, k=K)}


def _row(rows, name, ranked, ds, log) -> None:
    """``rows[name]``: the scores of ``ranked`` on ``ds``, logged."""
    rows[name] = scores(ranked, ds)
    log(f"  {name}: " + " ".join(f"{k} {v:.3f}" for k, v in rows[name].items()))


def _rrf(*rankings, c=60):
    """Reciprocal-rank fusion of full rankings (registry indices), best first."""
    fused = np.zeros(rankings[0].shape)
    for ranked in rankings:
        part = np.zeros(ranked.shape)
        np.put_along_axis(part, ranked, 1.0 / (c + np.arange(1, ranked.shape[1] + 1)), axis=1)
        fused += part
    return np.argsort(-fused, axis=1, kind="stable")


def _prefix(registry, *, weight=SENTENCE_WEIGHT, alpha=ALPHA, text=TOOL_TEXT, cache=True,
            **params):
    """The pretrained pipeline before its filter, the encoder's ``sentence_weight`` at
    ``weight`` (0: the whole query only), the server graph at ``alpha`` (0: no smoothing) and
    the encoder's ``tool_text`` at ``text`` (``"full"``: the whole texts, as dense reads
    them), by default the pipeline's own. ``params`` go to :func:`pretrained_pipeline`."""
    pipe = Pipeline(pretrained_pipeline(registry, need_aware=False, cache=cache, tool_text=text,
                                        **params).steps[:3])
    return pipe.set_params(embed__sentence_weight=weight, smooth__alpha=alpha)


def _dense(registry, *, cache=True, **params):
    """Dense retrieval with the packaged MiniLM: the whole query against each tool's whole
    text (``load_tools``'), the baseline every option is compared with."""
    return _prefix(registry, weight=0, alpha=0, text="full", cache=cache, **params)[:1]


#: Names of the options' rows: the encoder's sentence weight, then the server graph.
def _sentences(weight):
    return ("whole query" if weight == 0 else "best sentence" if weight == 1 else
            f"whole query + best sentence (weight {weight:.2f})")


def _graph(weight, alpha=ALPHA):
    return f"{_sentences(weight)} + server graph (alpha {alpha:.2f})"


KEPT = _graph(SENTENCE_WEIGHT)


# -- training ---------------------------------------------------------------------------------
def train(datasets, path, *, cache=True, log=print) -> None:
    """Fit the need model on the pretrained pipeline's batches of ``datasets``; write ``path``."""
    data = union(datasets)
    t0 = time.perf_counter()
    batch = _prefix(data.registry, cache=cache).transform(data.queries)
    gold = _GoldModel(False, 2 * K).fit(batch, check_relevant(data.relevant, data.registry))
    save_pretrained(path, gold)
    log(f"need model trained on {data.name} ({len(data)} queries, {len(data.registry)} tools; "
        f"{len(data) * gold.fit_rank} candidates, {gold.constant_:.2%} gold) "
        f"in {time.perf_counter() - t0:.0f} s -> {path}")


def calibration(ds, models, *, cache=True) -> dict:
    """By rank, the share of the kept pipeline's candidates (before its filter) that are gold,
    and each need model's mean probability of them being needed (``models``: name -> file)."""
    batch = _prefix(ds.registry, cache=cache).transform(ds.queries)
    positions = batch.order(2 * K)
    candidates = np.take_along_axis(batch.candidates, positions, axis=1)
    gold = [[ds.registry.names[c] in rel for c in row]
            for row, rel in zip(candidates, map(set, ds.relevant), strict=True)]
    return {"gold rate": np.mean(gold, axis=0).tolist(),
            **{name: _load(path).predict_proba(batch, positions).mean(axis=0).tolist()
               for name, path in models.items()}}


def learned_reranker(datasets, *, cache=True):
    """The paper's reranker heads trained on ``datasets`` (to apply to other catalogues)."""
    data = union(datasets)
    pipe = Pipeline([("embed", FrozenEmbedder(data.registry, cache=cache)),
                     ("retrieve", DenseRetriever(n_candidates=N_CANDIDATES, k=K)),
                     ("rerank", RiskAwareReranker(risk_weight=0.1, k=K, random_state=0))])
    return pipe.fit(data.queries, data.relevant).named_steps["rerank"]


def _transfer(rerank, batch):
    """A reranker's trained heads applied to another catalogue (penalty of the levels)."""
    from skriskrank._rubric import penalty

    out = RiskAwareReranker(**rerank.get_params())
    for name in ("module_state_", "heads_", "relevance_calibration_", "risk_calibration_"):
        setattr(out, name, getattr(rerank, name))
    out.registry_, out.encoder_ = batch.registry, batch.encoder
    out.tool_risk_ = rerank.heads_.risk(batch.tool_embeddings)
    out.risk_penalty_ = penalty(batch.registry.risk).astype(np.float32)
    out._tool_side = out._net = None
    return out


def trained_encoders(ds, train_ds, *, log=print) -> dict:
    """Dense retrieval on ``ds`` with the encoder trained on ``train_ds``'s queries and gold
    tools, two ways: a linear map of the frozen encoder's query embeddings (started at and
    pulled toward the identity, weight 1, fitted by a softmax over ``train_ds``'s whole
    catalogue, 300 Adam steps), and all-MiniLM-L6-v2 itself fine-tuned with
    sentence-transformers' MultipleNegativesRankingLoss (one epoch, batches of 32 pairs with
    distinct tools, learning rate 2e-5). Neither ships; the page says why."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.losses import MultipleNegativesRankingLoss

    from skriskrank._encoder import resolve_model

    torch.manual_seed(0)
    index = {n: i for i, n in enumerate(train_ds.registry.names)}
    pairs = [(q, index[g]) for q, gold in zip(train_ds.queries, train_ds.relevant, strict=True)
             for g in sorted(gold)]
    rows = {}

    def row(name, queries, tools):
        _row(rows, name, np.argsort(-(queries @ tools.T), axis=1, kind="stable"), ds, log)

    train_q, train_t = (torch.from_numpy(encode(t)[0]) for t in
                        ([q for q, _ in pairs], train_ds.registry.texts))
    gold = torch.tensor([g for _, g in pairs])
    eye = torch.eye(train_q.shape[1])
    W = eye.clone().requires_grad_()
    opt = torch.optim.Adam([W], lr=1e-3)
    for _ in range(300):
        q = torch.nn.functional.normalize(train_q @ W, dim=1)
        loss = (torch.nn.functional.cross_entropy(20 * q @ train_t.T, gold)
                + ((W - eye) ** 2).sum())
        opt.zero_grad()
        loss.backward()
        opt.step()
    queries, tools = encode(ds.queries)[0], encode(ds.registry.texts)[0]
    adapted = queries @ W.detach().numpy()
    row("dense, linear query adapter (Seal-Tools dev)",
        adapted / np.linalg.norm(adapted, axis=1, keepdims=True), tools)

    model = SentenceTransformer(resolve_model(None)[1], device="cpu", local_files_only=True)
    model.max_seq_length = DEFAULT_MAX_SEQ_LENGTH
    mnrl, texts = MultipleNegativesRankingLoss(model), train_ds.registry.texts
    tokenize = getattr(model, "preprocess", model.tokenize)  # sentence-transformers >= 6
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model.train()
    order = np.random.default_rng(0).permutation(len(pairs))
    for start in range(0, len(order), 32):
        # One pair per tool: a second pair of the same tool would be its own in-batch negative.
        batch = list({pairs[i][1]: pairs[i] for i in order[start:start + 32]}.values())
        features = [tokenize([q for q, _ in batch]), tokenize([texts[g] for _, g in batch])]
        loss = mnrl(features, None)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    row("dense, MiniLM fine-tuned (MultipleNegativesRankingLoss, Seal-Tools dev)",
        *(model.encode(list(t), batch_size=16, normalize_embeddings=True)
          for t in (ds.queries, ds.registry.texts)))
    return rows


# -- the comparisons --------------------------------------------------------------------------
def options(ds, *, heads=None, cache=True, log=print) -> dict:
    """Every option's scores on ``ds``, by option name."""
    reg, rows = ds.registry, {}

    def row(name, ranked):
        _row(rows, name, ranked, ds, log)

    whole = _prefix(reg, weight=0, alpha=0, text="full", cache=cache)
    batch = whole[:1].transform(ds.queries)
    dense = batch.ranked_indices()
    row("dense (packaged MiniLM)", dense)
    row("dense, brief tool text", _prefix(reg, weight=0, alpha=0, cache=cache)[:1]
        .transform(ds.queries).ranked_indices())
    bm25 = BM25Reranker(k=K).fit(batch).transform(batch).ranked_indices()
    row("BM25", bm25)
    row("dense + BM25 (reciprocal-rank fusion)", _rrf(dense, bm25))
    if heads is not None:
        cand = whole.transform(ds.queries)
        row("learned reranker (UltraTool + Seal-Tools heads) on dense top-100",
            _transfer(heads, cand).transform(cand).ranked_indices())
    for weight in (1, SENTENCE_WEIGHT):
        row(_sentences(weight), _prefix(reg, weight=weight, alpha=0, cache=cache)[:1]
            .transform(ds.queries).ranked_indices())
    for weight, alpha in ((SENTENCE_WEIGHT, 0.5), (SENTENCE_WEIGHT, ALPHA),
                          (SENTENCE_WEIGHT, 0.8)):
        row(_graph(weight, alpha), _prefix(reg, weight=weight, alpha=alpha, cache=cache)
            .transform(ds.queries).ranked_indices())
    for need in (False, True):
        pipe = pretrained_pipeline(reg, need_aware=need, cache=cache)
        row("pretrained pipeline, " + ("need-aware filter (default)" if need else "rule filter"),
            pipe.transform(ds.queries).ranked_indices())
    return rows


def sentence_weights(ds, *, cache=True) -> dict:
    """The kept pipeline's prefix (server graph at ``ALPHA``) at several sentence weights."""
    return {_graph(w): scores(_prefix(ds.registry, weight=w, alpha=ALPHA, cache=cache)
                              .transform(ds.queries).ranked_indices(), ds)
            for w in (0, 0.5, 0.6, 0.7, 0.8, 0.9, 1)}


def text_options(split, *, cache=True, log=print) -> dict:
    """The kept prefix with each tool's whole text (``load_tools``') and its variants
    encoded in place of its brief text."""
    rows = {}
    for name, text in {"whole text": None, **TEXTS}.items():
        ds = catalogue(split, text=text)
        rows[f"{KEPT}, tool text: {name}"] = scores(
            _prefix(ds.registry, text="full", cache=cache).transform(ds.queries)
            .ranked_indices(), ds)
        log(f"  {name}: {rows[f'{KEPT}, tool text: {name}']}")
    return rows


def text_lengths(split, *, cache=True, log=print) -> dict:
    """Dense and the kept pipeline's prefix with the encoder reading 64, 96 or 128 word pieces
    of each text (the default), 256 (the model's own setting) or 512."""
    ds, rows = catalogue(split), {}
    for length in (64, 96, 128, 256, 512):
        for name, weight, alpha, text in (("dense", 0, 0, "full"),
                                          (KEPT, SENTENCE_WEIGHT, ALPHA, TOOL_TEXT)):
            pipe = _prefix(ds.registry, weight=weight, alpha=alpha, text=text, cache=cache,
                           max_seq_length=length)
            rows[f"{name}, {length} word pieces"] = scores(
                pipe.transform(ds.queries).ranked_indices(), ds)
            log(f"  {name} at {length}: {rows[f'{name}, {length} word pieces']}")
    return rows


def encoder_backends(split, *, cache=True, log=print) -> dict:
    """Dense and the pretrained pipeline with each encoder backend (the levels stay the
    default auditor's, so only the ranking's vectors change)."""
    ds, rows = catalogue(split), {}
    for b in measured_backends():
        _row(rows, f"dense, backend {b}", _dense(ds.registry, cache=cache, backend=b)
             .transform(ds.queries).ranked_indices(), ds, log)
        _row(rows, f"pretrained pipeline, need-aware filter, backend {b}",
             pretrained_pipeline(ds.registry, cache=cache, backend=b)
             .transform(ds.queries).ranked_indices(), ds, log)
    return rows


def need_thresholds(ds, *, cache=True) -> dict:
    """The kept pipeline at other operating points of its need-aware filter: a tool of level
    >= 3 is admitted from this probability of being needed (the default: 0.5)."""
    pipe, rows = pretrained_pipeline(ds.registry, cache=cache), {}
    for t in (0.1, 0.2, 0.3, 0.5, 0.7):
        rows[f"need_threshold {t:.1f}"] = scores(
            pipe.set_params(filter__need_threshold=t).transform(ds.queries).ranked_indices(), ds)
    return rows


def list_lengths(ds, *, cache=True) -> dict:
    """The pretrained pipeline's Recall@k and risky tools per list, for search_tools' k."""
    out = {}
    for k in (3, 5, 8, 10, 15):
        top = pretrained_pipeline(ds.registry, k=k, cache=cache).predict(ds.queries)
        out[k] = {"recall@k": recall_at_k(top, ds.relevant, k=k),
                  "ndcg@k": ndcg_at_k(top, ds.relevant, k=k),
                  "risky per list": k * rvr_at_k(top, ds.registry, k=k)}
    return out


def benchmarks(data: Path, *, cache=True, log=print) -> dict:
    """Dense against the pretrained pipeline on UltraTool and Seal-Tools' test split (the
    packaged need model never saw either)."""
    out = {}
    for name, ds in (("UltraTool (1,000 queries)", load_ultratool(data / "ultratool")),
                     ("Seal-Tools test_in_domain",
                      load_sealtools(data / "sealtools", "test_in_domain"))):
        # The whole text with the names' separators and camelCase turned into spaces (all
        # the brief text changes on UltraTool, whose descriptions are mostly one sentence).
        split = ToolRegistry.from_records(ds.registry._records(),
                                          text_template=TEXTS["names split into words"])
        rows = {"dense (packaged MiniLM)": scores(
            _dense(ds.registry, cache=cache).transform(ds.queries).ranked_indices(), ds),
                "dense, names split into words": scores(
            _dense(split, cache=cache).transform(ds.queries).ranked_indices(), ds),
                "pretrained pipeline without its filter": scores(
            _prefix(ds.registry, cache=cache).transform(ds.queries).ranked_indices(), ds)}
        for need in (False, True):
            pipe = pretrained_pipeline(ds.registry, need_aware=need, cache=cache)
            name_ = "pretrained pipeline, " + ("need-aware filter" if need else "rule filter")
            rows[name_] = scores(pipe.transform(ds.queries).ranked_indices(), ds)
        pipe = pretrained_pipeline(ds.registry, tool_text="full", cache=cache)
        rows["pretrained pipeline, need-aware filter, whole tool text"] = scores(
            pipe.transform(ds.queries).ranked_indices(), ds)
        out[name] = rows
        log(f"  {name}: {rows}")
    return out


async def _serve_seconds(tools: Path, backend: str, cache: Path) -> float:
    """Seconds from starting ``skriskrank serve --tools`` to its first answered search, its
    tools' embeddings kept in ``cache`` (empty: a first start; filled: a restart)."""
    import sys
    from contextlib import AsyncExitStack

    from .bench_gateway import ROOT, _session

    t0 = time.perf_counter()
    async with AsyncExitStack() as stack:
        server = await _session(stack, sys.executable, [
            "-m", "skriskrank", "serve", "--tools", str(tools), "--backend", backend,
            "--cache", str(cache)],
            env={"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT),
                 "TOKENIZERS_PARALLELISM": "false"})
        await server.call_tool("search_tools", {"query": "list my open pull requests"})
        return time.perf_counter() - t0


def readiness(*, n_tools=1000, repeats=2, backends=None) -> dict:
    """Seconds from a catalogue of ``n_tools`` harvested tools to a pipeline that answers,
    the encoder loaded (and nothing cached), beside encoding their brief texts alone (what
    the pipeline encodes), and from
    starting ``skriskrank serve --tools`` on them to its first answered search (a new process:
    imports, grading and the encoder's loading included; the exported graph on disk), and
    again with the tools' embeddings on disk from that start (``--cache``: a restart), for
    each encoder backend (interleaved, so that their ratio holds under the machine's load)."""
    import anyio

    backends = backends or measured_backends()
    files = harvested_files()
    tools = [t for f in files for t in json.loads(f.read_text(encoding="utf-8"))["tools"]]
    seen, unique = set(), []
    for t in tools:
        if t["name"] not in seen:
            seen.add(t["name"])
            unique.append(t)
    registry = RiskAuditor.pretrained().grade(load_tools({"tools": unique[:n_tools]}))
    out = {b: {"seconds": [], "encoding_seconds": [], "serve_seconds": [],
               "restart_seconds": []} for b in backends}
    for b in backends:  # the encoder loaded, as in a server: the catalogue's and the queries'
        for loaded in {b, query_backend(b)}:
            encode(["warm up"], cache=False, backend=loaded)
    with tempfile.TemporaryDirectory() as tmp:
        catalogue = Path(tmp) / "tools.json"
        catalogue.write_text(json.dumps({"tools": unique[:n_tools]}), encoding="utf-8")
        for _ in range(repeats):
            for b in backends:
                t0 = time.perf_counter()
                encode(tool_texts(registry, TOOL_TEXT), cache=False, backend=b)
                out[b]["encoding_seconds"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                pretrained_pipeline(registry, cache=False, backend=b).predict(
                    ["list my open pull requests"])
                out[b]["seconds"].append(time.perf_counter() - t0)
                cache = Path(tempfile.mkdtemp(dir=tmp))  # new: the first start fills it
                out[b]["serve_seconds"].append(anyio.run(_serve_seconds, catalogue, b, cache))
                out[b]["restart_seconds"].append(anyio.run(_serve_seconds, catalogue, b, cache))
    return {"n_tools": len(registry), "backends": out, "environment": environment(),
            "median_chars": float(np.median([len(t) for t in registry.texts]))}


# -- report -----------------------------------------------------------------------------------
def _table(rows: dict, columns=COLUMNS) -> str:
    lines = ["| option | " + " | ".join(columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for name, row in rows.items():
        lines.append(f"| {name} | " + " | ".join(f"{row[c]:.3f}" for c in columns) + " |")
    return "\n".join(lines)


def _gap(name: str, rows: dict) -> str:
    """What the brief text, the sentence mix and the filter change against dense on a
    benchmark."""
    dense, split, plain, need, whole = (rows[k] for k in (
        "dense (packaged MiniLM)", "dense, names split into words",
        "pretrained pipeline without its filter", "pretrained pipeline, need-aware filter",
        "pretrained pipeline, need-aware filter, whole tool text"))
    return (f"- {name}: the brief tool text and the query's best sentence move dense's NDCG@5 "
            f"by {plain['ndcg@5'] - dense['ndcg@5']:+.3f} (splitting the tools' names into "
            f"words alone by {split['ndcg@5'] - dense['ndcg@5']:+.3f}), the need-aware filter by "
            f"{need['ndcg@5'] - plain['ndcg@5']:+.3f} while it takes the tools of level >= 3 per "
            f"list from {plain['risky@5']:.2f} to {need['risky@5']:.2f}; with the whole tool "
            f"text (`tool_text=\"full\"`) the pipeline scores {whole['ndcg@5']:.3f}.")


def render(result: dict) -> str:
    dev, test = result["dev"], result["test"]
    dense, best = dev["rows"]["dense (packaged MiniLM)"], dev["rows"][
        "pretrained pipeline, need-aware filter (default)"]
    backends = ("" if "backends" not in result else
                "\nEach encoder backend encoding the texts (`--backends`; queries of the int8 "
                "and bfloat16 backends go through the fp32 graph; the levels stay the default "
                "auditor's, so only the ranking's vectors change"
                + ("" if any("torch-bf16" in row for row in result["backends"]) else
                   "; `torch-bf16` left out: the CPU it ran on emulates bfloat16")
                + "):\n\n" + _table(result["backends"]) + "\n")
    lengths = "\n".join(
        f"| {k} | {v['recall@k']:.3f} | {v['ndcg@k']:.3f} | {v['risky per list']:.2f} |"
        for k, v in result["lengths"].items())
    bench = "\n\n".join(f"### {name}\n\n{_table(rows)}" for name, rows in
                        result["benchmarks"].items())
    parts = "\n".join(_gap(name, rows) for name, rows in result["benchmarks"].items())
    cal = result["calibration"]
    columns = [(split, col) for split in cal for col in cal[split]]
    calibration = md_table(["rank", *(f"{split}: {col}" for split, col in columns)],
                           [[r + 1, *(f"{cal[split][col][r]:.3f}" for split, col in columns)]
                            for r in range(len(cal["dev"]["gold rate"]))])
    ready = result["readiness"]
    where = " " + machine(ready["environment"]) if "environment" in ready else ""
    by = result.get("backends", {})
    kept = "`onnx` keeps fp32's scores"
    if "dense, backend onnx-int8" in by:
        dense_, pipe_ = (by[f"{name}, backend onnx-int8"]["ndcg@5"]
                         - by[f"{name}, backend torch"]["ndcg@5"]
                         for name in ("dense", "pretrained pipeline, need-aware filter"))
        kept += (f"; `onnx-int8` moves NDCG@5 on the development\nsplit by {dense_:+.3f} for "
                 f"dense and {pipe_:+.3f} for the pipeline (the backends' table above)")
    kept += ". On UltraTool and Seal-Tools: `benchmarks/results/bench_encoder.md`."
    bf16 = ("with `torch-bf16` a new process\npays for importing PyTorch beside ONNX Runtime "
            "(which encodes the queries), which at 1,000\ntools takes back most of what it "
            "saves" if "torch-bf16" in ready["backends"] else
            "`torch-bf16` is left out: this CPU\nemulates bfloat16")
    ready_rows = "\n".join(
        f"| {b} | {', '.join(f'{x:.1f}' for x in r['seconds'])} | "
        f"{', '.join(f'{x:.1f}' for x in r['encoding_seconds'])} | "
        f"{', '.join(f'{x:.1f}' for x in r['serve_seconds'])} | "
        f"{', '.join(f'{x:.1f}' for x in r.get('restart_seconds', ())) or 'not measured'} |"
        for b, r in ready["backends"].items())
    rows = dev["rows"]
    graph = rows[KEPT]["ndcg@5"]
    rule = rows["pretrained pipeline, rule filter"]
    alone, whole = (result["weights"][_graph(w)]["ndcg@5"] for w in (1, 0))
    heads = rows["learned reranker (UltraTool + Seal-Tools heads) on dense top-100"]["ndcg@5"]
    heads -= dense["ndcg@5"]
    bm25 = rows["BM25"]["ndcg@5"] - dense["ndcg@5"]
    rrf = rows["dense + BM25 (reciprocal-rank fusion)"]["ndcg@5"] - dense["ndcg@5"]
    encoders = result["encoders"]
    adapter, tuned = (encoders[name] for name in encoders)
    adapter = adapter["ndcg@5"] - dense["ndcg@5"]
    tuned, tuned_risky = tuned["ndcg@5"] - dense["ndcg@5"], tuned["risky@5"] - dense["risky@5"]
    texts = result["texts"]
    full, words, names = (texts[f"{KEPT}, tool text: {name}"] for name in (
        "whole text", "names split into words", "parameter names only"))
    brief_dense = rows["dense, brief tool text"]
    return f"""# Tool search on real MCP tasks, with no labelled queries

How the tasks, the catalogue and the options are built: the docstring of
`benchmarks/real_mcp.py`; the tasks: `benchmarks/data/mcp_bench/README.md`; the data the
shipped need model is trained on: the data card `docs/data.md`. *risky@5* is the mean number
of tools of level >= 3 in the top 5, *rvr@5* their share; levels are the packaged auditor's
grades. The rankings ran with the encoder backend {result.get("backend", "torch")!r}. Python
{environment()["python"]}, numpy {environment()["numpy"]}.

## Development split ({dev['n_queries']} tasks, {dev['n_tools']:,} tools): every option

{_table(dev['rows'])}

How much the query's best sentence counts against the whole query (the encoder's
`sentence_weight`), with the server graph:

{_table(result['weights'])}

Tool texts: the whole text (`load_tools`': name, description, parameters with their
descriptions) and variants of it, encoded in place of the kept brief text (`brief_text`),
with the kept sentence weight and server graph:

{_table(result['texts'])}

What the encoder reads of each text (queries and tools; 128 word pieces is the default,
256 the model's own setting):

{_table(result['text_lengths'])}
{backends}
The encoder trained for tool search (`trained_encoders`: on Seal-Tools' development queries,
Apache-2.0, 700 queries and 1,804 query-tool pairs; each against dense, the packaged MiniLM
as it is):

{_table({"dense (packaged MiniLM)": dense, **encoders})}

Kept: **the pretrained pipeline with the need-aware filter** (each tool's brief text; the
whole query and its best sentence, weighted {SENTENCE_WEIGHT:.2f}; the server graph with
alpha {ALPHA:.2f}; the need model), chosen on this split: NDCG@5
{best['ndcg@5']:.3f} against dense's {dense['ndcg@5']:.3f}
({best['ndcg@5'] - dense['ndcg@5']:+.3f}), Recall@10 {best['recall@10']:.3f} against
{dense['recall@10']:.3f} ({best['recall@10'] - dense['recall@10']:+.3f}), with
{best['risky@5']:.2f} tools of level >= 3 in the top 5 against {dense['risky@5']:.2f}. The
learned reranker's heads, trained on the two benchmarks, rank these servers' tools below
dense ({heads:+.3f} NDCG@5: they learn the benchmarks' catalogues and phrasing), so the
pipeline does not use them; BM25 ({bm25:+.3f}) and its fusion with dense ({rrf:+.3f}) are
below dense alone. A task's sentences each find the tools they ask for, and the whole query
keeps what they share: with the graph, the best sentence alone scores {alone:.3f} and the
whole query alone {whole:.3f}, their mix {graph:.3f}. The need-aware filter admits a tool
of level >= 3 where its need model gives it at least an even chance of being needed; that
model is fitted on this split's tasks (its three numbers: these rows are in-sample, the test
split below is not). The rule filter admits the first such tool of a list wherever it ranks:
{rule['ndcg@5']:.3f} NDCG@5 with {rule['risky@5']:.2f} tools of level >= 3 per list and
NeedRisk-Hit@5 {rule['needrisk_hit@5']:.3f}, against the need-aware filter's
{best['ndcg@5']:.3f}, {best['risky@5']:.2f} and {best['needrisk_hit@5']:.3f}. The encoder
reads each tool's brief text (`brief_text`: the name's words, the description's first
sentence, the parameters' names), not the whole text `load_tools` gives the auditor: with
the whole text the kept settings score {full['ndcg@5']:.3f} NDCG@5 and {full['recall@10']:.3f}
Recall@10, against the brief text's {graph:.3f} and {rows[KEPT]['recall@10']:.3f} (the
whole text with its names split into words: {words['ndcg@5']:.3f}; with parameter names
but not their descriptions: {names['ndcg@5']:.3f}). Dense with the brief text scores
{brief_dense['ndcg@5']:.3f} NDCG@5 and {brief_dense['recall@10']:.3f} Recall@10. The
brief text was chosen on this split among a few cuts (the first sentence with or without
the parameters' names, the first two sentences, the name as written), so its gain here is
measured after a choice; the test split below was not looked at for it. The encoder stays
as it is packaged: trained on a benchmark's queries, a linear adapter of its query vectors
moves dense NDCG@5 by {adapter:+.3f} and fine-tuning it by {tuned:+.3f}, with
{tuned_risky:+.2f} tools of level >= 3 per list, and the fine-tuned weights (87 MB in
float32) would not fit the package's budget.

## Test split ({test['n_queries']} tasks, {test['n_tools']:,} tools): held out

{_table(test['rows'])}

Earlier versions of the pipeline, measured here before (the same catalogue and levels):
reading each tool's whole text, the pipeline scored 0.608 NDCG@5 and 0.552 Recall@10, with
1.04 tools of level >= 3 per list; with, besides, the need model the package shipped before
(fitted on UltraTool's and Seal-Tools' tasks of two or three gold tools), 0.587 NDCG@5 and
0.549 Recall@10, with 0.43 tools of level >= 3 per list and NeedRisk-Hit@5 0.314. Each
change was chosen on the development split (the brief text) or its calibration (the need
model); this split was measured once with each, and nothing was tuned on it.

Without the distractors (mcp-bench's own {result['small']['n_tools']} tools, test split):

{_table(result['small']['rows'])}

## Is the need model calibrated? (by rank, before the filter)

The share of the kept pipeline's candidates at each rank that are gold, beside the mean
probability of being needed each need model gives them: the packaged one (fitted on the
development split: in-sample there) and one fitted on UltraTool's and Seal-Tools' tasks of
two or three gold tools, as the package shipped before. A tool of level >= 3 is admitted
where the probability reaches `need_threshold` (0.5).

{calibration}

## Operating points of the need-aware filter (development split)

The kept pipeline with other values of `need_threshold` (set with
`pipe.set_params(filter__need_threshold=t)`): lower values admit more tools of level >= 3,
those the task needs (NeedRisk-Hit@5) and those it does not. The default is 0.5, an even
chance of being needed by the need model (fitted on this split's tasks).

{_table(result['thresholds'])}

## List length (development split, the kept pipeline with k tools)

| k | Recall@k | NDCG@k | tools of level >= 3 per list |
|---:|---:|---:|---:|
{lengths}

## The benchmarks, with a need model that never saw the evaluated set

{bench}

Where the difference from dense comes from (neither benchmark names servers, so the graph
changes nothing here):

{parts}

## Ready to answer

`pretrained_pipeline` on {ready['n_tools']:,} harvested tools (median text
{ready['median_chars']:.0f} characters), from the graded registry to the first answer (ready), the
encoder loaded and nothing cached, beside encoding their brief texts alone (what the
pipeline encodes; the whole texts' median is the one above), and (last columns)
from starting `skriskrank serve --tools` on the same tools to its first answered search
(a new process: imports, the encoder's loading and grading included), the first time and
when restarted with the tools' embeddings and scan findings that start kept on disk
(`--cache`, the default of `serve --tools` and of the gateway; seconds, each run;
the encoder's backends interleaved on 2 shared cores).{where}

| encoder backend | ready (s) | encoding alone (s) | `serve --tools` answers (s) | restarted (s) |
|---|---|---|---|---|
{ready_rows}

The encoder is the whole cost: the pipeline is ready in about the time its tools' brief
texts take to encode, so a faster encoder backend is what shortens it. `serve --tools` adds a new
process's imports, the encoder's loading, the auditor's grading and the MCP start-up; the
tools are encoded twice: their whole texts for the grading, their brief texts (shorter) for
the ranking, and scanned for poisoning. A restart reads both encodings and what the scan
found in each tool from disk instead: it pays the imports, the loading and the grading's
other steps, not the encoding or the scan.
{kept}
`onnx-int8` (smoothed for the packaged encoder) encodes fastest and needs no PyTorch once its
graph is made; {bf16}.
"""


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--train", action="store_true",
                      help="fit the packaged need model on the development split first")
    # Each re-measures one section of real_mcp.json: (its key, what it measures, how).
    sections = {
        "readiness": ("readiness", "the time to readiness", lambda data: readiness()),
        "benchmarks": ("benchmarks", "UltraTool and Seal-Tools", benchmarks),
        "encoders": ("encoders", "the trained encoders", lambda data: trained_encoders(
            catalogue("dev"), load_sealtools(data / "sealtools", "dev"))),
        "lengths": ("text_lengths", "the text lengths", lambda data: text_lengths("dev")),
        "backends": ("backends", "the encoder backends", lambda data: encoder_backends("dev")),
    }
    for flag, (_, what, _) in sections.items():
        only.add_argument(f"--{flag}", action="store_true",
                          help=f"measure only {what}; the rest from real_mcp.json")
    args = parser.parse_args(argv)
    chosen = [flag for flag in sections if getattr(args, flag)]
    if chosen:
        key, _, measure = sections[chosen[0]]
        result = json.loads((RESULTS / "real_mcp.json").read_text())
        result[key] = measure(Path(args.data))
        (RESULTS / "real_mcp.json").write_text(json.dumps(result, indent=2, default=str))
        (RESULTS / "real_mcp.md").write_text(render(result))
        return result
    data = Path(args.data)
    ut = load_ultratool(data / "ultratool")
    st = load_sealtools(data / "sealtools", "dev")
    dev = catalogue("dev")
    if args.train:
        train([dev], PACKAGED)
    print("dev:")
    heads = learned_reranker([ut, st])
    result = {"backend": DEFAULT_BACKEND,
              "dev": {"n_queries": len(dev), "n_tools": len(dev.registry),
                      "rows": options(dev, heads=heads)}}
    result["weights"] = sentence_weights(dev)
    result["texts"] = text_options("dev")
    result["text_lengths"] = text_lengths("dev")
    result["backends"] = encoder_backends("dev")
    result["encoders"] = trained_encoders(dev, st)
    result["thresholds"] = need_thresholds(dev)
    result["lengths"] = list_lengths(dev)
    test = catalogue("test")
    with tempfile.TemporaryDirectory() as tmp:
        # The need model fitted on the benchmarks' tasks, as the package shipped it before.
        benchmark_model = Path(tmp) / "benchmarks.npz"
        train([ut, st], benchmark_model)
        result["calibration"] = {
            split: calibration(ds, {"packaged": PACKAGED,
                                    "fitted on the benchmarks": benchmark_model})
            for split, ds in (("dev", dev), ("test", test))}
    print("test:")
    keep = ("dense (packaged MiniLM)", "BM25", "dense + BM25 (reciprocal-rank fusion)",
            "pretrained pipeline, need-aware filter (default)")
    rows = options(test)
    result["test"] = {"n_queries": len(test), "n_tools": len(test.registry),
                      "rows": {k: rows[k] for k in keep}}
    small = catalogue("test", distractors=False)
    rows = options(small)
    result["small"] = {"n_tools": len(small.registry),
                       "rows": {k: rows[k] for k in (keep[0], keep[-1])}}
    print("benchmarks:")
    result["benchmarks"] = benchmarks(data)
    result["readiness"] = readiness()
    (RESULTS / "real_mcp.json").write_text(json.dumps(result, indent=2, default=str))
    (RESULTS / "real_mcp.md").write_text(render(result))
    return result


if __name__ == "__main__":
    main()
