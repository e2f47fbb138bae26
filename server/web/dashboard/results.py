"""What the dashboard's results pages show: per-question estimates, cross-tabs, subgroups, planning.

Numbers come from :mod:`deniable.estimators` on the stored counts, and each option's row is
:func:`deniable.server.survey.estimates.question_json`, the same record as the exports, the
results API and ``deniable estimate``, so an export reproduces the page.  Every estimate
travels with n, ε, the method and its interval (docs/design.md, invariant 5).
"""

from __future__ import annotations

import math
import os

import numpy as np
from flask import current_app
from wtforms import BooleanField, Form, SelectField
from wtforms.validators import NumberRange, Optional

from deniable import estimators
from deniable.server.store.aggregates import pattern_counts
from deniable.server.store.surveys import option_counts, respondent_count
from deniable.server.survey.estimates import CSV_COLUMNS, question_rows, question_json
from deniable.server.survey.patterns import Patterns

from ..fields import BoundedIntegerField
from . import charts

CONFIDENCES = ["0.90", "0.95", "0.99"]


class ResultsForm(Form):
    """The GET selectors of the results page and the API (no CSRF: reads only)."""

    method = SelectField("Interval method", choices=lambda: list(estimators.METHODS), default="exact")
    confidence = SelectField("Confidence", choices=CONFIDENCES, default="0.95")
    simultaneous = BooleanField("Simultaneous (all options of a question at once, Bonferroni)")
    monitoring = BooleanField("Monitoring (intervals valid however often you look: confidence sequences)")
    fake = BoundedIntegerField("Fake respondents m", default=10,
                        validators=[Optional(), NumberRange(min=0, max=10**9)])

    @property
    def confidence_value(self) -> float:
        return float(self.confidence.data)


def fake_shift(m: int, p: float, q: float, n: int) -> float:
    """How far ``m`` fake respondents could move one option's estimate: ``m(1 − q)/((p − q)n)``."""
    return m * (1 - q) / ((p - q) * n) if n else math.inf


def question_results(survey, stats: dict, *, method: str, confidence: float, simultaneous: bool,
                     fake: int | None = None, monitoring: bool = False, tuned_for: int = 10_000) -> list[dict]:
    """Per question: its estimate (None before any answer), the table rows, the SVG chart.

    ``stats`` is :func:`deniable.server.store.surveys.survey_stats`: a choice question's option
    counts, or another type's sufficient statistics (then ``typed`` holds its rows as in the
    estimates CSV: the mean, each option or grid value, the median, the prevalence, …).
    """
    items = []
    for position, q in enumerate(survey.questions):
        if not q.qtype.categorical:
            items.append(_typed_item(q, stats[q.id], position, method=method, confidence=confidence,
                                     simultaneous=simultaneous))
            continue
        observed = np.asarray(stats.get(q.id, np.zeros(q.k, dtype=np.int64)), dtype=np.int64)
        item = {"question": q, "n": int(observed.sum()), "result": None, "rows": [], "chart": None,
                "shift": None, "mechanism": q.mechanism, "typed": None}
        if item["n"]:
            if monitoring:
                result = estimators.monitor(observed, q.epsilon, confidence=confidence, simultaneous=simultaneous,
                                            tuned_for=tuned_for)
            else:
                result = estimators.estimate(observed, q.epsilon, confidence=confidence, method=method,
                                             simultaneous=simultaneous)
            item["result"] = result
            item["rows"] = question_json(q, result)["options"]
            if fake is not None:
                item["shift"] = fake_shift(fake, result.p, result.q, result.n)
            item["chart"] = charts.estimate_bars(
                q.options, list(result.estimate), list(result.ci_low), list(result.ci_high), chart_id=f"q{position}",
                title=(f"{q.text} — estimates with {confidence:.0%} "
                       f"{'simultaneous ' if simultaneous else ''}{result.method} intervals, n = {result.n:,}"),
            )
        items.append(item)
    return items


