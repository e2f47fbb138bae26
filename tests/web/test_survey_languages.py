"""A survey in several languages on the real app: the respondent's page speaks one language, texts and
interface together, chosen by ``?lang=`` (the switch's links), else the browser, else the survey's own;
the report is the option's index whatever the language; the dashboard's import, export, builder and
codebook keep the translations."""

from __future__ import annotations

import copy
import html
import io
import json
import re

import pytest

from deniable.server.store.surveys import get_survey, set_status
from deniable.server.store.wording import fix_wording
from deniable.server.survey.definition import design_fingerprint, parse_definition
from support.dashboard import builder_form, csrf_token, make_survey, open_db

DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "age", "text": "Age group", "options": ["Under 30", "30 or older"]},
        {"id": "drinks", "text": "Drinks last week?", "type": "numeric", "min": 0, "max": 30, "epsilon": 1.0},
        {"id": "shop", "text": "How many apply?", "type": "list", "items": ["I cycle", "I cook"],
         "sensitive": "I shoplifted", "epsilon": 1.0},
    ],
    "translations": {
        "es": {"title": "Hábitos", "description": "Una encuesta de prueba.",
               "questions": {"drugs": {"text": "¿Consumió drogas este año?", "options": ["Sí", "No"]},
                             "age": {"text": "Grupo de edad", "options": ["Menos de 30", "30 o más"]},
                             "drinks": {"text": "¿Bebidas la semana pasada?"},
                             "shop": {"text": "¿Cuántas se aplican?", "items": ["Voy en bici", "Cocino"],
                                      "sensitive": "Robé en una tienda"}}},
        "fr": {"title": "Habitudes", "questions": {"age": {"options": ["Moins de 30 ans", "30 ans ou plus"]}}},
    },
}
ENGLISH = ["Habits", "Used drugs this year?", "Under 30", "Drinks last week?", "I cycle", "I shoplifted",
           "Send my answers"]
SPANISH = ["Hábitos", "¿Consumió drogas este año?", "Menos de 30", "¿Bebidas la semana pasada?", "Voy en bici",
           "Robé en una tienda", "Enviar mis respuestas"]


def get(client, url, language=None):
    response = client.get(url, headers={"Accept-Language": language} if language else {})
    return response, html.unescape(response.get_data(as_text=True))


def switch(text: str) -> dict[str, str | None]:
    """The language switch: code → its link (None for the page's own language)."""
    box = re.search(r'<p class="language-switch" id="language-switch">(.*?)</p>', text, re.S)
    assert box, "no language switch"
    found = {code: href for href, code in re.findall(r'<a href="([^"]*)" lang="(\w+)"', box.group(1))}
    found.update({code: None for code in re.findall(r'<span lang="(\w+)" aria-current="page">', box.group(1))})
    return found


@pytest.fixture
def habits(app):
    return make_survey(app, DEFINITION, status="open")


@pytest.mark.parametrize("url, header", [("/s/habits?lang=es", None), ("/s/habits?lang=es", "fr-FR,fr;q=0.9"),
                                         ("/s/habits", "es-MX,es;q=0.9,en;q=0.5"), ("/s/habits?lang=de", "es")])
def test_spanish_texts_with_the_spanish_interface(client, habits, url, header):
    response, text = get(client, url, header)
    assert response.status_code == 200 and '<html lang="es">' in text
    for phrase in SPANISH:
        assert phrase in text, phrase
    for phrase in ENGLISH:
        assert phrase not in text, phrase
    assert "Cómo se protegen tus respuestas" in text  # the interface's catalog, as before
    links = switch(text)
    assert links["es"] is None and set(links) == {"en", "es", "fr"}
    assert links["en"].endswith("/s/habits?lang=en") and links["fr"].endswith("/s/habits?lang=fr")


@pytest.mark.parametrize("url, header", [("/s/habits", None), ("/s/habits", "de-DE,de;q=0.9"),
                                         ("/s/habits?lang=en", "es"), ("/s/habits?lang=xx", None)])
def test_english_when_asked_or_when_the_browser_has_none_of_the_surveys_languages(client, habits, url, header):
    _, text = get(client, url, header)
    assert '<html lang="en">' in text
    for phrase in ENGLISH:
        assert phrase in text, phrase
    assert "Hábitos" not in text and switch(text)["en"] is None


