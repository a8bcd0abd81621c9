"""Sphinx configuration of the skriskrank documentation.

Build with ``python -m sphinx -W -b html docs docs/_build/html``. The build reads nothing
from the network: there is no intersphinx, the gallery runs on the packaged demo data with
the packaged encoder, and the benchmark pages are copied from ``benchmarks/results``.
"""

import os
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

# Document (and run the gallery against) this checkout's package, not whichever copy of
# skriskrank happens to be installed.
sys.path.insert(0, str(ROOT))
# The small helpers of this build (the gallery's order) live in docs/sphinxext.
sys.path.insert(0, str(DOCS / "sphinxext"))
# The packaged encoder needs no hub; a hub lookup would hang or fail without network. These
# are read when the Hugging Face modules are first imported, so set them before anything
# imports skriskrank.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The gallery's figures are drawn without a display.
os.environ.setdefault("MPLBACKEND", "agg")

from numpydoc.xref import DEFAULT_LINKS  # noqa: E402

import skriskrank  # noqa: E402
import skriskrank.baselines  # noqa: E402
import skriskrank.datasets  # noqa: E402
import skriskrank.metrics  # noqa: E402

project = "skriskrank"
author = "The skriskrank developers"
copyright = "2026, the skriskrank developers"  # noqa: A001 (Sphinx's name)
release = version = skriskrank.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    # sphinx-gallery writes these next to the pages it generates; they are not pages.
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
    # docs/benchmarks.md is the repository's note (linked from the README); the site
    # includes it from benchmarks/index.rst, so it is not a page of its own.
    "benchmarks.md",
]

# -- references ------------------------------------------------------------------------------
# Every reference must resolve: a renamed or undocumented name fails the build under -W.
nitpicky = True
# Without intersphinx (the build is offline), references into other projects cannot
# resolve. Each entry below is such a reference, made in a docstring for the reader's
# sake; the name is rendered as plain text.
nitpick_ignore = [
    # Python's standard library: a registry is shared, not copied, by deepcopy.
    ("py:func", "copy.deepcopy"),
    # scikit-learn: the pipeline, cloning, cross-validation and scorer machinery the steps
    # plug into.
    ("py:class", "sklearn.pipeline.Pipeline"),
    ("py:func", "sklearn.base.clone"),
    ("py:class", "sklearn.model_selection.KFold"),
    ("py:func", "sklearn.metrics.make_scorer"),
    # joblib: the thread backend of DenseRetriever(n_jobs=...), and the disk cache a
    # reranker's memory= accepts (user guide, Dask page).
    ("py:func", "joblib.parallel_config"),
    ("py:class", "joblib.Memory"),
    # Dask: the partitioned frames of the batch-prediction example and its user guide page.
    ("py:mod", "dask.dataframe"),
    # pandas: the tables that explain, audit, to_frame and ranking_report return.
    ("py:class", "pandas.DataFrame"),
    # skorch: the base class of the reranker's net.
    ("py:class", "skorch.NeuralNet"),
    # skops: the serialisation library behind save and load.
    ("py:mod", "skops.io"),
]

# -- autodoc / autosummary ---------------------------------------------------------------------
autosummary_generate = True
# The page's table of contents lists "fit()", not "RiskAwareReranker.fit()": the class is the
# page's title, and the qualified names overflowed the theme's narrow right-hand sidebar.
toc_object_entries_show_parents = "hide"
# numpydoc writes the signatures' defaults; the type hints of the code would repeat them.
autodoc_typehints = "none"
# Constants are documented by the comments above them; do not show long reprs.
autodoc_preserve_defaults = True

# -- numpydoc ----------------------------------------------------------------------------------
# Methods are listed by the class template (docs/_templates/autosummary/class.rst).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
# Link the types of parameters and returns that are skriskrank's own; every other word of a
# type ("ndarray of float32 of shape (n, k)") stays plain text. numpydoc's default aliases
# point into Python's and NumPy's inventories, which an offline build does not have, so
# they map to themselves (plain text) as well.
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {name: name for name in DEFAULT_LINKS}
for _module in (skriskrank, skriskrank.datasets, skriskrank.baselines):
    for _name in _module.__all__:
        if isinstance(getattr(_module, _name), type):
            numpydoc_xref_aliases[_name] = f"{_module.__name__}.{_name}"
