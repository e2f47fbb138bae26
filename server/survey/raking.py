"""Raking: respondents weighted to population margins, and estimates under the raked weights
(``deniable estimate --rake MARGINS.json``, the dashboard's weighted pages).

The margins are population shares of questions asked directly (:func:`parse_margins`); raking
(iterative proportional fitting, :func:`deniable.estimators.weights.rake`) starts from equal weights,
or from a responses file's sampling weights (``--weights COLUMN``), and every question of a type
weighting estimates (:mod:`.weighted`) is estimated under the raked weights with R's calibration
variance (:func:`raked_estimates`), within groups of a question asked directly (:func:`raked_by`,
:func:`raked_subgroups`), or crossed with another (:func:`raked_crosstab_of`).  The answer patterns
with their counts are enough (a database's aggregates): a respondent's raked weight depends only on
its answers to the raking questions.  The results render themselves (:class:`.estimates.SurveyResult`):
:class:`Raked`, :class:`RakedBy` and :class:`RakedCrosstab`, each saying what raking did
(:class:`RakingSummary`: the margins asked and achieved, the weights' range, Kish's n).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from deniable.estimators.validate import check_confidence
from deniable.estimators.weights import (SamplingDesignError, RakeResult, SurveyDesign, WeightedCrosstabResult,
                                         WeightedDifference, kish_note, rake, raked_crosstab, raked_design_estimate,
                                         raked_difference, raked_estimate, raked_mean)

from .dataset import NOT_ANSWERED, Dataset
from .definition import Question, Survey
from .estimates import SurveyResult, empty_group_row
from .questions.base import json_number, pct
from .tables import csv_text, grid, plural
from .weighted import (SIMULTANEOUS, WeightedMean, crosstab_cells, crosstab_text, group_blocks, question_block,
                       question_json, tick_design, ticks_result, unweighted_reason)


# ---------------------------------------------------------------- margins

MARGIN_TOLERANCE = 1e-9  # how far from 1 a margin's shares may add up


def _margin_error(message: str, *path: str) -> SamplingDesignError:
    field = ".".join(("margins", *path))
    return SamplingDesignError(f"{field}: {message}", field)


def _designed(q: Question) -> bool:
    """Whether ``q`` is randomized by a randomized-response design (not k-ary RR): a single choice's,
    or a check-all question's binary design on each tick."""
    return (q.qtype.categorical and getattr(q.qtype.mechanism(q), "design", None) is not None) \
        or tick_design(q) is not None


def rakeable(q: Question) -> bool:
    """Whether question ``q`` may weight: a single-choice question asked directly (never a protected one,
    nor one randomized by a design that is not ε-LDP, whose ε is None but whose answers are randomized)."""
    return q.qtype.categorical and not q.protected and not _designed(q) and unweighted_reason(q) is None


def _option_index(q: Question, key: str) -> int | None:
    if key in q.options:
        return q.options.index(key)
    if key.isdigit() and int(key) < len(q.options):
        return int(key)
    return None


def parse_margins(document, survey: Survey) -> dict[str, np.ndarray]:
    """Population margins ``{question: {option: share}}`` → question id → share of each option.

    An option is named by its label, or by its index (0, 1, …) when no option has that label; an
    option left out has a share of 0.  Only single-choice questions asked directly may weight
    (:func:`rakeable`): a protected question's answers are randomized, and weighting on them would
    both bias the weights and spend its privacy.  Shares are numbers ≥ 0 that add up to 1 (within
    1e-9), each 0 or at least 1e-9.  A SamplingDesignError names the field: ``margins.QUESTION`` or
    ``margins.QUESTION.OPTION``."""
    if not isinstance(document, dict) or not document:
        raise _margin_error('give a JSON object {"question": {"option": share, …}, …} with at least one question')
    ids = {q.id for q in survey.questions}
    direct = [q.id for q in survey.questions if rakeable(q)]
    out = {}
    for qid, shares in document.items():
        if qid not in ids:
            raise _margin_error(f"survey {survey.slug!r} has no question {qid[:64]!r} (questions that may weight: "
                                f"{', '.join(direct) or 'none'})", qid[:64])
        q = survey.question(qid)
        if q.protected:
            raise _margin_error(f"question {qid!r} is protected (ε = {q.epsilon:g}): only questions asked directly "
                                "may weight, never a randomized answer", qid)
        if not rakeable(q):
            raise _margin_error(f"question {qid!r} is not a single-choice question asked directly: only those may "
                                "weight", qid)
        if not isinstance(shares, dict) or not shares:
            raise _margin_error('give an object {"option": share, …} of the population\'s shares', qid)
        target = np.zeros(q.k)
        seen: set[int] = set()
        for key, value in shares.items():
            index = _option_index(q, str(key))
            if index is None:
                raise _margin_error(f"question {qid!r} has no option {str(key)[:64]!r} (options: "
                                    f"{', '.join(repr(o) for o in q.options)}, or their indices 0..{q.k - 1})",
                                    qid, str(key)[:64])
            if index in seen:
                raise _margin_error(f"option {q.options[index]!r} is given twice (by its label and its index)",
                                    qid, str(key))
            seen.add(index)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _margin_error("a share must be a number between 0 and 1", qid, str(key))
            try:
                share = float(value)
            except OverflowError:  # an integer beyond a float's range (JSON's 1000…0)
                share = math.inf
            if not math.isfinite(share) or share < 0:
                shown = repr(value) if len(repr(value)) <= 24 else f"{repr(value)[:20]}… ({len(repr(value))} digits)"
                raise _margin_error(f"a share must be a finite number ≥ 0 (got {shown})", qid, str(key))
            if 0 < share < MARGIN_TOLERANCE:
                # below the tolerance of the total it is 0 in all but name, and raking to it would make
                # weights too small to square (Kish's effective n, the variances)
                raise _margin_error(f"a share must be 0 or at least {MARGIN_TOLERANCE:g} (got {share:g})", qid,
                                    str(key))
            target[index] = share
        total = float(target.sum())
        if abs(total - 1) > MARGIN_TOLERANCE:
            raise _margin_error(f"the shares add up to {total:.12g}, not 1", qid)
        out[qid] = target
    return out


