"""The encoder's fast backends: ONNX Runtime (graph exported offline) and PyTorch in bfloat16.

``backend="onnx"``, the default of :class:`~skriskrank.FrozenEmbedder` (and of the auditor,
the command line and the gateway), runs the encoder's transformer in ONNX Runtime. The
graph is exported the first time it is needed, from the weights already on disk (nothing is
downloaded), with mean pooling and L2 normalisation inside it, and kept in a cache directory
(``$SKRISKRANK_CACHE`` or ``~/.cache/skriskrank``) under a name that identifies the weights
and the exporter. Texts are tokenised with the model's own fast tokenizer, truncated to the
``max_seq_length`` asked for (else the model's own), and batched by their number of word
pieces, longest first.

``backend="onnx-int8"`` runs a copy of that graph whose matrix weights are quantized to int8
per output channel, in 7 bits so that CPUs with and without VNNI sum the products alike
(ONNX Runtime's dynamic quantization: activations are quantized on the fly,
one scale per batch, so a text's vector moves a little with the texts batched with it), made
on first use and cached beside it. For the packaged encoder, part of each input channel's range
is first moved from the activations into the weights (SmoothQuant), with the activations'
largest values measured on real tool texts and shipped with the package
(``benchmarks/int8_calibration.py``); other models are quantized as they are.
It is used for the catalogue's texts only; queries go through the fp32 graph
(:func:`~skriskrank._encoder.query_backend`).

``backend="torch-bf16"`` tokenises and batches texts the same way and runs the transformer in
PyTorch with bfloat16 weights, which CPUs with AVX512-BF16 or AMX multiply natively; the
embeddings stay within a cosine of 1e-4 of float32's. It too encodes the
catalogue's texts only, queries going through the fp32 graph, which is faster for one text.

Only models that sentence-transformers runs as a transformer and mean pooling, normalised or not
(all-MiniLM-L6-v2, the default, is one), are supported; others need ``backend="torch"``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

from ._encoder import DEFAULT_BATCH_SIZE
from ._fast import omp_num_threads
from ._files import write_atomically

__all__ = ["Bf16Encoder", "OnnxEncoder"]

#: Texts tokenised at a time before they are batched by length.
_TOKENIZE_CHUNK = 1024

#: The graph's inputs, in the order of the transformer's arguments.
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

#: The packaged encoder's largest activation per input channel of each linear layer, on real
#: tool texts (``benchmarks/int8_calibration.py``), and SmoothQuant's exponent: the share of a
#: channel's range moved into the weights (``benchmarks/results/bench_encoder.md``: 0.7 kept
#: dense NDCG@5 within 0.002 of fp32 on both benchmarks, 0.8 and 0.9 did not).
_SMOOTHING_FILE = "int8_smoothing.npz"
_SMOOTHING_ALPHA = 0.7
#: ONNX Runtime's dynamic quantization of the int8 graph (why: ``_quantize``); it names the
#: cached graph, so a graph quantized otherwise is made again.
_QUANTIZATION = {"per_channel": True, "reduce_range": True, "weight_type": "QInt8"}

MSG_NO_ORT = ("backend='onnx' needs onnxruntime and onnx, which skriskrank depends on: "
              "pip install onnxruntime onnx ({error}).")
MSG_NO_CACHE = ("Cannot keep the exported encoder in {directory} ({error}); it is exported "
                "again in each process. Set SKRISKRANK_CACHE to a directory that can be written.")
MSG_BF16_EMULATED = ("backend='torch-bf16': this CPU does not compute in bfloat16 (no "
                     "AVX512-BF16 or AMX), so PyTorch emulates it, which may encode more "
                     "slowly than backend='onnx'.")
MSG_UNSUPPORTED = (
    "backend='onnx' runs sentence-transformers models made of a transformer and mean pooling; "
    "{path} is not one ({why}). Use backend='torch'."
)


def _cache_dir() -> Path:
    return Path(os.environ.get("SKRISKRANK_CACHE", Path.home() / ".cache" / "skriskrank"))


def _check_model(model_dir: Path) -> tuple[int, int, int]:
    """The model's ``max_seq_length``, positions and hidden size, once its modules are checked."""
    try:
        modules = [m["type"].rsplit(".", 1)[-1] for m in
                   json.loads((model_dir / "modules.json").read_text())]
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        own = json.loads((model_dir / "sentence_bert_config.json").read_text()).get(
            "max_seq_length", 256)
        config = json.loads((model_dir / "config.json").read_text())
        positions, hidden = config["max_position_embeddings"], config["hidden_size"]
    except (OSError, ValueError, KeyError) as err:
        raise ValueError(MSG_UNSUPPORTED.format(path=model_dir, why=err)) from None
    # Normalize may be left out: the library normalises every embedding, as the graph does.
    supported = (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"])
    # sentence-transformers 6 writes the pooling as "pooling_mode": "mean".
    mean = pooling.get("pooling_mode_mean_tokens") or pooling.get("pooling_mode") == "mean"
    if modules not in supported or not (mean and (model_dir / "tokenizer.json").is_file()):
        raise ValueError(MSG_UNSUPPORTED.format(path=model_dir, why=f"modules {modules}"))
    return int(own), int(positions), int(hidden)


#: Days a cached graph may go unused before the next export removes it: a graph made for other
#: versions of torch, transformers or ONNX Runtime, or other quantization settings, is never
#: read again (23-90 MB each).
UNUSED_DAYS = 30
_DAY = 86_400.0


def _write_once(path: Path, write) -> None:
    """Make ``path`` with ``write(tmp)`` unless it exists, then rename it into place.

    Concurrent processes never read half a file. An existing graph is marked as used (its
    time refreshed once a day); after an export, the directory's graphs unused for
    :data:`UNUSED_DAYS` days are removed.
    """
    if path.is_file():
        with contextlib.suppress(OSError):  # a read-only cache is still read
            if path.stat().st_mtime < time.time() - _DAY:
                os.utime(path)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, write, suffix=".onnx.tmp")
    _prune(path.parent)


