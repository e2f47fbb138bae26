"""``deniable estimate``, ``simulate`` and ``plan``: the analyst's offline commands.

A thin click shell over the offline path in :mod:`deniable.server.survey` (definition →
responses file → dataset → estimates → output) and :mod:`deniable.estimators`.  Each command
imports what it needs when it runs (numpy, scipy, pyarrow), so that ``deniable --help`` and the
other commands load none of it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from deniable.estimators.names import METHODS
from deniable.server.survey.readers import SOURCES, sources_help

from .common import confidence_option, database, db_option, design_options, echo_json, fail, plural, rake_options
from .progress import progress as progress_bar

if TYPE_CHECKING:
    from deniable.server.survey.dataset import Dataset
    from deniable.server.survey.definition import Survey

FORMATS = ("table", "json", "csv")
PROGRESS_ROWS = 200_000  # show a progress bar from this many simulated rows on
MAX_SIMULATED = 2**50  # beyond any memory; above 2^60 numpy refuses the array size with a ValueError


def _load_survey(path: str) -> Survey:
    from deniable.server.survey.definition import DefinitionError, load_definition

    try:
        return load_definition(path)
    except DefinitionError as exc:
        fail(str(exc))


# ---------------------------------------------------------------- estimate


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
        return readers.read(inputs[1], _load_survey(inputs[0]), source=source)
    if counts_path is not None:
        if len(inputs) != 1:
            raise click.UsageError("with --counts, give exactly one argument: SURVEY.json")
        return readers.read_counts(counts_path, _load_survey(inputs[0]))
    if len(inputs) != 2:
        raise click.UsageError("give SURVEY.json and RESPONSES.csv (or .parquet), or SURVEY.json --counts FILE, "
                               "or --db FILE SLUG")
    return readers.read(inputs[1], _load_survey(inputs[0]), codebook=inputs[0], grouped=True, progress=True)


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

    survey = _load_survey(inputs[0])
    if check is not None:
        check(survey)
    if counts_path is not None:  # each row's design columns: those of its count respondents
        return survey, readers.read_counts(counts_path, survey, design=columns)
    return survey, readers.read(inputs[1], survey, source=source, design=columns, codebook=inputs[0], progress=True)


def _estimate_weighted(inputs, db_path, counts_path, columns, confidence, fmt, crosstab=None, by_qid=None,
                       simultaneous=False, source=None) -> None:
    """``deniable estimate --weights COLUMN …``: design-based estimates of a responses file
    (:mod:`deniable.server.survey.sampling`); with ``--by`` each group's domain estimates, with
    ``--crosstab`` the joint and conditional shares."""
    from deniable.estimators.weights import DesignError
    from deniable.server.survey import analysis, sampling

    def check(survey):
        try:
            _check_analysis(analysis, survey, crosstab, by_qid)
        except analysis.AnalysisError as exc:
            raise click.UsageError(f"--{exc.field}: {exc.problem}") from None
        sampling.check_weighted(survey)

    survey, dataset = _read_weighted(inputs, db_path, counts_path, columns, check, source)
    try:
        if crosstab:
            shown = sampling.weighted_crosstab_of(dataset, columns, *(survey.question(q) for q in crosstab),
                                                  confidence=confidence, simultaneous=simultaneous)
        elif by_qid:
            shown = sampling.weighted_subgroups(dataset, columns, survey.question(by_qid), confidence=confidence,
                                                simultaneous=simultaneous)
        else:
            shown = sampling.weighted_estimates(dataset, columns, confidence=confidence, simultaneous=simultaneous)
    except DesignError as exc:
        fail(str(exc))
    _show(fmt, shown)


def _show(fmt: str, shown) -> None:
    """``shown``, a result that renders itself, as JSON, as CSV, or as its text table."""
    if fmt == "json":
        echo_json(shown.to_dict())
    elif fmt == "csv":
        click.echo(shown.to_csv(), nl=False)
    else:
        click.echo(shown.table(), nl=False)


def _raking_sources(db_path: str, slug: str, patterns) -> dict:
    """What the questions the answer patterns leave out are raked from (their raking cells; read only)."""
    from deniable.server.store.responses import raking_sources
    from deniable.server.store.surveys import get_survey

    with database(db_path, readonly=True) as db:
        return raking_sources(db, get_survey(db, slug), patterns, read_only=True)


def _estimate_raked(inputs, db_path, counts_path, margins_path, trim, confidence, fmt, columns=None, crosstab=None,
                    by_qid=None, simultaneous=False, source=None) -> None:
    """``deniable estimate --rake MARGINS.json``: raked, design-based estimates from the answer
    patterns of a responses file, counts, a database or another tool's export (``source``):
    :func:`deniable.server.survey.sampling.raked_estimates`, with ``--by`` each group's domain
    estimates (:func:`~deniable.server.survey.sampling.raked_by`), with ``--crosstab`` the joint and
    conditional shares (:func:`~deniable.server.survey.sampling.raked_crosstab_of`) — what the
    dashboard's weighted pages show.  With ``--weights COLUMN`` (``columns``), raking starts from the
    responses file's sampling weights."""
    from deniable.estimators.weights import DesignError
    from deniable.server.survey import analysis, sampling

    def check(survey):
        try:
            _check_analysis(analysis, survey, crosstab, by_qid)
        except analysis.AnalysisError as exc:
            raise click.UsageError(f"--{exc.field}: {exc.problem}") from None

    base = outside = None
    if columns is None:  # from a database, the answer patterns and the raking cells: no row scan
        dataset, _stats, _n, survey = _load_dataset(inputs, db_path, counts_path, source=source)
        check(survey)
        if db_path is not None:
            outside = _raking_sources(db_path, inputs[0], dataset)
    else:  # raking starts from the file's sampling weights
        survey, dataset = _read_weighted(inputs, db_path, counts_path, columns, check, source)
    try:
        margins = sampling.load_margins(margins_path, survey)
        if columns is not None:
            base = sampling.design_of(dataset, columns)
        common = {"trim": trim, "confidence": confidence, "survey": survey}
        base_column = None if columns is None else columns.weights
        if crosstab:
            shown = sampling.raked_crosstab_of(dataset, margins, *(survey.question(q) for q in crosstab),
                                               simultaneous=simultaneous, base=base, base_column=base_column, **common)
        elif by_qid:
            shown = sampling.raked_by(dataset, margins, survey.question(by_qid), base=base, base_column=base_column,
                                      simultaneous=simultaneous, outside=outside, **common)
        else:
            shown = sampling.raked_estimates(dataset, margins, base=base, base_column=base_column,
                                             simultaneous=simultaneous, outside=outside, **common)
    except DesignError as exc:
        fail(str(exc))
    _show(fmt, shown)


