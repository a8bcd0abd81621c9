"""A fitted pipeline serves many threads at once and answers each exactly as alone."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from skriskrank import build_pipeline
from skriskrank.datasets import load_demo

pytestmark = pytest.mark.slow


def test_eight_threads_get_the_sequential_answers():
    demo = load_demo()
    pipe = build_pipeline(demo.registry, n_candidates=50, epochs=2, random_state=0)
    pipe.fit(demo.queries[:300], demo.relevant[:300])
    known = demo.queries[300:400]
    # New texts too, so the embedding cache grows while other threads read it.
    fresh = [f"{q} (request {i})" for i, q in enumerate(demo.queries[400:560])]
    calls = [[(known + fresh)[(t * 37 + i * 11) % (len(known) + len(fresh))]
              for i in range(200)] for t in range(8)]
    texts = sorted({q for thread in calls for q in thread})
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda qs: [pipe.predict([q])[0].tolist() for q in qs], calls))
    expected = {q: pipe.predict([q])[0].tolist() for q in texts}
    for thread, got in zip(calls, answers, strict=True):
        assert got == [expected[q] for q in thread]
    assert np.mean([len(set(row)) == 5 for row in expected.values()]) == 1.0
