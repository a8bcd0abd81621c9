"""Tests for RiskAuditor: the scikit-learn contract, the conservative rule, hints, audit, CLI."""

import copy
import itertools
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import cohen_kappa_score
from sklearn.utils._param_validation import InvalidParameterError

from skriskrank import HINT_DEFAULTS, RiskAuditor, ToolRegistry, hint_bounds, load_tools
from skriskrank._auditor import (
    DEFAULT_COVERAGE,
    MSG_BAD_FILE,
    MSG_ONE_LEVEL,
    MSG_X_EMPTY,
    MSG_X_TEXT,
    MSG_X_TYPE,
    MSG_Y_BOUNDS,
    MSG_Y_LENGTH,
    MSG_Y_LEVEL,
    MSG_Y_MAPPING,
    MSG_Y_SCORE,
    MSG_Y_UNKNOWN,
    PRETRAINED_FILE,
)
from skriskrank._axes import AXES, DESTRUCTIVE_VERBS, states_destruction

TRAIN = [
    ("get_weather", "Look up the weather forecast for a city", 1),
    ("read_file", "Read the contents of a text file", 1),
    ("list_dir", "List the files in a folder", 1),
    ("search_web", "Search the web for pages", 1),
    ("convert_units", "Convert between units of measure", 1),
    ("book_table", "Reserve a table at a restaurant", 2),
    ("add_calendar_event", "Add an event to the user's calendar", 2),
    ("update_profile", "Update the user's profile name and photo", 2),
    ("send_email", "Send an email to a contact", 3),
    ("read_medical_records", "Read a patient's medical records", 3),
    ("write_file", "Overwrite a file on disk with new content", 3),
    ("delete_file", "Permanently delete a file from disk", 4),
    ("transfer_money", "Transfer money from the user's bank account", 4),
    ("run_shell", "Run any shell command as root on the server", 5),
    ("drop_database", "Drop every table of the production database", 5),
]


@pytest.fixture(scope="module")
def train_registry():
    return ToolRegistry.from_records(
        [{"name": n, "description": d, "risk": r} for n, d, r in TRAIN]
    )


@pytest.fixture(scope="module")
def fitted(train_registry):
    return RiskAuditor(min_df=1, show_progress_bar=False).fit(train_registry)


def _with_coverage(auditor, coverage):
    """A shallow copy with another coverage: the module's fitted auditor stays as it is."""
    return copy.copy(auditor).set_params(coverage=coverage)


def _mcp(name, desc, hints=None):
    tool = {"name": name, "description": desc, "inputSchema": {"type": "object"}}
    if hints is not None:
        tool["annotations"] = hints
    return tool


