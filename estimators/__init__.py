"""Estimators for k-ary randomized response: counts in, estimates with honest intervals out.

Pure numpy/scipy functions on sufficient statistics (counts); no web code and nothing from
``deniable.server``.  The mechanism's realized parameters come from :mod:`deniable.client.mechanism`.

The names below are imported when first used (PEP 562), so that importing this package — as
the command line does for its option choices — does not load scipy.

Every estimator of a question type is here (``estimate`` for a single choice, ``estimate_grid``
and ``estimate_laplace`` for a number, ``estimate_multi`` for check-all-that-apply,
``estimate_list`` for a list experiment, ``estimate_design`` for a randomized-response design
with a known matrix; ``estimate_two_group`` and ``group_logit`` for the two-group designs that
estimate non-compliance, CDM, CDMsym, SLD and UQTunknown), with its result class; every result serializes itself (``to_dict()``) and
prints itself (``summary()``).  Arguments after ε are keyword-only.  Lower-level pieces (the
interval methods, confidence sequences for one count, the exact belts) stay in their submodules.

>>> from deniable.estimators import estimate
>>> estimate([700, 300], epsilon=1.0).method
'exact'
"""

from .lazy import lazy_exports
from .names import METHODS

_HOMES = {
    "DesignResult": "designs", "estimate_design": "designs",
    "coverage": "evaluation", "expected_width": "evaluation",
    "GroupLogitResult": "group_logit", "group_logit": "group_logit",
    "GroupPlan": "group_plan", "plan_two_group": "group_plan",
    "crosstab": "joint",
    "ListMargin": "listexp", "ListResult": "listexp", "estimate_list": "listexp", "list_margin": "listexp",
    "estimate": "marginal", "subgroups": "marginal",
    "MultiResult": "multi", "estimate_multi": "multi",
    "MeanResult": "numeric", "NumericResult": "numeric", "estimate_grid": "numeric", "estimate_laplace": "numeric",
    "Plan": "planning", "WorstCase": "planning", "margin_of_error": "planning", "plan": "planning",
    "sample_size": "planning", "worst_case": "planning",
    "RegressionError": "regression", "regress": "regression",
    "Term": "regression_effects",
    "RegressionResult": "regression_result",
    "CrosstabResult": "result", "EstimateResult": "result", "Result": "result",
    "SequencePath": "sequential", "monitor": "sequential", "monitor_path": "sequential",
    "RakeResult": "raking", "rake": "raking",
    "MODELS": "two_group", "TwoGroupResult": "two_group", "estimate_two_group": "two_group",
    "two_group_counts": "two_group",
    "SamplingDesignError": "weights", "SurveyDesign": "weights", "survey_design": "weights",
    "WeightedResult": "weighted", "weighted_estimate": "weighted",
}

__all__ = ["METHODS", *sorted(_HOMES)]


__getattr__, __dir__ = lazy_exports(globals(), _HOMES, __all__)