def load_margins(path, survey: Survey) -> dict[str, np.ndarray]:
    """:func:`parse_margins` of a JSON file (a key repeated in one object is refused)."""
    from .strict_json import JSONError, loads

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise SamplingDesignError(
            f"--rake: cannot read {path}: {getattr(exc, 'strerror', None) or exc}", "margins") from None
    try:
        document = loads(text)
    except JSONError as exc:  # not JSON, or a DuplicateKeyError
        raise SamplingDesignError(f"--rake: {path} is not valid JSON ({exc})", "margins") from None
    return parse_margins(document, survey)


# ---------------------------------------------------------------- what raking did


def _shares(q: Question, values) -> dict:
    return {label: json_number(values[i]) for i, label in enumerate(q.options)}


class RakingSummary:
    """What every raked result says of its raking (:class:`Raked`, :class:`RakedBy`, :class:`RakedCrosstab`
    have ``survey``, ``margins``, ``raking``, ``untrimmed``, ``n``, ``skipped`` and ``base``)."""

    def raking_dict(self) -> dict:
        """What raking did: the margins asked and achieved, the rounds, the weights' range (× the mean
        weight) and Kish's effective sample size; with trimming, the same of the untrimmed weights."""
        res = self.raking

        def weights(x: RakeResult) -> dict:
            return {"smallest": json_number(x.smallest), "largest": json_number(x.largest),
                    "effective_n": json_number(x.effective_n)}

        trim = None
        if res.bounds is not None:
            trim = {"low": res.bounds[0], "high": res.bounds[1], "trimmed": res.trimmed,
                    "untrimmed": weights(self.untrimmed)}
        survey = self.survey
        return {"margins": {qid: _shares(survey.question(qid), target) for qid, target in self.margins.items()},
                "achieved": {qid: _shares(survey.question(qid), res.achieved[qid]) for qid in self.margins},
                "iterations": res.iterations, "n": self.n, "weights": weights(res), "trim": trim,
                "base_weights": self.base}

    def raking_text(self) -> str:
        """For a terminal: what raking did, and the achieved margins beside the population's."""
        d = self.raking_dict()
        w = d["weights"]
        start = "" if self.base is None else f"from the sampling weights of column {self.base!r} "
        rounds = f"{d['iterations']:,} round{'' if d['iterations'] == 1 else 's'}"
        lines = [f"raked {start}to the margins of {', '.join(repr(qid) for qid in self.margins)} in {rounds} · "
                 f"weights {w['smallest']:.4g}..{w['largest']:.4g} × the mean · Kish effective sample size "
                 f"{w['effective_n']:,.1f} of {self.n:,}"]
        if d["trim"]:
            t, u = d["trim"], d["trim"]["untrimmed"]
            lines.append(f"trimmed to {t['low']:g}..{t['high']:g} × the mean ({t['trimmed']:,} respondents at a "
                         f"bound); untrimmed: weights {u['smallest']:.4g}..{u['largest']:.4g}, Kish effective "
                         f"sample size {u['effective_n']:,.1f}")
        rows = [[qid, label, pct(share), pct(d["achieved"][qid][label])]
                for qid, shares in d["margins"].items() for label, share in shares.items()]
        lines += ["", *grid(["question", "option", "population", "achieved"], rows)]
        if self.skipped:
            lines += ["", *(f"not weighted: {q.id}: {why}" for q, why in self.skipped)]
        return "\n".join(lines) + "\n"

    def head(self) -> str:
        """The lines above a table: the survey, its responses and what raking did."""
        return f"{self.survey.title} ({self.survey.slug}): {plural(self.n, 'response')}\n{self.raking_text()}\n"


RAKED_CSV_COLUMNS = ("question", "option", "label", "n", "effective_n", "degrees_of_freedom", "epsilon",
                     "declared_epsilon", "p", "q", "method", "confidence", "report_share", "estimate", "std_error",
                     "ci_low", "ci_high", "unweighted_estimate", "unweighted_std_error", "raked_to")