class TestContract:
    def test_params_round_trip_and_clone(self):
        a = RiskAuditor(coverage=0.7, C=2.0)
        assert a.get_params()["coverage"] == 0.7
        b = clone(a)
        assert b.get_params() == a.get_params()
        assert b.set_params(coverage=0.5).coverage == 0.5
        assert RiskAuditor().coverage == DEFAULT_COVERAGE

    def test_tags_say_strings_not_arrays(self):
        tags = RiskAuditor().__sklearn_tags__()
        assert tags.input_tags.string and not tags.input_tags.two_d_array
        assert tags.estimator_type == "classifier"

    @pytest.mark.parametrize("params", [
        {"coverage": 0.0}, {"coverage": 1.5}, {"C": 0}, {"review_margin": 0.7},
        {"n_lexical_features": 0}, {"lexical_weight": -1.0}])
    def test_bad_params(self, params, train_registry):
        with pytest.raises(InvalidParameterError):
            RiskAuditor(**params).fit(train_registry)

    def test_not_fitted(self):
        with pytest.raises(NotFittedError):
            RiskAuditor().predict(["x: y"])

    def test_fitted_attributes(self, fitted):
        assert fitted.classes_.tolist() == [1, 2, 3, 4, 5]
        n_axes = 2 * len(AXES)  # each axis read from the name and from the text
        assert fitted.coef_.shape == (5, fitted.embedding_dim_ + fitted.n_lexical_features
                                      + n_axes)
        assert fitted.coef_.dtype == np.float32
        assert fitted.idf_.shape == (fitted.n_lexical_features,)

    def test_fit_on_texts_equals_fit_on_registry(self, fitted, train_registry):
        texts = train_registry.texts
        other = RiskAuditor(min_df=1, show_progress_bar=False).fit(
            texts, [r for *_, r in TRAIN])
        np.testing.assert_allclose(other.coef_, fitted.coef_, atol=1e-6)

    def test_missing_level_is_left_out(self):
        # No level 5 in y: its column is there, with probability zero.
        rows = [t for t in TRAIN if t[2] < 5]
        a = RiskAuditor(min_df=1, coverage=0.5).fit(
            [f"{n}: {d}" for n, d, _ in rows], [r for *_, r in rows])
        P = a.predict_proba(["run_shell: Run any shell command as root on the server"])
        assert P.shape == (1, 5) and P[0, 4] == 0.0

    def test_two_levels(self):
        texts = [f"{n}: {d}" for n, d, _ in TRAIN]
        y = [1 if r < 3 else 4 for *_, r in TRAIN]
        a = RiskAuditor(min_df=1, coverage=0.5).fit(texts, y)
        P = a.predict_proba(texts)
        # A tool whose name says it destroys has its probability below 3 moved to 3.
        floor = states_destruction([n for n, *_ in TRAIN])
        assert floor.any() and (P[floor, :2] == 0).all()
        assert (P[~floor][:, [1, 2, 4]] == 0).all()
        # The same probabilities as scikit-learn's binary model on the same features.
        from sklearn.linear_model import LogisticRegression
        from sklearn.utils.class_weight import compute_sample_weight

        F = a._features([n for n, *_ in TRAIN], texts)
        lr = LogisticRegression(C=a.C, max_iter=5000, tol=1e-6).fit(  # sqrt_balanced weights
            F, y, sample_weight=np.sqrt(compute_sample_weight("balanced", y)))
        np.testing.assert_allclose(P[~floor][:, [0, 3]], lr.predict_proba(F)[~floor], atol=1e-5)
        assert a.score(texts, y) > 0.5

    def test_proba_and_predict(self, fitted, train_registry):
        P = fitted.predict_proba(train_registry)
        assert P.shape == (len(TRAIN), 5)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        median = _with_coverage(fitted, 0.5).predict(train_registry)
        y = np.array([r for *_, r in TRAIN])
        # Fitted on these very tools: the median level is right (or one off) for every one.
        assert np.all(np.abs(median - y) <= 1)
        assert fitted.score(train_registry) == pytest.approx(
            cohen_kappa_score(y, fitted.predict(train_registry), weights="quadratic"))


class TestInputErrors:
    def test_x_type(self):
        with pytest.raises(ValueError, match=re.escape(MSG_X_TYPE.format(type="str"))):
            RiskAuditor().fit("read_file: Read a file", [1])

    def test_x_empty_and_bad_text(self):
        with pytest.raises(ValueError, match=re.escape(MSG_X_EMPTY)):
            RiskAuditor().fit([], [])
        with pytest.raises(ValueError, match=re.escape(MSG_X_TEXT.format(i=1, value=""))):
            RiskAuditor().fit(["a: b", ""], [1, 2])

    def test_y_length_and_level(self, train_registry):
        with pytest.raises(ValueError, match=re.escape(MSG_Y_LENGTH.format(n=15, got=2))):
            RiskAuditor().fit(train_registry, [1, 2])
        y = [r for *_, r in TRAIN]
        y[3] = 7
        msg = MSG_Y_LEVEL.format(tool="tool 'search_web'", value=7)
        with pytest.raises(ValueError, match=re.escape(msg)):
            RiskAuditor().fit(train_registry, y)
        with pytest.raises(ValueError, match=re.escape(MSG_Y_LEVEL.format(tool="y[1]",
                                                                          value=2.5))):
            RiskAuditor().fit(["a: b", "c: d"], [1, 2.5])

    def test_y_by_name(self, fitted, train_registry):
        by_name = {n: r for n, _, r in reversed(TRAIN)}
        other = RiskAuditor(min_df=1).fit(train_registry, by_name)
        np.testing.assert_allclose(other.coef_, fitted.coef_, atol=1e-6)
        del by_name["list_dir"]
        with pytest.raises(ValueError, match=re.escape(
                MSG_Y_LEVEL.format(tool="tool 'list_dir'", value=None))):
            RiskAuditor().fit(train_registry, by_name)
        with pytest.raises(ValueError, match=re.escape(MSG_Y_MAPPING)):
            RiskAuditor().fit(["a: b"], {"a": 1})

    def test_unlabelled_registry(self):
        reg = ToolRegistry.from_records([
            {"name": "a", "description": "x", "risk": 1}, {"name": "b", "description": "y"}])
        with pytest.raises(ValueError, match=re.escape(MSG_Y_UNKNOWN.format(n=1, name="b"))):
            RiskAuditor().fit(reg)

    def test_single_level(self):
        with pytest.raises(ValueError, match=re.escape(MSG_ONE_LEVEL.format(levels=[2]))):
            RiskAuditor().fit(["a: b", "c: d"], [2, 2])


