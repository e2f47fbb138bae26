"""A launched survey gains a language on the real app: "Add a language" on its design page offers the
languages the app knows that the survey has not, one input per translatable text labelled with the original
words; a post (``POST /dashboard/SLUG/translations``) is checked as an import, becomes a new text version
("Spanish: added" in the change log, the translation in the codebook's versions), and the survey page and the
JSON API offer the language at once, while the design, the stored responses and every estimate stay as they
were; a refusal names its field and stores nothing."""

from __future__ import annotations

import re

import pytest

from deniable.server.store.surveys import get_survey
from support.dashboard import (EMAIL, ensure_researcher, login, make_survey, open_db, page_text, post,
                               share_survey, store_reports)

DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.", "contact": "ethics@example.org",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "age", "text": "Age group", "options": ["Under 30", "30 to 44", "45 or older"]},
        {"id": "shop", "text": "How many apply?", "type": "list", "items": ["I cycle", "I cook"],
         "sensitive": "I shoplifted", "epsilon": 1.0},
    ],
    "translations": {"fr": {"title": "Habitudes", "questions": {"drugs": {"text": "Drogues cette année ?",
                                                                          "options": ["Oui", "Non"]}}}},
}
SPANISH = {  # the form's inputs: what a researcher types (the age question left in English)
    "language": "es", "translation-new-title": "Hábitos", "translation-new-contact": "etica@example.org",
    "translation-new-questions-0-text": "¿Consumió drogas este año?",
    "translation-new-questions-0-options-0": "Sí", "translation-new-questions-0-options-1": "No",
    "translation-new-questions-2-text": "¿Cuántas le corresponden?",
    "translation-new-questions-2-items-0": "Voy en bicicleta", "translation-new-questions-2-items-1": "Cocino",
    "translation-new-questions-2-sensitive": "Robé en una tienda",
}


@pytest.fixture
def habits(app):
    return make_survey(app, DEFINITION, status="open")