@dataclass(frozen=True)
class Raked(RakingSummary, SurveyResult):
    """Estimates under weights raked to population margins (:func:`raked_estimates`)."""

    survey: Survey
    margins: dict  # question id → population share of each option
    raking: RakeResult  # the weights (per row of the dataset), achieved margins, range, Kish's n
    untrimmed: RakeResult | None  # with --trim: the raking without bounds, to show the trimming's effect
    n: int  # respondents
    questions: list  # of (Question, n answered, WeightedResult | WeightedMean | None)
    unweighted: dict  # question id → the same estimator with equal weights (the base weights, unraked)
    skipped: list  # of (Question, why it has no weighted estimate)
    base: str | None = None  # the column of sampling weights raking started from (None: equal weights)

    def question_dict(self, q: Question, n: int, result) -> dict:
        """One question's record (as :func:`.weighted.question_json`), with the equal-weights estimates
        beside (``unweighted``; raking from sampling weights: the base weights' own, ``unraked``)."""
        record = question_json(q, n, result)
        record["raked"] = True
        base = self.unweighted.get(q.id)
        if base is None:
            return record
        key = "unweighted" if self.base is None else "unraked"
        if isinstance(base, WeightedDifference):  # a list experiment: the prevalence, kept in [0, 1]
            record[key] = {"estimate": json_number(base.estimate), "std_error": json_number(base.std_error),
                           "ci_low": json_number(max(0.0, base.ci_low)),
                           "ci_high": json_number(min(1.0, base.ci_high))}
            return record
        if isinstance(base, WeightedMean):
            record[key] = {"estimate": json_number(base.estimate), "std_error": json_number(base.std_error),
                           "ci_low": json_number(base.ci_low), "ci_high": json_number(base.ci_high)}
            return record
        for i, option in enumerate(record["options"]):
            option[key] = {"estimate": json_number(base.estimate[i]), "std_error": json_number(base.std_error[i]),
                           "ci_low": json_number(base.ci_low[i]), "ci_high": json_number(base.ci_high[i])}
        return record

    def to_dict(self) -> dict:
        """``deniable estimate --rake MARGINS.json --format json`` (and what the Weighting page shows)."""
        return {"survey": self.survey.slug, "n_responses": self.n, "weighted": True, "raking": self.raking_dict(),
                "questions": [self.question_dict(q, n, result) for q, n, result in self.questions],
                "skipped": [{"id": q.id, "reason": why} for q, why in self.skipped]}

    def table(self) -> str:
        """What raking did, then one block per question (:func:`.weighted.question_block`)."""
        return self.head() + "\n\n".join(question_block(q, n, r) for q, n, r in self.questions) + "\n"

    def csv_header(self) -> list[str]:
        """:data:`RAKED_CSV_COLUMNS`; raking from sampling weights, ``unraked_…`` for ``unweighted_…`` and
        ``base_weights`` last."""
        key = "unweighted" if self.base is None else "unraked"
        return [c.replace("unweighted", key) for c in RAKED_CSV_COLUMNS] + \
            ([] if self.base is None else ["base_weights"])

    def csv_rows(self, q: Question, n: int, result) -> list[list]:
        """Question ``q``'s rows of :meth:`to_csv`."""
        record = self.question_dict(q, n, result)
        key = "unweighted" if self.base is None else "unraked"
        if "prevalence" in record:  # a list experiment: the prevalence, then each arm's mean count
            entries = [{**record["prevalence"], "option": "prevalence", "label": q.sensitive,
                        "unweighted": record.get(key)},
                       {**record["control"], "option": "control", "label": "control mean count"},
                       {**record["treatment"], "option": "treatment", "label": "treatment mean count"}]
        elif "mean" in record:
            entries = [{**record["mean"], "option": "mean", "label": "mean", "unweighted": record.get(key)}]
        else:
            entries = [{**o, "option": i, "unweighted": o.get(key)} for i, o in enumerate(record["options"])]
        rows = []
        for entry in entries:
            base = entry.get("unweighted") or {}
            row = {**record, **entry, "question": q.id, "unweighted_estimate": base.get("estimate"),
                   "unweighted_std_error": base.get("std_error"), "raked_to": " ".join(self.margins)}
            rows.append(["" if row.get(c) is None else row[c] for c in RAKED_CSV_COLUMNS]
                        + ([] if self.base is None else [self.base]))
        return rows

    def to_csv(self) -> str:
        """One row per question × option (a numeric question: one row, option ``mean``), the raking
        questions on each row; raking from sampling weights, the estimates beside are the base
        weights' (columns ``unraked_estimate``, ``unraked_std_error``) and ``base_weights`` names them."""
        return csv_text([self.csv_header(), *(row for q, n, r in self.questions for row in self.csv_rows(q, n, r))])


# ---------------------------------------------------------------- raked estimates


def _mean_result(mean: float, variance: float, n: int, effective_n: float, confidence: float,
                 df: int | None = None) -> WeightedMean:
    se = math.sqrt(max(variance, 0.0))
    df = n - 1 if df is None else df
    half = float(student_t.ppf(0.5 + confidence / 2, df)) * se if df > 0 else math.nan
    return WeightedMean(n=n, effective_n=effective_n, degrees_of_freedom=df, confidence=confidence,
                        estimate=mean, std_error=se, ci_low=mean - half, ci_high=mean + half,
                        method="t interval on n − 1 degrees of freedom (raking: calibration variance)")


