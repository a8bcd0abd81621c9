"""Model selection and batch prediction on a Dask cluster give the one-process results.

A 2-worker ``LocalCluster`` with process workers stands in for a real cluster: each worker is
a fresh Python process that receives pickled estimators, as a remote one would. The
embeddings are shared through ``FrozenEmbedder(cache=<directory>)``, the on-disk cache,
which the client fills before the search; the workers then encode nothing (they never even
load the encoder), and so see the very numbers the sequential search saw.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from skriskrank import FrozenEmbedder, build_pipeline, make_ranking_scorer
from skriskrank.datasets import load_demo

# A guard for installs without the extra; the test extra (skriskrank[mcp,dask]) has both, so
# in CI these tests run.
distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
N_QUERIES = 150
FOLDS = 3
GRID = {"rerank__risk_weight": [0.0, 0.3], "smooth__alpha": [0.0, 0.4]}
# Small but real training, so that each of the 12 fits takes a fraction of a second.
FAST = dict(epochs=2, patience=1)


@pytest.fixture(scope="module")
def client():
    # No dashboard: it would need bokeh and warn without it. The scheduler's own HTTP routes
    # take a free port: on 8787, the default, a cluster that another test file started at the
    # same time would make it warn (an error here) and fail to start.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": ":0"}) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def demo():
    demo = load_demo()
    return demo.subset(range(N_QUERIES)), demo


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory, demo):
    """An on-disk embedding cache holding the registry and every query, encoded here."""
    data, _ = demo
    cache = str(tmp_path_factory.mktemp("embeddings"))
    embedder = FrozenEmbedder(data.registry, cache=cache, show_progress_bar=False)
    embedder.fit(data.queries).transform(data.queries)
    return cache, embedder


def _embedding_state():
    """What this process's embedding caches did: texts encoded, texts served, models loaded."""
    from skriskrank import _encoder

    stores = list(_encoder._STORES.values())
    return {"encoded": sum(s.n_encoded for s in stores),
            "served": sum(len(s.index) for s in stores),
            "models_loaded": len(_encoder._MODELS)}


def _search(pipe, registry, n_jobs):
    return GridSearchCV(
        pipe, GRID, cv=KFold(FOLDS, shuffle=True, random_state=0), refit=False, n_jobs=n_jobs,
        scoring={"ndcg": make_ranking_scorer("ndcg", k=5),
                 "rvr": make_ranking_scorer("rvr", k=5, registry=registry)},
        error_score="raise")


def test_grid_search_on_a_cluster_scores_as_the_sequential_search(client, demo, warm_cache):
    data, _ = demo
    cache, embedder = warm_cache
    X, y = list(data.queries), list(data.relevant)
    pipe = build_pipeline(data.registry, n_candidates=50, cache=cache, **FAST)
    encoded = embedder.n_encoded()
    assert encoded == len(data.registry) + len(X)  # the warm-up encoded each text once

    sequential = _search(pipe, data.registry, n_jobs=1).fit(X, y)
    with joblib.parallel_backend("dask"):
        on_cluster = _search(clone(pipe), data.registry, n_jobs=-1).fit(X, y)

    seq, par = sequential.cv_results_, on_cluster.cv_results_
    assert par["params"] == seq["params"]
    scores = [key for key in seq if "_test_" in key]
    assert len(scores) == 2 * (FOLDS + 3)  # split0..2, mean, std, rank for ndcg and rvr
    for key in scores:
        np.testing.assert_array_equal(par[key], seq[key], err_msg=key)
    assert embedder.n_encoded() == encoded  # neither search encoded anything here

    # The fits ran in the two worker processes, which served every text from the disk cache:
    # none encoded a text, nor even loaded the encoder.
    workers = client.run(_embedding_state)
    assert len(workers) == 2
    for address, state in workers.items():
        assert state["served"] > 0, address
        assert state["encoded"] == 0, (address, state)
        assert state["models_loaded"] == 0, (address, state)


