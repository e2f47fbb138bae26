"""``deniable estimate``: every question's estimates, as a table, JSON or CSV.

A thin click shell over the offline path in :mod:`deniable.server.survey` (definition → reports →
dataset → a result that renders itself): the reports come from a database, a responses file, counts
or another tool's results; the result is :mod:`~deniable.server.survey.estimates`' (unweighted),
:mod:`~deniable.server.survey.weighted`'s (``--weights``) or :mod:`~deniable.server.survey.raking`'s
(``--rake``), and ``--format`` picks its ``table()``, ``to_dict()`` or ``to_csv()``.  It imports what
it needs when it runs (numpy, scipy, pyarrow), so that ``deniable --help`` loads none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from deniable.estimators.names import METHODS
from deniable.server.survey.readers import RRREG_ONE_GROUP, RRREG_TWO_GROUP, SOURCES, sources_help

from .common import (confidence_option, database, db_option, design_options, fail, load_survey,
                     rake_options, rrreg_options, show)

if TYPE_CHECKING:
    from deniable.server.survey.dataset import Dataset
    from deniable.server.survey.definition import Survey

FORMATS = ("table", "json", "csv")


def _load_dataset(inputs: tuple[str, ...], db_path: str | None, counts_path: str | None, every_question=False,
                  source: str | None = None):
    """The reports to estimate from: a survey in a database, a responses file, or counts.

    Returns ``(dataset, stats, n_responses, survey)``: the dataset (for cross-tabs and subgroups),
    every question's sufficient statistics, the number of responses and the survey.  From a database, the dataset is the answer patterns and the
    statistics come from the counts and cell counts, never from the rows; ``every_question``
    (``--by``) reads the rows when some question is not in the answer patterns.
    """
    if db_path is not None:
        if len(inputs) != 1 or counts_path:
            raise click.UsageError("with --db, give exactly one argument: the survey's SLUG")
        from deniable.server.store.aggregates import pattern_counts
        from deniable.server.store.responses import load_db_dataset
        from deniable.server.store.surveys import get_survey, respondent_count, survey_stats
        from deniable.server.survey.analysis import needs_rows

        with database(db_path, readonly=True) as db:
            stored = get_survey(db, inputs[0])
            if stored is None:
                fail(f"{db_path}: no survey {inputs[0]!r} in the database")
            if every_question and needs_rows(stored.survey, [q.id for q in stored.survey.questions]):
                dataset = load_db_dataset(db, stored.slug)
            else:  # the stored aggregates: no row scan
                dataset = pattern_counts(db, stored).dataset()
            return dataset, survey_stats(db, stored), respondent_count(db, stored.id), stored.survey
    dataset = _load_file_dataset(inputs, counts_path, source)
    return dataset, dataset.all_stats(), dataset.n_responses, dataset.survey


def _load_file_dataset(inputs: tuple[str, ...], counts_path: str | None, source: str | None = None) -> Dataset:
    from deniable.server.survey import readers  # a bad file: one Error line (the deniable group)

    if source is not None:  # another survey tool's results
        if counts_path is not None or len(inputs) != 2:
            raise click.UsageError(f"with --from {source}, give SURVEY.json and {SOURCES[source].file}")
        return readers.read(inputs[1], load_survey(inputs[0]), source=source)
    if counts_path is not None:
        if len(inputs) != 1:
            raise click.UsageError("with --counts, give exactly one argument: SURVEY.json")
        return readers.read_counts(counts_path, load_survey(inputs[0]))
    if len(inputs) != 2:
        raise click.UsageError("give SURVEY.json and RESPONSES.csv (or .parquet), or SURVEY.json --counts FILE, "
                               "or --db FILE SLUG")
    return readers.read(inputs[1], load_survey(inputs[0]), codebook=inputs[0], grouped=True, progress=True)


def _read_weighted(inputs, db_path, counts_path, columns, check=None, source=None):
    """``(survey, dataset)``: a responses file read with its design columns (``--weights COLUMN``, and
    ``--strata``, ``--cluster``, ``--fpc``); one ``Error:`` line for a database or counts (no
    respondents' weights there) and for a bad file.  ``check(survey)`` runs before the file is read.
    ``source``: another tool's export (``--from``), its reader taking the host's columns of the design."""
    if db_path is not None:
        fail("--weights: a database has no weight column; export the responses (deniable export), add the "
             "weights (and strata, clusters) as columns, and give the file with --weights COLUMN")
    if counts_path is not None and len(inputs) != 1:
        raise click.UsageError("with --counts, give SURVEY.json and --counts FILE")
    if counts_path is None and len(inputs) != 2:
        raise click.UsageError("with --weights, give SURVEY.json and RESPONSES.csv (or .parquet)")
    from deniable.server.survey import readers  # a bad file: one Error line (the deniable group)

    survey = load_survey(inputs[0])
    if check is not None:
        check(survey)
    if counts_path is not None:  # each row's design columns: those of its count respondents
        return survey, readers.read_counts(counts_path, survey, design=columns)
    return survey, readers.read(inputs[1], survey, source=source, design=columns, codebook=inputs[0], progress=True)


def _unweighted(inputs, db_path, counts_path, source, crosstab, by_qid, method, **options):
    """The estimates as a simple random sample's: :func:`deniable.server.survey.analysis.marginal_estimates`,
    with ``--crosstab`` the joint and conditional shares, with ``--by`` each group's (an estimator refusing its
    input raises a FieldError: one ``Error:`` line)."""
    from deniable.server.survey import analysis, estimates

    dataset, stats, n_responses, survey = _load_dataset(inputs, db_path, counts_path, every_question=bool(by_qid),
                                                        source=source)
    _check_analysis(survey, crosstab, by_qid)
    if crosstab:
        return analysis.crosstab(survey, *crosstab, dataset, confidence=options["confidence"])
    if by_qid:
        return estimates.EverySubgroup(survey, survey.question(by_qid), analysis.every_subgroup(
            survey, by_qid, dataset, method=method, **options))
    return estimates.Estimates(survey, n_responses, analysis.marginal_estimates(survey, stats, method=method, **options))


def _weighted(inputs, db_path, counts_path, source, crosstab, by_qid, columns, **options):
    """``--weights COLUMN …``: design-based estimates of a responses file
    (:mod:`deniable.server.survey.weighted`); with ``--by`` each group's domain estimates, with
    ``--crosstab`` the joint and conditional shares."""
    from deniable.server.survey import weighted

    def check(survey):
        _check_analysis(survey, crosstab, by_qid)
        weighted.check_weighted(survey)

    survey, dataset = _read_weighted(inputs, db_path, counts_path, columns, check, source)
    if crosstab:
        return weighted.weighted_crosstab_of(dataset, columns, *(survey.question(q) for q in crosstab), **options)
    if by_qid:
        return weighted.weighted_subgroups(dataset, columns, survey.question(by_qid), **options)
    return weighted.weighted_estimates(dataset, columns, **options)


def _raking_sources(db_path: str, slug: str, patterns) -> dict:
    """What the questions the answer patterns leave out are raked from (their raking cells; read only)."""
    from deniable.server.store.responses import raking_sources
    from deniable.server.store.surveys import get_survey

    with database(db_path, readonly=True) as db:
        return raking_sources(db, get_survey(db, slug), patterns, read_only=True)


def _raked(inputs, db_path, counts_path, source, crosstab, by_qid, columns, margins_path, trim, **options):
    """``--rake MARGINS.json``: raked, design-based estimates from the answer patterns of a responses
    file, counts, a database or another tool's export (``source``):
    :func:`deniable.server.survey.raking.raked_estimates`, with ``--by`` each group's domain
    estimates (:func:`~deniable.server.survey.raking.raked_by`), with ``--crosstab`` the joint and
    conditional shares (:func:`~deniable.server.survey.raking.raked_crosstab_of`) — what the
    dashboard's weighted pages show.  With ``--weights COLUMN`` (``columns``), raking starts from the
    responses file's sampling weights."""
    from deniable.server.survey import raking, weighted

    outside = None
    if columns is None:  # from a database, the answer patterns and the raking cells: no row scan
        dataset, _stats, _n, survey = _load_dataset(inputs, db_path, counts_path, source=source)
        _check_analysis(survey, crosstab, by_qid)
        if db_path is not None:
            outside = _raking_sources(db_path, inputs[0], dataset)
    else:  # raking starts from the file's sampling weights
        survey, dataset = _read_weighted(inputs, db_path, counts_path, columns,
                                         lambda survey: _check_analysis(survey, crosstab, by_qid), source)
    margins = raking.load_margins(margins_path, survey)
    options.update(trim=trim, survey=survey, base=None if columns is None else weighted.design_of(dataset, columns),
                   base_column=None if columns is None else columns.weights)
    if crosstab:
        return raking.raked_crosstab_of(dataset, margins, *(survey.question(q) for q in crosstab), **options)
    if by_qid:
        return raking.raked_by(dataset, margins, survey.question(by_qid), outside=outside, **options)
    return raking.raked_estimates(dataset, margins, outside=outside, **options)


