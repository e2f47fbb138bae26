"""The respondent's pages: the survey form (``/s/<slug>``) and the thank-you page.

The page carries each protected question's mechanism only as the integers ``data-k`` and
``data-threshold``; ``survey.js`` randomizes in the browser and fills the hidden fields.  The
POST is validated and stored exactly like the JSON API (:func:`.group_commit.submit`); a
rejected submission re-renders the form with a message naming the question, stores nothing.  A
closed survey answers every entry point (the page, the form's POST) with the same friendly page.  An
invitation-only survey opened without a link, or with a link that is unknown or used, says so on
arrival (403) instead of showing questions that could not be sent; the link is checked, not used up.
Pages are in the survey's language, or the browser's (:mod:`..i18n`); a survey with translations is shown
in the language chosen (``?lang=``, the browser's, its own): :func:`respondent_view` puts the translated
texts and option labels in place of the originals before anything is rendered, and the page links each of
its languages.  Only the words change: the form, the reports and their validation are the original's.
"""

from __future__ import annotations

from dataclasses import replace

from flask import (Blueprint, abort, current_app, g, redirect, render_template, request, send_from_directory,
                   session, url_for)
from flask_babel import gettext as _

from deniable.server.store import invitations
from deniable.server.store.invitations import InvitationError
from deniable.server.store.responses import ReportError, SurveyClosedError
from deniable.server.store.surveys import StoredSurvey, get_survey
from deniable.server.survey.explain import explain_survey
from deniable.server.survey.translations import languages, translated

from ..connections import get_db
from ..i18n import LANGUAGE_NAMES, choose_language, explain_options, set_survey_language
from ..paths import STATIC
from ..ratelimit import limited
from .forms import build_form, form_reports, unknown_fields
from .group_commit import submit as submit_response
from .typed import card_scripts, survey_page_data

bp = Blueprint("respond", __name__)
MAX_TOKEN_LENGTH = 64  # invitation tokens are 24 characters


def load_published(slug: str) -> StoredSurvey:
    """The survey if respondents may see it (open or closed); 404 for a draft or unknown slug."""
    stored = get_survey(get_db(), slug)
    if stored is None or stored.status == "draft":
        abort(404, _("There is no survey called %(slug)s.", slug=repr(slug)))
    language = choose_language(stored.survey)
    set_survey_language(language)
    # asked for on this request (?lang=): the form's action and the thank-you page keep it (keep_language)
    g.asked_language = language if language and request.args.get("lang") == language else None
    return stored


@bp.url_defaults
def keep_language(endpoint: str, values: dict) -> None:
    """A language asked for with ``?lang=`` stays on the addresses this page builds (the form's action, the
    redirect to the thank-you page)."""
    if g.get("asked_language") and "lang" not in values:
        values["lang"] = g.asked_language


def respondent_view(stored: StoredSurvey) -> StoredSurvey:
    """``stored`` as the respondent reads it on this request: its survey in the page's language
    (:func:`~deniable.server.survey.translations.translated`; the design is the same)."""
    return replace(stored, survey=translated(stored.survey, g.get("survey_language")))


def language_links(survey, invitation: str | None) -> list[tuple[str, str, str]]:
    """``(code, name, address)`` of each language the survey is written in, for the switch (none for one
    language); an invitation link's token stays on the address."""
    offered = languages(survey)
    if len(offered) < 2:
        return []
    endpoint = "respond.survey" if request.endpoint == "respond.submit" else request.endpoint
    extra = {"t": invitation} if invitation else {}
    return [(code, LANGUAGE_NAMES[code], url_for(endpoint, **(request.view_args or {}), **extra, lang=code))
            for code in offered]


def render_closed(stored: StoredSurvey, status: int = 410):
    """The friendly page for a survey that no longer accepts answers (any entry point)."""
    return render_template("closed.html", survey=respondent_view(stored).survey), status


def render_survey(stored: StoredSurvey, form=None, *, error: str | None = None,
                  error_field: str | None = None, status: int = 200, preview: bool = False):
    if stored.status != "open" and not preview:
        return render_closed(stored)
    invitation = request.form.get("invitation") or request.args.get("t") or None
    if invitation is not None and len(invitation) > MAX_TOKEN_LENGTH:
        invitation = None  # not one of ours: never echo arbitrary data back into the page
    gate = None  # why this person cannot answer, said on arrival instead of the questions
    if stored.invitation_only and error is None and not preview:
        if invitation is None:
            gate = _("This survey is by invitation only: please open it through the invitation link you received.")
        elif not invitations.usable(get_db(), stored.id, invitation):  # checked, not used up
            gate = _("This invitation link is not valid for this survey, or it has been used already. Please "
                     "open the whole link from your invitation, or ask the researchers for a new one.")
        status = 403 if gate else status
    links = language_links(stored.survey, invitation)
    stored = respondent_view(stored)
    return render_template(
        "survey.html", stored=stored, survey=stored.survey, form=form or build_form(stored.survey),
        privacy=explain_survey(stored.survey, **explain_options()), error=error, error_field=error_field,
        invitation=invitation, preview=preview, typed=survey_page_data(stored.survey),
        card_scripts=card_scripts(stored.survey), gate=gate, languages=links,
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
        submit_response(current_app._get_current_object(), stored, reports, request.form.get("invitation"))
    except InvitationError as exc:
        return render_survey(stored, form, error=str(exc), error_field=exc.field, status=403)
    except SurveyClosedError:
        return render_closed(stored, 409)
    except ReportError as exc:
        return render_survey(stored, form, error=str(exc), error_field=exc.field, status=400)
    # Nothing about the answers goes into the session cookie: the thank-you page shows what was
    # sent from the tab's own sessionStorage (thanks.js).
    return redirect(url_for("respond.thanks", slug=slug), code=303)


@bp.get("/s/<slug>/thanks")
def thanks(slug):
    stored = respondent_view(load_published(slug))
    session.pop("sent", None)  # what a session of an earlier version may still hold
    return render_template("thanks.html", survey=stored.survey, typed=survey_page_data(stored.survey),
                           privacy=explain_survey(stored.survey, **explain_options()))


@bp.get("/favicon.ico")
def favicon():
    """Browsers ask for it on every page (pages also link the SVG): no 404 in the console."""
    return send_from_directory(STATIC, "favicon.svg", mimetype="image/svg+xml", max_age=86400)
