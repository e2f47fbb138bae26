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
inverse of the two mechanisms (k-ary randomized response's or a design's matrix).  Each is a
result that renders itself (:class:`.estimates.SurveyResult`: :class:`Weighted`,
:class:`WeightedSubgroups`, :class:`WeightedCrosstab`).  Raking is :mod:`.raking`; the regressions
under a design, and the one place every name of both is imported from, :mod:`.sampling`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from deniable.client.mechanism import resolve
from deniable.estimators.validate import check_confidence
from deniable.estimators.weights import (SamplingDesignError, SurveyDesign, WeightedCrosstabResult, WeightedDifference,
                                         WeightedResult, domain_degrees_of_freedom, kish_note, linearized_variance,
                                         survey_design, weighted_crosstab, weighted_design_estimate,
                                         weighted_difference, weighted_estimate)

from .dataset import NOT_ANSWERED, Dataset, DesignColumns
from .definition import Question, Survey
from .estimates import SurveyResult, empty_group_row
from .questions.base import fmt, json_number, pct
from .tables import csv_text, grid, plural

ROLES = {"weights": "weights", "strata": "strata", "clusters": "cluster", "population_clusters": "fpc"}
CSV_COLUMNS = ("question", "option", "label", "n", "effective_n", "degrees_of_freedom", "epsilon",
               "declared_epsilon", "p", "q", "method", "confidence", "report_share", "estimate", "std_error",
               "ci_low", "ci_high", "weights", "strata", "cluster", "fpc")


def unweighted_reason(q: Question) -> str | None:
    """Why question ``q`` cannot be estimated with sampling weights yet (None: it can)."""
    if not q.qtype.categorical:
        if q.qtype.linear_scores(q, np.empty(0, dtype=np.int64)) is not None or q.qtype.tick_columns(q) is not None \
                or q.qtype.arm_scores(q) is not None or tick_design(q) is not None:
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


def tick_design(q: Question):
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
             q.k if tick_design(q) is not None else 1)
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
    if tick_design(q) is not None:
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
    return ticks_result(q, per_option)


def ticks_result(q: Question, per_option: list, ticked: int = 1) -> WeightedResult:
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
    tick = tick_design(q)
    per_option = [weighted_design_estimate(np.where((codes >> j) & 1 == 1, 0, 1), tick, design,
                                           confidence=confidence, subset=subset) for j in range(q.k)]
    return ticks_result(q, per_option, ticked=0)


# ---------------------------------------------------------------- records and text of a question


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


def question_block(q: Question, n: int, r) -> str:
    """One question's weighted (or raked) estimates for a terminal: n, the privacy, the method, and per
    option the weighted report share beside the estimate, with its interval."""
    lines = [f"{q.id}: {q.text}"]
    if r is None:
        return "\n".join(lines + ["  n = 0: nobody answered"])
    if isinstance(r, WeightedDifference):
        d = question_json(q, n, r)
        privacy = f"ε = {q.epsilon:g}" if q.protected else "not protected by ε (plain list experiment)"
        p = d["prevalence"]
        lines += [f"  n = {n:,} ({r.n_groups[0]:,} control, {r.n_groups[1]:,} treatment) · weighted · {privacy}",
                  f"  {q.sensitive!r}: {pct(p['estimate'])} ± std.err {pct(p['std_error'])}, "
                  f"{100 * r.confidence:g}% interval [{pct(p['ci_low'])}, {pct(p['ci_high'])}] ({r.method})",
                  f"  weighted mean count: control {fmt(r.means[0])}, treatment {fmt(r.means[1])}"]
        return "\n".join(lines)
    if isinstance(r, WeightedMean):
        privacy = f"ε = {q.epsilon:g}" if q.protected else "asked directly (not randomized)"
        lines += [f"  n = {n:,} · weighted · {privacy}",
                  f"  mean {fmt(r.estimate)} ± std.err {fmt(r.std_error)}, {100 * r.confidence:g}% interval "
                  f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}] ({r.method})"]
        return "\n".join(lines)
    privacy = (f"ε = {r.epsilon:.4f} (declared {q.epsilon:g}) · p = {r.p:.4f}, q = {r.q:.4f}" if q.protected
               else "asked directly (not randomized)")
    realized = getattr(q.qtype.mechanism(q), "design", None)
    if realized is not None:  # a randomized-response design: its name and realized ε (none: not ε-LDP)
        privacy = f"{realized.name} design · " + (f"ε = {r.epsilon:.4f}" if realized.ldp else "not ε-LDP")
    rows = [[label, pct(r.report_share[i]), pct(r.estimate[i]), pct(r.std_error[i]),
             f"[{pct(r.ci_low[i])}, {pct(r.ci_high[i])}]"] for i, label in enumerate(q.options)]
    lines += [f"  n = {n:,} · weighted · {privacy}",
              f"  {100 * r.confidence:g}% intervals, method: {r.method}",
              *grid(["option", "reported (weighted)", "estimate", "std.err", "interval"], rows)]
    note = question_json(q, n, r)["note"]
    if note:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


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


