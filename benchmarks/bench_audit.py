"""Benchmark: what grading a catalogue costs beyond encoding its tools' texts.

``skriskrank audit`` reads the tool files, scans them for poisoning, encodes every tool's text,
builds the lexical and rubric-axes features and grades them. Encoding is the part nothing but
a faster encoder can cut; this measures the whole audit against encoding the same texts alone
with the same encoder, side by side in one run (no cache on either side, best of
``--repeats`` interleaved runs), for the default encoder backend and for PyTorch (the
default before ONNX Runtime: what the audit took then), on up to ``--n`` (10,000) real tool
texts: every harvested
MCP tool (``benchmarks/data/mcp_harvest``, parameters included) and then UltraTool's and
Seal-Tools' tools, each as an MCP tool; there are 9,469 in all.

Run ``python -m benchmarks.bench_audit --data ../shared/data`` (``--n 2000``: smaller).
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from benchmarks._common import (
    RESULTS,
    best_of,
    environment,
    harvested_files,
    md_table,
    write_json,
    write_md,
)


def catalogue(data, n) -> dict:
    """An MCP ``tools/list`` answer of ``n`` real tools with distinct names."""
    from skriskrank.datasets import load_sealtools, load_ultratool

    tools, seen = [], set()

    def add(tool, server):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", tool["name"])  # UltraTool's have spaces
        name = name if name not in seen else f"{server}__{name}"
        if name not in seen and len(tools) < n:
            seen.add(name)
            tools.append({**tool, "name": name})

    for path in harvested_files():
        for tool in json.loads(path.read_text())["tools"]:
            add(tool, path.stem.split("__", 1)[1])
    for server, reg in (("ultratool", load_ultratool(Path(data) / "ultratool").registry),
                        ("sealtools", load_sealtools(Path(data) / "sealtools", "dev").registry)):
        for name, desc in zip(reg.names, reg.descriptions, strict=True):
            add({"name": str(name), "description": str(desc)}, server)
    return {"tools": tools}


def run(data, n, repeats=2) -> dict:
    from skriskrank import RiskAuditor, load_tools
    from skriskrank._encoder import DEFAULT_BACKEND, encode

    backends = (DEFAULT_BACKEND, "torch")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tools.json"
        path.write_text(json.dumps(catalogue(data, n)))
        texts = load_tools([path], scan=False).texts
        frames, steps = [], {}
        for b in backends:
            auditor = RiskAuditor.pretrained(cache=False, show_progress_bar=False, backend=b)
            encode(texts[:64], cache=False, backend=b)  # each model loaded outside the timings
            steps[f"encode {b}"] = lambda b=b: encode(texts, cache=False, backend=b,
                                                      show_progress_bar=False)
            # What `skriskrank audit` does: read and scan the file, then grade every tool.
            steps[f"audit {b}"] = lambda a=auditor: frames.append(a.audit(load_tools([path])))
        best = best_of(steps, repeats=repeats)
    return {"n_tools": len(texts), "repeats": repeats, "backends": list(backends),
            "seconds": best,
            "ratio": {b: best[f"audit {b}"] / best[f"encode {b}"] for b in backends},
            "median_chars": sorted(map(len, texts))[len(texts) // 2],
            "levels": frames[-1]["predicted"].value_counts().sort_index().to_dict()}


def render(result) -> str:
    s, backends = result["seconds"], result["backends"]
    rows = [[f"encode the texts alone ({b})", f"{s[f'encode {b}']:.1f}", "1.00"] for b in backends]
    rows += [[f"load_tools + RiskAuditor.audit (scan, encode, features, grade; {b})",
              f"{s[f'audit {b}']:.1f}", f"{result['ratio'][b]:.2f}"] for b in backends]
    return "\n".join([
        "# Auditing a catalogue against encoding its texts", "",
        (f"`python -m benchmarks.bench_audit`: {result['n_tools']} real tool texts (median "
         f"{result['median_chars']} characters), the packaged encoder and auditor with each "
         f"encoder backend ({backends[0]!r} is the default), no embedding cache, best of "
         f"{result['repeats']} interleaved run(s)."), "",
        md_table(["step", "seconds", "ratio to encoding"], rows), "",
        (f"The audit with {backends[0]!r} is {s['audit torch'] / s[f'audit {backends[0]}']:.2f}x "
         "as fast as with 'torch'. Target: the audit takes at most 1.3x the encoding."), "",
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2, help="interleaved runs of each")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    result = run(args.data, args.n, args.repeats)
    result["environment"] = environment()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out, "bench_audit", result)
    write_md(out, "bench_audit", render(result))
    print(render(result))
    return result


if __name__ == "__main__":
    main()
