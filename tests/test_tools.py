"""Tests for load_tools (MCP, OpenAI, Anthropic catalogues) and the registry fields it fills."""

import copy
import json
import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skriskrank import HINT_DEFAULTS, UNKNOWN_RISK, ToolRegistry, load_tools
from skriskrank._hints import MSG_BAD_HINT, MSG_UNKNOWN_HINT
from skriskrank._registry import MSG_BAD_RISK_SOURCE, MSG_RISK_LENGTH
from skriskrank._rubric import MSG_BAD_LEVEL as MSG_BAD_RISK_LEVEL
from skriskrank._tool_text import MSG_BAD_TEMPLATE
from skriskrank._tools import (
    MSG_BAD_DESCRIPTION,
    MSG_BAD_JSON,
    MSG_BAD_LEVEL,
    MSG_BAD_PROPERTIES,
    MSG_BAD_SCHEMA,
    MSG_DUPLICATE_TOOL,
    MSG_EMPTY_SOURCE,
    MSG_MISSING_FILE,
    MSG_NO_NAME,
    MSG_RISK_UNKNOWN,
    MSG_UNKNOWN_SHAPE,
    MSG_UNKNOWN_TOOL_SHAPE,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to delete"},
        "force": {"type": "boolean"},
    },
    "required": ["path"],
}
TOOLS = [  # name, description, schema
    ("delete_file", "Delete a file from disk", SCHEMA),
    ("get_time", "Current time", {"type": "object", "properties": {}}),
]


def mcp(tools=TOOLS, annotations=None):
    out = []
    for name, desc, schema in tools:
        t = {"name": name, "description": desc, "inputSchema": schema}
        if annotations and name in annotations:
            t["annotations"] = annotations[name]
        out.append(t)
    return {"tools": out}


def openai_chat(tools=TOOLS):
    return [{"type": "function", "function": {"name": n, "description": d, "parameters": s}}
            for n, d, s in tools]


def openai_responses(tools=TOOLS):
    return [{"type": "function", "name": n, "description": d, "parameters": s}
            for n, d, s in tools]


def anthropic(tools=TOOLS):
    return [{"name": n, "description": d, "input_schema": s} for n, d, s in tools]


FORMATS = {"mcp": mcp, "openai-chat": openai_chat, "openai-responses": openai_responses,
           "anthropic": anthropic}


class TestFormats:
    @pytest.mark.parametrize("fmt", list(FORMATS))
    def test_each_format_loads(self, fmt):
        reg = load_tools(FORMATS[fmt]())
        assert reg.names.tolist() == ["delete_file", "get_time"]
        assert reg.parameters[0] == (("path", "File to delete"), ("force", ""))
        assert reg.parameters[1] == ()
        assert reg.texts == [
            "delete_file: Delete a file from disk Parameters: path (File to delete); force",
            "get_time: Current time",
        ]
        assert (reg.risk == UNKNOWN_RISK).all()
        assert reg.risk_source.tolist() == ["unknown", "unknown"]

    def test_three_formats_give_the_same_registry(self):
        regs = [load_tools(make()) for make in FORMATS.values()]
        assert len({r.fingerprint for r in regs}) == 1
        assert all(r == regs[0] for r in regs)

    def test_bare_list_of_mcp_tools_and_jsonrpc_response(self):
        bare = load_tools(mcp()["tools"])
        wrapped = load_tools({"jsonrpc": "2.0", "id": 1, "result": mcp()})
        assert bare == wrapped == load_tools(mcp())

    def test_several_servers(self, tmp_path):
        a = mcp(TOOLS[:1])
        b = mcp([("list_dir", "List a folder", {"type": "object"})])
        as_list = load_tools([a, b])
        as_mapping = load_tools({"fs": a, "other": b})
        (tmp_path / "a.json").write_text(json.dumps(a))
        (tmp_path / "b.json").write_text(json.dumps(b))
        as_files = load_tools([tmp_path / "a.json", str(tmp_path / "b.json")])
        for reg in (as_list, as_mapping, as_files):
            assert reg.names.tolist() == ["delete_file", "list_dir"]
            assert reg.texts == as_list.texts
        # The servers are named by the mapping's keys, the files, or their place in a list.
        assert as_mapping.servers == ("fs", "other") and as_files.servers == ("a", "b")
        assert as_list.servers == ("result #0", "result #1")
        assert load_tools(a).servers == (None,)  # one server: nothing to group

    def test_path_and_parsed_object_agree(self, tmp_path):
        path = tmp_path / "tools.json"
        path.write_text(json.dumps(anthropic()))
        assert load_tools(path) == load_tools(str(path)) == load_tools(anthropic())

    def test_missing_schema_and_description(self):
        reg = load_tools({"tools": [
            {"name": "think", "description": "A scratchpad"},
            {"name": "no_desc", "title": "No Description", "inputSchema": {"type": "object"}},
            {"name": "bare_tool", "inputSchema": {"type": "object"},
             "annotations": {"title": "From Annotations"}},
            {"name": "nothing", "inputSchema": {"type": "object"}},
        ]})
        assert reg.descriptions.tolist() == [
            "A scratchpad", "No Description", "From Annotations", "nothing"]
        assert reg.parameters == ((), (), (), ())

    def test_custom_text_template(self):
        reg = load_tools(mcp(), text_template="{name} | {description} | {parameters}")
        assert reg.texts[0] == ("delete_file | Delete a file from disk | "
                                "path (File to delete); force")
        assert reg.texts[1] == "get_time | Current time | "
        fn = load_tools(mcp(), text_template=lambda n, d, p: f"{n} ({len(p)} params)")
        assert fn.texts == ["delete_file (2 params)", "get_time (0 params)"]
        assert reg.fingerprint != load_tools(mcp()).fingerprint != fn.fingerprint

    def test_bad_template(self):
        msg = MSG_BAD_TEMPLATE.format(name="delete_file", error="'nope'")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(mcp(), text_template="{nope}")


