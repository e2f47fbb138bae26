"""Estimators for k-ary randomized response: counts in, estimates with honest intervals out.

Pure numpy/scipy functions on sufficient statistics (counts); no web code and nothing from
``deniable.server``.  The mechanism's realized parameters come from :mod:`deniable.client.mechanism`.

The names below are imported when first used (PEP 562), so that importing this package — as
the command line does for its option choices — does not load scipy.

>>> from deniable.estimators import estimate
>>> estimate([700, 300], epsilon=1.0).method
'exact'
"""

import importlib

from .names import METHODS

_HOMES = {
    "coverage": "evaluation", "expected_width": "evaluation",
    "crosstab": "joint",
    "estimate": "marginal", "subgroups": "marginal",
    "Plan": "planning", "WorstCase": "planning", "margin_of_error": "planning", "plan": "planning",
    "sample_size": "planning", "worst_case": "planning",
    "RegressionError": "regression", "regress": "regression",
    "Term": "regression_effects",
    "RegressionResult": "regression_result",
    "CrosstabResult": "result", "EstimateResult": "result",
    "SequencePath": "sequential", "confidence_sequence": "sequential", "monitor": "sequential",
    "monitor_path": "sequential",
}

__all__ = ["METHODS", *sorted(_HOMES)]


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