def rake_dataset(dataset: Dataset, margins: dict, trim, survey: Survey, base: SurveyDesign | None = None):
    """Rake the dataset's rows to ``margins`` (:func:`raked_estimates`' checks, naming the margin's
    field): ``(counts, n, variables, start, result, untrimmed)``."""
    rows = dataset.n_rows
    counts = np.ones(rows) if dataset.weights is None else np.asarray(dataset.weights, dtype=float)
    n = int(round(float(counts.sum())))
    if n < 2:
        raise _margin_error(f"raking needs at least 2 respondents (there {'is' if n == 1 else 'are'} {n})")
    variables = {}
    for qid, target in margins.items():
        q = survey.question(qid)
        if qid not in dataset.columns:
            raise _margin_error(f"question {qid!r} is not in the answer patterns, so it cannot weight", qid)
        codes = np.asarray(dataset.columns[qid], dtype=np.int64)
        skipped = float(counts[codes == NOT_ANSWERED].sum())
        if skipped:
            raise _margin_error(f"{skipped:,.0f} respondents did not answer {qid!r}; raking needs every "
                                "respondent's answer to the questions it weights on", qid)
        chose = np.bincount(codes, weights=counts, minlength=q.k)
        for j in range(q.k):
            if target[j] > 0 and chose[j] == 0:
                raise _margin_error(f"a population share of {target[j]:g} but no respondent chose "
                                    f"{q.options[j]!r} (an empty cell: merge it with another option)",
                                    qid, q.options[j])
            if target[j] == 0 and chose[j] > 0:
                raise _margin_error(f"{chose[j]:,.0f} respondents chose {q.options[j]!r} but its population share "
                                    "is 0", qid, q.options[j])
        variables[qid] = codes
    if base is not None and (dataset.weights is not None or base.n != rows):
        raise SamplingDesignError("weights: raking from sampling weights needs one row per respondent", "weights")
    start = np.ones(rows) if base is None else base.weights
    result = rake(start, variables, margins, counts=counts, bounds=trim)
    untrimmed = rake(start, variables, margins, counts=counts) if trim is not None else None
    return counts, n, variables, start, result, untrimmed


def raked_estimates(dataset: Dataset, margins: dict[str, np.ndarray], *, trim: tuple | None = None,
                    confidence: float = 0.95, survey: Survey | None = None, base: SurveyDesign | None = None,
                    base_column: str | None = None, simultaneous: bool = False,
                    outside: dict[str, list[Dataset]] | None = None) -> Raked:
    """Rake the respondents (equal starting weights) to ``margins`` (:func:`parse_margins`) and
    estimate every question of a type weighting estimates (single choice, with ε or a design;
    check-all; list experiment; numeric mean: :func:`_raked_record`) under the raked weights, with
    R's calibration variance, beside the same estimator with equal weights.  ``simultaneous``:
    Bonferroni over each question's options.

    ``base``: the sample's design (``--rake`` with ``--weights COLUMN``, one row per respondent):
    raking starts from its sampling weights instead of equal ones, the variance keeps its strata
    and clusters, and the estimates beside are the base weights' own, unraked (R: ``rake()`` of the
    weighted ``svydesign``, beside ``svymean`` of the design itself).  ``base_column`` names the column.

    The dataset may be answer patterns with their counts (a database's aggregates, a file read
    by :func:`.files.read_patterns`): a respondent's raked weight depends only on its answers to
    the raking questions, so a pattern's respondents share one weight.  ``survey``: the whole
    survey, when the dataset holds only some of its questions (a database's patterns); ``outside``:
    the questions the answer patterns leave out, from their raking cells (:func:`_outside_records`).  A
    SamplingDesignError names the margin's field for a respondent who did not answer a raking question,
    an option with a positive share that nobody chose (an empty cell) or one chosen with a share
    of 0, and names ``margins`` (or ``trim``) for raking that does not converge."""
    confidence = check_confidence(confidence)
    survey = survey or dataset.survey
    counts, n, variables, start, result, untrimmed = rake_dataset(dataset, margins, trim, survey, base)
    w = np.asarray(result.weights)
    raking = list(variables.values())
    out, unweighted, skipped_questions = [], {}, []
    everyone = np.ones(dataset.n_rows, dtype=bool)
    for q in survey.questions:
        reason = unweighted_reason(q)
        if reason is None and q.id not in dataset.columns and base is None and q.id in (outside or {}):
            (_, _, answered_n, estimate, unraked), = _outside_records(q, outside[q.id], margins, trim, survey,
                                                                     confidence, simultaneous)
            out.append((q, answered_n, estimate))
            if estimate is not None:
                unweighted[q.id] = unraked
            continue
        if q.id not in dataset.columns:
            skipped_questions.append((q, "not in the answer patterns (estimate it from the responses file)"))
            continue
        if reason is not None:
            skipped_questions.append((q, reason))
            continue
        codes = np.asarray(dataset.columns[q.id], dtype=np.int64)
        answered_n, estimate = _raked_record(q, codes, counts, w, raking, everyone, n, confidence, base, simultaneous)
        out.append((q, answered_n, estimate))
        if estimate is not None:  # the same estimator with the starting weights, unraked
            unweighted[q.id] = _raked_record(q, codes, counts, start, [], everyone, n, confidence, base,
                                             simultaneous)[1]
    return Raked(survey=survey, margins=margins, raking=result, untrimmed=untrimmed, n=n, questions=out,
                 unweighted=unweighted, skipped=skipped_questions, base=base_column if base is not None else None)