HINTS = {
    "delete_file": {"title": "Delete", "destructiveHint": True, "readOnlyHint": False},
    "get_time": {"readOnlyHint": True, "openWorldHint": False},
}


class TestHints:

    def test_declared_and_explicit_defaults(self):
        reg = load_tools(mcp(annotations=HINTS))
        assert dict(reg.declared_hints[0]) == {
            "destructiveHint": True, "readOnlyHint": False, "title": "Delete"}
        assert dict(reg.annotations[1]) == {**HINT_DEFAULTS, "readOnlyHint": True,
                                            "openWorldHint": False}
        # A tool without hints reads as the specification's cautious defaults ...
        plain = load_tools(openai_chat())
        assert dict(plain.annotations[0]) == dict(HINT_DEFAULTS)
        # ... but has declared nothing, so it is not "marked destructive".
        assert plain.declares_destructive.tolist() == [False, False]
        assert reg.declares_destructive.tolist() == [True, False]

    @pytest.mark.parametrize(("hints", "destructive"), [
        ({"destructiveHint": True}, True),
        ({"readOnlyHint": False}, True),  # destructiveHint defaults to true
        ({"readOnlyHint": False, "destructiveHint": False}, False),
        ({"readOnlyHint": True, "destructiveHint": True}, False),  # meaningless when read-only
        ({"idempotentHint": True}, False),  # declared nothing about destruction
        ({}, False),
    ])
    def test_declares_destructive(self, hints, destructive):
        reg = load_tools(mcp(TOOLS[1:], annotations={"get_time": hints}))
        assert reg.declares_destructive.tolist() == [destructive]

    def test_hints_add_permissions_never_remove(self):
        reg = load_tools(mcp(annotations={
            "get_time": {"destructiveHint": True, "openWorldHint": True},
            "delete_file": {"readOnlyHint": True},
        }))
        assert reg.permissions[1] == {"file_write", "network_access"}
        # "Delete a file" derives file_write from its words; read-only does not remove it.
        assert "file_write" in reg.permissions[0]

    def test_parameters_derive_permissions(self):
        reg = load_tools(anthropic([("sign_up", "Create an account", {
            "type": "object", "properties": {"password": {"type": "string"}}})]))
        assert reg.permissions[0] == {"credential_handling"}

    def test_trust_hints_is_recorded_and_fingerprinted(self):
        a = load_tools(mcp(annotations=HINTS))
        b = load_tools(mcp(annotations=HINTS), trust_hints=True)
        assert not a.hints_trusted.any() and b.hints_trusted.all()
        assert a.fingerprint != b.fingerprint

    def test_non_boolean_hint(self):
        msg = MSG_BAD_HINT.format(name="get_time", hint="readOnlyHint", value="yes")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(mcp(annotations={"get_time": {"readOnlyHint": "yes"}}))

    def test_unknown_hint(self):
        msg = MSG_UNKNOWN_HINT.format(
            name="get_time", hint="safeHint", allowed=["title", *HINT_DEFAULTS])
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(mcp(annotations={"get_time": {"safeHint": True}}))

    @given(st.fixed_dictionaries({}, optional={
        k: st.one_of(st.none(), st.booleans()) for k in HINT_DEFAULTS}))
    def test_formats_agree_for_any_unannotated_catalogue_and_hints_round_trip(self, hints):
        reg = load_tools(mcp(annotations={"get_time": hints}))
        declared = {k: v for k, v in hints.items() if v is not None}
        assert dict(reg.declared_hints[1]) == declared
        assert dict(reg.annotations[1]) == {**HINT_DEFAULTS, **declared}
        back = pickle.loads(pickle.dumps(reg))
        assert back == reg
        # Read-only after a round trip too.
        with pytest.raises(TypeError):
            back.declared_hints[1]["readOnlyHint"] = True


