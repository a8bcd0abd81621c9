"""Real-MCP tool-retrieval tasks from Accenture/mcp-bench (Apache-2.0), and their loader.

mcp-bench's 104 tasks are written against 28 real MCP servers whose sources it ships under
``mcp_servers/``. This module turns them into a retrieval benchmark:

- **tools**: each server is extracted from the mirror into a scratch directory, its
  dependencies installed there (a venv for the Python servers, ``node_modules`` for the
  Node ones; nothing in the repository), started with the dummy keys below, and asked
  ``tools/list`` with the ``mcp`` SDK client (:func:`benchmarks.harvest_mcp_tools.probe`).
  OpenAPI Explorer builds its tool descriptions from a web page fetched at ``tools/list``
  time, so its two tools are read statically from the source (that page left out);
- **queries**: each task's ``fuzzy_description`` (the tool-free paraphrase), stripped;
- **gold**: the tools the task's ``task_description`` names (``Server Name:tool`` or a bare
  tool name, and those its ``dependency_analysis`` names) that exist on the
  task's servers, as gateway ids ``<slug>__<tool>``;
- **split**: tasks sorted by id and alternated dev/test within each combination type.

    python -m benchmarks.mcp_bench build --mirror /work/.mirror/Accenture+mcp-bench/repo

``--no-harvest`` keeps the saved tool lists and rebuilds only the tasks and the README.
:func:`load_mcp_bench` reads a split over the full catalogue of all 28 servers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "mcp_bench"
REPOSITORY = "Accenture/mcp-bench"
TASK_FILES = ("single", "multi_2server", "multi_3server")
DUMMY_ENV = {"NCI_API_KEY": "dummy", "HF_TOKEN": "hf_dummy", "NPS_API_KEY": "dummy",
             "NASA_API_KEY": "DEMO_KEY", "GOOGLE_MAPS_API_KEY": "dummy",
             "FASTMCP_SHOW_CLI_BANNER": "false", "NO_COLOR": "1"}
#: Python dependencies of the Python servers (one shared venv), and the older SDK that
#: NASA Data's ``FastMCP(description=...)`` needs (its uv.lock pins mcp 1.6.0).
PY_DEPS = ["mcp[cli]>=1.12,<2", "fastmcp>=2.3,<3", "httpx[socks]", "requests", "beautifulsoup4",
           "lxml", "aiohttp", "requests-cache", "retry-requests", "huggingface-hub", "feedparser",
           "PyPDF2", "matplotlib", "numpy", "sympy", "scipy", "pandas", "openmeteo-requests",
           "wikipedia-api", "python-dotenv", "tzdata", "tzlocal", "praw", "redditwarp",
           "dnspython", "diskcache", "platformdirs", "psutil", "rich", "typer", "uvicorn",
           "flask", "fastapi", "pydantic", "certifi"]
PY_DEPS_OLD = ["mcp==1.6.0", "pydantic<2.11", "httpx", "python-dotenv"]

#: server name -> (directory under mcp_servers/, how to start it). "py": venv, script/module
#: args, PYTHONPATH dirs; "node": args after ``node``; "http": args, port; "static".
SERVERS = {
    "Bibliomantic": ("bibliomantic-mcp-server", ("py", ["bibliomantic_server.py"], [])),
    "BioMCP": ("biomcp", ("py", ["-m", "biomcp", "run"], ["src"])),
    "Call for Papers": ("call-for-papers-mcp/call-for-papers-mcp-main", ("py", ["server.py"], [])),
    "Car Price Evaluator": ("car-price-mcp-main", ("py", ["server.py"], [])),
    "Context7": ("context7-mcp", ("node", ["dist/index.js"])),
    "DEX Paprika": ("dexpaprika-mcp", ("node", ["src/index.js"])),
    "FruityVice": ("fruityvice-mcp", ("py", ["server.py"], [])),
    "Game Trends": ("game-trends-mcp", ("py", ["server.py"], [])),
    "Google Maps": ("mcp-google-map", ("http", ["dist/cli.js", "--port", "3917"], 3917)),
    "Hugging Face": ("huggingface-mcp-server", ("py", ["src/huggingface/server.py"], [])),
    "Huge Icons": ("hugeicons-mcp-server", ("node", ["build/index.js"])),
    "Math MCP": ("math-mcp", ("node", ["build/index.js"])),
    "Medical Calculator": ("medcalc", ("py", ["medcalc/__main__.py"], ["."])),
    "Metropolitan Museum": ("metmuseum-mcp", ("node", ["dist/index.js"])),
    "Movie Recommender": ("movie-recommender-mcp/movie-reccomender-mcp",
                          ("py", ["server.py"], [])),
    "NASA Data": ("nasa-mcp", ("py-old", ["main.py"], ["src"])),
    "National Parks": ("mcp-server-nationalparks", ("node", ["build/index.js"])),
    "NixOS": ("mcp-nixos", ("py", ["mcp_nixos/server.py"], ["."])),
    "OKX Exchange": ("okx-mcp", ("node", ["build/index.js"])),
    "OSINT Intelligence": ("mcp-osint-server",
                           ("py", ["mcp_osint_server/mcp_osint_server/main.py"], [])),
    "OpenAPI Explorer": ("openapi-mcp-server", ("static",)),
    "Paper Search": ("paper-search-mcp", ("py", ["-m", "paper_search_mcp.server"], ["."])),
    "Reddit": ("mcp-reddit", ("py", ["-m", "mcp_reddit.reddit_fetcher"], ["src"])),
    "Scientific Computing": ("scientific_computation_mcp", ("py", ["src/server.py"], [])),
    "Time MCP": ("time-mcp", ("py", ["-m", "mcp_server_time"], ["src"])),
    "Unit Converter": ("unit-converter-mcp", ("py", ["-m", "unit_converter_mcp.server"], ["src"])),
    "Weather Data": ("weather_mcp", ("py", ["server.py"], [])),
    "Wikipedia": ("wikipedia-mcp", ("py", ["-m", "wikipedia_mcp"], ["."])),
}


def slug(server: str) -> str:
    """``"Google Maps"`` -> ``"google_maps"``: the prefix of the server's gateway tool ids."""
    return re.sub(r"[^a-z0-9]+", "_", server.lower()).strip("_")