def _raked_record(q: Question, codes: np.ndarray, counts: np.ndarray, w: np.ndarray, raking: list, rows,
                  n: int, confidence: float, base: SurveyDesign | None = None, simultaneous: bool = False,
                  option: int | None = None):
    """``(n answered, result | None)`` of question ``q`` under raked weights ``w`` over the ``rows``
    (a boolean mask: a domain; the others keep their place with weight 0, as R's ``subset`` of a
    calibrated design), each estimate linear in per-respondent scores, with the calibration variance
    (:mod:`deniable.estimators.weights`: the influence values' residuals on the raking variables):

    * a single choice: :func:`~deniable.estimators.weights.raked_estimate` (k-ary randomized
      response), or with a randomized-response design
      :func:`~deniable.estimators.weights.raked_design_estimate` (the score of answer t is row t of
      the design's ``M⁻¹`` indexed by the report);
    * a check-all question: each tick a two-option question of its own (the binary mechanism's
      inverse per tick, or its binary design's);
    * a list experiment: :func:`~deniable.estimators.weights.raked_difference`, the treatment arm's
      raked mean score less the control arm's, with their covariance;
    * a numeric question: the raked mean of its unbiased scores.

    ``base``: raking started from these sampling weights (their strata and clusters in the variance);
    ``simultaneous``: Bonferroni over the options (as :func:`_question_estimate`); ``option``: a
    check-all question's one option (a result of that option alone)."""
    if simultaneous:
        ticks = None if q.qtype.categorical else q.qtype.tick_columns(q)
        k = q.qtype.n_cells(q) if q.qtype.categorical else ticks[0].shape[1] if ticks is not None else \
            q.k if tick_design(q) is not None else 1
        if k > 1:
            level = 1 - (1 - check_confidence(confidence)) / k
            answered_n, result = _raked_record(q, codes, counts, w, raking, rows, n, level, base, option=option)
            if result is not None:
                result = dataclasses.replace(result, confidence=confidence, simultaneous=True,
                                             method=result.method + SIMULTANEOUS.format(k=k, level=level))
            return answered_n, result
    answered = (codes != NOT_ANSWERED) & rows
    answered_n = int(round(float(counts[answered].sum())))
    if answered_n == 0:
        return 0, None
    filled = np.where(answered, codes, 0)
    common = {"counts": counts, "domain": answered, "confidence": confidence}
    if q.qtype.categorical:
        realized = getattr(q.qtype.mechanism(q), "design", None)
        if realized is not None:
            return answered_n, raked_design_estimate(filled, realized, w, raking, sample=base, **common)
        return answered_n, raked_estimate(filled, q.epsilon, w, raking, k=q.qtype.n_cells(q), design=base, **common)
    options = range(q.k) if option is None else [option]
    ticks = q.qtype.tick_columns(q)
    if ticks is not None:
        bits, tick_epsilon = ticks
        return answered_n, ticks_result(q, [raked_estimate(bits[filled, j], tick_epsilon, w, raking, k=2, design=base,
                                                      **common) for j in options])
    tick = tick_design(q)
    if tick is not None:  # each tick randomized by one binary design: answer 0 "ticked", its report 0 sent as a tick
        return answered_n, ticks_result(q, [raked_design_estimate(np.where((filled >> j) & 1 == 1, 0, 1), tick, w,
                                                             raking, sample=base, **common)
                                       for j in options], ticked=0)
    arms = q.qtype.arm_scores(q)
    if arms is not None:
        arm, score = arms
        return answered_n, raked_difference(score[filled], np.where(answered, arm[filled], -1), w, raking,
                                            counts=counts, confidence=confidence, design=base)
    scores = np.where(answered, q.qtype.linear_scores(q, filled), 0.0)
    mean, variance = raked_mean(scores, w, raking, counts=None if base is not None else counts, domain=answered,
                                design=base)
    d = w * answered
    return answered_n, _mean_result(mean, variance, n, float((counts @ d) ** 2 / (counts @ d**2)), confidence,
                                    None if base is None else base.degrees_of_freedom)


