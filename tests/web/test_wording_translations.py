"""Fixing a translation of a launched survey on the real app: the launched page has one form per language
with the texts the translation holds; a fix is words only (the checks of an import), becomes a new text
version with who and when, shows in the change log, on the survey page in that language at once and in
the codebook's ``text_versions``; a refused fix names the language and the field and stores nothing."""

from __future__ import annotations

import re

import pytest

from deniable.server.store.surveys import get_survey
from support.store import next_day
from support.dashboard import (EMAIL, ensure_researcher, login, make_survey, open_db, page_text, post,
                               share_survey, store_reports)

DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.", "information": "Who we are.",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "age", "text": "Age group", "options": ["Under 30", "30 to 44", "45 or older"]},
        {"id": "shop", "text": "How many apply?", "type": "list", "items": ["I cycle", "I cook"],
         "sensitive": "I shoplifted", "epsilon": 1.0},
    ],
    "translations": {
        "fr": {"title": "Habitudes", "description": "Une enquête.", "questions": {
            "drugs": {"text": "Avez-vous consomé des drogues cette année ?", "options": ["Oui", "Non"]},
            "age": {"text": "Tranche d’âge", "options": ["Moins de 30 ans", "De 30 à 44 ans", "45 ans ou plus"]},
            "shop": {"items": ["Je fais du vélo", "Je cuisine"], "sensitive": "J’ai volé dans un magasin"}}},
        "es": {"title": "Hábitos"},
    },
}
TYPO, FIXED = "Avez-vous consomé des drogues cette année ?", "Avez-vous consommé des drogues cette année ?"


@pytest.fixture
def habits(app):
    return make_survey(app, DEFINITION, status="open")




def french_form(page: str) -> dict[str, str]:
    """The French form's inputs as the launched page fills them: name → value."""
    form = re.search(r'<form[^>]*id="translation-fr-form".*?</form>', page, re.S)
    assert form, "no French form on the launched page"
    fields = {name: value for name, value in re.findall(r'<input type="text" id="[^"]*" name="([^"]*)" value="([^"]*)"',
                                                        form.group(0))}
    fields.update(re.findall(r'<textarea id="[^"]*" name="([^"]*)"[^>]*>(.*?)</textarea>', form.group(0), re.S))
    return fields


def change_log(page: str) -> list[str]:
    log = re.search(r'<table class="change-log".*?</table>', page, re.S)
    assert log, "no change log"
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()) for row in re.findall(r"<tr>(.*?)</tr>", log.group(0), re.S)[1:]]


def stored_state(app):
    db = open_db(app)
    try:
        stored = get_survey(db, "habits")
        versions = db.execute("SELECT count(*) FROM wording_versions").fetchone()[0]
        return stored, versions
    finally:
        db.conn.close()


def test_the_launched_page_has_a_form_per_language_with_what_the_translation_holds(app, auth_client, habits):
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    assert french_form(page) == {
        "translation-fr-title": "Habitudes", "translation-fr-description": "Une enquête.",
        "translation-fr-questions-0-text": TYPO,
        "translation-fr-questions-0-options-0": "Oui", "translation-fr-questions-0-options-1": "Non",
        "translation-fr-questions-1-text": "Tranche d’âge",
        "translation-fr-questions-1-options-0": "Moins de 30 ans", "translation-fr-questions-1-options-1": "De 30 à 44 ans",
        "translation-fr-questions-1-options-2": "45 ans ou plus",
        "translation-fr-questions-2-items-0": "Je fais du vélo", "translation-fr-questions-2-items-1": "Je cuisine",
        "translation-fr-questions-2-sensitive": "J’ai volé dans un magasin"}
    assert 'id="translation-es-form"' in page and 'id="translation-es-title"' in page
    assert 'id="translation-es-description"' not in page  # the Spanish translation holds the title only
    assert '<label for="translation-fr-questions-2-sensitive">Sensitive item</label>' in page


