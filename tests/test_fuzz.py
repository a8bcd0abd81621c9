"""Fuzzing the entry points of untrusted input (docs/security.md).

Arbitrary JSON catalogues, CSV cells, command lines and MCP arguments: each gives a result or
one of the project's errors (a ValueError or OSError with a message), never another
exception, within a time limit per example (hypothesis' deadline) and a memory bound.
"""

import contextlib
import csv
import io
import json
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skriskrank import ToolRegistry, brief_text, load_tools
from skriskrank.datasets import load_registry_csv

#: Per example: at most this long (hypothesis fails a slower example) and this much memory.
DEADLINE_MS = 2000
MEMORY_BYTES = 64 << 20

FUZZ = settings(max_examples=150, deadline=DEADLINE_MS,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Any Unicode, lone surrogates included (what undecodable bytes and "\ud800" escapes become).
ANY_CHAR = st.characters(exclude_categories=()) | st.characters(categories=("Cs",))
TEXT = st.text(ANY_CHAR, max_size=40)
KEYS = st.sampled_from(["name", "description", "title", "inputSchema", "input_schema",
                        "parameters", "properties", "annotations", "tools", "result", "type",
                        "function", "readOnlyHint", "destructiveHint", "risk_level"]) | TEXT
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | TEXT
    | st.sampled_from(["function", "object", "read_file", "x" * 200]),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=6),
    max_leaves=30)


@contextlib.contextmanager
def bounded_memory():
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
        assert peak < MEMORY_BYTES, f"peak {peak:,} bytes"
    finally:
        tracemalloc.stop()


def _result_or_our_error(call):
    with bounded_memory():
        try:
            return call()
        except (ValueError, OSError) as err:
            assert str(err)  # an error says what is wrong
            return err


@FUZZ
@given(JSON)
def test_load_tools_on_arbitrary_json(source):
    out = _result_or_our_error(lambda: load_tools(source))
    assert isinstance(out, (ToolRegistry, ValueError, OSError))


@FUZZ
@given(st.lists(st.fixed_dictionaries({
    "name": st.sampled_from(["read_file", "a.b-c_d", "x" * 129, "", "ok"]) | TEXT,
    "description": TEXT,
    "inputSchema": JSON,
    "annotations": st.dictionaries(st.sampled_from(["readOnlyHint", "destructiveHint",
                                                    "title", "x"]), JSON, max_size=3)}),
    max_size=4))
def test_load_tools_on_mcp_shaped_tools(tools):
    out = _result_or_our_error(lambda: load_tools({"tools": tools}))
    if isinstance(out, ToolRegistry):
        for name in out.names:  # only MCP's charset gets through
            assert name.isascii() and 1 <= len(name) <= 128
        for text in out.texts:
            text.encode("utf-8")  # every text can be written back out
        for name, desc, params in zip(out.names, out.descriptions, out.parameters, strict=True):
            # What the pretrained pipeline encodes: the description's start (whitespace
            # aside; at least 16 characters of it, or all of it), then the parameters' names,
            # and it is text the encoder can take.
            brief = brief_text(name, desc, params)
            brief.encode("utf-8")
            tail = f" Parameters: {', '.join(p for p, _ in params)}" if params else ""
            assert brief.endswith(tail)
            head = brief[:len(brief) - len(tail)].split(": ", 1)[1]  # MCP names have no ":"
            assert " ".join(desc.split()).startswith(" ".join(head.split()))
            assert len(head) >= 16 or " ".join(head.split()) == " ".join(desc.split())


@settings(FUZZ, max_examples=100)
@given(st.binary(max_size=300))
def test_load_tools_on_arbitrary_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("bytes") / "tools.json"
    path.write_bytes(data)
    out = _result_or_our_error(lambda: load_tools(path))
    assert isinstance(out, (ToolRegistry, ValueError, OSError))


CELL = TEXT | st.sampled_from(["1", "5", "0", "99", "none", "file_write", "shell_execution;x",
                               ""])


@FUZZ
@given(st.lists(st.sampled_from(["name", "description", "risk", "permissions", "other"]),
                min_size=1, max_size=5, unique=True),
       st.lists(st.lists(CELL, min_size=5, max_size=5), max_size=6))
