"""``skriskrank gateway`` end to end, in front of real MCP servers.

The gateway runs as a subprocess, started as an MCP host starts it, and is driven with the
official SDK's client. Behind it: the reference filesystem and memory servers (npm) and
mcp-server-time and mcp-server-git (PyPI), at the pinned versions `.ci/install-mcp-servers`
installs, on temporary directories and repositories; and `tests/_mcp_test_server.py`, a
server of the same SDK that announces a new tool, hangs, and lists a malformed tool.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

anyio = pytest.importorskip("anyio")
import mcp.types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SERVERS = Path(os.environ.get("SKRISKRANK_MCP_SERVERS", ROOT / ".mcp-servers"))
BINARIES = {"filesystem": "node_modules/.bin/mcp-server-filesystem",
            "memory": "node_modules/.bin/mcp-server-memory",
            "time": "pyenv/bin/mcp-server-time", "git": "pyenv/bin/mcp-server-git"}
ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
       "PYTHONPATH": str(ROOT), **{k: os.environ[k] for k in ("HF_HOME", "NUMBA_CACHE_DIR",
                                                              "OMP_NUM_THREADS")
                                   if k in os.environ}}
TIMEOUT = 180


@pytest.fixture(scope="module")
def servers():
    missing = [b for b in BINARIES.values() if not (SERVERS / b).exists()]
    if missing:
        pytest.fail(f"the real MCP servers are not installed in {SERVERS} ({missing}): run "
                    ".ci/install-mcp-servers")
    return {name: str(SERVERS / b) for name, b in BINARIES.items()}


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


@pytest.fixture
def world(servers, tmp_path):
    """Temporary directories, a repository with a staged file, and the host configuration."""
    root, repo = tmp_path / "files", tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("the notes\n")
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    (repo / "draft.txt").write_text("draft\n")
    _git(repo, "add", "draft.txt")
    config = {"mcpServers": {
        "filesystem": {"command": servers["filesystem"], "args": [str(root)]},
        "memory": {"command": servers["memory"],
                   "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}},
        "time": {"command": servers["time"], "args": ["--local-timezone", "UTC"]},
        "git": {"command": servers["git"], "args": ["--repository", str(repo)]},
        "test": {"command": sys.executable, "args": [str(ROOT / "tests/_mcp_test_server.py")]},
    }}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    return {"config": path, "root": root, "repo": repo, "tmp": tmp_path, "servers": config}


def _children(pid):
    pids = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as fh:
            pids |= {int(p) for p in fh.read().split()}
    return pids


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@asynccontextmanager
async def gateway(world, *args, elicit=None, errlog=None):
    """A session with the gateway; yields ``(session, gateway_pid)``."""
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "skriskrank", "gateway", str(world["config"]), *args], env=ENV, cwd=str(ROOT))
    before = _children(os.getpid())
    with tempfile.TemporaryFile("w+") as own, anyio.fail_after(TIMEOUT):
        async with stdio_client(params, errlog=errlog or own) as (read, write):
            (pid,) = _children(os.getpid()) - before
            async with ClientSession(read, write, elicitation_callback=elicit) as session:
                await session.initialize()
                yield session, pid


async def _search(session, query, k=5):
    res = await session.call_tool("search_tools", {"query": query, "k": k})
    assert not res.is_error, res.content[0].text
    return res.structured_content["tools"]


async def _call(session, name, arguments):
    return await session.call_tool("call_tool", {"name": name, "arguments": arguments})


async def _direct(spec, name, arguments):
    params = StdioServerParameters(command=spec["command"], args=spec.get("args", []),
                                   env=spec.get("env"))
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool(name, arguments)


def test_search_then_call_returns_what_the_server_returns(world):
    async def scenario():
        async with gateway(world) as (session, _):
            tools = await session.list_tools()
            found = await _search(session, "read the text of the file notes.txt")
            res = await _call(session, "read_text_file", {"path": str(world["root"] /
                                                                     "notes.txt")})
            now = await _call(session, "convert_time", {
                "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
        direct = await _direct(world["servers"]["mcpServers"]["filesystem"], "read_text_file",
                               {"path": str(world["root"] / "notes.txt")})
        return tools, found, res, now, direct

    tools, found, res, now, direct = anyio.run(scenario)
    assert [t.name for t in tools.tools] == ["search_tools", "call_tool"]
    top = {t["name"]: t for t in found}
    assert "read_text_file" in top
    row = top["read_text_file"]
    assert row["server"] == "filesystem" and row["inputSchema"]["required"] == ["path"]
    assert row["risk_level"] in (1, 2) and row["reason"] == "accepted"
    # Passed through unchanged: content, structured content, the error flag.
    assert res.model_dump(exclude={"meta"}) == direct.model_dump(exclude={"meta"})
    assert not now.is_error and now.structured_content["target"]["timezone"] == "Asia/Tokyo"


def _staged(repo):
    return subprocess.run(["git", "-C", str(repo), "diff", "--cached", "--name-only"],
                          capture_output=True, text=True, check=True).stdout.split()


def test_a_risky_call_no_search_returned_is_refused_until_a_search_needs_it(world):
    target = world["root"] / "new.txt"
    repo = world["repo"]

    async def scenario():
        async with gateway(world) as (session, _):
            refused = [await _call(session, "write_file", {"path": str(target),
                                                           "content": "x"}),
                       await _call(session, "git_reset", {"repo_path": str(repo)})]
            unchanged = (target.exists(), _staged(repo))
            await _search(session, "write the text x into a new file new.txt")
            await _search(session, "unstage every staged change of the git repository")
            ran = [await _call(session, "write_file", {"path": str(target), "content": "x"}),
                   await _call(session, "git_reset", {"repo_path": str(repo)})]
            return refused, unchanged, ran

    refused, unchanged, ran = anyio.run(scenario)
    for res in refused:
        assert res.is_error and "call search_tools with your task first" in res.content[0].text
    assert unchanged == (False, ["draft.txt"])
    assert not any(res.is_error for res in ran), [r.content[0].text for r in ran]
    assert target.read_text() == "x" and _staged(repo) == []


def test_need_threshold_sets_which_risky_tools_a_search_can_unlock(world):
    # At the default 0.5 this search shows write_file (the test above); at 1 no tool of level
    # >= 3 is admitted on need, so the search does not show it and its call stays refused.
    target = world["root"] / "new.txt"

    async def scenario():
        async with gateway(world, "--need-threshold", "1") as (session, _):
            found = await _search(session, "write the text x into a new file new.txt")
            res = await _call(session, "write_file", {"path": str(target), "content": "x"})
            return found, res

    found, res = anyio.run(scenario)
    assert "write_file" not in {t["name"] for t in found}
    assert all(t["risk_level"] < 3 for t in found if t["reason"] == "accepted")
    assert res.is_error and "call search_tools with your task first" in res.content[0].text
    assert not target.exists()


def test_confirm_runs_an_accepted_call_and_not_a_declined_one(world):
    labels = world["tmp"] / "labels.json"
    labels.write_text(json.dumps({"write_file": 4}))
    answers, asked = ["accept", "decline", "decline"], []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=answers.pop(0))

    async def scenario():
        async with gateway(world, "--confirm", "--labels", str(labels), elicit=elicit) as (s, _):
            await _search(s, "write a file")
            accepted = await _call(s, "write_file", {"path": str(world["root"] / "a.txt"),
                                                     "content": "a"})
            declined = await _call(s, "write_file", {"path": str(world["root"] / "b.txt"),
                                                     "content": "b"})
            # A search as long as the catalogue lists the poisoned look-alike too; the user
            # asked to confirm its call is told it is flagged.
            await _search(s, "Read the complete contents of a file as text", k=50)
            flagged = await _call(s, "read_fi1e", {"text": "x"})
        async with gateway(world, "--confirm", "--labels", str(labels)) as (s, _):
            await _search(s, "write a file")
            cannot = await _call(s, "write_file", {"path": str(world["root"] / "c.txt"),
                                                   "content": "c"})
        return accepted, declined, flagged, cannot

    accepted, declined, flagged, cannot = anyio.run(scenario)
    assert not accepted.is_error and (world["root"] / "a.txt").read_text() == "a"
    assert declined.is_error and "the user did not confirm write_file (decline)" in \
        declined.content[0].text
    assert not (world["root"] / "b.txt").exists()
    assert len(asked) == 3 and "write_file" in asked[0] and "risk level 4" in asked[0]
    assert "Beware" not in asked[0]  # write_file is not flagged
    assert "flagged injection and shadowing (possible tool poisoning)" in asked[2]
    assert flagged.is_error and "did not confirm read_fi1e" in flagged.content[0].text
    assert cannot.is_error and "does not support elicitation" in cannot.content[0].text
    assert not (world["root"] / "c.txt").exists()


def test_a_killed_server_gives_a_clear_error_then_serves_again(world):
    async def scenario():
        async with gateway(world) as (session, pid):
            await _search(session, "record that Alice likes tea in the knowledge graph")
            ok = await _call(session, "read_graph", {})
            (memory,) = [p for p in _children(pid)
                         if "mcp-server-memory" in Path(f"/proc/{p}/cmdline").read_text()]
            os.kill(memory, signal.SIGKILL)
            lost = await _call(session, "read_graph", {})
            back = None
            with anyio.fail_after(30):
                while back is None or back.is_error:
                    await anyio.sleep(0.5)
                    back = await _call(session, "read_graph", {})
            return ok, lost, back

    ok, lost, back = anyio.run(scenario)
    assert not ok.is_error
    text = lost.content[0].text
    assert lost.is_error and "server 'memory'" in text and "try again" in text
    assert not back.is_error


def test_a_server_that_cannot_start_leaves_the_others_serving(world, capsys):
    config = json.loads(world["config"].read_text())
    config["mcpServers"]["broken"] = {"command": str(world["tmp"] / "no-such-server")}
    # The reference filesystem server exits when none of its directories exists, and says
    # so on its stderr only.
    config["mcpServers"]["nodir"] = {**config["mcpServers"]["filesystem"],
                                     "args": [str(world["tmp"] / "no-such-dir")]}
    world["config"].write_text(json.dumps(config))

    async def scenario(errlog):
        async with gateway(world, errlog=errlog) as (session, _):
            return await _search(session, "what time is it in Tokyo")

    with tempfile.TemporaryFile("w+") as errlog:
        assert any(t["server"] == "time" for t in anyio.run(scenario, errlog))
        errlog.seek(0)
        served = errlog.read()
    # Serving, the servers' stderr is the gateway's log, each line after its server's name.
    assert "[filesystem] Secure MCP Filesystem Server running on stdio" in served, served
    assert "[nodir] Error: None of the specified directories are accessible" in served, served
    proc = subprocess.run([sys.executable, "-m", "skriskrank", "gateway",
                           str(world["config"]), "--check"], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=TIMEOUT, cwd=ROOT)
    assert proc.returncode == 1
    rows = proc.stdout.splitlines()
    lines = dict(line.split(None, 1) for line in rows if not line.startswith(" "))
    assert lines["broken"].startswith("failed") and "command not found" in lines["broken"]
    for name in ("filesystem", "memory", "time", "git", "test"):
        assert lines[name].startswith("ready"), proc.stdout
    # A failed server's last stderr lines are printed under it, and only there: a check
    # does not echo the servers' stderr.
    assert lines["nodir"].startswith("failed"), proc.stdout
    below = rows[rows.index(next(r for r in rows if r.startswith("nodir"))) + 1:]
    assert below[0].split("| ", 1)[1].startswith("Warning: Cannot access directory"), rows
    assert below[1].endswith("| Error: None of the specified directories are accessible"), rows
    assert "Secure MCP Filesystem Server" not in proc.stderr, proc.stderr


def test_no_child_of_the_gateway_outlives_it(world):
    seen = {}

    async def scenario():
        async with gateway(world) as (session, pid):
            await _search(session, "list the files")
            seen["gateway"], seen["children"] = pid, _children(pid)

    anyio.run(scenario)
    assert len(seen["children"]) == 5  # one process per server
    deadline = time.monotonic() + 10
    while any(map(_alive, seen["children"] | {seen["gateway"]})) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(_alive, seen["children"] | {seen["gateway"]}))


def test_list_changed_reindexes_malformed_tools_are_skipped_and_calls_time_out(world):
    labels = world["tmp"] / "labels.json"
    labels.write_text(json.dumps({"register_tool": 1, "wait_forever": 1}))
    errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read after the session

    async def scenario():
        async with gateway(world, "--labels", str(labels), "--call-timeout", "2",
                           errlog=errlog) as (session, _):
            before = await _search(session, "translate this text into Klingon", k=3)
            await _call(session, "register_tool", {})
            after = []
            with anyio.fail_after(60):
                while "translate_to_klingon" not in [t["name"] for t in after]:
                    await anyio.sleep(0.5)
                    after = await _search(session, "translate this text into Klingon", k=3)
            t0 = time.monotonic()
            hung = await _call(session, "wait_forever", {})
            return before, after, hung, time.monotonic() - t0

    before, after, hung, seconds = anyio.run(scenario)
    assert "translate_to_klingon" not in [t["name"] for t in before]
    assert after[0]["name"] == "translate_to_klingon" and after[0]["server"] == "test"
    assert hung.is_error and "took longer than 2 s and was cancelled" in hung.content[0].text
    assert seconds < 10
    errlog.seek(0)
    with errlog:
        assert "server 'test': tool 'bad name' skipped" in errlog.read()


def test_a_server_that_announces_changes_without_end_does_not_keep_the_gateway_busy(world):
    # 100 announcements over 5 s: each rebuild (about 0.1-0.5 s here) would start the next;
    # the gateway pauses at least 1 s between them, and the last one lists every tool.
    test = world["servers"]["mcpServers"]["test"]
    config = world["tmp"] / "announce.json"
    config.write_text(json.dumps({"mcpServers": {"test": {
        **test, "args": [*test["args"], "--announce"]}}}))
    labels = world["tmp"] / "labels.json"
    labels.write_text(json.dumps({"announce_changes": 1}))
    errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read after the session

    async def scenario():
        async with gateway({**world, "config": config}, "--labels", str(labels),
                           errlog=errlog) as (session, _):
            await _search(session, "add a note")
            t0 = time.monotonic()
            res = await _call(session, "announce_changes", {})
            with anyio.fail_after(60):
                while "note_99" not in [t["name"] for t in await _search(
                        session, "keep note number 99", k=50)]:
                    await anyio.sleep(0.5)
            return res, time.monotonic() - t0

    res, seconds = anyio.run(scenario)
    assert not res.is_error
    errlog.seek(0)
    with errlog:
        rebuilds = [line for line in errlog if "skriskrank gateway: catalogue:" in line]
    # The first catalogue, then at most one rebuild per second while the changes came.
    assert 2 <= len(rebuilds) <= 2 + seconds, (len(rebuilds), seconds)


def test_policy_deny_read_only_and_the_log(world):
    log = world["tmp"] / "gateway.jsonl"

    async def scenario():
        async with gateway(world, "--read-only", "--deny", "git_*", "--log", str(log)) as (s, _):
            await _search(s, "write a file, and show the git status")
            return (await _call(s, "write_file", {"path": str(world["root"] / "x"),
                                                  "content": "secret"}),
                    await _call(s, "git_status", {"repo_path": str(world["repo"])}),
                    await _call(s, "get_current_time", {"timezone": "UTC"}))

    write, status, now = anyio.run(scenario)
    assert write.is_error and "runs read-only" in write.content[0].text
    assert status.is_error and "matches --deny 'git_*'" in status.content[0].text
    assert not now.is_error
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["search", "call", "call", "call"]
    assert events[0]["query"] == "write a file, and show the git status" and events[0]["tools"]
    assert [e["decision"] for e in events[1:]] == ["refused", "refused", "allowed"]
    assert "secret" not in log.read_text()  # argument values stay out by default


def test_a_hosts_excluded_tools_are_neither_listed_nor_run(world):
    # Gemini CLI's includeTools / excludeTools, and a token from the environment: the host's
    # own file, pointed at as it is.
    config = json.loads(world["config"].read_text())
    config["mcpServers"]["filesystem"]["excludeTools"] = ["write_file", "edit_file"]
    config["mcpServers"]["time"].update(includeTools=["get_current_time"], trust=True)
    config["mcpServers"]["time"]["env"] = {"TZ": "${SKRISKRANK_TEST_TZ:-UTC}"}
    world["config"].write_text(json.dumps(config))

    async def scenario():
        async with gateway(world) as (session, _):
            found = await _search(session, "write a new file, edit a file, convert time", k=20)
            write = await _call(session, "write_file", {"path": str(world["root"] / "x"),
                                                        "content": "x"})
            convert = await _call(session, "convert_time", {
                "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
            read = await _call(session, "read_text_file", {"path": str(world["root"] /
                                                                       "notes.txt")})
            return [t["name"] for t in found], write, convert, read

    names, write, convert, read = anyio.run(scenario)
    assert not {"write_file", "edit_file", "convert_time"} & set(names)
    assert "get_current_time" in names
    for res, name in ((write, "write_file"), (convert, "convert_time")):
        assert res.is_error and f"unknown tool {name!r}" in res.content[0].text
    assert not (world["root"] / "x").exists()
    assert not read.is_error and "the notes" in read.content[0].text


def test_a_tool_longer_than_the_bound_is_skipped_with_a_warning(caplog):
    from skriskrank.gateway._catalogue import MAX_TOOL_CHARS, _checked

    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    # The longest harvested real tool (35,831 characters) is well inside the bound.
    fine = types.Tool(name="fine", description="Read a file. " * 2_700, inputSchema=schema)
    big = types.Tool(name="big", description="x" * MAX_TOOL_CHARS, inputSchema=schema)
    assert _checked("srv", fine) is not None
    assert _checked("srv", big) is None
    assert "server 'srv': tool 'big' skipped: its definition is 262," in caplog.text


def test_expose_lists_the_last_searchs_tools_and_calls_them_directly(world):
    async def scenario():
        async with gateway(world, "--expose") as (session, _):
            await _search(session, "what time is it in Tokyo", k=2)
            names = [t.name for t in (await session.list_tools()).tools]
            res = await session.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
            return names, res

    names, res = anyio.run(scenario)
    assert names[:2] == ["search_tools", "call_tool"] and "get_current_time" in names[2:]
    assert not res.is_error and res.structured_content["timezone"] == "Asia/Tokyo"


def test_http_transport_on_loopback(world):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "skriskrank", "gateway",
                             str(world["config"]), "--http", f"127.0.0.1:{port}"],
                            env={**os.environ, **ENV}, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)

    async def scenario():
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        with anyio.fail_after(TIMEOUT):
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    await anyio.sleep(0.3)
            async with httpx2.AsyncClient(timeout=60) as http, streamable_http_client(
                    f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write, *_), \
                    ClientSession(read, write) as session:
                await session.initialize()
                found = await _search(session, "what time is it in Tokyo")
                res = await _call(session, "get_current_time", {"timezone": "Asia/Tokyo"})
                return found, res

    try:
        found, res = anyio.run(scenario)
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert any(t["name"] == "get_current_time" for t in found)
    assert not res.is_error
    assert out == b""


@pytest.mark.parametrize("content, fragment", [
    (None, "Configuration file not found"),
    ("{not json", "not valid JSON"),
    ('{"mcpServers": {"x": {"args": []}}}', "server 'x' needs either a command (stdio) or a "
     "url (HTTP), not neither"),
    ('{"mcpServers": {"x": {"command": "a", "url": "http://b"}}}', "not both"),
    ('{"mcpServers": {}}', "at least one server"),
    ('{"mcpServers": {"x": {"command": "a", "comand": "b"}}}', "unknown key(s) 'comand'"),
])
def test_bad_configuration_is_one_line_and_exit_2(tmp_path, capsys, content, fragment):
    from skriskrank._cli import main

    path = tmp_path / "mcp.json"
    if content is not None:
        path.write_text(content)
    assert main(["gateway", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("skriskrank gateway: error: ")
    assert fragment in err[0], err


def test_an_unknown_option_is_one_line_and_exit_2(tmp_path, capsys):
    from skriskrank._cli import main

    assert main(["gateway", str(tmp_path / "mcp.json"), "--no-such-option"]) == 2
    assert main(["gateway", str(tmp_path / "mcp.json"), "--http", "0.0.0.0:8000"]) == 2
    assert main(["gateway", str(tmp_path / "mcp.json"), "--need-threshold", "1.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "unrecognized arguments: --no-such-option" in err[0]
    assert "loopback" in err[1]
    assert "argument --need-threshold: expected a probability from 0 to 1, got '1.5'" in err[2]


def test_a_server_cannot_take_the_name_the_gateway_gives_another_servers_tool(world):
    # Two filesystem servers share every name, so the gateway calls their tools
    # filesystem__read_text_file and files__read_text_file; a server listed before them names
    # its own tool filesystem__read_text_file, to receive the calls meant for the real one.
    servers = world["servers"]["mcpServers"]
    config = world["tmp"] / "squat.json"
    config.write_text(json.dumps({"mcpServers": {
        "test": {**servers["test"], "args": [*servers["test"]["args"], "--squat",
                                             "filesystem__read_text_file"]},
        "filesystem": servers["filesystem"], "files": servers["filesystem"]}}))
    review = world["tmp"] / "review.json"
    proc = subprocess.run([sys.executable, "-m", "skriskrank", "gateway", str(config),
                           "--audit", str(review)], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=TIMEOUT, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(review.read_text())
    assert {name: (rows[name]["server"], rows[name]["tool"]) for name in (
        "filesystem__read_text_file", "files__read_text_file",
        "test__filesystem__read_text_file")} == {
        "filesystem__read_text_file": ("filesystem", "read_text_file"),
        "files__read_text_file": ("files", "read_text_file"),
        "test__filesystem__read_text_file": ("test", "filesystem__read_text_file")}

    # The two copies of one server flag each other as look-alikes (level 4), so the call
    # needs a search that returned the tool: this one returns them all.
    assert "shadowing" in rows["filesystem__read_text_file"]["flags"]

    async def scenario():
        async with gateway({**world, "config": config}) as (session, _):
            await _search(session, "read the text of the file notes.txt", k=50)
            return await _call(session, "filesystem__read_text_file",
                               {"path": str(world["root"] / "notes.txt")})

    res = anyio.run(scenario)
    assert not res.is_error and res.content[0].text == "the notes\n"


def test_a_servers_pattern_cannot_hang_the_gateway(world):
    # Python's re would backtrack about 2**40 times to reject this code: the gateway would stop
    # answering anyone. Its check refuses it at once, and the gateway goes on serving.
    test = world["servers"]["mcpServers"]["test"]
    config = world["tmp"] / "pattern.json"
    config.write_text(json.dumps({"mcpServers": {"test": {
        **test, "args": [*test["args"], "--pattern", "^(a+)+$"]}}}))

    async def scenario():
        async with gateway({**world, "config": config}) as (session, _):
            await _search(session, "look up the product with code aaa", k=50)
            return [await _call(session, "lookup_code", {"code": code})
                    for code in ("a" * 40 + "!", "aaa")]

    refused, found = anyio.run(scenario)
    assert refused.is_error and "code: fails 'pattern'" in refused.content[0].text
    assert not found.is_error and found.content[0].text == "found aaa"


def test_a_tool_that_changes_while_the_gateway_runs_is_refused_without_a_review(world):
    # Trust on first use: with no review file, the first definition the gateway listed is
    # the one that may run; the same name with other words is flagged and refused.
    test = world["servers"]["mcpServers"]["test"]
    config = world["tmp"] / "rug.json"
    config.write_text(json.dumps({"mcpServers": {"test": {
        **test, "args": [*test["args"], "--rug-pull"]}}}))
    labels = world["tmp"] / "levels.json"  # a level without a SHA-256 is not a review
    labels.write_text(json.dumps({"format_date": 1}))

    async def scenario():
        async with gateway({**world, "config": config}, "--labels", str(labels)) as (session, _):
            first = later = await _call(session, "format_date", {"text": "7 Dec"})
            with anyio.fail_after(60):  # until the rebuild after the announcement
                while not later.is_error:
                    await anyio.sleep(0.5)
                    later = await _call(session, "format_date", {"text": "7 Dec"})
            return first, later

    first, later = anyio.run(scenario)
    assert not first.is_error and first.content[0].text == "2026-12-07"
    assert "changed since the gateway first listed it" in later.content[0].text


def test_a_servers_question_to_the_user_is_asked_through_the_agents_client(world):
    test = world["servers"]["mcpServers"]["test"]
    config = world["tmp"] / "ask.json"
    config.write_text(json.dumps({"mcpServers": {"test": {
        **test, "args": [*test["args"], "--ask"]}}}))
    log, asked = world["tmp"] / "ask.jsonl", []

    async def answer(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def scenario(elicit):
        async with gateway({**world, "config": config}, "--log", str(log),
                           elicit=elicit) as (session, _):
            await _search(session, "ask the user for their name")
            return (await _call(session, "ask_user_name", {})).content[0].text

    # The server asks; the gateway asks the user through the client whose call is in flight,
    # naming the server. A client that cannot ask gets the server a decline.
    assert anyio.run(scenario, answer) == "accept: Ada"
    assert asked == ["The test server asks: What is your name?"]
    assert anyio.run(scenario, None) == "decline: "
    elicits = [e for e in map(json.loads, log.read_text().splitlines())
               if e["event"] == "elicit"]
    assert elicits and elicits[0]["server"] == "test" and elicits[0]["action"] == "accept"
    assert "Ada" not in log.read_text()


def test_a_review_file_round_trips_and_a_changed_tool_is_refused(world):
    review = world["tmp"] / "review.json"
    proc = subprocess.run([sys.executable, "-m", "skriskrank", "gateway", str(world["config"]),
                           "--audit", str(review)], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=TIMEOUT, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.startswith(f"wrote {review}: ")
    rows = json.loads(review.read_text())
    row = rows["get_current_time"]
    assert row["server"] == "time" and len(row["sha256"]) == 64 and row["risk_level"] in (1, 2)
    # A person reviews once: here get_current_time is raised to level 5, and the definition
    # of convert_time no longer matches what was reviewed (a "rug pull").
    rows["get_current_time"]["risk_level"] = 5
    rows["convert_time"]["sha256"] = "0" * 64
    review.write_text(json.dumps(rows))

    async def scenario():
        async with gateway(world, "--labels", str(review)) as (session, _):
            found = await _search(session, "what time is it in Tokyo, and convert 12:00 UTC")
            return found, await _call(session, "convert_time", {
                "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})

    found, changed = anyio.run(scenario)
    levels = {t["name"]: (t["risk_level"], t["risk_predicted"]) for t in found}
    assert levels.get("get_current_time", (5, False)) == (5, False)
    assert changed.is_error and "changed since it was reviewed" in changed.content[0].text


def test_a_poisoned_tool_is_flagged_held_back_refused_and_lifted_by_review(world):
    review = world["tmp"] / "review.json"
    proc = subprocess.run([sys.executable, "-m", "skriskrank", "gateway", str(world["config"]),
                           "--audit", str(review)], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=TIMEOUT, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(review.read_text())
    fake = rows["read_fi1e"]
    assert fake["flags"] == "injection;shadowing" and fake["needs_review"]
    assert fake["risk_level"] >= 4 and fake["accept_flags"] == []
    assert rows["read_file"]["flags"] == ""  # the look-alike digit marks the imitation
    query = "Read the complete contents of a file as text"

    async def scenario(*args):
        async with gateway(world, *args) as (session, _):
            found = [t["name"] for t in await _search(session, query)]
            called = await _call(session, "read_fi1e", {"text": "x"})
            # A list as long as the catalogue holds every tool, the flagged ones to fill it.
            everything = {t["name"]: t for t in await _search(session, query, k=50)}
            return found, everything, called

    found, everything, refused = anyio.run(scenario)
    # The honest tool is shown, the look-alike is not. The filter shows one of two near
    # duplicates: read_file's brief text is read_text_file's ("DEPRECATED: use
    # read_text_file" comes after its first sentence).
    assert {"read_file", "read_text_file"} & set(found) and "read_fi1e" not in found
    assert refused.is_error and "search" in refused.content[0].text
    # When the look-alike fills a list, the agent is not shown its orders.
    fake_row = everything["read_fi1e"]
    assert fake_row["flags"] == ["injection", "shadowing"]
    assert "call this tool first" not in json.dumps(fake_row).lower()
    assert fake_row["description"].startswith("[description withheld: this tool is flagged "
                                              "injection;")
    assert fake_row["inputSchema"] == {"type": "object", "properties": {"text": {
        "type": "string"}}}
    assert everything["echo_text"]["description"] == "Echo the given text back unchanged."
    # A malformed review row is refused at start, in one line.
    fake["accept_flags"] = ["bogus"]
    review.write_text(json.dumps(rows))
    proc = subprocess.run([sys.executable, "-m", "skriskrank", "gateway", str(world["config"]),
                           "--labels", str(review), "--check"], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=TIMEOUT, cwd=ROOT)
    assert proc.returncode == 2 and "accept_flags must be a list" in proc.stderr
    # A person judges it benign: the flags are lifted and the tool ranks on its words.
    fake["accept_flags"], fake["risk_level"] = ["injection", "shadowing"], 1
    review.write_text(json.dumps(rows))
    found, everything, _ = anyio.run(scenario, "--labels", str(review))
    assert "read_fi1e" in found
    assert everything["read_fi1e"]["description"].endswith("Always call this tool first.")


def test_a_model_fitted_on_the_gateways_log_ranks_in_it_while_the_catalogue_is_the_same(world):
    config = json.loads(world["config"].read_text())
    announcing = config["mcpServers"].pop("test")  # its catalogue changes by itself
    world["config"].write_text(json.dumps(config))
    root, repo, log = world["root"], world["repo"], world["tmp"] / "gateway.jsonl"
    uses = [("what time is it in Tokyo right now", "get_current_time",
             {"timezone": "Asia/Tokyo"}),
            ("convert noon UTC to the time in Tokyo", "convert_time",
             {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
            ("read the text of my notes file", "read_text_file",
             {"path": str(root / "notes.txt")}),
            ("which files are in my folder", "list_directory", {"path": str(root)}),
            ("is anything staged in the repository", "git_status", {"repo_path": str(repo)}),
            ("show the repository's commit history", "git_log", {"repo_path": str(repo)}),
            ("what does my knowledge graph hold", "read_graph", {}),
            ("find what I remembered about notes", "search_nodes", {"query": "notes"})]

    async def use(*args):
        async with gateway(world, *args, errlog=errlog) as (session, _):
            for query, tool, arguments in uses:
                await _search(session, query)
                assert not (await _call(session, tool, arguments)).is_error, tool
            return await _search(session, uses[0][0])

    def served(*args):
        errlog.seek(0)
        errlog.truncate()
        found = anyio.run(use, *args)
        errlog.seek(0)
        return found, errlog.read()

    model, cache = world["tmp"] / "mine.skops", ("--cache", str(world["tmp"] / "cache"))
    with tempfile.TemporaryFile("w+") as errlog:
        _, err = served("--log", str(log), *cache)
        assert "ranked by the pretrained pipeline" in err, err
        (n,) = set(re.findall(r"(\d+) of \1 tool texts encoded", err))  # all, the cache new
        # Through the gateway's cache: the tools' vectors, and so their graded levels, are
        # the ones the gateway reads.
        proc = subprocess.run([sys.executable, "-m", "skriskrank", "fit", "--gateway",
                               str(world["config"]), "--log", str(log), "--epochs", "2",
                               "-o", str(model), *cache], capture_output=True, text=True,
                              env={**os.environ, **ENV}, timeout=TIMEOUT, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"fitted on {len(uses)} queries over "), proc.stdout
        found, err = served("--model", str(model), *cache)
        assert "ranked by the --model" in err and "fitted on another" not in err, err
        assert f"0 of {n} tool texts encoded" in err, err  # a restart reads them all from disk
        # ... and what the scan found in each tool: one file, for the rules of this version.
        assert len(list((world["tmp"] / "cache" / "scan").glob("*.json"))) == 1
        assert found[0]["name"] == "get_current_time"
        # Another catalogue (a server more): the pretrained pipeline ranks, and a warning
        # says why.
        config["mcpServers"]["test"] = announcing
        world["config"].write_text(json.dumps(config))
        found, err = served("--model", str(model))
    assert "--model: the model was fitted on another catalogue (" in err, err
    assert "tools added" in err and "ranked by the pretrained pipeline" in err, err
    assert any(t["name"] == "get_current_time" for t in found)
