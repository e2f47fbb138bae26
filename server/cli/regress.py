"""``deniable regress``: a logit of a (randomized) answer on questions asked directly.

A thin click shell over :func:`deniable.server.survey.regression.fit_formula` (imported when the
command runs, like the other offline commands): the responses
(a CSV or Parquet file with its definition, or a survey in a database) become answer patterns, the formula a
design, and the fit a table or JSON.  Every problem — a formula naming an unknown question, an
empty cell, collinear covariates, separation — is a FieldError, one ``Error:`` line (the deniable group's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from deniable.server.survey.readers import RRREG_TWO_GROUP

from .common import (confidence_option, database, db_option, design_options, fail, rake_options,
                     rrreg_options, show)

if TYPE_CHECKING:
    from deniable.server.survey.definition import Survey
    from deniable.server.survey.patterns import Patterns


def _patterns(inputs: tuple[str, ...], db_path: str | None) -> tuple[Patterns, str, Survey]:
    """The answer patterns, the formula and the survey, from ``SURVEY.json RESPONSES.csv FORMULA`` or
    ``SLUG FORMULA``."""
    if db_path is not None:
        if len(inputs) != 2:
            raise click.UsageError("with --db, give the survey's SLUG and the FORMULA")
        from deniable.server.store.aggregates import pattern_counts
        from deniable.server.store.surveys import get_survey

        with database(db_path, readonly=True) as db:
            stored = get_survey(db, inputs[0])
            if stored is None:
                fail(f"{db_path}: no survey {inputs[0]!r} in the database")
            return pattern_counts(db, stored), inputs[1], stored.survey
    if len(inputs) != 3:
        raise click.UsageError('give SURVEY.json RESPONSES.csv "OUTCOME ~ COVARIATE + …" (or --db FILE SLUG FORMULA)')
    survey, dataset = _read(inputs)
    return _row_patterns(dataset), inputs[2], survey


def _row_patterns(dataset):
    """The file's rows as answer patterns, one a row (its frequency weight, else 1): :func:`~deniable.server.survey.regression.design`
    collapses them to the formula's distinct rows.  (:func:`~deniable.server.survey.patterns.from_dataset` keys a
    row by radix k + 1 per question, which mixes up the codes of a question with more codes than options — a
    two-group design's four (group, answer) codes — and the question before it.)"""
    import numpy as np

    from deniable.server.survey.patterns import NO_DAY, Patterns

    n = dataset.n_rows
    return Patterns(survey=dataset.survey, days=np.full(n, NO_DAY, dtype=object),
                    columns={q.id: np.asarray(dataset.columns[q.id], dtype=np.int64) for q in dataset.survey.questions},
                    counts=np.ones(n, dtype=np.int64) if dataset.weights is None
                    else np.asarray(dataset.weights, dtype=np.int64))


def _read(inputs, columns=None):
    """``(survey, dataset)`` from ``SURVEY.json RESPONSES.csv``, with the design ``columns`` if given (a bad
    file: one Error line, the deniable group's)."""
    from deniable.server.survey import readers
    from deniable.server.survey.definition import load_definition

    survey = load_definition(inputs[0])
    return survey, readers.read(inputs[1], survey, design=columns, codebook=inputs[0], progress=True)


def _design_columns(weights, strata, cluster, fpc):
    """The design columns asked for (None without --weights); UsageError for a design option without it."""
    from deniable.server.survey.dataset import DesignColumns

    if weights is None:
        for name, given in (("--strata", strata), ("--cluster", cluster), ("--fpc", fpc)):
            if given is not None:
                raise click.UsageError(f"{name} goes with --weights COLUMN (the sampling weights)")
        return None
    return DesignColumns(weights=weights, strata=strata, cluster=cluster, fpc=fpc)


def _read_design(inputs, db_path, columns):
    """``(survey, dataset)``: a responses file read with its design columns, one row per respondent;
    one ``Error:`` line for a database (no weight column) and for a bad file."""
    if db_path is not None:
        fail("--weights: a database has no weight column; export the responses (deniable export), add the "
             "weights (and strata, clusters) as columns, and fit the file with --weights COLUMN")
    if len(inputs) != 3:
        raise click.UsageError('with --weights, give SURVEY.json RESPONSES.csv "OUTCOME ~ COVARIATE + …"')
    return _read(inputs, columns)


def _weighted(inputs, db_path, reference, confidence, columns):
    """``(slug, formula, built, result)`` of a design-based fit (:func:`deniable.server.survey.sampling.fit_weighted_formula`)."""
    from deniable.server.survey import sampling

    survey, dataset = _read_design(inputs, db_path, columns)
    return (survey.slug, *sampling.fit_weighted_formula(dataset, columns, inputs[2], reference=reference,
                                                        confidence=confidence))


def _raked(inputs, db_path, reference, confidence, margins_path, trim, columns=None):
    """``(slug, formula, built, result, raked)`` of a fit under weights raked to MARGINS.json
    (:func:`deniable.server.survey.sampling.fit_raked_formula`), from the answer patterns: a database's
    aggregates (no row scan) or a responses file's patterns; with ``--weights COLUMN`` (``columns``),
    from the responses file's rows, raking starting from their sampling weights, the variance keeping
    the design's strata, clusters and fpc."""
    from deniable.server.survey import sampling

    if columns is not None:
        survey, dataset = _read_design(inputs, db_path, columns)
        text = inputs[2]
    else:
        patterns, text, survey = _patterns(inputs, db_path)
        dataset = patterns.dataset()
    margins = sampling.load_margins(margins_path, survey)
    base = None if columns is None else sampling.design_of(dataset, columns)
    return (survey.slug, *sampling.fit_raked_formula(dataset, margins, text, trim=trim, reference=reference,
                                                     confidence=confidence, survey=survey, base=base,
                                                     base_column=None if columns is None else columns.weights))


