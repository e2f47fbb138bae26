"""Display logic and page breaks in the builder: the condition picker lists only the earlier questions
asked directly whose type can decide; a saved condition round-trips through the store and the form;
every bad condition is reported on its own field, a condition on a protected question saying why."""

from __future__ import annotations

import html
import re

import pytest

from deniable.server.store.surveys import get_survey
from support.dashboard import builder_form, csrf_token, open_db

FIELDS = {"slug": "habits", "title": "Habits", "description": "", "target_n": "500", "save": "Save draft"}
QUESTIONS = [
    {"qid": "smoke", "text": "Do you smoke?", "options": "Yes\nNo\nSometimes", "protection": "direct", "epsilon": ""},
    {"qid": "drugs", "text": "Used drugs?", "options": "Yes\nNo", "protection": "protected", "epsilon": "1"},
    {"kind": "numeric", "qid": "age", "text": "Age?", "minimum": "18", "maximum": "30", "protection": "direct",
     "epsilon": ""},
    {"qid": "many", "text": "How many?", "options": "1-5\n6+", "protection": "protected", "epsilon": "2",
     "show_if_question": "smoke", "show_if_options": "Yes\nSometimes", "page_break": "y", "reach": "40"},
]


def save(auth_client, questions):
    token = csrf_token(auth_client, "/dashboard/new")
    return auth_client.post("/dashboard/new", data=builder_form(token, FIELDS, questions))


def test_the_builder_saves_a_condition_and_a_page_break_and_shows_them_again(app, auth_client):
    response = save(auth_client, QUESTIONS)
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:2000]
    db = open_db(app)
    try:
        survey = get_survey(db, "habits").survey
    finally:
        db.conn.close()
    many = survey.question("many")
    assert many.show_if.question == "smoke" and many.show_if.options == ("Yes", "Sometimes") and many.page_break
    assert not any(q.page_break or q.show_if for q in survey.questions[:3])
    page = html.unescape(auth_client.get("/dashboard/habits/edit").get_data(as_text=True))
    picker = re.search(r'<select id="questions-3-show_if_question".*?</select>', page, re.S).group(0)
    # only the earlier direct question whose type can decide: not the protected one, not the number
    assert re.findall(r'<option value="(\w*)"', picker) == ["", "smoke"] and 'value="smoke" selected' in picker
    assert re.search(r'<textarea[^>]*id="questions-3-show_if_options"[^>]*>\s*Yes\nSometimes</textarea>', page)
    assert "checked" in re.search(r'<input[^>]*id="questions-3-page_break"[^>]*>', page).group(0)
    assert "checked" not in re.search(r'<input[^>]*id="questions-2-page_break"[^>]*>', page).group(0)
    first = re.search(r'<select id="questions-0-show_if_question".*?</select>', page, re.S).group(0)
    assert re.findall(r'<option value="(\w*)"', first) == [""]  # nothing comes before the first question


BAD = [
    ({"show_if_question": "drugs", "show_if_options": "Yes"}, "show_if_question",
     "showing a question only after some of its answers would reveal the protected answer"),
    ({"show_if_question": "age", "show_if_options": "18"}, "show_if_question", "only a single-choice or check-all"),
    ({"show_if_question": "smoke", "show_if_options": ""}, "show_if_options", "non-empty list"),
    ({"show_if_question": "smoke", "show_if_options": "Yes\nNever"}, "show_if_options",
     "option 2: question 'many': 'Never' is not an option of 'smoke'"),
    ({"show_if_question": "nobody", "show_if_options": "Yes"}, "show_if_question", "there is no question 'nobody'"),
]


@pytest.mark.parametrize(("changes", "field", "words"), BAD)
def test_a_bad_condition_is_reported_on_its_field_and_nothing_is_saved(app, auth_client, changes, field, words):
    questions = [*QUESTIONS[:3], {**QUESTIONS[3], **changes}]
    response = save(auth_client, questions)
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422
    errors = re.search(rf'<ul class="errors" id="questions-3-{field}-errors">(.*?)</ul>', page, re.S)
    assert errors and words in errors.group(1), page[page.find("error-summary"):][:1500]
    assert f'href="#questions-3-{field}"' in page  # the error summary links the field
    db = open_db(app)
    try:
        assert get_survey(db, "habits") is None
    finally:
        db.conn.close()


def test_a_page_break_on_the_first_question_is_reported_on_its_box(app, auth_client):
    response = save(auth_client, [{**QUESTIONS[0], "page_break": "y"}, *QUESTIONS[1:]])
    page = html.unescape(response.get_data(as_text=True))
    assert re.search(r'id="questions-0-page_break-errors">.*?already starts the first page', page, re.S)
