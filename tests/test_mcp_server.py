"""``skriskrank serve`` end to end: the official MCP SDK's stdio client against the real server.

Sync tests drive the async client with ``anyio.run`` (no pytest plugin). The server runs in a
child process started exactly as an agent would start it (``python -m skriskrank serve``);
``stdio_client`` hands the child only a few variables, so the offline settings are passed.
"""

import json
import os
import sys

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup
import tempfile
from contextlib import asynccontextmanager

import pytest
from sklearn.pipeline import Pipeline

from skriskrank import (
    DenseRetriever,
    FrozenEmbedder,
    GraphSmoother,
    RiskAwareReranker,
    RuleFilter,
    ToolRegistry,
    load,
    save,
)
from skriskrank._explain import search
from skriskrank._serve import INPUT_SCHEMA, OUTPUT_SCHEMA, SEARCH_TOOL, make_server
from skriskrank.datasets import load_demo

pytestmark = pytest.mark.slow

anyio = pytest.importorskip("anyio")
jsonschema = pytest.importorskip("jsonschema")
from mcp import Client, ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

PASS_ENV = ("PYTHONPATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM",
            "HF_HOME", "OMP_NUM_THREADS", "NUMBA_CACHE_DIR")
TIMEOUT = 120.0


class ServerFailed(AssertionError):
    """The server exited, hung or garbled the protocol; carries its stderr."""


def _leaf(exc):
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


@asynccontextmanager
async def session(*args, timeout=TIMEOUT):
    env = {k: os.environ[k] for k in PASS_ENV if k in os.environ}
    env["HF_HUB_OFFLINE"] = "1"
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "skriskrank", "serve", *args], env=env)
    with tempfile.TemporaryFile("w+") as errlog:
        body_error = None
        try:
            with anyio.fail_after(timeout):
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with ClientSession(read, write, read_timeout_seconds=timeout) as s:
                        await s.initialize()
                        try:
                            yield s
                        except BaseException as e:
                            body_error = e
                            raise
        except BaseException as e:  # noqa: BLE001
            if body_error is not None and _leaf(e) is body_error:
                raise body_error from None
            errlog.seek(0)
            raise ServerFailed(f"server failed: {_leaf(e)!r}\n{errlog.read()[-4000:]}") from e


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    demo = load_demo()
    pipe = Pipeline([
        ("embed", FrozenEmbedder(demo.registry)),
        ("retrieve", DenseRetriever(n_candidates=50)),
        ("rerank", RiskAwareReranker(epochs=2, random_state=0)),
        ("smooth", GraphSmoother()),
        ("filter", RuleFilter()),
    ]).fit(demo.queries[:200], demo.relevant[:200])
    path = tmp_path_factory.mktemp("serve") / "demo.skops"
    save(pipe, path)
    return path


QUERIES = ["delete the old log files", "book a table for two tonight",
           "transfer 200 dollars to my savings account"]


def test_agent_lists_and_calls_search_tools_and_gets_predict(model_file):
    async def scenario():
        async with session(str(model_file)) as s:
            tools = (await s.list_tools()).tools
            results = {q: await s.call_tool(SEARCH_TOOL, {"query": q, "k": 3})
                       for q in QUERIES}
            default = await s.call_tool(SEARCH_TOOL, {"query": QUERIES[0]})
            return tools, results, default

    tools, results, default = anyio.run(scenario)
    assert [t.name for t in tools] == [SEARCH_TOOL]
    assert tools[0].input_schema == INPUT_SCHEMA and tools[0].annotations.read_only_hint
    pipe = load(model_file)
    pipe.steps[-1][1].set_params(k=3)
    for query, res in results.items():
        assert not res.is_error, res.content
        got = res.structured_content
        jsonschema.validate(got, OUTPUT_SCHEMA)
        assert json.loads(res.content[0].text) == got  # text-only clients get the same JSON
        # The oracle: the fitted pipeline called directly.
        assert [t["name"] for t in got["tools"]] == pipe.predict([query])[0].tolist()
        assert [t["rank"] for t in got["tools"]] == [1, 2, 3]
        reg = pipe.steps[0][1].registry
        assert [t["risk_level"] for t in got["tools"]] == reg.risk_of(
            [t["name"] for t in got["tools"]]).tolist()
    assert len(default.structured_content["tools"]) == 5


