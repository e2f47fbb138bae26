"""Weighted, design-based estimates of a responses file (``deniable estimate --weights COLUMN``).

A responses file may carry design columns beside the questions — sampling weights, strata,
clusters, the population's clusters per stratum — named by a
:class:`~.dataset.DesignColumns` (the file's readers put them in :attr:`.dataset.Dataset.design`).
They are **sampling** weights: each respondent stands for w people of the population, and the
precision comes from the design, never from Σw (frequency weights, ``Dataset.weights``, are
another thing).

Every single-choice question is estimated by :func:`deniable.estimators.weights.weighted_estimate`:
the weighted (Hájek) share of each report, debiased by the mechanism, its variance by Taylor
linearization with the strata and clusters, and Korn–Graubard intervals at the design's effective
sample size with its degrees of freedom.  A question some respondents did not answer is a domain:
the respondents who did not answer it keep their place in the design with weight 0 (as R's
``subset()`` of a design does), so the strata and clusters still say how the sample was drawn.
A single choice with a randomized-response design (forced response, Warner, …) gets
:func:`deniable.estimators.weights.weighted_design_estimate`: the design's ``M⁺`` applied to the
weighted report shares, Korn–Graubard intervals mapped through the design where one report is
affine in one share (binary designs, forced response), else the union of the t interval and
Korn–Graubard's at the estimate's effective sample size, clipped.
A type whose headline is a mean of per-respondent unbiased scores (a numeric question's mean:
:meth:`~.questions.base.QuestionType.linear_scores`) gets the weighted mean of its scores — a linear
statistic, so the same linearization gives its variance — and the t interval with the design's
degrees of freedom (R: ``confint(svymean(~score, design), df = degf(design))``).  A check-all
question's options are each a binary randomized response (:meth:`~.questions.base.QuestionType.tick_columns`):
each option's share is a two-option question's weighted estimate (with a binary design on each
tick, that design's :func:`~deniable.estimators.weights.weighted_design_estimate` of the tick's two
reports).  A list experiment's prevalence
(:meth:`~.questions.base.QuestionType.arm_scores`) is the difference of the arms' weighted means
(:func:`deniable.estimators.weights.weighted_difference`).  The other types are refused, naming the
question (their weighted estimators are not written yet).

Subgroups (:func:`weighted_subgroups`) are domain estimates, and cross-tabs
(:func:`weighted_crosstab_of`) debias the weighted shares of report pairs with the Kronecker
inverse of the two mechanisms (k-ary randomized response's or a design's matrix); a regression
(:func:`fit_weighted_formula`) is fitted by pseudo-likelihood, a designed outcome's matrix in it,
and under raked weights with the calibration variance (:func:`fit_raked_formula`);
raking (:func:`raked_estimates`, and the regression's) may start from sampling weights.
"""

from __future__ import annotations

import dataclasses
import io
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from deniable.client.mechanism import resolve
from deniable.estimators.validate import check_confidence
from deniable.estimators.weights import (RakeResult, SamplingDesignError, SurveyDesign, WeightedCrosstabResult,
                                         WeightedDifference, WeightedResult, domain_degrees_of_freedom,
                                         linearized_variance, rake, raked_crosstab, raked_design_estimate,
                                         raked_difference, raked_estimate, raked_mean,
                                         kish_note, survey_design,
                                         weighted_crosstab, weighted_design_estimate, weighted_difference,
                                         weighted_estimate)

from .dataset import NOT_ANSWERED, Dataset, DesignColumns
from .definition import Question, Survey
from .questions.base import fmt, json_number, pct
from .spreadsheet import SafeWriter

ROLES = {"weights": "weights", "strata": "strata", "clusters": "cluster", "population_clusters": "fpc"}
CSV_COLUMNS = ("question", "option", "label", "n", "effective_n", "degrees_of_freedom", "epsilon",
               "declared_epsilon", "p", "q", "method", "confidence", "report_share", "estimate", "std_error",
               "ci_low", "ci_high", "weights", "strata", "cluster", "fpc")


def unweighted_reason(q: Question) -> str | None:
    """Why question ``q`` cannot be estimated with sampling weights yet (None: it can)."""
    if not q.qtype.categorical:
        if q.qtype.linear_scores(q, np.empty(0, dtype=np.int64)) is not None or q.qtype.tick_columns(q) is not None \
                or q.qtype.arm_scores(q) is not None or _tick_design(q) is not None:
            return None
        return (f"a {q.qtype.label} question: weighted estimates cover single-choice, numeric, check-all and list "
                "questions so far (the design-based variance of its estimator is not implemented yet)")
    mech = q.qtype.mechanism(q)
    if getattr(mech, "design", None) is not None:  # a randomized-response design: M⁺ of the weighted shares
        return None
    if mech != resolve(q.qtype.n_cells(q), q.epsilon):
        return ("its randomization is neither k-ary randomized response nor a randomized-response design: weighted "
                "estimates cover single-choice questions with an ε, a design, or asked directly")
    return None


def _designed(q: Question) -> bool:
    """Whether ``q`` is randomized by a randomized-response design (not k-ary RR): a single choice's,
    or a check-all question's binary design on each tick."""
    return (q.qtype.categorical and getattr(q.qtype.mechanism(q), "design", None) is not None) \
        or _tick_design(q) is not None


def _tick_design(q: Question):
    """The binary design each tick of a check-all question ``q`` is randomized by, or None (another
    mechanism: k-ary randomized response on each tick, or another type)."""
    mech = q.mechanism
    return mech.design if getattr(mech, "per_tick", False) else None


def check_weighted(survey: Survey) -> None:
    """Refuse, naming the first question, a survey that has a question weighting cannot estimate."""
    for q in survey.questions:
        reason = unweighted_reason(q)
        if reason is not None:
            raise SamplingDesignError(f"--weights: question {q.id!r} is {reason}; without --weights every question is "
                                      "estimated as a simple random sample", "weights")


def design_of(dataset: Dataset, columns: DesignColumns) -> SurveyDesign:
    """The :class:`~deniable.estimators.weights.SurveyDesign` of the dataset's design columns; a
    SamplingDesignError names the column (``field``: its role)."""
    values = dataset.design or {}
    try:
        return survey_design(values["weights"], strata=values.get("strata"), clusters=values.get("cluster"),
                             population_clusters=values.get("fpc"))
    except SamplingDesignError as exc:
        role = ROLES.get(exc.field, exc.field)
        problem = str(exc).split(": ", 1)[-1]
        name = getattr(columns, role, None) if role in ROLES.values() else None
        where = f"column {name!r} ({role})" if name else role
        raise SamplingDesignError(f"{where}: {problem}", role) from None


