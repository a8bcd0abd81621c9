"""scikit-learn's estimator checks over every public skriskrank estimator.

Which checks apply
------------------
skriskrank's estimators do not take 2-D numeric arrays: :class:`~skriskrank.FrozenEmbedder`
takes raw query strings, and every later step (``DenseRetriever``, ``RiskAwareReranker``,
``GraphSmoother``, ``RuleFilter``, ``NeedAwareFilter``) takes the
:class:`~skriskrank.RankingBatch` the step before it returns. Their tags say so
(``input_tags.two_d_array=False``). For such estimators
scikit-learn's ``_yield_all_checks`` warns ``SkipTestWarning`` and yields nothing, so
``parametrize_with_checks`` / ``check_estimator`` generate a single check per estimator:
``check_estimator_cloneable``, which ``estimator_checks_generator`` always yields first.
:func:`test_parametrize_with_checks` runs exactly that, and
:func:`test_array_checks_do_not_apply` pins the set of generated checks down, so that a
change of tags, or of scikit-learn, cannot change what the suite tests unnoticed.

What does not run, and why:

- every check that feeds ``make_blobs``/random 2-D float arrays to ``fit`` or ``predict``
  (``check_fit2d_*``, ``check_fit1d``, ``check_n_features_in``, ``check_dtype_object``,
  ``check_estimators_nan_inf``, ``check_transformer_general``, ``check_dict_unchanged``,
  ``check_fit_idempotent``, ``check_methods_subset_invariance``,
  ``check_methods_sample_order_invariance``, ``check_requires_y_none``,
  ``check_fit_check_is_fitted``, ``check_estimators_pickle``, ...): the estimators reject
  arrays by design (ValueError / TypeError naming the expected input);
- ``check_transformer_preserve_dtypes`` and the ``set_output`` checks: ``transform``
  returns a RankingBatch, not an array (``preserves_dtype=[]``, no
  ``get_feature_names_out``).

What runs instead:

- the data-free checks, called directly as ``check(name, estimator)`` on every estimator:
  cloneable, no attributes set in ``__init__``, ``get_params`` invariance, ``set_params``,
  default-constructible parameters, mixin order, no errors raised in ``__init__`` or
  ``set_params``;
- the behaviour the array checks would have covered, with the inputs these estimators do
  take: that each tag is honest (:class:`TestTagsAreHonest`), fit returning self,
  NotFittedError before fit, fit idempotence and pickling of fitted estimators. The
  per-module test files cover each estimator in depth.
"""

import importlib
import inspect
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.exceptions import NotFittedError, SkipTestWarning
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_get_params_invariance,
    check_mixin_order,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
    estimator_checks_generator,
    parametrize_with_checks,
)

import skriskrank
from skriskrank import (
    DenseRetriever,
    FrozenEmbedder,
    GraphSmoother,
    NeedAwareFilter,
    RankingBatch,
    RiskAwareReranker,
    ToolRegistry,
)

try:
    RuleFilter = skriskrank.RuleFilter
except AttributeError:  # not exported yet
    from skriskrank._filter import RuleFilter

#: Steps that take a RankingBatch (everything after the embedder).
BATCH_STEPS = (DenseRetriever, RiskAwareReranker, GraphSmoother, RuleFilter, NeedAwareFilter)


def _public_estimators():
    """Every BaseEstimator subclass skriskrank exports, RuleFilter, and the baselines."""
    found = {
        obj for obj in vars(skriskrank).values()
        if inspect.isclass(obj) and issubclass(obj, BaseEstimator)
    }
    found.add(RuleFilter)
    try:
        baselines = importlib.import_module("skriskrank.baselines")
    except ImportError:
        pass
    else:
        found |= {
            obj for name, obj in vars(baselines).items()
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator)
            and not name.startswith("_")
        }
    return sorted(found, key=lambda cls: cls.__name__)


ESTIMATORS = _public_estimators()
#: Estimators that are not ranking steps: RiskAuditor is a classifier over tools (its tags are
#: tested in test_auditor.py), so the ranking steps' "not a classifier" rules do not apply.
NOT_PIPELINE_STEPS = (skriskrank.RiskAuditor,)


def _instance(cls):
    # Seeded where there is a seed, so that deterministic behaviour can be checked.
    params = cls().get_params()
    return cls(random_state=0) if "random_state" in params else cls()


def test_every_estimator_is_covered():
    names = {cls.__name__ for cls in ESTIMATORS}
    assert {"FrozenEmbedder", "DenseRetriever", "RiskAwareReranker", "GraphSmoother",
            "RuleFilter", "NeedAwareFilter"} <= names