def _outside_records(q: Question, sources: list[Dataset], margins: dict, trim, survey: Survey, confidence: float,
                     simultaneous: bool, by: Question | None = None) -> list[tuple]:
    """The raked records of a question the answer patterns leave out, from ``sources``
    (:func:`deniable.server.store.responses.raking_sources`: datasets of the raking questions and
    ``q``, one row per raking cell and code with its count), for everyone or within each group of
    ``by`` (asked directly, so in every source): ``[(label, not answered, n answered, raked, unraked)]``.

    A respondent's raked weight depends only on its raking cell, and each source holds every
    respondent's raking cell, so raking a source gives every respondent the weight raking the
    answer patterns gives it; and each estimate is a sum over respondents of weight × score (the
    calibration variance too, :func:`_raked_record`), so it comes out as from one row per
    respondent.  A check-all question's sources are one per option (its column that option's tick
    alone): option j's numbers come from the j-th."""
    raked = []
    for source in sources:
        counts, n, variables, start, result, _ = rake_dataset(source, margins, trim, survey)
        raked.append((source, counts, n, list(variables.values()), np.asarray(result.weights), start))
    selections = [(None, False, None)] if by is None else \
        [(g, g == NOT_ANSWERED, label) for g, label in [*enumerate(by.options), (NOT_ANSWERED, "not answered")]]
    out = []
    for g, not_answered, label in selections:
        records = []
        for j, (source, counts, n, raking, w, start) in enumerate(raked):
            codes = np.asarray(source.columns[q.id], dtype=np.int64)
            rows = np.ones(codes.size, dtype=bool) if g is None else np.asarray(source.columns[by.id]) == g
            option = j if len(raked) > 1 else None
            answered_n, estimate = _raked_record(q, codes, counts, w, raking, rows, n, confidence, None, simultaneous,
                                                 option)
            unraked = None if estimate is None or by is not None else \
                _raked_record(q, codes, counts, start, [], rows, n, confidence, None, simultaneous, option)[1]
            records.append((answered_n, estimate, unraked))
        answered_n, estimate, unraked = records[0]
        if len(records) > 1 and estimate is not None:  # option j of the j-th source
            estimate, unraked = (_option_by_option([r[i] for r in records]) for i in (1, 2))
        out.append((label, not_answered, answered_n, estimate, unraked))
    return out


def _option_by_option(results: list):
    """One check-all result of each option's result alone (None stays None)."""
    if results[0] is None:
        return None
    names = ("report_share", "report_std_error", "estimate", "std_error", "ci_low", "ci_high", "kish_floor")
    joined = {name: np.concatenate([getattr(r, name) for r in results]) for name in names}
    return dataclasses.replace(results[0], k=len(results), **joined,
                               note=kish_note(joined["kish_floor"], results[0].effective_n))


def _raked_question_check(q: Question, dataset: Dataset, field: str) -> None:
    """Refuse, naming ``field``, a question the answer patterns do not hold or whose type has no
    weighted estimator (:func:`unweighted_reason`); every type weighting estimates is raked too."""
    if q.id not in dataset.columns:
        raise SamplingDesignError(
            f"{field}: question {q.id!r} is not in the answer patterns, so it has no raked estimate",
            field)
    reason = unweighted_reason(q)
    if reason is not None:
        raise SamplingDesignError(f"{field}: question {q.id!r} is {reason}", field)


def _raked_group(q: Question, label: str, not_answered: bool, n: int, result) -> dict:
    """One group's record in a raked ``--by`` document: the question's record in the group, or an empty group."""
    head = {"group": label, "not_answered": not_answered}
    if result is None:
        return {**head, "n": 0, "empty": True, "weighted": True, "raked": True}
    return {**head, **question_json(q, n, result), "raked": True}


@dataclass(frozen=True)
class RakedSubgroups(SurveyResult):
    """A question's raked estimates within each group of a question asked directly (:func:`raked_subgroups`;
    the dashboard's subgroups page): :meth:`to_dict` is the question's entry in ``deniable estimate --rake
    … --by``'s document (:class:`RakedBy`) with the responses raked, :meth:`table` its blocks."""

    margins: dict
    raking: RakeResult
    n: int
    question: Question
    by: Question
    groups: list  # of (label, not answered, n answered, WeightedResult | WeightedMean | None)

    def to_dict(self) -> dict:
        return {"id": self.question.id, "by": self.by.id, "n_responses": self.n, "weighted": True,
                "groups": [_raked_group(self.question, *row) for row in self.groups]}

    def table(self) -> str:
        """One block per group, the group named first (as ``--rake … --by`` prints each question)."""
        return group_blocks(self.by, [(self.question, self.groups)])


def raked_subgroups(dataset: Dataset, margins: dict[str, np.ndarray], question: Question, by: Question, *,
                    trim: tuple | None = None, confidence: float = 0.95,
                    survey: Survey | None = None, base: SurveyDesign | None = None,
                    simultaneous: bool = False, outside: dict[str, list[Dataset]] | None = None) -> RakedSubgroups:
    """``question``'s estimates within each option of ``by`` (asked directly), then among those who
    skipped it, under the weights raked to ``margins`` (:func:`raked_estimates`' raking): each group
    a domain of the raked sample — its respondents' raked weights, the others kept with weight 0 —
    with the calibration variance and Korn and Graubard's interval on n − 1 degrees of freedom (R:
    ``svyby(~z, ~by, rake(…), svymean)`` and ``svyciprop(method = "beta")``; a calibrated design
    keeps its rows in a subset).  A SamplingDesignError names ``question`` (a type raked estimates do not
    cover, or a question the answer patterns do not hold) or the margin's field.  ``base`` and
    ``simultaneous``: as :func:`raked_estimates`'."""
    confidence = check_confidence(confidence)
    survey = survey or dataset.survey
    if by.id not in dataset.columns:
        raise SamplingDesignError(f"by: question {by.id!r} is not in the answer patterns", "by")
    if question.id not in dataset.columns and base is None and question.id in (outside or {}) \
            and unweighted_reason(question) is None:  # from its raking cells (``outside``: :func:`raked_estimates`)
        counts, n, variables, _, result, _ = rake_dataset(dataset, margins, trim, survey, base)
        groups = [record[:4] for record in _outside_records(question, outside[question.id], margins, trim, survey,
                                                             confidence, simultaneous, by)]
        return RakedSubgroups(margins=margins, raking=result, n=n, question=question, by=by, groups=groups)
    _raked_question_check(question, dataset, "question")
    counts, n, variables, _, result, _ = rake_dataset(dataset, margins, trim, survey, base)
    groups = _raked_groups(dataset, question, by, counts, np.asarray(result.weights), list(variables.values()), n,
                           confidence, base, simultaneous)
    return RakedSubgroups(margins=margins, raking=result, n=n, question=question, by=by, groups=groups)


