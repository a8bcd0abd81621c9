"""The command line: fit, rank and evaluate on the packaged demo data; bad input; --help."""

import json
from importlib import resources

import numpy as np
import pytest

from skriskrank import load
from skriskrank._cli import main
from skriskrank.metrics import ranking_report

pytestmark = pytest.mark.slow

QUERY = "Drop the old sessions table"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The demo catalogue, 150 training and 40 test queries as JSONL, and a fitted model."""
    data = resources.files("skriskrank") / "data"
    lines = (data / "demo_queries.jsonl").read_text(encoding="utf-8").splitlines()
    root = tmp_path_factory.mktemp("cli")
    train, test = root / "train.jsonl", root / "test.jsonl"
    train.write_text("\n".join(lines[:150]) + "\n", encoding="utf-8")
    test.write_text("\n".join(lines[-40:]) + "\n", encoding="utf-8")
    with resources.as_file(data / "demo_tools.csv") as tools:
        model = root / "demo.skops"
        argv = ["fit", "--tools", str(tools), "--queries", str(train), "-o", str(model),
                "--epochs", "2", "--need-aware", "--json"]
        yield {"tools": tools, "train": train, "test": test, "model": model, "argv": argv}


@pytest.fixture(scope="module")
def fitted(files):
    # capsys is function-scoped: the fit's JSON summary is checked in its own test.
    assert main(files["argv"]) == 0
    return files


def test_fit_writes_a_model_and_a_json_summary(files, tmp_path, capsys):
    out = tmp_path / "rule.skops"
    assert main(["fit", "--tools", str(files["tools"]), "--queries", str(files["train"]),
                 "-o", str(out), "--epochs", "1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["model"] == str(out)
    assert summary["tools"] == 202 and summary["queries"] == 150
    assert summary["predicted_levels"] == 0  # the CSV declares every level
    assert type(load(summary["model"])[-1]).__name__ == "RuleFilter"


def test_rank_shows_predict_and_its_reasons(fitted, capsys):
    pipe = load(fitted["model"])
    assert pipe[0].show_progress_bar is None  # fit's bars are not saved: rank shows none
    assert main(["rank", str(fitted["model"]), QUERY, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in got["tools"]] == pipe.predict([QUERY])[0].tolist()

    assert main(["rank", str(fitted["model"]), QUERY, "--k", "3", "--explain"]) == 0
    lines = capsys.readouterr().out.splitlines()
    kept = [line for line in lines if line[:3].strip().rstrip(".").isdigit()]
    assert len(kept) == 3
    assert all(" - accepted" in line or " - kept to fill" in line for line in kept)
    # The other lines are deferred tools, each with its reason in words.
    assert all("deferred" in line or "below the relevance floor" in line
               for line in lines if line not in kept)


def test_evaluate_reports_the_metrics_of_predict(fitted, capsys):
    assert main(["evaluate", str(fitted["model"]), "--queries", str(fitted["test"]),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = [json.loads(line) for line in fitted["test"].read_text().splitlines()]
    pipe = load(fitted["model"])
    expected = ranking_report(pipe.predict([r["query"] for r in rows]),
                              [set(r["relevant"]) for r in rows], pipe[0].registry, k=5)
    assert report.keys() == expected.keys() and report["n_queries"] == 40
    np.testing.assert_allclose([report[k] for k in expected], list(expected.values()))


@pytest.mark.parametrize("argv, command", [
    (["fit", "--tools", "no_such_file.json", "--queries", "q.jsonl", "-o", "m.skops"], "fit"),
    (["rank", "no_such_model.skops", "x"], "rank"),
    (["evaluate", "{tools}", "--queries", "{test}"], "evaluate"),  # a CSV is not a model
    (["serve", "{model}", "--tools", "{tools}"], "serve"),
])
def test_bad_input_is_one_line_and_exit_status_2(fitted, capsys, argv, command):
    argv = [a.format(**{k: str(v) for k, v in fitted.items() if k != "argv"}) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"skriskrank {command}: error: ")
    assert "Traceback" not in err[0]


def test_unknown_tool_in_the_queries_names_it(files, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "do it", "relevant": ["no_such_tool"]}\n', encoding="utf-8")
    out = tmp_path / "m.skops"
    assert main(["fit", "--tools", str(files["tools"]), "--queries", str(bad), "-o",
                 str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no_such_tool" in err[0]
    assert not out.exists()


@pytest.mark.parametrize("command", ["fit", "rank", "evaluate", "serve", "demo", "audit"])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: skriskrank {command}")


def test_declared_levels_stay_declared_when_the_auditor_grades_the_rest(tmp_path):
    from skriskrank._cli import _registry

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": [
        {"name": "read_file", "description": "Read a text file"},
        {"name": "delete_file", "description": "Delete a file from disk"}]}), encoding="utf-8")
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"read_file": 1}), encoding="utf-8")
    registry = _registry([tools], labels, "onnx")
    assert registry.risk_source.tolist() == ["declared", "predicted"]
    assert registry.risk[0] == 1 and registry.risk[1] >= 3


@pytest.mark.parametrize("argv, fragment", [
    (["rank", "{model}", QUERY, "--k", "0"], "argument --k: expected a whole number"),
    (["rank", "{model}", QUERY, "--k", "-1"], "argument --k: expected a whole number"),
    (["rank", "{model}", QUERY, "--k", "999"], "k=999 is more than the catalogue's 202 tools"),
    (["rank", "{model}", "x" * 100_000], "the query is 100,000 characters long"),
    (["rank", "{model}", "read \udcff\udcfe file"], "not valid Unicode: character 5"),
    (["rank", "{filter}", QUERY], "holds a RuleFilter, not a pipeline"),
    (["serve", "{filter}"], "holds a RuleFilter, not a pipeline"),
    (["serve", "{model}", "--need-threshold", "nan"], "expected a probability from 0 to 1"),
    (["serve", "{rule}", "--need-threshold", "0.2"], "ends with a RuleFilter; fit it with "
     "--need-aware"),
    (["fit", "--tools", "{tools}", "--queries", "{train}", "-o", "/no/such/dir/m.skops"],
     "the directory /no/such/dir does not exist"),
    (["audit", "{tools}", "--out", "/no/such/dir/a.csv"], "does not exist"),
    (["gateway", "{config}", "--model", "{filter}", "--check"],
     "holds a RuleFilter, not a pipeline"),
    (["fit", "--gateway", "{config}", "--tools", "{tools}", "--log", "l.jsonl", "-o", "m.skops"],
     "argument --tools: not allowed with argument --gateway"),
    (["gateway", "{config}", "--cache", "{config}", "--no-cache", "--check"],
     "give --cache DIR or --no-cache, not both"),
])
def test_probes_of_the_threat_model_are_one_line_and_exit_2(fitted, tmp_path, capsys, argv,
                                                            fragment):
    from skriskrank import RuleFilter, pretrained_pipeline, save
    from skriskrank.datasets import load_demo

    save(RuleFilter(), tmp_path / "filter.skops")
    if "{rule}" in argv:
        save(pretrained_pipeline(load_demo().registry, need_aware=False), tmp_path / "rule.skops")
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"tools": {"command": "mcp-server"}}}')
    paths = {k: str(v) for k, v in fitted.items() if k != "argv"}
    argv = [a.format(filter=tmp_path / "filter.skops", rule=tmp_path / "rule.skops",
                     config=config, **paths) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
    assert len(err[0]) < 400  # an oversized query is not repeated


def test_undecodable_bytes_on_a_real_command_line(fitted):
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "skriskrank", "rank",
                           os.fsencode(str(fitted["model"])), b"read \xff\xfe file"],
                          capture_output=True, timeout=300)
    assert proc.returncode == 2 and proc.stdout == b""
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "not valid Unicode" in lines[0]