# Every docstring section must parse; a malformed one is an error, not a silent loss.
numpydoc_validation_checks = set()

# -- sphinx-gallery ----------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # Only plot_*.py run during the build; the other scripts are shown, not run (one needs
    # the UltraTool data).
    "filename_pattern": r"/plot_",
    # From a first pipeline to choosing lambda, filtering, auditing and explaining.
    "within_subsection_order": "gallery_order.ExampleOrder",
    # "Examples using this name" on the API pages.
    "doc_module": ("skriskrank",),
    "backreferences_dir": "generated/backreferences",
    # No network: never look up other projects' documentation for code links.
    "reference_url": {"skriskrank": None},
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1,
    # A failing example fails the build.
    "only_warn_on_example_error": False,
}

# -- HTML --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skriskrank {release}"
html_static_path = []
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    # No external icons or version switcher: nothing that needs the network.
    "icon_links": [],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_sidebars = {"index": []}
html_show_sourcelink = True

# -- myst (the Markdown notes and benchmark results) -------------------------------------------
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]


# -- files made at build time ------------------------------------------------------------------
def _copy_benchmark_results(app):
    """Copy ``benchmarks/results`` (tables and figures) into the source tree as pages.

    The results live once, in ``benchmarks/results``, where the benchmarks write them; the
    copy under ``docs/benchmarks/results`` is generated (and ignored by git).
    """
    src = ROOT / "benchmarks" / "results"
    dst = DOCS / "benchmarks" / "results"
    dst.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.iterdir()):
        if path.suffix in (".md", ".png"):
            target = dst / path.name
            # Copy only what changed, so that Sphinx does not rebuild unchanged pages.
            if not target.exists() or target.read_bytes() != path.read_bytes():
                shutil.copyfile(path, target)


def _write_cli_help(app):
    """Write ``skriskrank <command> --help`` of every command for the CLI page."""
    import contextlib
    import io

    from skriskrank._cli import _parser

    # argparse wraps to the terminal's width; fix it so the page does not depend on it.
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "92"
    try:
        parser = _parser()
        texts = {}
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        pages = {"skriskrank": parser, **{f"skriskrank {n}": p for n, p in sub.choices.items()}}
        for name, p in pages.items():
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                p.print_help()
            texts[name] = buf.getvalue()
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    out = DOCS / "generated" / "cli"
    out.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        target = out / (name.replace(" ", "_") + ".txt")
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")


def _skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods.

    scikit-learn adds them to every estimator for metadata routing; their docstrings are
    scikit-learn's and point into its user guide, which an offline build cannot link.
    """
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def _constant_doc(app, what, name, obj, options, lines):
    """Document a re-exported constant by the ``#:`` comment where it is defined.

    autodoc reads ``#:`` comments from the module it documents, but skriskrank's constants
    are defined (and commented) in private modules and re-exported; without this, a
    constant's page would show the docstring of ``int`` or ``tuple``. A public constant
    without a comment is a warning, so it fails the build like any undocumented name.
    """
    if what != "data" or not name.startswith("skriskrank."):
        return
    from sphinx.pycode import ModuleAnalyzer, PycodeError
    from sphinx.util import logging

    package, short = name.rsplit(".", 1)
    for modname in sorted(sys.modules):
        module = sys.modules[modname]
        if not modname.startswith(package + ".") or getattr(module, short, None) is not obj:
            continue
        try:
            doc = ModuleAnalyzer.for_module(modname).find_attr_docs().get(("", short))
        except PycodeError:
            continue
        if doc:
            lines[:] = list(doc)
            return
    logging.getLogger(__name__).warning("constant %s has no #: comment to document it", name)
    lines[:] = []


def setup(app):
    """Generate the files the pages include before Sphinx reads the sources."""
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _constant_doc)
    app.connect("builder-inited", _copy_benchmark_results)
    app.connect("builder-inited", _write_cli_help)