def _git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True,
                          text=True).stdout


def _extract(mirror: Path, commit: str, dest: Path) -> None:
    """Every blob under mcp_servers/ at ``commit`` (the mirror lacks a few large data files)."""
    for line in _git(mirror, "ls-tree", "-r", commit, "mcp_servers").splitlines():
        meta, path = line.split("\t", 1)
        _, kind, sha = meta.split()
        if kind != "blob":
            continue
        out = dest / path
        out.parent.mkdir(parents=True, exist_ok=True)
        blob = subprocess.run(["git", "-C", str(mirror), "cat-file", "blob", sha],
                              capture_output=True)
        if blob.returncode == 0:
            out.write_bytes(blob.stdout)


def _licence(src: Path) -> str:
    for lic in sorted(src.glob("LICEN[CS]E*")):
        head = lic.read_text(errors="replace")[:300].lower()
        for needle, ident in (("mit license", "MIT"), ("permission is hereby granted", "MIT"),
                              ("apache license", "Apache-2.0")):
            if needle in head:
                return f"{ident} ({lic.name})"
    for meta in ("pyproject.toml", "package.json"):
        if (src / meta).exists():
            m = re.search(r'"?license"?\s*[=:]\s*(?:\{\s*text\s*=\s*)?"([^"]+)"',
                          (src / meta).read_text())
            if m:
                return f"{m.group(1)} ({meta})"
    return "Apache-2.0 (mcp-bench)"


def _venv(work: Path, name: str, deps: list[str]) -> Path:
    py = work / name / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(work / name)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *deps], check=True)
    return py


