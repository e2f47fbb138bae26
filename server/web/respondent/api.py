"""The JSON API: ``GET /api/v1/surveys/<slug>``, the design a client needs to randomize and report.

Submitting, ``POST …/responses``, is :mod:`.submit_route`, answered in front of Flask; its rule is
here too, ``api.submit``, built but never matched, so that ``flask routes`` lists it and ``url_for``
builds it.  The API
carries no CSRF token, so it is exempt from CSRF and instead refuses what a cross-site page
could send: a body that is not ``application/json`` (a cross-site form cannot set it without a
CORS preflight, which this app never grants), an ``Origin`` other than its own, or
``Sec-Fetch-Site: cross-site``.  Every failure is a 4xx ``{"error", "field"}``
(:func:`~deniable.server.web.errors.api_error`).
"""

from __future__ import annotations

from flask import Blueprint, jsonify

from deniable.server.store.surveys import get_launched_survey
from deniable.server.survey.recipes import design_document  # also what the embed mounts from

from ..connections import get_db
from ..errors import api_error as error
from ..extensions import csrf

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
    return jsonify(status=stored.status, **design_document(stored.survey))


# Listed, never matched (build_only): werkzeug would take paths that submit_route does not (//api/…,
# merged slashes) and answer them otherwise than the 404 they get.
@bp.post("/surveys/<slug>/responses", build_only=True, provide_automatic_options=False)
def submit(slug):
    """Never runs: :class:`.submit_route.SubmitRoute` answers this path before Flask sees the request."""
    raise RuntimeError("POST …/responses is answered by submit_route.SubmitRoute in front of Flask")
