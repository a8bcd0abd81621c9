"""What pyproject.toml declares matches what the code uses."""

import pathlib
import re

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
ROOT = pathlib.Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
REQUIRES = {Requirement(r).name: Requirement(r) for r in PROJECT["dependencies"]}
SOURCES = {p: p.read_text() for p in (ROOT / "skriskrank").rglob("*.py")}


def test_numpy_minimum_has_the_functions_the_code_calls():
    # np.vecdot first shipped in numpy 2.0.
    assert any("np.vecdot(" in src for src in SOURCES.values())
    assert not REQUIRES["numpy"].specifier.contains(Version("1.26"))


def test_runtime_dependencies_are_imported():
    # threadpoolctl was once declared but never used; full-pool scoring now imports it
    # (skriskrank._fast.run_blocks). numba is the compiled kernels' engine.
    imported = {m for src in SOURCES.values()
                for m in re.findall(r"^\s*(?:from|import) (\w+)", src, re.M)}
    for name in ("threadpoolctl", "numba"):
        assert name in REQUIRES and name in imported


HEAVY = ("sklearn", "torch", "skorch", "sentence_transformers", "numba", "scipy", "pandas")


@pytest.mark.parametrize("code", [
    "import skriskrank",
    "from skriskrank._cli import _parser; _parser().format_help()",
])
def test_the_package_and_the_command_line_load_nothing_heavy(code):
    """Importing the package and printing --help pay for the standard library only."""
    import subprocess
    import sys

    probe = f"{code}; import sys; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_the_default_backend_grades_and_ranks_without_importing_torch():
    """Once the graph is exported, the ONNX path needs neither torch nor transformers."""
    import subprocess
    import sys

    from skriskrank._encoder import resolve_model
    from skriskrank._onnx import OnnxEncoder

    OnnxEncoder(resolve_model(None)[1])  # exported here if this machine has no graph yet
    code = ("import sys; from skriskrank import RiskAuditor, pretrained_pipeline; "
            "from skriskrank.datasets import load_demo; "
            "registry = load_demo().registry; "
            "levels = RiskAuditor.pretrained().predict(registry); "
            "top = pretrained_pipeline(registry).predict(['delete my old log files']); "
            "print(len(levels), top.shape, sorted(m for m in ('torch', 'transformers', "
            "'sentence_transformers', 'skorch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == "202 (1, 5) []"


def test_the_command_line_names_the_encoder_backends_and_default_as_the_library_does():
    # The CLI writes them out so that --help imports no numpy.
    from skriskrank._cli import _BACKENDS, _DEFAULT_BACKEND
    from skriskrank._encoder import BACKENDS, DEFAULT_BACKEND

    assert (_BACKENDS, _DEFAULT_BACKEND) == (BACKENDS, DEFAULT_BACKEND)


def test_every_public_name_loads_on_first_use():
    import skriskrank

    for name in skriskrank.__all__:
        assert getattr(skriskrank, name) is not None