@dataclass(frozen=True)
class WeightedMean:
    """The weighted mean of a question's unbiased scores (its units), with the design's t interval."""

    n: int
    effective_n: float
    degrees_of_freedom: int
    confidence: float
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    method: str = "t interval with the design's degrees of freedom (linearization)"


def weighted_mean(scores: np.ndarray, design: SurveyDesign, confidence: float, subset=None) -> WeightedMean:
    """``Σ w s / Σ w``, its linearized standard error, and ``estimate ± t_df · se`` (module notes);
    ``subset``: a subpopulation (a domain: the others keep their place with weight 0), whose own
    degrees of freedom the interval takes (R: ``confint(svymean(…), df = degf(subset(…)))``)."""
    df = design.degrees_of_freedom
    if subset is not None:
        df = domain_degrees_of_freedom(design, subset)
        design = dataclasses.replace(design, weights=design.weights * subset)
    w = design.weights
    estimate = float(w @ scores / w.sum())
    se = math.sqrt(linearized_variance(scores, design))
    half = float(student_t.ppf(0.5 + confidence / 2, df)) * se if df > 0 else math.nan
    return WeightedMean(n=int(np.count_nonzero(w)), effective_n=design.effective_n, degrees_of_freedom=df,
                        confidence=confidence, estimate=estimate, std_error=se, ci_low=estimate - half,
                        ci_high=estimate + half)


@dataclass(frozen=True)
class Weighted:
    """Each question's weighted estimates (``result`` None: nobody answered it) and the design."""

    survey: Survey
    columns: DesignColumns
    design: SurveyDesign
    questions: list  # of (Question, n answered, WeightedResult | None)


SIMULTANEOUS = " (simultaneous: Bonferroni over the {k} options, each at {level:.4%})"


def _question_estimate(q: Question, reports: np.ndarray, design: SurveyDesign, confidence: float, subset=None,
                       simultaneous: bool = False):
    """``(n answered, result)`` of one question (result None: nobody answered), over a subpopulation
    ``subset`` when given (a domain, :func:`weighted_subgroups`).

    ``simultaneous``: the intervals of a single-choice or check-all question's k options hold all
    at once — Bonferroni: each option's interval (Korn and Graubard's, at the design's degrees of
    freedom) at the level 1 − α/k, so that all k hold together with probability at least 1 − α;
    one number (a mean, a list experiment's prevalence) keeps its interval."""
    if simultaneous:
        k = q.qtype.n_cells(q) if q.qtype.categorical else \
            (q.qtype.tick_columns(q)[0].shape[1] if q.qtype.tick_columns(q) is not None else
             q.k if _tick_design(q) is not None else 1)
        if k > 1:
            level = 1 - (1 - check_confidence(confidence)) / k
            n, result = _question_estimate(q, reports, design, level, subset)
            if result is not None:
                result = dataclasses.replace(result, confidence=confidence, simultaneous=True,
                                             method=result.method + SIMULTANEOUS.format(k=k, level=level))
            return n, result
    answered = reports != NOT_ANSWERED
    if subset is not None:
        answered = answered & subset
    n = int(answered.sum())
    if n == 0:
        return 0, None
    domain = design if answered.all() else dataclasses.replace(design, weights=design.weights * answered)
    design_of_q = getattr(q.qtype.mechanism(q), "design", None) if q.qtype.categorical else None
    if design_of_q is not None:
        return n, weighted_design_estimate(np.where(answered, reports, 0), design_of_q, domain,
                                           confidence=confidence, subset=subset)
    if q.qtype.categorical:
        return n, weighted_estimate(np.where(answered, reports, 0), q.epsilon, domain, k=q.qtype.n_cells(q),
                                    confidence=confidence, subset=subset)
    filled = np.where(answered, reports, 0)
    ticks = q.qtype.tick_columns(q)
    if ticks is not None:
        return n, _ticks_estimate(q, ticks, filled, domain, confidence, subset)
    if _tick_design(q) is not None:
        return n, _tick_design_estimate(q, filled, domain, confidence, subset)
    arms = q.qtype.arm_scores(q)
    if arms is not None:
        arm, score = arms
        return n, weighted_difference(score[filled], np.where(answered, arm[filled], -1), domain,
                                      confidence=confidence, subset=subset)
    scores = q.qtype.linear_scores(q, filled)
    return n, weighted_mean(np.where(answered, scores, 0.0), domain, check_confidence(confidence), subset=subset)


def _ticks_estimate(q: Question, ticks, codes: np.ndarray, design: SurveyDesign, confidence: float,
                    subset) -> WeightedResult:
    """A check-all question: each option's tick is a two-option randomized response of its own, so
    each option's share is :func:`weighted_estimate`'s share of "ticked" among its ticks (the
    report share of ticks debiased by the tick's p and q, Korn–Graubard mapped through them)."""
    bits, tick_epsilon = ticks
    per_option = [weighted_estimate(bits[codes, j], tick_epsilon, design, k=2, confidence=confidence, subset=subset)
                  for j in range(bits.shape[1])]
    return _ticked(q, per_option)


def _ticked(q: Question, per_option: list, ticked: int = 1) -> WeightedResult:
    """One result of a check-all question from each option's two-option result (``ticked``: the
    index of "ticked" in it)."""
    first = per_option[0]

    def column(name):
        return np.array([getattr(r, name)[ticked] for r in per_option])

    floored = column("kish_floor").astype(bool)
    return dataclasses.replace(
        first, k=len(per_option), epsilon=q.mechanism.epsilon if q.protected else first.epsilon,
        report_share=column("report_share"), report_std_error=column("report_std_error"),
        estimate=column("estimate"), std_error=column("std_error"), ci_low=column("ci_low"),
        ci_high=column("ci_high"), kish_floor=floored, note=kish_note(floored, first.effective_n))