def _raked_groups(dataset: Dataset, q: Question, by: Question, counts, w, raking, n, confidence, base,
                  simultaneous) -> list:
    """``q``'s raked records within each option of ``by``, then among those who skipped ``by``."""
    codes = np.asarray(dataset.columns[q.id], dtype=np.int64)
    groups_of = np.asarray(dataset.columns[by.id], dtype=np.int64)
    groups = []
    for g, label in [*enumerate(by.options), (NOT_ANSWERED, "not answered")]:
        answered_n, estimate = _raked_record(q, codes, counts, w, raking, groups_of == g, n, confidence, base,
                                             simultaneous)
        groups.append((label, g == NOT_ANSWERED, answered_n, estimate))
    return groups


@dataclass(frozen=True)
class RakedBy(RakingSummary, SurveyResult):
    """``deniable estimate --rake MARGINS.json --by QUESTION``: every other question's raked estimates
    within each group of ``by`` (:func:`raked_by`); ``raking``, ``untrimmed``, ``skipped`` and
    ``base`` as a :class:`Raked`'s, so it says what raking did (:class:`RakingSummary`)."""

    survey: Survey
    margins: dict
    raking: RakeResult
    untrimmed: RakeResult | None
    n: int
    by: Question
    questions: list  # of (Question, [(label, not answered, n answered, result | None)])
    skipped: list  # of (Question, why it has no raked estimate)
    base: str | None = None

    def to_dict(self) -> dict:
        """``--rake … --by Q --format json``: the ``--weights … --by`` document's shape, what raking did
        in place of the design, and the questions raking skipped."""
        return {"survey": self.survey.slug, "by": self.by.id, "n_responses": self.n, "weighted": True,
                "raking": self.raking_dict(),
                "questions": [{"id": q.id, "by": self.by.id, "groups": [_raked_group(q, *row) for row in rows]}
                              for q, rows in self.questions],
                "skipped": [{"id": q.id, "reason": why} for q, why in self.skipped]}

    def table(self) -> str:
        """What raking did, then per question one block per group, the group named first."""
        return self.head() + group_blocks(self.by, self.questions)

    def to_csv(self) -> str:
        """:meth:`Raked.to_csv`'s columns (the unweighted ones empty) with ``by`` and ``group`` in front; an
        empty group is one row with n = 0."""
        one = Raked(survey=self.survey, margins=self.margins, raking=self.raking, untrimmed=self.untrimmed, n=self.n,
                    questions=[], unweighted={}, skipped=[], base=self.base)
        header = one.csv_header()
        return csv_text([["by", "group", *header], *(
            row for q, rows in self.questions for label, _, n, result in rows
            for row in ([[self.by.id, label, *line] for line in one.csv_rows(q, n, result)] if result is not None
                        else [empty_group_row(self.by.id, label, q.id, header)]))])


def raked_by(dataset: Dataset, margins: dict[str, np.ndarray], by: Question, *, trim: tuple | None = None,
             confidence: float = 0.95, survey: Survey | None = None, base: SurveyDesign | None = None,
             base_column: str | None = None, simultaneous: bool = False,
             outside: dict[str, list[Dataset]] | None = None) -> RakedBy:
    """Every question but ``by`` (asked directly: :func:`.analysis.check_by`) within each of its groups,
    under one raking to ``margins``: :func:`raked_subgroups` of each question (the same records, each
    group a domain of the raked sample), raking once.  A question the raked path cannot estimate (a
    type without a weighted estimator, a question the answer patterns do not hold) is ``skipped``
    with the reason, as :func:`raked_estimates` skips it."""
    confidence = check_confidence(confidence)
    survey = survey or dataset.survey
    if by.id not in dataset.columns:
        raise SamplingDesignError(f"by: question {by.id!r} is not in the answer patterns", "by")
    counts, n, variables, _, result, untrimmed = rake_dataset(dataset, margins, trim, survey, base)
    w, raking = np.asarray(result.weights), list(variables.values())
    out, skipped = [], []
    for q in survey.questions:
        if q.id == by.id:
            continue
        reason = unweighted_reason(q)
        if reason is None and q.id not in dataset.columns and base is None and q.id in (outside or {}):
            out.append((q, [record[:4] for record in _outside_records(q, outside[q.id], margins, trim, survey,
                                                                      confidence, simultaneous, by)]))
            continue
        if q.id not in dataset.columns:
            skipped.append((q, "not in the answer patterns (estimate it from the responses file)"))
            continue
        if reason is not None:
            skipped.append((q, reason))
            continue
        out.append((q, _raked_groups(dataset, q, by, counts, w, raking, n, confidence, base, simultaneous)))
    return RakedBy(survey=survey, margins=margins, raking=result, untrimmed=untrimmed, n=n, by=by, questions=out,
                   skipped=skipped, base=base_column if base is not None else None)