def test_a_partial_translation_keeps_the_original_words_where_it_has_none(client, habits):
    _, text = get(client, "/s/habits", "fr-CA,fr;q=0.8")
    assert '<html lang="fr">' in text and "<h1>Habitudes</h1>" in text and "Moins de 30 ans" in text
    assert "Used drugs this year?" in text and "Envoyer mes réponses" in text


def test_the_mechanism_on_the_page_is_the_same_in_every_language(client, habits):
    pages = [get(client, f"/s/habits?lang={code}")[1] for code in ("en", "es", "fr")]
    designs = [re.findall(r'data-k="\d+"|data-threshold="\d+"|data-[a-z-]+="-?\d+"', page) for page in pages]
    assert designs[0] and designs[0] == designs[1] == designs[2]


def test_a_display_condition_shows_on_every_language_s_page(app, client):
    data = copy.deepcopy(DEFINITION)
    data["questions"][0]["show_if"] = {"question": "age", "in": ["30 or older"]}
    data["questions"][0], data["questions"][1] = data["questions"][1], data["questions"][0]
    make_survey(app, data, status="open")
    pages = {code: get(client, f"/s/habits?lang={code}") for code in ("en", "es", "fr")}
    assert all(response.status_code == 200 for response, _ in pages.values())
    conditions = {code: re.findall(r'data-show-if="age" data-show-in="([^"]*)"', text) for code, (_, text) in pages.items()}
    assert conditions["en"] == conditions["es"] == conditions["fr"] == ["1"]
    assert "30 o más" in pages["es"][1] and "30 ans ou plus" in pages["fr"][1]


def test_a_survey_without_translations_has_no_switch(app, client):
    make_survey(app, {key: value for key, value in DEFINITION.items() if key != "translations"}, status="open")
    _, text = get(client, "/s/habits?lang=es", "fr")
    assert 'id="language-switch"' not in text
    assert '<html lang="fr">' in text and "Used drugs this year?" in text  # the interface follows the browser, as before