def _check_weights(weights, strata, cluster, fpc, crosstab, by_qid):
    """The design columns asked for (None without --weights); UsageError for what does not go with them."""
    from deniable.server.survey.dataset import DesignColumns

    if weights is None:
        for name, given in (("--strata", strata), ("--cluster", cluster), ("--fpc", fpc)):
            if given is not None:
                raise click.UsageError(f"{name} goes with --weights COLUMN (the sampling weights)")
        return None
    if crosstab and by_qid:
        raise click.UsageError("use --crosstab or --by, not both")
    if click.get_current_context().get_parameter_source("method") != click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--method does not go with --weights: weighted intervals are Korn and Graubard's, "
                               "at the design's effective sample size")
    return DesignColumns(weights=weights, strata=strata, cluster=cluster, fpc=fpc)


def _rrreg(inputs, model, p, fmt, confidence, method, other) -> None:
    """``--rrreg MODEL --p P1,P2 DATA.csv``: RRreg's model on data in RRreg's shape (:mod:`~deniable.server.survey.rrreg`)."""
    if model is None or p is None or len(inputs) != 1 or other:
        raise click.UsageError("--rrreg MODEL goes with --p P1,P2[,…] and one argument, DATA.csv (and --confidence, "
                               "--method, --format)")
    from deniable.server.survey.rrreg import estimate_rrreg

    show(estimate_rrreg(inputs[0], model, p, confidence=confidence, method=method), fmt)