def _tick_design_estimate(q: Question, codes: np.ndarray, design: SurveyDesign, confidence: float,
                          subset) -> WeightedResult:
    """A check-all question whose ticks are each randomized by one binary design (answer 0
    "ticked", its report 0 sent as a tick: bit j of the code): option j's share is answer 0's share
    of :func:`weighted_design_estimate` on tick j's reports — the design's ``M⁻¹`` applied to the
    weighted shares of the tick's two reports, the covariance ``M⁻¹ Σ̂ M⁻ᵀ``, and Korn and Graubard's
    interval for the report share mapped through the design's affine map."""
    tick = _tick_design(q)
    per_option = [weighted_design_estimate(np.where((codes >> j) & 1 == 1, 0, 1), tick, design,
                                           confidence=confidence, subset=subset) for j in range(q.k)]
    return _ticked(q, per_option, ticked=0)


def weighted_estimates(dataset: Dataset, columns: DesignColumns, *, confidence: float = 0.95,
                       simultaneous: bool = False) -> Weighted:
    """Every question's design-based estimates (module notes); SamplingDesignError for a question it cannot
    estimate.  ``simultaneous``: each question's options' intervals hold together (Bonferroni,
    :func:`_question_estimate`)."""
    survey = dataset.survey
    check_weighted(survey)
    design = design_of(dataset, columns)
    out = []
    for q in survey.questions:
        n, result = _question_estimate(q, np.asarray(dataset.columns[q.id], dtype=np.int64), design, confidence,
                                       simultaneous=simultaneous)
        out.append((q, n, result))
    return Weighted(survey=survey, columns=columns, design=design, questions=out)


# ---------------------------------------------------------------- subgroups and cross-tabs


@dataclass(frozen=True)
class WeightedSubgroups:
    """``deniable estimate --weights … --by QUESTION``: each other question's estimates within each
    group — the options of ``by``, then the respondents who did not answer it."""

    weighted: Weighted  # the survey, the columns and the design (its ``questions`` unused: [])
    by: Question
    questions: list  # of (Question, [(label, not_answered, n answered, result | None)])


def weighted_subgroups(dataset: Dataset, columns: DesignColumns, by: Question, *,
                       confidence: float = 0.95, simultaneous: bool = False) -> WeightedSubgroups:
    """Domain estimates of every question but ``by`` (a question asked directly, checked by
    :func:`.analysis.check_by`) within each of its groups.

    A group is a subpopulation whose size the sample did not fix, so its estimate is a domain
    estimate: a ratio of weighted totals, the respondents outside the group keeping their place
    in the design with weight 0, so that the variance by linearization counts every cluster of
    every stratum (Lumley 2004, §3.4; R: ``svyby(~z, ~group, design, svymean)``).  Korn and
    Graubard's intervals take the group's respondents and degrees of freedom
    (R: ``svyby(…, svyciprop, method = "beta")``), numeric means the t interval on the group's
    degrees of freedom.  Grouping by an answer given directly keeps each report's channel, so the
    mechanism is undone within a group as in the whole sample (:mod:`.analysis`)."""
    survey = dataset.survey
    check_weighted(survey)
    design = design_of(dataset, columns)
    groups = np.asarray(dataset.columns[by.id], dtype=np.int64)
    out = []
    for q in survey.questions:
        if q.id == by.id:
            continue
        reports = np.asarray(dataset.columns[q.id], dtype=np.int64)
        rows = []
        for g, label in [*enumerate(by.options), (NOT_ANSWERED, "not answered")]:
            n, result = _question_estimate(q, reports, design, confidence, subset=groups == g,
                                           simultaneous=simultaneous)
            rows.append((label, g == NOT_ANSWERED, n, result))
        out.append((q, rows))
    return WeightedSubgroups(weighted=Weighted(survey=survey, columns=columns, design=design, questions=[]), by=by,
                             questions=out)


def weighted_subgroups_document(sg: WeightedSubgroups) -> dict:
    """``--weights … --by Q --format json``: the unweighted ``--by`` document's shape, each group's
    record the weighted question record (:func:`question_json`) and the design beside."""
    def group(q, label, not_answered, n, result):
        head = {"group": label, "not_answered": not_answered}
        if result is None:
            return {**head, "n": 0, "empty": True, "weighted": True}
        return {**head, **question_json(q, n, result)}

    return {"survey": sg.weighted.survey.slug, "by": sg.by.id, "n_responses": sg.weighted.design.n,
            "weighted": True, "design": design_json(sg.weighted),
            "questions": [{"id": q.id, "by": sg.by.id, "groups": [group(q, *row) for row in rows]}
                          for q, rows in sg.questions]}


def weighted_subgroups_table(sg: WeightedSubgroups, grid) -> str:
    """Per question, one block per group (as :func:`weighted_table`), the group named first."""
    blocks = []
    for q, rows in sg.questions:
        for label, not_answered, n, result in rows:
            name = f"{sg.by.id} {label}" if not_answered else f"{sg.by.id}={label}"
            one = Weighted(survey=sg.weighted.survey, columns=sg.weighted.columns, design=sg.weighted.design,
                           questions=[(q, n, result)])
            text = weighted_table(one, grid).rstrip("\n")
            first, _, rest = text.partition("\n")
            blocks.append(f"{first} · {name}\n{rest}")
    return "\n\n".join(blocks) + "\n"


def weighted_subgroups_csv(sg: WeightedSubgroups) -> str:
    """:data:`CSV_COLUMNS` with two columns in front, ``by`` and ``group``; an empty group is one row with n = 0."""
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")
    writer.writerow(["by", "group", *CSV_COLUMNS])
    for q, rows in sg.questions:
        for label, _, n, result in rows:
            one = Weighted(survey=sg.weighted.survey, columns=sg.weighted.columns, design=sg.weighted.design,
                           questions=[(q, n, result)])
            for line in weighted_csv(one).splitlines()[1:] if result is not None else [None]:
                if line is None:
                    writer.writerow([sg.by.id, label, *(q.id if c == "question" else 0 if c == "n" else ""
                                                        for c in CSV_COLUMNS)])
                else:
                    out.write(f"{_csv_cell(sg.by.id)},{_csv_cell(label)},{line}\n")
    return out.getvalue()


def _csv_cell(text: str) -> str:
    cell = io.StringIO()
    SafeWriter(cell, lineterminator="").writerow([text])
    return cell.getvalue()


