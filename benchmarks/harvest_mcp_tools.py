"""Harvest real MCP tools, with their authors' annotations, from public servers.

Every server named in ``benchmarks/data/mcp_harvest/packages.json`` (name, registry, version,
and where needed the command, arguments and dummy environment it starts with) is installed at
its pinned version into a scratch directory (``/tmp/mcp-harvest`` unless ``--work`` says
otherwise; never into the repository), started over stdio with the official ``mcp`` Python SDK
client, initialised, and asked ``tools/list`` (following ``nextCursor``). Each answer is saved
as ``<registry>__<package>.json``: ``{"tools": [...], "_source": {...}}``. The authors'
``annotations`` (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) are kept as the
servers sent them: they are the training signal for the risk auditor.

A package is skipped, with the reason recorded in ``harvest_log.json`` and the README, when its
licence is not a known permissive or weak-copyleft one (MIT, Apache-2.0, BSD, ISC, MPL-2.0,
...), when its repository is one reserved for the project's held-out evaluation, or when the
server does not answer within the time box (30 s by default; its whole process tree is killed).

    python -m benchmarks.harvest_mcp_tools --out benchmarks/data/mcp_harvest

``--only NAME`` re-harvests some packages and keeps the other results; ``--readme-only``
rewrites the README from the saved files. npm and uv (installed into the scratch directory
from PyPI when missing) are the only clients used; no API key is real, servers that need one
get the dummy values given in packages.json.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent / "data" / "mcp_harvest"
DEFAULT_WORK = Path("/tmp/mcp-harvest")

#: Repositories reserved for the project's held-out evaluation: never harvested.
RESERVED_REPOSITORIES = (
    "github/github-mcp-server",
    "containers/kubernetes-mcp-server",
    "microsoft/mcp",
    "grafana/mcp-grafana",
    "hashicorp/terraform-mcp-server",
    "mongodb-js/mongodb-mcp-server",
    "supabase-community/supabase-mcp",
    "microsoft/playwright-mcp",
    "getsentry/sentry-mcp",
    "sooperset/mcp-atlassian",
    "chromedevtools/chrome-devtools-mcp",
    "icip-cas/livemcpbench",
    "mcpverse",
)
#: Packages published from those repositories (checked even when the metadata has no repository).
RESERVED_PACKAGES = frozenset({
    "@playwright/mcp", "chrome-devtools-mcp", "mongodb-mcp-server",
    "@supabase/mcp-server-supabase", "@sentry/mcp-server", "mcp-atlassian",
    "kubernetes-mcp-server", "mcp-grafana", "terraform-mcp-server", "@azure/mcp",
    "github-mcp-server",
})

#: Licences (SPDX ids after normalisation) whose terms allow reusing the tool descriptions.
ALLOWED_LICENCES = frozenset({
    "MIT", "MIT-0", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "BSD", "ISC", "MPL-2.0",
    "0BSD", "Unlicense", "CC0-1.0", "Zlib", "Python-2.0", "PSF-2.0", "BlueOak-1.0.0",
})

#: Environment given to every server: no real credential, a home of its own in the scratch
#: directory (so no server reads the machine's own configuration), and no browser downloads.
BASE_ENV = {
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "dummy",
    "AWS_SECRET_ACCESS_KEY": "dummy",
    "PUPPETEER_SKIP_DOWNLOAD": "1",
    "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "1",
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
    "NO_COLOR": "1",
    "FASTMCP_SHOW_CLI_BANNER": "false",
    "DO_NOT_TRACK": "1",
}

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------
def slug(name: str) -> str:
    """``@scope/pkg`` -> ``scope__pkg``: a file-name-safe form of a package name."""
    return name.replace("@", "").replace("/", "__")


def out_name(registry: str, name: str) -> str:
    return f"{registry}__{slug(name)}.json"


def normalise_licence(raw) -> str | None:
    """The SPDX-like id of a licence string, dict or list from package metadata, or None."""
    if raw is None:
        return None
    if isinstance(raw, dict):
        raw = raw.get("type") or raw.get("name")
    if isinstance(raw, list):
        ids = [normalise_licence(r) for r in raw]
        ids = [i for i in ids if i]
        return " OR ".join(ids) if ids else None
    text = str(raw).strip()
    if not text or text.upper() in {"UNKNOWN", "UNLICENSED", "NONE", "SEE LICENSE IN LICENSE"}:
        return None
    low = text.lower()
    if len(text) > 120:  # a whole licence text pasted into the field
        for needle, ident in (
            ("permission is hereby granted, free of charge", "MIT"),
            ("apache license", "Apache-2.0"),
            ("redistribution and use in source and binary forms", "BSD"),
            ("mozilla public license", "MPL-2.0"),
        ):
            if needle in low:
                return ident
        return None
    table = (
        (r"^mit(\s+license)?$|osi approved :: mit license$", "MIT"),
        (r"^mit-0$", "MIT-0"),
        (r"apache(\s+software)?(\s+license)?[\s,-]*(version\s*)?2(\.0)?$|^apache-2\.0$|"
         r"apache software license$|^apache$", "Apache-2.0"),
        (r"^bsd-3-clause$|bsd 3-clause|^bsd-3$|new bsd", "BSD-3-Clause"),
        (r"^bsd-2-clause$|bsd 2-clause|simplified bsd", "BSD-2-Clause"),
        (r"^bsd( license)?$|osi approved :: bsd license$", "BSD"),
        (r"^isc( license)?( \(iscl\))?$", "ISC"),
        (r"^mpl[- ]?2(\.0)?$|mozilla public license 2\.0", "MPL-2.0"),
        (r"^0bsd$", "0BSD"),
        (r"^unlicense$|the unlicense", "Unlicense"),
        (r"^cc0", "CC0-1.0"),
    )
    for pattern, ident in table:
        if re.search(pattern, low):
            return ident
    return text


def licence_allowed(licence: str | None) -> bool:
    if not licence:
        return False
    parts = re.split(r"\s+(?:OR|or)\s+|/", licence.strip("() "))
    return any(p.strip("() ") in ALLOWED_LICENCES for p in parts)


def repository_url(raw) -> str | None:
    if raw is None:
        return None
    if isinstance(raw, dict):
        raw = raw.get("url")
    if not raw:
        return None
    url = str(raw).strip()
    url = re.sub(r"^git\+", "", url)
    url = re.sub(r"^git://", "https://", url)
    url = re.sub(r"^ssh://git@", "https://", url)
    url = re.sub(r"^git@github\.com:", "https://github.com/", url)
    url = re.sub(r"^github:", "https://github.com/", url)
    if re.match(r"^[\w.-]+/[\w.-]+$", url):
        url = "https://github.com/" + url
    return re.sub(r"\.git$", "", url)


def reserved(name: str, repo: str | None) -> str | None:
    """Why a package is reserved for the held-out evaluation, or None."""
    if name.lower() in RESERVED_PACKAGES:
        return f"reserved package {name}"
    low = (repo or "").lower().rstrip("/")
    for r in RESERVED_REPOSITORIES:
        if low.endswith("/" + r) or ("/" + r + "/") in low + "/" or (
                "/" not in r and r in low):
            return f"reserved repository {r}"
    return None


def run(cmd, *, timeout, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=cwd, stdin=subprocess.DEVNULL)


def tail(text: str, n: int = 300) -> str:
    text = " ".join((text or "").split())
    return text[-n:]


# --------------------------------------------------------------------------------------------
# Installing
# --------------------------------------------------------------------------------------------
def uv_binary(work: Path) -> str:
    found = shutil.which("uv")
    if found:
        return found
    tools = work / "tools"
    uv = tools / "bin" / "uv"
    if not uv.exists():
        run([sys.executable, "-m", "venv", str(tools)], timeout=120)
        run([str(tools / "bin" / "python"), "-m", "pip", "install", "-q", "uv"], timeout=600)
    return str(uv)


def install_env() -> dict:
    env = dict(os.environ)
    env.update({k: v for k, v in BASE_ENV.items() if k.startswith(("PUPPETEER", "PLAYWRIGHT"))})
    env["npm_config_audit"] = "false"
    env["npm_config_fund"] = "false"
    env["npm_config_update_notifier"] = "false"
    return env


def install_npm(pkg: dict, work: Path) -> dict:
    prefix = work / "npm" / slug(pkg["name"])
    spec = f"{pkg['name']}@{pkg['version']}"
    manifest = prefix / "node_modules" / pkg["name"] / "package.json"
    if not manifest.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        (prefix / "package.json").write_text('{"private": true}\n')
        cmd = ["npm", "install", "--prefix", str(prefix), "--no-save", "--loglevel=error",
               "--no-package-lock", spec]
        if pkg.get("ignore_scripts"):
            cmd.append("--ignore-scripts")
        proc = run(cmd, timeout=600, env=install_env())
        if proc.returncode != 0 or not manifest.exists():
            raise RuntimeError(f"npm install failed: {tail(proc.stderr)}")
    meta = json.loads(manifest.read_text())
    licence = meta.get("license") or meta.get("licenses")
    if isinstance(licence, str) and licence.upper().startswith("SEE LICENSE IN"):
        shipped = manifest.parent / licence.split()[-1]
        licence = shipped.read_text(errors="replace") if shipped.is_file() else None
    bins = meta.get("bin") or {}
    if isinstance(bins, str):
        bins = {meta["name"].split("/")[-1]: bins}
    return {
        "installed_version": meta.get("version"),
        "licence_raw": licence,
        "repository": repository_url(meta.get("repository")) or meta.get("homepage"),
        "bins": {k: str(prefix / "node_modules" / ".bin" / k) for k in bins},
        "bin_dir": str(prefix / "node_modules" / ".bin"),
    }


_PY_META = r"""
import json, sys
from importlib import metadata
d = metadata.distribution(sys.argv[1])
m = d.metadata
urls = {}
for v in m.get_all("Project-URL") or []:
    k, _, u = v.partition(",")
    urls[k.strip().lower()] = u.strip()
