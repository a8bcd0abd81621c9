"""RiskAuditor on the benchmarks' labels and on real MCP tools, and its packaged weights.

Training data: the levels 1..5 of the paper's released labels (UltraTool, Seal-Tools) and the
harvested real MCP tools whose authors' hints bound their level (``hint_bounds``:
read-only 1-2, or 1-3 when they read secrets; non-destructive writes 2-4; destructive 3-5).
Rows (the default encoder all-MiniLM-L6-v2; every fit also learns from every harvested tool,
except in the real-MCP rows, where the test servers' tools are left out):

- fit on UltraTool, predict Seal-Tools; fit on Seal-Tools, predict UltraTool (``coverage=0.5``);
- both registries pooled, 5-fold stratified CV (shuffled, seed 0), ``coverage=0.5``;
- the same folds with the default (conservative) ``coverage``: the share of level >= 3 tools
  predicted >= 3, and of level-1 and level-2 tools predicted >= 3;
- real MCP tools, text only (the hints are removed before grading), 5 folds split by
  server (by repository: the tools of one server are never on both sides): the share of
  destructive-marked tools graded >= 3, of read-only-marked tools graded >= 3, the AUC of
  ``P(level >= 3)`` between the two, the confusion against the marks and the tools most
  under-graded;
- the packaged (pretrained) auditor on the reference servers' MCP sample: every tool its
  author marks destructive must be predicted >= 3 (nothing is tuned on it).

Each row also reports the issue's baseline (a multinomial logistic regression on the embeddings
of ``"{name}: {description}"``, argmax) and a per-level confusion matrix.

    python -m benchmarks.audit --data ../shared/data            # the table, md/json/png
    python -m benchmarks.audit --data ../shared/data --train    # rewrite the packaged weights
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from sklearn.base import clone  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import cohen_kappa_score, confusion_matrix, roc_auc_score  # noqa: E402
from sklearn.model_selection import GroupKFold, StratifiedKFold  # noqa: E402

from skriskrank import (  # noqa: E402
    FrozenEmbedder,
    RiskAuditor,
    ToolRegistry,
    hint_bounds,
    load_tools,
)
from skriskrank._auditor import DEFAULT_COVERAGE, LEVELS, PRETRAINED_FILE  # noqa: E402
from skriskrank.datasets import load_sealtools, load_ultratool  # noqa: E402

from ._common import (  # noqa: E402
    HARVEST,
    environment,
    harvested_files,
    md_table,
    write_json,
    write_md,
)

RESULTS = Path(__file__).resolve().parent / "results"
MARKS = ("read-only", "non-destructive write", "destructive")
PACKAGED = Path(__file__).resolve().parents[1] / "skriskrank" / "data" / PRETRAINED_FILE
#: The coverages the default is chosen from (smallest with recall of level >= 3 >= 0.90).
COVERAGE_GRID = np.round(np.arange(0.50, 0.996, 0.01), 2)
TARGET_RECALL = 0.90


# -- data ---------------------------------------------------------------------------------------
def training_registries(data_dir) -> dict[str, ToolRegistry]:
    """The two labelled registries, as the benchmarks' loaders give them."""
    data_dir = Path(data_dir)
    return {
        "ultratool": load_ultratool(data_dir / "ultratool").registry,
        "sealtools": load_sealtools(data_dir / "sealtools", "dev").registry,
    }


