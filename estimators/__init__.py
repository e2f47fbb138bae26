"""Estimators for k-ary randomized response: counts in, estimates with honest intervals out.

Pure numpy/scipy functions on sufficient statistics (counts); no web code.  The mechanism's
realized parameters come from :mod:`client.mechanism`.
"""

from .evaluation import coverage, expected_width
from .intervals import EXACT_MAX_N
from .joint import crosstab
from .marginal import estimate, subgroups
from .planning import margin_of_error, sample_size
from .result import CrosstabResult, EstimateResult
from .validate import METHODS

__all__ = [
    "EXACT_MAX_N",
    "METHODS",
    "CrosstabResult",
    "EstimateResult",
    "coverage",
    "crosstab",
    "estimate",
    "expected_width",
    "margin_of_error",
    "sample_size",
    "subgroups",
]