cls = [c for c in (m.get_all("Classifier") or []) if c.startswith("License ::")]
scripts = {e.name: e.value for e in d.entry_points if e.group == "console_scripts"}
print(json.dumps({"version": d.version, "license_expression": m.get("License-Expression"),
                  "license": m.get("License"), "classifiers": cls, "urls": urls,
                  "home": m.get("Home-page"), "scripts": scripts}))
"""


def find_python(version: str | None) -> str | None:
    """An interpreter for a package that needs a newer Python than the one running this."""
    if not version:
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for cand in sorted(pyenv.glob(f"{version}.*/bin/python{version}"), reverse=True):
        return str(cand)  # a pyenv build: its shim may not be switched on
    return shutil.which(f"python{version}")


def install_pypi(pkg: dict, work: Path) -> dict:
    venv = work / "pypi" / slug(pkg["name"])
    py = venv / "bin" / "python"
    uv = uv_binary(work)
    marker = venv / ".installed"
    if not marker.exists():
        if not py.exists():
            interpreter = find_python(pkg.get("python"))
            if interpreter is None:
                raise RuntimeError(f"no Python {pkg['python']} on this machine")
            proc = run([uv, "venv", "-q", "--python", interpreter, str(venv)], timeout=300)
            if proc.returncode != 0:
                raise RuntimeError(f"uv venv failed: {tail(proc.stderr)}")
        spec = f"{pkg['name']}=={pkg['version']}"
        proc = run([uv, "pip", "install", "-q", "--python", str(py), spec,
                    *pkg.get("extra_requirements", [])], timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"uv pip install failed: {tail(proc.stderr)}")
        marker.write_text(spec)
    proc = run([str(py), "-c", _PY_META, pkg["name"]], timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"metadata read failed: {tail(proc.stderr)}")
    meta = json.loads(proc.stdout)
    licence = meta["license_expression"] or meta["license"]
    if not normalise_licence(licence) or not licence_allowed(normalise_licence(licence)):
        from_cls = [c.split("::")[-1].strip() for c in meta["classifiers"]]
        if from_cls:
            licence = from_cls[0]
    urls = meta["urls"]
    repo = None
    for key in ("source", "repository", "source code", "code", "github", "homepage", "home"):
        if key in urls and "github.com" in urls[key] or key in urls and "gitlab" in urls[key]:
            repo = urls[key]
            break
    repo = repo or next((u for u in urls.values() if "github.com" in u), None)
    repo = repo or meta["home"] or next(iter(urls.values()), None)
    return {
        "installed_version": meta["version"],
        "licence_raw": licence,
        "repository": repository_url(repo),
        "bins": {k: str(venv / "bin" / k) for k in meta["scripts"]},
        "bin_dir": str(venv / "bin"),
    }


def install(pkg: dict, work: Path) -> dict:
    try:
        if pkg["registry"] == "npm":
            return install_npm(pkg, work)
        return install_pypi(pkg, work)
    except subprocess.TimeoutExpired:
        return {"error": "install timed out"}
    except Exception as exc:  # noqa: BLE001 - recorded as the reason the server was skipped
        return {"error": str(exc)}


def pick_command(pkg: dict, info: dict, work: Path) -> list[str] | None:
    """The command line that starts the server over stdio (``{work}`` is the scratch dir)."""
    args = [a.replace("{work}", str(work)) for a in pkg.get("args", [])]
    if pkg.get("command"):
        cmd = [a.replace("{work}", str(work)) for a in pkg["command"]]
        exe = Path(info["bin_dir"]) / cmd[0]
        if exe.exists():
            cmd[0] = str(exe)
        return cmd + args
    bins = info["bins"]
    if pkg.get("bin"):
        return [bins.get(pkg["bin"], str(Path(info["bin_dir"]) / pkg["bin"]))] + args
    if not bins:
        return None
    if len(bins) == 1:
        return [next(iter(bins.values()))] + args
    base = pkg["name"].split("/")[-1].lower()
    for key in sorted(bins, key=len):
        if key.lower() == base:
            return [bins[key]] + args
    for key in sorted(bins, key=len):
        if "mcp" in key.lower() or "server" in key.lower():
            return [bins[key]] + args
    return [bins[sorted(bins, key=len)[0]]] + args


# --------------------------------------------------------------------------------------------
# Probing one server (run in a child process so a hang can be killed with its whole tree)
# --------------------------------------------------------------------------------------------
async def _list_tools_raw(session, cursor, raw_result, types) -> dict:
    """One tools/list page as the server sent it.

    The SDK's ``send_request`` checks the result against the protocol schema and refuses a
    tool whose ``inputSchema`` lacks ``"type"`` (as some early servers sent); the raw request
    of its dispatcher keeps such tools, which are still real tools with real descriptions.
    """
    params = None if cursor is None else {"cursor": cursor}
    dispatcher = getattr(session, "_dispatcher", None)
    if dispatcher is not None and hasattr(dispatcher, "send_raw_request"):
        return dict(await dispatcher.send_raw_request("tools/list", params, {}))
    page = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
    return await session.send_request(types.ListToolsRequest(params=page), raw_result)


async def _probe(command: list[str], env: dict, cwd: str, errlog: str) -> dict:
    from typing import Any

    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.stdio import stdio_client
    from pydantic import TypeAdapter

    raw_result = TypeAdapter(dict[str, Any])  # the tools exactly as the server sent them
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
    with open(errlog, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools, cursor, seen = [], None, set()
                for _ in range(100):
                    result = await _list_tools_raw(session, cursor, raw_result, types)
                    tools.extend(result.get("tools") or [])
                    cursor = result.get("nextCursor")
                    if not cursor or cursor in seen:
                        break
                    seen.add(cursor)
                info = init.server_info
                return {
                    "tools": tools,
                    "server_info": {"name": info.name, "version": info.version},
                    "protocol_version": init.protocol_version,
                }


def probe_main(spec_json: str) -> None:
    spec = json.loads(spec_json)
    try:
        result = asyncio.run(_probe(spec["command"], spec["env"], spec["cwd"], spec["errlog"]))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        msg = repr(exc)
        if hasattr(exc, "exceptions"):  # an ExceptionGroup: report the leaves
            leaves, stack = [], [exc]
            while stack:
                e = stack.pop()
                stack.extend(getattr(e, "exceptions", []) or [])
                if not getattr(e, "exceptions", None):
                    leaves.append(repr(e))
            msg = "; ".join(leaves)
        result = {"error": msg[:600]}
    sys.stdout.write("\n@@RESULT@@" + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


def kill_tree(pid: int) -> None:
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency of the test tooling
        os.killpg(pid, 9)
        return
    try:
        parent = psutil.Process(pid)
        procs = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=5)


def probe(command: list[str], env: dict, cwd: Path, timeout: float, errlog: Path) -> dict:
    """Start the server, list its tools; on failure the error and the server's last words."""
    result = _probe_child(command, env, cwd, timeout, errlog)
    if "error" in result and errlog.exists():
        said = tail(errlog.read_text(errors="replace"), 240)
        if said:
            result["error"] += f" [server stderr: ...{said}]"
    return result


