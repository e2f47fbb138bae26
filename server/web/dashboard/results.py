"""What the dashboard's results pages show: per-question estimates, cross-tabs, subgroups, planning.

Numbers come from :mod:`deniable.server.survey.analysis` (the orchestration the command line
uses too) on the stored counts and answer patterns, and each option's row is
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
from deniable.server.store.responses import load_db_dataset
from deniable.server.store.surveys import option_counts, respondent_count
from deniable.server.survey import analysis
from deniable.server.survey.estimates import CSV_COLUMNS, pair_privacy, question_json, question_rows
from deniable.server.survey.patterns import Patterns
from deniable.server.survey.questions.base import NotAvailable, headline, json_number

from ..fields import BoundedIntegerField
from . import charts
from .formatting import figure, is_share, pct, points

CONFIDENCES = ["0.90", "0.95", "0.99"]


METHOD_LABELS = {  # each interval method in plain words; its technical name stays the value (and in the API)
    "exact": "Exact, never too short (the default)",
    "likelihood": "Likelihood ratio",
    "wilson": "Wilson score",
    "clopper-pearson": "Clopper–Pearson, never too short, wider",
    "wald": "Normal approximation (Wald), can be too short",
}
METHOD_NOTES = {  # what the page's "What are these methods?" says of each
    "exact": "Feldman–Cousins intervals, inverted from the exact binomial distribution of the reports: they "
             "cover the true share at least as often as the confidence level says, for every share and every n.",
    "likelihood": "Profile likelihood-ratio intervals: close to the level on average, sometimes a little short.",
    "wilson": "Wilson score intervals on the randomized reports, mapped to the true share: close to the level on "
              "average.",
    "clopper-pearson": "Clopper–Pearson intervals on the randomized reports, mapped to the true share: exact and "
                       "conservative, wider than Feldman–Cousins.",
    "wald": "Estimate ± z standard errors: short, and too short for small n or shares near 0 or 1.",
}


class ResultsForm(Form):
    """The GET selectors of the results page and the API (no CSRF: reads only)."""

    method = SelectField("Interval method", choices=lambda: [(m, METHOD_LABELS[m]) for m in estimators.METHODS],
                         default="exact")
    method_notes = METHOD_NOTES  # the page's "What are these interval methods?" (dashboard/_methods.html)
    confidence = SelectField("Confidence", choices=CONFIDENCES, default="0.95")
    simultaneous = BooleanField("Simultaneous (all options of a question at once, Bonferroni)")
    monitoring = BooleanField("Monitoring (intervals valid however often you look: confidence sequences)")
    fake = BoundedIntegerField("Fake respondents to allow for", default=10,
                        validators=[Optional(), NumberRange(min=0, max=10**9)])

    @property
    def confidence_value(self) -> float:
        return float(self.confidence.data)


def fake_shift(m: int, p: float, q: float, n: int, matrix=None) -> float:
    """How far ``m`` fake respondents could move one option's estimate: ``m(1 − q)/((p − q)n)`` for k-ary
    randomized response at ``p``, ``q``; for a design, from its ``matrix`` M (reports × answers).

    The unbiased estimate is ``π̂ = A λ̂`` with ``A = M⁻¹`` and ``λ̂`` the report shares.  m fakes who all
    send report s make the shares ``(nλ̂ + m e_s)/(n + m)``, which moves ``π̂`` by ``m/(n + m)·(A e_s − π̂)``;
    with ``π̂_t`` in [0, 1] that is at most ``(m/n)·max(|A_ts|, |A_ts − 1|)``, and fakes sending a mix of
    reports move it less (the move is linear in the mix).  For k-ary randomized response
    ``A = (I − q·11ᵀ)/(p − q)`` and, as ``p ≤ 1 − q``, this is the formula above; a design whose report
    is likelier under another answer (the crosswise model at a prevalence below ½) has ``p < q``.
    """
    if not n:
        return math.inf
    if matrix is None:
        return m * (1 - q) / ((p - q) * n)
    inverse = np.linalg.inv(np.asarray(matrix, dtype=float))
    return m * float(np.max(np.maximum(np.abs(inverse), np.abs(inverse - 1)))) / n


def _unbiased_label(row: dict) -> dict:
    """A row with its ``headline`` (the number the page shows) and whether that is not the unbiased estimate."""
    shown = json_number(row.get("headline"))
    unbiased = json_number(row.get("estimate"))
    return {**row, "headline": shown, "replaced": shown is not None and unbiased is not None and shown != unbiased}


def option_rows(q, record: dict) -> list[dict]:
    """The rows of a categorical question's table: each option's record row with its headline."""
    return [_unbiased_label({**row, "headline": headline(row)}) for row in record["options"]]


# The rows of the estimates CSV whose value is on the question's own scale (a mean, a median, a mean
# count), not a proportion: every other row (an option's or a pair's share, a grid value's or a bin's
# share, a prevalence, a design's parameter) is shown in %, as a single choice's options are.
SCALE_ROWS = frozenset({"mean", "median", "ticked", "control", "treatment"})


def _shown(value, share: bool) -> str:
    return "—" if value in ("", None) else (pct(value) if share else figure(value))


def typed_rows(q, result) -> list[dict]:
    """The rows of another type's table: the estimates CSV's rows (the mean, each option or grid value,
    the median, the prevalence, …), each with the headline its type gives it
    (:meth:`~deniable.server.survey.questions.base.QuestionType.shown_rows`), whether it is a proportion
    (``share``) and its numbers as the page prints them (``shown``: a proportion in % with one decimal and
    its standard error in points, anything else with four significant digits)."""
    rows = []
    for row, shown in zip(question_rows(q, result), q.qtype.shown_rows(q, result)):
        cells = {c: ("" if row.get(c) is None else row[c]) for c in CSV_COLUMNS}
        out = _unbiased_label({**cells, "estimate": row.get("estimate"), "headline": shown.get("headline")})
        share = str(out["option"]) not in SCALE_ROWS
        se = out["std_error"]
        out.update(share=share, shown={
            "headline": _shown(out["headline"], share), "estimate": _shown(out["estimate"], share),
            "ci_low": _shown(out["ci_low"], share), "ci_high": _shown(out["ci_high"], share),
            "std_error": "—" if se in ("", None) else (f"{points(se)} pts" if share else figure(se, 3))})
        rows.append(out)
    return rows


def compact_line(q, record: dict) -> dict | None:
    """The one line of a question in the results page's compact view: its first headline estimate
    (:meth:`~deniable.server.survey.questions.base.QuestionType.summary`: a single choice's first option,
    a number's mean, a list experiment's prevalence, a two-group design's π, …) as the page prints it,
    with its interval, and how many other headlines the detail holds; None when the type has none."""
    try:
        rows = q.qtype.summary(q, record)
    except NotAvailable:  # a type with no headline estimates: the detail shows what it has
        return None
    if not rows:
        return None
    row = rows[0]
    share = is_share(row) and not charts.is_scale_record(record)
    return {"label": row["label"], "share": share, "headline": _shown(row.get("headline"), share),
            "ci_low": _shown(row.get("ci_low"), share), "ci_high": _shown(row.get("ci_high"), share),
            "more": len(rows) - 1}


def _chart(q, record: dict, position: int, title: str, suffix: str = ""):
    """The estimate bars of a record, drawn at each row's headline (its type's :meth:`chart`); a mean
    on a scale (a record with ``mean``, ``min`` and ``max``) as such (:func:`.charts.scale_chart`)."""
    if charts.is_scale_record(record):
        return charts.scale_chart(record, chart_id=f"q{position}{suffix}", title=title)
    drawn = q.qtype.chart(q, record)
    if not charts.drawable(drawn):
        return None
    return charts.estimate_bars(drawn["labels"], drawn["estimate"], drawn["ci_low"], drawn["ci_high"],
                                chart_id=f"q{position}{suffix}", title=title)


def question_results(survey, stats: dict, *, method: str, confidence: float, simultaneous: bool,
                     fake: int | None = None, monitoring: bool = False, tuned_for: int = 10_000) -> list[dict]:
    """Per question: its estimate (None before any answer), the table rows, the SVG chart.

    The estimates are :func:`deniable.server.survey.analysis.marginal_estimates` (those of the API,
    the exports and ``deniable estimate``).  A categorical question's table has one row per option
    (``rows``); another type's has the rows of the estimates CSV (``typed``: the mean, each option
    or grid value, the median, the prevalence, …).  Every row shows its headline, inside its interval.
    """
    items = []
    results = analysis.marginal_estimates(survey, stats, method=method, confidence=confidence,
                                          simultaneous=simultaneous, monitoring=monitoring, tuned_for=tuned_for)
    for position, (q, result) in enumerate(results):
        n = q.qtype.n_of(result)
        item = {"question": q, "n": n, "result": None, "record": None, "rows": [], "chart": None, "shift": None,
                "mechanism": q.mechanism, "typed": None, "compact": None, "chart_wide": None}
        items.append(item)
        if not n:
            continue
        record = question_json(q, result)
        item["record"] = record
        if q.qtype.categorical:
            item["result"] = result
            item["rows"] = option_rows(q, record)
            if fake is not None:
                design = getattr(q.mechanism, "design", None)  # a randomized-response design (client/designs.py)
                item["shift"] = fake_shift(fake, result.p, result.q, result.n, None if design is None else design.matrix)
            title = (f"{q.text} — estimates with {confidence:.0%} "
                     f"{'simultaneous ' if simultaneous else ''}{result.method} intervals, n = {result.n:,}")
        else:
            item["typed"] = typed_rows(q, result)
            title = f"{q.text} — estimates with {confidence:.0%} intervals, n = {n:,}"
        item["chart"] = _chart(q, record, position, title)
        with charts.drawn_at(charts.WIDE):  # the same chart at a wide card's width (the page shows one of the two)
            item["chart_wide"] = _chart(q, record, position, title, "-wide")
        item["compact"] = compact_line(q, record)
    return items


def crosstab_view(db, stored, args) -> tuple[dict, int]:
    """The cross-tab of two questions whose types allow it (:func:`~deniable.server.survey.analysis.check_crosstab`,
    the command line's check), with the single-question intervals to compare; and the HTTP status
    (400 for a choice the analysis refuses, with the reason in words)."""
    survey = stored.survey
    candidates = analysis.crosstab_questions(survey)
    view = {"questions": candidates, "error": None, "result": None, "confidences": CONFIDENCES}
    if len(candidates) < 2 and "row" not in args and "col" not in args:
        view["error"] = "A cross-tab needs two single-choice questions; this survey has fewer."
        return view, 200
    ids = [q.id for q in candidates] + ["", ""]
    row_id = args.get("row", ids[0])
    col_id = args.get("col", ids[1])
    confidence = args.get("confidence", "0.95")
    view.update(row_id=row_id, col_id=col_id, confidence=confidence)
    if confidence not in CONFIDENCES:
        view["error"] = "confidence: choose 0.90, 0.95 or 0.99."
        return view, 400
    try:
        q_row, q_col = analysis.check_crosstab(survey, row_id, col_id)
    except analysis.AnalysisError as exc:
        view["error"] = str(exc)
        return view, 400
    level = float(confidence)
    dataset = survey_patterns(db, stored).dataset()  # aggregates: no row scan
    joint = dataset.joint_counts(q_row.id, q_col.id)
    view.update(q_row=q_row, q_col=q_col, joint=joint, privacy=pair_privacy(q_row, q_col))  # as the CLI's table says
    if joint.sum() == 0:
        view["error"] = "No respondent has answered both questions yet."
        return view, 200
    ct = analysis.crosstab(survey, q_row.id, q_col.id, dataset, confidence=level)
    result = ct.result
    shown = analysis.crosstab_headlines(ct)
    view.update(result=result, headlines=shown)
    view["joint_chart"] = charts.heatmap(
        q_row.options, q_col.options, shown["joint"], result.joint_ci_low, result.joint_ci_high,
        chart_id="joint", title=f"Joint estimates of “{q_row.text}” (rows) and “{q_col.text}” (columns), with intervals")
    view["conditional_chart"] = charts.heatmap(
        q_row.options, q_col.options, shown["conditional"], result.conditional_ci_low,
        result.conditional_ci_high, chart_id="conditional",
        title=f"Estimates of “{q_col.text}” (columns) within each answer to “{q_row.text}” (rows), with intervals")
    # The same confidence, the Wald intervals of each question alone: how much wider is the joint?
    singles = {}
    counts = option_counts(db, stored.id)
    for q in (q_row, q_col):
        single = estimators.estimate(counts[q.id], q.epsilon, confidence=level, method="wald")
        singles[q.id] = float(np.mean(single.ci_high - single.ci_low))
    joint_width = float(np.mean(np.asarray(result.joint_ci_high) - np.asarray(result.joint_ci_low)))
    view.update(single_widths=singles, joint_width=joint_width,
                width_ratio={qid: joint_width / w if w else math.inf for qid, w in singles.items()})
    return view, 200


def _group_meta(record: dict) -> dict:
    """n, ε, the method, the confidence of a group's record, whatever its type (invariant 5)."""
    method = record.get("method") or (record.get("mean") or {}).get("method") or ""
    return {"epsilon": record.get("epsilon"), "method": method, "confidence": record.get("confidence"),
            "simultaneous": bool(record.get("simultaneous"))}


def subgroup_view(db, stored, args) -> tuple[dict, int]:
    """A question's estimates within each option of a directly asked question, and among those who did not
    answer it (:func:`deniable.server.survey.analysis.subgroups`, the groups of ``deniable estimate --by``);
    ``chart`` draws the groups' estimates side by side; and the HTTP status (400 for a refused choice)."""
    survey = stored.survey
    direct = analysis.grouping_questions(survey)
    form = ResultsForm(args)
    view = {"questions": list(survey.questions), "direct": direct, "form": form, "error": None, "groups": [],
            "empty": []}
    if not direct or len(survey.questions) < 2:
        view["error"] = "Subgroups need a question asked directly to group by, and another question."
        return view, 200
    by = args.get("by", direct[0].id)
    qid = args.get("question", next((q.id for q in survey.questions if q.id != by), ""))
    view.update(qid=qid, by=by)
    if not form.validate():
        view["error"] = "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())
        return view, 400
    try:
        q, q_by = analysis.check_subgroups(survey, qid, by)
    except analysis.AnalysisError as exc:
        view["error"] = str(exc)
        return view, 400
    if analysis.needs_rows(survey, [q.id, q_by.id]):  # a question the answer patterns do not hold
        dataset = load_db_dataset(db, stored.slug)
    else:
        dataset = survey_patterns(db, stored).dataset()  # aggregates: no row scan
    sg = analysis.subgroups(survey, q.id, q_by.id, dataset, method=form.method.data,
                            confidence=form.confidence_value, simultaneous=form.simultaneous.data)
    for group in sg.groups:
        if group.empty:
            view["empty"].append(group.label)
            continue
        rows = option_rows(q, group.record) if q.qtype.categorical else typed_rows(q, group.result)
        view["groups"].append({"label": group.label, "not_answered": group.not_answered, "n": group.n,
                               "record": group.record, "rows": rows, "categorical": q.qtype.categorical,
                               **_group_meta(group.record)})
    drawn = []
    for g in view["groups"]:
        bars = q.qtype.chart(q, g["record"])
        if not bars or any(v is None for key in ("estimate", "ci_low", "ci_high") for v in bars[key]):
            drawn = []
            break
        drawn.append({"label": g["label"], "n": g["n"], **bars})
    if drawn and all(d["labels"] == drawn[0]["labels"] for d in drawn):
        first = view["groups"][0]
        view["chart"] = charts.grouped_bars(
            drawn[0]["labels"], drawn, chart_id="subgroups",
            title=(f"{q.text}: each estimate by {q_by.text}, {first['confidence']:.0%} "
                   f"{first['method']} intervals"))
    view.update(q=q, q_by=q_by)
    return view, 200


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


def respondents_from_counts(db, stored, counts) -> int:
    """Respondents so far, from the counts table when possible (no scan of the responses).

    Every stored response answers every required question that display logic does not hide, so such a
    choice question's counts add up to the number of responses (``counts`` may be
    :func:`~deniable.server.store.surveys.survey_stats`); with no such question, add up the answer patterns.
    """
    for q in stored.survey.questions:
        if q.required and q.show_if is None and q.qtype.categorical and q.id in counts:
            return int(counts[q.id].sum())
    return respondent_count(db, stored.id)
