"""Randomized option order (a question's ``"shuffle": true``) through the builder, the store and the
survey page's HTML, and the short privacy sentence with its "What does this mean?" disclosure.  The
order itself is drawn in the browser: tests/e2e/test_shuffle.py."""

from __future__ import annotations

import html
import json
import re

from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.explain import explain
from support.dashboard import builder_form, csrf_token, open_db

QUESTIONS = [
    {"qid": "drugs", "text": "Used drugs?", "options": "Yes\nNo\nMaybe", "protection": "protected", "epsilon": "1",
     "shuffle": "y"},
    {"kind": "multi", "qid": "ticks", "text": "Which apply?", "options": "A\nB\nC", "protection": "direct",
     "epsilon": "", "shuffle": "y"},
    # ticked, then the type changed to a number: the box is not this type's, nothing is stored
    {"kind": "numeric", "qid": "age", "text": "Age?", "minimum": "18", "maximum": "30", "protection": "direct",
     "epsilon": "", "shuffle": "y"},
    {"qid": "plain", "text": "Age group", "options": "<30\n30+", "protection": "direct", "epsilon": ""},
]


def test_the_builder_saves_the_setting_the_store_keeps_it_and_the_form_shows_it_again(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_form(
        token, {"slug": "habits", "title": "Habits", "description": "", "target_n": "500", "save": "Save draft"},
        QUESTIONS))
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:2000]
    survey = get_survey(open_db(app), "habits").survey
    assert [q.shuffle for q in survey.questions] == [True, True, False, False]
    assert [q.get("shuffle") for q in survey.to_dict()["questions"]] == [True, True, None, None]
    page = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    boxes = re.findall(r'<input[^>]*id="questions-(\d)-shuffle"[^>]*>', page)
    checked = [re.search(rf'<input[^>]*id="questions-{i}-shuffle"[^>]*>', page).group(0) for i in range(4)]
    assert boxes == ["0", "1", "2", "3"] and ["checked" in box for box in checked] == [True, True, False, False]
    # the field shows for the types that have options to shuffle only (types.css hides the others)
    holder = re.search(r'<div class="(only[^"]*)">\s*<div class="field check[^"]*">\s*<input[^>]*id="questions-0-shuffle"',
                       page).group(1).split()
    assert {"only-choice", "only-multi"} <= set(holder) and "only-numeric" not in holder and "only-list" not in holder


def test_a_stored_survey_keeps_shuffle_beside_a_design_and_the_page_marks_the_fieldsets(app, client):
    definition = {"slug": "mixed", "title": "Mixed", "questions": [
        {"id": "a", "text": "A?", "options": ["Yes", "No"], "epsilon": 1.0, "shuffle": True},
        {"id": "b", "text": "B?", "options": ["Yes", "No"], "design": {"name": "warner", "p": 0.75}, "shuffle": True},
        {"id": "c", "text": "C?", "type": "multi", "options": ["x", "y", "z"], "epsilon": 1.0, "shuffle": True},
        {"id": "d", "text": "D?", "options": ["u", "v"]},
        {"id": "e", "text": "E?", "options": ["u", "v"], "shuffle": True}]}
    db = open_db(app)
    try:
        insert_survey(db, parse_definition(definition), status="open")
        survey = get_survey(db, "mixed").survey
        spec = json.loads(db.execute("SELECT spec FROM questions WHERE qid = 'b'").fetchone()[0])
    finally:
        db.conn.close()
    assert [q.shuffle for q in survey.questions] == [True, True, True, False, True]
    assert spec == {"design": {"name": "warner", "p": 0.75}, "shuffle": True} and survey.questions[1].design
    assert survey.to_dict() == parse_definition(definition).to_dict()
    page = client.get("/s/mixed").get_data(as_text=True)
    tags = {re.search(r'id="q-(\w+)"', tag).group(1): tag for tag in re.findall(r"<fieldset[^>]*>", page)}
    assert {qid for qid, tag in tags.items() if " data-shuffle" in tag} == {"a", "b", "c", "e"} and len(tags) == 5
    # without JavaScript the definition's order shows, each input's value its place in the definition
    assert re.findall(r'id="a-option-(\d)" value="(\d)"', page) == [("0", "0"), ("1", "1")]


def test_each_protected_question_has_one_short_sentence_and_the_rest_behind_a_disclosure(client, open_demo):
    page = html.unescape(client.get("/s/demo").get_data(as_text=True))
    for q in open_demo.survey.questions:
        if not q.protected:
            continue
        info = explain(q.epsilon, q.k)
        note = re.search(rf'<p class="note protected-note" id="{q.id}-note">(.*?)</p>', page, re.S).group(1)
        assert info["short"] in note and info["coin"] not in note
        more = re.search(rf'<details class="privacy-more" id="{q.id}-more">(.*?)</details>', page, re.S).group(1)
        assert "<summary>What does this mean?</summary>" in more
        assert info["coin"] in more and info["posterior"] in more and info["odds"] in more