@dataclass(frozen=True)
class RakedCrosstab(RakingSummary, SurveyResult):
    """The cross-tab of two single-choice questions under raked weights (:func:`raked_crosstab_of`)."""

    margins: dict
    raking: RakeResult
    n: int
    row: Question
    col: Question
    result: WeightedCrosstabResult
    survey: Survey | None = None  # with untrimmed, skipped and base: what it says of its raking (RakingSummary)
    untrimmed: RakeResult | None = None
    skipped: tuple = ()
    base: str | None = None

    def to_dict(self) -> dict:
        """``--rake … --crosstab Q1 Q2 --format json``: the weighted cross-tab document
        (:func:`.weighted.crosstab_cells`) with what raking did in place of the design."""
        r = self.result
        return {"row": {"id": self.row.id, "text": self.row.text, "epsilon": self.row.epsilon},
                "col": {"id": self.col.id, "text": self.col.text, "epsilon": self.col.epsilon},
                "n": r.n, "weighted": True, "raked": True, "raking": self.raking_dict(),
                "effective_n": json_number(r.effective_n), "degrees_of_freedom": r.degrees_of_freedom,
                "confidence": json_number(r.confidence), "simultaneous": r.simultaneous, "method": r.method,
                "note": r.note, "cells": crosstab_cells(self.row, self.col, r)}

    def table(self) -> str:
        return self.head() + crosstab_text(self, self.to_dict(), "raked")

    def to_csv(self) -> str:
        """One row per cell: the cross-tab's numbers and the raking questions (``raked_to``)."""
        data = self.to_dict()
        keys = list(data["cells"][0])
        return csv_text([["row", "col", "n", "effective_n", "degrees_of_freedom", "confidence", *keys, "raked_to"],
                         *([self.row.id, self.col.id, data["n"], data["effective_n"], data["degrees_of_freedom"],
                            data["confidence"], *("" if cell[k] is None else cell[k] for k in keys),
                            " ".join(self.margins)] for cell in data["cells"])])


def raked_crosstab_of(dataset: Dataset, margins: dict[str, np.ndarray], row: Question, col: Question, *,
                      trim: tuple | None = None, confidence: float = 0.95,
                      survey: Survey | None = None, simultaneous: bool = False, base: SurveyDesign | None = None,
                      base_column: str | None = None) -> RakedCrosstab:
    """The joint and conditional shares of two single-choice questions under the weights raked to
    ``margins``: :func:`deniable.estimators.weights.raked_crosstab` on the answer patterns (the
    Kronecker inverse of the two mechanisms' matrices — k-ary randomized response's, or a
    randomized-response design's — on the raked shares of report pairs, the calibration variance).
    ``simultaneous``: Bonferroni over the k₁·k₂ cells, as :func:`weighted_crosstab_of`.  ``base`` and
    ``base_column``: raking starts from the sample's design weights, whose strata and clusters the
    variance keeps (``raked_crosstab``'s ``base``), as :func:`raked_estimates`' do."""
    confidence = check_confidence(confidence)
    survey = survey or dataset.survey
    channels = {}
    for q, field in ((row, "row"), (col, "col")):
        _raked_question_check(q, dataset, field)
        if not q.qtype.categorical:
            raise SamplingDesignError(f"{field}: question {q.id!r} is not a single-choice question", field)
        realized = getattr(q.qtype.mechanism(q), "design", None)
        channels[field] = {"epsilon": q.epsilon, "matrix": None} if realized is None else \
            {"epsilon": None, "matrix": realized.matrix}
    cells = row.qtype.n_cells(row) * col.qtype.n_cells(col)
    level = 1 - (1 - confidence) / cells if simultaneous else confidence
    counts, n, variables, _, result, untrimmed = rake_dataset(dataset, margins, trim, survey, base)
    r1 = np.asarray(dataset.columns[row.id], dtype=np.int64)
    r2 = np.asarray(dataset.columns[col.id], dtype=np.int64)
    ct = raked_crosstab(np.where(r1 == NOT_ANSWERED, -1, r1), np.where(r2 == NOT_ANSWERED, -1, r2),
                        channels["row"]["epsilon"], channels["col"]["epsilon"], np.asarray(result.weights),
                        list(variables.values()), k_row=row.qtype.n_cells(row), k_col=col.qtype.n_cells(col),
                        counts=None if base is not None else counts, confidence=level,
                        row_matrix=channels["row"]["matrix"], col_matrix=channels["col"]["matrix"], base=base)
    if simultaneous:
        ct = dataclasses.replace(ct, confidence=confidence, simultaneous=True,
                                 method=ct.method + f" (simultaneous: Bonferroni over the {cells} cells, "
                                                    f"each at {level:.4%})")
    return RakedCrosstab(margins=margins, raking=result, n=n, row=row, col=col, result=ct, survey=survey,
                         untrimmed=untrimmed, base=base_column if base is not None else None)

