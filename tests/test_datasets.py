"""Tests for skriskrank.datasets: the benchmark loaders, user-file loaders and the dataset."""

import collections
import copy
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import KFold

from skriskrank import UNKNOWN_RISK, ToolRegistry
from skriskrank.datasets import (
    SEALTOOLS_SPLITS,
    ToolRetrievalDataset,
    load_queries_jsonl,
    load_registry_csv,
    load_sealtools,
    load_ultratool,
)
from skriskrank.datasets._loaders import (
    MSG_BAD_GOLD,
    MSG_BAD_JSON,
    MSG_BAD_QUERY,
    MSG_BAD_SPLIT,
    MSG_CONFLICTING_TOOL,
    MSG_CSV_COLUMNS,
    MSG_CSV_RISK,
    MSG_DATASET_EMPTY_GOLD,
    MSG_DATASET_LENGTHS,
    MSG_DATASET_UNKNOWN,
    MSG_MISSING_FIELD,
    MSG_MISSING_FILE,
    MSG_MIXED_DOMAINS,
    MSG_NO_QUERIES,
    MSG_NOT_A_DIR,
    MSG_NOT_AN_OBJECT,
    MSG_SUBSET_INDICES,
    MSG_SUBSET_RANGE,
    MSG_UNKNOWN_GOLD,
)


def _prefix(msg: str, **fields) -> str:
    """The fixed start of a message template, up to its first unfilled field, as a regex."""
    head = msg
    for key in re.findall(r"\{(\w+)", msg):
        if key not in fields:
            head = head.split("{" + key)[0]
            break
    return re.escape(head.format(**fields))


def _gold_sizes(ds):
    sizes = collections.Counter(min(len(g), 5) for g in ds.relevant)
    return dict(sorted(sizes.items()))


def _risk_distribution(reg):
    return dict(sorted(collections.Counter(reg.risk.tolist()).items()))


# -- the real data ------------------------------------------------------------------------------
class TestUltraTool:
    def test_measured_facts(self, ultratool):
        assert (ultratool.name, ultratool.split) == ("ultratool", "test")
        assert len(ultratool) == 1000 and len(ultratool.queries) == 1000
        assert len(ultratool.registry) == 2032
        assert _risk_distribution(ultratool.registry) == {1: 958, 2: 799, 3: 155, 4: 115, 5: 5}
        assert ultratool.registry.risk_known.all()
        assert _gold_sizes(ultratool) == {1: 190, 2: 563, 3: 186, 4: 50, 5: 11}
        gold = set().union(*ultratool.relevant)
        assert len(gold) == 436
        assert all(g in ultratool.registry for g in gold)

    def test_fields(self, ultratool):
        assert all(isinstance(q, str) and q and q == q.strip() for q in ultratool.queries)
        assert ultratool.queries[0].startswith("I need you to help me create a file called")
        assert ultratool.relevant[0] == {"file_write"}
        assert all(isinstance(g, frozenset) for g in ultratool.relevant)
        assert len(ultratool.domains) == 1000 and len(set(ultratool.domains)) == 22
        assert collections.Counter(ultratool.domains).most_common(1) == [("Finance", 142)]
        assert ultratool.query_ids[:2] == ["test-0", "test-1"]
        assert len(set(ultratool.query_ids)) == 1000
        reg = ultratool.registry
        i = int(reg.index_of("file_write"))
        assert reg.texts[i] == f"file_write: {reg.descriptions[i]}"
        assert reg.descriptions[i].startswith("Used to write content to a specified file.")

    def test_accepts_str_path(self, data_dir, ultratool):
        again = load_ultratool(str(data_dir / "ultratool"))
        assert again.registry == ultratool.registry
        assert again.queries == ultratool.queries and again.relevant == ultratool.relevant


