"""The packaged demo catalogue and queries: size, coverage, label sanity and loader errors."""

import csv
import dataclasses
import json
import re
from collections import Counter
from importlib.resources import files

import pytest

from skriskrank import PERMISSION_CATEGORIES, derive_permissions
from skriskrank._permissions import MSG_BAD_PERMISSION
from skriskrank._rubric import MSG_BAD_LEVEL
from skriskrank.datasets import ToolRetrievalDataset
from skriskrank.datasets._demo import (
    DEMO_DOMAINS,
    DEMO_QUERIES_FILE,
    DEMO_TOOLS_FILE,
    MSG_BAD_TOOL_DOMAIN,
    MSG_EMPTY_RATIONALE,
    MSG_QUERY_DOMAINS,
    MSG_TOOL_COLUMNS,
    DemoData,
    _load,
    load_demo,
)

HEADER = ["name", "domain", "description", "risk", "rationale", "permissions"]


@pytest.fixture(scope="module")
def demo():
    return load_demo()


def _risk(demo, names):
    return demo.registry.risk_of(sorted(names))


# -- the catalogue ------------------------------------------------------------------------------
class TestCatalogue:
    def test_shipped_as_package_data(self):
        data = files("skriskrank") / "data"
        assert (data / DEMO_TOOLS_FILE).is_file()
        assert (data / DEMO_QUERIES_FILE).is_file()

    def test_size_and_domains(self, demo):
        assert len(demo.registry) >= 150
        per_domain = Counter(demo.tool_domains.values())
        assert set(per_domain) == set(DEMO_DOMAINS)
        assert len(DEMO_DOMAINS) == 10
        assert min(per_domain.values()) >= 12, per_domain
        assert set(demo.tool_domains) == set(demo.registry.names)

    def test_names_are_unique_snake_case(self, demo):
        names = demo.registry.names.tolist()
        assert len(set(names)) == len(names)
        bad = [n for n in names if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", n)]
        assert not bad

    def test_descriptions_are_one_sentence(self, demo):
        bad = [
            d for d in demo.registry.descriptions
            if not d.endswith(".") or ". " in d[:-1] or len(d) > 120
        ]
        assert not bad

    def test_every_tool_has_a_risk_and_rationale(self, demo):
        assert demo.registry.risk_known.all()
        assert ((demo.registry.risk >= 1) & (demo.registry.risk <= 5)).all()
        assert set(demo.rationales) == set(demo.registry.names)
        assert all(r.strip() for r in demo.rationales.values())

    def test_risk_distribution_is_realistic(self, demo):
        counts = Counter(demo.registry.risk.tolist())
        n = len(demo.registry)
        assert set(counts) == {1, 2, 3, 4, 5}
        # Most tools are safe, risky ones are a solid minority and level 5 is rare.
        assert (counts[1] + counts[2]) / n > 0.5
        assert (counts[3] + counts[4]) / n > 0.2
        assert counts[5] / n < 0.1
        assert counts[1] == max(counts.values())

    def test_permissions_are_valid(self, demo):
        allowed = set(PERMISSION_CATEGORIES)
        assert all(p <= allowed for p in demo.registry.permissions)
        # Explicit categories are used, not derived ones.
        with files("skriskrank").joinpath("data", DEMO_TOOLS_FILE).open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        assert [r["name"] for r in rows] == demo.registry.names.tolist()
        for row, perms in zip(rows, demo.registry.permissions, strict=True):
            # Every cell is explicit: "none" or a ";"-list, never blank (which would derive).
            assert row["permissions"].strip()
            cell = row["permissions"]
            assert perms == (frozenset() if cell == "none" else frozenset(cell.split(";")))

    def test_public_csv_loader_reads_the_same_registry(self, demo):
        from skriskrank.datasets import load_registry_csv

        path = files("skriskrank").joinpath("data", DEMO_TOOLS_FILE)
        assert load_registry_csv(path) == demo.registry

    def test_explicit_no_permissions_are_not_derived(self, demo):
        # The keyword rules would give delete_email file_write; the audited cell says "none".
        desc = demo.registry.descriptions[demo.registry.index_of("delete_email")]
        assert derive_permissions("delete_email", desc) == {"file_write"}
        assert demo.registry.permissions[demo.registry.index_of("delete_email")] == frozenset()
        perms = dict(zip(demo.registry.names, demo.registry.permissions, strict=True))
        assert perms["send_email"] == {"network_access"}
        assert {"shell_execution", "code_execution"} <= perms["run_shell_command"]
        assert "credential_handling" in perms["login_to_website"]

    def test_read_only_and_risky_variants_side_by_side(self, demo):
        risk = dict(zip(demo.registry.names, demo.registry.risk.tolist(), strict=True))
        assert [risk[n] for n in ("read_file", "write_file", "delete_file", "wipe_disk")] == [
            1, 3, 4, 5,
        ]
        assert risk["get_account_balance"] < risk["transfer_funds"]
        assert risk["list_database_tables"] < risk["drop_database_table"] < risk["drop_database"]


# -- the queries --------------------------------------------------------------------------------
class TestQueries:
    def test_size_and_alignment(self, demo):
        assert len(demo) == len(demo.queries) >= 300
        assert len(demo.relevant) == len(demo.domains) == len(demo.queries)

    def test_no_duplicate_queries(self, demo):
        normalised = [" ".join(q.lower().split()) for q in demo.queries]
        dupes = [q for q, c in Counter(normalised).items() if c > 1]
        assert not dupes

    def test_gold_tools_exist_and_are_few(self, demo):
        for gold in demo.relevant:
            assert 1 <= len(gold) <= 3
            assert all(name in demo.registry for name in gold)

    def test_query_domain_is_one_of_its_gold_tools_domains(self, demo):
        assert set(demo.domains) == set(DEMO_DOMAINS)
        for domain, gold in zip(demo.domains, demo.relevant, strict=True):
            assert domain in {demo.tool_domains[t] for t in gold}

    def test_enough_queries_need_a_risky_tool(self, demo):
        risky = sum(int(_risk(demo, g).max() >= 3) for g in demo.relevant)
        assert risky >= 60
        # ...and enough need only safe tools, so risk is not a proxy for relevance.
        assert len(demo) - risky >= 100

    def test_every_tool_is_gold_for_several_queries(self, demo):
        uses = Counter(t for gold in demo.relevant for t in gold)
        rare = [n for n in demo.registry.names if uses[n] < 3]
        assert not rare

    def test_some_queries_span_domains(self, demo):
        multi = [g for g in demo.relevant if len({demo.tool_domains[t] for t in g}) > 1]
        assert len(multi) >= 30

    def test_safe_tool_for_risky_sounding_request(self, demo):
        by_query = dict(zip(demo.queries, demo.relevant, strict=True))
        gold = by_query[
            "Before I clean up, list everything in /var/tmp so I can see what would be deleted"
        ]
        assert gold == {"list_directory"}


# -- the DemoData object ------------------------------------------------------------------------
class TestDemoData:
    def test_frozen(self, demo):
        with pytest.raises(dataclasses.FrozenInstanceError):
            demo.queries = []

    def test_repr(self, demo):
        assert repr(demo) == f"DemoData(n_queries={len(demo)}, n_tools={len(demo.registry)})"

    def test_as_dataset(self, demo):
        ds = demo.as_dataset()
        assert ds.registry is demo.registry
        assert ds.queries == demo.queries
        assert ds.relevant == demo.relevant
        assert ds.domains == demo.domains
        assert (ds.name, ds.split) == ("demo", "all")
        assert type(ds) is ToolRetrievalDataset and ds.query_ids == demo.query_ids
        # DemoData is itself a dataset: subsets work without as_dataset().
        assert demo.subset([1, 0]).queries == demo.queries[1::-1]

    def test_load_is_deterministic(self, demo):
        again = load_demo()
        assert isinstance(again, DemoData)
        assert again.registry == demo.registry
        assert again.queries == demo.queries


# -- loader errors on malformed files -----------------------------------------------------------
def _write(tmp_path, tools, queries, header=HEADER):
    tools_file = tmp_path / "tools.csv"
    with tools_file.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(tools)
    queries_file = tmp_path / "queries.jsonl"
    queries_file.write_text(
        "\n".join(q if isinstance(q, str) else json.dumps(q) for q in queries) + "\n",
        encoding="utf-8",
    )
    return tools_file, queries_file


TOOLS = [
    ["read_file", "files", "Read a file.", "1", "Read-only.", ""],
    ["delete_file", "files", "Delete a file.", "4", "Irreversible.", "file_write"],
    ["run_shell", "shell", "Run a command.", "4", "Arbitrary code.", "none"],
]
QUERY = {"query": "Open notes.txt", "relevant": ["read_file"], "domain": "files"}


class TestLoaderErrors:
    def test_minimal_files_load(self, tmp_path):
        demo = _load(*_write(tmp_path, TOOLS, [QUERY, {**QUERY, "query": "Read todo.md"}]))
        assert demo.queries == ["Open notes.txt", "Read todo.md"]
        assert demo.relevant == [frozenset({"read_file"})] * 2
        # "" and "none" both mean no permissions, even for a tool the keywords would flag.
        assert demo.registry.permissions == (frozenset(), frozenset({"file_write"}), frozenset())

    def test_unknown_gold_tool_is_named(self, tmp_path):
        bad = {**QUERY, "relevant": ["read_file", "wipe_disk"]}
        with pytest.raises(ValueError,
                           match=r"queries\.jsonl, line 2: gold tool\(s\) 'wipe_disk'"):
            _load(*_write(tmp_path, TOOLS, [QUERY, bad]))

    @pytest.mark.parametrize(
        "line",
        [
            "not json",
            {"query": "", "relevant": ["read_file"], "domain": "files"},
            {"query": "Open it", "relevant": [], "domain": "files"},
            {"query": "Open it", "relevant": "read_file", "domain": "files"},
        ],
    )
    def test_malformed_query_line(self, tmp_path, line):
        with pytest.raises(ValueError, match=r"queries\.jsonl, line 1: "):
            _load(*_write(tmp_path, TOOLS, [line]))

    def test_queries_need_a_domain(self, tmp_path):
        line = {"query": "Open it", "relevant": ["read_file"]}
        with pytest.raises(ValueError, match=re.escape(MSG_QUERY_DOMAINS.format(
                file="queries.jsonl"))):
            _load(*_write(tmp_path, TOOLS, [line]))

    def test_wrong_columns(self, tmp_path):
        header = ["name", "description", "risk"]
        msg = MSG_TOOL_COLUMNS.format(file="tools.csv", expected=HEADER, got=header)
        with pytest.raises(ValueError, match=re.escape(msg)):
            _load(*_write(tmp_path, [r[:1] + r[2:4] for r in TOOLS], [QUERY], header=header))

    def test_unknown_domain(self, tmp_path):
        tools = TOOLS + [["fly", "drones", "Fly a drone.", "3", "Physical risk.", ""]]
        msg = MSG_BAD_TOOL_DOMAIN.format(
            file="tools.csv", name="fly", domain="drones", allowed=list(DEMO_DOMAINS)
        )
        with pytest.raises(ValueError, match=re.escape(msg)):
            _load(*_write(tmp_path, tools, [QUERY]))

    def test_empty_rationale(self, tmp_path):
        tools = TOOLS + [["list_directory", "files", "List a folder.", "1", " ", ""]]
        msg = MSG_EMPTY_RATIONALE.format(file="tools.csv", name="list_directory")
        with pytest.raises(ValueError, match=re.escape(msg)):
            _load(*_write(tmp_path, tools, [QUERY]))

    @pytest.mark.parametrize("cell", ["", "high", "6", "2.5"])
    def test_bad_or_missing_risk_is_rejected_not_unknown(self, tmp_path, cell):
        tools = TOOLS + [["list_directory", "files", "List a folder.", cell, "Read-only.", ""]]
        with pytest.raises(ValueError, match=re.escape("Tool 'list_directory': risk must be")):
            _load(*_write(tmp_path, tools, [QUERY]))
        assert MSG_BAD_LEVEL.startswith("{what}: risk must be")

    def test_bad_permission(self, tmp_path):
        tools = TOOLS + [["sudo", "shell", "Run as root.", "5", "Root.", "root_access"]]
        msg = MSG_BAD_PERMISSION.format(
            name="sudo", perm="root_access", allowed=list(PERMISSION_CATEGORIES)
        )
        with pytest.raises(ValueError, match=re.escape(msg)):
            _load(*_write(tmp_path, tools, [QUERY]))
