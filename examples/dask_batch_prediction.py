"""
Rank tools for a large query log on a Dask cluster
==================================================

A fitted pipeline ranks the tools for every request of a query log that is too large for
one process. :mod:`dask.dataframe` splits the log into partitions, and each worker ranks its
partitions with the pipeline's ``predict``, through ``map_partitions``. The ranked lists are
the ones ``predict`` gives in one process.

The example starts a local cluster of two process workers, so the documentation shows it
but does not run it. To run it (it needs the ``dask`` extra, ``pip install
"skriskrank[dask]"``)::

    python examples/dask_batch_prediction.py                  # a log made from the demo queries
    python examples/dask_batch_prediction.py log.parquet      # your log, with a "query" column
    python examples/dask_batch_prediction.py log.parquet tcp://scheduler:8786   # a real cluster

On a real cluster, every worker needs skriskrank and its encoder installed, as the client
has them.
"""

import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from skriskrank import build_pipeline  # noqa: E402
from skriskrank.datasets import load_demo  # noqa: E402

K = 5
TOOL_COLUMNS = [f"tool_{i + 1}" for i in range(K)]


def rank_partition(part: pd.DataFrame, pipe) -> pd.DataFrame:
    """The partition with its top-K tool names as new columns (None where a list is short)."""
    top = pipe.predict(part["query"].tolist())
    return part.assign(**{c: top[:, i] for i, c in enumerate(TOOL_COLUMNS)})


def demo_log(queries, copies=4) -> pd.DataFrame:
    """A log of distinct requests: each demo query, as written and with a few openers."""
    openers = ["", "please ", "can you ", "I need to "][:copies]
    rows = [(opener + q, i) for opener in openers for i, q in enumerate(queries)]
    return pd.DataFrame(rows, columns=["query", "demo_id"])


def main(log_path=None, scheduler=None):
    # A pipeline fitted on the demo catalogue; a saved one would come from skriskrank.load.
    demo = load_demo()
    pipe = build_pipeline(demo.registry, n_candidates=100, random_state=0)
    pipe.fit(demo.queries, demo.relevant)
    # Each request of a log is seen once: caching its embedding would only grow the
    # workers' memory. The tools' embeddings travel with the fitted pipeline.
    pipe.set_params(embed__cache=False, embed__show_progress_bar=False)

    if log_path is None:
        log = dd.from_pandas(demo_log(demo.queries), npartitions=8)
    elif str(log_path).endswith(".csv"):
        log = dd.read_csv(log_path, blocksize="16MB")
    else:
        log = dd.read_parquet(log_path)

    if scheduler is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        cluster, client = None, Client(scheduler)
    try:
        meta = {**log.dtypes.to_dict(), **dict.fromkeys(TOOL_COLUMNS, "object")}
        # dask.delayed puts one copy of the fitted pipeline in the graph; each worker
        # receives it once, whatever the number of partitions it ranks.
        ranked = log.map_partitions(rank_partition, dask.delayed(pipe), meta=meta)
        t0 = time.perf_counter()
        result = ranked.compute()
        seconds = time.perf_counter() - t0
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    # dask keeps text columns as strings: a short list's missing names come back as NA.
    names = result[TOOL_COLUMNS].astype(object)
    names = names.where(names.notna(), None).to_numpy()
    print(f"{len(result)} requests ranked in {seconds:.1f} s "
          f"({len(result) / seconds:.0f} per second) on {log.npartitions} partitions")
    print(result.head(3).to_string())

    # The same lists as predict in one process, on a sample of the log.
    sample = np.random.default_rng(0).choice(len(result), size=min(200, len(result)),
                                             replace=False)
    expected = pipe.predict(result["query"].iloc[sample].tolist())
    same = (names[sample] == expected).all(axis=1)
    print(f"same as predict in one process: {same.sum()} of {len(sample)} sampled requests")
    return result


if __name__ == "__main__":
    main(*sys.argv[1:3])
