"""Analysis pages of the dashboard: regression on a (randomized) answer, and monitoring over time.

The regression page takes the margins of the Weighting page in its address, as the results page does
(``?rake=MARGINS&trim=LOW,HIGH``, :func:`.weighting.page_weighting`): the fit is then under the raked
weights, with the calibration variance (:func:`deniable.server.survey.sampling.fit_raked_formula`, what
``deniable regress --db FILE SLUG FORMULA --rake MARGINS.json`` prints), beside a "Weighted by raking /
Unweighted" switch; margins it cannot use, or an outcome raking cannot weight (a two-group design's), are a
400 naming the field, above the unweighted fit.  An outcome its type fits its own way (a two-group design:
:meth:`~deniable.server.survey.questions.base.QuestionType.regression_fit`) has its own section in the
template: the coefficients with Wald intervals and the design's second parameter in words.

Both read answer patterns (:func:`deniable.server.store.aggregates.pattern_counts`, kept current
on every insert), never one row per response (but for monitoring a question the patterns do not
hold, which reads its stored reports' days), and every route goes through
:func:`.permissions.survey_for` (a researcher without a role on the survey gets a 404).
"""

from __future__ import annotations

import numpy as np
from flask import Blueprint, abort, render_template, request

from deniable.estimators import RegressionError
from deniable.estimators.weights import SamplingDesignError
from deniable.server.store.aggregates import pattern_counts
from deniable.server.survey import sampling
from deniable.server.survey.questions.base import NotAvailable
from deniable.server.survey.regression import (FormulaError, default_formula, fit_formula, parse_formula,
                                               reference_choices)

from ..connections import get_readonly_db
from . import analysis_charts, charts
from . import weighting as page_weights
from .chart_files import svg_file
from .permissions import survey_for
from .results import CONFIDENCES

bp = Blueprint("analysis", __name__, url_prefix="/dashboard")
MAX_FORMULA = 500


def _confidence() -> tuple[str, float]:
    text = request.args.get("confidence", "0.95")
    if text not in CONFIDENCES:
        abort(400, description=f"confidence: choose one of {', '.join(CONFIDENCES)}")
    return text, float(text)


def effect_charts(result) -> list[dict]:
    """Per categorical term, bars of the predicted prevalence by level (every option but the
    reference; just the one for a yes/no outcome) with their intervals."""
    out = []
    options = [j for j in range(result.k) if j != result.reference]
    terms = []
    for effect in result.effects:
        if effect.level is not None and effect.term not in terms:
            terms.append(effect.term)
    for position, term in enumerate(terms):
        rows = [e for e in result.effects if e.term == term and e.option in options]
        labels = [e.level if result.k == 2 else f"{e.level} · {result.options[e.option]}" for e in rows]
        what = result.options[options[0]] if result.k == 2 else "each option"
        out.append({"term": term, "chart": charts.estimate_bars(
            labels, [e.prevalence for e in rows], [e.prevalence_low for e in rows],
            [e.prevalence_high for e in rows], chart_id=f"effect{position}",
            title=(f"Predicted share of {what} by {term}, with {result.confidence:.0%} intervals "
                   f"(n = {result.n:,.0f})"))})
    return out


@bp.route("/<slug>/regression")
def regression(slug: str):
    stored, role = survey_for(slug)
    weighting, weighting_status = page_weights.weighting_of(request.args, stored, "dashboard.analysis.regression")
    view, status = regression_view(stored, weighting)
    return render_template("dashboard/regression.html", stored=stored, role=role, view=view,
                           weighting=weighting), max(status, weighting_status, view["weighting_status"])


@bp.route("/<slug>/regression/chart/effect<int:position>.svg")
def regression_chart(slug: str, position: int):
    """An effect chart of the regression page, as an SVG file (:mod:`.chart_files`)."""
    stored, _ = survey_for(slug)
    weighting, weighting_status = page_weights.weighting_of(request.args, stored, "dashboard.analysis.regression")
    view, status = regression_view(stored, weighting)
    if status == 400:
        abort(400, description=view["error"])
    if max(weighting_status, view["weighting_status"]) == 400:
        abort(400, description=weighting.error)
    drawn = view["charts"][position] if position < len(view["charts"]) else None
    return svg_file(drawn and drawn["chart"], f"{slug}-regression-effect{position}.svg", view["error"] or "")


