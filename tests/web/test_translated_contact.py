"""The survey's contact line is translatable like its title, description and information: a translation may
give ``contact``, the survey page (and the thank-you and closed pages) in that language show it, the checks are
those of the other page texts (words, at most the original's 500 characters, not emptied), the launched page's
"Fix the translations" form holds it and the fix is a text version in the change log and the codebook."""

from __future__ import annotations

import re

import pytest

from deniable.server.store.surveys import get_survey
from deniable.server.survey.definition import DefinitionError, parse_definition
from support.dashboard import csrf_token, EMAIL, make_survey, open_db, page_text, store_reports

CONTACT, CONTACT_FR = "ethics@example.org (the ethics board)", "ethique@example.org (le comité d’éthique)"
DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.", "contact": CONTACT,
    "questions": [{"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0}],
    "translations": {
        "fr": {"title": "Habitudes", "contact": CONTACT_FR},
        "es": {"title": "Hábitos"},  # no contact: the original's
    },
}



def contact_line(page: str) -> str:
    match = re.search(r'<p class="contact"[^>]*>(.*?)</p>', page, re.S)
    assert match, "no contact line"
    return " ".join(match.group(1).split())


def test_the_contact_shows_in_the_language_read_and_the_original_where_a_translation_has_none(app, client):
    make_survey(app, DEFINITION, status="open")
    assert contact_line(page_text(client.get("/s/habits?lang=fr"))).endswith(CONTACT_FR)
    assert contact_line(page_text(client.get("/s/habits?lang=en"))).endswith(CONTACT)
    assert contact_line(page_text(client.get("/s/habits?lang=es"))).endswith(CONTACT)
    assert contact_line(page_text(client.get("/s/habits/thanks?lang=fr"))).endswith(CONTACT_FR)
    # the JSON API publishes it with the other texts
    assert client.get("/api/v1/surveys/habits").get_json()["translations"]["fr"]["contact"] == CONTACT_FR


def test_a_closed_survey_says_its_contact_in_the_language_read(app, client):
    make_survey(app, DEFINITION, status="closed")
    assert contact_line(page_text(client.get("/s/habits?lang=fr"))).endswith(CONTACT_FR)


@pytest.mark.parametrize("contact, problem", [
    ("", "must not be empty"),
    ("   ", "must not be empty"),
    ("x" * 501, "must be at most 500 characters"),
    (["a"], "must be a string"),
])
def test_a_translated_contact_is_checked_as_the_other_page_texts(contact, problem):
    data = {**DEFINITION, "translations": {"fr": {"contact": contact}}}
    with pytest.raises(DefinitionError) as caught:
        parse_definition(data)
    assert caught.value.field == "translations.fr.contact" and problem in str(caught.value)


def test_a_contact_of_500_characters_is_taken_and_one_without_an_original_is_refused():
    assert parse_definition({**DEFINITION, "translations": {"fr": {"contact": "x" * 500}}}).translations["fr"] == {
        "contact": "x" * 500}
    without = {key: value for key, value in DEFINITION.items() if key != "contact"}
    with pytest.raises(DefinitionError) as caught:
        parse_definition(without)
    assert caught.value.field == "translations.fr.contact" and "the survey has no contact to translate" in str(caught.value)


def test_fix_the_french_contact_on_the_launched_page(app, auth_client, client):
    make_survey(app, DEFINITION, status="open")
    store_reports(app, "habits", {"drugs": [0, 1]})
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    form = re.search(r'<form[^>]*id="translation-fr-form".*?</form>', page, re.S).group(0)
    # one line, as the original's contact in "Fix the wording"
    assert re.search(rf'<label for="translation-fr-contact">Contact</label>\s*<input type="text" '
                     rf'id="translation-fr-contact" name="translation-fr-contact" value="{re.escape(CONTACT_FR)}"', form)
    assert 'id="translation-es-contact"' not in page  # the Spanish translation holds the title only
    token = csrf_token(auth_client, "/dashboard/")
    fixed = "ethique@example.org (comité d’éthique de l’université)"
    response = auth_client.post("/dashboard/habits/wording/fr", data={
        "csrf_token": token, "translation-fr-title": "Habitudes", "translation-fr-contact": fixed})
    assert response.status_code == 302
    assert contact_line(page_text(client.get("/s/habits?lang=fr"))).endswith(fixed)
    assert contact_line(page_text(client.get("/s/habits?lang=en"))).endswith(CONTACT)
    edit = page_text(auth_client.get("/dashboard/habits/edit"))
    assert f"French: Contact {CONTACT_FR} {fixed} {EMAIL}" in " ".join(re.sub(r"<[^>]+>", " ", edit).split())
    versions = auth_client.get("/dashboard/habits/export/codebook.json").get_json()["text_versions"]
    assert [v["wording"]["translations"]["fr"]["contact"] for v in versions] == [CONTACT_FR, fixed]
    assert [v["responses"] for v in versions] == [2, 0]
    # emptied or too long: refused by name, nothing stored
    db = open_db(app)
    before = get_survey(db, "habits")
    db.conn.close()
    for value, message in [("", "French, Contact: must not be empty"),
                           ("y" * 501, "French, Contact: must be at most 500 characters")]:
        response = auth_client.post("/dashboard/habits/wording/fr", data={
            "csrf_token": token, "translation-fr-title": "Habitudes", "translation-fr-contact": value})
        assert response.status_code == 422
        assert f'<a href="#translation-fr-contact">{message}' in page_text(response)
        db = open_db(app)
        assert get_survey(db, "habits") == before
        db.conn.close()