@dataclass(frozen=True)
class WeightedCrosstab:
    """``deniable estimate --weights … --crosstab Q1 Q2``: the joint and conditional estimates."""

    weighted: Weighted  # the survey, the columns and the design
    row: Question
    col: Question
    result: WeightedCrosstabResult


def weighted_crosstab_of(dataset: Dataset, columns: DesignColumns, row: Question, col: Question, *,
                         confidence: float = 0.95, simultaneous: bool = False) -> WeightedCrosstab:
    """The cross-tab of two single-choice questions (checked by :func:`.analysis.check_crosstab`)
    under the dataset's design (:func:`deniable.estimators.weights.weighted_crosstab`: the joint
    cells debiased with the Kronecker inverse of the two mechanisms' matrices — k-ary randomized
    response's, or a randomized-response design's — on the weighted report shares).

    ``simultaneous``: Bonferroni over the k₁·k₂ cells — every interval (joint and conditional) at
    the level ``1 − α/(k₁k₂)``, so that the joint intervals hold all at once with probability at
    least 1 − α, and so do the conditional ones."""
    survey = dataset.survey
    check_weighted(survey)
    for q in (row, col):
        if not q.qtype.categorical:
            raise SamplingDesignError(f"--crosstab: question {q.id!r} is not a single-choice question", "crosstab")
    confidence = check_confidence(confidence)
    channels = {}
    for q, side in ((row, "row"), (col, "col")):
        realized = getattr(q.qtype.mechanism(q), "design", None)
        channels[side] = (q.epsilon, None) if realized is None else (None, realized.matrix)
    cells = row.qtype.n_cells(row) * col.qtype.n_cells(col)
    level = 1 - (1 - confidence) / cells if simultaneous else confidence
    design = design_of(dataset, columns)
    rows = np.asarray(dataset.columns[row.id], dtype=np.int64)
    cols = np.asarray(dataset.columns[col.id], dtype=np.int64)
    if not np.any((rows != NOT_ANSWERED) & (cols != NOT_ANSWERED)):
        raise SamplingDesignError(f"--crosstab: no response answered both {row.id!r} and {col.id!r}", "crosstab")
    result = weighted_crosstab(rows, cols, channels["row"][0], channels["col"][0], design,
                               k_row=row.qtype.n_cells(row), k_col=col.qtype.n_cells(col), confidence=level,
                               row_matrix=channels["row"][1], col_matrix=channels["col"][1])
    if simultaneous:
        result = dataclasses.replace(result, confidence=confidence, simultaneous=True,
                                     method=result.method + f" (simultaneous: Bonferroni over the {cells} cells, "
                                                            f"each at {level:.4%})")
    return WeightedCrosstab(weighted=Weighted(survey=survey, columns=columns, design=design, questions=[]),
                            row=row, col=col, result=result)


def weighted_crosstab_json(ct: WeightedCrosstab) -> dict:
    """The cross-tab document: per cell (row option × column option) the weighted report share, the
    joint estimate with its standard error and interval, and the column's share given the row."""
    r = ct.result
    return {"row": {"id": ct.row.id, "text": ct.row.text, "epsilon": ct.row.epsilon},
            "col": {"id": ct.col.id, "text": ct.col.text, "epsilon": ct.col.epsilon},
            "n": r.n, "weighted": True, "design": design_json(ct.weighted),
            "effective_n": json_number(r.effective_n), "degrees_of_freedom": r.degrees_of_freedom,
            "confidence": json_number(r.confidence), "simultaneous": r.simultaneous, "method": r.method,
            "note": r.note, "cells": crosstab_cells(ct.row, ct.col, r)}


def crosstab_cells(row: Question, col: Question, r: WeightedCrosstabResult) -> list[dict]:
    """Per cell (row option × column option) the weighted report share, the joint estimate with its
    standard error and interval, and the column's share given the row with its own."""
    cells = []
    for i, row_label in enumerate(row.options):
        for j, col_label in enumerate(col.options):
            cells.append({"row_label": row_label, "col_label": col_label,
                          "report_share": json_number(r.report_share[i, j]),
                          "estimate": json_number(r.joint_estimate[i, j]),
                          "std_error": json_number(r.joint_std_error[i, j]),
                          "ci_low": json_number(r.joint_ci_low[i, j]), "ci_high": json_number(r.joint_ci_high[i, j]),
                          "conditional_estimate": json_number(r.conditional_estimate[i, j]),
                          "conditional_std_error": json_number(r.conditional_std_error[i, j]),
                          "conditional_ci_low": json_number(r.conditional_ci_low[i, j]),
                          "conditional_ci_high": json_number(r.conditional_ci_high[i, j])})
    return cells


def weighted_crosstab_table(ct: WeightedCrosstab, grid) -> str:
    return _crosstab_table(ct, weighted_crosstab_json(ct), grid, "weighted")


def _crosstab_table(ct, data: dict, grid, how: str) -> str:
    """A weighted or raked (``how``) cross-tab for a terminal: per cell the report share, the joint
    estimate and the column's share given the row, with their intervals."""
    lines = [f"{ct.row.id} × {ct.col.id}: {ct.row.text} / {ct.col.text}",
             f"  n = {data['n']:,} answered both · {how} · {100 * ct.result.confidence:g}% intervals, method: "
             f"{data['method']}"]
    rows = [[f"{c['row_label']} · {c['col_label']}", pct(c["report_share"]), pct(c["estimate"]),
             pct(c["std_error"]), f"[{pct(c['ci_low'])}, {pct(c['ci_high'])}]", pct(c["conditional_estimate"]),
             "" if c["conditional_ci_low"] is None else
             f"[{pct(c['conditional_ci_low'])}, {pct(c['conditional_ci_high'])}]"]
            for c in data["cells"]]
    headers = [f"{ct.row.id} \\ {ct.col.id}", f"reported ({how})", "joint", "std.err", "interval",
               f"{ct.col.id} | {ct.row.id}", "interval"]
    note = [f"  note: {data['note']}"] if data.get("note") else []
    return "\n".join(lines + grid(headers, rows) + note) + "\n"