class TestConservativeRuleAndHints:
    @settings(max_examples=25)
    @given(st.floats(0.01, 1.0), st.floats(0.01, 1.0))
    def test_coverage_is_monotone(self, fitted, train_registry, c1, c2):
        lo, hi = sorted((c1, c2))
        P = fitted.predict_proba(train_registry)
        assert np.all(fitted._quantile(P, hi) >= fitted._quantile(P, lo))

    def test_coverage_on_predict(self, fitted, train_registry):
        levels = [_with_coverage(fitted, c).predict(train_registry)
                  for c in (0.3, 0.5, 0.8, 0.95, 1.0)]
        for a, b in itertools.pairwise(levels):
            assert np.all(b >= a)

    @settings(max_examples=30)
    @given(st.fixed_dictionaries({}, optional={k: st.booleans() for k in HINT_DEFAULTS}),
           st.sampled_from([t[:2] for t in TRAIN]), st.floats(0.05, 1.0))
    def test_untrusted_hints_never_lower_a_level(self, fitted, hints, tool, coverage):
        name, desc = tool
        plain = load_tools([_mcp(name, desc)])
        hinted = load_tools([_mcp(name, desc, hints)])
        a = _with_coverage(fitted, coverage)
        base, with_hints = a.predict(plain)[0], a.predict(hinted)[0]
        assert with_hints >= base
        if hinted.declares_destructive[0]:
            assert with_hints >= 3

    def test_destructive_hint_floors_and_trusted_read_only_caps(self, fitted):
        tools = [_mcp("get_weather", "Look up the weather forecast for a city",
                      {"destructiveHint": True}),
                 _mcp("drop_database", "Drop every table of the production database",
                      {"readOnlyHint": True})]
        untrusted = load_tools(tools, scan=False)
        trusted = load_tools(tools, trust_hints=True, scan=False)
        med = _with_coverage(fitted, 0.5)
        assert med.predict(untrusted).tolist()[0] >= 3
        assert med.predict(untrusted).tolist()[1] >= 4  # read-only lowers nothing untrusted
        assert med.predict(trusted).tolist()[1] <= 3
        # A read-only hint on a tool that drops tables is a contradiction: flagged, and a
        # flag outranks a trusted hint (fail-closed).
        scanned = load_tools(tools, trust_hints=True)
        assert scanned.flags[1] == {"hint_mismatch"} and med.predict(scanned)[1] >= 4
        P = med.predict_proba(trusted)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        assert P[0, :2].sum() == 0.0 and P[1, 3:].sum() == 0.0

    def test_texts_have_no_hints(self, fitted):
        # Plain texts carry no hints: the same as an unannotated registry.
        reg = load_tools([_mcp("delete_file", "Permanently delete a file from disk")])
        np.testing.assert_allclose(fitted.predict_proba(reg),
                                   fitted.predict_proba(reg.texts))