def _node_prepare(src: Path) -> None:
    """``npm install`` and build. Met Museum's lock and manifest name ``mcpscout`` (a usage
    tracker no longer on npm; ``track`` is all the server calls): it gets a no-op stand-in."""
    if src.name == "metmuseum-mcp":
        (src / "package-lock.json").unlink(missing_ok=True)
        pkg = json.loads((src / "package.json").read_text())
        pkg["dependencies"].pop("mcpscout", None)
        pkg["type"] = "module"
        (src / "package.json").write_text(json.dumps(pkg, indent=2))
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts",
                        "zod@3", "typescript", "@types/node"], cwd=src, capture_output=True)
        stub = src / "node_modules" / "mcpscout"
        stub.mkdir(parents=True, exist_ok=True)
        (stub / "index.js").write_text("export class MCPScout { constructor(k){} track(s){} }\n")
        (stub / "index.d.ts").write_text(
            "export declare class MCPScout { constructor(k: string); track(s: any): void }\n")
        (stub / "package.json").write_text(
            '{"name": "mcpscout", "version": "0.0.1", "type": "module", "main": "index.js"}')
        subprocess.run(["npx", "tsc"], cwd=src, capture_output=True)  # type errors only
        return
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=src,
                   capture_output=True, check=True)
    if '"build"' in (src / "package.json").read_text():
        subprocess.run(["npm", "run", "build"], cwd=src, capture_output=True, check=True)


def _http_tools(py: Path, url: str) -> dict:
    """tools/list over streamable HTTP (Google Maps serves only that), with the venv's SDK."""
    code = (
        "import asyncio, json, sys\n"
        "from mcp import ClientSession\n"
        "from mcp.client.streamable_http import streamablehttp_client\n"
        "async def main():\n"
        "    async with streamablehttp_client(sys.argv[1]) as (r, w, _):\n"
        "        async with ClientSession(r, w) as s:\n"
        "            await s.initialize()\n"
        "            res = await s.list_tools()\n"
        "            return [t.model_dump(by_alias=True, exclude_none=True) for t in res.tools]\n"
        "print(json.dumps({'tools': asyncio.run(main())}))\n")
    out = subprocess.run([str(py), "-c", code, url], capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout)


def _static_openapi(src: Path) -> list[dict]:
    """OpenAPI Explorer's two tool literals, evaluated by node with the fetched page empty."""
    text = (src / "index.js").read_text()
    blocks = re.findall(r"const (GET_API_\w+_TOOL) = (\{.*?\n      \});", text, re.S)
    js = "const openpaiIds = '';\n" + "".join(f"const {n} = {b};\n" for n, b in blocks)
    js += f"console.log(JSON.stringify([{', '.join(n for n, _ in blocks)}]));"
    tools = json.loads(subprocess.run(["node", "-e", js], capture_output=True, text=True,
                                      check=True).stdout)
    for tool in tools:
        tool["description"] = tool["description"].rstrip()
    return tools