def weighted_crosstab_csv(ct: WeightedCrosstab) -> str:
    data = weighted_crosstab_json(ct)
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")
    keys = list(data["cells"][0])
    writer.writerow(["row", "col", "n", "effective_n", "degrees_of_freedom", "confidence", *keys,
                     "weights", "strata", "cluster", "fpc"])
    c = ct.weighted.columns
    for cell in data["cells"]:
        writer.writerow([ct.row.id, ct.col.id, data["n"], data["effective_n"], data["degrees_of_freedom"],
                         data["confidence"], *("" if cell[k] is None else cell[k] for k in keys),
                         *("" if v is None else v for v in (c.weights, c.strata, c.cluster, c.fpc))])
    return out.getvalue()


def design_json(w: Weighted) -> dict:
    """What the design is: its columns, respondents, strata, clusters, degrees of freedom and Kish's n."""
    d = w.design
    return {"weights": w.columns.weights, "strata": w.columns.strata, "cluster": w.columns.cluster,
            "fpc": w.columns.fpc, "n": d.n, "n_strata": int(np.unique(d.strata).size),
            "n_clusters": int(np.unique(d.clusters).size), "degrees_of_freedom": d.degrees_of_freedom,
            "effective_n": json_number(d.effective_n)}


def question_json(q: Question, n: int, r: WeightedResult | None) -> dict:
    """One question's weighted record: the estimates format's fields, ``weighted: true``, Kish's n and
    per option the weighted report share beside the debiased estimate."""
    head = {"id": q.id, "text": q.text, "n": n, "weighted": True}
    if r is None:
        return {**head, "empty": True, "options": []}
    if isinstance(r, WeightedMean):
        return {**head, "type": q.type, "effective_n": json_number(r.effective_n),
                "degrees_of_freedom": r.degrees_of_freedom, "epsilon": json_number(q.epsilon) if q.protected else None,
                "declared_epsilon": q.epsilon if q.protected else None, "method": r.method,
                "confidence": json_number(r.confidence),
                "mean": {"estimate": json_number(r.estimate), "std_error": json_number(r.std_error),
                         "ci_low": json_number(r.ci_low), "ci_high": json_number(r.ci_high)}}
    if isinstance(r, WeightedDifference):  # a list experiment: the prevalence, a share kept in [0, 1]
        return {**head, "type": q.type, "sensitive": q.sensitive, "effective_n": json_number(r.effective_n),
                "degrees_of_freedom": r.degrees_of_freedom,
                "epsilon": json_number(q.mechanism.epsilon) if q.protected else None,
                "declared_epsilon": q.epsilon if q.protected else None, "method": r.method,
                "confidence": json_number(r.confidence), "n_control": r.n_groups[0], "n_treatment": r.n_groups[1],
                "prevalence": {"estimate": json_number(r.estimate), "std_error": json_number(r.std_error),
                               "ci_low": json_number(max(0.0, r.ci_low)), "ci_high": json_number(min(1.0, r.ci_high))},
                "control": {"estimate": json_number(r.means[0]), "std_error": json_number(r.mean_std_errors[0])},
                "treatment": {"estimate": json_number(r.means[1]), "std_error": json_number(r.mean_std_errors[1])}}
    floored = np.zeros(len(q.options), dtype=bool) if r.kish_floor is None else np.asarray(r.kish_floor, dtype=bool)
    options = [{"label": label, "report_share": json_number(r.report_share[i]),
                "estimate": json_number(r.estimate[i]), "std_error": json_number(r.std_error[i]),
                "ci_low": json_number(r.ci_low[i]), "ci_high": json_number(r.ci_high[i]),
                "kish_floor": bool(floored[i])}
               for i, label in enumerate(q.options)]
    designed = getattr(q.qtype.mechanism(q), "design", None)
    if designed is not None:  # a randomized-response design: named, its realized ε only (none declared)
        head = {**head, "design": designed.name}
    return {**head, "effective_n": json_number(r.effective_n), "degrees_of_freedom": r.degrees_of_freedom,
            "epsilon": json_number(r.epsilon) if q.protected else None,
            "declared_epsilon": q.epsilon if q.protected and designed is None else None,
            "p": json_number(r.p), "q": json_number(r.q),
            "method": r.method, "confidence": json_number(r.confidence), "simultaneous": r.simultaneous,
            "note": kish_note(floored, r.effective_n, q.options), "options": options}


def weighted_document(w: Weighted) -> dict:
    """``deniable estimate --weights … --format json``."""
    return {"survey": w.survey.slug, "n_responses": w.design.n, "weighted": True, "design": design_json(w),
            "questions": [question_json(q, n, r) for q, n, r in w.questions]}


def design_text(w: Weighted) -> str:
    """One line naming the design: the columns, strata, clusters, degrees of freedom and Kish's n."""
    d = design_json(w)
    parts = [f"weighted by column {d['weights']!r}"]
    if d["strata"]:
        parts.append(f"{d['n_strata']:,} strata (column {d['strata']!r})")
    if d["cluster"]:
        parts.append(f"{d['n_clusters']:,} clusters (column {d['cluster']!r})")
    if d["fpc"]:
        parts.append(f"finite-population correction (column {d['fpc']!r})")
    parts.append(f"{d['degrees_of_freedom']:,} degrees of freedom")
    parts.append(f"Kish effective sample size {d['effective_n']:,.1f} of {d['n']:,}")
    return "design: " + " · ".join(parts)