class TestSealTools:
    def test_dev_measured_facts(self, sealtools_dev):
        ds = sealtools_dev
        assert (ds.name, ds.split) == ("sealtools", "dev")
        assert len(ds) == 700 and len(ds.registry) == 4076
        assert _risk_distribution(ds.registry) == {1: 2807, 2: 1197, 3: 51, 4: 20, 5: 1}
        assert ds.registry.risk_known.all()
        assert all(g in ds.registry for gold in ds.relevant for g in gold)
        assert ds.domains is None
        assert ds.query_ids[0] == "dev-easy-0"
        assert ds.queries[0] == (
            "Retrieve information about the number of nurses in a specific country."
        )
        assert ds.relevant[0] == {"getHealthWorkforce"}

    def test_in_domain_measured_facts(self, data_dir, sealtools_dev):
        ds = load_sealtools(data_dir / "sealtools", "test_in_domain")
        assert len(ds) == 700 and ds.split == "test_in_domain"
        assert _gold_sizes(ds) == {1: 200, 2: 10, 3: 395, 4: 88, 5: 7}
        assert all(g in ds.registry for gold in ds.relevant for g in gold)
        assert ds.registry == sealtools_dev.registry
        assert all(q == q.strip() and q for q in ds.queries)

    def test_default_split_is_test_in_domain(self, seal_slice):
        out, queries, _, _ = seal_slice
        _write_jsonl(out / "test_in_domain.jsonl", queries[:2])
        assert load_sealtools(out).split == "test_in_domain"

    def test_out_domain_missing_names_the_file(self, data_dir):
        path = data_dir / "sealtools" / "test_out_domain.jsonl"
        assert not path.exists()
        with pytest.raises(FileNotFoundError, match=re.escape(MSG_MISSING_FILE.format(path=path))):
            load_sealtools(data_dir / "sealtools", "test_out_domain")

    @pytest.mark.parametrize("split", ["train", "test", "", "DEV", None])
    def test_bad_split(self, data_dir, split):
        msg = MSG_BAD_SPLIT.format(split=split, allowed=list(SEALTOOLS_SPLITS))
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_sealtools(data_dir / "sealtools", split)
        assert "'dev', 'test_in_domain', 'test_out_domain'" in msg


# -- slices of the real files in tmp_path -------------------------------------------------------
N_SLICE = 12


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _write_jsonl(path: Path, rows, raw_lines=None) -> Path:
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    for i, text in (raw_lines or {}).items():
        lines[i] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def _ultra_source(data_dir):
    src = data_dir / "ultratool"
    queries = _jsonl(src / "test.json")[:N_SLICE]
    labels = json.loads((src / "ultratool_risk_labels_resolved.json").read_text(encoding="utf-8"))
    keep = {t["name"] for q in queries for t in q["tools"]} | set(list(labels)[:5])
    return queries, {k: v for k, v in labels.items() if k in keep}


@pytest.fixture(scope="session")
def _seal_source(data_dir):
    src = data_dir / "sealtools"
    queries = _jsonl(src / "dev.jsonl")[:N_SLICE]
    tools = _jsonl(src / "tool.jsonl")
    gold = {c["api"] for q in queries for c in q["calling"]}
    tools = [t for t in tools if t["api_name"] in gold] + tools[:5]
    labels = json.loads((src / "sealtools_risk_labels_resolved.json").read_text(encoding="utf-8"))
    return queries, tools, {t["api_name"]: labels[t["api_name"]] for t in tools}


@pytest.fixture
def ultra_slice(_ultra_source, tmp_path):
    """The first queries of UltraTool with the labels of their gold tools plus a few more."""
    queries, labels = copy.deepcopy(_ultra_source)
    out = tmp_path / "ultratool"
    out.mkdir()
    _write_jsonl(out / "test.json", queries)
    (out / "ultratool_risk_labels_resolved.json").write_text(json.dumps(labels, indent=2))
    return out, queries, labels


@pytest.fixture
def seal_slice(_seal_source, tmp_path):
    """The first dev queries of Seal-Tools with their gold tools plus a few more."""
    queries, tools, labels = copy.deepcopy(_seal_source)
    out = tmp_path / "sealtools"
    out.mkdir()
    _write_jsonl(out / "dev.jsonl", queries)
    _write_jsonl(out / "tool.jsonl", tools)
    (out / "sealtools_risk_labels_resolved.json").write_text(json.dumps(labels))
    return out, queries, tools, labels