def crosstab_text(ct, data: dict, how: str) -> str:
    """A weighted or raked (``how``) cross-tab for a terminal (``data``: its ``to_dict()``): per cell the
    report share, the joint estimate and the column's share given the row, with their intervals."""
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


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Weighted(SurveyResult):
    """Each question's weighted estimates (``result`` None: nobody answered it) and the design."""

    survey: Survey
    columns: DesignColumns
    design: SurveyDesign
    questions: list  # of (Question, n answered, WeightedResult | WeightedMean | WeightedDifference | None)

    def design_dict(self) -> dict:
        """What the design is: its columns, respondents, strata, clusters, degrees of freedom and Kish's n."""
        d = self.design
        return {"weights": self.columns.weights, "strata": self.columns.strata, "cluster": self.columns.cluster,
                "fpc": self.columns.fpc, "n": d.n, "n_strata": int(np.unique(d.strata).size),
                "n_clusters": int(np.unique(d.clusters).size), "degrees_of_freedom": d.degrees_of_freedom,
                "effective_n": json_number(d.effective_n)}

    def design_text(self) -> str:
        """One line naming the design: the columns, strata, clusters, degrees of freedom and Kish's n."""
        d = self.design_dict()
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

    def head(self) -> str:
        """The lines above a table: the survey, its responses and the design (:meth:`design_text`)."""
        return (f"{self.survey.title} ({self.survey.slug}): {plural(self.design.n, 'response')}\n"
                f"{self.design_text()}\n\n")

    def to_dict(self) -> dict:
        """``deniable estimate --weights … --format json``: the design, and each question's weighted record
        (:func:`question_json`)."""
        return {"survey": self.survey.slug, "n_responses": self.design.n, "weighted": True,
                "design": self.design_dict(), "questions": [question_json(q, n, r) for q, n, r in self.questions]}

    def table(self) -> str:
        """The design, then one block per question (:func:`question_block`), each saying it is weighted."""
        return self.head() + "\n\n".join(question_block(q, n, r) for q, n, r in self.questions) + "\n"

    def csv_rows(self, q: Question, n: int, r) -> list[list]:
        """Question ``q``'s rows of :data:`CSV_COLUMNS`, the design's columns on each."""
        record = question_json(q, n, r)
        design = {"question": q.id, "weights": self.columns.weights, "strata": self.columns.strata,
                  "cluster": self.columns.cluster, "fpc": self.columns.fpc}
        if "prevalence" in record:
            entries = [{**record["prevalence"], "option": "prevalence", "label": q.sensitive},
                       {**record["control"], "option": "control", "label": "control mean count"},
                       {**record["treatment"], "option": "treatment", "label": "treatment mean count"}]
        elif "mean" in record:
            entries = [{**record["mean"], "option": "mean", "label": "mean"}]
        else:
            entries = [{**option, "option": i} for i, option in enumerate(record["options"])]
        return [["" if row.get(c) is None else row[c] for c in CSV_COLUMNS]
                for row in ({**record, **entry, **design} for entry in entries)]

    def to_csv(self) -> str:
        """One row per question × option (columns :data:`CSV_COLUMNS`), the design's columns on each row."""
        return csv_text([CSV_COLUMNS, *(row for q, n, r in self.questions for row in self.csv_rows(q, n, r))])


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
class WeightedSubgroups(SurveyResult):
    """``deniable estimate --weights … --by QUESTION``: each other question's estimates within each
    group — the options of ``by``, then the respondents who did not answer it."""

    weighted: Weighted  # the survey, the columns and the design (its ``questions`` unused: [])
    by: Question
    questions: list  # of (Question, [(label, not_answered, n answered, result | None)])

    def to_dict(self) -> dict:
        """``--weights … --by Q --format json``: the unweighted ``--by`` document's shape, each group's
        record the weighted question record (:func:`question_json`) and the design beside."""
        def group(q, label, not_answered, n, result):
            head = {"group": label, "not_answered": not_answered}
            if result is None:
                return {**head, "n": 0, "empty": True, "weighted": True}
            return {**head, **question_json(q, n, result)}

        w = self.weighted
        return {"survey": w.survey.slug, "by": self.by.id, "n_responses": w.design.n, "weighted": True,
                "design": w.design_dict(),
                "questions": [{"id": q.id, "by": self.by.id, "groups": [group(q, *row) for row in rows]}
                              for q, rows in self.questions]}

    def table(self) -> str:
        """The design, then per question one block per group (as :meth:`Weighted.table`), the group named first."""
        return self.weighted.head() + group_blocks(self.by, self.questions)

    def to_csv(self) -> str:
        """:data:`CSV_COLUMNS` with two columns in front, ``by`` and ``group``; an empty group is one row
        with n = 0."""
        return csv_text([["by", "group", *CSV_COLUMNS], *self._csv_rows()])

    def _csv_rows(self):
        for q, rows in self.questions:
            for label, _, n, result in rows:
                if result is None:
                    yield empty_group_row(self.by.id, label, q.id, CSV_COLUMNS)
                else:
                    yield from ([self.by.id, label, *row] for row in self.weighted.csv_rows(q, n, result))


