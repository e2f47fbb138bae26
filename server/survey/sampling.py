"""Design-based estimates of a responses file with its sampling design, and of respondents raked to
population margins: one import for :mod:`.weighted` (``deniable estimate --weights COLUMN``) and
:mod:`.raking` (``--rake MARGINS.json``), and the regressions under either (``deniable regress
--weights``, ``--rake``; the dashboard's regression page weighted by raking).

Every result renders itself (:class:`.estimates.SurveyResult`): ``to_dict()``, ``to_csv()``,
``table()`` and ``summary()`` of :class:`Weighted`, :class:`WeightedSubgroups`,
:class:`WeightedCrosstab`, :class:`Raked`, :class:`RakedBy` and :class:`RakedCrosstab`.  A regression
(:func:`fit_weighted_formula`) is fitted by pseudo-likelihood, a designed outcome's matrix in it, and
under raked weights with the calibration variance (:func:`fit_raked_formula`); raking (as
:func:`raked_estimates` rakes) may start from sampling weights.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from deniable.estimators.weights import SamplingDesignError, SurveyDesign

from .dataset import Dataset, DesignColumns
from .definition import Question, Survey
from .raking import (Raked, RakedBy, RakedCrosstab, RakedSubgroups, load_margins, parse_margins, rake_dataset,
                     rakeable, raked_by, raked_crosstab_of, raked_estimates, raked_subgroups)
from .weighted import (Weighted, WeightedCrosstab, WeightedMean, WeightedSubgroups, check_weighted, crosstab_cells,
                       design_of, question_json, unweighted_reason, weighted_crosstab_of, weighted_estimates,
                       weighted_subgroups)

def fit_weighted_formula(dataset: Dataset, columns: DesignColumns, text: str, *, reference: str | None = None,
                         confidence: float = 0.95):
    """``deniable regress --weights``: the formula's model fitted by pseudo-likelihood under the
    dataset's sampling design, with sandwich standard errors (:func:`deniable.estimators.regress`
    with ``design=``).  Returns ``(formula, built, result)`` as
    :func:`.regression.fit_formula` does.

    The formula's design matrix is built from the answer patterns as for any regression, then
    given back to each respondent (the row of its pattern); a respondent who did not answer the
    outcome or a covariate keeps its place in the design with weight 0 (a domain, as for the
    estimates).  The outcome must be a question :func:`unweighted_reason` accepts as categorical.
    An outcome randomized by a randomized-response design has the design's misclassification
    matrix in the pseudo-likelihood, ``P(report r | x) = Σ_t M[r, t] π_t(x)``, as the unweighted
    fit has it (:func:`.regression.fit_formula`): the weighted score equations
    ``Σ_i w_i ∂ℓ_i/∂θ = 0`` and the sandwich with the strata and clusters are the same
    (:func:`deniable.estimators.regress` with ``design=`` and ``matrix=``)."""
    from deniable import estimators

    from .patterns import from_dataset
    from .regression import FormulaError, design, parse_formula, reference_index

    survey = dataset.survey
    formula = parse_formula(text, survey)
    outcome = formula.outcome
    reason = unweighted_reason(outcome)
    if reason is not None or not outcome.qtype.categorical:
        raise FormulaError(f"--weights: the outcome {outcome.id!r} is {reason or 'not a single-choice question'}")
    patterns = from_dataset(Dataset(survey, dict(dataset.columns)))
    built = design(patterns, formula)
    if built.weights.sum() == 0:
        raise FormulaError(f"no response answered {outcome.id!r} and every covariate")
    row_of = _fit_rows(patterns, formula, dataset)
    complete = row_of >= 0
    full = design_of(dataset, columns)
    sample = dataclasses.replace(full, weights=full.weights * complete)
    at = np.where(complete, row_of, 0)
    result = estimators.regress(
        built.reports[at], built.covariates[at], k=outcome.k, design=sample, names=built.names,
        terms=built.terms, reference=reference_index(outcome, reference), outcome=outcome.id,
        options=outcome.options, confidence=confidence, profile=False, **_outcome_channel(outcome))
    return formula, built, result


def _fit_rows(patterns, formula, dataset: Dataset) -> np.ndarray:
    """Each row of ``dataset``: its row of the fit's design (:func:`.regression.design` of ``patterns``,
    the complete rows in its order), or −1 when it left out the outcome or a covariate."""
    from .patterns import collapse

    qids = [formula.outcome.id, *(q.id for q in formula.questions)]
    unique, _ = collapse(patterns, qids)
    unique = unique[np.all(unique >= 0, axis=1)] if unique.size else unique
    index = {tuple(row): i for i, row in enumerate(unique.tolist())}
    rows = np.column_stack([np.asarray(dataset.columns[qid], dtype=np.int64) for qid in qids])
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    return np.array([index.get(tuple(row), -1) for row in distinct.tolist()], dtype=np.int64)[inverse.reshape(-1)]


def _outcome_channel(outcome: Question) -> dict:
    """How the outcome's reports were randomized, as :func:`deniable.estimators.regress` takes it: its ε,
    or a randomized-response design's matrix (in the pseudo-likelihood) and its label."""
    realized = getattr(outcome.qtype.mechanism(outcome), "design", None)
    if realized is None:
        return {"epsilon": outcome.epsilon}
    privacy = f"ε = {realized.epsilon:.4f}" if realized.ldp else "not ε-LDP"
    return {"epsilon": None, "matrix": realized.matrix,
            "matrix_label": f"{realized.name} design (its misclassification matrix in the pseudo-likelihood) · {privacy}"}


