"""``GET /api/v1/surveys/<slug>/estimates`` (login required: a JSON 401 without): the estimates of
``deniable estimate``; with ``?rake=MARGINS`` (and ``&trim=LOW,HIGH``, the results page's weighting,
:mod:`.weighting`) the raked ones of ``deniable estimate --db FILE SLUG --rake MARGINS.json``."""

from __future__ import annotations

import json

from flask import Blueprint, Response, request
from werkzeug.exceptions import HTTPException

from deniable.server.store.surveys import survey_stats
from deniable.server.survey.estimates import Estimates
from deniable.server.survey.analysis import marginal_estimates

from deniable.estimators.weights import SamplingDesignError

from ..connections import get_readonly_db
from ..errors import api_error
from .permissions import survey_for
from .results import ResultsForm, respondents_from_counts
from .weighting import page_weighting, weighted_results

bp = Blueprint("api", __name__, url_prefix="/api/v1")


@bp.errorhandler(HTTPException)
def _json_errors(exc: HTTPException):
    return api_error(exc.code or 500, exc.description)


@bp.route("/surveys/<slug>/estimates")
def estimates(slug: str):
    """Every question's estimates, in the docs/design.md estimates format (the same JSON as the export)."""
    db = get_readonly_db()
    stored, _ = survey_for(slug)
    form = ResultsForm(request.args)
    if not form.validate():
        field, problems = next(iter(form.errors.items()))
        return api_error(400, f"{field}: {' '.join(problems)}", field)
    if "rake" in request.args:
        return _raked(db, stored, form)
    stats = survey_stats(db, stored)
    results = marginal_estimates(stored.survey, stats, method=form.method.data,
                                 confidence=form.confidence_value, simultaneous=form.simultaneous.data,
                                 monitoring=form.monitoring.data, tuned_for=max(stored.target_n, 1))
    return Response(estimates_json(Estimates(stored.survey, respondents_from_counts(db, stored, stats), results)),
                    mimetype="application/json")


def estimates_json(estimates: Estimates) -> str:
    """The JSON of ``deniable estimate --format json``: the survey, its respondents, every question."""
    return json.dumps(estimates.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _raked(db, stored, form: ResultsForm):
    """The raked estimates' document, or a 400 naming the field (a margin, ``rake``, ``trim``, or a
    selector raking does not take: its intervals are Korn and Graubard's, and monitoring is unweighted)."""
    for name, given in (("method", request.args.get("method", "exact") != "exact"), ("monitoring", form.monitoring.data)):
        if given:
            return api_error(400, f"{name}: does not go with rake (raked intervals are Korn and Graubard's; "
                                  "monitoring is unweighted)", name)
    try:
        weighting = page_weighting(request.args, stored.survey, "dashboard.api.estimates", stored.slug)
    except SamplingDesignError as exc:
        return api_error(400, str(exc), exc.field)
    document = weighted_results(db, stored, weighting, form.confidence_value, form.simultaneous.data)
    if document is None:
        return api_error(400, weighting.error, weighting.error_field)
    return Response(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
                    mimetype="application/json")
