"""deniable.estimators as a public API: every estimator and result exported, results that serialize and
print themselves, and arguments after ε keyword-only."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

import deniable.estimators as est
from deniable.client.designs import forced


def test_every_exported_name_resolves_and_has_a_docstring():
    for name in est.__all__:
        value = getattr(est, name)
        assert getattr(value, "__doc__", None) or not callable(value), name


@pytest.mark.parametrize("name", ["estimate", "subgroups", "crosstab", "estimate_grid", "estimate_laplace",
                                  "estimate_multi", "estimate_list", "list_margin", "monitor", "monitor_path",
                                  "estimate_design", "plan", "worst_case", "margin_of_error", "sample_size",
                                  "coverage", "expected_width"])
def test_arguments_after_epsilon_are_keyword_only(name):
    parameters = list(inspect.signature(getattr(est, name)).parameters.values())
    names = [p.name for p in parameters]
    last = max(i for i, n in enumerate(names) if n.startswith("epsilon") or n in ("design", "margin", "n", "pi"))
    for p in parameters[last + 1:]:
        assert p.kind is inspect.Parameter.KEYWORD_ONLY, (name, p.name)


def results():
    yield est.estimate([700, 300], 1.0)
    yield est.crosstab(np.array([[200, 150], [300, 350]]), 1.0, 2.0)
    yield est.estimate_grid(np.array([300, 700]), 40, 1, 1.0)
    yield est.estimate_multi(500, np.array([200, 120, 90]), np.array([[0, 60, 40], [0, 0, 30], [0, 0, 0]]),
                             np.array([120, 200, 130, 50]), 2.0)
    yield est.estimate_list(np.array([10, 30, 40, 20, 0]), np.array([5, 20, 35, 30, 10]), 3, None)
    yield est.plan(1.0, 2, 0.1)
    yield est.worst_case(1.0, 2, 500)
    yield est.estimate_design([412, 188], forced(2 / 3, [1 / 6, 1 / 6]))
    yield est.monitor_path(np.array([[60, 40], [70, 30]]), 1.0)


@pytest.mark.parametrize("result", list(results()), ids=lambda r: type(r).__name__)
def test_results_serialize_and_print_themselves(result):
    assert isinstance(result, est.Result)
    data = result.to_dict()
    json.dumps(data, allow_nan=False)
    assert data and isinstance(data, dict)
    text = result.summary()
    assert isinstance(text, str) and len(text.splitlines()) >= 2


def test_low_level_helpers_stay_in_their_submodules():
    assert "confidence_sequence" not in est.__all__
    from deniable.estimators.sequential import confidence_sequence  # noqa: F401  still there for who needs it