def fit_raked_formula(dataset: Dataset, margins: dict[str, np.ndarray], text: str, *, trim: tuple | None = None,
                      reference: str | None = None, confidence: float = 0.95, survey: Survey | None = None,
                      base: SurveyDesign | None = None, base_column: str | None = None):
    """``deniable regress --rake MARGINS.json`` and the dashboard's regression page weighted by raking:
    the respondents raked to ``margins`` (:func:`parse_margins`, as :func:`raked_estimates` rakes them),
    and the formula's model fitted by pseudo-likelihood under the raked weights, with the sandwich
    whose scores are calibrated (:func:`deniable.estimators.regress` with ``calibration=``: R's
    ``svyglm`` on a ``rake()``d design).  Returns ``(formula, built, result, raked)``: as
    :func:`.regression.fit_formula`, and a :class:`~.raking.Raked` without estimates that says what raking
    did (:meth:`~.raking.RakingSummary.raking_dict`, :meth:`~.raking.RakingSummary.raking_text`).

    The dataset may be answer patterns with their counts (a database's, or a file's through
    :func:`.patterns.from_dataset`): a respondent's raked weight depends only on its answers to the
    raking questions, and its score only on its answers to the formula's, so a pattern's respondents
    share both, and the fit and its calibration variance are those of one row per respondent.  A
    respondent who did not answer the outcome or a covariate keeps its place in the raking and the
    calibration (weight 0 in the fit, as R's ``subset`` of a calibrated design).  ``survey``: the whole
    survey, when the dataset holds only some of its questions.  Raises FormulaError for the formula
    (and an outcome weighting cannot estimate), SamplingDesignError naming the margin's field for raking.

    ``base``: the sample's design (``deniable regress --rake`` with ``--weights COLUMN``, and
    ``--strata``, ``--cluster``, ``--fpc``; one row per respondent, ``base_column`` naming the weights'
    column): raking starts from its sampling weights, as :func:`raked_estimates` does, and the
    sandwich's calibrated scores keep its strata, clusters and finite-population correction
    (:class:`deniable.estimators.regression.Calibration` with ``design``: R's ``svyglm`` on
    ``rake(svydesign(ids = ~cluster, strata = ~stratum, weights = ~w, fpc = …), …)``; the variance
    is derived in :func:`deniable.estimators.regress`'s Notes, after Deville & Särndal 1992)."""
    from deniable import estimators
    from deniable.estimators.regression import Calibration

    from .patterns import Patterns
    from .regression import FormulaError, design, parse_formula, reference_index

    survey = survey or dataset.survey
    formula = parse_formula(text, survey)
    outcome = formula.outcome
    for q in (outcome, *formula.questions):
        if q.id not in dataset.columns:
            raise FormulaError(f"{q.id!r}: its answers are not in the answer patterns a regression reads")
    reason = unweighted_reason(outcome)
    if reason is not None or not outcome.qtype.categorical:
        raise FormulaError(f"rake: the outcome {outcome.id!r} is {reason or 'not a single-choice question'}")
    counts, n, variables, _start, raking, untrimmed = rake_dataset(dataset, margins, trim, survey, base)
    patterns = Patterns(dataset.survey, np.full(dataset.n_rows, "", dtype=object), dict(dataset.columns),
                        counts.astype(np.int64))  # the dataset's rows as they are, each with its count
    built = design(patterns, formula)
    if built.weights.sum() == 0:
        raise FormulaError(f"no response answered {outcome.id!r} and every covariate")
    row_of = _fit_rows(patterns, formula, dataset)
    at = np.where(row_of >= 0, row_of, 0)
    calibration = Calibration(weights=np.asarray(raking.weights), variables=tuple(variables.values()),
                              domain=row_of >= 0, design=base)
    result = estimators.regress(
        built.reports[at], built.covariates[at], k=outcome.k, weights=counts, calibration=calibration,
        names=built.names, terms=built.terms, reference=reference_index(outcome, reference), outcome=outcome.id,
        options=outcome.options, confidence=confidence, profile=False, **_outcome_channel(outcome))
    raked = Raked(survey=survey, margins=margins, raking=raking, untrimmed=untrimmed, n=n, questions=[],
                  unweighted={}, skipped=[], base=base_column if base is not None else None)
    return formula, built, result, raked


__all__ = ["Raked", "RakedBy", "RakedCrosstab", "RakedSubgroups", "SamplingDesignError", "Weighted",
           "WeightedCrosstab", "WeightedMean", "WeightedSubgroups", "check_weighted", "crosstab_cells", "design_of",
           "fit_raked_formula", "fit_weighted_formula", "load_margins", "parse_margins", "question_json",
           "rakeable", "raked_by", "raked_crosstab_of", "raked_estimates", "raked_subgroups", "unweighted_reason",
           "weighted_crosstab_of", "weighted_estimates", "weighted_subgroups"]
