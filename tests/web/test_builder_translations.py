"""The builder edits a draft's translations in place (issue 39): a "Translations (JSON)" field holding the
definition's ``translations`` object, checked on Save by the import's parser (translations.parse_translations),
each error on the field with its path and in the save summary; a POST without the field keeps the draft's
(and what no longer fits is left out and said, as before); a new survey may have them too."""

from __future__ import annotations

import html
import json
import re

import pytest

from deniable.server.store.surveys import get_survey
from support.dashboard import csrf_token, make_survey, open_db, page_text

DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "age", "text": "Age group", "options": ["Under 30", "30 to 44", "45 or older"]},
    ],
    "translations": {"fr": {"title": "Habitudes", "questions": {"drugs": {"text": "Drogues cette année ?",
                                                                          "options": ["Oui", "Non"]}}}},
}
SPANISH = {"es": {"title": "Hábitos", "questions": {"age": {"text": "Grupo de edad",
                                                           "options": ["Menos de 30", "30 a 44", "45 o más"]}}}}


@pytest.fixture
def draft(app, researcher):
    return make_survey(app, DEFINITION)


def stored_translations(app) -> dict:
    db = open_db(app)
    try:
        return get_survey(db, "habits").survey.translations
    finally:
        db.conn.close()


def form_of(page: str) -> dict:
    """The builder page's form as a browser would post it (text inputs, text areas, checked radios and boxes, selects)."""
    form = re.search(r'<form method="post" class="design".*?</form>', page, re.S).group(0)
    data = {}
    for tag in re.finditer(r"<input([^>]*)>", form):
        attrs = dict(re.findall(r'(\w[\w-]*)="([^"]*)"', tag.group(1)))
        flags = re.findall(r'\s(checked)(?=[\s>]|$)', tag.group(1))
        kind = attrs.get("type", "text")
        if "name" not in attrs or kind == "submit":
            continue
        if kind in ("radio", "checkbox"):
            if flags or " checked" in tag.group(1):
                data[attrs["name"]] = html.unescape(attrs.get("value", "y"))
            continue
        data[attrs["name"]] = html.unescape(attrs.get("value", ""))
    for area in re.finditer(r'<textarea([^>]*)>(.*?)</textarea>', form, re.S):
        name = re.search(r'name="([^"]+)"', area.group(1)).group(1)
        data[name] = html.unescape(area.group(2)).removeprefix("\r\n").removeprefix("\n")
    for select in re.finditer(r'<select([^>]*)>(.*?)</select>', form, re.S):
        name = re.search(r'name="([^"]+)"', select.group(1)).group(1)
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(2))
        data[name] = html.unescape(chosen.group(1)) if chosen else ""
    data.pop("action", None)
    return data


def save(auth_client, data: dict):
    return auth_client.post("/dashboard/habits/edit", data={**data, "save": "Save draft"})


def test_the_draft_s_translations_are_shown_and_a_save_of_the_page_keeps_them(auth_client, app, draft):
    page = page_text(auth_client.get("/dashboard/habits/edit"))
    area = re.search(r'<textarea[^>]*id="translations"[^>]*>(.*?)</textarea>', page, re.S)
    assert area and json.loads(area.group(1)) == DEFINITION["translations"]
    assert "Translations (JSON)" in page
    response = save(auth_client, form_of(page))
    assert response.status_code == 302, page_text(response)[:3000]
    assert stored_translations(app) == DEFINITION["translations"]


def test_translations_edited_in_place_are_checked_and_stored(auth_client, app, draft):
    data = form_of(page_text(auth_client.get("/dashboard/habits/edit")))
    data["translations"] = json.dumps({**DEFINITION["translations"], **SPANISH}, ensure_ascii=False)
    response = save(auth_client, data)
    assert response.status_code == 302, page_text(response)[:3000]
    assert stored_translations(app) == {**DEFINITION["translations"], **SPANISH}
    data["translations"] = ""  # emptied: no translations
    assert save(auth_client, data).status_code == 302
    assert stored_translations(app) == {}


