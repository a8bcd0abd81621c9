"""Calibrate the int8 encoder: the largest activation of each input channel of each layer.

``backend="onnx-int8"`` quantizes each batch's activations with one scale, which a few large
input channels set for all the others; SmoothQuant (Xiao et al., 2023) moves part of each
channel's range into the weights, which are quantized one output channel at a time. Its
scales come from the activations' largest values on texts like those the encoder will read:
the demo catalogue's tools and real MCP tools with their parameters (the harvested servers,
``benchmarks/data/mcp_harvest``, listed in the data card), leaving out the 1,000 tools that
``benchmarks.bench_encoder`` times and compares, so that its cosine row is out of sample.

Run ``python -m benchmarks.int8_calibration --data ../shared/data``; it writes
``skriskrank/data/int8_smoothing.npz`` (float32 arrays only, loaded without pickle) for the
packaged encoder, identified by the SHA-256 of its weights.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "skriskrank" / "data" / "int8_smoothing.npz"
#: The first tools of ``bench_audit.catalogue``, which ``bench_encoder`` times: not calibrated on.
HELD_OUT = 1000


def texts(data) -> list[str]:
    """The demo's tool texts, then the harvested MCP tools after the held-out ones."""
    from benchmarks._common import harvested_files
    from benchmarks.bench_audit import catalogue
    from skriskrank import load_tools
    from skriskrank.datasets import load_demo

    held_out = {t["name"] for t in catalogue(data, HELD_OUT)["tools"]}
    tools = [t for path in harvested_files()
             for t in json.loads(path.read_text(encoding="utf-8"))["tools"]]
    seen, keep = set(held_out), []
    for tool in tools:
        if tool["name"] not in seen:
            seen.add(tool["name"])
            keep.append(tool)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tools.json"
        path.write_text(json.dumps({"tools": keep}), encoding="utf-8")
        harvested = load_tools([path], scan=False).texts
    return list(load_demo().registry.texts) + list(harvested)


def activation_maxima(model_dir: Path, calibration: list[str]) -> dict[str, np.ndarray]:
    """``{layer name: largest |input| per channel}`` of the encoder's linear layers."""
    import torch

    from skriskrank._encoder import DEFAULT_MAX_SEQ_LENGTH
    from skriskrank._onnx import _smoothed_layers, _TorchEncoder

    # In fp32, batched exactly as the ONNX backends batch a catalogue.
    encoder = _TorchEncoder(model_dir, DEFAULT_MAX_SEQ_LENGTH, torch.float32)
    layers = _smoothed_layers(encoder.module)
    amax = {name: torch.zeros(layer.in_features) for name, layer in layers.items()}

    def hook(name):
        def record(layer, inputs):
            amax[name] = torch.maximum(amax[name], inputs[0].abs().amax(dim=(0, 1)))
        return record

    handles = [layer.register_forward_pre_hook(hook(name)) for name, layer in layers.items()]
    encoder.encode(calibration)
    for handle in handles:
        handle.remove()
    return {name: value.numpy().astype(np.float32) for name, value in amax.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from skriskrank._encoder import resolve_model
    from skriskrank._onnx import _weights_sha256

    model_dir = Path(resolve_model(None)[1])
    calibration = texts(args.data)
    amax = activation_maxima(model_dir, calibration)
    np.savez(args.out, **amax, weights_sha256=np.array(_weights_sha256(model_dir)))
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()[:12]
    print(f"{len(calibration)} texts, {len(amax)} layers -> {args.out} "
          f"({args.out.stat().st_size / 1024:.0f} KiB, sha256 {digest})")


if __name__ == "__main__":
    main()