def _check_analysis(survey: Survey, crosstab, by_qid) -> None:
    """The one validation of the dashboard and the command line (:mod:`deniable.server.survey.analysis`);
    a choice it refuses is a usage error naming the option (``--crosstab: …``, ``--by: …``)."""
    from deniable.server.survey import analysis

    try:
        if crosstab:
            analysis.check_crosstab(survey, *crosstab)
        if by_qid:
            analysis.check_by(survey, by_qid)
    except analysis.AnalysisError as exc:
        raise click.UsageError(f"--{exc.field}: {exc.problem}") from None


@click.command("estimate")
@click.argument("inputs", nargs=-1, metavar="SURVEY.json RESPONSES.csv|.parquet | SURVEY.json --counts FILE | --db FILE SLUG"
                " | --rrreg MODEL --p P1,P2 DATA.csv")
@db_option(None, "Read the reports of survey SLUG from this database.")
@click.option("--counts", "counts_path", metavar="FILE",
              help="Read counts aggregated elsewhere: some question columns and 'count' (CSV or Parquet).")
@confidence_option
@click.option("--method", type=click.Choice(METHODS), default="exact", show_default=True,
              help="Interval method.")
@click.option("--simultaneous", is_flag=True, help="Bonferroni intervals for all options of a question together.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--crosstab", nargs=2, metavar="Q1 Q2", help="Joint and conditional estimates of two questions.")
@click.option("--by", "by_qid", metavar="QUESTION",
              help="Estimate every other question within each option of this directly asked question.")