class TestSlices:
    def test_ultratool_on_another_directory(self, ultra_slice, ultratool):
        out, queries, labels = ultra_slice
        for where in (out, str(out)):
            ds = load_ultratool(where)
            assert len(ds) == N_SLICE and len(ds.registry) == len(labels)
            full = ultratool.subset(range(N_SLICE))
            assert ds.queries == full.queries
            assert ds.relevant == full.relevant and ds.domains == full.domains
            assert ds.registry.names.tolist() == list(labels)
            assert ds.registry.risk.tolist() == [v["risk_level"] for v in labels.values()]

    def test_sealtools_on_another_directory(self, seal_slice, sealtools_dev):
        out, queries, tools, labels = seal_slice
        ds = load_sealtools(str(out), "dev")
        assert len(ds) == N_SLICE
        assert ds.registry.names.tolist() == list(dict.fromkeys(t["api_name"] for t in tools))
        full = sealtools_dev.subset(range(N_SLICE))
        assert ds.queries == full.queries and ds.relevant == full.relevant
        assert ds.query_ids == full.query_ids

    def test_blank_lines_are_skipped(self, ultra_slice):
        out, queries, _ = ultra_slice
        text = (out / "test.json").read_text(encoding="utf-8")
        (out / "test.json").write_text("\n" + text.replace("\n", "\n\n", 2), encoding="utf-8")
        assert len(load_ultratool(out)) == N_SLICE

    @pytest.mark.parametrize("broken", ['{"question": "cut off', "not json", "{'single': 1}"])
    def test_malformed_line(self, ultra_slice, broken):
        out, queries, _ = ultra_slice
        path = _write_jsonl(out / "test.json", queries, {2: broken})
        with pytest.raises(ValueError, match=_prefix(MSG_BAD_JSON, path=path, line=3)):
            load_ultratool(out)

    def test_malformed_line_sealtools(self, seal_slice):
        out, queries, tools, _ = seal_slice
        path = _write_jsonl(out / "tool.jsonl", tools, {4: "{"})
        with pytest.raises(ValueError, match=_prefix(MSG_BAD_JSON, path=path, line=5)):
            load_sealtools(out, "dev")
        _write_jsonl(out / "tool.jsonl", tools)
        path = _write_jsonl(out / "dev.jsonl", queries, {0: '{"query": }'})
        with pytest.raises(ValueError, match=_prefix(MSG_BAD_JSON, path=path, line=1)):
            load_sealtools(out, "dev")

    def test_line_that_is_not_an_object(self, ultra_slice):
        out, queries, _ = ultra_slice
        path = _write_jsonl(out / "test.json", queries, {1: "[1, 2]"})
        msg = MSG_NOT_AN_OBJECT.format(path=path, line=2, type="list")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_ultratool(out)

    def test_malformed_labels_file(self, ultra_slice):
        out, _, _ = ultra_slice
        path = out / "ultratool_risk_labels_resolved.json"
        lines = path.read_text().splitlines()
        lines[3] = lines[3].replace(":", "")
        path.write_text("\n".join(lines))
        with pytest.raises(ValueError, match=_prefix(MSG_BAD_JSON, path=path, line=4)):
            load_ultratool(out)

    @pytest.mark.parametrize("filename", ["test.json", "ultratool_risk_labels_resolved.json"])
    def test_ultratool_missing_file(self, ultra_slice, filename):
        out, _, _ = ultra_slice
        (out / filename).unlink()
        msg = MSG_MISSING_FILE.format(path=out / filename)
        with pytest.raises(FileNotFoundError, match=re.escape(msg)):
            load_ultratool(out)

    @pytest.mark.parametrize(
        "filename", ["dev.jsonl", "tool.jsonl", "sealtools_risk_labels_resolved.json"]
    )
    def test_sealtools_missing_file(self, seal_slice, filename):
        out = seal_slice[0]
        (out / filename).unlink()
        msg = MSG_MISSING_FILE.format(path=out / filename)
        with pytest.raises(FileNotFoundError, match=re.escape(msg)):
            load_sealtools(out, "dev")

    def test_missing_directory(self, tmp_path):
        missing = tmp_path / "nowhere"
        for load in (load_ultratool, lambda d: load_sealtools(d, "dev")):
            msg = MSG_NOT_A_DIR.format(path=missing)
            with pytest.raises(FileNotFoundError, match=re.escape(msg)):
                load(missing)

    def test_unknown_gold_tool_ultratool(self, ultra_slice):
        out, queries, _ = ultra_slice
        queries[4]["tools"].append({"name": "no_such_tool", "description": "?"})
        path = _write_jsonl(out / "test.json", queries)
        msg = MSG_UNKNOWN_GOLD.format(
            path=path, line=5, tools="'no_such_tool'", query=queries[4]["question"].strip()
        )
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_ultratool(out)

    def test_unknown_gold_tool_sealtools(self, seal_slice):
        out, queries, _, _ = seal_slice
        queries[7]["calling"].append({"api": "zzNoSuchApi"})
        queries[7]["calling"].append({"api": "aaNoSuchApi"})
        path = _write_jsonl(out / "dev.jsonl", queries)
        msg = MSG_UNKNOWN_GOLD.format(
            path=path, line=8, tools="'aaNoSuchApi', 'zzNoSuchApi'",
            query=queries[7]["query"].strip(),
        )
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_sealtools(out, "dev")

    @pytest.mark.parametrize("question", ["", "   \n", 42, None, ["a query"]])
    def test_bad_query_text(self, ultra_slice, question):
        out, queries, _ = ultra_slice
        queries[6]["question"] = question
        path = _write_jsonl(out / "test.json", queries)
        msg = MSG_BAD_QUERY.format(path=path, line=7, value=question)
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_ultratool(out)

    def test_missing_query_field(self, seal_slice):
        out, queries, _, _ = seal_slice
        del queries[2]["query"]
        path = _write_jsonl(out / "dev.jsonl", queries)
        msg = MSG_MISSING_FIELD.format(path=path, line=3, field="query")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_sealtools(out, "dev")

    @pytest.mark.parametrize("calling", [[], {"api": "x"}, None])
    def test_bad_gold_list(self, seal_slice, calling):
        out, queries, _, _ = seal_slice
        queries[1]["calling"] = calling
        path = _write_jsonl(out / "dev.jsonl", queries)
        msg = MSG_BAD_GOLD.format(path=path, line=2, field="calling", value=calling)
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_sealtools(out, "dev")

    def test_bad_gold_entry(self, ultra_slice):
        out, queries, _ = ultra_slice
        queries[0]["tools"] = ["file_write"]
        path = _write_jsonl(out / "test.json", queries)
        msg = f"{path}, line 1: gold tool entry 'file_write'"
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_ultratool(out)

    def test_empty_query_file(self, ultra_slice):
        out, _, _ = ultra_slice
        (out / "test.json").write_text("\n\n")
        msg = MSG_NO_QUERIES.format(path=out / "test.json")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_ultratool(out)

    def test_null_or_missing_label_is_unknown_risk(self, ultra_slice):
        out, _, labels = ultra_slice
        first, second = list(labels)[:2]
        labels[first]["risk_level"] = None
        del labels[second]["risk_level"]
        (out / "ultratool_risk_labels_resolved.json").write_text(json.dumps(labels))
        reg = load_ultratool(out).registry
        assert reg.risk_of([first, second]).tolist() == [UNKNOWN_RISK, UNKNOWN_RISK]
        assert not reg.risk_known[:2].any() and (reg.risk[:2] >= 3).all()

    def test_bad_risk_label_names_file_and_tool(self, ultra_slice):
        out, _, labels = ultra_slice
        name = list(labels)[1]
        labels[name]["risk_level"] = 7
        path = out / "ultratool_risk_labels_resolved.json"
        path.write_text(json.dumps(labels))
        with pytest.raises(ValueError, match=re.escape(f"{path}: Tool {name!r}: risk must be")):
            load_ultratool(out)

    def test_sealtools_unlabelled_tool_is_unknown_risk(self, seal_slice):
        out, _, tools, labels = seal_slice
        unlabelled = tools[0]["api_name"]
        del labels[unlabelled]
        labels["notInToolJsonl"] = {"risk_level": 1, "description": "ignored"}
        (out / "sealtools_risk_labels_resolved.json").write_text(json.dumps(labels))
        reg = load_sealtools(out, "dev").registry
        assert reg.risk_of(unlabelled) == UNKNOWN_RISK
        assert reg.risk_known.sum() == len(reg) - 1
        assert "notInToolJsonl" not in reg

    def test_sealtools_exact_duplicate_is_kept_once(self, seal_slice):
        out, _, tools, _ = seal_slice
        _write_jsonl(out / "tool.jsonl", tools + [tools[3]])
        reg = load_sealtools(out, "dev").registry
        assert len(reg) == len({t["api_name"] for t in tools})
        assert reg.names.tolist().count(tools[3]["api_name"]) == 1

    def test_sealtools_conflicting_duplicate_is_an_error(self, seal_slice):
        out, _, tools, _ = seal_slice
        clash = dict(tools[3], api_description="Something else entirely")
        path = _write_jsonl(out / "tool.jsonl", tools + [clash])
        msg = MSG_CONFLICTING_TOOL.format(
            path=path, line=len(tools) + 1, name=clash["api_name"], first=4
        )
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_sealtools(out, "dev")

    def test_out_domain_split_is_read_by_name(self, seal_slice):
        out, queries, _, _ = seal_slice
        _write_jsonl(out / "test_out_domain.jsonl", queries[:3])
        ds = load_sealtools(out, "test_out_domain")
        assert ds.split == "test_out_domain" and len(ds) == 3