def test_fix_a_french_question_text_of_an_open_survey(app, auth_client, client, habits):
    assert TYPO in page_text(client.get("/s/habits?lang=fr"))
    store_reports(app, "habits", {"drugs": [0, 1, 1], "age": [0, 1, 2], "shop": [0, 1, 2]})
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    response = post(auth_client, "/dashboard/habits/wording/fr",
                    {**french_form(page), "translation-fr-questions-0-text": FIXED})
    assert response.status_code == 302 and response.headers["Location"].endswith("/dashboard/habits/edit#changes-title")
    edit = page_text(auth_client.get("/dashboard/habits/edit"))
    assert "French text fixed. Respondents reading the survey in French see the new text now" in edit
    with next_day():  # the fix is recorded from the next day on (responses record the wording their day began with)
        store_reports(app, "habits", {"drugs": [0], "age": [1], "shop": [2]})
    # the French page shows it at once; the English and Spanish ones are as they were
    french = page_text(client.get("/s/habits?lang=fr"))
    assert FIXED in french and TYPO not in french and "<h1>Habitudes</h1>" in french
    assert "Used drugs this year?" in page_text(client.get("/s/habits?lang=en"))
    assert "<h1>Hábitos</h1>" in page_text(client.get("/s/habits?lang=es"))
    # so does the design the JSON API publishes (its cache is keyed by the text version)
    assert client.get("/api/v1/surveys/habits").get_json()["translations"]["fr"]["questions"]["drugs"]["text"] == FIXED
    stored, _ = stored_state(app)
    assert stored.text_version == 2 and stored.survey.translations["fr"]["questions"]["drugs"]["text"] == FIXED
    assert stored.survey.question("drugs").text == "Used drugs this year?"  # the original's words: untouched
    # the change log with who (the day only, as every fix)
    rows = change_log(edit)
    assert len(rows) == 1 and re.fullmatch(
        rf"\d{{4}}-\d\d-\d\d 2 French: Question 1 \(drugs\), text {re.escape(TYPO)} {re.escape(FIXED)} {EMAIL}",
        rows[0]), rows
    assert french_form(edit)["translation-fr-questions-0-text"] == FIXED
    # the codebook: each text version with its translations and the responses answered under it
    codebook = auth_client.get("/dashboard/habits/export/codebook.json").get_json()
    versions = codebook["text_versions"]
    assert [(v["version"], v["responses"]) for v in versions] == [(1, 3), (2, 1)]
    assert versions[0]["wording"]["translations"]["fr"]["questions"]["drugs"]["text"] == TYPO
    assert versions[1]["wording"]["translations"]["fr"]["questions"]["drugs"]["text"] == FIXED
    assert versions[1]["wording"]["questions"] == versions[0]["wording"]["questions"]
    assert codebook["translations"]["fr"]["questions"]["drugs"]["text"] == FIXED
    db = open_db(app)
    assert db.execute("SELECT changed_by FROM wording_versions ORDER BY version").fetchall() == [(None,), (EMAIL,)]
    db.conn.close()


def test_a_list_experiments_items_and_the_title_in_one_fix(app, auth_client, client, habits):
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    response = post(auth_client, "/dashboard/habits/wording/fr", {
        **french_form(page), "translation-fr-title": "Vos habitudes", "translation-fr-questions-2-items-1": "Je cuisine souvent"})
    assert response.status_code == 302
    french = page_text(client.get("/s/habits?lang=fr"))
    assert "<h1>Vos habitudes</h1>" in french and "Je cuisine souvent" in french
    rows = change_log(page_text(auth_client.get("/dashboard/habits/edit")))
    assert [row.split(" ", 2)[2] for row in rows] == [
        f"French: Title Habitudes Vos habitudes {EMAIL}",
        f"French: Question 3 (shop), item 2 Je cuisine Je cuisine souvent {EMAIL}"], rows


@pytest.mark.parametrize("url, changes, target, message", [
    ("/dashboard/habits/wording/fr", {"translation-fr-questions-0-text": "  "}, "translation-fr-questions-0-text",
     "French, Question 1, text: must not be empty"),
    ("/dashboard/habits/wording/fr", {"translation-fr-title": ""}, "translation-fr-title", "French, Title: must not be empty"),
    ("/dashboard/habits/wording/fr", {"translation-fr-questions-1-options-3": "70 ans ou plus"},
     "translation-fr-questions-1-options-0", "French, Question 2, options: has 3 options in the original"),
    ("/dashboard/habits/wording/fr", {"translation-fr-questions-0-options-0": "Non", "translation-fr-questions-0-options-1": "Oui"},
     "translation-fr-questions-0-options-0", "French, Question 1, option 1: 'Non' is option 2's label"),
    ("/dashboard/habits/wording/fr", {"translation-fr-questions-1-options-1": "Moins de 30 ans"},
     "translation-fr-questions-1-options-1", "French, Question 2, option 2: duplicate label 'Moins de 30 ans'"),
    ("/dashboard/habits/wording/de", {"translation-de-title": "Gewohnheiten"}, "translations-heading",
     "Language 'de': the survey has no translation into 'de' to fix (it has Spanish (es), French (fr))"),
    ("/dashboard/habits/wording/en", {}, "translations-heading", "Language 'en': the survey has no translation into 'en'"),
])
def test_a_fix_that_is_more_than_words_is_refused_by_name_and_stores_nothing(app, auth_client, habits, url, changes,
                                                                             target, message):
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    before = stored_state(app)
    response = post(auth_client, url, {**french_form(page), **changes})
    assert response.status_code == 422
    text = page_text(response)
    summary = re.search(r'<div class="error-summary".*?</div>', text, re.S).group(0)
    assert f'<a href="#{target}">{message}' in summary, summary
    assert f'id="{target}"' in text  # the link leads to the field
    if target.startswith("translation-fr-questions"):
        assert re.search(rf'id="{target}"[^>]*aria-invalid="true"', text)
    assert stored_state(app) == before  # nothing stored: the same survey, no text version