class TestBoundsAndAxes:
    """Learning from bounds on levels (the rubric's reading of hints) and the name rule."""

    TEXTS = [f"{n}: {d}" for n, d, _ in TRAIN]
    LEVELS = [r for *_, r in TRAIN]

    def test_exact_bounds_equal_levels(self):
        # [l, l] is the level l: the same fit, weight for weight.
        a = RiskAuditor(min_df=1).fit(self.TEXTS, self.LEVELS)
        b = RiskAuditor(min_df=1).fit(self.TEXTS, [[v, v] for v in self.LEVELS])
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.intercept_, b.intercept_)

    def test_bounds_teach_the_side(self):
        # Unlabelled look-alikes of the low tools, known only to be level 3..5: the model
        # moves P(level >= 3) of such texts up, and never below what the labels alone give.
        extra = [f"archive_{n}: {d} for the team" for n, d, r in TRAIN if r <= 2]
        texts = self.TEXTS + extra
        a = RiskAuditor(min_df=1).fit(self.TEXTS, self.LEVELS)
        b = RiskAuditor(min_df=1).fit(texts, [[v, v] for v in self.LEVELS]
                                      + [[3, 5]] * len(extra))
        risky = lambda m: m.predict_proba(extra)[:, 2:].sum(axis=1)  # noqa: E731
        assert (risky(b) > risky(a)).all()

    def test_unbounded_rows_teach_nothing(self):
        # [1, 5] carries no information: the fit equals the one without those tools.
        a = RiskAuditor(min_df=1).fit(self.TEXTS, self.LEVELS)
        b = RiskAuditor(min_df=1).fit(self.TEXTS + ["mystery_tool: Does a thing"],
                                      [[v, v] for v in self.LEVELS] + [[1, 5]])
        probe = ["open_door: Open the front door"]
        np.testing.assert_allclose(a.predict_proba(probe), b.predict_proba(probe), atol=0.05)

    @pytest.mark.parametrize("bad", [[4, 2], [0, 3], [1, 6], [1, 2, 3], ["a", "b"]])
    def test_bad_bounds(self, bad):
        y = [[v, v] for v in self.LEVELS]
        y[1] = bad
        with pytest.raises(ValueError, match=re.escape(MSG_Y_BOUNDS.format(
                tool="y[1]", value=bad).split(",")[0])):
            RiskAuditor(min_df=1).fit(self.TEXTS, y)

    def test_score_needs_levels(self, fitted):
        with pytest.raises(ValueError, match=re.escape(MSG_Y_SCORE)):
            fitted.score(self.TEXTS, [[1, 2]] * len(self.TEXTS))

    def test_hint_bounds_of_a_registry(self):
        reg = load_tools({"tools": [
            _mcp("fetch_page", "Fetch a web page", {"readOnlyHint": True}),
            _mcp("get_api_key", "Show the stored API key", {"readOnlyHint": True}),
            _mcp("stop_vm", "Stop a virtual machine", {"readOnlyHint": False}),
            _mcp("tag_issue", "Add a label", {"readOnlyHint": False, "destructiveHint": False}),
            _mcp("echo", "Echo the input")]}, scan=False)
        assert hint_bounds(reg).tolist() == [[1, 2], [1, 3], [3, 5], [2, 4], [1, 5]]

    @settings(max_examples=40, deadline=None)
    @given(verb=st.sampled_from(sorted(DESTRUCTIVE_VERBS)),
           style=st.sampled_from(["{v}_{o}", "{v}-{o}", "{v}{O}", "{o}_{v}"]),
           obj=st.sampled_from(["file", "release", "disk", "secret", "user", "branch"]))
    def test_a_name_that_destroys_is_at_least_3(self, fitted, verb, style, obj):
        name = style.format(v=verb, o=obj, O=obj.capitalize())
        # Whatever the description says, and with the median rule.
        text = f"{name}: Look up the weather forecast for a city"
        assert _with_coverage(fitted, 0.5).predict([text])[0] >= 3


class TestAudit:
    def test_columns_and_reasons(self, fitted):
        reg = load_tools([
            _mcp("get_weather", "Look up the weather forecast for a city"),
            _mcp("delete_file", "Permanently delete a file from disk", {"readOnlyHint": True}),
            _mcp("run_shell", "Run any shell command as root on the server",
                 {"readOnlyHint": False, "destructiveHint": False}),
        ], risk={"get_weather": 4})
        frame = fitted.audit(reg)
        assert frame.columns.tolist() == [
            "name", "declared", "predicted", "median", "p_risky", "hints", "permissions",
            "flags", "needs_review", "reason"]
        assert frame["declared"].tolist()[0] == 4
        rows = frame.set_index("name")
        assert "declared level 4" in rows.loc["get_weather", "reason"]
        assert "marked read-only" in rows.loc["delete_file", "reason"]
        # The scan's finding is a flag, and a flagged tool is graded at least level 4.
        assert rows["flags"].tolist() == ["", "hint_mismatch", ""]
        assert rows.loc["delete_file", "predicted"] >= 4
        assert rows.loc["delete_file", "reason"].count("read-only") == 1  # said once
        assert rows.loc["delete_file", "hints"] == "read-only"
        assert "marked non-destructive" in rows.loc["run_shell", "reason"]
        assert rows["needs_review"].all()

    def test_labels_argument_and_predicted_levels_are_not_declared(self, fitted):
        reg = load_tools([_mcp("get_weather", "Look up the weather forecast for a city")])
        pred = reg.with_risk(fitted.predict(reg))
        assert fitted.audit(pred)["declared"].isna().all()
        frame = fitted.audit(reg, labels={"get_weather": 1})
        assert frame["declared"].tolist() == [1] and not frame["needs_review"].any()
        with pytest.raises(ValueError, match=re.escape(
                MSG_Y_LEVEL.format(tool="tool 'get_weather'", value=9))):
            fitted.audit(reg, labels=[9])