def _check_weights(weights, strata, cluster, fpc, crosstab, by_qid, simultaneous):
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


def _check_analysis(analysis, survey: Survey, crosstab, by_qid) -> None:
    """The one validation of the dashboard and the command line (:mod:`deniable.server.survey.analysis`)."""
    if crosstab:
        analysis.check_crosstab(survey, *crosstab)
    if by_qid:
        analysis.check_by(survey, by_qid)


@click.command("estimate")
@click.argument("inputs", nargs=-1, metavar="SURVEY.json RESPONSES.csv|.parquet | SURVEY.json --counts FILE | --db FILE SLUG")
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
def estimate(inputs, db_path, counts_path, confidence, method, simultaneous, fmt, crosstab, by_qid,
             weights, strata, cluster, fpc, margins_path, trim, source) -> None:
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
    """
    from deniable.server.survey import analysis, estimates

    if source is not None and (db_path is not None or counts_path is not None):
        raise click.UsageError(f"--from {source} reads a results file: it does not go with --db or --counts")
    if margins_path is not None:
        if crosstab and by_qid:
            raise click.UsageError("use --crosstab or --by, not both")
        if click.get_current_context().get_parameter_source("method") != click.core.ParameterSource.DEFAULT:
            raise click.UsageError("--method does not go with --rake: raked intervals are Korn and Graubard's")
        columns = _check_weights(weights, strata, cluster, fpc, crosstab, by_qid, simultaneous)
        _estimate_raked(inputs, db_path, counts_path, margins_path, trim, confidence, fmt, columns,
                        crosstab, by_qid, simultaneous, source)
        return
    if trim is not None:
        raise click.UsageError("--trim goes with --rake MARGINS.json")
    columns = _check_weights(weights, strata, cluster, fpc, crosstab, by_qid, simultaneous)
    if columns is not None:
        _estimate_weighted(inputs, db_path, counts_path, columns, confidence, fmt, crosstab, by_qid, simultaneous,
                           source)
        return

    if crosstab and by_qid:
        raise click.UsageError("use --crosstab or --by, not both")
    dataset, stats, n_responses, survey = _load_dataset(inputs, db_path, counts_path, every_question=bool(by_qid),
                                                        source=source)
    try:
        _check_analysis(analysis, survey, crosstab, by_qid)
        if crosstab:
            shown = analysis.crosstab(survey, *crosstab, dataset, confidence=confidence)
        elif by_qid:
            shown = estimates.EverySubgroup(survey, survey.question(by_qid), analysis.every_subgroup(
                survey, by_qid, dataset, method=method, confidence=confidence, simultaneous=simultaneous))
        else:
            shown = estimates.Estimates(survey, n_responses, analysis.marginal_estimates(
                survey, stats, method=method, confidence=confidence, simultaneous=simultaneous))
    except analysis.AnalysisError as exc:  # one line naming the option: --crosstab: …, --by: …
        raise click.UsageError(f"--{exc.field}: {exc.problem}") from None
    except ValueError as exc:  # an estimator refusing its input
        fail(str(exc))
    _show(fmt, shown)


# ---------------------------------------------------------------- simulate


def _store(db_path: str, dataset: Dataset) -> int:
    from deniable.server.store.responses import insert_many
    from deniable.server.store.surveys import get_survey
    from deniable.server.survey.responses_csv import settle_not_asked

    with database(db_path, create=True) as db:
        stored = get_survey(db, dataset.survey.slug)
        if stored is None:
            fail(f"{db_path}: no survey {dataset.survey.slug!r} in the database (create and open it first)")
        if stored.status != "open":
            fail(f"{db_path}: survey {stored.slug!r} is {stored.status}, not open")
        if stored.survey.questions != dataset.survey.questions:
            fail(f"{db_path}: survey {stored.slug!r} has a different design "
                 "(questions, options or ε) from the definition file")
        n = dataset.n_rows
        _, problem = settle_not_asked(dataset.survey, dataset.columns)  # simulated respondents follow the logic
        if problem is not None:
            fail(f"simulated row {problem[1] + 1}: question {problem[0]!r}: {problem[2]}")
        with progress_bar(n, "storing reports", "rows") as bar:  # on a terminal only
            return insert_many(db, stored, dataset.columns, progress=lambda done, total: bar.set(done))


@click.command("simulate")
@click.argument("survey_path", metavar="SURVEY.json")
@click.option("--n", "n", type=click.IntRange(min=1, max=MAX_SIMULATED), required=True,
              help="Number of respondents.")
@click.option("--truth", "truth_path", required=True, metavar="TRUTH.json",
              help="Question id → list of the true probability of each option.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed of the simulation (default: fresh entropy).")
@click.option("-o", "--output", metavar="OUT.csv",
              help="Write the responses here, CSV or, for a name ending .parquet, Parquet (default: CSV to stdout).")
@db_option(None, "Store the reports in this database instead (the survey must exist there and be open).")
def simulate(survey_path, n, truth_path, seed, output, db_path) -> None:
    """Simulate N respondents: draw true answers, randomize them, write the responses CSV.

    True answers are drawn from TRUTH.json with a seeded generator, and every protected
    question is randomized with the same randomizer as real reports (client.randomize).
    With --db the reports are stored in the database (CSV only if -o is given too).

    \b
    Example:
        deniable simulate examples/survey.json --n 10000 --truth examples/truth.json --seed 1 -o responses.csv
    """
    import numpy as np

    from deniable.server.survey.simulate import TruthError, load_truth, simulate_dataset

    survey = _load_survey(survey_path)
    try:
        truth = load_truth(truth_path, survey)
    except TruthError as exc:
        fail(str(exc))
    try:
        dataset = simulate_dataset(survey, truth, n, np.random.default_rng(seed))
    except MemoryError:
        fail(f"--n {n}: not enough memory to simulate that many respondents at once")
    if db_path is not None:
        stored = _store(db_path, dataset)
        click.echo(f"stored {plural(stored, 'simulated response')} in {db_path} (survey {survey.slug!r})", err=True)
        if output is None:
            return
    from deniable.server.survey import files  # pyarrow: only here
    from deniable.server.survey.responses_csv import CSVError, write_responses_csv

    target = output if output is not None else sys.stdout.buffer
    try:
        if output is not None and files.is_parquet(output):
            files.write_responses_parquet(output, dataset)
        elif n >= PROGRESS_ROWS and output is not None:
            with progress_bar(n, f"writing {output}", "rows") as bar:
                write_responses_csv(target, dataset, progress=bar.update)
        else:
            write_responses_csv(target, dataset)
    except CSVError as exc:
        fail(str(exc))


# ---------------------------------------------------------------- plan


def _check_margin(margin: float, numeric: bool) -> float:
    import math

    if numeric and not (math.isfinite(margin) and margin > 0):
        raise click.BadParameter(f"{margin} is not a positive number (the mean's margin, in the question's units)",
                                 param_hint="'--margin'")
    if not numeric and not 0 < margin < 1:
        raise click.BadParameter(f"{margin} is not in the range 0<x<1 (a proportion: 0.03 = ±3 points)",
                                 param_hint="'--margin'")
    return margin


def _check_deff(deff):
    import math

    if deff is not None and not (math.isfinite(deff) and deff > 0):
        raise click.BadParameter(f"{deff} is not a positive number (the design's variance over a simple random "
                                 "sample's: 1 + CV² of the weights, 1 + (m − 1)·ICC for clusters of m)",
                                 param_hint="'--deff'")
    return deff


def _plan_choice(k, margin, epsilons, confidence, fmt, deff=None) -> None:
    from deniable.client.mechanism import MechanismError, check_k
    from deniable.server.survey import planning

    try:
        k = check_k(k)
    except MechanismError as exc:
        raise click.UsageError(f"--k: {exc}") from None
    try:
        rows = planning.plan_rows(k, margin, epsilons, confidence=confidence)
    except (MechanismError, ValueError) as exc:
        raise click.UsageError(f"{'--margin' if 'margin' in str(exc) else '--epsilon'}: {exc}") from None
    if deff is not None:
        rows = planning.with_design_effect(rows, deff)
    if fmt == "json":
        echo_json({"k": k, "margin": margin, "confidence": confidence, **({"design_effect": deff} if deff else {}),
                   "plans": rows})
    else:
        click.echo(planning.plan_table(k, margin, confidence, rows, deff), nl=False)


def _plan_type(option: str, value, step, margin, epsilons, confidence, fmt) -> None:
    """``deniable plan`` for the question type whose :attr:`plan_option` is ``option`` (``--numeric``)."""
    from deniable.client.mechanism import MechanismError, check_epsilon
    from deniable.server.survey import questions
    from deniable.server.survey import type_planning as tp

    qtype = next(t for t in questions.all_types() if getattr(t, "plan_option", None) == option)
    try:
        for epsilon in epsilons:
            check_epsilon(epsilon)
    except MechanismError as exc:
        raise click.UsageError(f"--epsilon: {exc}") from None
    try:
        head, rows, text = qtype.plan_cli(value, step, margin, epsilons, confidence)
    except tp.PlanInputError as exc:
        raise click.UsageError(str(exc)) from None
    except (MechanismError, ValueError) as exc:
        raise click.UsageError(f"{'--margin' if 'margin' in str(exc) else '--epsilon'}: {exc}") from None
    if fmt == "json":
        echo_json({**head, "margin": margin, "confidence": confidence, "plans": rows})
    else:
        click.echo(text, nl=False)


def _plan_design(spec: str, margin, epsilons, confidence, fmt) -> None:
    """``deniable plan --design JSON``: the design's own ε, so no --epsilon."""
    from deniable.server.survey import type_planning as tp

    if epsilons:
        raise click.UsageError("--epsilon: a design has its own ε (computed from its matrix); leave --epsilon out")
    try:
        rows = tp.design_plan_rows(spec, margin, confidence)
    except tp.PlanInputError as exc:
        raise click.UsageError(str(exc)) from None
    except ValueError as exc:
        raise click.UsageError(f"--margin: {exc}") from None
    if fmt == "json":
        echo_json({"margin": margin, "confidence": confidence, "plans": rows})
    else:
        click.echo(tp.design_plan_table(margin, confidence, rows), nl=False)