def regression_view(stored, weighting=None) -> tuple[dict, int]:
    """What the regression page shows for the request's model, and its HTTP status; with ``weighting``
    (:func:`.weighting.weighting_of`, switched on and without an error) the fit under the raked weights,
    or the unweighted fit with the raking's error on ``weighting`` (``view["weighting_status"]`` 400)."""
    confidence_text, confidence = _confidence()
    asked = request.args.get("formula", "").strip()
    formula = asked or default_formula(stored.survey)
    reference = request.args.get("reference", "").strip() or None
    if len(formula) > MAX_FORMULA:
        abort(400, description=f"formula: at most {MAX_FORMULA} characters")
    view = {"formula": formula, "reference": reference or "", "confidence": confidence_text,
            "confidences": CONFIDENCES, "error": None, "result": None, "charts": [], "outcome": None,
            "references": [], "weighting_status": 200}
    status = 200
    try:
        outcome = parse_formula(formula, stored.survey).outcome
        # the select of the modelled option belongs to the outcome it was drawn for: a new outcome
        # typed in the model starts from its own default
        if request.args.get("reference_of", outcome.id) != outcome.id:
            reference = None
        view.update(outcome=outcome, references=reference_choices(outcome, reference))
        patterns = pattern_counts(get_readonly_db(), stored)
        raked = None
        if weighting is not None and weighting.on and not weighting.error:
            try:
                parsed, built, result, raked = sampling.fit_raked_formula(
                    patterns.dataset(), weighting.margins, formula, trim=weighting.trim, reference=reference,
                    confidence=confidence, survey=stored.survey)
            except (SamplingDesignError, FormulaError) as exc:
                # the margins cannot weight these answers, or raking cannot weight this outcome (a two-group
                # design's fit has no design-based variance): the unweighted fit, below, under a 400 saying why
                weighting.error, weighting.error_field = str(exc), getattr(exc, "field", None) or "rake"
                view["weighting_status"] = 400
            else:
                weighting.raking = raked.raking_dict()
        if raked is None:
            parsed, built, result = fit_formula(patterns, formula, reference=reference, confidence=confidence,
                                                survey=stored.survey)
    except FormulaError as exc:  # the message names the question (or the reference option, or why its type cannot)
        # the default model of a survey without any possible outcome is not a bad request: the page says why
        view["error"], status = str(exc), (400 if asked or reference else 200)
    except RegressionError as exc:  # the data cannot support this model: say why, on a normal page
        view["error"] = str(exc)
    else:
        view.update(formula=parsed.text, built=built, result=result, charts=effect_charts(result))
    return view, status


def monitor_data(stored, question) -> tuple[list[str], list]:
    """Per day, the question's cumulative sufficient statistics: from the answer patterns when they hold
    it, else from the stored rows' ``submitted_on`` day (Laplace numbers, check-all of > 7 options)."""
    from deniable.server.store.aggregates import daily_codes
    from deniable.server.survey.patterns import cumulative_stats, pattern_cumulative_stats

    db = get_readonly_db()
    if question.qtype.in_patterns(question):
        return pattern_cumulative_stats(pattern_counts(db, stored), question.id)
    days, codes = daily_codes(db, stored, question)
    return cumulative_stats(question, days, codes, np.ones(codes.size, dtype=np.int64))


@bp.route("/<slug>/monitoring")
def monitoring(slug: str):
    stored, role = survey_for(slug)
    return render_template("dashboard/monitoring.html", stored=stored, role=role, view=monitoring_view(stored))


@bp.route("/<slug>/monitoring/chart/band<int:position>.svg")
def monitoring_chart(slug: str, position: int):
    """An option's chart of the over-time page, as an SVG file (:mod:`.chart_files`)."""
    stored, _ = survey_for(slug)
    view = monitoring_view(stored)
    series = view["series"][position] if position < len(view["series"]) else None
    return svg_file(series and series["chart"], f"{slug}-{view['question'].id}-over-time-{position}.svg",
                    view["unavailable"] or ("" if series else "no answers on any day yet"))


def monitoring_view(stored) -> dict:
    """What the over-time page shows for the request's question and confidence."""
    confidence_text, confidence = _confidence()
    survey = stored.survey
    qid = request.args.get("question") or next((q.id for q in survey.questions if q.protected),
                                               survey.questions[0].id)
    if qid not in {q.id for q in survey.questions}:
        abort(400, description=f"question: survey {stored.slug!r} has no question {qid[:64]!r}")
    question = survey.question(qid)
    days, cumulative = monitor_data(stored, question)
    view = {"question": question, "confidence": confidence_text, "confidences": CONFIDENCES, "path": None,
            "series": [], "unavailable": None, "tuned_for": max(stored.target_n or 1, 1)}
    if days:
        try:
            path = question.qtype.monitor_series(question, days, cumulative, confidence=confidence,
                                                 tuned_for=view["tuned_for"])
        except NotAvailable as exc:  # the type has nothing to show over time: say why
            view["unavailable"] = str(exc)
        else:
            view["path"] = path
            which = ("confidence sequence (hatched) and the fixed-n exact interval (dashed)" if path["anytime"]
                     else "fixed-n interval (hatched; not anytime-valid)")
            for i, s in enumerate(path["series"]):
                view["series"].append({**s, "chart": analysis_charts.sequence_band(
                    path["labels"], path["n"], s["estimate"], s["ci_low"], s["ci_high"],
                    s["fixed_low"] if path["anytime"] else None, s["fixed_high"] if path["anytime"] else None,
                    lower=s["lower"], upper=s["upper"], chart_id=f"band{i}",
                    title=(f"{question.text} — {s['label']}: cumulative estimate by day with its {confidence:.0%} "
                           f"{which}"))})
    return view