@design_options("Estimates are then weighted and design-based (linearization, Korn-Graubard intervals).")
@rake_options("estimates are then weighted, with the calibration variance.")
@click.option("--from", "source", type=click.Choice(tuple(SOURCES)), help=sources_help())
@rrreg_options((*RRREG_TWO_GROUP, *RRREG_ONE_GROUP), "DATA.csv is data in R RRreg's shape (response 0/1; group 1/2 "
               "for CDM, CDMsym, SLD, UQTunknown): estimate RRreg's MODEL with --p.")
def estimate(inputs, db_path, counts_path, confidence, method, simultaneous, fmt, crosstab, by_qid,
             weights, strata, cluster, fpc, margins_path, trim, source, rrreg, rrreg_p) -> None:
    """Estimate the true answer distribution of every question, with confidence intervals.

    Reads a survey definition and its responses export (CSV or Parquet), or counts aggregated
    elsewhere (--counts: some question columns and 'count', one row per answer pattern), or,
    with --db, a survey stored in a database; prints, per question and option, the unbiased and
    consistent estimates, the standard error and the interval, with n, the realized ε and the
    method.

    With --weights COLUMN (and --strata, --cluster, --fpc), the responses file's design columns
    make the estimates weighted and design-based: the output names the design and its Kish
    effective sample size.  Single-choice, check-all and list-experiment questions and numeric
    means, so far; with --by, each group's domain estimates; with --crosstab, the joint and
    conditional shares.

    With --rake MARGINS.json (a file, counts or --db), the respondents are raked to the
    population shares of questions asked directly, and the estimates are weighted; the output
    shows the achieved margins, the weights' range and the Kish effective sample size.
    --trim LOW,HIGH bounds the weights.  With --weights too, raking starts from the file's
    sampling weights.  --rake goes with --by, --crosstab, --simultaneous and --from, as the
    dashboard's weighted pages do.

    \b
    Example:
        deniable estimate examples/survey.json responses.csv --method wilson
        deniable estimate examples/survey.json responses.parquet --crosstab drugs cheated --format json
        deniable estimate examples/survey.json --counts counts.parquet
        deniable estimate --db deniable.db student-life --by year
        deniable estimate examples/survey.json responses.csv --weights w --strata region --cluster school
        deniable estimate --db deniable.db student-life --rake margins.json --trim 0.3,3
        deniable estimate examples/survey.json responses.csv --rake margins.json --by year
        deniable estimate examples/survey.json surveyjs-results.json --from surveyjs
        deniable estimate examples/otree/survey.json all_apps_wide.csv --from otree
        deniable estimate --rrreg CDM --p 0.3,0.7 rrreg-data.csv
    """
    if rrreg is not None or rrreg_p is not None:
        return _rrreg(inputs, rrreg, rrreg_p, fmt, confidence, method, db_path or counts_path or source or crosstab
                      or by_qid or weights or margins_path or simultaneous)
    if source is not None and (db_path is not None or counts_path is not None):
        raise click.UsageError(f"--from {source} reads a results file: it does not go with --db or --counts")
    if margins_path is not None:
        if crosstab and by_qid:
            raise click.UsageError("use --crosstab or --by, not both")
        if click.get_current_context().get_parameter_source("method") != click.core.ParameterSource.DEFAULT:
            raise click.UsageError("--method does not go with --rake: raked intervals are Korn and Graubard's")
    elif trim is not None:
        raise click.UsageError("--trim goes with --rake MARGINS.json")
    columns = _check_weights(weights, strata, cluster, fpc, crosstab, by_qid)
    if crosstab and by_qid:
        raise click.UsageError("use --crosstab or --by, not both")
    reports = (inputs, db_path, counts_path, source, crosstab, by_qid)
    options = {"confidence": confidence, "simultaneous": simultaneous}
    if margins_path is not None:
        result = _raked(*reports, columns, margins_path, trim, **options)
    elif columns is not None:
        result = _weighted(*reports, columns, **options)
    else:
        result = _unweighted(*reports, method, **options)
    show(result, fmt)


COMMANDS = (estimate,)
