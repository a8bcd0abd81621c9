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
    # threadpoolctl was declared but never used; numba is now the compiled kernels' engine.
    imported = {m for src in SOURCES.values()
                for m in re.findall(r"^\s*(?:from|import) (\w+)", src, re.M)}
    assert "threadpoolctl" not in REQUIRES and "threadpoolctl" not in imported
    assert "numba" in REQUIRES and "numba" in imported