# -- the dataset object -------------------------------------------------------------------------
@pytest.fixture
def toy(tiny_registry):
    return ToolRetrievalDataset(
        name="toy",
        split="test",
        registry=tiny_registry,
        queries=["read my notes", "mail the weather", "wipe the disk", "ls"],
        relevant=[{"read_file"}, ["send_email", "get_weather"], ("delete_file",), {"list_dir"}],
        domains=["files", "mail", "files", "files"],
    )


class TestDataset:
    def test_normalises_fields(self, toy):
        assert toy.relevant[1] == frozenset({"send_email", "get_weather"})
        assert all(isinstance(g, frozenset) for g in toy.relevant)
        assert toy.query_ids == ["0", "1", "2", "3"]
        assert len(toy) == 4
        assert repr(toy) == (
            "ToolRetrievalDataset(name='toy', split='test', n_queries=4, n_tools=6)"
        )

    def test_frozen(self, toy):
        with pytest.raises(dataclasses.FrozenInstanceError):
            toy.queries = []

    @pytest.mark.parametrize(
        "indices",
        [[2, 0], np.array([2, 0]), np.array([2, 0], dtype=np.int32), range(2, -1, -2), [-2, 0]],
    )
    def test_subset(self, toy, indices):
        sub = toy.subset(indices)
        assert sub.registry is toy.registry
        assert sub.queries == ["wipe the disk", "read my notes"]
        assert sub.relevant == [{"delete_file"}, {"read_file"}]
        assert sub.domains == ["files", "files"] and sub.query_ids == ["2", "0"]
        assert (sub.name, sub.split) == ("toy", "test")

    def test_subset_mask_repeats_and_empty(self, toy):
        assert toy.subset(np.array([True, False, False, True])).query_ids == ["0", "3"]
        assert toy.subset([1, 1]).queries == ["mail the weather"] * 2
        empty = toy.subset([])
        assert len(empty) == 0 and empty.domains == [] and empty.registry is toy.registry
        assert toy.subset(np.array([], dtype=np.int64)).queries == []

    @pytest.mark.parametrize(
        ("indices", "got"),
        [
            ([0.0, 1.0], "dtype float64"),
            (["0"], "dtype <U1"),
            ([[0, 1]], "an array of shape (1, 2)"),
            (np.ones(3, dtype=bool), "a mask of 3 entries for 4"),
        ],
    )
    def test_subset_bad_indices(self, toy, indices, got):
        with pytest.raises(ValueError, match=re.escape(MSG_SUBSET_INDICES.format(got=got))):
            toy.subset(indices)

    @pytest.mark.parametrize("index", [4, -5, 100])
    def test_subset_out_of_range(self, toy, index):
        with pytest.raises(IndexError, match=re.escape(MSG_SUBSET_RANGE.format(index=index, n=4))):
            toy.subset([0, index])

    def test_subset_without_domains(self, sealtools_dev):
        sub = sealtools_dev.subset([5, 3])
        assert sub.domains is None and sub.query_ids == ["dev-easy-5", "dev-easy-3"]
        assert sub.registry is sealtools_dev.registry

    def test_kfold_subsets_cover_every_query_once(self, ultratool):
        seen = []
        for train, test in KFold(5, shuffle=True, random_state=0).split(ultratool.queries):
            tr, te = ultratool.subset(train), ultratool.subset(test)
            assert tr.registry is te.registry is ultratool.registry
            assert not set(tr.query_ids) & set(te.query_ids)
            seen += te.query_ids
        assert sorted(seen) == sorted(ultratool.query_ids)

    @settings(deadline=None, max_examples=30)
    @given(st.lists(st.integers(-4, 3), max_size=10))
    def test_subset_is_positional_indexing(self, idx):
        reg = ToolRegistry.from_records(
            [{"name": n, "description": n, "risk": 1} for n in "wxyz"]
        )
        ds = ToolRetrievalDataset(
            name="toy", split="t", registry=reg, queries=["a", "b", "c", "d"],
            relevant=[{"w"}, {"x"}, {"y"}, {"z", "w"}],
        )
        sub = ds.subset(idx)
        assert sub.queries == [ds.queries[i] for i in idx]
        assert sub.relevant == [ds.relevant[i] for i in idx]
        assert sub.query_ids == [ds.query_ids[i] for i in idx]

    def test_length_mismatch(self, tiny_registry):
        msg = MSG_DATASET_LENGTHS.format(n=2, counts={"relevant": 1, "query_ids": 2})
        with pytest.raises(ValueError, match=re.escape(msg)):
            ToolRetrievalDataset("x", "t", tiny_registry, ["a", "b"], [{"read_file"}])
        with pytest.raises(ValueError, match="'domains': 1"):
            ToolRetrievalDataset(
                "x", "t", tiny_registry, ["a", "b"], [{"read_file"}] * 2, domains=["d"]
            )

    def test_unknown_or_empty_gold(self, tiny_registry):
        msg = MSG_DATASET_UNKNOWN.format(i=1, tools=["nope"])
        with pytest.raises(ValueError, match=re.escape(msg)):
            ToolRetrievalDataset("x", "t", tiny_registry, ["a", "b"], [{"read_file"}, {"nope"}])
        with pytest.raises(ValueError, match=re.escape(MSG_DATASET_EMPTY_GOLD.format(i=0))):
            ToolRetrievalDataset("x", "t", tiny_registry, ["a"], [set()])