def _number(text: str):
    """A command-line number for a definition: an int when whole, else a float (never NaN or inf)."""
    import math

    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise click.BadParameter(f"{text!r} is not a number", param_hint="'--numeric' / '--step'")
    return value


@click.command("plan")
@click.option("--k", "k", type=int, help="Plan a single-choice question with K options.")
@click.option("--numeric", nargs=2, metavar="MIN MAX", help="Plan a numeric question with answers MIN..MAX.")
@click.option("--step", metavar="S", help="With --numeric: the answers' spacing (default 1).")
@click.option("--multi", "options", type=int, metavar="K", help="Plan a check-all-that-apply question with K options.")
@click.option("--list", "items", type=int, metavar="J",
              help="Plan a list experiment with J control items (plain, and at each ε).")
@click.option("--design", "design", metavar="JSON",
              help="Plan a single choice randomized by a design, as in a definition: "
                   "'{\"name\": \"forced\", \"p\": 0.6, \"forced\": [0.3, 0.1]}' (its ε is its own).")
@click.option("--margin", type=float, required=True,
              help="Wanted half-width of the interval: a proportion (0.03 = ±3 points), or for --numeric "
                   "the mean's, in the question's units.")
@click.option("--epsilon", "epsilons", type=float, multiple=True, metavar="E",
              help="Privacy level to plan for; repeat for several (default: 0.5 1 2 4).")