def pooled(registries: dict[str, ToolRegistry]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(texts, levels, source)`` of both registries, UltraTool first."""
    texts, y, src = [], [], []
    for name, reg in registries.items():
        texts += reg.texts
        y += reg.risk.tolist()
        src += [name] * len(reg)
    return texts, np.asarray(y), np.asarray(src)


def harvest(harvest_dir=HARVEST) -> dict:
    """The harvested MCP tools whose hints bound their level, with their marks and servers."""
    out = {"texts": [], "bounds": [], "marks": [], "servers": [], "names": []}
    for path in harvested_files(harvest_dir):
        source = json.loads(path.read_text())["_source"]
        reg = load_tools([path], scan=False)
        bounds = hint_bounds(reg)
        read_only = np.array([h.get("readOnlyHint") is True for h in reg.declared_hints])
        mark = np.where(read_only, MARKS[0], np.where(reg.declares_destructive, MARKS[2],
                                                       MARKS[1]))
        keep = (bounds[:, 0] > 1) | (bounds[:, 1] < 5)
        for i in np.flatnonzero(keep):
            out["texts"].append(reg.texts[i])
            out["bounds"].append(bounds[i].tolist())
            out["marks"].append(str(mark[i]))
            # One server per repository: packages of one repository share their tools.
            out["servers"].append(source.get("repository") or source["package"])
            out["names"].append(str(reg.names[i]))
    return {k: np.asarray(v, dtype=object if k in ("texts", "names") else None)
            for k, v in out.items()}


def train(data_dir, **params) -> RiskAuditor:
    """The packaged auditor: default parameters, fitted on every labelled and marked tool."""
    texts, y, _ = pooled(training_registries(data_dir))
    marked = harvest()
    return RiskAuditor(**params).fit(texts + list(marked["texts"]),
                                     [[v, v] for v in y] + marked["bounds"].tolist())


# -- measures -----------------------------------------------------------------------------------
def _measures(y, pred) -> dict:
    y, pred = np.asarray(y), np.asarray(pred)
    return {
        "qwk": float(cohen_kappa_score(y, pred, weights="quadratic", labels=list(LEVELS))),
        "exact": float(np.mean(y == pred)),
        "within_one": float(np.mean(np.abs(y - pred) <= 1)),
        "recall_risky": float(np.mean(pred[y >= 3] >= 3)),
        "l1_flagged": float(np.mean(pred[y == 1] >= 3)),
        "l2_flagged": float(np.mean(pred[y == 2] >= 3)),
        "confusion": confusion_matrix(y, pred, labels=list(LEVELS)).tolist(),
    }


def _quantile(P, coverage):
    return np.asarray(LEVELS)[np.argmax(np.cumsum(P, axis=1) >= coverage - 1e-9, axis=1)]


def _baseline(E_tr, y_tr, E_te):
    """The issue's baseline: multinomial LR on the embeddings, argmax (and its probabilities)."""
    lr = LogisticRegression(max_iter=3000).fit(E_tr, y_tr)
    P = np.zeros((len(E_te), len(LEVELS)))
    P[:, np.searchsorted(LEVELS, lr.classes_)] = lr.predict_proba(E_te)
    return lr.predict(E_te), P


def evaluate(data_dir, *, cache=True, quick=False, log=print) -> dict:
    regs = training_registries(data_dir)
    texts, y, src = pooled(regs)
    if quick:  # a smoke run: every third tool, 2 folds
        keep = np.arange(len(y)) % 3 == 0
        texts, y, src = [t for t, k in zip(texts, keep, strict=True) if k], y[keep], src[keep]
    texts_arr = np.asarray(texts, dtype=object)
    marked = harvest()
    mt, mb = marked["texts"], marked["bounds"]
    auditor = RiskAuditor(cache=cache, show_progress_bar=False)
    emb = FrozenEmbedder(regs["ultratool"], cache=cache, show_progress_bar=False).fit(["x"])
    t0 = time.perf_counter()
    E = emb.encode(texts)  # one pass; every fit below reads the same cache
    log(f"encoded {len(texts)} tools in {time.perf_counter() - t0:.0f} s")
    rows = {}

    def proba(train_idx, test_idx, marked_idx=slice(None), test_texts=texts_arr):
        fitted = clone(auditor).fit(
            list(texts_arr[train_idx]) + list(mt[marked_idx]),
            [[v, v] for v in y[train_idx]] + mb[marked_idx].tolist())
        return fitted.set_params(coverage=0.5).predict_proba(list(test_texts[test_idx]))

    for name, (a, b) in {"ultratool -> sealtools": ("ultratool", "sealtools"),
                         "sealtools -> ultratool": ("sealtools", "ultratool")}.items():
        tr, te = np.flatnonzero(src == a), np.flatnonzero(src == b)
        P = proba(tr, te)
        base_pred, _ = _baseline(E[tr], y[tr], E[te])
        rows[name] = {"auditor": _measures(y[te], _quantile(P, 0.5)),
                      "baseline": _measures(y[te], base_pred), "n_test": len(te)}
        log(f"{name}: QWK {rows[name]['auditor']['qwk']:.3f} "
            f"(baseline {rows[name]['baseline']['qwk']:.3f})")

    folds = StratifiedKFold(2 if quick else 5, shuffle=True, random_state=0)
    P = np.zeros((len(y), len(LEVELS)))
    P_base = np.zeros_like(P)
    base_pred = np.zeros(len(y), dtype=int)
    for tr, te in folds.split(texts_arr, y):
        P[te] = proba(tr, te)
        base_pred[te], P_base[te] = _baseline(E[tr], y[tr], E[te])
    # The default coverage: the smallest on the grid whose out-of-fold recall of level >= 3
    # tools reaches the target (these are the training labels; no test side is involved).
    recall = {float(c): float(np.mean(_quantile(P, c)[y >= 3] >= 3)) for c in COVERAGE_GRID}
    chosen = next((c for c, r in recall.items() if r >= TARGET_RECALL), float(COVERAGE_GRID[-1]))
    rows["pooled 5-fold CV"] = {"auditor": _measures(y, _quantile(P, 0.5)),
                                "baseline": _measures(y, base_pred), "n_test": len(y)}
    if chosen != DEFAULT_COVERAGE:
        log(f"the rule chooses coverage {chosen}, but DEFAULT_COVERAGE is {DEFAULT_COVERAGE}: "
            "the rows below use the chosen one; set DEFAULT_COVERAGE to it")
    rows["pooled 5-fold CV, conservative"] = {
        "auditor": _measures(y, _quantile(P, chosen)),
        "baseline (0.90 quantile)": _measures(y, _quantile(P_base, 0.90)),
        "baseline (0.95 quantile)": _measures(y, _quantile(P_base, 0.95)),
        "coverage": chosen, "n_test": len(y),
    }
    log(f"pooled: QWK {rows['pooled 5-fold CV']['auditor']['qwk']:.3f}; coverage chosen "
        f"{chosen} (default {DEFAULT_COVERAGE})")
    real = real_mcp(marked, lambda tr, te: proba(np.arange(len(y)), te, tr, mt), chosen,
                    quick=quick)
    log(f"real MCP by server: destructive >= 3 {real['destructive_risky']:.3f}, read-only "
        f">= 3 {real['read_only_risky']:.3f}, AUC {real['auc']:.3f}")
    return {"rows": rows, "coverage_recall": recall, "coverage_chosen": chosen,
            "n_tools": len(y), "quick": quick, "real_mcp": real}


def real_mcp(marked: dict, proba, coverage, *, quick=False, n_worst=15) -> dict:
    """Harvested tools graded from their text alone, 5 folds split by server."""
    marks, servers = marked["marks"], marked["servers"]
    P = np.zeros((len(marks), len(LEVELS)))
    for tr, te in GroupKFold(2 if quick else 5).split(marks, groups=servers):
        P[te] = proba(tr, te)
    pred = _quantile(P, coverage)
    p_risky = P[:, 2:].sum(axis=1)
    ro, de = marks == MARKS[0], marks == MARKS[2]
    worst = np.flatnonzero(de)[np.argsort(p_risky[de], kind="stable")[:n_worst]]
    over = np.flatnonzero(ro)[np.argsort(-p_risky[ro], kind="stable")[:n_worst]]
    tool = lambda i: {"name": marked["names"][i], "server": marked["servers"][i],  # noqa: E731
                      "p_risky": float(p_risky[i]), "predicted": int(pred[i])}
    return {
        "n_tools": len(marks), "n_servers": len(set(servers)),
        "counts": {m: int((marks == m).sum()) for m in MARKS},
        "coverage": coverage,
        "destructive_risky": float(np.mean(pred[de] >= 3)),
        "read_only_risky": float(np.mean(pred[ro] >= 3)),
        "auc": float(roc_auc_score(de[ro | de], p_risky[ro | de])),
        "confusion": {m: np.bincount(pred[marks == m] - 1, minlength=5).tolist() for m in MARKS},
        "most_under_graded": [tool(i) for i in worst],
        "most_over_graded": [tool(i) for i in over],
    }


def mcp_check(data_dir) -> dict:
    """The packaged auditor on the real MCP sample (read only: nothing is tuned on it)."""
    files = sorted((Path(data_dir) / "mcp").glob("*.json"))
    reg = load_tools(files)
    auditor = RiskAuditor.pretrained(show_progress_bar=False)
    pred = auditor.predict(reg)
    text_only = auditor.predict(reg.texts)  # the same tools with the hints ignored
    destructive = reg.declares_destructive
    tools = [
        {"name": n, "destructive": bool(d), "predicted": int(p), "text_only": int(t)}
        for n, d, p, t in zip(reg.names, destructive, pred, text_only, strict=True)
    ]
    return {
        "n_tools": len(reg), "n_destructive": int(destructive.sum()),
        "destructive_predicted_risky": int((pred[destructive] >= 3).sum()),
        "destructive_risky_from_text_alone": int((text_only[destructive] >= 3).sum()),
        "tools": tools,
    }


#: What was tried before the defaults were fixed (research scripts outside the repository;
#: pooled 5-fold stratified CV, seed 0, the same folds as the rows; transfer rows fit on one
#: registry and predict the other). Kept in the report so a reader sees how far each idea went.
RESEARCH_NOTES = """\
## What was tried

Pooled 5-fold CV QWK (`coverage=0.5`); every choice below was made on these numbers, which
use only the labelled registries (never the MCP sample, never a transfer row's test side
alone). The transfer rows use the same defaults, so they are not tuned for transfer.

| model | pooled QWK | transfer UT->ST / ST->UT |
|---|---|---|
| LR on the embedding, C=1 (the issue's baseline), median rule | 0.760 | 0.697 / 0.359 |
| the same, C=3 / C=10 | 0.782 / 0.786 | |
| ordinal LR (Frank and Hall: 4 binary LRs), embedding, C=3 / C=10 | 0.766 / 0.779 | |
| TF-IDF of words and word pairs alone, C=10 | 0.800 | |
| embedding + TF-IDF (weight 1), C=3 | 0.817 | 0.710 / 0.344 |
| the same, TF-IDF weight 1.5 / 2 | 0.819 / 0.819 | 0.719 / 0.351 (weight 2) |
| the same, Seal-Tools texts with parameter names and descriptions | 0.818 | |
| + square-root-balanced level weights, C=3 (**chosen**; 2^15 buckets) | 0.827 | 0.707 / 0.366 |
| the same, C=1 | 0.824 | 0.736 / 0.367 |
| the same, fully balanced weights | | 0.683 / 0.396 |
| ordinal LR with square-root-balanced weights | | 0.707 / 0.392 |
| + the five permission categories of `derive_permissions` as features | | 0.693 / 0.376 |
| + cosine similarity to the five rubric level descriptions | | 0.681 / 0.386 |

- **Transfer.** No variant reached 0.78 (UltraTool -> Seal-Tools) or 0.45 (Seal-Tools ->
  UltraTool). The two label sets differ in kind: 13.5% of UltraTool's tools are at level >= 3
  against 1.8% of Seal-Tools', so a model fitted on Seal-Tools has 72 risky examples and
  grades almost every UltraTool tool 1 or 2 (see the confusion matrix), and UltraTool's terse
  descriptions ("Academic Achievement Query Tool") share little vocabulary with Seal-Tools'
  API descriptions. Fully balanced weights help Seal-Tools -> UltraTool a little (0.396) but
  cost pooled QWK and UltraTool -> Seal-Tools, so the pooled CV did not choose them.
- **Conservative rule.** The out-of-fold `P(level >= 3)` of the chosen model ranks risky tools
  with AUC 0.963, and the best any threshold on it does at recall 0.90 is about 0.045 of
  level-1 and 0.13 of level-2 tools flagged: the ranking, not the quantile rule, is what
  misses <= 0.03 / <= 0.10, so per-level thresholds cannot reach the target either.
- **Parameters in the text.** Seal-Tools' parameter names and descriptions did not change the
  pooled QWK (0.818 against 0.819), so the packaged model is fitted on the registries as the
  benchmarks' loaders give them (`"{name}: {description}"`), and shares their cached
  embeddings; at audit time a tool's text includes its parameters.
"""


#: How the real MCP tools' hints were brought in (a research script outside the repository:
#: the 1,947 tools with an explicit mark, 5-fold GroupKFold by repository, text only).
MARKS_NOTES = """\
## What was tried with the real MCP tools' hints

Read-only / destructive-marked tools graded >= 3 on servers the fit did not see, at three
coverages, and the AUC of `P(level >= 3)` between the two (the benchmark labels in every fit).

| model | AUC | coverage 0.5 | 0.8 | 0.89 |
|---|---|---|---|---|
| labels only (the earlier auditor) | 0.664 | 0.005/0.052 | 0.055/0.190 | 0.148/0.353 |
| + name floor (a destroying verb: >= 3) | 0.704 | 0.005/0.317 | 0.055/0.367 | 0.148/0.455 |
| + hint bounds (EM, weight 1) | 0.942 | 0.014/0.587 | 0.147/0.858 | 0.280/0.952 |
| + axes, bounds weight 1, floor | 0.945 | 0.023/0.641 | 0.147/0.884 | 0.295/0.942 |
| bounds weight 3, floor | 0.965 | 0.013/0.687 | 0.122/0.902 | 0.221/0.962 |
| + axes | 0.964 | 0.023/0.721 | 0.113/0.898 | 0.221/0.962 |
| + axes, C=10 | 0.962 | 0.021/0.703 | 0.077/0.882 | 0.154/0.924 |
| + axes, read-only always 1-2 | 0.972 | 0.014/0.697 | 0.073/0.892 | 0.151/0.954 |
| **axes, bounds weight 10, floor (chosen)** | 0.974 | 0.019/0.764 | 0.084/0.904 | 0.170/0.960 |

The coverage is not chosen on these tools: the documented rule (recall of level >= 3 on the
benchmark labels) picks 0.94 for the chosen model, where read-only tools are over-graded
(the table above); the read-only target would need about 0.8.

Both sides at once, with all 1,978 harvested tools (44 repositories): the out-of-fold
`P(level >= 3)` of the pooled 5-fold CV on the benchmark labels and of the split by server,
each model scored at two thresholds on it: the one at which the benchmarks' level >= 3 tools
are recalled at 0.90 (L1 / L2 flagged, read-only / destructive graded >= 3), and coverage 0.8
(recall, L2 flagged, read-only graded >= 3). *Servers alike*: each harvested tool weighted by
1 / sqrt(its server's number of tools).

| bounds | QWK | AUC, benchmarks / real | at recall 0.90 | at coverage 0.8 |
|---|---|---|---|---|
| weight 10 (chosen) | 0.803 | 0.935 / 0.971 | 0.058 / 0.386, 0.218 / 0.974 | 0.801, 0.175, 0.094 |
| weight 3 | 0.812 | 0.943 / 0.963 | 0.049 / 0.304, 0.243 / 0.964 | 0.821, 0.153, 0.116 |
| 10, servers alike | 0.802 | 0.936 / 0.971 | 0.059 / 0.400, 0.215 / 0.972 | 0.793, 0.171, 0.087 |

No threshold meets both sides: where the benchmarks' recall is 0.90, a fifth of the
read-only tools of unseen servers are graded >= 3; where those are at most a tenth, the
benchmarks' recall is 0.79-0.80. Weighting the servers alike changes nothing, and lighter
bounds trade the real servers' ranking for the benchmarks'.
"""


# -- report -------------------------------------------------------------------------------------
def _fmt_confusion(cm) -> str:
    return " / ".join(",".join(str(v) for v in row) for row in cm)


def render(result: dict) -> str:
    rows, mcp, real = result["rows"], result["mcp"], result["real_mcp"]
    ut_st = rows["ultratool -> sealtools"]
    st_ut = rows["sealtools -> ultratool"]
    pool = rows["pooled 5-fold CV"]
    cons = rows["pooled 5-fold CV, conservative"]
    checks = [
        ["UltraTool -> Seal-Tools QWK / within-one",
         f"{ut_st['baseline']['qwk']:.2f} / {ut_st['baseline']['within_one']:.2f}",
         ">= 0.78 / >= 0.98",
         f"{ut_st['auditor']['qwk']:.3f} / {ut_st['auditor']['within_one']:.3f}",
         ut_st["auditor"]["qwk"] >= 0.78 and ut_st["auditor"]["within_one"] >= 0.98],
        ["Seal-Tools -> UltraTool QWK", f"{st_ut['baseline']['qwk']:.2f}", ">= 0.45",
         f"{st_ut['auditor']['qwk']:.3f}", st_ut["auditor"]["qwk"] >= 0.45],
        ["pooled 5-fold CV QWK", f"{pool['baseline']['qwk']:.2f}", ">= 0.82",
         f"{pool['auditor']['qwk']:.3f}", pool["auditor"]["qwk"] >= 0.82],
        [f"conservative (coverage={cons['coverage']}): level >= 3 predicted >= 3",
         (f"{cons['baseline (0.90 quantile)']['recall_risky']:.2f} (0.90); "
          f"{cons['baseline (0.95 quantile)']['recall_risky']:.2f} (0.95)"), ">= 0.90",
         f"{cons['auditor']['recall_risky']:.3f}", cons["auditor"]["recall_risky"] >= 0.90],
        ["the same: level 1 / level 2 predicted >= 3",
         (f"{cons['baseline (0.90 quantile)']['l1_flagged']:.2f} / "
          f"{cons['baseline (0.90 quantile)']['l2_flagged']:.2f} (0.90); "
          f"{cons['baseline (0.95 quantile)']['l1_flagged']:.2f} / "
          f"{cons['baseline (0.95 quantile)']['l2_flagged']:.2f} (0.95)"),
         "<= 0.03 / <= 0.10",
         f"{cons['auditor']['l1_flagged']:.3f} / {cons['auditor']['l2_flagged']:.3f}",
         cons["auditor"]["l1_flagged"] <= 0.03 and cons["auditor"]["l2_flagged"] <= 0.10],
        ["real MCP tools by server, text only: destructive-marked graded >= 3", "",
         ">= 0.85", f"{real['destructive_risky']:.3f}", real["destructive_risky"] >= 0.85],
        ["the same: read-only-marked graded >= 3", "", "<= 0.10",
         f"{real['read_only_risky']:.3f}", real["read_only_risky"] <= 0.10],
        ["the same: AUC of P(level >= 3), read-only against destructive", "", ">= 0.96",
         f"{real['auc']:.3f}", real["auc"] >= 0.96],
        ["MCP sample, pretrained: destructive tools predicted >= 3", "", "all",
         (f"{mcp['destructive_predicted_risky']} of {mcp['n_destructive']} "
          f"({mcp['destructive_risky_from_text_alone']} from the text alone)"),
         mcp["destructive_predicted_risky"] == mcp["n_destructive"]],
    ]
    lines = [
        "# RiskAuditor", "",
        ("`python -m benchmarks.audit --data ../shared/data`; levels 1..5 of the paper's "
         f"released labels, {result['n_tools']} tools; all-MiniLM-L6-v2. The QWK rows use "
         "`coverage=0.5`, the conservative rows the default coverage. Baseline: the issue's "
         "multinomial logistic regression on the embeddings of `\"{name}: {description}\"`, "
         "measured here with argmax (the issue quotes 0.71 / 0.36 / 0.78; the same model's "
         "median level gives 0.70 / 0.36 / 0.76 here). Every fit also learns from the "
         f"{real['n_tools']} harvested MCP tools whose hints bound their level (in the "
         "real-MCP rows, only from those of the other folds' servers)."), "",
        md_table(["measure", "baseline", "target", "RiskAuditor", "met"],
                 [c[:4] + ["yes" if c[4] else "**no**"] for c in checks]),
        "", "## Confusion matrices (rows: true level 1..5, columns: predicted 1..5)", "",
    ]
    cm_rows = []
    for name, row in rows.items():
        for model, m in row.items():
            if isinstance(m, dict) and "confusion" in m:
                cm_rows.append([name, model, f"{m['qwk']:.3f}", f"{m['within_one']:.3f}",
                                f"{m['recall_risky']:.3f}", f"{m['l1_flagged']:.3f}",
                                f"{m['l2_flagged']:.3f}", _fmt_confusion(m["confusion"])])
    lines.append(md_table(["row", "model", "QWK", "within-one", "recall >= 3",
                           "L1 >= 3", "L2 >= 3", "confusion (rows L1 / ... / L5)"], cm_rows))
    lines += [
        "", RESEARCH_NOTES, MARKS_NOTES, "## Choosing the default coverage", "",
        (f"Out-of-fold recall of level >= 3 tools over the pooled CV; the smallest coverage "
         f"reaching {TARGET_RECALL} is {result['coverage_chosen']} (`DEFAULT_COVERAGE` = "
         f"{rows['pooled 5-fold CV, conservative']['coverage']})."), "",
        md_table(["coverage", "recall >= 3"],
                 [[c, f"{r:.3f}"] for c, r in result["coverage_recall"].items()
                  if round(c * 100) % 2 == 0 or c >= 0.9]),
        "", (f"## Real MCP tools, split by server ({real['n_tools']} tools of "
             f"{real['n_servers']} servers, text only, coverage {real['coverage']})"), "",
        ("5-fold `GroupKFold` by repository over the harvested tools "
         "(`benchmarks/data/mcp_harvest`); each fold's model learns from the benchmarks' "
         "labels and the other folds' servers' hint bounds, and grades the held-out servers' "
         "tools from their text, hints removed. Rows: the authors' marks; columns: the "
         "level graded."), "",
        md_table(["mark", "tools", "1", "2", "3", "4", "5", "graded >= 3"],
                 [[m, real["counts"][m], *real["confusion"][m],
                   f"{sum(real['confusion'][m][2:]) / max(real['counts'][m], 1):.3f}"]
                  for m in MARKS]),
        "", "Destructive-marked tools graded lowest (by `P(level >= 3)`):", "",
        md_table(["tool", "server", "P(>=3)", "graded"],
                 [[t["name"], t["server"], f"{t['p_risky']:.2f}", t["predicted"]]
                  for t in real["most_under_graded"]]),
        "", "Read-only-marked tools graded highest:", "",
        md_table(["tool", "server", "P(>=3)", "graded"],
                 [[t["name"], t["server"], f"{t['p_risky']:.2f}", t["predicted"]]
                  for t in real["most_over_graded"]]),
        "", "## MCP sample (pretrained, default coverage)", "",
        md_table(["tool", "marked destructive", "predicted", "text alone"],
                 [[t["name"], "yes" if t["destructive"] else "", t["predicted"],
                   t["text_only"]] for t in mcp["tools"]]),
    ]
    return "\n".join(lines) + "\n"


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("UltraTool -> Seal-Tools (cov 0.5)", result["rows"]["ultratool -> sealtools"]),
        ("Seal-Tools -> UltraTool (cov 0.5)", result["rows"]["sealtools -> ultratool"]),
        ("pooled CV (cov 0.5)", result["rows"]["pooled 5-fold CV"]),
        ("pooled CV (default coverage)", result["rows"]["pooled 5-fold CV, conservative"]),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.9))
    for ax, (title, row) in zip(axes, panels, strict=True):
        cm = np.asarray(row["auditor"]["confusion"], dtype=float)
        share = cm / np.maximum(cm.sum(axis=1, keepdims=True), 1)
        ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
        for i in range(5):
            for j in range(5):
                ax.text(j, i, int(cm[i, j]), ha="center", va="center", fontsize=8,
                        color="white" if share[i, j] > 0.5 else "black")
        ax.set_xticks(range(5), LEVELS)
        ax.set_yticks(range(5), LEVELS)
        ax.set_xlabel("predicted level")
        ax.set_ylabel("true level")
        ax.set_title(f"{title}\nQWK {row['auditor']['qwk']:.3f}", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97))  # room for the two-line titles
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", help="the shared data directory")
    parser.add_argument("--out", default=str(RESULTS), help="where audit.{md,json,png} go")
    parser.add_argument("--cache", default=None, help="an on-disk embedding cache directory")
    parser.add_argument("--quick", action="store_true", help="a smoke run on a third of the tools")
    parser.add_argument("--train", action="store_true",
                        help=f"fit on every labelled tool and write {PACKAGED.name}")
    args = parser.parse_args(argv)
    cache = args.cache or True
    if args.train:
        t0 = time.perf_counter()
        auditor = train(args.data, cache=cache, show_progress_bar=True)
        # The saved parameters are the defaults a user gets, not this run's cache and bar.
        auditor.set_params(cache=True, show_progress_bar=None).save(PACKAGED)
        print(f"wrote {PACKAGED} ({PACKAGED.stat().st_size / 1024:.0f} KiB) in "
              f"{time.perf_counter() - t0:.0f} s")
        return {"trained": str(PACKAGED)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = evaluate(args.data, cache=cache, quick=args.quick)
    result["mcp"] = mcp_check(args.data)
    result["config"] = {"data": str(args.data), "quick": args.quick, "folds_seed": 0,
                        "default_coverage": DEFAULT_COVERAGE,
                        "params": {k: v for k, v in RiskAuditor().get_params().items()
                                   if k != "cache"}}
    result["environment"] = environment()
    write_json(out, "audit", result)
    write_md(out, "audit", render(result))
    plot(result, out / "audit.png")
    print(render(result))
    return result


if __name__ == "__main__":
    main()