def group_blocks(by: Question, questions: list) -> str:
    """Per question, one block per group of ``by`` (:func:`question_block`), the group named on its first
    line; ``questions``: ``[(Question, [(label, not answered, n answered, result | None)])]``."""
    blocks = []
    for q, rows in questions:
        for label, not_answered, n, result in rows:
            name = f"{by.id} {label}" if not_answered else f"{by.id}={label}"
            first, _, rest = question_block(q, n, result).rstrip("\n").partition("\n")
            blocks.append(f"{first} · {name}\n{rest}")
    return "\n\n".join(blocks) + "\n"


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


@dataclass(frozen=True)
class WeightedCrosstab(SurveyResult):
    """``deniable estimate --weights … --crosstab Q1 Q2``: the joint and conditional estimates."""

    weighted: Weighted  # the survey, the columns and the design
    row: Question
    col: Question
    result: WeightedCrosstabResult

    def to_dict(self) -> dict:
        """The cross-tab document: per cell (row option × column option) the weighted report share, the
        joint estimate with its standard error and interval, and the column's share given the row."""
        r = self.result
        return {"row": {"id": self.row.id, "text": self.row.text, "epsilon": self.row.epsilon},
                "col": {"id": self.col.id, "text": self.col.text, "epsilon": self.col.epsilon},
                "n": r.n, "weighted": True, "design": self.weighted.design_dict(),
                "effective_n": json_number(r.effective_n), "degrees_of_freedom": r.degrees_of_freedom,
                "confidence": json_number(r.confidence), "simultaneous": r.simultaneous, "method": r.method,
                "note": r.note, "cells": crosstab_cells(self.row, self.col, r)}

    def table(self) -> str:
        return self.weighted.head() + crosstab_text(self, self.to_dict(), "weighted")

    def to_csv(self) -> str:
        """One row per cell: the cross-tab's numbers and the design's columns."""
        data = self.to_dict()
        keys = list(data["cells"][0])
        c = self.weighted.columns
        return csv_text([["row", "col", "n", "effective_n", "degrees_of_freedom", "confidence", *keys,
                          "weights", "strata", "cluster", "fpc"],
                         *([self.row.id, self.col.id, data["n"], data["effective_n"], data["degrees_of_freedom"],
                            data["confidence"], *("" if cell[k] is None else cell[k] for k in keys),
                            *("" if v is None else v for v in (c.weights, c.strata, c.cluster, c.fpc))]
                           for cell in data["cells"])])


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