def form_token(text: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', text).group(1)


def test_sent_from_the_spanish_page_the_reports_are_the_option_indices(app, client, habits, stored_state):
    _, text = get(client, "/s/habits?lang=es")
    action = re.search(r'<form method="post" action="([^"]*)"', text).group(1)
    assert action == "/s/habits?lang=es"  # the language stays on through the submission
    response = client.post(action, data={"csrf_token": form_token(text), "drugs": "1", "age": "0",
                                         "drinks": "1", "shop": "1:2"})
    assert response.status_code == 303, re.findall(r'class="form-error".*?</div>', response.get_data(as_text=True), re.S)
    assert response.headers["Location"].endswith("/s/habits/thanks?lang=es")
    rows, _ = stored_state()
    assert [json.loads(row["reports"]) for row in rows] == [{"drugs": 1, "age": 0, "drinks": 1,
                                                              "shop": {"arm": 1, "count": 2}}]
    _, thanks = get(client, "/s/habits/thanks?lang=es")
    assert '<html lang="es">' in thanks and "«Hábitos»" in thanks and "Grupo de edad" in thanks


def test_a_refused_submission_is_said_again_in_the_same_language(client, habits, stored_state):
    _, text = get(client, "/s/habits?lang=es")
    response = client.post("/s/habits?lang=es", data={"csrf_token": form_token(text), "drugs": "7"})
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 400 and '<html lang="es">' in page and "Tus respuestas no se enviaron." in page
    assert "¿Consumió drogas este año?" in page and switch(page)["es"] is None
    assert stored_state()[0] == []


def test_the_invitation_link_stays_on_the_switch(app, client, habits):
    db = open_db(app)
    db.execute("UPDATE surveys SET invitation_only = 1 WHERE slug = 'habits'")
    db.conn.commit()
    db.conn.close()
    _, text = get(client, "/s/habits?t=abc123")
    assert switch(text)["es"].endswith("/s/habits?t=abc123&lang=es")


def test_the_closed_page_and_the_preview_are_translated(app, client, auth_client, habits):
    _, preview = get(auth_client, "/dashboard/habits/preview?lang=es")
    assert "<h1>Hábitos</h1>" in preview and "Menos de 30" in preview
    assert switch(preview)["en"].endswith("/dashboard/habits/preview?lang=en")
    db = open_db(app)
    set_status(db, "habits", "closed")
    db.conn.close()
    response, text = get(client, "/s/habits?lang=es")
    assert response.status_code == 410 and "«Hábitos» ya no acepta respuestas" in text


def test_a_wording_fix_keeps_the_translations(app, client, habits):
    db = open_db(app)
    fixed = fix_wording(db, "habits", {"title": "Habits, fixed"}, changed_by="test")
    db.conn.close()
    assert fixed.survey.title == "Habits, fixed"
    assert fixed.survey.translations == parse_definition(DEFINITION).translations
    assert "<h1>Hábitos</h1>" in get(client, "/s/habits?lang=es")[1]
    assert "<h1>Habits, fixed</h1>" in get(client, "/s/habits?lang=en")[1]


def import_text(client, text: str):
    token = csrf_token(client, "/dashboard/")
    return client.post("/dashboard/import", data={"csrf_token": token, "target_n": "100",
                                                  "definition": (io.BytesIO(text.encode()), "habits.json")},
                       content_type="multipart/form-data")


def test_import_export_builder_and_codebook_keep_the_translations(app, auth_client):
    assert import_text(auth_client, json.dumps(DEFINITION)).status_code == 302
    exported = json.loads(auth_client.get("/dashboard/habits/definition.json").get_data(as_text=True))
    assert exported["translations"] == DEFINITION["translations"]
    edit = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    # the builder shows them in place, as the definition's "translations" (issue 39)
    area = re.search(r'<textarea[^>]*id="translations"[^>]*>(.*?)</textarea>', html.unescape(edit), re.S)
    assert area and json.loads(area.group(1)) == DEFINITION["translations"]
    # the builder saves the draft from its form (no translations): they stay; the removed question's go
    token = csrf_token(auth_client, "/dashboard/habits/edit")
    questions = [{"qid": "drugs", "text": "Used drugs this year?", "options": "Yes\nNo", "protection": "protected",
                  "epsilon": "1"},
                 {"qid": "age", "text": "Age group", "options": "Under 30\n30 or older", "protection": "direct",
                  "epsilon": ""}]
    saved = auth_client.post("/dashboard/habits/edit", data=builder_form(
        token, {"slug": "habits", "title": "Habits", "description": "A test survey.", "target_n": "500"}, questions))
    assert saved.status_code == 302, saved.get_data(as_text=True)[:2000]
    db = open_db(app)
    stored = get_survey(db, "habits")
    db.conn.close()
    assert set(stored.survey.translations["es"]["questions"]) == {"drugs", "age"}
    assert stored.survey.translations["fr"] == DEFINITION["translations"]["fr"]
    flashes = html.unescape(auth_client.get("/dashboard/habits/edit").get_data(as_text=True))
    assert "translations.es.questions.drinks, translations.es.questions.shop" in flashes
    codebook = json.loads(auth_client.get("/dashboard/habits/export/codebook.json").get_data(as_text=True))
    assert codebook["translations"] == stored.survey.to_dict()["translations"]
    plain = parse_definition({key: value for key, value in stored.survey.to_dict().items() if key != "translations"})
    assert codebook["design_fingerprint"] == design_fingerprint(plain)  # words are not the design


def test_a_bad_translation_is_refused_on_import_naming_its_field(app, auth_client):
    bad = copy.deepcopy(DEFINITION)
    bad["translations"]["es"]["questions"]["drugs"]["options"] = ["Sí"]
    response = import_text(auth_client, json.dumps(bad))
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422
    assert "habits.json: translations.es.questions.drugs.options: has 2 options in the original" in page
    db = open_db(app)
    assert db.execute("SELECT count(*) FROM surveys").fetchone()[0] == 0
    db.conn.close()


def test_the_json_api_publishes_the_translations(app, client):
    """``GET /api/v1/surveys/SLUG`` carries the survey's language and its translations as the definition
    gives them (a client of the API can show the questions in them); the design is the same in every one."""
    make_survey(app, DEFINITION, status="open")
    design = client.get("/api/v1/surveys/habits").get_json()
    assert design["translations"] == DEFINITION["translations"]
    assert design["design_fingerprint"] == design_fingerprint(parse_definition(DEFINITION))
    make_survey(app, {**{k: v for k, v in DEFINITION.items() if k != "translations"}, "slug": "plain"}, status="open")
    assert client.get("/api/v1/surveys/plain").get_json()["translations"] == {}
