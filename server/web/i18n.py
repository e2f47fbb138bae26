"""Translations of the respondents' pages (Flask-Babel): English, Spanish and French.

The survey page, the thank-you page, the closed and error pages under ``/s/`` and the privacy
sentences (:mod:`deniable.server.survey.explain`) are translated; the dashboard is in English.
A survey with translations (:mod:`deniable.server.survey.translations`) is read in the language asked for
with ``?lang=xx`` when it has that language, else in the best match of the browser's ``Accept-Language``
among its languages, else in its own (:func:`choose_language`): the interface and the survey's texts
speak the same language.  A survey without translations is read in its ``language`` when it has one,
else in the browser's best match (its texts as written).  Catalogs live in ``server/translations``
(``scripts/translations.sh`` extracts, updates and compiles them).
"""

from __future__ import annotations

from pathlib import Path

from flask import g, request
from flask_babel import get_locale, gettext

import deniable.server
from deniable.server.survey.definition import LANGUAGES
from deniable.server.survey.translations import languages

from .extensions import babel

TRANSLATIONS = Path(deniable.server.__file__).resolve().parent / "translations"
RESPONDENT_BLUEPRINTS = {"respond", None}  # None: a page no blueprint handles (a 404 under /s/)


def select_locale() -> str:
    """The survey's language, else the browser's best match for a respondent's page (or the
    dashboard's preview of one); English elsewhere."""
    if not request or (request.blueprint not in RESPONDENT_BLUEPRINTS and not g.get("respondent_page")):
        return "en"
    language = g.get("survey_language")
    if language in LANGUAGES:
        return language
    return request.accept_languages.best_match(LANGUAGES) or "en"


LANGUAGE_NAMES = {"en": "English", "es": "Español", "fr": "Français"}  # each in its own language: the switch


def choose_language(survey) -> str | None:
    """The language a respondent reads ``survey`` in on this request: ``?lang=`` among the survey's
    languages, else the browser's best match among them, else the survey's own; None when the survey
    has neither a language nor translations (the browser's language then, :func:`select_locale`)."""
    offered = languages(survey)
    if not offered:
        return None
    asked = request.args.get("lang")
    if asked in offered:
        return asked
    return request.accept_languages.best_match(offered) or offered[0]


def set_survey_language(language: str | None, *, preview: bool = False) -> None:
    """Respond in ``language`` on this request (call before anything is translated); ``preview``:
    a dashboard page showing the respondents' page, in their language."""
    g.survey_language = language
    if preview:
        g.respondent_page = True


def locale() -> str:
    """The language of this request's page, e.g. ``"fr"`` (for ``<html lang>`` and number formats)."""
    return str(get_locale() or "en")


def explain_options() -> dict:
    """The keyword arguments that make :mod:`~deniable.server.survey.explain` speak this page's language."""
    return {"gettext": gettext, "locale": locale()}


def init_app(app) -> None:
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(TRANSLATIONS))
    babel.init_app(app, locale_selector=select_locale)
    app.context_processor(lambda: {"page_language": locale()})