def _probe_child(command: list[str], env: dict, cwd: Path, timeout: float,
                 errlog: Path) -> dict:
    spec = json.dumps({"command": command, "env": env, "cwd": str(cwd), "errlog": str(errlog)})
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.harvest_mcp_tools", "--probe", spec],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        cwd=root, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid)
        proc.communicate()
        return {"error": f"no answer within {timeout:.0f} s (process tree killed)"}
    kill_tree(proc.pid)
    marker = out.rfind("@@RESULT@@")
    if marker < 0:
        return {"error": f"probe crashed: {tail(err)}"}
    return json.loads(out[marker + len("@@RESULT@@"):].strip())


# --------------------------------------------------------------------------------------------
# The harvest
# --------------------------------------------------------------------------------------------
def server_env(pkg: dict, work: Path) -> dict:
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(work / "tmpdir"),
    }
    (work / "tmpdir").mkdir(exist_ok=True)
    env.update(BASE_ENV)
    env.update({k: v.replace("{work}", str(work)) for k, v in pkg.get("env", {}).items()})
    return env


def prepare_work(work: Path) -> None:
    """The scratch directories the servers are pointed at: an empty folder and a git repo."""
    (work / "cwd").mkdir(parents=True, exist_ok=True)
    # A placeholder OAuth client file for servers that refuse to start without one.
    (work / "cwd" / "dummy-oauth.keys.json").write_text(json.dumps({"installed": {
        "client_id": "dummy.apps.googleusercontent.com", "client_secret": "dummy",
        "redirect_uris": ["http://localhost"]}}) + "\n")
    (work / "cwd" / "dummy-token.json").write_text(json.dumps({
        "access_token": "dummy", "refresh_token": "dummy", "token_type": "Bearer",
        "expiry_date": 4102444800000}) + "\n")
    # A dummy AWS profile: some AWS servers build clients for the "default" profile at start.
    aws = work / "home" / ".aws"
    aws.mkdir(parents=True, exist_ok=True)
    (aws / "config").write_text("[default]\nregion = us-east-1\n")
    (aws / "credentials").write_text(
        "[default]\naws_access_key_id = dummy\naws_secret_access_key = dummy\n")
    repo = work / "cwd" / "repo"
    if not (repo / ".git").exists():
        repo.mkdir(exist_ok=True)
        (repo / "README.md").write_text("A scratch repository for mcp-server-git.\n")
        git = ["git", "-C", str(repo), "-c", "user.name=harvest", "-c",
               "user.email=harvest@example.invalid"]
        run([*git, "init", "-q"], timeout=60)
        run([*git, "add", "README.md"], timeout=60)
        run([*git, "commit", "-q", "-m", "init"], timeout=60)