@click.option("--deff", type=float, metavar="X",
              help="With --k: the design effect of a weighted or clustered sample (the design's variance over a "
                   "simple random sample's); the respondents needed are multiplied by X.")
@confidence_option
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
def plan(k, numeric, step, options, items, design, margin, epsilons, deff, confidence, fmt) -> None:
    """Show how many respondents a question needs at each ε, beside the no-privacy baseline.

    One of --k (single choice), --numeric MIN MAX (the mean, with the planner's mechanism and
    every alternative's margin), --multi K (each option's prevalence) or --list J (the sensitive
    item's prevalence, plain and at each ε) or --design JSON (a randomized-response design: exact
    for binary designs and forced response, else the normal approximation, labelled so).
    With --k, --deff X plans a weighted or clustered sample: the respondents needed multiplied by
    the design effect X (Kish's 1 + CV² for weights, 1 + (m − 1)·ICC for clusters of m).

    The exact worst cases that --k and --multi compute are kept in $XDG_CACHE_HOME/deniable
    (~/.cache/deniable without it), so the same question asked again answers at once.

    \b
    Example:
        deniable plan --k 2 --margin 0.03
        deniable plan --k 4 --margin 0.05 --epsilon 1 --epsilon 3 --confidence 0.9
        deniable plan --k 2 --margin 0.03 --deff 1.8
        deniable plan --numeric 0 40 --margin 2 --epsilon 1
        deniable plan --multi 4 --margin 0.05 --epsilon 2
        deniable plan --list 3 --margin 0.1 --epsilon 1
        deniable plan --design '{"name": "warner", "p": 0.75}' --margin 0.05
    """
    chosen = [name for name, given in (("--k", k is not None), ("--numeric", numeric is not None),
                                       ("--multi", options is not None), ("--list", items is not None),
                                       ("--design", design is not None)) if given]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of --k, --numeric, --multi, --list and --design"
                               + (f" (got {' and '.join(chosen)})" if chosen else ""))
    if step is not None and numeric is None:
        raise click.UsageError("--step goes with --numeric")
    if deff is not None and k is None:
        raise click.UsageError("--deff goes with --k (a single-choice question)")
    deff = _check_deff(deff)
    margin = _check_margin(margin, numeric is not None)
    if design is not None:
        _plan_design(design, margin, epsilons, confidence, fmt)
        return
    epsilons = epsilons or (0.5, 1.0, 2.0, 4.0)
    if k is not None:
        _plan_choice(k, margin, epsilons, confidence, fmt, deff)
    elif numeric is not None:
        _plan_type("--numeric", tuple(_number(v) for v in numeric), None if step is None else _number(step),
                   margin, epsilons, confidence, fmt)
    elif options is not None:
        _plan_type("--multi", options, None, margin, epsilons, confidence, fmt)
    else:
        _plan_type("--list", items, None, margin, epsilons, confidence, fmt)


COMMANDS = (estimate, simulate, plan)
