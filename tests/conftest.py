"""Shared fixtures: offline model hub, fixed seeds (numpy, torch, hypothesis), the real data."""

import os

# Hugging Face libraries read these at import time, so set them before any test imports one.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import random  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests draw the same examples on every run, so CI never turns red on a draw no one
# has seen; run with HYPOTHESIS_PROFILE=explore (or --hypothesis-profile=explore) to search
# fresh random examples while developing.
settings.register_profile("fixed", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

ROOT = Path(__file__).resolve().parents[1]
#: The real UltraTool and Seal-Tools files, beside the checkout (override with SKRISKRANK_DATA).
DATA_DIR = Path(os.environ.get("SKRISKRANK_DATA", ROOT.parent / "shared" / "data"))


def pytest_configure(config):
    """Give each xdist worker its share of the cores, as joblib gives its process workers.

    torch, OpenBLAS and ONNX Runtime (through ``OMP_NUM_THREADS``, which the library reads)
    otherwise each start a thread per core in every worker: two workers on two cores ran
    four busy threads (measured: the slow tests took 930 s against 561 s with a thread each,
    the quick ones 152 s against 129 s). Set in the controller before it starts the
    workers, so they inherit it; a value already set wins.
    """
    workers = getattr(config.option, "numprocesses", None)
    if isinstance(workers, int) and workers > 1:  # the workers inherit it: setdefault keeps it
        from joblib import cpu_count  # the CPUs this process may use, on any platform

        share = max(1, cpu_count() // workers)
        os.environ.setdefault("OMP_NUM_THREADS", str(share))


#: The test files that take minutes under ``-m slow`` (``--durations=0``: the auditor's
#: retraining, the real servers behind the gateway, the paper benchmark's run, the encoder's
#: backends, ...), longest first. With ``--no-loadscope-reorder`` (as ``.ci/run`` runs the slow
#: tests) xdist hands each worker one file at a time in collection order, so starting with
#: these keeps the two workers' shares even instead of leaving one a long file at the end;
#: by default it takes the files with the most tests first, whatever they cost.
_LONGEST_FIRST = ("test_auditor.py", "test_gateway.py", "test_paper_benchmark.py",
                  "test_embedding.py", "test_pretrained.py", "test_explain.py")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session", autouse=True)
def _own_cache(tmp_path_factory):
    """The encoder's exported graphs go to this session's directory, unless one is set.

    The user's cache then gets no graph of the tests' throwaway models (one per session, as
    their directories are new), and the first-use export runs in every session.
    """
    if os.environ.get("SKRISKRANK_CACHE"):
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SKRISKRANK_CACHE", str(tmp_path_factory.mktemp("skriskrank-cache")))
        yield


@pytest.fixture(autouse=True)
def _fixed_seeds():
    random.seed(0)
    np.random.seed(0)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a runtime dependency
        return
    torch.manual_seed(0)


@pytest.fixture
def bf16_loads():
    """``bf16_loads(backend)``: a context that expects the warning a ``torch-bf16`` encoder
    gives when it loads on a CPU that emulates bfloat16, and nothing elsewhere."""
    import contextlib
    import re

    from skriskrank._onnx import MSG_BF16_EMULATED, native_bf16

    def expect(backend):
        if backend != "torch-bf16" or native_bf16():
            return contextlib.nullcontext()
        return pytest.warns(UserWarning, match=re.escape(MSG_BF16_EMULATED))

    return expect


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA_DIR / "ultratool").is_dir():
        pytest.skip(f"benchmark data not found at {DATA_DIR} (set SKRISKRANK_DATA)")
    return DATA_DIR


@pytest.fixture(scope="session")
def ultratool(data_dir):
    from skriskrank.datasets import load_ultratool

    return load_ultratool(data_dir / "ultratool")


@pytest.fixture(scope="session")
def sealtools_dev(data_dir):
    from skriskrank.datasets import load_sealtools

    return load_sealtools(data_dir / "sealtools", "dev")


@pytest.fixture
def tiny_registry():
    from skriskrank import ToolRegistry

    return ToolRegistry.from_records(
        [
            {"name": "read_file", "description": "Read the contents of a text file", "risk": 1},
            {"name": "list_dir", "description": "List the files in a folder", "risk": 1},
            {"name": "send_email", "description": "Send an email message", "risk": 3},
            {"name": "delete_file", "description": "Delete a file from disk", "risk": 4},
            {"name": "run_shell", "description": "Run a bash command", "risk": 5},
            {"name": "get_weather", "description": "Look up the weather forecast", "risk": 1},
        ]
    )