class TestPersistence:
    def test_save_load_round_trip(self, fitted, train_registry, tmp_path):
        path = tmp_path / "auditor.npz"
        fitted.save(path)
        with np.load(path, allow_pickle=False) as z:
            assert set(z.files) == {"coef", "intercept", "idf", "config"}
        loaded = RiskAuditor.load(path, coverage=0.5)
        assert loaded.coverage == 0.5 and loaded.min_df == 1
        np.testing.assert_array_equal(loaded.coef_, fitted.coef_)
        np.testing.assert_allclose(
            loaded.predict_proba(train_registry), fitted.predict_proba(train_registry))

    def test_not_a_weights_file(self, tmp_path):
        path = tmp_path / "x.npz"
        np.savez(path, a=np.zeros(2))
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_FILE.format(path=path, error="")
                                                       .rstrip(").") )):
            RiskAuditor.load(path)

    @pytest.mark.parametrize("config, error", [
        ([1], "format None, expected 2"),  # not an object: was an AttributeError
        ({}, "its configuration has no params, encoder, embedding_dim"),
        ({"params": {"run": "me"}, "encoder": "x", "embedding_dim": 3},
         "parameters RiskAuditor does not take"),
        ({"params": [], "encoder": "x", "embedding_dim": 3},
         "parameters RiskAuditor does not take"),
    ])
    def test_a_crafted_weights_file_is_refused_by_name(self, tmp_path, config, error):
        from skriskrank._auditor import _FORMAT

        if isinstance(config, dict):
            config = {"format": _FORMAT, **config}
        path = tmp_path / "w.npz"
        np.savez(path, coef=np.zeros((5, 3)), intercept=np.zeros(5), idf=np.zeros(3),
                 config=np.array(json.dumps(config)))
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_FILE.format(path=path,
                                                                            error=error))):
            RiskAuditor.load(path)

    def test_weights_files_are_read_within_the_model_file_limits(self, tmp_path, monkeypatch):
        from skriskrank import _persist
        from skriskrank._pretrained import MSG_BAD_FILE as MSG_BAD_PIPELINE_FILE
        from skriskrank._pretrained import _load

        path = tmp_path / "w.npz"
        np.savez_compressed(path, coef=np.zeros((1, 2)), intercept=np.zeros(1),
                            idf=np.zeros(10_000), config=np.array(json.dumps({"format": 1})))
        # Compressed, it is small on disk; the limit is on what it unpacks to.
        monkeypatch.setitem(_persist.MODEL_FILE_LIMITS, "unpacked_bytes", 50_000)
        limit = "the unpacked size exceeds the limit of 50,000 bytes"
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_FILE.format(path=path,
                                                                            error=limit))):
            RiskAuditor.load(path)
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_PIPELINE_FILE.format(
                path=path, error=limit))):
            _load(path)
        path.write_bytes(b"not a zip")
        with pytest.raises(ValueError, match=re.escape(MSG_BAD_FILE.format(
                path=path, error="File is not a zip file"))):
            RiskAuditor.load(path)

    def test_pretrained_is_small_and_pickle_free(self):
        from importlib import resources

        ref = resources.files("skriskrank") / "data" / PRETRAINED_FILE
        with resources.as_file(ref) as path:
            assert path.stat().st_size < 1_000_000
            with np.load(path, allow_pickle=False) as z:
                assert json.loads(str(z["config"]))["params"]["coverage"] == DEFAULT_COVERAGE
        auditor = RiskAuditor.pretrained(coverage=0.5)
        assert auditor.coverage == 0.5 and auditor.classes_.tolist() == [1, 2, 3, 4, 5]
        # A loaded auditor is already fitted, so its overrides are validated on load.
        with pytest.raises(InvalidParameterError, match="coverage"):
            RiskAuditor.pretrained(coverage=1.5)
        # What ran the trainer's encoder is not the caller's: the file says "torch".
        with resources.as_file(ref) as path, np.load(path, allow_pickle=False) as z:
            assert json.loads(str(z["config"]))["params"]["backend"] == "torch"
        assert RiskAuditor.pretrained().backend == RiskAuditor().backend == "onnx"
        assert RiskAuditor.pretrained(backend="torch").backend == "torch"