def harvest(mirror: Path, commit: str, work: Path, out: Path) -> None:
    """Write ``tools/<slug>.json`` for every server (see the module docstring)."""
    from benchmarks.harvest_mcp_tools import probe

    root = work / "src"
    if not root.exists():
        _extract(mirror, commit, root)
    py_new = _venv(work, "venv", PY_DEPS)
    py_old = _venv(work, "venv-mcp16", PY_DEPS_OLD)
    subprocess.run([str(py_new), "-m", "pip", "install", "-q", "--no-deps", "-e",
                    str(root / "mcp_servers" / "biomcp")], check=True)
    out.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    home.mkdir(exist_ok=True)
    for server, (sub, how) in SERVERS.items():
        src = root / "mcp_servers" / sub
        env = {**os.environ, **DUMMY_ENV, "HOME": str(home)}
        if how[0] == "static":
            tools, extraction = _static_openapi(src), "static"
        elif how[0] == "http":
            _node_prepare(src)
            proc = subprocess.Popen(["node", *how[1]], cwd=src, env=env, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                time.sleep(5)
                tools = _http_tools(py_new, f"http://127.0.0.1:{how[2]}/mcp")["tools"]
                extraction = "tools/list"
            finally:
                os.killpg(proc.pid, 9)
        else:
            if how[0] == "node":
                _node_prepare(src)
                command = [shutil.which("node"), *how[1]]
            else:
                py = py_old if how[0] == "py-old" else py_new
                command = [str(py), *how[1]]
                env["PATH"] = f"{py.parent}:{env['PATH']}"
                env["PYTHONPATH"] = ":".join(str(src / p) for p in how[2])
            result = probe(command, env, src, 90, work / f"{slug(server)}.err")
            if "error" in result:
                raise RuntimeError(f"{server}: {result['error']}")
            tools, extraction = result["tools"], "tools/list"
        record = {"tools": tools, "_source": {
            "server": server, "repository": REPOSITORY, "commit": commit,
            "subdirectory": f"mcp_servers/{sub}", "licence": _licence(src),
            "extraction": extraction}}
        (out / f"{slug(server)}.json").write_text(json.dumps(record, indent=1,
                                                             ensure_ascii=False) + "\n")
        print(f"{server}: {len(tools)} tools ({extraction})", flush=True)


def _mentions(text: str, servers: list[str], tools: dict[str, set[str]]):
    """Gold tools a text names, and the mentions matching no tool.

    ``Server Name:tool`` matches on that server; a bare name matches when it looks like an
    identifier (``_``, ``-`` or an inner capital: ``maps_geocode``, ``getNetworks``) or is
    written as a call (``mean(``) or in backticks; plain words (``search``, ``mean``) in
    prose are not mentions. Unmatched are ``Server:name`` mentions naming no tool of that
    server and identifiers that shorten a tool's name (``get_all_trending``), kept out of gold.
    """
    gold, unmatched = set(), []
    for server in servers:
        for m in re.finditer(re.escape(server) + r"\s*:\s*`?([A-Za-z_][\w-]*)", text):
            name = m.group(1)
            if name in tools[server]:
                gold.add(f"{slug(server)}__{name}")
            else:
                unmatched.append(f"{server}:{name}")
        for name in tools[server]:
            identifier = re.search(r"[_-]|[a-z][A-Z]", name)
            pattern = (rf"(?<![\w-]){re.escape(name)}(?![\w-])" if identifier
                       else rf"`{re.escape(name)}`|(?<![\w-]){re.escape(name)}\(")
            if re.search(pattern, text):
                gold.add(f"{slug(server)}__{name}")
    names = set().union(*(tools[s] for s in servers))
    for token in re.findall(r"(?<![\w-])([A-Za-z]+(?:[_-][A-Za-z0-9]+)+)(?![\w-])", text):
        if token not in names and any(n.startswith(token + "_") for n in names):
            unmatched.append(token)  # a shortened name: get_all_trending for ..._games
    return gold, unmatched


def build_tasks(mirror: Path, commit: str, out: Path) -> dict:
    """Write ``tasks.jsonl``; return the counts for the README."""
    catalogue = {json.loads(p.read_text())["_source"]["server"]: json.loads(p.read_text())
                 for p in sorted((out / "tools").glob("*.json"))}
    tools = {s: {t["name"] for t in c["tools"]} for s, c in catalogue.items()}
    rows, dropped, unmatched, from_dependency, partial = [], [], [], [], []
    for kind in TASK_FILES:
        data = json.loads(_git(mirror, "show",
                               f"{commit}:tasks/mcpbench_tasks_{kind}_runner_format.json"))
        for entry in data["server_tasks"]:
            for task in entry["tasks"]:
                gold, missed = _mentions(task["task_description"], entry["servers"], tools)
                more, also = _mentions(task.get("dependency_analysis") or "", entry["servers"],
                                       tools)
                unmatched += missed + also
                if more - gold:
                    (partial if gold else from_dependency).append(
                        f"{task['task_id']} ({len(gold)}/{len(gold | more)})")
                gold |= more
                if not gold:
                    dropped.append(task["task_id"])
                    continue
                rows.append({"id": task["task_id"], "query": task["fuzzy_description"].strip(),
                             "relevant": sorted(gold),
                             "servers": [slug(s) for s in entry["servers"]],
                             "combination_type": entry["combination_type"]})
    rows.sort(key=lambda r: r["id"])
    seen = Counter()
    for row in rows:
        row["split"] = "dev" if seen[row["combination_type"]] % 2 == 0 else "test"
        seen[row["combination_type"]] += 1
    with open(out / "tasks.jsonl", "w") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"catalogue": catalogue, "rows": rows, "dropped": dropped,
            "unmatched": Counter(unmatched), "from_dependency": from_dependency,
            "partial": partial}