def _prune(directory: Path) -> None:
    """Remove the graphs (and half-written ones) of ``directory`` unused for UNUSED_DAYS."""
    cutoff = time.time() - UNUSED_DAYS * _DAY
    for old in directory.glob("*.onnx*"):
        with contextlib.suppress(OSError):  # another process's removal, or no permission
            if old.suffix in (".onnx", ".tmp") and old.stat().st_mtime < cutoff:
                old.unlink()


def _pooled(model_dir: Path):
    """The transformer with mean pooling and L2 normalisation, as one torch module (eval mode)."""
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            if hidden.dtype != torch.float32:  # bfloat16 weights: pool in float32
                hidden = hidden.float()
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    return Pooled(AutoModel.from_pretrained(model_dir, attn_implementation="eager",
                                            local_files_only=True)).eval()


def _smoothed_layers(module) -> dict:
    """``{name: layer}`` of the transformer's linear layers, the ones int8 quantizes."""
    import torch

    return {name: layer for name, layer in module.named_modules()
            if isinstance(layer, torch.nn.Linear) and ".encoder." in f".{name}"}


def _weight_files(model_dir: Path) -> list[Path]:
    """A model directory's weight files, in name order."""
    return sorted(model_dir.glob("*.safetensors")) or sorted(model_dir.glob("*.bin"))


def _weights_sha256(model_dir: Path) -> str:
    """SHA-256 of a model directory's weight files, in name order."""
    digest = hashlib.sha256()
    for path in _weight_files(model_dir):
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _smoothing_file():
    from importlib.resources import files

    return files("skriskrank") / "data" / _SMOOTHING_FILE


def _smoothing(model_dir: Path) -> dict | None:
    """The shipped activation maxima, or ``None`` unless ``model_dir`` holds their weights."""
    with np.load(_smoothing_file(), allow_pickle=False) as shipped:
        if str(shipped["weights_sha256"]) != _weights_sha256(model_dir):
            return None
        return {name: shipped[name] for name in shipped.files if name != "weights_sha256"}


def _smooth(module, amax: dict) -> None:
    """Move part of each input channel's range into the weights: ``x W = (x / s)(s W)``."""
    import torch

    class Smoothed(torch.nn.Module):
        def __init__(self, linear, scale):
            super().__init__()
            self.linear = linear
            self.register_buffer("inverse", 1.0 / scale)

        def forward(self, x):
            return self.linear(x * self.inverse)

    with torch.no_grad():
        for name, layer in _smoothed_layers(module).items():
            weight = layer.weight.abs().amax(dim=0).clamp(min=1e-5)
            scale = (torch.from_numpy(amax[name]).clamp(min=1e-5) ** _SMOOTHING_ALPHA
                     / weight ** (1 - _SMOOTHING_ALPHA)).clamp(min=1e-5)
            layer.weight.mul_(scale)
            parent, _, child = name.rpartition(".")
            setattr(module.get_submodule(parent), child, Smoothed(layer, scale))


def _export(model_dir: Path, path: str, amax: dict | None = None) -> None:
    """Write the transformer, mean pooling and normalisation as one ONNX graph.

    With ``amax`` (activation maxima by layer), the linear layers are smoothed first.
    """
    import torch

    module = _pooled(model_dir)
    if amax is not None:
        _smooth(module, amax)
    # Any ids trace the same graph; small ones exist in every vocabulary.
    ids = torch.tensor([[1, 2, 3, 4], [1, 2, 4, 0]])
    axes = {"batch": 0, "sequence": 1}
    # The TorchScript exporter, deprecated since torch 2.9 but still shipped (the torch.export
    # one needs onnxscript). Its tracer warns where transformers compares shapes in Python;
    # those comparisons hold for every input of this graph (the mask is as long as the
    # sequence), and the tests compare the exported encoder with torch's.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (ids, (ids != 0).long(), torch.zeros_like(ids)),
                          path, input_names=list(_INPUTS), output_names=["embedding"],
                          opset_version=17,
                          dynamic_axes={**{n: {v: k for k, v in axes.items()} for n in _INPUTS},
                                        "embedding": {0: "batch"}}, dynamo=False)