class TestCLI:
    def _write(self, tmp_path, obj, name="tools.json"):
        path = tmp_path / name
        path.write_text(json.dumps(obj))
        return path

    def test_audit_prints_a_table_and_writes_files(self, tmp_path, capsys):
        from skriskrank._cli import main

        tools = self._write(tmp_path, {"tools": [
            _mcp("get_weather", "Look up the weather forecast for a city"),
            _mcp("delete_file", "Permanently delete a file", {"destructiveHint": True}),
        ]})
        labels = self._write(tmp_path, {"get_weather": 1}, "labels.json")
        out = tmp_path / "audit.csv"
        assert main(["audit", str(tools), "--labels", str(labels), "--out", str(out)]) == 0
        text = capsys.readouterr().out
        assert "2 tools from 1 file(s)" in text
        header = next(line for line in text.splitlines() if line.startswith("tool "))
        assert header.split() == ["tool", "declared", "level", "median", "P(>=3)", "hints",
                                  "review"]
        assert "delete_file" in text and "destructive" in text
        import pandas as pd

        frame = pd.read_csv(out)
        assert frame["name"].tolist() == ["get_weather", "delete_file"]
        assert frame.loc[1, "predicted"] >= 3
        out_json = tmp_path / "audit.json"
        assert main(["audit", str(tools), "--out", str(out_json), "--coverage", "0.5"]) == 0
        assert [r["name"] for r in json.loads(out_json.read_text())] == [
            "get_weather", "delete_file"]

    @pytest.mark.parametrize(("content", "expected"), [
        ("", "no tools found"),
        ({"tools": [{"description": "x"}]}, "tool #0: the tool has no name"),
        ({"tools": [{"name": "t", "inputSchema": "object"}]}, "must be a JSON Schema object"),
        ({"wrong": 1}, "unrecognised tool catalogue"),
    ])
    def test_bad_input_is_one_line_and_status_2(self, tmp_path, capsys, content, expected):
        from skriskrank._cli import main

        path = tmp_path / "bad.json"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        assert main(["audit", str(path)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0] and "Traceback" not in captured.err

    def test_bad_labels_and_out(self, tmp_path, capsys):
        from skriskrank._cli import main

        tools = self._write(tmp_path, [{"name": "t", "description": "A tool",
                                        "input_schema": {"type": "object"}}])
        labels = self._write(tmp_path, {"t": 8}, "labels.json")
        assert main(["audit", str(tools), "--labels", str(labels)]) == 2
        assert "Tool 't': risk level must be an integer in 1..5" in capsys.readouterr().err
        assert main(["audit", str(tools), "--out", str(tmp_path / "x.txt")]) == 2
        assert "--out must end in .csv or .json" in capsys.readouterr().err
        assert main(["audit", str(tmp_path / "missing.json")]) == 2
        assert main(["audit", str(tools), "--coverage", "1.5"]) == 2
        assert "coverage" in capsys.readouterr().err


@pytest.mark.slow
def test_the_fast_backends_grade_as_torch_does(tmp_path, monkeypatch, bf16_loads):
    from skriskrank import _encoder
    from skriskrank.datasets import load_demo

    monkeypatch.setenv("SKRISKRANK_CACHE", str(tmp_path))
    monkeypatch.setattr(_encoder, "_MODELS", {})  # none loaded yet: each exports here
    registry = load_demo().registry
    # No cache: earlier tests in this process may hold the demo's vectors of every backend.
    auditors = {b: RiskAuditor.pretrained(show_progress_bar=False, backend=b, cache=False)
                for b in ("torch", "onnx", "onnx-int8", "torch-bf16")}
    with bf16_loads("torch-bf16"):  # where this CPU emulates bfloat16, it warns on loading
        proba = {b: a.predict_proba(registry) for b, a in auditors.items()}
    level = {b: a.predict(registry) for b, a in auditors.items()}
    # fp32 ONNX gives the same embeddings, so the same grades.
    np.testing.assert_allclose(proba["onnx"], proba["torch"], atol=1e-5)
    np.testing.assert_array_equal(level["onnx"], level["torch"])
    # int8 moves the tools' embeddings a little (mean cosine 0.998), and the grades with them:
    # measured on these 202 tools, 98% keep their level and all but two their side of level 3.
    diff = np.abs(proba["onnx-int8"] - proba["torch"])
    assert 1e-4 < diff.max() and diff.mean() < 0.02
    assert (level["onnx-int8"] == level["torch"]).mean() >= 0.9
    assert ((level["onnx-int8"] >= 3) == (level["torch"] >= 3)).mean() >= 0.97
    assert len(list((tmp_path / "onnx").glob("*.onnx"))) == 2  # exported here, fp32 and int8
    # bfloat16 moves them far less (cosine >= 0.9999): measured, |dP| at most 0.008 and every
    # level kept.
    diff = np.abs(proba["torch-bf16"] - proba["torch"])
    assert 1e-6 < diff.max() < 0.03 and diff.mean() < 0.005
    assert (level["torch-bf16"] == level["torch"]).mean() >= 0.98


@pytest.mark.slow
class TestRealData:
    def test_pretrained_on_the_mcp_sample(self, data_dir):
        reg = load_tools(sorted((data_dir / "mcp").glob("*.json")))
        auditor = RiskAuditor.pretrained(show_progress_bar=False)
        pred = auditor.predict(reg)
        assert pred.shape == (38,) and set(pred) <= {1, 2, 3, 4, 5}
        # Every tool its author marks destructive is graded >= 3 (nothing was tuned on it).
        assert (pred[reg.declares_destructive] >= 3).all()
        median = copy.copy(auditor).set_params(coverage=0.5).predict(reg)
        assert (pred >= median).all()
        frame = auditor.audit(reg)
        assert len(frame) == 38 and frame["p_risky"].between(0, 1).all()

    def test_the_documented_first_day(self, data_dir):
        from skriskrank import build_pipeline

        reg = load_tools(data_dir / "mcp" / "filesystem.json")
        reg = reg.with_risk(RiskAuditor.pretrained().predict(reg), source="predicted")
        assert reg.risk_known.all() and reg.risk_predicted.all()
        queries = ["show me what is in notes.txt", "delete the draft and write a new file",
                   "rename report.md to final.md", "which folders can you see",
                   "print the first lines of the log", "make a folder for photos"]
        relevant = [{"read_text_file"}, {"write_file"}, {"move_file"},
                    {"list_allowed_directories"}, {"read_text_file"}, {"create_directory"}]
        pipe = build_pipeline(reg, n_candidates=None, epochs=3, validation_fraction=0)
        top = pipe.fit(queries, relevant).predict(["overwrite config.json"])
        assert top.shape == (1, 5) and set(top[0]) <= set(reg.names)

    def test_retraining_reproduces_the_packaged_weights(self, data_dir):
        from importlib import resources

        from benchmarks.audit import pooled, train, training_registries

        ref = resources.files("skriskrank") / "data" / PRETRAINED_FILE
        with resources.as_file(ref) as path:
            shipped = RiskAuditor.load(path)
        # Encoded as the file records (the encoder's output depends on both settings).
        encoding = {k: shipped.get_params()[k] for k in ("batch_size", "max_seq_length")}
        retrained = train(data_dir, show_progress_bar=False, **encoding)
        # The encoder's float32 embeddings differ across CPUs, BLAS builds and batchings in
        # the last bits (about 1e-6), L-BFGS stops at a relative tolerance of 1e-6, and the
        # two rounds on level bounds carry the first fit's differences into the second: the
        # weights agree to about 1e-3 (measured 0.4e-3 here, 1.1e-3 on the CI machine), so
        # 5e-3 leaves room without hiding a real change (a different C, class weighting,
        # bounds weight or feature set moves them by more than 1e-2).
        np.testing.assert_allclose(retrained.coef_, shipped.coef_, atol=5e-3)
        np.testing.assert_allclose(retrained.intercept_, shipped.intercept_, atol=5e-3)
        np.testing.assert_allclose(retrained.idf_, shipped.idf_, rtol=1e-6)
        assert retrained.get_params() | {"show_progress_bar": None} == shipped.get_params()
        texts, _, _ = pooled(training_registries(data_dir))
        np.testing.assert_allclose(
            retrained.predict_proba(texts), shipped.predict_proba(texts), atol=5e-3)