# -- users' own files ---------------------------------------------------------------------------
CSV = (
    "name,description,risk,permissions,notes\n"
    "read_file,Read a text file,1,none,ignored column\n"
    'send_email,"Send an email, with attachments",3,,\n'
    "run_shell,Run a bash command,,,\n"
    "sync_files,Sync folders,2,file_write; network_access,\n"
)


@pytest.fixture
def csv_path(tmp_path):
    path = tmp_path / "tools.csv"
    path.write_text(CSV, encoding="utf-8")
    return path


class TestRegistryCsv:
    def test_load(self, csv_path):
        reg = load_registry_csv(csv_path)
        assert reg.names.tolist() == ["read_file", "send_email", "run_shell", "sync_files"]
        assert reg.descriptions[1] == "Send an email, with attachments"
        assert reg.risk.tolist() == [1, 3, UNKNOWN_RISK, 2]
        assert reg.permissions == (
            frozenset(),  # "none" declares no permissions
            frozenset(),  # blank: derived, and nothing matches
            frozenset({"shell_execution"}),  # blank: derived
            frozenset({"file_write", "network_access"}),  # explicit
        )
        assert load_registry_csv(str(csv_path)) == reg

    def test_byte_order_mark_and_keywords(self, csv_path):
        csv_path.write_text(CSV, encoding="utf-8-sig")
        reg = load_registry_csv(csv_path, permission_keywords={"credential_handling": ["email"]})
        assert reg.names[0] == "read_file"
        assert reg.permissions[1] == {"credential_handling"}
        assert reg.permissions[2] == frozenset()

    def test_minimal_columns(self, tmp_path):
        path = tmp_path / "t.csv"
        path.write_text("description,name\nLook up the forecast,get_weather\n")
        reg = load_registry_csv(path)
        assert reg.names.tolist() == ["get_weather"] and reg.risk.tolist() == [UNKNOWN_RISK]

    def test_round_trip_of_a_real_registry(self, ultratool, tmp_path):
        path = tmp_path / "ultratool.csv"
        ultratool.registry.to_frame().to_csv(path, index=False)
        assert load_registry_csv(path) == ultratool.registry

    @pytest.mark.parametrize("risk", ["0", "6", "2.5", "three", "True", "-1"])
    def test_bad_risk(self, csv_path, risk):
        csv_path.write_text(CSV.replace("Run a bash command,,", f"Run a bash command,{risk},"))
        msg = MSG_CSV_RISK.format(path=csv_path, line=4, name="run_shell", value=risk)
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_registry_csv(csv_path)

    def test_missing_columns(self, tmp_path):
        path = tmp_path / "t.csv"
        path.write_text("tool,description\na,b\n")
        msg = MSG_CSV_COLUMNS.format(
            path=path, required=["name", "description"], header=["tool", "description"]
        )
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_registry_csv(path)

    def test_unknown_permission(self, csv_path):
        csv_path.write_text(CSV.replace("file_write; network_access", "file_write;root"))
        msg = f"{csv_path}, line 5: permissions of tool 'sync_files'"
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_registry_csv(csv_path)

    def test_registry_errors_name_the_file(self, csv_path):
        csv_path.write_text(CSV + "read_file,Again,1,,\n")
        msg = f"{csv_path}: Duplicate tool name 'read_file'"
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_registry_csv(csv_path)
        csv_path.write_text(CSV + "blank_tool,  ,1,,\n")
        msg = f"{csv_path}: Tool 'blank_tool': description"
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_registry_csv(csv_path)

    def test_missing_and_empty_file(self, tmp_path):
        path = tmp_path / "none.csv"
        with pytest.raises(FileNotFoundError, match=re.escape(MSG_MISSING_FILE.format(path=path))):
            load_registry_csv(path)
        path.write_text("name,description\n")
        with pytest.raises(ValueError, match="holds no tools"):
            load_registry_csv(path)


