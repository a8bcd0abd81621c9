"""Model files without pickle: skops round trips, refusals and broken files."""

import io
import json
import re
import zipfile

import joblib
import numpy as np
import pytest
from sklearn.pipeline import Pipeline

from skriskrank import (
    DenseRetriever,
    FrozenEmbedder,
    GraphSmoother,
    ModelFileError,
    RiskAwareReranker,
    RuleFilter,
    UntrustedTypeError,
    load,
    save,
)
from skriskrank.datasets import load_demo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo():
    return load_demo()


@pytest.fixture(scope="module")
def fitted(demo):
    pipe = Pipeline([
        ("embed", FrozenEmbedder(demo.registry)),
        ("retrieve", DenseRetriever(n_candidates=50)),
        ("rerank", RiskAwareReranker(epochs=2, random_state=0)),
        ("smooth", GraphSmoother()),
        ("filter", RuleFilter()),
    ])
    return pipe.fit(demo.queries[:200], demo.relevant[:200])


@pytest.fixture(scope="module")
def saved(fitted, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "pipe.skops"
    save(fitted, path)
    return path


def test_round_trip_predicts_the_same_and_stores_no_encoder(fitted, saved, demo):
    loaded = load(saved)
    queries = demo.queries[200:260]
    np.testing.assert_array_equal(loaded.predict(queries), fitted.predict(queries))
    # The encoder is referenced by name, not stored: the file holds heads, graph and tools.
    assert saved.stat().st_size < 10 * 2**20
    with zipfile.ZipFile(saved) as z:
        schema = z.read("schema.json").decode()
    # No object of torch or sentence-transformers (the string "torch", the embedder's
    # backend parameter, is stored as a value).
    modules = set(re.findall(r'"__module__": "([\w.]+)"', schema))
    assert modules and not {m for m in modules if m.split(".")[0] in (
        "torch", "sentence_transformers")}
    # joblib keeps working.
    buf = io.BytesIO()
    joblib.dump(fitted, buf)
    buf.seek(0)
    np.testing.assert_array_equal(joblib.load(buf).predict(queries), fitted.predict(queries))


def _rewrite(src, dst, edit):
    """Copy a model file, editing its schema.json with ``edit(schema_dict)``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "schema.json":
                schema = json.loads(data)
                edit(schema)
                data = json.dumps(schema).encode()
            zout.writestr(item, data)
    return dst


def test_a_file_naming_another_type_is_refused_before_anything_is_built(saved, tmp_path):
    marker = tmp_path / "pwned"

    def inject(schema):
        # Replace the pipeline's memory parameter by a node that, if it were ever built,
        # would call os.system(f"touch {marker}").
        schema["content"]["content"]["memory"] = {
            "__class__": "system", "__module__": "os", "__loader__": "ConstructorFromReduceNode",
            "content": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
                        "content": [{"__class__": "str", "__module__": "builtins",
                                     "__loader__": "JsonNode",
                                     "content": json.dumps(f"touch {marker}")}]}}

    bad = _rewrite(saved, tmp_path / "bad.skops", inject)
    with pytest.raises(UntrustedTypeError, match=re.escape("os.system")) as err:
        load(bad)
    assert err.value.types == ["os.system"]
    assert not marker.exists()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "schema"])
def test_broken_files_are_a_clear_error(saved, tmp_path, damage):
    data = saved.read_bytes()
    path = tmp_path / "broken.skops"
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a zip at all")
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        with zipfile.ZipFile(saved) as zin, zipfile.ZipFile(path, "w") as zout:
            for item in zin.infolist():
                body = zin.read(item.filename)
                zout.writestr(item, b"{oops" if item.filename == "schema.json" else body)
    with pytest.raises(ModelFileError, match=re.escape(repr(str(path)))):
        load(path)


def test_saving_something_load_would_refuse_fails_early(tmp_path):
    from sklearn.base import BaseEstimator

    class Holder(BaseEstimator):
        def __init__(self, thing=None):
            self.thing = thing

    with pytest.raises(TypeError, match="outside the types skriskrank.load trusts"):
        save(Holder(thing=Holder), tmp_path / "x.skops")


def test_need_aware_pipelines_and_the_auditor_round_trip(fitted, demo, tmp_path):
    from skriskrank import NeedAwareFilter, RiskAuditor

    need = Pipeline([*fitted.steps[:-1], ("filter", NeedAwareFilter(relevance_floor=0.2))])
    need.steps[-1][1].fit(Pipeline(fitted.steps[:-1]).transform(demo.queries[:200]),
                          demo.relevant[:200])
    save(need, tmp_path / "need.skops")
    queries = demo.queries[200:260]
    assert [list(r) for r in load(tmp_path / "need.skops").predict(queries)] == [
        list(r) for r in need.predict(queries)]
    auditor = RiskAuditor.pretrained()
    save(auditor, tmp_path / "auditor.skops")
    np.testing.assert_array_equal(load(tmp_path / "auditor.skops").predict(demo.registry),
                                  auditor.predict(demo.registry))


def test_a_bm25_step_is_saved_without_its_index_and_indexed_again_on_load(demo, tmp_path):
    from skriskrank import DenseRetriever, FrozenEmbedder
    from skriskrank.baselines import BM25Reranker

    pipe = Pipeline([("embed", FrozenEmbedder(demo.registry)),
                     ("retrieve", DenseRetriever(n_candidates=40)),
                     ("bm25", BM25Reranker(k1=1.2, k=3))]).fit(demo.queries[:50])
    save(pipe, tmp_path / "bm25.skops")
    with zipfile.ZipFile(tmp_path / "bm25.skops") as z:
        assert "bm25s" not in z.read("schema.json").decode()
    loaded = load(tmp_path / "bm25.skops")
    queries = demo.queries[50:90]
    np.testing.assert_array_equal(loaded.predict(queries), pipe.predict(queries))
    assert loaded.steps[-1][1].index_.k1 == 1.2
    # A file's parameters are checked before they reach bm25s.
    step = loaded.steps[-1][1]
    state = {**step.__getstate__(), "k1": "fast"}
    with pytest.raises(ValueError, match="k1"):
        BM25Reranker().__setstate__(state)