# --------------------------------------------------------------------------------------------
# The data-free scikit-learn checks
# --------------------------------------------------------------------------------------------
DATA_FREE_CHECKS = [
    check_estimator_cloneable,
    check_no_attributes_set_in_init,
    check_get_params_invariance,
    check_set_params,
    check_parameters_default_constructible,
    check_mixin_order,
    check_do_not_raise_errors_in_init_or_set_params,
]


@pytest.mark.parametrize("check", DATA_FREE_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_data_free_checks(cls, check):
    check(cls.__name__, _instance(cls))


# --------------------------------------------------------------------------------------------
# The array-based checks do not apply
# --------------------------------------------------------------------------------------------
def _expected_failed_checks(estimator):
    # Nothing is expected to fail: the checks that cannot apply are not generated at all.
    return {}


with warnings.catch_warnings():
    # Raised at collection time, once per estimator: "Can't test estimator ...".
    warnings.simplefilter("ignore", SkipTestWarning)
    _ARRAY_CHECKS = parametrize_with_checks(
        [_instance(cls) for cls in ESTIMATORS], expected_failed_checks=_expected_failed_checks
    )


@_ARRAY_CHECKS
def test_parametrize_with_checks(estimator, check):
    check(estimator)


def _check_name(check):
    return getattr(check, "func", check).__name__


def test_parametrize_with_checks_generates_only_the_clone_check():
    argnames, argvalues = _ARRAY_CHECKS.mark.args[:2]
    assert argnames == "estimator, check"
    generated = [(type(est).__name__, _check_name(check)) for est, check in argvalues]
    assert generated == [(cls.__name__, "check_estimator_cloneable") for cls in ESTIMATORS]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_array_checks_do_not_apply(cls):
    est = _instance(cls)
    assert get_tags(est).input_tags.two_d_array is False
    with pytest.warns(SkipTestWarning, match=f"Can't test estimator {cls.__name__}"):
        generated = [_check_name(check) for _, check in estimator_checks_generator(est)]
    assert generated == ["check_estimator_cloneable"]


@pytest.mark.parametrize(
    "cls",
    [
        cls
        for cls in ESTIMATORS
        if cls not in NOT_PIPELINE_STEPS
    ],
    ids=lambda c: c.__name__,
)
def test_preserves_dtype_tag_is_empty(cls):
    # No step returns an array, so no step preserves an input dtype.
    assert get_tags(_instance(cls)).transformer_tags.preserves_dtype == []


# --------------------------------------------------------------------------------------------
# The tags are honest
# --------------------------------------------------------------------------------------------
def _registry():
    return ToolRegistry.from_records(
        [
            {"name": "read_file", "description": "Read the contents of a text file", "risk": 1},
            {"name": "list_dir", "description": "List the files in a folder", "risk": 1},
            {"name": "send_email", "description": "Send an email message", "risk": 3},
            {"name": "delete_file", "description": "Delete a file from disk", "risk": 4},
            {"name": "run_shell", "description": "Run a bash command", "risk": 5},
            {"name": "get_weather", "description": "Look up the weather forecast", "risk": 1},
            {"name": "move_file", "description": "Move a file to a folder", "risk": 2},
            {"name": "pay_invoice", "description": "Pay an invoice", "risk": None},
        ]
    )


@pytest.fixture(scope="module")
def batch_data():
    """A full-pool batch of random unit embeddings, with gold tools."""
    reg = _registry()
    rng = np.random.default_rng(0)
    tools = rng.normal(size=(len(reg), 12)).astype(np.float32)
    tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    gold = [i % len(reg) for i in range(16)]
    queries = tools[gold] + 0.5 * rng.normal(size=(16, 12)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    batch = RankingBatch.full_pool(reg, queries, tools, encoder="synthetic")
    y = [{reg.names[g], reg.names[(g + 1) % len(reg)]} for g in gold]
    return batch, y


def _small(cls):
    """A fast instance of a batch step."""
    if cls is RiskAwareReranker:
        return RiskAwareReranker(epochs=1, hidden=4, validation_fraction=0, random_state=0)
    if cls is DenseRetriever:
        return DenseRetriever(n_candidates=4)
    return cls()


def _scores(out):
    return np.asarray(out.scores), np.asarray(out.candidates)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny heads: thread hand-offs would dominate
    yield
    torch.set_num_threads(n)


class TestTagsAreHonest:
    @pytest.mark.parametrize(
        "cls", [c for c in ESTIMATORS if c not in NOT_PIPELINE_STEPS], ids=lambda c: c.__name__
    )
    def test_not_a_classifier_or_regressor(self, cls):
        # A classifier tag would bring StratifiedKFold and classes_ into GridSearchCV.
        est = _instance(cls)
        assert not is_classifier(est) and not is_regressor(est)
        assert get_tags(est).estimator_type is None
        assert get_tags(est).requires_fit is True

    @pytest.mark.parametrize("cls", BATCH_STEPS, ids=lambda c: c.__name__)
    def test_batch_steps_reject_arrays_and_strings(self, cls, batch_data):
        _, y = batch_data
        tags = get_tags(cls())
        assert tags.input_tags.two_d_array is False
        assert tags.input_tags.string is False
        for X in (np.zeros((16, 12)), ["read the file"] * 16):
            with pytest.raises(TypeError, match="expects the RankingBatch"):
                _small(cls).fit(X, y)

    @pytest.mark.parametrize("cls", BATCH_STEPS, ids=lambda c: c.__name__)
    def test_target_required_tag(self, cls, batch_data):
        batch, y = batch_data
        required = get_tags(cls()).target_tags.required
        if required:
            with pytest.raises(ValueError, match="y"):
                _small(cls).fit(batch, None)
        else:
            unsupervised = _small(cls).fit(batch)
            supervised = _small(cls).fit(batch, y)
            np.testing.assert_array_equal(
                unsupervised.transform(batch).scores, supervised.transform(batch).scores
            )
        assert required == (cls in (RiskAwareReranker, GraphSmoother, NeedAwareFilter))

    @pytest.mark.parametrize("cls", BATCH_STEPS, ids=lambda c: c.__name__)
    def test_fit_returns_self_not_fitted_and_transform_output(self, cls, batch_data):
        batch, y = batch_data
        est = _small(cls)
        with pytest.raises(NotFittedError):
            est.transform(batch)
        with pytest.raises(NotFittedError):
            est.predict(batch)
        assert est.fit(batch, y) is est
        out = est.transform(batch)
        # preserves_dtype=[] is honest: the output is a batch, not an array.
        assert isinstance(out, RankingBatch)
        assert out.registry is batch.registry
        assert out.tool_embeddings is batch.tool_embeddings
        assert est.predict(batch).shape == (16, min(est.k, out.n_candidates))
        assert not hasattr(est, "get_feature_names_out")

    @pytest.mark.parametrize("cls", BATCH_STEPS, ids=lambda c: c.__name__)
    def test_deterministic_tag_fit_idempotent_and_pickle(self, cls, batch_data):
        batch, y = batch_data
        est = _small(cls)
        assert get_tags(est).non_deterministic is False
        first = _scores(est.fit(batch, y).transform(batch))
        blob = pickle.dumps(est)
        # Refit (idempotence) and a fresh clone (determinism) give the same output.
        for other in (est.fit(batch, y), clone(est).fit(batch, y), pickle.loads(blob)):
            for a, b in zip(_scores(other.transform(batch)), first, strict=True):
                np.testing.assert_array_equal(a, b)

    def test_unseeded_reranker_is_tagged_non_deterministic(self):
        assert get_tags(RiskAwareReranker()).non_deterministic is True
        assert get_tags(RiskAwareReranker(random_state=3)).non_deterministic is False

    def test_embedder_takes_strings_not_arrays(self):
        tags = get_tags(FrozenEmbedder())
        assert tags.input_tags.string is True
        assert tags.input_tags.two_d_array is False
        assert tags.target_tags.required is False
        emb = FrozenEmbedder(_registry(), model="no-such-model")
        # Rejected before any model loading: the input check comes first.
        with pytest.raises(ValueError, match="X must be a list of query strings"):
            emb.fit(np.zeros((3, 4)))
        with pytest.raises(NotFittedError):
            emb.transform(["read the file"])

    @pytest.mark.slow
    def test_embedder_fits_on_strings_without_y(self):
        # string=True and target required=False: raw strings, y optional.
        reg = _registry()
        queries = ["delete my old file", "what is the weather"]
        emb = FrozenEmbedder(reg)
        assert emb.fit(queries) is emb
        out = emb.transform(queries)
        assert isinstance(out, RankingBatch) and out.is_full_pool
        again = clone(emb).fit(queries, [{"delete_file"}, {"get_weather"}]).transform(queries)
        np.testing.assert_array_equal(again.scores, out.scores)
        loaded = pickle.loads(pickle.dumps(emb))
        np.testing.assert_array_equal(loaded.transform(queries).scores, out.scores)
