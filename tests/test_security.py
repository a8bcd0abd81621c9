"""Model files from elsewhere: load trusts exactly what save writes, and nothing in a hostile
file runs (docs/security.md)."""

import copy
import inspect
import io
import json
import pickle
import zipfile

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline

import skriskrank._persist as persist
from skriskrank import (
    DenseRetriever,
    FrozenEmbedder,
    GraphSmoother,
    ModelFileError,
    NeedAwareFilter,
    RiskAuditor,
    RiskAwareReranker,
    RuleFilter,
    UntrustedTypeError,
    load,
    save,
)
from skriskrank.baselines import (
    BM25Reranker,
    CrossEncoderReranker,
    MMRReranker,
    RiskPenaltyReranker,
)
from skriskrank.datasets import load_demo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def saved_files(tmp_path_factory):
    """One file of every object save supports, in the configurations that change its state."""
    demo = load_demo()
    q, y = demo.queries[:120], demo.relevant[:120]
    d = tmp_path_factory.mktemp("models")
    objects = {
        "full": Pipeline([
            ("embed", FrozenEmbedder(demo.registry)),
            ("retrieve", DenseRetriever(n_candidates=40)),
            ("rerank", RiskAwareReranker(epochs=1, random_state=0)),
            ("smooth", GraphSmoother()),
            ("filter", NeedAwareFilter(relevance_floor=0.1))]).fit(q, y),
        "rule": Pipeline([("embed", FrozenEmbedder(demo.registry)),
                          ("filter", RuleFilter(max_high_risk=None))]).fit(q),
        "concat": Pipeline([("embed", FrozenEmbedder(demo.registry)),
                            ("retrieve", DenseRetriever(n_candidates=40)),
                            ("rerank", RiskAwareReranker(epochs=1, relevance_head="concat",
                                                         random_state=0))]).fit(q, y),
        "baselines": Pipeline([("embed", FrozenEmbedder(demo.registry)),
                               ("retrieve", DenseRetriever(n_candidates=40)),
                               ("penalty", RiskPenaltyReranker()),
                               ("mmr", MMRReranker()), ("bm25", BM25Reranker())]).fit(q),
        "cross": CrossEncoderReranker(model="some/cross-encoder"),
        "auditor": RiskAuditor.pretrained(),
        "auditor_weights": RiskAuditor(min_df=1, class_weight={1: 1.0, 3: 2.0, 5: 3.0}).fit(
            ["read a file", "send an email", "wipe the disk", "list the files"], [1, 3, 5, 1]),
    }
    paths = {}
    for name, obj in objects.items():
        paths[name] = d / f"{name}.skops"
        save(obj, paths[name])
    return paths


def _schema(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("schema.json"))


def _nodes(node):
    """Every node (a dict with a loader) of a schema, depth first."""
    if isinstance(node, dict):
        if "__loader__" in node:
            yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


def _rewrite(src, dst, edit, extra=None):
    """Copy a model file with ``edit(schema)`` applied, adding the ``extra`` members."""
    schema = _schema(src)
    edit(schema)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            if item.filename != "schema.json":
                zout.writestr(item, zin.read(item.filename))
        zout.writestr("schema.json", json.dumps(schema))
        for name, data in (extra or {}).items():
            zout.writestr(name, data)
    return dst