class TestRisk:
    def test_risk_mapping(self):
        reg = load_tools(mcp(), risk={"delete_file": 4, "get_time": {"risk_level": 1}})
        assert reg.risk.tolist() == [4, 1]
        assert reg.risk_source.tolist() == ["declared", "declared"]

    @pytest.mark.parametrize("level", [0, 6, 2.5, "3", True])
    def test_level_outside_range(self, level):
        msg = MSG_BAD_LEVEL.format(name="get_time", value=level)
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(mcp(), risk={"get_time": level})

    def test_risk_for_unknown_tool(self):
        msg = MSG_RISK_UNKNOWN.format(names="'nope'")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(mcp(), risk={"nope": 2})

    def test_with_risk_predicted(self):
        reg = load_tools(mcp(annotations=HINTS), risk={"get_time": 1})
        new = reg.with_risk(np.array([4, 2]))
        assert new.risk.tolist() == [4, 2]
        assert new.risk_source.tolist() == ["predicted", "predicted"]
        assert new.risk_predicted.tolist() == [True, True]
        # Texts, hints and permissions carry over; the fingerprint tells the two apart.
        assert new.texts == reg.texts and new.declared_hints == reg.declared_hints
        assert new.permissions == reg.permissions
        assert new.fingerprint != reg.fingerprint
        assert new.fingerprint != reg.with_risk([4, 2], source="declared").fingerprint
        frame = new.to_frame()
        assert frame["risk_source"].tolist() == ["predicted", "predicted"]

    def test_with_risk_bad_input(self):
        reg = load_tools(mcp())
        with pytest.raises(ValueError, match=re.escape(MSG_RISK_LENGTH.format(n=2, got=1))):
            reg.with_risk([1])
        with pytest.raises(ValueError, match=re.escape(
                MSG_BAD_RISK_LEVEL.format(what="Tool 'get_time'", value=7))):
            reg.with_risk([1, 7])
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_RISK_SOURCE.format(
                allowed=("declared", "predicted"), source="guess"))):
            reg.with_risk([1, 2], source="guess")

    def test_registry_without_new_fields_keeps_its_fingerprint(self, tiny_registry):
        # The default text, no parameters, no hints: exactly the registry built before.
        assert tiny_registry.texts[3] == "delete_file: Delete a file from disk"
        again = ToolRegistry.from_records(tiny_registry._records())
        assert again.fingerprint == tiny_registry.fingerprint
        assert copy.deepcopy(tiny_registry) is tiny_registry


class TestErrors:
    def test_empty_file(self, tmp_path):
        path = tmp_path / "empty.json"
        path.write_text("  \n")
        with pytest.raises(ValueError, match=re.escape(MSG_EMPTY_SOURCE.format(where=path))):
            load_tools(path)

    @pytest.mark.parametrize("source", [{"tools": []}, []])
    def test_empty_catalogue(self, source):
        with pytest.raises(ValueError, match=re.escape(MSG_EMPTY_SOURCE.format(where="tools"))):
            load_tools(source)

    def test_bad_json_names_the_line(self, tmp_path):
        path = tmp_path / "bad.json"
        path.write_text('{"tools": [\n  {"name": "x",}\n]}')
        msg = MSG_BAD_JSON.format(where=path, line=2, error="Expecting property name enclosed "
                                  "in double quotes")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(path)

    def test_missing_file(self, tmp_path):
        path = tmp_path / "nope.json"
        with pytest.raises(FileNotFoundError, match=re.escape(MSG_MISSING_FILE.format(path=path))):
            load_tools(path)

    @pytest.mark.parametrize(("source", "got"), [
        ({"servers": 1}, "an object with keys ['servers']"),
        ("not json at all", None),
        (42, "a int"),
    ])
    def test_unknown_shape(self, source, got):
        if got is None:  # a string is a path
            with pytest.raises(FileNotFoundError):
                load_tools(source)
            return
        with pytest.raises(ValueError, match=re.escape(
                MSG_UNKNOWN_SHAPE.format(where="tools", got=got))):
            load_tools(source)

    def test_unknown_tool_shape(self):
        msg = MSG_UNKNOWN_TOOL_SHAPE.format(where="tools", i=1, got="a str")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools([anthropic()[0], "get_time"])

    @pytest.mark.parametrize("make", list(FORMATS.values()))
    def test_tool_without_name(self, make):
        src = make([("", "Nameless", {"type": "object"})])
        msg = MSG_NO_NAME.format(where="tools", i=0, name="")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(src)

    def test_tool_without_name_key(self):
        msg = MSG_NO_NAME.format(where="tools", i=0, name=None)
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools({"tools": [{"description": "x", "inputSchema": {"type": "object"}}]})

    @pytest.mark.parametrize(("make", "field"), [
        (mcp, "inputSchema"), (openai_chat, "parameters"), (openai_responses, "parameters"),
        (anthropic, "input_schema")])
    @pytest.mark.parametrize("schema", [["path"], "object", {"type": "string"}])
    def test_non_object_schema(self, make, field, schema):
        msg = MSG_BAD_SCHEMA.format(where="tools", name="t", field=field, value=schema)
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(make([("t", "A tool", schema)]))

    def test_bad_properties(self):
        msg = MSG_BAD_PROPERTIES.format(where="tools", name="t", field="input_schema",
                                        value=["a"])
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools(anthropic([("t", "A tool", {"type": "object", "properties": ["a"]})]))

    def test_bad_description(self):
        msg = MSG_BAD_DESCRIPTION.format(where="tools", name="t", value=3)
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools([{"name": "t", "description": 3, "input_schema": {"type": "object"}}])

    def test_duplicate_names_across_servers(self, tmp_path):
        (tmp_path / "a.json").write_text(json.dumps(mcp()))
        (tmp_path / "b.json").write_text(json.dumps(mcp(TOOLS[1:])))
        msg = MSG_DUPLICATE_TOOL.format(
            name="get_time", first=f"{tmp_path / 'a.json'} (tool #1)",
            second=f"{tmp_path / 'b.json'} (tool #0)")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools([tmp_path / "a.json", tmp_path / "b.json"])

    def test_duplicate_names_by_server_name(self):
        msg = MSG_DUPLICATE_TOOL.format(
            name="get_time", first="tools, server 'fs' (tool #1)",
            second="tools, server 'clock' (tool #0)")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_tools({"fs": mcp(), "clock": mcp(TOOLS[1:])})


