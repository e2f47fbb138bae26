"""``deniable simulate`` and ``plan``: the analyst's offline commands (``estimate`` is :mod:`.estimate`'s).

A thin click shell over the offline path in :mod:`deniable.server.survey` and
:mod:`deniable.estimators`.  Each command imports what it needs when it runs (numpy, scipy,
pyarrow), so that ``deniable --help`` and the other commands load none of it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from deniable.server.survey.readers import RRREG_TWO_GROUP

from .common import confidence_option, database, db_option, fail, load_survey, plural, rrreg_options, show
from .estimate import estimate
from .progress import progress as progress_bar

if TYPE_CHECKING:
    from deniable.server.survey.dataset import Dataset

PROGRESS_ROWS = 200_000  # show a progress bar from this many simulated rows on
MAX_SIMULATED = 2**50  # beyond any memory; above 2^60 numpy refuses the array size with a ValueError


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
@click.option("--truth", "truth_path", metavar="TRUTH.json",
              help="Question id → list of the true probability of each option (default: every question's true "
                   "answers uniform, said on stderr).")
@click.option("--seed", type=click.IntRange(min=0), help="Seed of the simulation (default: fresh entropy).")
@click.option("-o", "--output", metavar="OUT.csv",
              help="Write the responses here, CSV or, for a name ending .parquet, Parquet (default: CSV to stdout).")
@db_option(None, "Store the reports in this database instead (the survey must exist there and be open).")
def simulate(survey_path, n, truth_path, seed, output, db_path) -> None:
    """Simulate N respondents: draw true answers, randomize them, write the responses CSV.

    True answers are drawn from TRUTH.json with a seeded generator, and every protected
    question is randomized with the same randomizer as real reports (client.randomize).
    Without --truth they are uniform: each option of a single choice and each answer of a
    number equally likely, each option of a check-all question ticked with probability 0.5,
    a list experiment's control count uniform and its sensitive item 0.5, a two-group
    question's prevalence 0.5 and its unrelated question's 0.5 (one line on stderr says so).
    With --db the reports are stored in the database (CSV only if -o is given too).

    \b
    Example:
        deniable simulate examples/survey.json --n 10000 --truth examples/truth.json --seed 1 -o responses.csv
    """
    import numpy as np

    from deniable.server.survey.simulate import DEFAULT_TRUTH, default_truth, load_truth, simulate_dataset

    survey = load_survey(survey_path)
    if truth_path is None:
        truth = default_truth(survey)  # a TruthError: one Error line (the deniable group's)
        click.echo(DEFAULT_TRUTH, err=True)
    else:
        truth = load_truth(truth_path, survey)  # a TruthError: one Error line (the deniable group's)
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
    from deniable.server.survey.responses_csv import write_responses_csv

    target = output if output is not None else sys.stdout.buffer
    if output is not None and files.is_parquet(output):  # a CSVError: one Error line (the deniable group's)
        files.write_responses_parquet(output, dataset)
    elif n >= PROGRESS_ROWS and output is not None:
        with progress_bar(n, f"writing {output}", "rows") as bar:
            write_responses_csv(target, dataset, progress=bar.update)
    else:
        write_responses_csv(target, dataset)


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
    from deniable.errors import FieldError
    from deniable.server.survey import planning

    try:
        k = check_k(k)
    except MechanismError as exc:
        raise click.UsageError(f"--k: {exc}") from None
    try:
        result = planning.choice_plan(k, margin, epsilons, confidence=confidence, deff=deff)
    except FieldError as exc:  # a MechanismError (ε), or the estimators' (the margin)
        raise click.UsageError(f"{'--margin' if 'margin' in str(exc) else '--epsilon'}: {exc}") from None
    show(result, fmt)


def _plan_type(option: str, value, step, margin, epsilons, confidence, fmt) -> None:
    """``deniable plan`` for the question type whose :attr:`plan_option` is ``option`` (``--numeric``)."""
    from deniable.client.mechanism import MechanismError, check_epsilon
    from deniable.errors import FieldError
    from deniable.server.survey import questions
    from deniable.server.survey import type_planning as tp

    qtype = next(t for t in questions.all_types() if getattr(t, "plan_option", None) == option)
    try:
        for epsilon in epsilons:
            check_epsilon(epsilon)
    except MechanismError as exc:
        raise click.UsageError(f"--epsilon: {exc}") from None
    try:
        result = qtype.plan_cli(value, step, margin, epsilons, confidence)
    except tp.PlanInputError as exc:
        raise click.UsageError(str(exc)) from None
    except FieldError as exc:  # a MechanismError (ε), or the estimators' (the margin)
        raise click.UsageError(f"{'--margin' if 'margin' in str(exc) else '--epsilon'}: {exc}") from None
    show(result, fmt)


def _plan_design(spec: str, margin, epsilons, confidence, fmt) -> None:
    """``deniable plan --design JSON``: the design's own ε, so no --epsilon."""
    from deniable.errors import FieldError
    from deniable.server.survey import type_planning as tp

    if epsilons:
        raise click.UsageError("--epsilon: a design has its own ε (computed from its matrix); leave --epsilon out")
    try:
        rows = tp.design_plan_rows(spec, margin, confidence)
    except tp.PlanInputError as exc:
        raise click.UsageError(str(exc)) from None
    except FieldError as exc:  # the estimators': the margin
        raise click.UsageError(f"--margin: {exc}") from None
    show(tp.DesignPlan(margin=margin, confidence=confidence, rows=rows), fmt)


def _number(text: str):
    """A command-line number for a definition: an int when whole, else a float (never NaN or inf)."""
    import math

    from deniable.server.survey.parsing import number_or_none

    whole = number_or_none(text, int)
    if whole is not None:
        return whole
    value = number_or_none(text)
    if value is None or not math.isfinite(value):
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
@rrreg_options(RRREG_TWO_GROUP, "Plan a two-group design (R RRreg's MODEL, with --p): the respondents and their split.")
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
def plan(k, numeric, step, options, items, design, rrreg, rrreg_p, margin, epsilons, deff, confidence, fmt) -> None:
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
        deniable plan --rrreg CDM --p 0.3,0.7 --margin 0.05
    """
    if rrreg is not None or rrreg_p is not None:
        if rrreg is None or rrreg_p is None or any(v is not None for v in (k, numeric, options, items, design, deff)):
            raise click.UsageError("--rrreg MODEL goes with --p P1,P2[,…], --margin and --confidence only")
        from deniable.server.survey.rrreg import plan_rrreg

        return show(plan_rrreg(rrreg, rrreg_p, _check_margin(margin, False), confidence=confidence), fmt)
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