def words(page: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def add_form(page: str) -> str:
    form = re.search(r'<form[^>]*id="translation-new-form".*?</form>', page, re.S)
    assert form, "no \"Add a language\" form"
    return form.group(0)


def stored_state(app):
    """The survey, its text versions and its stored responses, as rows."""
    db = open_db(app)
    try:
        return (get_survey(db, "habits"), db.execute("SELECT * FROM wording_versions ORDER BY version").fetchall(),
                db.execute("SELECT * FROM responses ORDER BY rowid").fetchall())
    finally:
        db.conn.close()


def test_the_launched_page_offers_the_languages_the_survey_has_not_with_the_original_words(app, auth_client, habits):
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    form = add_form(page)
    assert re.findall(r'<option value="([^"]*)"', form) == ["es"]  # not English (its own), not French (it has)
    labels = dict(re.findall(r'<label for="([^"]*)">(.*?)</label>', form))
    assert labels == {
        "translation-new-language": "Language",
        "translation-new-title": "Title: Habits", "translation-new-description": "Description: A test survey.",
        "translation-new-contact": "Contact: ethics@example.org",
        "translation-new-questions-0-text": "Question text: Used drugs this year?",
        "translation-new-questions-0-options-0": "Option 1: Yes", "translation-new-questions-0-options-1": "Option 2: No",
        "translation-new-questions-1-text": "Question text: Age group",
        "translation-new-questions-1-options-0": "Option 1: Under 30",
        "translation-new-questions-1-options-1": "Option 2: 30 to 44",
        "translation-new-questions-1-options-2": "Option 3: 45 or older",
        "translation-new-questions-2-text": "Question text: How many apply?",
        "translation-new-questions-2-items-0": "Item 1: I cycle", "translation-new-questions-2-items-1": "Item 2: I cook",
        "translation-new-questions-2-sensitive": "Sensitive item: I shoplifted"}
    assert not re.search(r'<input type="text"[^>]*value="[^"]', form)  # every input starts empty
    assert "information" not in form  # the survey has none to translate


def test_add_spanish_to_a_launched_english_survey_that_has_french(app, auth_client, client, habits):
    store_reports(app, "habits", {"drugs": [0, 1, 1, 0], "age": [0, 1, 2, 2], "shop": [0, 1, 2, 3]})
    estimates = auth_client.get("/api/v1/surveys/habits/estimates")
    responses_csv = sorted(auth_client.get("/dashboard/habits/export/responses.csv").get_data(as_text=True).splitlines())
    assert estimates.status_code == 200
    _, _, responses = stored_state(app)
    assert "lang=es" not in page_text(client.get("/s/habits"))

    response = post(auth_client, "/dashboard/habits/translations", SPANISH)
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/dashboard/habits/edit#translation-es-heading")
    edit = page_text(auth_client.get("/dashboard/habits/edit"))
    assert "Spanish added. Respondents can choose Spanish on the survey page now" in edit
    # the survey page offers it, in Spanish; a text left empty is in the original words
    english = page_text(client.get("/s/habits"))
    assert re.search(r'<a href="/s/habits\?lang=es" lang="es" hreflang="es">Español</a>', english), english[:2000]
    spanish = page_text(client.get("/s/habits?lang=es"))
    assert "<h1>Hábitos</h1>" in spanish and "¿Consumió drogas este año?" in spanish and "Robé en una tienda" in spanish
    assert "Age group" in spanish and "45 or older" in spanish  # left empty: the original's
    assert "A test survey." in spanish and "etica@example.org" in spanish
    assert '<html lang="es"' in spanish
    # the JSON API's design document lists it
    design = client.get("/api/v1/surveys/habits").get_json()
    assert list(design["translations"]) == ["es", "fr"]
    assert design["translations"]["es"] == {
        "title": "Hábitos", "contact": "etica@example.org", "questions": {
            "drugs": {"text": "¿Consumió drogas este año?", "options": ["Sí", "No"]},
            "shop": {"text": "¿Cuántas le corresponden?", "items": ["Voy en bicicleta", "Cocino"],
                     "sensitive": "Robé en una tienda"}}}
    assert design["translations"]["fr"] == DEFINITION["translations"]["fr"]
    # a new text version, in the change log and the codebook
    stored, versions, after = stored_state(app)
    assert stored.text_version == 2 and [row[1] for row in versions] == [1, 2] and versions[1][4] == EMAIL
    rows = [words(row) for row in re.findall(r"<tr>(.*?)</tr>", re.search(
        r'<table class="change-log".*?</table>', edit, re.S).group(0), re.S)[1:]]
    assert re.fullmatch(rf"\d{{4}}-\d\d-\d\d 2 Spanish: added Spanish \(es\) {EMAIL}", rows[0]), rows
    assert f"Spanish: Title Hábitos {EMAIL}" in rows[1]
    assert any(row.endswith(f"Spanish: Question 3 (shop), item 2 Cocino {EMAIL}") for row in rows), rows
    codebook = auth_client.get("/dashboard/habits/export/codebook.json").get_json()
    assert [("es" in v["wording"]["translations"], v["responses"]) for v in codebook["text_versions"]] == [
        (False, 4), (True, 0)]
    assert codebook["translations"]["es"]["title"] == "Hábitos"
    # the design, the responses and every estimate as they were
    assert stored.survey.questions == habits.survey.questions and stored.survey.title == "Habits"
    assert after == responses
    assert auth_client.get("/api/v1/surveys/habits/estimates").get_json() == estimates.get_json()
    assert sorted(auth_client.get("/dashboard/habits/export/responses.csv").get_data(as_text=True).splitlines()) == (
        responses_csv)  # the same rows (in no order: none is kept at rest)
    # the new language is fixed like the others, and is no longer offered to add (none is left)
    assert 'id="translation-es-form"' in edit and 'id="translation-new-form"' not in edit
    assert re.search(r'id="translation-es-title" name="translation-es-title" value="Hábitos"', edit)


def test_a_survey_without_translations_gains_its_first_language_after_a_wording_fix(app, auth_client, client):
    make_survey(app, {key: value for key, value in DEFINITION.items() if key != "translations"}, status="open")
    assert post(auth_client, "/dashboard/habits/wording", {"wording-title": "Habits and health"}).status_code == 302
    assert "?lang=" not in page_text(client.get("/s/habits"))
    response = post(auth_client, "/dashboard/habits/translations", {"language": "fr", "translation-new-title": "Santé"})
    assert response.status_code == 302
    assert "<h1>Santé</h1>" in page_text(client.get("/s/habits?lang=fr"))
    assert "Used drugs this year?" in page_text(client.get("/s/habits?lang=fr"))
    rows = words(page_text(auth_client.get("/dashboard/habits/edit")))
    assert f"3 French: added French (fr) {EMAIL}" in rows and f"3 French: Title Santé {EMAIL}" in rows
    stored, versions, _ = stored_state(app)
    assert stored.survey.translations == {"fr": {"title": "Santé"}} and len(versions) == 3


@pytest.mark.parametrize("changes, target, message", [
    ({"language": "de"}, "translation-new-language", "Language: 'de' is not a language of the respondents' pages"),
    ({"language": ""}, "translation-new-language", "Language: '' is not a language of the respondents' pages"),
    ({"language": "fr"}, "translation-new-language",
     "Language: the survey has a French translation already: fix its texts under \"Fix the translations\""),
    ({"language": "en"}, "translation-new-language", "Language: the survey is written in English (en) already"),
    ({"translation-new-questions-1-options-0": "Menos de 30", "translation-new-questions-1-options-3": "Más"},
     "translation-new-questions-1-options-0", "Spanish, Question 2, options: has 3 options in the original"),
    ({"translation-new-questions-0-options-0": "No"}, "translation-new-questions-0-options-1",
     "Spanish, Question 1, option 2: duplicate label 'No'"),
    ({"translation-new-title": "x" * 201}, "translation-new-title", "Spanish, Title: must be at most 200 characters"),
    ({"translation-new-contact": "x" * 501}, "translation-new-contact", "Spanish, Contact: must be at most 500"),
])
def test_a_refused_addition_names_its_field_and_stores_nothing(app, auth_client, habits, changes, target, message):
    store_reports(app, "habits", {"drugs": [0, 1], "age": [0, 2], "shop": [1, 2]})
    before = stored_state(app)
    response = post(auth_client, "/dashboard/habits/translations", {**SPANISH, **changes})
    assert response.status_code == 422
    text = page_text(response)
    summary = re.search(r'<div class="error-summary".*?</div>', text, re.S).group(0)
    assert f'<a href="#{target}">{message}' in summary, summary
    assert re.search(rf'id="{target}"[^>]*aria-invalid="true"', text)  # the link leads to the field, marked
    assert stored_state(app) == before
    # the refused post is shown again, to correct
    assert re.search(r'id="translation-new-questions-2-sensitive" name="[^"]*" value="Robé en una tienda"', text)


def test_a_post_with_every_text_empty_is_nothing_to_add(app, auth_client, habits):
    before = stored_state(app)
    empty = {key: ("es" if key == "language" else "  ") for key in SPANISH}
    response = post(auth_client, "/dashboard/habits/translations", empty)
    assert response.status_code == 422
    assert ('<a href="#translation-new-form">Spanish: nothing to add: give at least one text in Spanish'
            in page_text(response))
    assert stored_state(app) == before


def test_a_draft_has_no_such_form_and_is_refused(app, auth_client):
    make_survey(app, DEFINITION)
    assert 'id="translation-new-form"' not in page_text(auth_client.get("/dashboard/habits/edit"))
    before = stored_state(app)
    response = post(auth_client, "/dashboard/habits/translations", SPANISH)
    assert response.status_code == 409
    assert "Add a language: survey 'habits' is a draft: change its design directly" in page_text(response)
    assert stored_state(app) == before


def test_a_closed_survey_gains_a_language_too(app, auth_client, client):
    make_survey(app, DEFINITION, status="closed")
    assert post(auth_client, "/dashboard/habits/translations", SPANISH).status_code == 302
    assert "Hábitos" in page_text(client.get("/s/habits?lang=es"))  # its closed page


def test_a_post_without_its_token_is_refused(app, auth_client, habits):
    before = stored_state(app)
    response = auth_client.post("/dashboard/habits/translations", data=SPANISH)
    assert response.status_code == 400
    assert stored_state(app) == before


@pytest.mark.parametrize("role, status", [("viewer", 403), (None, 404)])
def test_only_an_editor_may_add_a_language(app, habits, role, status):
    bob = "bob@example.org"
    ensure_researcher(app, bob)
    if role:
        share_survey(app, "habits", bob, role)
    client = app.test_client()
    login(client, email=bob)
    before = stored_state(app)
    assert post(client, "/dashboard/habits/translations", SPANISH).status_code == status
    assert stored_state(app) == before


def test_an_editor_may_add_a_language(app, habits):
    share_survey(app, "habits", "bob@example.org", "editor")
    client = app.test_client()
    login(client, email="bob@example.org")
    assert post(client, "/dashboard/habits/translations", SPANISH).status_code == 302
    stored, versions, _ = stored_state(app)
    assert "es" in stored.survey.translations and versions[-1][4] == "bob@example.org"


def test_the_store_function_refuses_by_name_and_shares_the_checks_of_an_import(app, habits):
    from deniable.server.store.surveys import LifecycleError
    from deniable.server.store.wording import WordingError, add_translation

    db = open_db(app)
    try:
        for language, texts, field, fragment in [
            ("de", {"title": "Gewohnheiten"}, "language", "is not a language of the respondents' pages"),
            (None, {"title": "x"}, "language", "is not a language"),
            ("fr", {"title": "Habitudes"}, "language", "has a French translation already"),
            ("en", {"title": "Habits"}, "language", "written in English (en) already"),
            ("es", "Hábitos", "translations.es", "must be an object"),
            ("es", {}, "translations.es", "nothing to add"),
            ("es", {"questions": {"drugs": {}}}, "translations.es", "nothing to add"),
            ("es", {"information": "Quiénes somos"}, "translations.es.information", "no information to translate"),
            ("es", {"questions": {"drugs": {"epsilon": 9}}}, "translations.es.questions[0].epsilon",
             "part of the question's design"),
            ("es", {"questions": {"nope": {"text": "?"}}}, "translations.es.questions.nope", "no question with this id"),
            ("es", {"questions": {"shop": {"items": ["Uno"]}}}, "translations.es.questions[2].items", "has 2 items"),
            ("es", {"title": ""}, "translations.es.title", "must not be empty"),
        ]:
            with pytest.raises(WordingError) as caught:
                add_translation(db, "habits", language, texts, changed_by="test")
            assert caught.value.field == field and fragment in caught.value.message, (language, texts, caught.value)
        with pytest.raises(LookupError):
            add_translation(db, "nope", "es", {"title": "x"})
        assert get_survey(db, "habits") == habits
        assert db.execute("SELECT count(*) FROM wording_versions").fetchone()[0] == 0
        stored = add_translation(db, "habits", "es", {"title": "Hábitos", "questions": {"age": {}}}, changed_by="test")
        assert stored.survey.translations["es"] == {"title": "Hábitos"} and stored.text_version == 2
        make_survey(app, {**DEFINITION, "slug": "draft"})
        with pytest.raises(LifecycleError):
            add_translation(db, "draft", "es", {"title": "Hábitos"})
        assert "es" not in get_survey(db, "draft").survey.translations
    finally:
        db.conn.close()