INVALID = [
    ({"k": 3}, "arguments: fails 'required' ([\"query\"])"),
    ({"query": "x", "k": 0}, "k: fails 'minimum' (1)"),
    ({"query": "x", "k": "3"}, "k: fails 'type' (\"integer\")"),
    ({"query": "", "k": 3}, "query: fails 'minLength' (1)"),
    ({"query": "x", "top": 3}, "arguments: fails 'additionalProperties' (false)"),
    ({"query": "x" * 100_000}, "query: fails 'maxLength' (4096)"),
    ({"query": "read \ud800 file"}, "the query is not valid Unicode: character 5"),
    ({"query": "x", "k": 50}, "k=50 is more than the catalogue's"),
]


def test_bad_arguments_are_tool_errors_and_the_server_lives_on():
    demo = load_demo()
    # 30 tools, so that a k the schema allows can still exceed the catalogue.
    registry = ToolRegistry.from_frame(demo.registry.to_frame().head(30))
    pipe = Pipeline([("embed", FrozenEmbedder(registry)),
                     ("retrieve", DenseRetriever(n_candidates=20)),
                     ("filter", RuleFilter())]).fit(demo.queries[:5])

    async def scenario():
        # In process (no child): the same server object, through the SDK's client.
        async with Client(make_server(pipe), mode="legacy") as c:
            for arguments, fragment in INVALID:
                res = await c.call_tool(SEARCH_TOOL, arguments)
                assert res.is_error and fragment in res.content[0].text, arguments
                # An error never repeats what it refuses: a long or broken query stays out.
                assert len(res.content[0].text) < 300
                res.content[0].text.encode("utf-8")
            ok = await c.call_tool(SEARCH_TOOL, {"query": "read a file", "k": 2})
            assert not ok.is_error and len(ok.structured_content["tools"]) == 2
            with pytest.raises(MCPError, match="Unknown tool"):
                await c.call_tool("no_such_tool", {})

    anyio.run(scenario)
    assert pipe.steps[-1][1].k == 5  # a request's k never changes the served pipeline


def test_serve_a_real_mcp_catalogue_without_labels(data_dir):
    """The filesystem server's tools/list, graded by the auditor: deleting is exposed but
    flagged, and every level is marked predicted."""
    catalogue = data_dir / "mcp" / "filesystem.json"

    async def scenario():
        async with session("--tools", str(catalogue), "--k", "3") as s:
            res = await s.call_tool(SEARCH_TOOL, {"query": "delete the old logs"})
            return res.structured_content

    got = anyio.run(scenario)
    from skriskrank import RiskAuditor, load_tools, pretrained_pipeline

    pipe = pretrained_pipeline(RiskAuditor.pretrained().grade(load_tools(catalogue)), k=3)
    assert [t["name"] for t in got["tools"]] == pipe.predict(["delete the old logs"])[0].tolist()
    assert all(t["risk_predicted"] and isinstance(t["risk_level"], int) for t in got["tools"])
    # Reasons a person can read: the filter's decision in words.
    assert all(t["reason"] == "accepted" or t["reason"].startswith("kept to fill the list")
               for t in got["tools"])


def test_serve_needs_exactly_one_source(capsys):
    from skriskrank._cli import main

    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give a model file or --tools" in err


def test_search_leaves_the_pipeline_alone(model_file):
    pipe = load(model_file)
    rows = search(pipe, QUERIES[1], k=2)
    assert len(rows) == 2 and pipe.steps[-1][1].k == 5
