"""Estimators for k-ary randomized response: counts in, estimates with honest intervals out.

Pure numpy/scipy functions on sufficient statistics (counts); no web code and nothing from
``deniable.server``.  The mechanism's realized parameters come from :mod:`deniable.client.mechanism`.

>>> from deniable.estimators import estimate
>>> estimate([700, 300], epsilon=1.0).method
'exact'
"""

from .evaluation import coverage, expected_width
from .intervals import METHODS as _METHODS
from .joint import crosstab
from .marginal import estimate, subgroups
from .planning import Plan, WorstCase, margin_of_error, plan, sample_size, worst_case
from .regression import RegressionError, regress
from .regression_effects import Term
from .regression_result import RegressionResult
from .result import CrosstabResult, EstimateResult
from .sequential import SequencePath, confidence_sequence, monitor, monitor_path

METHODS = tuple(_METHODS)  # the names of the interval methods, in the registry's order

__all__ = [
    "METHODS",
    "CrosstabResult",
    "Plan",
    "WorstCase",
    "EstimateResult",
    "RegressionError",
    "RegressionResult",
    "SequencePath",
    "Term",
    "confidence_sequence",
    "coverage",
    "crosstab",
    "estimate",
    "expected_width",
    "margin_of_error",
    "monitor",
    "monitor_path",
    "plan",
    "regress",
    "sample_size",
    "subgroups",
    "worst_case",
]