class _Touch:
    """A pickle that, if ever unpickled, creates the file ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _skorch_payload(marker):
    """The published exploit: the skorch net class, with a pickle as its CUDA attributes.

    skorch's ``NeuralNet.__setstate__`` unpickles ``__cuda_dependent_attributes__`` with a
    plain unpickler, so building this node would run the payload.
    """
    node = {"__class__": "DualHeadNet", "__module__": "skriskrank._heads",
            "__loader__": "ObjectNode", "content": {
                "__class__": "dict", "__module__": "builtins", "__loader__": "DictNode",
                "content": {
                    "device": {"__class__": "str", "__module__": "builtins",
                               "__loader__": "JsonNode", "content": '"cpu"', "is_json": True},
                    "__cuda_dependent_attributes__": {
                        "__class__": "bytes", "__module__": "builtins",
                        "__loader__": "BytesNode", "file": "payload.bin"}},
                "key_types": {"__class__": "list", "__module__": "builtins",
                              "__loader__": "ListNode", "content": [
                                  {"__class__": "str", "__module__": "builtins",
                                   "__loader__": "TypeNode"}] * 2}}}
    return node, {"payload.bin": pickle.dumps(_Touch(marker))}


def test_the_published_skorch_exploit_is_refused_and_never_runs(saved_files, tmp_path):
    marker = tmp_path / "pwned"
    node, extra = _skorch_payload(marker)

    def inject(schema):
        schema["content"]["content"]["steps"]["content"][2]["content"][1] = node

    bad = _rewrite(saved_files["full"], tmp_path / "bad.skops", inject, extra)
    with pytest.raises(UntrustedTypeError, match="DualHeadNet") as err:
        load(bad)
    assert "skriskrank._heads.DualHeadNet" in err.value.types
    assert not marker.exists()
    # The check is on the file, not on how it is reached: the CLI answers the same.
    from skriskrank._cli import main

    assert main(["rank", str(bad), "read a file"]) == 2
    assert not marker.exists()


def _object_nodes(saved_files):
    for name, path in saved_files.items():
        for i, node in enumerate(_nodes(_schema(path))):
            if node["__loader__"] == "ObjectNode":
                yield name, i, f"{node['__module__']}.{node['__class__']}"


def test_the_payload_through_every_trusted_class_with_state(saved_files, tmp_path):
    """Put the payload into the state of each object of each file; none loads, none runs."""
    marker = tmp_path / "pwned"
    node, extra = _skorch_payload(marker)
    reached = set()
    for name, index, cls in _object_nodes(saved_files):

        def inject(schema, index=index):
            target = list(_nodes(schema))[index]
            target["content"]["content"]["payload"] = node

        bad = _rewrite(saved_files[name], tmp_path / "bad.skops", inject, extra)
        with pytest.raises(UntrustedTypeError):
            load(bad)
        reached.add(cls)
    assert not marker.exists()
    objects = {n for kind, n in persist.TRUSTED_NODES if kind == "ObjectNode"}
    assert reached == objects


def test_load_trusts_exactly_the_node_types_save_writes(saved_files):
    written = {(n["__loader__"], f"{n['__module__']}.{n['__class__']}")
               for path in saved_files.values() for n in _nodes(_schema(path))}
    assert written == set(persist.TRUSTED_NODES)


def test_no_trusted_class_restores_itself_through_pickle_torch_or_skorch():
    import importlib

    import torch
    from skorch import NeuralNet

    from skriskrank import FrozenEmbedder, ToolRegistry

    # ToolRegistry rebuilds read-only views of its data; FrozenEmbedder gives a file written
    # before its tool_text parameter existed that parameter's old value, and builds nothing;
    # BM25Reranker checks its parameters and indexes the registry's texts with bm25s.
    reviewed = {persist._name(ToolRegistry), persist._name(FrozenEmbedder),
                persist._name(BM25Reranker)}
    for kind, name in persist.TRUSTED_NODES:
        if kind != "ObjectNode":
            continue
        module, _, cls_name = name.rpartition(".")
        cls = getattr(importlib.import_module(module), cls_name)
        assert not issubclass(cls, (NeuralNet, torch.nn.Module)), name
        for method in ("__setstate__", "__reduce__", "__reduce_ex__"):
            owner = next((k for k in cls.__mro__ if method in vars(k)), object)
            if owner in (object, BaseEstimator) or name in reviewed:
                continue
            pytest.fail(f"{name}.{method} is defined by {owner.__qualname__}; review it")
        source = inspect.getsource(cls.__setstate__) if name in reviewed else ""
        assert "pickle" not in source and "torch" not in source


# -- a corpus of crafted files ----------------------------------------------------------------
def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _npy(array):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=False)
    return buf.getvalue()


def _array_schema(file):
    return {"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode",
            "type": "numpy", "file": file}


def test_a_zip_bomb_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setitem(persist.MODEL_FILE_LIMITS, "unpacked_bytes", 10 << 20)
    path = tmp_path / "bomb.skops"
    path.write_bytes(_zip({"schema.json": b"{}", "a.npy": bytes(64 << 20)}))
    assert path.stat().st_size < 1 << 20
    with pytest.raises(ModelFileError, match="the unpacked size exceeds the limit"):
        load(path)


def test_an_oversized_file_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setitem(persist.MODEL_FILE_LIMITS, "file_bytes", 1000)
    path = tmp_path / "big.skops"
    path.write_bytes(bytes(2000))
    with pytest.raises(ModelFileError, match="the file exceeds the limit of 1,000 bytes"):
        load(path)


def _npy_header(descr, shape):
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    header = header.ljust(64 * (1 + (len(header) + 11) // 64) - 11) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header


def test_an_array_header_that_lies_about_its_size_is_refused(tmp_path):
    small = np.zeros(4, np.float32).tobytes()
    for body, message in [(_npy_header("<f4", (10**12,)) + small, "does not match its size"),
                          (_npy_header("|O", (1,)) + bytes(8), "holds Python objects")]:
        path = tmp_path / "arr.skops"
        path.write_bytes(_zip({"schema.json": json.dumps(_array_schema("a.npy")).encode(),
                               "a.npy": body}))
        with pytest.raises(ModelFileError, match=message):
            load(path)


def test_a_schema_cycle_and_deep_nesting_are_refused(saved_files, tmp_path):
    schema = _schema(saved_files["rule"])
    inner = copy.deepcopy(schema)
    schema["__id__"] = inner["__id__"] = 7  # a node that contains itself
    schema["content"]["content"]["payload"] = inner
    path = tmp_path / "cycle.skops"
    path.write_bytes(_zip({"schema.json": json.dumps(schema).encode()}))
    with pytest.raises(ModelFileError, match="cycle"):
        load(path)
    for depth in (100, 100_000):  # above the limit; beyond the JSON parser's recursion
        path.write_bytes(_zip({"schema.json": ("[" * depth + "]" * depth).encode()}))
        with pytest.raises(ModelFileError):
            load(path)


def test_every_object_with_hostile_state_loads_or_is_a_model_file_error(saved_files, tmp_path):
    """Each trusted object's attributes replaced by a string, or its state emptied.

    A class with the same state keys is tried once, in the smallest file that holds it: the
    same ``__setstate__`` runs wherever it sits, and each load of a large pipeline costs
    about a second.
    """
    hostile = {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
               "content": '"hostile"', "is_json": True}
    outcomes = {"loaded": 0, "refused": 0}
    by_size = dict(sorted(saved_files.items(), key=lambda item: item[1].stat().st_size))
    tried = set()
    for name, index, cls in _object_nodes(by_size):
        keys = list(list(_nodes(_schema(saved_files[name])))[index]["content"]["content"])
        if (cls, *sorted(keys)) in tried:
            continue
        tried.add((cls, *sorted(keys)))
        for key in [None, *keys[:4]]:
            def edit(schema, index=index, key=key):
                state = list(_nodes(schema))[index]["content"]
                if key is None:
                    state["content"], state["key_types"]["content"] = {}, []
                else:
                    state["content"][key] = hostile

            bad = _rewrite(saved_files[name], tmp_path / "hostile.skops", edit)
            try:
                load(bad)
                outcomes["loaded"] += 1
            except ModelFileError:
                outcomes["refused"] += 1
    assert outcomes["refused"] > 0


def test_files_of_every_supported_object_round_trip(saved_files):
    for path in saved_files.values():
        assert isinstance(load(path), BaseEstimator)


def test_load_says_when_a_file_is_missing_or_not_a_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="Model file not found"):
        load(tmp_path / "missing.skops")
    with pytest.raises(FileNotFoundError):
        load(tmp_path)