def copy_shards(shards: dict, root: str) -> None:
    """The docs' recipe for workers without a shared file system: write the client's shards."""
    for rel, data in shards.items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        # One temporary name per worker: two workers on one disk write the same shard.
        tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
        tmp.write_bytes(data)
        os.replace(tmp, path)  # a reader never sees half a shard


def _encode_here(registry, queries, cache):
    embedder = FrozenEmbedder(registry, cache=cache).fit(queries)
    return embedder.transform(queries).query_embeddings, embedder.n_encoded()


def test_shards_copied_to_the_workers_spare_their_encoding(client, demo, warm_cache,
                                                           tmp_path):
    # On a cluster without a shared file system, the client sends its shards to each
    # worker's own directory (here another directory of the same disk).
    data, _ = demo
    cache, embedder = warm_cache
    shards = {str(p.relative_to(cache)): p.read_bytes()
              for p in Path(cache).glob("*/shard-*.npz")}
    assert shards
    local = str(tmp_path / "worker-cache")
    client.run(copy_shards, shards, local)
    queries = list(data.queries[:30])
    expected = embedder.transform(queries).query_embeddings
    for worker, (emb, n_encoded) in client.run(_encode_here, data.registry, queries,
                                               local).items():
        assert n_encoded == 0, worker
        np.testing.assert_array_equal(emb, expected)


def _top_k(queries: pd.Series, pipe) -> pd.DataFrame:
    top = pipe.predict(queries.tolist())
    return pd.DataFrame(top, index=queries.index,
                        columns=[f"top{i + 1}" for i in range(top.shape[1])])


def test_map_partitions_predicts_as_one_process(client, demo, warm_cache):
    import dask

    data, full = demo
    cache, _ = warm_cache
    pipe = build_pipeline(data.registry, n_candidates=50, cache=cache, **FAST)
    pipe.fit(list(data.queries), list(data.relevant))
    # A query log is read once: caching its embeddings would only grow each worker's memory.
    # The workers encode their own partitions (queries they have never seen).
    pipe.set_params(embed__cache=False)
    queries = list(full.queries[-200:])  # not among the training queries
    expected = pipe.predict(queries)

    log = dd.from_pandas(pd.Series(queries, name="query"), npartitions=4)
    meta = pd.DataFrame({f"top{i + 1}": pd.Series(dtype=object) for i in range(5)})
    # One copy of the fitted pipeline in the graph, shared by the partitions' tasks.
    ranked = log.map_partitions(_top_k, dask.delayed(pipe), meta=meta).compute()

    assert ranked.index.tolist() == list(range(len(queries)))
    # dask stores text columns as strings, so a list shorter than k (a None) comes back NA.
    got = ranked.astype(object).where(ranked.notna(), None).to_numpy()
    np.testing.assert_array_equal(got, expected)


def test_the_library_never_imports_dask(warm_cache):
    # The pipeline reads its embeddings from the warm cache (fast); loading the encoder and
    # encoding, the one path that does not then run, is taken on a one-tool registry.
    code = textwrap.dedent("""
        import sys

        import skriskrank, skriskrank.baselines, skriskrank.datasets, skriskrank.metrics
        from skriskrank import FrozenEmbedder, ToolRegistry, build_pipeline
        from skriskrank.datasets import load_demo

        demo = load_demo().subset(range({n}))
        pipe = build_pipeline(demo.registry, n_candidates=20, epochs=1, cache={cache!r})
        pipe.fit(demo.queries, demo.relevant).predict(demo.queries[:5])
        one = ToolRegistry.from_records([{{"name": "t", "description": "a tool", "risk": 1}}])
        FrozenEmbedder(one, cache=False).fit(["a query"]).transform(["a query"])
        print(len(skriskrank._encoder._MODELS))
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")))
    """).format(n=N_QUERIES, cache=warm_cache[0])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    models_loaded, dask_modules = out.stdout.strip().splitlines()[-2:]
    assert models_loaded == "1"  # the encoder was loaded, and ran
    assert dask_modules == "[]", out.stdout