def _quantize(src: Path, path: str) -> None:
    """Write ``src`` with its MatMul weights in int8, one scale per output channel."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class _Quiet(logging.Filter):
        # quantize_dynamic logs a hint on the root logger to run a pre-processing pass,
        # which fails on this graph (incomplete symbolic shapes) and is not needed for it.
        def filter(self, record):
            return "pre-processing" not in record.getMessage()

    quiet, root = _Quiet(), logging.getLogger()
    root.addFilter(quiet)
    try:
        # Per channel: one scale per output column keeps the embeddings closest to fp32
        # (measured: mean cosine 0.994 against 0.957 with one scale per matrix). Weights in
        # 7 bits (-64..64): on CPUs without VNNI (AVX2, AVX-512 before Cascade Lake) ONNX
        # Runtime multiplies uint8 activations by int8 weights two at a time into int16, which
        # saturates once 2 * 255 * |w| passes 32,767; then the same graph gives other vectors
        # on other CPUs (measured on AVX2: dense NDCG@5 on UltraTool 0.018 below fp32 with 8
        # bits, +0.0004 with 7). In 7 bits every CPU sums the products exactly.
        quantize_dynamic(src, path, **{**_QUANTIZATION,
                                       "weight_type": QuantType[_QUANTIZATION["weight_type"]]})
    finally:
        root.removeFilter(quiet)


def _int8(model_dir: Path, fp32: Path, path: str) -> None:
    """Write the int8 graph: smoothed first for the packaged encoder, else ``fp32`` as it is."""
    amax = _smoothing(model_dir)
    if amax is None:
        _quantize(fp32, path)
        return
    with tempfile.TemporaryDirectory(prefix="skriskrank-int8-") as tmp:
        smoothed = Path(tmp) / "smoothed.onnx"
        _export(model_dir, str(smoothed), amax)
        _quantize(smoothed, path)


def native_bf16() -> bool:
    """Whether this CPU multiplies in bfloat16 (AVX512-BF16 or AMX); else PyTorch emulates it."""
    import torch

    # Older torch has no get_capabilities: then nothing says bfloat16 is native.
    capabilities = getattr(torch.cpu, "get_capabilities", dict)()
    return bool(capabilities.get("avx512_bf16") or capabilities.get("amx_bf16"))


class _PieceEncoder:
    """Tokenises texts with the model's fast tokenizer and batches them by word pieces.

    Subclasses run a batch: ``_run(ids, mask)`` returns its L2-normalised float32 embeddings.
    """

    def __init__(self, model_dir, max_seq_length):
        from tokenizers import Tokenizer  # transformers' own dependency

        self.model_dir = model_dir = Path(model_dir)
        # The output is [batch, hidden size].
        own, positions, self.dim = _check_model(model_dir)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(min(max_seq_length or own, positions))
        # Each batch is padded here, to its longest text (the model's file may pad to a width).
        self.tokenizer.no_padding()

    def encode(self, texts, *, batch_size=DEFAULT_BATCH_SIZE, show_progress_bar=False):
        """L2-normalised float32 embeddings of ``texts``, longest first within the batching."""
        from tqdm.auto import tqdm

        texts = list(texts)
        out = np.empty((len(texts), self.dim), np.float32)
        # Tokenised a chunk at a time, keeping only the ids: the tokenizer's encodings also hold
        # every token's text and offsets, which for a whole catalogue would outweigh the model.
        pieces = [np.array(e.ids, np.int32) for start in range(0, len(texts), _TOKENIZE_CHUNK)
                  for e in self.tokenizer.encode_batch(texts[start:start + _TOKENIZE_CHUNK])]
        lengths = np.array([len(p) for p in pieces], dtype=np.int64)
        # Longest first by word pieces: a batch pads to its longest text, so batching texts of
        # like length wastes the least work (sentence-transformers sorts by characters, which
        # groups texts of unlike lengths in word pieces).
        order = np.argsort(-lengths, kind="stable")
        starts = range(0, len(texts), batch_size)
        for s in tqdm(starts, desc="Batches", disable=not show_progress_bar):
            rows = order[s:s + batch_size]
            # Padded with id 0 ([PAD]), as the tokenizer padded: masked out of attention and
            # pooling (int8's activation scale still sees it, as it did).
            ids = np.zeros((len(rows), lengths[rows[0]]), np.int64)
            for row, i in enumerate(rows):
                ids[row, :lengths[i]] = pieces[i]
            mask = (np.arange(ids.shape[1]) < lengths[rows, None]).astype(np.int64)
            out[rows] = self._run(ids, mask)
        return out


class OnnxEncoder(_PieceEncoder):
    """A sentence encoder that runs an exported ONNX graph; its ``encode`` is the torch one's.

    Parameters
    ----------
    model_dir : str or path-like
        A sentence-transformers model directory (transformer, mean pooling).
    cache_dir : str or path-like or None, default=None
        Where the exported graph is kept; ``None`` is ``$SKRISKRANK_CACHE`` or
        ``~/.cache/skriskrank``.
    int8 : bool, default=False
        Run the graph with int8 weights (``backend="onnx-int8"``).
    max_seq_length : int or None, default=None
        Word pieces of a text that are read (at most the model's positions); ``None`` is
        the model's own setting.
    """

    def __init__(self, model_dir, cache_dir=None, *, int8=False, max_seq_length=None):
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise ValueError(MSG_NO_ORT.format(error=exc)) from None
        super().__init__(model_dir, max_seq_length)
        model_dir = self.model_dir
        weights = _weight_files(model_dir)
        # The file's name identifies the weights and the exporter that made it (the versions
        # read from the installed packages' metadata: once exported, torch is never imported).
        key = json.dumps([str(model_dir.resolve()), [(w.name, w.stat().st_size,
                                                      w.stat().st_mtime_ns) for w in weights],
                          version("torch"), version("transformers"), ort.__version__])
        name = hashlib.sha256(key.encode()).hexdigest()[:24] + ".onnx"
        options = ort.SessionOptions()
        options.inter_op_num_threads = 1
        # ONNX Runtime sizes its pool to the machine's cores and ignores OMP_NUM_THREADS: two
        # workers on two cores would run four spinning threads. The embeddings are the same on
        # any number of threads.
        options.intra_op_num_threads = omp_num_threads() or 0

        def session(directory: Path):
            path = directory / name
            _write_once(path, lambda tmp: _export(model_dir, tmp))
            if int8:  # named also by the shipped statistics, which change its weights
                made = hashlib.sha256(_smoothing_file().read_bytes() + json.dumps(
                    _QUANTIZATION).encode()).hexdigest()[:12]  # and by how it quantizes
                fp32, path = path, path.with_suffix(f".{made}.int8.onnx")
                _write_once(path, lambda tmp: _int8(model_dir, fp32, tmp))
            return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

        directory = (Path(cache_dir) if cache_dir else _cache_dir()) / "onnx"
        try:
            self.session = session(directory)
        except OSError as err:
            # A cache that cannot be written (a read-only home) costs an export per process,
            # not the backend: the graph is made in a temporary directory, loaded, removed.
            warnings.warn(MSG_NO_CACHE.format(directory=directory, error=err), stacklevel=2)
            with tempfile.TemporaryDirectory(prefix="skriskrank-onnx-") as tmp:
                self.session = session(Path(tmp))

    def _run(self, ids, mask):
        feeds = dict(zip(_INPUTS, (ids, mask, np.zeros_like(ids)), strict=True))
        return self.session.run(None, feeds)[0]


class _TorchEncoder(_PieceEncoder):
    """The pooled encoder in PyTorch, its weights in ``dtype``, batched as the ONNX ones."""

    def __init__(self, model_dir, max_seq_length, dtype):
        super().__init__(model_dir, max_seq_length)
        self.module = _pooled(self.model_dir).to(dtype)

    def _run(self, ids, mask):
        import torch

        ids = torch.from_numpy(ids)
        with torch.inference_mode():
            return self.module(ids, torch.from_numpy(mask), torch.zeros_like(ids)).numpy()


class Bf16Encoder(_TorchEncoder):
    """The same encoder in PyTorch, its weights in bfloat16 (``backend="torch-bf16"``).

    Texts are tokenised and batched as :class:`OnnxEncoder` does; the transformer runs with
    bfloat16 weights and activations, and the pooling and normalisation in float32. Fast on
    CPUs that compute in bfloat16 (AVX512-BF16 or AMX); elsewhere PyTorch emulates it (a
    warning says so).

    Parameters
    ----------
    model_dir : str or path-like
        A sentence-transformers model directory (transformer, mean pooling).
    max_seq_length : int or None, default=None
        As for :class:`OnnxEncoder`.
    """

    def __init__(self, model_dir, *, max_seq_length=None):
        import torch

        if not native_bf16():
            warnings.warn(MSG_BF16_EMULATED, stacklevel=2)
        super().__init__(model_dir, max_seq_length, torch.bfloat16)