def write_readme(out: Path, commit: str, stats: dict) -> None:
    """The data card, with the counts of this build."""
    rows, cat = stats["rows"], stats["catalogue"]
    sizes = Counter(len(r["relevant"]) for r in rows)
    n_tools = sum(len(c["tools"]) for c in cat.values())
    by = Counter((r["combination_type"], r["split"]) for r in rows)
    table = "\n".join(
        f"| {s} | `{slug(s)}` | {len(c['tools'])} | {c['_source']['extraction']} | "
        f"{c['_source']['licence']} |" for s, c in sorted(cat.items()))
    split_rows = "\n".join(
        f"| {k} | {by[(k, 'dev')]} | {by[(k, 'test')]} |"
        for k in ("single_server", "two_server_combinations", "three_server_combinations"))
    unmatched = ", ".join(f"`{m}` ×{n}" for m, n in stats["unmatched"].most_common()) or "none"
    size_text = ", ".join(f"{k}: {v}" for k, v in sorted(sizes.items()))
    text = f"""# mcp-bench retrieval tasks

Queries and gold tools over the real tool definitions of the 28 MCP servers of
[Accenture/mcp-bench](https://github.com/Accenture/mcp-bench) (Apache-2.0), commit
`{commit}`. Built by `python -m benchmarks.mcp_bench build --mirror <bare clone>`; read with
`benchmarks.mcp_bench.load_mcp_bench(split)`.

## Tools

`tools/<slug>.json` is each server's `tools/list` answer (`name`, `description`,
`inputSchema`, `annotations` as sent) with a `_source` record (repository, commit,
subdirectory, licence, extraction). The servers were started from mcp-bench's copies of their
sources (`mcp_servers/<dir>`), dependencies installed in a scratch directory, no real API key
(dummy values for `NCI_API_KEY`, `HF_TOKEN`, `NPS_API_KEY`, `NASA_API_KEY`,
`GOOGLE_MAPS_API_KEY`), and asked `tools/list` with the `mcp` Python SDK client (Google
Maps over streamable HTTP, as mcp-bench runs it; the rest over stdio). Exceptions:

- **OpenAPI Explorer** (static): its server fetches `https://openapisearch.com/` at each
  `tools/list` and appends that page to both tool descriptions; the two tool literals were
  read from `index.js` with that page left out.
- **NASA Data** runs under `mcp==1.6.0` (its `uv.lock`; newer SDKs reject its
  `FastMCP(description=...)`).
- **Metropolitan Museum** imports `mcpscout`, a usage tracker no longer on npm; a no-op
  stand-in was used (it only wraps the server; the tools are unchanged).

A second full build from the mirror into an empty scratch directory wrote byte-identical
tool files and tasks.

Licence is the server directory's LICENSE file, else its package metadata, else
mcp-bench's own Apache-2.0.

| server | slug | tools | extraction | licence |
|---|---|---:|---|---|
{table}

{len(cat)} servers, {n_tools} tools; {sum(bool(t.get("annotations")) for c in cat.values()
for t in c["tools"])} of them carry `annotations` (these servers declare no hints).

## Tasks

`tasks.jsonl`: one object per task, `id` (mcp-bench `task_id`), `query` (its
`fuzzy_description`, stripped: the paraphrase that names no tool), `relevant` (gold gateway
ids `<slug>__<tool>`), `servers` (slugs), `combination_type`, `split`.

Gold tools are the tools the task's `task_description` names that exist on the task's own
servers: `Server Name:tool_name` mentions, and bare names that look like identifiers
(containing `_` or `-` or an inner capital, e.g. `maps_geocode`, `getNetworks`) or are written
as calls or in backticks. Plain-word tool names (`search`, `mean`, `add`, `determinant`) count
only with their server prefix, since as bare words they are prose. When the description names
no tool, or steps in prose, the tools its `dependency_analysis` names are gold too: gold is
the union of both fields. The analysis alone gives the gold of
{len(stats['from_dependency'])} tasks, and adds tools to {len(stats['partial'])} more
(description/union: {', '.join(stats['partial'])}). A task with no gold tool is dropped
({len(stats['dropped'])}: {', '.join(stats['dropped']) or 'none'}).

Mentions (occurrences) matching no tool, left out of the gold sets:
{sum(stats['unmatched'].values())} ({unmatched}). These are `Server:name` mentions naming no
tool of that server (`Wikipedia:call` is prose, "Wikipedia: call ...") and identifiers that
shorten a tool's name
(`get_all_trending` for `get_all_trending_games`); only exact names count, so tasks that use
the shortened names (the Game Trends ones) have smaller gold sets than the steps they describe.
Tools named only in prose (osint_intelligence_000's "DNSTwist analysis", "Dig lookup") are not
mentions either.

Split: tasks sorted by id, alternately dev and test within each combination type.

| combination type | dev | test |
|---|---:|---:|
{split_rows}

{len(rows)} tasks kept (dev {sum(r['split'] == 'dev' for r in rows)}, test
{sum(r['split'] == 'test' for r in rows)}). Gold-set sizes (tools: tasks): {size_text};
median {sorted(len(r['relevant']) for r in rows)[len(rows) // 2]}.

Every query ranks over the whole catalogue of {n_tools} tools, not only its task's servers.
"""
    (out / "README.md").write_text(text)


