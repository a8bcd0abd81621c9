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
