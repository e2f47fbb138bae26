"""The respondent's pages: the survey form (``/s/<slug>``) and the thank-you page.

The page carries each protected question's mechanism only as the integers ``data-k`` and
``data-threshold``; ``survey.js`` randomizes in the browser and fills the hidden fields.  The
POST is validated exactly like the JSON API (:func:`deniable.server.store.responses.store_response`); a
rejected submission re-renders the form with a message naming the question, stores nothing.
"""

from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, session, url_for

from deniable.server.store.invitations import InvitationError
from deniable.server.store.responses import ReportError, SurveyClosedError, store_response
from deniable.server.store.surveys import StoredSurvey, get_survey
from deniable.server.survey.explain import explain_survey

from ..connections import get_db
from ..ratelimit import limited
from .forms import build_form, form_reports, unknown_fields
from .typed import survey_page_data

bp = Blueprint("respond", __name__)
MAX_TOKEN_LENGTH = 64  # invitation tokens are 24 characters


def load_published(slug: str) -> StoredSurvey:
    """The survey if respondents may see it (open or closed); 404 for a draft or unknown slug."""
    stored = get_survey(get_db(), slug)
    if stored is None or stored.status == "draft":
        abort(404, f"There is no survey called {slug!r}.")
    return stored


def render_survey(stored: StoredSurvey, form=None, *, error: str | None = None,
                  error_field: str | None = None, status: int = 200):
    if stored.status != "open":
        return render_template("error.html", code=410, title="This survey is closed",
                               message=f"“{stored.survey.title}” no longer accepts answers. Thank you for your interest."), 410
    invitation = request.form.get("invitation") or request.args.get("t") or None
    if invitation is not None and len(invitation) > MAX_TOKEN_LENGTH:
        invitation = None  # not one of ours: never echo arbitrary data back into the page
    if stored.invitation_only and invitation is None and error is None:
        error = ("This survey is by invitation only: please open it through the invitation link "
                 "you received.")
    return render_template(
        "survey.html", stored=stored, survey=stored.survey, form=form or build_form(stored.survey),
        privacy=explain_survey(stored.survey), error=error, error_field=error_field,
        invitation=invitation, typed=survey_page_data(stored.survey),
    ), status


def render_with_error(slug: str, message: str, status: int):
    """Re-render a survey's form with ``message`` (used for a failed CSRF check as well)."""
    return render_survey(load_published(slug), error=message, status=status)


@bp.get("/s/<slug>")
def survey(slug):
    return render_survey(load_published(slug))


@bp.post("/s/<slug>")
@limited("RATELIMIT_SUBMIT", scope="submit")  # one count with the JSON API
def submit(slug):
    stored = load_published(slug)
    form = build_form(stored.survey, request.form)
    extra = unknown_fields(stored.survey, request.form)
    try:
        if extra:
            raise ReportError(f"{extra[0][:64]}: this survey has no question with this id", extra[0][:64])
        reports = form_reports(stored.survey, form)
        store_response(get_db(), stored, reports, request.form.get("invitation"))
    except InvitationError as exc:
        return render_survey(stored, form, error=str(exc), error_field=exc.field, status=403)
    except SurveyClosedError as exc:
        return render_template("error.html", code=409, title="This survey is closed", message=str(exc)), 409
    except ReportError as exc:
        return render_survey(stored, form, error=str(exc), error_field=exc.field, status=400)
    # Nothing about the answers goes into the session cookie: the thank-you page shows what was
    # sent from the tab's own sessionStorage (thanks.js).
    return redirect(url_for("respond.thanks", slug=slug), code=303)


@bp.get("/s/<slug>/thanks")
def thanks(slug):
    stored = load_published(slug)
    session.pop("sent", None)  # what a session of an earlier version may still hold
    return render_template("thanks.html", survey=stored.survey, typed=survey_page_data(stored.survey))