@pytest.mark.slow
class TestRealMCP:
    def test_reference_servers_load(self, data_dir):
        files = sorted((data_dir / "mcp").glob("*.json"))
        reg = load_tools(files)
        assert len(reg) == 38
        assert set(reg.names[reg.declares_destructive]) == {
            "write_file", "edit_file", "move_file", "git_reset", "delete_entities",
            "delete_observations", "delete_relations"}
        # sequentialthinking has no input schema in this copy: no parameters, no error.
        assert reg.parameters[reg.index_of("sequentialthinking")] == ()
        i = reg.index_of("write_file")
        assert reg.texts[i].startswith("write_file: Create a new file")
        assert "Parameters: path; content" in reg.texts[i]
        assert (reg.risk == UNKNOWN_RISK).all()


_names = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
_text = st.text(st.characters(codec="ascii", categories=("L", "N", "Zs")), min_size=1,
                max_size=30).filter(str.strip)


@settings(max_examples=40)  # each example builds four registries; 40 cover the shapes
@given(st.lists(
    st.tuples(_names, _text, st.dictionaries(_names, st.one_of(st.none(), _text), max_size=4)),
    min_size=1, max_size=6, unique_by=lambda t: t[0]))
def test_any_catalogue_gives_one_registry_in_every_format(tools):
    catalogue = []
    for name, desc, params in tools:
        props = {p: ({"type": "string"} if d is None else {"type": "string", "description": d})
                 for p, d in params.items()}
        catalogue.append((name, desc, {"type": "object", "properties": props}))
    regs = [load_tools(make(catalogue)) for make in FORMATS.values()]
    assert len({r.fingerprint for r in regs}) == 1
    reg = regs[0]
    for (name, _desc, params), text, got in zip(tools, reg.texts, reg.parameters, strict=True):
        assert [p for p, _ in got] == list(params)
        assert text.startswith(f"{name}: ") and ("Parameters: " in text) == bool(params)


@pytest.mark.parametrize("name", ["read\nfile", "read\u202eelif", "zero\u200bwidth",
                                  "has space", "x" * 129, "caf\u00e9"])
def test_tool_names_outside_mcps_charset_are_refused(name):
    with pytest.raises(ValueError, match="is not a valid tool name: MCP allows 1 to 128"):
        load_tools({"tools": [{"name": name, "description": "d"}]})


def test_hidden_text_in_a_description_is_removed_and_flagged():
    reg = load_tools({"tools": [
        {"name": "read_file", "description": "Read a file.\u200b<IMPORTANT>\u202eignore"},
        {"name": "list_dir", "description": "List a directory"}]})
    assert reg.descriptions[0] == "Read a file.<IMPORTANT>ignore"
    assert reg.flags == (frozenset({"injection"}), frozenset())
