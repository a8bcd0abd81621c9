"""The documentation's API reference covers the public API, and its link checker works.

The site itself is built by ``.ci/run`` (``sphinx -W``); these tests are the quick checks
that do not need a build.
"""

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
API = DOCS / "api.rst"
PUBLIC_MODULES = ["skriskrank", "skriskrank.metrics", "skriskrank.datasets",
                  "skriskrank.baselines", "skriskrank.gateway"]

_CURRENTMODULE = re.compile(r"^\.\. (?:currentmodule|automodule):: (\S+)")
_AUTO_DIRECTIVE = re.compile(r"^\.\. auto(?:class|function|data|exception):: (\S+)")
_ENTRY = re.compile(r"^ {3}(~?[A-Za-z_][\w.]*)\s*$")


def documented_names(text):
    """Fully qualified names that api.rst lists in autosummary tables or auto directives."""
    names, module, in_autosummary = set(), None, False
    for line in text.splitlines():
        if m := _CURRENTMODULE.match(line):
            module = m.group(1)
            in_autosummary = False
        elif m := _AUTO_DIRECTIVE.match(line):
            name = m.group(1)
            names.add(name if "." in name else f"{module}.{name}")
            in_autosummary = False
        elif line.startswith(".. autosummary::"):
            in_autosummary = True
        elif in_autosummary and (m := _ENTRY.match(line)):
            names.add(f"{module}.{m.group(1).lstrip('~')}")
        elif line and not line.startswith(" "):
            in_autosummary = False
    return names


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_name_is_in_the_api_reference(module_name):
    module = importlib.import_module(module_name)
    missing = sorted(set(f"{module_name}.{n}" for n in module.__all__)
                     - documented_names(API.read_text(encoding="utf-8")))
    assert not missing, f"add these to docs/api.rst: {missing}"


def test_the_parser_reads_autosummary_tables_and_modules():
    text = """\
.. currentmodule:: pkg

.. autosummary::
   :toctree: generated/
   :template: class.rst

   Thing
   ~other_thing

Prose that ends the table.

   Indented prose
.. currentmodule:: pkg.sub
.. autofunction:: helper
"""
    assert documented_names(text) == {"pkg.Thing", "pkg.other_thing", "pkg.sub.helper"}


def _check_links():
    spec = importlib.util.spec_from_file_location("check_links", DOCS / "check_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_link_checker_finds_missing_files_and_anchors(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "img.png").write_bytes(b"png")
    (tmp_path / "index.html").write_text(
        '<a href="sub/page.html#here">ok</a> <a href="sub/page.html#gone">bad anchor</a>'
        '<a href="missing.html">bad file</a> <img src="img.png"> <img src="nope.png">'
        '<a href="https://example.org/x.html">external</a> <a href="#top">self</a>'
        '<a id="top"></a> <a href="sub/">directory</a>', encoding="utf-8")
    (tmp_path / "sub" / "page.html").write_text(
        '<h1 id="here">x</h1><a href="../index.html#top">up</a>', encoding="utf-8")
    (tmp_path / "sub" / "index.html").write_text("<p>index</p>", encoding="utf-8")
    problems = _check_links().check_site(tmp_path)
    assert len(problems) == 3, problems
    assert any("#gone" in p for p in problems)
    assert any("missing.html (no such file)" in p for p in problems)
    assert any("nope.png (no such file)" in p for p in problems)


def test_link_checker_main_reports_a_clean_site(tmp_path, capsys):
    (tmp_path / "index.html").write_text('<a href="index.html">me</a>', encoding="utf-8")
    assert _check_links().main([str(tmp_path)]) == 0
    assert "1 pages, 0 broken" in capsys.readouterr().out