@click.command("regress")
@click.argument("inputs", nargs=-1,
                metavar='SURVEY.json RESPONSES.csv FORMULA | --db FILE SLUG FORMULA | --rrreg MODEL --p P DATA.csv FORMULA')
@db_option(None, "Read the reports of survey SLUG from this database.")
@confidence_option
@click.option("--reference", metavar="LABEL", help="The outcome option without coefficients (default: the last).")
@click.option("--profile/--no-profile", default=True, show_default=True,
              help="Profile-likelihood intervals (a few more fits per coefficient).")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
@design_options("The fit is then design-based: pseudo-likelihood, sandwich (linearization) standard errors, "
                "Wald intervals.")
@rake_options("the fit is then under the raked weights (as deniable estimate --rake): pseudo-likelihood, "
              "sandwich standard errors with the calibration variance.")
@rrreg_options(RRREG_TWO_GROUP, "DATA.csv is data in R RRreg's shape (response 0/1, group 1/2, numeric columns): a logit "
               'of the carriers\' share, "response ~ COLUMN + …", with the design\'s nuisance parameter (as RRlog).')
def regress(inputs, db_path, confidence, reference, profile, fmt, weights, strata, cluster, fpc, margins_path,
            trim, rrreg, rrreg_p) -> None:
    """Fit a logit of a question's true answer on questions asked directly.

    The outcome may be protected (randomized): the model is of the true answer, and the
    likelihood is that of the randomized reports, with the question's realized p and q.
    FORMULA is "OUTCOME ~ Q1 + Q2 + …": each covariate is a question asked directly,
    categorical (its first option the reference level), or num(Q) for a numeric one.
    Prints the coefficients with standard errors, Wald and profile-likelihood intervals,
    the likelihood-ratio test against the intercept-only model, and the predicted
    prevalence of every option in each group.  The first line names what the coefficients
    model ("log-odds of Yes against No"); --reference picks the option without coefficients.
    The outcome must be of a type that allows it (single choice, or a two-group design); any
    other is one line saying why.  A two-group design's outcome is the logit of the carriers'
    share with the design's second parameter (γ, t or π_UQ) estimated beside the coefficients
    (deniable.estimators.group_logit, as --rrreg below), Wald intervals only; --reference Yes
    turns the signs, and --weights and --rake are refused for it.
    With --weights COLUMN (and --strata, --cluster, --fpc) the responses file's design columns
    make the fit design-based, as in deniable estimate.  With --rake MARGINS.json (a file or
    --db) the respondents are raked to the margins (as deniable estimate --rake) and the fit
    is under the raked weights, its standard errors with the calibration (raking) variance,
    as R's svyglm on a rake()d design; the raking (achieved margins, weights' range, Kish's
    effective sample size) is printed with it.  --rake with --weights COLUMN (and --strata,
    --cluster, --fpc) rakes from the file's sampling weights, and the calibration variance
    keeps the design's strata, clusters and fpc.

    \b
    Example:
        deniable regress examples/survey.json responses.csv "drugs ~ year"
        deniable regress --db deniable.db student-life "cheated ~ year" --format json
        deniable regress examples/survey.json responses.csv "drugs ~ year" --weights w --cluster school
        deniable regress --db deniable.db student-life "drugs ~ year" --rake margins.json --trim 0.3,3
        deniable regress survey.json responses.csv "drugs ~ year" --rake margins.json --weights w --cluster school
        deniable regress --rrreg SLD --p 0.25,0.75 data.csv "response ~ x"
    """
    from deniable.server.survey.regression import Regression, fit_formula

    if rrreg is not None or rrreg_p is not None:
        if rrreg is None or rrreg_p is None or len(inputs) != 2 or db_path or weights or margins_path or reference:
            raise click.UsageError('--rrreg MODEL goes with --p P1,P2[,…] and DATA.csv "response ~ COLUMN + …"')
        from deniable.server.survey.rrreg import regress_rrreg

        return show(regress_rrreg(inputs[0], rrreg, rrreg_p, inputs[1], confidence=confidence), fmt)

    columns = _design_columns(weights, strata, cluster, fpc)
    raked = None
    if margins_path is not None:
        slug, formula, built, result, raked = _raked(inputs, db_path, reference, confidence, margins_path, trim,
                                                     columns)
    elif trim is not None:
        raise click.UsageError("--trim goes with --rake MARGINS.json")
    elif columns is not None:
        slug, formula, built, result = _weighted(inputs, db_path, reference, confidence, columns)
    else:
        patterns, text, survey = _patterns(inputs, db_path)
        slug = patterns.survey.slug
        formula, built, result = fit_formula(patterns, text, reference=reference, confidence=confidence,
                                             profile=profile, survey=survey)
    # one result renders itself, raked or not (what raking did: its JSON's ``raking``; for a terminal, first)
    show(Regression(slug, formula, built, result, raked), fmt)


COMMANDS = (regress,)
