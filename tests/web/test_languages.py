"""The respondents' pages in English, Spanish and French (Flask-Babel): from the browser's language or
the survey's own, the privacy sentences included; the dashboard stays in English."""

from __future__ import annotations

import html
import re

import pytest

from deniable.server.store.surveys import set_status
from support.dashboard import DEFINITION, make_survey, open_db

PAGES = {
    "en": ["How your answers are protected", "Send my answers",
           "Your device sends your true answer 73.2% of the time; otherwise it sends the other answer.",
           "can be at most 73.2% sure of it", "(required)"],
    "es": ["Cómo se protegen tus respuestas", "Enviar mis respuestas",
           "Tu dispositivo envía tu respuesta verdadera el 73,2\u00a0% de las veces; si no, envía la otra respuesta.",
           "puede estar, como mucho, un 73,2\u00a0% seguro de ella", "(obligatoria)"],
    "fr": ["Comment vos réponses sont protégées", "Envoyer mes réponses",
           "Votre appareil envoie votre vraie réponse 73,2\u00a0% du temps ; sinon il envoie l’autre réponse.",
           "peut en être sûr au plus à 73,2\u00a0%", "(obligatoire)"],
}


def page(client, url, language=None):
    headers = {"Accept-Language": language} if language else {}
    response = client.get(url, headers=headers)
    return response, html.unescape(response.get_data(as_text=True))


@pytest.mark.parametrize("lang, header", [("en", "en-GB,en;q=0.9"), ("es", "es-MX,es;q=0.9,en;q=0.5"),
                                          ("fr", "fr-CA,fr;q=0.8")])
def test_the_survey_page_speaks_the_browsers_language(app, client, lang, header):
    make_survey(app, status="open")
    response, text = page(client, "/s/habits", header)
    assert response.status_code == 200 and f'<html lang="{lang}">' in text
    for phrase in PAGES[lang]:
        assert phrase in text, phrase
    for other in PAGES:
        if other != lang:
            assert PAGES[other][0] not in text


def test_the_surveys_own_language_wins_over_the_browsers(app, client):
    make_survey(app, {**DEFINITION, "language": "es"}, status="open")
    _, text = page(client, "/s/habits", "fr-FR,fr;q=0.9")
    assert '<html lang="es">' in text and "Enviar mis respuestas" in text


def test_an_unknown_language_falls_back_to_english(app, client):
    make_survey(app, status="open")
    _, text = page(client, "/s/habits", "de-DE,de;q=0.9")
    assert '<html lang="en">' in text and "Send my answers" in text


@pytest.mark.parametrize("lang, closed, thanks", [
    ("es", "ya no acepta respuestas", "Gracias"), ("fr", "n’accepte plus de réponses", "Merci")])
def test_the_closed_and_thank_you_pages_are_translated(app, client, lang, closed, thanks):
    make_survey(app, status="open")
    _, text = page(client, "/s/habits/thanks", lang)
    assert f"<h1>{thanks}</h1>" in text
    db = open_db(app)
    set_status(db, "habits", "closed")
    db.conn.close()
    response, text = page(client, "/s/habits", lang)
    assert response.status_code == 410 and closed in text


def test_an_unknown_survey_is_a_translated_404(client):
    response, text = page(client, "/s/nope", "fr")
    assert response.status_code == 404 and "Introuvable" in text and "Il n’y a pas de questionnaire nommé 'nope'." in text


def test_the_dashboard_stays_in_english(app, auth_client):
    make_survey(app, status="open")
    text = auth_client.get("/dashboard/habits/results", headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert '<html lang="en">' in text and "Respondents so far" in text
    assert re.search(r"Skip to main content", text)