@pytest.mark.parametrize("text, words", [
    ('{"es": {"title": "Hábitos",}}', "Translations: not valid JSON (line 1, column 28): "),
    ('["es"]', "Translations: must be a JSON object"),
    ('{"de": {"title": "Gewohnheiten"}}', "Translations: de: is not a language of the respondents' pages"),
    ('{"es": {"questions": {"age": {"options": ["Menos de 30", "30 a 44"]}}}}', "Translations: es.questions.age.options"),
    ('{"es": {"questions": {"smoking": {"text": "¿Fuma?"}}}}', "Translations: es.questions"),
    ('{"es": {"colour": "rojo"}}', "Translations: es.colour: unknown key"),
])
def test_a_bad_translation_is_an_error_on_the_field_and_nothing_is_stored(auth_client, app, draft, text, words):
    data = form_of(page_text(auth_client.get("/dashboard/habits/edit")))
    data["translations"] = text
    response = save(auth_client, data)
    page = page_text(response)
    assert response.status_code == 422
    summary = re.search(r'<div class="error-summary".*?</div>', page, re.S).group(0)
    assert words in summary, summary
    assert 'href="#translations"' in summary
    assert re.search(r'<ul class="errors" id="translations-errors">', page)
    assert re.search(r'<details class="respondent-texts" open>', page)  # the error is never hidden
    assert stored_translations(app) == DEFINITION["translations"]


def test_every_error_is_listed_with_a_bad_translation(auth_client, app, draft):
    data = form_of(page_text(auth_client.get("/dashboard/habits/edit")))
    data["translations"] = "{oops"
    data["title"] = "T" * 201
    data["questions-1-options"] = "Only one"
    page = page_text(save(auth_client, data))
    summary = re.search(r'<div class="error-summary".*?</div>', page, re.S).group(0)
    assert "Title:" in summary and "Translations: not valid JSON" in summary and "Question 2, options" in summary


def test_a_post_without_the_field_keeps_the_draft_s_and_leaves_out_what_no_longer_fits(auth_client, app, draft):
    token = csrf_token(auth_client, "/dashboard/habits/edit")
    response = auth_client.post("/dashboard/habits/edit", data={
        "csrf_token": token, "title": "Habits", "target_n": "1000", "save": "Save draft",
        "questions-0-qid": "age", "questions-0-text": "Age group", "questions-0-options": "Under 30\n30 to 44\n45 or older",
        "questions-0-protection": "direct", "questions-0-required": "y"})
    assert response.status_code == 302
    assert stored_translations(app) == {"fr": {"title": "Habitudes", "questions": {}}}  # the drugs question is gone
    follow = page_text(auth_client.get("/dashboard/habits/edit"))
    assert "Translations that no longer fit the questions were left out" in follow


def test_the_page_as_shown_still_saves_after_a_question_is_deleted(auth_client, app, draft):
    """Deleting a translated question and saving the page as shown: the unchanged translations are carried over
    (what no longer fits left out and said), not refused."""
    data = form_of(page_text(auth_client.get("/dashboard/habits/edit")))
    with_action = {**data, "action": "delete-0"}
    page = page_text(auth_client.post("/dashboard/habits/edit", data=with_action))
    response = save(auth_client, form_of(page))
    assert response.status_code == 302, page_text(response)[:3000]
    assert stored_translations(app) == {"fr": {"title": "Habitudes", "questions": {}}}


def test_a_new_survey_may_have_translations(auth_client, app, researcher):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data={
        "csrf_token": token, "title": "Habits", "slug": "habits", "target_n": "1000", "save": "Save draft",
        "translations": json.dumps(SPANISH, ensure_ascii=False),
        "questions-0-qid": "age", "questions-0-text": "Age group", "questions-0-options": "Under 30\n30 to 44\n45 or older",
        "questions-0-protection": "direct", "questions-0-required": "y"})
    assert response.status_code == 302, page_text(response)[:3000]
    assert stored_translations(app) == SPANISH
