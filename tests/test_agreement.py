"""Tests for the annotation protocol: resolve_votes, agreement, ordinal_alpha."""

import re

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from skriskrank.metrics import agreement, ordinal_alpha, resolve_votes
from skriskrank.metrics._agreement import (
    MSG_NO_VOTES,
    MSG_PAIR_EMPTY,
    MSG_PAIR_LENGTH,
    MSG_VOTE_LEVEL,
    MSG_VOTES_SHAPE,
)


class TestResolveVotes:
    def test_span_rule(self):
        out = resolve_votes([[1, 1, 1], [2, 3, 3], [2, 2, 3], [1, 3, 3], [4, 4, 5]])
        assert out["level"].tolist() == [1, 3, 2, pd.NA, 4]
        assert out["span"].tolist() == [0, 1, 1, 2, 1]
        assert out["resolution"].tolist() == ["unanimous", "median", "median", "review",
                                              "median"]
        assert out["level"].dtype == "Int64"

    def test_mapping_and_frame_keep_the_names(self):
        votes = {"a": [1, 2, 2], "b": [5, 5, 5]}
        out = resolve_votes(votes)
        assert out.index.tolist() == ["a", "b"] and out["level"].tolist() == [2, 5]
        frame = pd.DataFrame(votes).T
        assert resolve_votes(frame)["level"].tolist() == [2, 5]
        assert resolve_votes(frame).index.tolist() == ["a", "b"]
        # Without names (a list, like an array) the rows keep their positions.
        assert resolve_votes([[1, 2, 2], [5, 5, 5]]).index.tolist() == [0, 1]
        assert resolve_votes(np.array([[1, 2, 2], [5, 5, 5]])).index.tolist() == [0, 1]

    def test_even_votes_round_up_and_missing_votes(self):
        out = resolve_votes([[2, 3], [2, None]])
        assert out["level"].tolist() == [3, 2]
        assert out["n_votes"].tolist() == [2, 1]
        # A blank cell of a nullable integer column (pandas.NA) is a missing vote too.
        votes = pd.DataFrame({"x": [2, 2], "y": [3, None]}, dtype="Int64")
        assert resolve_votes(votes)["n_votes"].tolist() == [2, 1]

    @pytest.mark.parametrize("bad", [0, 6, 2.5, "3", True])
    def test_vote_outside_levels(self, bad):
        msg = MSG_VOTE_LEVEL.format(item="x", value=bad)
        with pytest.raises(ValueError, match=re.escape(msg)):
            resolve_votes({"x": [1, bad, 1]})

    def test_no_votes(self):
        with pytest.raises(ValueError, match=re.escape(MSG_NO_VOTES.format(item="tool #0"))):
            resolve_votes([[None, None]])

    @pytest.mark.parametrize("votes", [[], [[1, 2], [1]], [1, 2]])
    def test_bad_shape(self, votes):
        with pytest.raises(ValueError, match=re.escape(MSG_VOTES_SHAPE.split("{")[0])):
            resolve_votes(votes)

    @given(st.lists(st.lists(st.integers(1, 5), min_size=3, max_size=3), min_size=1,
                    max_size=20))
    def test_invariants(self, votes):
        out = resolve_votes(votes)
        for row, (_, r) in zip(votes, out.iterrows(), strict=True):
            span = max(row) - min(row)
            assert r["span"] == span
            if span >= 2:
                assert pd.isna(r["level"])
            else:
                assert min(row) <= r["level"] <= max(row)
                assert r["level"] == sorted(row)[1]  # the median of three votes


class TestAgreement:
    def test_against_the_libraries(self):
        rng = np.random.default_rng(0)
        a = rng.integers(1, 6, 200)
        b = np.clip(a + rng.integers(-2, 3, 200), 1, 5)
        stats = agreement(a, b)
        assert stats["n"] == 200
        assert stats["exact"] == pytest.approx(np.mean(a == b))
        assert stats["within_one"] == pytest.approx(np.mean(np.abs(a - b) <= 1))
        assert stats["qwk"] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
        expected = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float),
                                      level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
        assert stats["alpha"] == pytest.approx(expected)

    def test_perfect_agreement(self):
        stats = agreement([1, 2, 3, 5], [1, 2, 3, 5])
        assert stats["exact"] == stats["within_one"] == stats["qwk"] == stats["alpha"] == 1.0

    def test_errors(self):
        with pytest.raises(ValueError, match=re.escape(MSG_PAIR_LENGTH.format(a=2, b=1))):
            agreement([1, 2], [1])
        with pytest.raises(ValueError, match=re.escape(MSG_PAIR_EMPTY)):
            agreement([], [])
        with pytest.raises(ValueError, match=re.escape(
                MSG_VOTE_LEVEL.format(item="y_b[1]", value=9))):
            agreement([1, 2], [1, 9])

    def test_ordinal_alpha_many_raters_with_missing_votes(self):
        votes = [[1, 1, None], [2, 2, 3], [4, 5, 4], [5, 5, 5], [1, 2, 1]]
        expected = krippendorff.alpha(
            reliability_data=np.array(votes, dtype=float).T, level_of_measurement="ordinal",
            value_domain=[1, 2, 3, 4, 5])
        assert ordinal_alpha(votes) == pytest.approx(expected)
        assert np.isnan(ordinal_alpha([[2, 2], [2, 2]]))