def _typed_item(q, stats, position: int, *, method: str, confidence: float, simultaneous: bool) -> dict:
    """A numeric, check-all-that-apply or list question's results: the rows of the estimates CSV
    (:func:`deniable.server.survey.type_estimates.csv_rows`) and a chart of its shares."""
    item = {"question": q, "n": 0, "result": None, "rows": [], "chart": None, "shift": None,
            "mechanism": q.mechanism, "typed": []}
    result = q.qtype.estimate(q, stats, method=method, confidence=confidence, simultaneous=simultaneous)
    item["n"] = q.qtype.n_of(result)
    if not item["n"]:
        return item
    rows = [{c: ("" if row.get(c) is None else row[c]) for c in CSV_COLUMNS} for row in question_rows(q, result)]
    item["typed"] = rows
    shares = [r for r in rows if isinstance(r["option"], int) or r["option"] == "prevalence"]
    if shares and all(r["estimate"] != "" and r["ci_low"] != "" for r in shares):
        item["chart"] = charts.estimate_bars(
            [str(r["label"]) for r in shares], [r["estimate"] for r in shares], [r["ci_low"] for r in shares],
            [r["ci_high"] for r in shares], chart_id=f"q{position}",
            title=f"{q.text} — estimates with {confidence:.0%} intervals, n = {item['n']:,}")
    return item


def _protected(stored) -> list:
    """The protected single-choice questions: what cross-tabs and subgroups are made of."""
    return [q for q in stored.survey.questions if q.protected and q.qtype.categorical]


def crosstab_view(db, stored, args) -> dict:
    """The cross-tab of two protected questions, with the single-question intervals to compare."""
    protected = _protected(stored)
    view = {"protected": protected, "error": None, "result": None, "confidences": CONFIDENCES}
    if len(protected) < 2:
        view["error"] = "A cross-tab needs two protected single-choice questions; this survey has fewer."
        return view
    ids = [q.id for q in protected]
    row_id = args.get("row", ids[0])
    col_id = args.get("col", ids[1])
    confidence = args.get("confidence", "0.95")
    view.update(row_id=row_id, col_id=col_id, confidence=confidence)
    if row_id not in ids or col_id not in ids:
        view["error"] = "Choose two protected questions of this survey."
        return view
    if row_id == col_id:
        view["error"] = "Choose two different questions."
        return view
    if confidence not in CONFIDENCES:
        view["error"] = "confidence: choose 0.90, 0.95 or 0.99."
        return view
    level = float(confidence)
    q_row, q_col = stored.survey.question(row_id), stored.survey.question(col_id)
    joint = survey_patterns(db, stored).dataset().joint_counts(row_id, col_id)  # aggregates: no row scan
    view.update(q_row=q_row, q_col=q_col, joint=joint, cost=q_row.mechanism.epsilon + q_col.mechanism.epsilon)
    if joint.sum() == 0:
        view["error"] = "No respondent has answered both questions yet."
        return view
    result = estimators.crosstab(joint, q_row.epsilon, q_col.epsilon, level)
    view["result"] = result
    view["joint_chart"] = charts.heatmap(
        q_row.options, q_col.options, result.joint_estimate, result.joint_ci_low, result.joint_ci_high,
        chart_id="joint", title=f"Joint estimates of {q_row.id} (rows) and {q_col.id} (columns), with intervals")
    view["conditional_chart"] = charts.heatmap(
        q_row.options, q_col.options, result.conditional_estimate, result.conditional_ci_low,
        result.conditional_ci_high, chart_id="conditional",
        title=f"Estimates of {q_col.id} (columns) within each answer to {q_row.id} (rows), with intervals")
    # The same confidence, the Wald intervals of each question alone: how much wider is the joint?
    singles = {}
    counts = option_counts(db, stored.id)
    for q in (q_row, q_col):
        single = estimators.estimate(counts[q.id], q.epsilon, confidence=level, method="wald")
        singles[q.id] = float(np.mean(single.ci_high - single.ci_low))
    joint_width = float(np.mean(np.asarray(result.joint_ci_high) - np.asarray(result.joint_ci_low)))
    view.update(single_widths=singles, joint_width=joint_width,
                width_ratio={qid: joint_width / w if w else math.inf for qid, w in singles.items()})
    return view


