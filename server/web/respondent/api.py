"""The JSON API: ``GET /api/v1/surveys/<slug>``, the design a client needs to randomize and report.

Submitting, ``POST …/responses``, is :mod:`.submit_route`, answered in front of Flask.  The API
carries no CSRF token, so it is exempt from CSRF and instead refuses what a cross-site page
could send: a body that is not ``application/json`` (a cross-site form cannot set it without a
CORS preflight, which this app never grants), an ``Origin`` other than its own, or
``Sec-Fetch-Site: cross-site``.  Every failure is a 4xx ``{"error", "field"}``
(:func:`~deniable.server.web.errors.api_error`).
"""

from __future__ import annotations

from flask import Blueprint, jsonify

from deniable.server.store.surveys import get_launched_survey
from deniable.server.survey.definition import number

from ..app import csrf
from ..connections import get_db
from ..errors import api_error as error

bp = Blueprint("api", __name__, url_prefix="/api/v1")
csrf.exempt(bp)


def _published(slug):
    """The survey unless unknown or a draft; its design is parsed once per worker thread."""
    return get_launched_survey(get_db(), slug)


@bp.get("/surveys/<slug>")
def survey(slug):
    """The published design: questions, options and each protected question's mechanism."""
    stored = _published(slug)
    if stored is None:
        return error(404, f"no survey {slug!r}", "slug")
    questions = [question_design(q) for q in stored.survey.questions]
    return jsonify(slug=stored.slug, title=stored.survey.title, description=stored.survey.description,
                   status=stored.status, questions=questions)


def question_design(q) -> dict:
    """A question as the API publishes it: what a client needs to randomize and report.

    A choice: ``options``, ``k`` and, when protected, ``epsilon``, ``threshold``, ``p``, ``q``,
    ``realized_epsilon``.  The other types add ``type`` and their mechanism's integers: a numeric
    question ``min``, ``max``, ``step``, ``steps`` (m) and ``mechanism`` with ``grid`` and
    ``threshold`` (grid randomized response) or ``threshold`` and ``tail`` (discrete Laplace: reports
    are steps from min in ``−tail..m + tail``); a multi question ``options`` and each tick's
    ``threshold``, ``p``; a list experiment ``items``, ``sensitive`` and the count's ``threshold``
    (reports ``{"arm": 0|1, "count": c}``).
    """
    item = {"id": q.id, "text": q.text, "required": q.required, "protected": q.protected}
    if q.type != "choice":
        item["type"] = q.type
    mech = q.mechanism
    if q.type == "numeric":
        item.update(min=number(q.minimum), max=number(q.maximum), step=number(q.step), steps=q.steps)
        if q.protected:
            item.update(epsilon=q.epsilon, mechanism=q.method, threshold=mech.threshold,
                        realized_epsilon=mech.epsilon)
            if q.method == "grid":
                item.update(grid=q.grid, p=mech.rr.p, q=mech.rr.q)
            else:
                item.update(tail=mech.tail, t=mech.t)
        else:
            item["mechanism"] = "direct"
        return item
    if q.type == "list":
        item.update(items=list(q.options), sensitive=q.sensitive)
        if q.protected:
            item.update(epsilon=q.epsilon, k=mech.k, threshold=mech.threshold, p=mech.rr.p, q=mech.rr.q,
                        realized_epsilon=mech.epsilon)
        return item
    item.update(options=list(q.options), k=q.k)
    if q.protected:
        item.update(epsilon=q.epsilon, threshold=mech.threshold, p=mech.p, q=mech.q, realized_epsilon=mech.epsilon)
    return item
