"""The JSON API: ``/api/v1/surveys/<slug>`` (the design) and ``…/responses`` (submit reports).

The API carries no CSRF token, so it is exempt from CSRF and instead refuses what a
cross-site page could send: a body that is not ``application/json`` (a cross-site form cannot
set it without a CORS preflight, which this app never grants), an ``Origin`` other than its
own, or ``Sec-Fetch-Site: cross-site``.  Every failure is a 4xx ``{"error", "field"}`` (:func:`~deniable.server.web.errors.api_error`).
"""

from __future__ import annotations

import json

from flask import Blueprint, jsonify, request

from deniable.server.store.invitations import InvitationError
from deniable.server.store.responses import ReportError, SurveyClosedError, store_response
from deniable.server.store.surveys import get_launched_survey
from deniable.server.survey.definition import number

from ..app import csrf
from ..connections import get_db
from ..errors import api_error as error
from ..ratelimit import limited

bp = Blueprint("api", __name__, url_prefix="/api/v1")
csrf.exempt(bp)


def _no_duplicate_keys(pairs):
    data = {}
    for key, value in pairs:
        if key in data:
            raise ReportError(f"{key}: appears more than once", key)
        data[key] = value
    return data


def _published(slug):
    """The survey unless unknown or a draft; its design is parsed once per worker thread."""
    return get_launched_survey(get_db(), slug)


def _cross_site() -> str | None:
    """Why the request looks cross-site, or None."""
    origin = request.headers.get("Origin")
    if origin is not None and origin.rstrip("/") != request.host_url.rstrip("/"):
        return f"cross-origin requests are refused (Origin {origin[:100]!r})"
    if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        return "cross-site requests are refused (Sec-Fetch-Site: cross-site)"
    return None


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


@bp.post("/surveys/<slug>/responses")
@limited("RATELIMIT_SUBMIT", scope="submit")
def submit(slug):
    """Store one response ``{"reports": {qid: option index}}``; 201 ``{"id": …}``."""
    why = _cross_site()
    if why:
        return error(403, why, "Origin")
    if request.mimetype != "application/json":
        return error(415, f"Content-Type must be application/json, got {request.mimetype or 'none'!r}",
                     "Content-Type")
    stored = _published(slug)
    if stored is None:
        return error(404, f"no survey {slug!r}", "slug")
    try:
        try:
            body = json.loads(request.get_data(), object_pairs_hook=_no_duplicate_keys)
        except (ValueError, RecursionError) as exc:
            if isinstance(exc, ReportError):
                raise
            raise ReportError("body: not valid JSON (UTF-8) or too deeply nested", "body") from None
        if not isinstance(body, dict):
            raise ReportError('body: must be a JSON object {"reports": {...}}', "body")
        extra = sorted(set(body) - {"reports", "invitation"})
        if extra:
            raise ReportError(f"{extra[0][:64]}: unknown key (the body holds \"reports\" and, "
                              "for an invitation-only survey, \"invitation\")", extra[0][:64])
        if "reports" not in body:
            raise ReportError('reports: is required ({"reports": {"<question id>": <option index>}})', "reports")
        response_id = store_response(get_db(), stored, body["reports"], body.get("invitation"))
    except InvitationError as exc:
        return error(403, str(exc), exc.field)
    except SurveyClosedError:
        return error(409, f"This survey is closed: “{stored.survey.title}” no longer accepts answers. "
                          "Thank you for your interest.", "slug")
    except ReportError as exc:
        return error(400, str(exc), exc.field)
    return jsonify(id=response_id), 201