def subgroup_view(db, stored, args) -> dict:
    """A protected question's estimates within each option of a direct question, and among those
    who did not answer it; ``chart`` draws one option's estimates side by side across the groups."""
    protected = _protected(stored)
    direct = [q for q in stored.survey.questions if not q.protected and q.qtype.categorical]
    form = ResultsForm(args)
    view = {"protected": protected, "direct": direct, "form": form, "error": None, "groups": []}
    if not protected or not direct:
        view["error"] = "Subgroups need a protected question and a question asked directly."
        return view
    qid = args.get("question", protected[0].id)
    by = args.get("by", direct[0].id)
    view.update(qid=qid, by=by)
    if qid not in {q.id for q in protected} or by not in {q.id for q in direct}:
        view["error"] = "Choose a protected question and a direct question of this survey."
        return view
    if not form.validate():
        view["error"] = "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())
        return view
    q, q_by = stored.survey.question(qid), stored.survey.question(by)
    table = survey_patterns(db, stored).dataset().counts_by(qid, by)  # aggregates: no row scan
    # Those who answered the protected question but not the direct one: its counts minus the groups'.
    table = np.asarray(table, dtype=np.int64)
    unanswered = np.asarray(option_counts(db, stored.id).get(qid, np.zeros(q.k)), dtype=np.int64) - table.sum(axis=0)
    labels = [*q_by.options, NOT_ANSWERED]
    counts = [*table, np.maximum(unanswered, 0)]
    nonempty = [g for g in range(len(counts)) if counts[g].sum() > 0]
    results = estimators.subgroups([counts[g] for g in nonempty], q.epsilon, confidence=form.confidence_value,
                                   method=form.method.data, simultaneous=form.simultaneous.data) if nonempty else []
    for g, result in zip(nonempty, results):
        view["groups"].append({"label": labels[g], "result": result, "question": q,
                               "not_answered": g == q_by.k})
    view["empty"] = [q_by.options[g] for g in range(q_by.k) if g not in nonempty]
    drawn = [{"label": g["label"], "n": int(g["result"].n), "estimate": list(g["result"].estimate),
              "ci_low": list(g["result"].ci_low), "ci_high": list(g["result"].ci_high)} for g in view["groups"]]
    if drawn:
        first = view["groups"][0]["result"]
        view["chart"] = charts.grouped_bars(
            q.options, drawn, chart_id="subgroups",
            title=(f"{q.text}: each option's estimate by {q_by.text}, {first.confidence:.0%} "
                   f"{first.method} intervals"))
    view.update(q=q, q_by=q_by)
    return view


_PATTERNS: dict[tuple, tuple[int, Patterns]] = {}
_PATTERNS_KEPT = 32


def survey_patterns(db, stored) -> Patterns:
    """The survey's answer patterns, read again only once responses have come in since (per process).

    Reading them costs O(distinct answer patterns): nothing for a survey of a few questions, up to a
    scan's worth for many questions with many options; while no response arrives, views reuse them.
    """
    path = current_app.config["DATABASE"]
    key = (path, os.stat(path).st_ino, stored.id)
    total = respondents_from_counts(db, stored, option_counts(db, stored.id))
    cached = _PATTERNS.get(key)
    if cached is not None and cached[0] == total:
        return cached[1]
    patterns = pattern_counts(db, stored)
    if len(_PATTERNS) >= _PATTERNS_KEPT:
        _PATTERNS.pop(next(iter(_PATTERNS)))
    _PATTERNS[key] = (int(patterns.counts.sum()), patterns)
    return patterns


NOT_ANSWERED = "not answered"


def respondents_from_counts(db, stored, counts) -> int:
    """Respondents so far, from the counts table when possible (no scan of the responses).

    Every stored response answers every required question, so a required choice question's counts
    add up to the number of responses (``counts`` may be :func:`~deniable.server.store.surveys.survey_stats`);
    with no such question, add up the answer patterns.
    """
    for q in stored.survey.questions:
        if q.required and q.qtype.categorical and q.id in counts:
            return int(counts[q.id].sum())
    return respondent_count(db, stored.id)
