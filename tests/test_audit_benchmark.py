"""benchmarks/audit.py: the report and the figure are well formed (the numbers are in results)."""

import numpy as np

from benchmarks.audit import MARKS, _measures, plot, real_mcp, render


def _result():
    rng = np.random.default_rng(0)
    y = rng.integers(1, 6, 300)
    pred = np.clip(y + rng.integers(-1, 2, 300), 1, 5)
    m = _measures(y, pred)
    row = {"auditor": m, "baseline": m, "n_test": 300}
    cons = {"auditor": m, "baseline (0.90 quantile)": m, "baseline (0.95 quantile)": m,
            "coverage": 0.89, "n_test": 300}
    return {
        "rows": {"ultratool -> sealtools": row, "sealtools -> ultratool": row,
                 "pooled 5-fold CV": row, "pooled 5-fold CV, conservative": cons},
        "coverage_recall": {0.5: 0.6, 0.89: 0.9}, "coverage_chosen": 0.89, "n_tools": 300,
        "real_mcp": _real(),
        "mcp": {"n_tools": 1, "n_destructive": 1, "destructive_predicted_risky": 1,
                "destructive_risky_from_text_alone": 0,
                "tools": [{"name": "rm", "destructive": True, "predicted": 3, "text_only": 2}]},
    }


def _marked(n=60):
    rng = np.random.default_rng(1)
    return {"marks": np.array(MARKS)[rng.integers(0, 3, n)],
            "servers": np.array([f"s{i % 7}" for i in range(n)]),
            "names": np.array([f"tool{i}" for i in range(n)], dtype=object)}


def _real():
    marked = _marked()
    risky = np.isin(marked["marks"], MARKS[1:]).astype(float)

    def proba(train, test):
        # Every test tool of another server: P(level >= 3) 0.8 for a writing tool, 0.2 not.
        assert not set(marked["servers"][train]) & set(marked["servers"][test])
        P = np.zeros((len(test), 5))
        P[:, 0] = 1 - (0.2 + 0.6 * risky[test])
        P[:, 2] = 0.2 + 0.6 * risky[test]
        return P

    return real_mcp(marked, proba, 0.5)


def test_real_mcp_splits_by_server():
    real = _real()
    # Read-only tools at P(>=3) 0.2 are graded 1, the others 3, with the median rule.
    assert real["destructive_risky"] == 1.0 and real["read_only_risky"] == 0.0
    assert real["auc"] == 1.0
    assert sum(map(sum, real["confusion"].values())) == real["n_tools"] == 60
    assert real["n_servers"] == 7


def test_measures():
    m = _measures([1, 2, 3, 4, 5, 1], [1, 3, 3, 2, 5, 3])
    assert m["exact"] == 0.5 and m["within_one"] == 4 / 6
    assert m["recall_risky"] == 2 / 3 and m["l1_flagged"] == 0.5 and m["l2_flagged"] == 1.0
    assert np.asarray(m["confusion"]).sum() == 6


def test_render_and_plot(tmp_path):
    result = _result()
    text = render(result)
    assert text.startswith("# RiskAuditor")
    table = text.split("## Confusion")[0]
    assert table.count("| yes |") + table.count("| **no** |") == 9
    assert "| rm | yes | 3 | 2 |" in text
    plot(result, tmp_path / "audit.png")
    assert (tmp_path / "audit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
