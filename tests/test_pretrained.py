"""The pretrained pipeline, and learning from a gateway's log (``skriskrank fit --log``)."""

import json

import numpy as np
import pytest

from skriskrank import ToolRegistry, load, load_tools, pretrained_pipeline
from skriskrank._cli import main
from skriskrank._pretrained import MSG_BAD_FILE
from skriskrank.datasets import load_demo, load_ultratool
from skriskrank.gateway import read_log
from skriskrank.metrics import ndcg_at_k


@pytest.fixture(scope="module")
def demo():
    return load_demo()


def _log(path, searches):
    """A gateway log: per search, its event and the calls the agent made after it."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, (query, called, refused) in enumerate(searches):
            session = f"s{i % 3}"
            fh.write(json.dumps({"session": session, "event": "search", "query": query,
                                 "tools": []}) + "\n")
            for tool in called:
                fh.write(json.dumps({"session": session, "event": "call", "tool": tool,
                                     "decision": "allowed"}) + "\n")
            for tool in refused:
                fh.write(json.dumps({"session": session, "event": "call", "tool": tool,
                                     "decision": "refused"}) + "\n")


def test_pretrained_pipeline_is_fitted_on_any_catalogue(demo):
    pipe = pretrained_pipeline(demo.registry, k=3)
    assert [name for name, _ in pipe.steps] == ["embed", "retrieve", "smooth", "filter"]
    top = pipe.predict(demo.queries[:4])
    assert top.shape == (4, 3) and set(top.ravel()) <= set(demo.registry.names)
    # The demo's tools name no server: the graph has no edge and the ranking is the
    # retriever's.
    assert pipe.named_steps["smooth"].n_edges_ == 0
    batch = pipe[:2].transform(demo.queries[:4])
    assert (pipe[:3].transform(demo.queries[:4]).ranked_indices() == batch.ranked_indices()).all()
    # A catalogue smaller than k and the rule filter.
    small = ToolRegistry.from_records([{"name": "a", "description": "read a file", "risk": 1},
                                       {"name": "b", "description": "delete a file", "risk": 4}])
    assert pretrained_pipeline(small, k=5, need_aware=False).predict(["x"]).shape == (1, 2)


def test_need_threshold_is_the_operating_point(demo):
    from sklearn.utils._param_validation import InvalidParameterError

    risky = np.asarray(demo.registry.risk) >= 3
    exposed = []
    for t in (1.0, 0.5, 0.0):
        pipe = pretrained_pipeline(demo.registry, k=5, need_threshold=t)
        assert pipe.named_steps["filter"].need_threshold == t
        exposed.append(risky[demo.registry.index_of(pipe.predict(demo.queries).ravel())].sum())
    # A lower threshold admits at least the tools a higher one does (and here more).
    assert exposed == sorted(exposed) and exposed[0] < exposed[-1]
    with pytest.raises(InvalidParameterError, match="need_threshold"):
        pretrained_pipeline(demo.registry, need_threshold=1.5)


def test_grading_then_the_pipeline_encodes_each_text_of_a_catalogue_once(demo):
    # The packaged auditor records the encoder settings the pipeline uses (batch size,
    # word pieces read), so the pipeline finds the embeddings grading made: serve --tools and
    # the gateway encode a new catalogue's whole texts once (grading), and the pipeline only
    # the brief texts it ranks by that are not whole texts too.
    from skriskrank import FrozenEmbedder, RiskAuditor
    from skriskrank._tool_text import tool_texts

    registry = ToolRegistry.from_records(
        [{"name": f"{name}_graded_once", "description": text, "risk": None}
         for name, text in zip(demo.registry.names, demo.registry.texts, strict=True)])
    auditor = RiskAuditor.pretrained()
    probe = FrozenEmbedder(registry)
    assert (auditor.batch_size, auditor.max_seq_length) == (probe.batch_size,
                                                            probe.max_seq_length)
    graded = auditor.grade(registry)
    start = probe.n_encoded()
    pretrained_pipeline(graded)
    brief = set(tool_texts(graded, "brief")) - set(graded.texts)
    assert brief and probe.n_encoded() - start == len(brief)
    pretrained_pipeline(graded)
    assert probe.n_encoded() - start == len(brief)


def test_the_tools_of_one_server_are_lifted_together():
    def server(*tools):
        return {"tools": [{"name": n, "description": d, "inputSchema": {"type": "object"}}
                          for n, d in tools]}

    registry = load_tools({
        "calendar": server(("list_events", "List the events of a calendar"),
                           ("create_event", "Create a calendar event"),
                           ("delete_event", "Delete a calendar event")),
        "files": server(("read_file", "Read a text file"), ("write_file", "Write a file"))},
        scan=False).with_risk([1, 2, 3, 1, 3])
    assert registry.servers == ("calendar",) * 3 + ("files",) * 2
    pipe = pretrained_pipeline(registry, k=3)
    assert pipe.named_steps["smooth"].n_edges_ == 3 + 1  # the pairs within each server
    query = ["What is on my calendar tomorrow?"]
    before = pipe[:2].transform(query)
    after = pipe[:3].transform(query)
    gain = dict(zip(after.candidates[0], after.scores[0] - 2 / 3 * before.scores[0],
                    strict=True))
    # A calendar tool receives more from its server than a file tool does from its own.
    calendar = registry.index_of(["list_events", "create_event", "delete_event"])
    files = registry.index_of(["read_file", "write_file"])
    assert min(gain[i] for i in calendar) > max(gain[i] for i in files)


def test_a_bad_weights_file_is_refused(demo, tmp_path):
    bad = tmp_path / "w.npz"
    np.savez(bad, config=np.array(json.dumps({"format": 1})))
    refused = MSG_BAD_FILE.split("{path} ")[1].split(":")[0]
    for path in (bad, tmp_path / "missing.npz"):
        with pytest.raises(ValueError, match=refused):
            pretrained_pipeline(demo.registry, weights=path)


def test_read_log_pairs_each_search_with_the_calls_after_it(demo, tmp_path):
    names = demo.registry.names
    path = tmp_path / "gateway.jsonl"
    _log(path, [("first task", [names[0], names[1]], [names[2]]),
                ("second task", [], [names[3]]),  # nothing called: skipped
                ("third task", [names[4], "gone_tool"], [])])  # unknown tool: skipped
    data = read_log(path, demo.registry)
    assert data.queries == ["first task", "third task"]
    assert data.relevant == [frozenset(names[:2]), frozenset([names[4]])]
    assert data.query_ids == ["line1", "line7"]
    _log(path, [("only refused", [], [names[0]])])
    with pytest.raises(ValueError, match="nothing to learn from"):
        read_log(path, demo.registry)
    path.write_text('{"event": "search", "query": "ok"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 2: not JSON"):
        read_log(path, demo.registry)
    path.write_text('{"event": "search", "query": 5}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: the search's query"):
        read_log(path, demo.registry)


@pytest.mark.slow
def test_fit_on_a_simulated_log_beats_the_pretrained_pipeline(data_dir, tmp_path):
    """UltraTool's queries split in two: the first half searched through a gateway whose agent
    called each query's gold tools, the second half held out."""
    ds = load_ultratool(data_dir / "ultratool")
    tools = tmp_path / "tools.csv"
    ds.registry.to_frame().to_csv(tools, index=False)
    order = np.random.default_rng(0).permutation(len(ds))
    train, test = order[:500], order[500:]
    log = tmp_path / "gateway.jsonl"
    _log(log, [(ds.queries[i], sorted(ds.relevant[i]), []) for i in train])
    model = tmp_path / "log.skops"
    # Three epochs, not the default ten: the test is that the log teaches, not how well.
    assert main(["fit", "--tools", str(tools), "--log", str(log), "-o", str(model),
                 "--epochs", "3", "--json"]) == 0
    fitted = load(model)
    pretrained = pretrained_pipeline(fitted.named_steps["embed"].registry)
    queries = [ds.queries[i] for i in test]
    relevant = [ds.relevant[i] for i in test]
    before = ndcg_at_k(pretrained.predict(queries), relevant)
    after = ndcg_at_k(fitted.predict(queries), relevant)
    assert after > before + 0.1, (before, after)