def test_load_registry_csv_on_arbitrary_cells(tmp_path_factory, header, rows):
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(row[:len(header)] for row in rows)
    path = tmp_path_factory.mktemp("csv") / "tools.csv"
    path.write_bytes(buf.getvalue().encode("utf-8", "surrogatepass"))
    out = _result_or_our_error(lambda: load_registry_csv(path))
    assert isinstance(out, (ToolRegistry, ValueError, OSError))


COMMANDS = ["fit", "rank", "evaluate", "serve", "demo", "audit"]
ARG = st.sampled_from(["--k", "--tools", "--queries", "-o", "--labels", "--epochs",
                       "--risk-weight", "--json", "--explain", "--out", "--coverage", "0",
                       "-1", "5", "1e9", "nan", "model.skops"]) | TEXT


@FUZZ
@given(st.sampled_from(COMMANDS), st.lists(ARG, max_size=6))
def test_the_command_line_parser_on_arbitrary_arguments(command, rest):
    from skriskrank._cli import _parser

    stderr = io.StringIO()
    with bounded_memory(), contextlib.redirect_stderr(stderr), \
            contextlib.redirect_stdout(io.StringIO()):
        try:
            args = _parser().parse_args([command, *rest])
        except SystemExit as done:
            err = stderr.getvalue()
            if done.code == 0:  # --help
                return
            assert done.code == 2 and err.count("\n") == 1, err
            err.encode("utf-8")  # printable, whatever the arguments held
            return
    for name in ("k", "epochs", "show"):
        value = getattr(args, name, 1)
        assert 1 <= value <= 100_000


class WireClient:
    """Raw JSON-RPC lines to ``skriskrank serve`` over stdio, as any MCP client sends them."""

    def __init__(self, argv, tmp_path):
        import os
        import subprocess
        import sys

        env = dict(os.environ, HF_HUB_OFFLINE="1")
        self.errlog = open(tmp_path / "stderr.txt", "w+b")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "skriskrank", *argv],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errlog, env=env)
        self.next_id = 0
        self.buffer = b""
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "fuzz", "version": "0"}}, timeout=300)
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send_line(self, line: str):
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout):
        import os
        import select
        import time

        # Lines are cut from raw reads: a buffered readline could hold a second reply where
        # select() no longer sees it.
        end = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.proc.stdout], [], [], end - time.monotonic())
            assert ready, "no reply within the time limit"
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            assert chunk, "the server closed its output"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params, timeout=30):
        self.next_id += 1
        # ensure_ascii writes a lone surrogate as its \\udXXX escape, as JSON allows.
        self.send_line(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                   "params": params}))
        reply = self.receive(timeout)
        assert reply.get("id") == self.next_id, reply
        return reply

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.errlog.close()


@pytest.fixture(scope="module")
def wire(data_dir, tmp_path_factory):
    client = WireClient(["serve", "--tools", str(data_dir / "mcp" / "filesystem.json")],
                        tmp_path_factory.mktemp("wire"))
    yield client
    client.close()


@settings(FUZZ, max_examples=80)
@given(st.dictionaries(st.sampled_from(["query", "k", "extra"]) | TEXT,
                       JSON | TEXT | st.integers(-5, 60), max_size=3)
       | st.fixed_dictionaries({"query": st.text(ANY_CHAR, min_size=1, max_size=5000)}))
def test_search_tools_on_arbitrary_arguments_over_the_wire(wire, arguments):
    """Every request gets its one reply: a result, a tool error or a JSON-RPC error."""
    from skriskrank._serve import SEARCH_TOOL

    reply = wire.request("tools/call", {"name": SEARCH_TOOL, "arguments": arguments})
    if "error" in reply:
        assert reply["error"]["message"]
        return
    result = reply["result"]
    text = result["content"][0]["text"]
    if result.get("isError"):
        assert len(text) < 1000  # an error does not repeat the request
    else:
        assert json.loads(text) == result["structuredContent"]


@settings(FUZZ, max_examples=40)
@given(st.text(ANY_CHAR, max_size=200).filter(lambda line: "\n" not in line))
def test_garbage_lines_get_a_parse_error_and_the_server_lives_on(wire, line):
    wire.send_line(line)
    wire.next_id += 1
    wire.send_line(json.dumps({"jsonrpc": "2.0", "id": wire.next_id, "method": "tools/list"}))
    while (reply := wire.receive(30)).get("id") != wire.next_id:
        # Whatever the garbage got is an error; JSON that is a notification gets nothing.
        assert "error" in reply, reply
    assert reply["result"]["tools"]
