"""Analysis pages of the dashboard: regression on a (randomized) answer, and monitoring over time.

Both read answer patterns (:func:`deniable.server.store.aggregates.pattern_counts`, kept current
on every insert), never one row per response, and every route goes through
:func:`.permissions.survey_for` (a researcher without a role on the survey gets a 404).
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from deniable import estimators
from deniable.estimators import RegressionError
from deniable.server.store.aggregates import pattern_counts
from deniable.server.survey.patterns import daily_counts
from deniable.server.survey.regression import FormulaError, fit_formula

from ..connections import get_readonly_db
from . import analysis_charts, charts
from .auth import require_login
from .permissions import survey_for
from .results import CONFIDENCES

bp = Blueprint("analysis", __name__, url_prefix="/dashboard")
MAX_FORMULA = 500


@bp.before_request
def _login():
    return require_login()


def _confidence() -> tuple[str, float]:
    text = request.args.get("confidence", "0.95")
    if text not in CONFIDENCES:
        abort(400, description=f"confidence: choose one of {', '.join(CONFIDENCES)}")
    return text, float(text)


def default_formula(survey) -> str:
    """The first protected question on every question asked directly (or on 1)."""
    outcome = next((q for q in survey.questions if q.protected), survey.questions[0])
    covariates = [q.id for q in survey.questions if not q.protected and q.id != outcome.id]
    return f"{outcome.id} ~ {' + '.join(covariates) or '1'}"


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
    confidence_text, confidence = _confidence()
    formula = request.args.get("formula", "").strip() or default_formula(stored.survey)
    reference = request.args.get("reference", "").strip() or None
    if len(formula) > MAX_FORMULA:
        abort(400, description=f"formula: at most {MAX_FORMULA} characters")
    view = {"formula": formula, "reference": reference or "", "confidence": confidence_text,
            "confidences": CONFIDENCES, "error": None, "result": None, "charts": []}
    status = 200
    try:
        parsed, built, result = fit_formula(pattern_counts(get_readonly_db(), stored), formula,
                                            reference=reference, confidence=confidence)
    except FormulaError as exc:  # the message names the question (or the reference option)
        view["error"], status = str(exc), 400
    except RegressionError as exc:  # the data cannot support this model: say why, on a normal page
        view["error"] = str(exc)
    else:
        view.update(formula=parsed.text, built=built, result=result, charts=effect_charts(result))
    return render_template("dashboard/regression.html", stored=stored, role=role, view=view), status


@bp.route("/<slug>/monitoring")
def monitoring(slug: str):
    stored, role = survey_for(slug)
    confidence_text, confidence = _confidence()
    survey = stored.survey
    qid = request.args.get("question") or next((q.id for q in survey.questions if q.protected),
                                               survey.questions[0].id)
    if qid not in {q.id for q in survey.questions}:
        abort(400, description=f"question: survey {slug!r} has no question {qid[:64]!r}")
    question = survey.question(qid)
    days, table = daily_counts(pattern_counts(get_readonly_db(), stored), qid)
    view = {"question": question, "confidence": confidence_text, "confidences": CONFIDENCES, "path": None,
            "options": [], "tuned_for": max(stored.target_n or 1, 1)}
    if days:
        path = estimators.monitor_path(table, question.epsilon, labels=days, confidence=confidence,
                                       tuned_for=view["tuned_for"])
        view["path"] = path
        for i, label in enumerate(question.options):
            view["options"].append({"label": label, "chart": analysis_charts.sequence_band(
                path.labels, path.n, path.estimate[:, i], path.ci_low[:, i], path.ci_high[:, i],
                path.fixed_low[:, i], path.fixed_high[:, i], chart_id=f"band{i}",
                title=(f"{question.text} — {label}: cumulative estimate by day with its {confidence:.0%} "
                       f"confidence sequence (hatched) and the fixed-n exact interval (dashed)"))})
    return render_template("dashboard/monitoring.html", stored=stored, role=role, view=view)