def harvest_one(pkg: dict, info: dict, out: Path, work: Path, timeout: float) -> dict:
    record = {"package": pkg["name"], "registry": pkg["registry"], "version": pkg["version"]}
    if "error" in info:
        return {**record, "status": "skipped",
                "reason": info["error"].replace(str(work), "{work}")}
    licence = normalise_licence(info["licence_raw"])
    repo = info["repository"]
    record.update({"licence": licence, "repository": repo})
    why = reserved(pkg["name"], repo)
    if why:
        return {**record, "status": "skipped", "reason": why}
    if not licence_allowed(licence):
        return {**record, "status": "skipped",
                "reason": f"licence not known to allow reuse: {licence or 'none given'}"}
    command = pick_command(pkg, info, work)
    if not command:
        return {**record, "status": "skipped", "reason": "the package has no executable"}
    cwd = work / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    env = server_env(pkg, work)
    (work / "logs").mkdir(exist_ok=True)
    errlog = work / "logs" / (out_name(pkg["registry"], pkg["name"])[:-5] + ".stderr")
    result = probe(command, env, cwd, timeout, errlog)
    if "error" in result:
        return {**record, "status": "failed",
                "reason": result["error"].replace(str(work), "{work}")}
    tools = result["tools"]
    if not tools:
        return {**record, "status": "failed", "reason": "tools/list returned no tools"}
    source = {
        "package": pkg["name"],
        "registry": pkg["registry"],
        "version": info["installed_version"] or pkg["version"],
        "licence": licence,
        "repository": repo,
        "server_info": result["server_info"],
        "protocol_version": result["protocol_version"],
        "command": [Path(command[0]).name, *(a.replace(str(work), "{work}") for a in command[1:])],
        "dummy_env": sorted(pkg.get("env", {})),
        "harvested_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    }
    path = out / out_name(pkg["registry"], pkg["name"])
    path.write_text(json.dumps({"tools": tools, "_source": source}, indent=1,
                               ensure_ascii=False) + "\n")
    return {**record, "status": "harvested", "tools": len(tools),
            "annotated": sum(1 for t in tools if annotated(t))}


def annotated(tool: dict) -> bool:
    ann = tool.get("annotations") or {}
    return any(ann.get(h) is not None for h in HINTS)


# --------------------------------------------------------------------------------------------
# The README
# --------------------------------------------------------------------------------------------
def write_readme(out: Path, log: list[dict]) -> None:
    rows, hint_counts = [], {h: {True: 0, False: 0} for h in HINTS}
    n_tools = n_ann = 0
    for path in sorted(out.glob("*__*.json")):
        data = json.loads(path.read_text())
        src, tools = data["_source"], data["tools"]
        ann = sum(1 for t in tools if annotated(t))
        for t in tools:
            for h in HINTS:
                v = (t.get("annotations") or {}).get(h)
                if isinstance(v, bool):
                    hint_counts[h][v] += 1
        n_tools += len(tools)
        n_ann += ann
        rows.append((src, len(tools), ann))
    rows.sort(key=lambda r: (r[0]["registry"], r[0]["package"].lower()))
    skipped = [r for r in log if r["status"] != "harvested"]
    lines = [
        "# Real MCP tools with their authors' annotations",
        "",
        "Harvested by `python -m benchmarks.harvest_mcp_tools --out benchmarks/data/mcp_harvest`"
        " from the pinned list `packages.json`: each server was installed at that version into a"
        " scratch directory, started over stdio with the official `mcp` Python SDK client, and"
        " asked `tools/list` (all pages). No real credential was used: servers that refuse to"
        " start without one were given dummy values (listed under `_source.dummy_env`), and a"
        " server's tool list can depend on them.",
        "",
        "Each `<registry>__<package>.json` holds the server's answer (`{\"tools\": [...]}`, the"
        " `Tool` objects exactly as the server sent them, so a tool that the SDK's schema check"
        " would refuse, or a non-standard field, is kept) and a `_source` object (package,"
        " registry, version, licence, repository, server_info, protocol_version, the command"
        " that started it, the names of the dummy variables it was given, harvested_at)."
        " `repository` is the package's repository field, or its homepage when it has none."
        " `harvest_log.json` records every package tried, and why the others were skipped.",
        "",
        "Only the packages themselves are pinned: their dependencies are resolved at install"
        " time, and a server's tool list can depend on its configuration (several list more"
        " tools when write access or a token is given), so a re-run may differ slightly."
        " Python servers run on the interpreter that runs the script unless packages.json"
        " asks for a newer one (`python`), and the few written for the 1.x `mcp` SDK are"
        " installed with `mcp<2` (`extra_requirements`).",
        "",
        "Only packages whose metadata gives a permissive or weak-copyleft licence (MIT,"
        " Apache-2.0, BSD, ISC, MPL-2.0, ...) are kept. Packages from the repositories reserved"
        " for the project's held-out evaluation (github/github-mcp-server,"
        " containers/kubernetes-mcp-server, microsoft/mcp, grafana/mcp-grafana,"
        " hashicorp/terraform-mcp-server, mongodb-js/mongodb-mcp-server,"
        " supabase-community/supabase-mcp, microsoft/playwright-mcp, getsentry/sentry-mcp,"
        " sooperset/mcp-atlassian, ChromeDevTools/chrome-devtools-mcp, LiveMCPBench, MCPVerse)"
        " are never harvested.",
        "",
        "Annotations are the authors' own claims: the MCP specification calls them hints that a"
        " client must not trust from an untrusted server, and they are often left out (a missing"
        " `readOnlyHint` means false, a missing `destructiveHint` means true, by the spec's"
        " defaults). The counts below are of hints actually present.",
        "",
        "## Totals",
        "",
        f"- packages tried: {len(log)}; servers harvested: {len(rows)};"
        f" skipped or failed: {len(skipped)}",
        f"- tools: {n_tools}; tools with at least one of the four hints: {n_ann}",
        "",
        "| hint | true | false |",
        "| --- | ---: | ---: |",
    ]
    for h in HINTS:
        lines.append(f"| {h} | {hint_counts[h][True]} | {hint_counts[h][False]} |")
    lines += [
        "",
        "## Sources",
        "",
        "| package | registry | version | licence | repository | tools | annotated |",
        "| --- | --- | --- | --- | --- | ---: | ---: |",
    ]
    for src, n, ann in rows:
        lines.append(f"| `{src['package']}` | {src['registry']} | {src['version']} |"
                     f" {src['licence']} | {src['repository'] or ''} | {n} | {ann} |")
    lines += ["", "## Skipped or failed", "",
              "| package | registry | version | reason |", "| --- | --- | --- | --- |"]
    for r in sorted(skipped, key=lambda r: (r["registry"], r["package"].lower())):
        reason = str(r.get("reason", "")).replace("|", "/").replace("\n", " ")[:220]
        lines.append(f"| `{r['package']}` | {r['registry']} | {r['version']} | {reason} |")
    (out / "README.md").write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--packages", type=Path, default=None,
                    help="the pinned list (default: OUT/packages.json)")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="scratch directory")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per server")
    ap.add_argument("--jobs", type=int, default=4, help="parallel installs")
    ap.add_argument("--only", nargs="*", default=None, help="package names to (re)harvest")
    ap.add_argument("--readme-only", action="store_true")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe:
        probe_main(args.probe)
        return 0

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "harvest_log.json"
    old_log = json.loads(log_path.read_text()) if log_path.exists() else []
    if args.readme_only:
        write_readme(out, old_log)
        return 0
    packages = json.loads((args.packages or out / "packages.json").read_text())
    if args.only:
        packages = [p for p in packages if p["name"] in set(args.only)]
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    prepare_work(work)
    if any(p["registry"] == "pypi" for p in packages):
        uv_binary(work)

    log = {(r["registry"], r["package"]): r for r in old_log}
    if args.only is None:
        log = {}
    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [(p, pool.submit(install, p, work)) for p in packages]
        for i, (pkg, fut) in enumerate(futures, 1):
            info = fut.result()
            target = out / out_name(pkg["registry"], pkg["name"])
            if target.exists():
                target.unlink()
            rec = harvest_one(pkg, info, out, work, args.timeout)
            log[(pkg["registry"], pkg["name"])] = rec
            extra = (f"{rec['tools']} tools, {rec['annotated']} annotated"
                     if rec["status"] == "harvested" else rec.get("reason", ""))
            print(f"[{i}/{len(packages)} {time.time() - started:5.0f}s] {pkg['registry']}"
                  f" {pkg['name']}@{pkg['version']}: {rec['status']} {extra}"[:300], flush=True)
    records = sorted(log.values(), key=lambda r: (r["registry"], r["package"].lower()))
    log_path.write_text(json.dumps(records, indent=1) + "\n")
    write_readme(out, records)
    done = [r for r in records if r["status"] == "harvested"]
    print(f"harvested {len(done)}/{len(records)} servers, "
          f"{sum(r['tools'] for r in done)} tools, "
          f"{sum(r['annotated'] for r in done)} annotated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