def load_mcp_bench(split: str, *, root: Path | str = DATA):
    """The ``"dev"`` or ``"test"`` tasks over all 28 servers' tools (ids ``<slug>__<tool>``)."""
    from skriskrank import load_tools
    from skriskrank.datasets import ToolRetrievalDataset

    root = Path(root)
    servers = {p.stem: json.loads(p.read_text()) for p in sorted((root / "tools").glob("*.json"))}
    registry = load_tools({s: {"tools": [{**t, "name": f"{s}__{t['name']}"} for t in d["tools"]]}
                           for s, d in servers.items()}, scan=False)
    rows = [json.loads(line) for line in open(root / "tasks.jsonl")]
    rows = [r for r in rows if r["split"] == split]
    return ToolRetrievalDataset(name="mcp_bench", split=split, registry=registry,
                                queries=[r["query"] for r in rows],
                                relevant=[frozenset(r["relevant"]) for r in rows],
                                query_ids=[r["id"] for r in rows])


def main(argv=None) -> int:
    """Command line: ``build``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["build"])
    ap.add_argument("--mirror", type=Path, required=True, help="bare clone of mcp-bench")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--out", type=Path, default=DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/mcp-bench-build"))
    ap.add_argument("--no-harvest", action="store_true", help="keep the saved tools/*.json")
    args = ap.parse_args(argv)
    commit = _git(args.mirror, "rev-parse", args.commit).strip()
    if not args.no_harvest:
        harvest(args.mirror, commit, args.work, args.out / "tools")
    write_readme(args.out, commit, build_tasks(args.mirror, commit, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
