"""The demo tool catalogue and labelled queries that ship inside the package.

``skriskrank demo`` and the examples run on this data with no network and no files.
"""

from __future__ import annotations

import dataclasses
from importlib.resources import files

import pandas as pd

from .._registry import ToolRegistry
from ._loaders import ToolRetrievalDataset, load_queries_jsonl

__all__ = ["DEMO_DOMAINS", "DemoData", "load_demo"]

#: The ten tool domains of the demo catalogue, in file order.
DEMO_DOMAINS = ("files", "shell", "email", "calendar", "payments_banking", "cloud_infrastructure",
                "databases", "web", "health_records", "messaging")

DEMO_TOOLS_FILE = "demo_tools.csv"
DEMO_QUERIES_FILE = "demo_queries.jsonl"
_TOOL_COLUMNS = ("name", "domain", "description", "risk", "rationale", "permissions")

MSG_TOOL_COLUMNS = "{file}: expected columns {expected}, got {got}."
MSG_BAD_TOOL_DOMAIN = ("{file}: tool {name!r} has unknown domain {domain!r}; expected one of "
                       "{allowed}.")
MSG_EMPTY_RATIONALE = "{file}: tool {name!r} has no rationale."
MSG_QUERY_DOMAINS = "{file}: every demo query needs a 'domain'."


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class DemoData(ToolRetrievalDataset):
    """The packaged demo registry and its labelled queries, made by :func:`load_demo`.

    A :class:`~skriskrank.datasets.ToolRetrievalDataset` named ``"demo"`` with split
    ``"all"``, whose ``domains`` hold each query's domain (that of its first gold tool, one of
    :data:`DEMO_DOMAINS`), plus two per-tool fields, keyword-only. The queries are distinct,
    each with one to three gold tools; every tool has a risk level 1..5 (none unknown) and
    explicit permission categories.

    Parameters
    ----------
    rationales : dict of str to str
        Tool name -> one-line justification of its risk level.
    tool_domains : dict of str to str
        Tool name -> the tool's domain, one of :data:`DEMO_DOMAINS`.

    Examples
    --------
    >>> from skriskrank.datasets import load_demo
    >>> demo = load_demo()
    >>> demo.name, demo.split, demo.tool_domains["delete_file"]
    ('demo', 'all', 'files')
    """

    name: str = "demo"
    split: str = "all"
    rationales: dict[str, str]
    tool_domains: dict[str, str]

    def __repr__(self) -> str:
        return f"DemoData(n_queries={len(self)}, n_tools={len(self.registry)})"

    def as_dataset(self) -> ToolRetrievalDataset:
        """The demo as a plain :class:`~skriskrank.datasets.ToolRetrievalDataset`.

        Returns
        -------
        dataset : ToolRetrievalDataset
            The same name, split, registry, queries, gold tools, domains and query ids.
        """
        fields = dataclasses.fields(ToolRetrievalDataset)
        return ToolRetrievalDataset(**{f.name: getattr(self, f.name) for f in fields})


def load_demo() -> DemoData:
    """Load the demo tool catalogue and labelled queries that ship with skriskrank.

    202 agent tools over ten domains (:data:`DEMO_DOMAINS`), read-only and risky variants
    side by side (``read_file`` at level 1, ``write_file`` 3, ``delete_file`` 4,
    ``wipe_disk`` 5), levelled by the paper's rubric (:ref:`risk`). Of the 564 queries, 259
    need a tool of level 3 or more; many others only sound risky.

    Returns
    -------
    demo : DemoData
        The registry, queries, gold tools, query domains and per-tool rationales.

    Raises
    ------
    ValueError
        If a packaged file is malformed, naming the file, line or tool (for example a gold
        tool that is not in the catalogue).

    Examples
    --------
    >>> from skriskrank.datasets import load_demo
    >>> demo = load_demo()
    >>> len(demo.registry) >= 150, len(demo.queries) >= 300
    (True, True)
    >>> demo.registry.risk_of(["read_file", "delete_file", "wipe_disk"]).tolist()
    [1, 4, 5]
    >>> sorted(demo.registry.permissions[demo.registry.index_of("run_shell_command")])
    ['code_execution', 'shell_execution']
    >>> demo.rationales["delete_file"]
    'Irreversible: the file does not go to the trash.'
    """
    data = files("skriskrank") / "data"
    return _load(data / DEMO_TOOLS_FILE, data / DEMO_QUERIES_FILE)


def _load(tools_file, queries_file) -> DemoData:
    """Read a demo catalogue CSV and query JSONL, each a path or a package resource."""
    with tools_file.open("r", encoding="utf-8") as fh:
        df = pd.read_csv(fh, dtype=str, keep_default_na=False)
    tname = tools_file.name
    if tuple(df.columns) != _TOOL_COLUMNS:
        raise ValueError(MSG_TOOL_COLUMNS.format(
            file=tname, expected=list(_TOOL_COLUMNS), got=list(df.columns)))
    for name, domain, rationale in zip(df["name"], df["domain"], df["rationale"], strict=True):
        if domain not in DEMO_DOMAINS:
            raise ValueError(MSG_BAD_TOOL_DOMAIN.format(
                file=tname, name=name, domain=domain, allowed=list(DEMO_DOMAINS)))
        if not rationale.strip():
            raise ValueError(MSG_EMPTY_RATIONALE.format(file=tname, name=name))
    # Every demo tool is labelled, so a blank or non-integer risk cell stays a string that the
    # registry rejects by tool name instead of becoming an unknown level.
    risk = [int(r) if r.strip().isdigit() else r for r in df["risk"]]
    registry = ToolRegistry(df["name"].tolist(), df["description"].tolist(), risk,
                            df["permissions"].tolist())
    # The user-file loader, so that a malformed line is named the same way.
    queries = load_queries_jsonl(queries_file, registry, name="demo", split="all")
    if queries.domains is None:
        raise ValueError(MSG_QUERY_DOMAINS.format(file=queries_file.name))
    return DemoData(
        registry=registry, queries=queries.queries, relevant=queries.relevant,
        domains=queries.domains, rationales=dict(zip(df["name"], df["rationale"], strict=True)),
        tool_domains=dict(zip(df["name"], df["domain"], strict=True)))