def weighted_table(w: Weighted, grid) -> str:
    """The estimates for a terminal, each block saying the estimates are weighted."""
    blocks = []
    for q, n, r in w.questions:
        lines = [f"{q.id}: {q.text}"]
        if r is None:
            blocks.append("\n".join(lines + ["  n = 0: nobody answered"]))
            continue
        if isinstance(r, WeightedDifference):
            d = question_json(q, n, r)
            privacy = f"ε = {q.epsilon:g}" if q.protected else "not protected by ε (plain list experiment)"
            p = d["prevalence"]
            lines += [f"  n = {n:,} ({r.n_groups[0]:,} control, {r.n_groups[1]:,} treatment) · weighted · {privacy}",
                      f"  {q.sensitive!r}: {pct(p['estimate'])} ± std.err {pct(p['std_error'])}, "
                      f"{100 * r.confidence:g}% interval [{pct(p['ci_low'])}, {pct(p['ci_high'])}] ({r.method})",
                      f"  weighted mean count: control {fmt(r.means[0])}, treatment {fmt(r.means[1])}"]
            blocks.append("\n".join(lines))
            continue
        if isinstance(r, WeightedMean):
            privacy = f"ε = {q.epsilon:g}" if q.protected else "asked directly (not randomized)"
            lines += [f"  n = {n:,} · weighted · {privacy}",
                      f"  mean {fmt(r.estimate)} ± std.err {fmt(r.std_error)}, {100 * r.confidence:g}% interval "
                      f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}] ({r.method})"]
            blocks.append("\n".join(lines))
            continue
        privacy = (f"ε = {r.epsilon:.4f} (declared {q.epsilon:g}) · p = {r.p:.4f}, q = {r.q:.4f}" if q.protected
                   else "asked directly (not randomized)")
        designed = getattr(q.qtype.mechanism(q), "design", None)
        if designed is not None:  # a randomized-response design: its name and realized ε (none: not ε-LDP)
            privacy = f"{designed.name} design · " + (f"ε = {r.epsilon:.4f}" if designed.ldp else "not ε-LDP")
        rows = [[label, pct(r.report_share[i]), pct(r.estimate[i]), pct(r.std_error[i]),
                 f"[{pct(r.ci_low[i])}, {pct(r.ci_high[i])}]"] for i, label in enumerate(q.options)]
        lines += [f"  n = {n:,} · weighted · {privacy}",
                  f"  {100 * r.confidence:g}% intervals, method: {r.method}",
                  *grid(["option", "reported (weighted)", "estimate", "std.err", "interval"], rows)]
        note = question_json(q, n, r)["note"]
        if note:
            lines.append(f"  note: {note}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def weighted_csv(w: Weighted) -> str:
    """One row per question × option (columns :data:`CSV_COLUMNS`), the design's columns on each row."""
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for q, n, r in w.questions:
        record = question_json(q, n, r)
        if "prevalence" in record:
            for option, label, numbers in (("prevalence", q.sensitive, record["prevalence"]),
                                           ("control", "control mean count", record["control"]),
                                           ("treatment", "treatment mean count", record["treatment"])):
                writer.writerow(["" if v is None else v for v in (
                    {**record, **numbers, "question": q.id, "option": option, "label": label,
                     "weights": w.columns.weights, "strata": w.columns.strata, "cluster": w.columns.cluster,
                     "fpc": w.columns.fpc}.get(c) for c in CSV_COLUMNS)])
            continue
        if "mean" in record:
            writer.writerow(["" if v is None else v for v in (
                {**record, **record["mean"], "question": q.id, "option": "mean", "label": "mean",
                 "weights": w.columns.weights, "strata": w.columns.strata, "cluster": w.columns.cluster,
                 "fpc": w.columns.fpc}.get(c) for c in CSV_COLUMNS)])
            continue
        for i, option in enumerate(record["options"]):
            row = {**record, **option, "question": q.id, "option": i, "weights": w.columns.weights,
                   "strata": w.columns.strata, "cluster": w.columns.cluster, "fpc": w.columns.fpc}
            writer.writerow(["" if row.get(c) is None else row[c] for c in CSV_COLUMNS])
    return out.getvalue()


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
    :func:`.regression.fit_formula`, and a :class:`Raked` without estimates whose raking
    :func:`raking_json` and :func:`raking_text` describe.

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
    counts, n, variables, _start, raking, untrimmed = _rake_dataset(dataset, margins, trim, survey, base)
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



# ---------------------------------------------------------------- raking

MARGIN_TOLERANCE = 1e-9  # how far from 1 a margin's shares may add up


def _margin_error(message: str, *path: str) -> SamplingDesignError:
    field = ".".join(("margins", *path))
    return SamplingDesignError(f"{field}: {message}", field)


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
    from .strict_json import loads

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise SamplingDesignError(
            f"--rake: cannot read {path}: {getattr(exc, 'strerror', None) or exc}", "margins") from None
    try:
        document = loads(text)
    except ValueError as exc:  # JSONDecodeError and DuplicateKeyError
        raise SamplingDesignError(f"--rake: {path} is not valid JSON ({exc})", "margins") from None
    return parse_margins(document, survey)


@dataclass(frozen=True)
class Raked:
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


def _mean_result(mean: float, variance: float, n: int, effective_n: float, confidence: float,
                 df: int | None = None) -> WeightedMean:
    se = math.sqrt(max(variance, 0.0))
    df = n - 1 if df is None else df
    half = float(student_t.ppf(0.5 + confidence / 2, df)) * se if df > 0 else math.nan
    return WeightedMean(n=n, effective_n=effective_n, degrees_of_freedom=df, confidence=confidence,
                        estimate=mean, std_error=se, ci_low=mean - half, ci_high=mean + half,
                        method="t interval on n − 1 degrees of freedom (raking: calibration variance)")


def _rake_dataset(dataset: Dataset, margins: dict, trim, survey: Survey, base: SurveyDesign | None = None):
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
    counts, n, variables, start, result, untrimmed = _rake_dataset(dataset, margins, trim, survey, base)
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
            q.k if _tick_design(q) is not None else 1
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
        return answered_n, _ticked(q, [raked_estimate(bits[filled, j], tick_epsilon, w, raking, k=2, design=base,
                                                      **common) for j in options])
    tick = _tick_design(q)
    if tick is not None:  # each tick randomized by one binary design: answer 0 "ticked", its report 0 sent as a tick
        return answered_n, _ticked(q, [raked_design_estimate(np.where((filled >> j) & 1 == 1, 0, 1), tick, w,
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
        counts, n, variables, start, result, _ = _rake_dataset(source, margins, trim, survey)
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


@dataclass(frozen=True)
class RakedSubgroups:
    """A question's raked estimates within each group of a question asked directly (:func:`raked_subgroups`)."""

    margins: dict
    raking: RakeResult
    n: int
    question: Question
    by: Question
    groups: list  # of (label, not answered, n answered, WeightedResult | WeightedMean | None)


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
        counts, n, variables, _, result, _ = _rake_dataset(dataset, margins, trim, survey, base)
        groups = [record[:4] for record in _outside_records(question, outside[question.id], margins, trim, survey,
                                                             confidence, simultaneous, by)]
        return RakedSubgroups(margins=margins, raking=result, n=n, question=question, by=by, groups=groups)
    _raked_question_check(question, dataset, "question")
    counts, n, variables, _, result, _ = _rake_dataset(dataset, margins, trim, survey, base)
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
class RakedBy:
    """``deniable estimate --rake MARGINS.json --by QUESTION``: every other question's raked estimates
    within each group of ``by`` (:func:`raked_by`); ``raking``, ``untrimmed``, ``skipped`` and
    ``base`` as a :class:`Raked`'s, so :func:`raking_json` and :func:`raking_text` say what raking did."""

    survey: Survey
    margins: dict
    raking: RakeResult
    untrimmed: RakeResult | None
    n: int
    by: Question
    questions: list  # of (Question, [(label, not answered, n answered, result | None)])
    skipped: list  # of (Question, why it has no raked estimate)
    base: str | None = None


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
    counts, n, variables, _, result, untrimmed = _rake_dataset(dataset, margins, trim, survey, base)
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
class RakedCrosstab:
    """The cross-tab of two single-choice questions under raked weights (:func:`raked_crosstab_of`)."""

    margins: dict
    raking: RakeResult
    n: int
    row: Question
    col: Question
    result: WeightedCrosstabResult
    survey: Survey | None = None  # with untrimmed, skipped and base: what raking_json and raking_text read
    untrimmed: RakeResult | None = None
    skipped: tuple = ()
    base: str | None = None


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
    counts, n, variables, _, result, untrimmed = _rake_dataset(dataset, margins, trim, survey, base)
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


def _shares(q: Question, values) -> dict:
    return {label: json_number(values[i]) for i, label in enumerate(q.options)}


def raking_json(r: Raked) -> dict:
    """What raking did: the margins asked and achieved, the rounds, the weights' range (× the mean
    weight) and Kish's effective sample size; with trimming, the same of the untrimmed weights."""
    res = r.raking

    def weights(x: RakeResult) -> dict:
        return {"smallest": json_number(x.smallest), "largest": json_number(x.largest),
                "effective_n": json_number(x.effective_n)}

    trim = None
    if res.bounds is not None:
        trim = {"low": res.bounds[0], "high": res.bounds[1], "trimmed": res.trimmed,
                "untrimmed": weights(r.untrimmed)}
    return {"margins": {qid: _shares(r.survey.question(qid), target) for qid, target in r.margins.items()},
            "achieved": {qid: _shares(r.survey.question(qid), res.achieved[qid]) for qid in r.margins},
            "iterations": res.iterations, "n": r.n, "weights": weights(res), "trim": trim,
            "base_weights": r.base}


def raked_question_json(r: Raked, q: Question, n: int, result) -> dict:
    """One question's record (as :func:`question_json`), with the equal-weights estimates beside
    (``unweighted``; raking from sampling weights: the base weights' own, ``unraked``)."""
    record = question_json(q, n, result)
    record["raked"] = True
    base = r.unweighted.get(q.id)
    if base is None:
        return record
    key = "unweighted" if r.base is None else "unraked"
    if isinstance(base, WeightedDifference):  # a list experiment: the prevalence, kept in [0, 1]
        record[key] = {"estimate": json_number(base.estimate), "std_error": json_number(base.std_error),
                       "ci_low": json_number(max(0.0, base.ci_low)), "ci_high": json_number(min(1.0, base.ci_high))}
        return record
    if isinstance(base, WeightedMean):
        record[key] = {"estimate": json_number(base.estimate), "std_error": json_number(base.std_error),
                       "ci_low": json_number(base.ci_low), "ci_high": json_number(base.ci_high)}
        return record
    for i, option in enumerate(record["options"]):
        option[key] = {"estimate": json_number(base.estimate[i]), "std_error": json_number(base.std_error[i]),
                       "ci_low": json_number(base.ci_low[i]), "ci_high": json_number(base.ci_high[i])}
    return record


def raked_document(r: Raked) -> dict:
    """``deniable estimate --rake MARGINS.json --format json`` (and what the Weighting page shows)."""
    return {"survey": r.survey.slug, "n_responses": r.n, "weighted": True, "raking": raking_json(r),
            "questions": [raked_question_json(r, q, n, result) for q, n, result in r.questions],
            "skipped": [{"id": q.id, "reason": why} for q, why in r.skipped]}


def raking_text(r: Raked, grid) -> str:
    """For a terminal: what raking did, and the achieved margins beside the population's."""
    d = raking_json(r)
    w = d["weights"]
    start = "" if r.base is None else f"from the sampling weights of column {r.base!r} "
    lines = [f"raked {start}to the margins of {', '.join(repr(qid) for qid in r.margins)} in {d['iterations']:,} round{'' if d['iterations'] == 1 else 's'} · "
             f"weights {w['smallest']:.4g}..{w['largest']:.4g} × the mean · Kish effective sample size "
             f"{w['effective_n']:,.1f} of {r.n:,}"]
    if d["trim"]:
        t, u = d["trim"], d["trim"]["untrimmed"]
        lines.append(f"trimmed to {t['low']:g}..{t['high']:g} × the mean ({t['trimmed']:,} respondents at a bound); "
                     f"untrimmed: weights {u['smallest']:.4g}..{u['largest']:.4g}, Kish effective sample size "
                     f"{u['effective_n']:,.1f}")
    rows = [[qid, label, pct(share), pct(d["achieved"][qid][label])]
            for qid, shares in d["margins"].items() for label, share in shares.items()]
    lines += ["", *grid(["question", "option", "population", "achieved"], rows)]
    if r.skipped:
        lines += ["", *(f"not weighted: {q.id}: {why}" for q, why in r.skipped)]
    return "\n".join(lines) + "\n"


RAKED_CSV_COLUMNS = ("question", "option", "label", "n", "effective_n", "degrees_of_freedom", "epsilon",
                     "declared_epsilon", "p", "q", "method", "confidence", "report_share", "estimate", "std_error",
                     "ci_low", "ci_high", "unweighted_estimate", "unweighted_std_error", "raked_to")


def raked_csv(r: Raked) -> str:
    """One row per question × option (a numeric question: one row, option ``mean``), the raking
    questions on each row; raking from sampling weights, the estimates beside are the base
    weights' (columns ``unraked_estimate``, ``unraked_std_error``) and ``base_weights`` names them."""
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")
    key = "unweighted" if r.base is None else "unraked"
    header = [c.replace("unweighted", key) for c in RAKED_CSV_COLUMNS] + ([] if r.base is None else ["base_weights"])
    writer.writerow(header)
    raked_to = " ".join(r.margins)
    for q, n, result in r.questions:
        record = raked_question_json(r, q, n, result)
        if "prevalence" in record:  # a list experiment: the prevalence, then each arm's mean count
            entries = [{**record["prevalence"], "option": "prevalence", "label": q.sensitive,
                        "unweighted": record.get(key)},
                       {**record["control"], "option": "control", "label": "control mean count"},
                       {**record["treatment"], "option": "treatment", "label": "treatment mean count"}]
        elif "mean" in record:
            entries = [{**record["mean"], "option": "mean", "label": "mean", "unweighted": record.get(key)}]
        else:
            entries = [{**o, "option": i, "unweighted": o.get(key)} for i, o in enumerate(record["options"])]
        for entry in entries:
            base = entry.get("unweighted") or {}
            row = {**record, **entry, "question": q.id, "unweighted_estimate": base.get("estimate"),
                   "unweighted_std_error": base.get("std_error"), "raked_to": raked_to}
            writer.writerow(["" if row.get(c) is None else row[c] for c in RAKED_CSV_COLUMNS]
                            + ([] if r.base is None else [r.base]))
    return out.getvalue()


def raked_by_document(r: RakedBy) -> dict:
    """``--rake … --by Q --format json``: the ``--weights … --by`` document's shape, what raking did
    (:func:`raking_json`) in place of the design, and the questions raking skipped."""
    def group(q, label, not_answered, n, result):
        head = {"group": label, "not_answered": not_answered}
        if result is None:
            return {**head, "n": 0, "empty": True, "weighted": True, "raked": True}
        return {**head, **question_json(q, n, result), "raked": True}

    return {"survey": r.survey.slug, "by": r.by.id, "n_responses": r.n, "weighted": True, "raking": raking_json(r),
            "questions": [{"id": q.id, "by": r.by.id, "groups": [group(q, *row) for row in rows]}
                          for q, rows in r.questions],
            "skipped": [{"id": q.id, "reason": why} for q, why in r.skipped]}


def _one_group(r: RakedBy, q: Question, n: int, result) -> Raked:
    return Raked(survey=r.survey, margins=r.margins, raking=r.raking, untrimmed=r.untrimmed, n=r.n,
                 questions=[(q, n, result)], unweighted={}, skipped=[], base=r.base)


def raked_by_table(r: RakedBy, grid) -> str:
    """Per question, one block per group (as :func:`weighted_table`), the group named first."""
    blocks = []
    for q, rows in r.questions:
        for label, not_answered, n, result in rows:
            name = f"{r.by.id} {label}" if not_answered else f"{r.by.id}={label}"
            first, _, rest = weighted_table(_one_group(r, q, n, result), grid).rstrip("\n").partition("\n")
            blocks.append(f"{first} · {name}\n{rest}")
    return "\n\n".join(blocks) + "\n"


def raked_by_csv(r: RakedBy) -> str:
    """:func:`raked_csv`'s columns (the unweighted ones empty) with ``by`` and ``group`` in front; an
    empty group is one row with n = 0."""
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")
    header = raked_csv(_one_group(r, r.by, 0, None)).splitlines()[0]
    out.write(f"by,group,{header}\n")
    for q, rows in r.questions:
        for label, _, n, result in rows:
            lines = raked_csv(_one_group(r, q, n, result)).splitlines()[1:] if result is not None else []
            if not lines:
                names = header.split(",")
                writer.writerow([r.by.id, label, *(q.id if c == "question" else 0 if c == "n" else "" for c in names)])
            for line in lines:
                out.write(f"{_csv_cell(r.by.id)},{_csv_cell(label)},{line}\n")
    return out.getvalue()


def raked_crosstab_json(ct: RakedCrosstab) -> dict:
    """``--rake … --crosstab Q1 Q2 --format json``: the weighted cross-tab document (:func:`crosstab_cells`)
    with what raking did (:func:`raking_json`) in place of the design."""
    r = ct.result
    return {"row": {"id": ct.row.id, "text": ct.row.text, "epsilon": ct.row.epsilon},
            "col": {"id": ct.col.id, "text": ct.col.text, "epsilon": ct.col.epsilon},
            "n": r.n, "weighted": True, "raked": True, "raking": raking_json(ct),
            "effective_n": json_number(r.effective_n), "degrees_of_freedom": r.degrees_of_freedom,
            "confidence": json_number(r.confidence), "simultaneous": r.simultaneous, "method": r.method,
            "note": r.note, "cells": crosstab_cells(ct.row, ct.col, r)}


def raked_crosstab_table(ct: RakedCrosstab, grid) -> str:
    """The raked cross-tab for a terminal (:func:`_crosstab_table`)."""
    return _crosstab_table(ct, raked_crosstab_json(ct), grid, "raked")


def raked_crosstab_csv(ct: RakedCrosstab) -> str:
    """One row per cell: the cross-tab's numbers and the raking questions (``raked_to``)."""
    data = raked_crosstab_json(ct)
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")
    keys = list(data["cells"][0])
    writer.writerow(["row", "col", "n", "effective_n", "degrees_of_freedom", "confidence", *keys, "raked_to"])
    for cell in data["cells"]:
        writer.writerow([ct.row.id, ct.col.id, data["n"], data["effective_n"], data["degrees_of_freedom"],
                         data["confidence"], *("" if cell[k] is None else cell[k] for k in keys), " ".join(ct.margins)])
    return out.getvalue()


__all__ = ["Raked", "RakedBy", "RakedCrosstab", "RakedSubgroups", "crosstab_cells", "raked_by", "raked_by_csv",
           "raked_by_document", "raked_by_table", "raked_crosstab_csv", "raked_crosstab_json", "raked_crosstab_table",
           "raked_crosstab_of", "raked_subgroups",
           "Weighted", "WeightedCrosstab", "WeightedSubgroups", "weighted_crosstab_csv",
           "weighted_crosstab_json", "weighted_crosstab_of", "weighted_crosstab_table", "weighted_subgroups",
           "weighted_subgroups_csv", "weighted_subgroups_document", "weighted_subgroups_table", "fit_weighted_formula", "fit_raked_formula", "load_margins", "parse_margins", "raked_csv",
           "raked_document", "raked_estimates", "raking_json", "raking_text", "rakeable", "check_weighted", "design_json", "design_of", "design_text", "question_json",
           "unweighted_reason", "weighted_csv", "weighted_document", "weighted_estimates", "weighted_table"]