class TestQueriesJsonl:
    def _write(self, path, rows, raw=None):
        return _write_jsonl(path, rows, raw)

    @pytest.fixture
    def reg(self, csv_path):
        return load_registry_csv(csv_path)

    def test_load(self, tmp_path, reg):
        path = self._write(
            tmp_path / "my_queries.jsonl",
            [
                {"query": " Read notes.txt \n", "relevant": ["read_file"]},
                {"query": "Mail it", "relevant": ["send_email", "read_file", "send_email"],
                 "id": "q-7"},
            ],
        )
        ds = load_queries_jsonl(path, reg)
        assert (ds.name, ds.split) == ("my_queries", "custom")
        assert ds.queries == ["Read notes.txt", "Mail it"]
        assert ds.relevant == [{"read_file"}, {"send_email", "read_file"}]
        assert ds.query_ids == ["line1", "q-7"] and ds.domains is None
        assert ds.registry is reg
        named = load_queries_jsonl(str(path), reg, name="mine", split="eval")
        assert (named.name, named.split) == ("mine", "eval")

    def test_domains(self, tmp_path, reg):
        rows = [{"query": "a", "relevant": ["read_file"], "domain": "files"},
                {"query": "b", "relevant": ["send_email"], "domain": "mail"}]
        assert load_queries_jsonl(self._write(tmp_path / "q.jsonl", rows), reg).domains == [
            "files", "mail"
        ]
        for mixed in ([rows[0], {"query": "b", "relevant": ["send_email"]}],
                      [{"query": "b", "relevant": ["send_email"]}, rows[0]]):
            path = self._write(tmp_path / "q.jsonl", mixed)
            msg = MSG_MIXED_DOMAINS.format(path=path, line=2)
            with pytest.raises(ValueError, match=re.escape(msg)):
                load_queries_jsonl(path, reg)

    def test_unknown_gold(self, tmp_path, reg):
        path = self._write(
            tmp_path / "q.jsonl",
            [
                {"query": "a", "relevant": ["read_file"]},
                {"query": "b", "relevant": ["format_disk"]},
            ],
        )
        msg = MSG_UNKNOWN_GOLD.format(path=path, line=2, tools="'format_disk'", query="b")
        with pytest.raises(ValueError, match=re.escape(msg)):
            load_queries_jsonl(path, reg)

    @pytest.mark.parametrize(
        ("row", "pattern"),
        [
            ({"query": "", "relevant": ["read_file"]}, MSG_BAD_QUERY),
            ({"query": 3, "relevant": ["read_file"]}, MSG_BAD_QUERY),
            ({"relevant": ["read_file"]}, MSG_MISSING_FIELD),
            ({"query": "a"}, MSG_MISSING_FIELD),
            ({"query": "a", "relevant": []}, MSG_BAD_GOLD),
            ({"query": "a", "relevant": "read_file"}, MSG_BAD_GOLD),
            ({"query": "a", "relevant": [""]}, "{path}, line {line}: gold tool entry"),
            ({"query": "a", "relevant": [3]}, "{path}, line {line}: gold tool entry"),
            (
                {"query": "a", "relevant": ["read_file"], "domain": 3},
                "{path}, line {line}: 'domain'",
            ),
        ],
    )
    def test_bad_lines_name_the_line(self, tmp_path, reg, row, pattern):
        path = self._write(tmp_path / "q.jsonl", [{"query": "ok", "relevant": ["read_file"]}, row])
        with pytest.raises(ValueError, match=_prefix(pattern, path=path, line=2)):
            load_queries_jsonl(path, reg)

    def test_malformed_and_missing(self, tmp_path, reg):
        path = self._write(tmp_path / "q.jsonl", [{"query": "a", "relevant": ["read_file"]}] * 3,
                           {1: '{"query": "a", "relevant": ["read_file"]'})
        with pytest.raises(ValueError, match=_prefix(MSG_BAD_JSON, path=path, line=2)):
            load_queries_jsonl(path, reg)
        missing = tmp_path / "missing.jsonl"
        msg = MSG_MISSING_FILE.format(path=missing)
        with pytest.raises(FileNotFoundError, match=re.escape(msg)):
            load_queries_jsonl(missing, reg)
        path.write_text("")
        with pytest.raises(ValueError, match=re.escape(MSG_NO_QUERIES.format(path=path))):
            load_queries_jsonl(path, reg)

    def test_demo_pair_against_a_registry_from_records(self, tmp_path):
        reg = ToolRegistry.from_records(
            [{"name": "get_weather", "description": "Look up the forecast", "risk": 1}]
        )
        path = self._write(tmp_path / "q.jsonl", [{"query": "Rain?", "relevant": ["get_weather"]}])
        assert load_queries_jsonl(path, reg).relevant == [{"get_weather"}]