def test_a_post_with_an_unknown_key_or_nothing_changed_stores_nothing(app, auth_client, habits):
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    before = stored_state(app)
    # an input the form does not have (a design key, an untranslated text) is not read: nothing changed
    response = post(auth_client, "/dashboard/habits/wording/fr", {**french_form(page), "translation-fr-epsilon": "9",
                                                                  "translation-fr-questions-0-epsilon": "9"})
    assert response.status_code == 409
    assert '<a href="#translation-fr-form">French: nothing changed: the French text is the same as before' in page_text(response)
    assert stored_state(app) == before


def test_the_store_refuses_unknown_keys_and_design_keys_by_name(app, habits):
    from deniable.server.store.wording import WordingError, fix_translation

    db = open_db(app)
    try:
        for texts, field, fragment in [
            ({"questions": {"drugs": {"epsilon": 9}}}, "translations.fr.questions[0].epsilon", "part of the question's design"),
            ({"questions": {"drugs": {"colour": "bleu"}}}, "translations.fr.questions[0].colour", "unknown key"),
            ({"consent": True}, "translations.fr.consent", "cannot be translated"),
            ({"contact": "x@example.org"}, "translations.fr.contact", "the survey has no contact to translate"),
            ({"questions": {"nope": {"text": "?"}}}, "translations.fr.questions.nope", "no question with this id"),
            ({"questions": {"drugs": {"options": ["Oui"]}}}, "translations.fr.questions[0].options", "has 2 options"),
        ]:
            with pytest.raises(WordingError) as caught:
                fix_translation(db, "habits", "fr", texts, changed_by="test")
            assert caught.value.field == field and fragment in caught.value.message, (texts, caught.value)
        assert get_survey(db, "habits") == habits
        assert db.execute("SELECT count(*) FROM wording_versions").fetchone()[0] == 0
    finally:
        db.conn.close()


@pytest.mark.parametrize("role, status", [("viewer", 403), (None, 404)])
def test_a_researcher_who_is_not_an_editor_gets_the_same_refusal_as_for_the_wording(app, habits, role, status):
    bob = "bob@example.org"
    ensure_researcher(app, bob)
    if role:
        share_survey(app, "habits", bob, role)
    client = app.test_client()
    login(client, email=bob)
    wording = post(client, "/dashboard/habits/wording", {"wording-title": "Changed"})
    translation = post(client, "/dashboard/habits/wording/fr", {"translation-fr-title": "Changée"})
    assert wording.status_code == translation.status_code == status
    assert page_text(translation).replace("/wording/fr", "/wording") == page_text(wording)
    assert stored_state(app) == (habits, 0)


def test_an_editor_may_fix_a_translation(app, habits):
    bob = "bob@example.org"
    share_survey(app, "habits", bob, "editor")
    client = app.test_client()
    login(client, email=bob)
    assert post(client, "/dashboard/habits/wording/es", {"translation-es-title": "Hábitos de vida"}).status_code == 302
    stored, versions = stored_state(app)
    assert stored.survey.translations["es"] == {"title": "Hábitos de vida"} and versions == 2
    assert "Spanish: Title Hábitos Hábitos de vida bob@example.org" in change_log(
        page_text(client.get("/dashboard/habits/edit")))[0]


def test_a_closed_survey_too_and_a_draft_has_no_such_form(app, auth_client):
    make_survey(app, {**DEFINITION, "slug": "draft"})
    page = page_text(auth_client.get("/dashboard/draft/edit"))
    assert 'id="translation-fr-form"' not in page
    assert post(auth_client, "/dashboard/draft/wording/fr", {"translation-fr-title": "X"}).status_code == 409
    assert get_survey(open_db(app), "draft").survey.translations["fr"]["title"] == "Habitudes"
    make_survey(app, DEFINITION, status="closed")
    assert post(auth_client, "/dashboard/habits/wording/es", {"translation-es-title": "Hábitos, corregido"}).status_code == 302
    assert get_survey(open_db(app), "habits").survey.translations["es"]["title"] == "Hábitos, corregido"


def test_a_survey_without_translations_has_no_such_section(app, auth_client):
    make_survey(app, {key: value for key, value in DEFINITION.items() if key != "translations"}, status="open")
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    assert "Fix the translations" not in page and 'id="wording-form"' in page
    response = post(auth_client, "/dashboard/habits/wording/fr", {"translation-fr-title": "Habitudes"})
    assert response.status_code == 422
    assert ('<a href="#wording-heading">Language \'fr\': the survey has no translation into \'fr\' to fix (it has none)'
            in page_text(response))
