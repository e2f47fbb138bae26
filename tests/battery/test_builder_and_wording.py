"""Battery: every registered question type through the builder (a draft's design posted back unchanged
is stored unchanged, and creates the same question as a new survey; a question the builder cannot edit, a
custom design matrix, is refused by name with nothing stored) and through a wording fix after launch (the words change, the design, its
fingerprint and the estimates do not; another number of labels is refused by name, nothing stored)."""

from __future__ import annotations

import html
import json
import re
import sqlite3
from html.parser import HTMLParser

import pytest

from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.store.wording import wording_history
from deniable.server.survey.definition import design_fingerprint, parse_definition, parse_question

from support.battery import SLUG, battery_questions, question_ids
from support.dashboard import open_db

DRAFT = "roundtrip"


class FormFields(HTMLParser):
    """The fields a browser would post from the form ``form_id``: text inputs, textareas, checked radios
    and checkboxes, selected options (no JavaScript)."""

    def __init__(self, form_id: str):
        super().__init__()
        self.form_id, self.inside, self.fields = form_id, False, {}
        self._textarea = self._select = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside:
            return
        name = a.get("name")
        if tag == "input" and name and a.get("type", "text") in ("text", "number", "hidden"):
            self.fields[name] = a.get("value") or ""
        elif tag == "input" and name and a.get("type") in ("radio", "checkbox") and "checked" in a:
            self.fields[name] = a.get("value", "y")
        elif tag == "textarea" and name:
            self._textarea = name
            self.fields[name] = ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.fields[self._select] = a.get("value", "")

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "textarea" and self._textarea:
            # a textarea's first newline is not part of its value (HTML), as a browser reads it
            value = self.fields[self._textarea]
            self.fields[self._textarea] = value[2:] if value.startswith("\r\n") else value.removeprefix("\n")
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.fields[self._textarea] += data


def form_fields(page: str, form_id: str) -> dict:
    parser = FormFields(form_id)
    parser.feed(page)
    return parser.fields


def definition_of(qid: str) -> dict:
    return next(q for q, _ in battery_questions() if q["id"] == qid)


# ---------------------------------------------------------------- (a) the builder's round trip


@pytest.mark.parametrize("qid", question_ids())
def test_a_drafts_question_posted_back_unchanged_is_stored_unchanged(app, auth_client, owner_id, qid):
    question = definition_of(qid)
    db = open_db(app)
    insert_survey(db, parse_definition({"slug": DRAFT, "title": "Round trip", "questions": [question]}),
                  status="draft", owner_id=owner_id)
    before = get_survey(db, DRAFT).survey.questions[0].to_dict()
    db.close()
    page = auth_client.get(f"/dashboard/{DRAFT}/edit")
    assert page.status_code == 200
    fields = form_fields(page.get_data(as_text=True), "design-form")
    assert fields["questions-0-kind"] == parse_question(question).type
    q = parse_question(question)
    if q.qtype.refuses_builder(q):  # the type's declared refusal (a custom matrix): said, nothing stored
        _refused_by_the_builder(app, auth_client, fields, q, before)
        return
    response = auth_client.post(f"/dashboard/{DRAFT}/edit", data={**fields, "save": "Save draft"})
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:3000]
    # the same fields create a new survey with the same question
    response = auth_client.post("/dashboard/new", data={**fields, "slug": "created", "save": "Save draft"})
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:3000]
    db = open_db(app)
    after = get_survey(db, DRAFT).survey.questions[0].to_dict()
    created = get_survey(db, "created").survey.questions[0].to_dict()
    db.close()
    assert after == before == created == parse_question(question).to_dict()


def _refused_by_the_builder(app, auth_client, fields, q, before):
    """A question the builder cannot edit (:meth:`refuses_builder`): saving the draft is a 409 naming the
    question with the type's reason, a new survey from the same fields a 422 naming the question's field
    (the page's select has no such design, so ε is missing); the draft stays as it was, nothing is created."""
    page = auth_client.get(f"/dashboard/{DRAFT}/edit").get_data(as_text=True)
    assert f"question {q.id!r}: {q.qtype.refuses_builder(q)}" in html.unescape(page)  # said before any save
    response = auth_client.post(f"/dashboard/{DRAFT}/edit", data={**fields, "save": "Save draft"})
    assert response.status_code == 409
    assert f"question {q.id!r}: {q.qtype.refuses_builder(q)}" in html.unescape(response.get_data(as_text=True))
    response = auth_client.post("/dashboard/new", data={**fields, "slug": "created", "save": "Save draft"})
    assert response.status_code == 422
    # the browser posts the select's first randomization (no design): the error is at the question's ε
    summary = re.search(r'<div class="error-summary".*?</div>', response.get_data(as_text=True), re.S).group(0)
    assert re.search(r'<a href="#questions-0-epsilon">[^<]*protected question needs ε', html.unescape(summary)), summary
    db = open_db(app)
    assert get_survey(db, DRAFT).survey.questions[0].to_dict() == before
    assert get_survey(db, "created") is None
    db.close()


# ---------------------------------------------------------------- (b) a wording fix after launch


def _headlines(auth_client) -> dict:
    db = open_db(auth_client.application)
    stored = get_survey(db, SLUG)
    db.close()
    shown = auth_client.get(f"/api/v1/surveys/{SLUG}/estimates").get_json()["questions"]
    return {q.id: q.qtype.headlines(q, record) for q, record in zip(stored.survey.questions, shown)}


def _position(qid: str) -> int:
    return [q["id"] for q, _ in battery_questions()].index(qid)


def test_the_launched_design_page_says_how_each_question_is_sent(auth_client, battery):
    """Each question of the frozen design: protected at its ε, or its type's words for what ε does not
    protect — a plain list experiment or a design with a zero cell is never "asked directly"."""
    page = html.unescape(auth_client.get(f"/dashboard/{SLUG}/edit").get_data(as_text=True))
    frozen = page.split('<ol class="design-readonly">')[1].split('</section>')[0]
    said = dict(re.findall(r"<code>([^<]+)</code>\s*— ([^\n<]*)", frozen))
    for q in battery.survey.questions:
        words = f"protected, ε = {q.epsilon:g}" if q.protected else q.qtype.unprotected(q)
        assert said[q.id] == words + ("" if q.required else ", optional"), q.id
    assert said["list_1"].startswith("not protected by ε") and said["choice_7"].startswith("not ε-LDP")


@pytest.mark.parametrize("qid", question_ids())
def test_a_wording_fix_changes_the_words_only(auth_client, battery, qid):
    i = _position(qid)
    fingerprint = design_fingerprint(battery.survey)
    estimates = _headlines(auth_client)
    page = auth_client.get(f"/dashboard/{SLUG}/edit").get_data(as_text=True)
    fields = form_fields(page, "wording-form")
    mine = [k for k in fields if k.startswith(f"wording-questions-{i}-")]
    assert f"wording-questions-{i}-text" in mine
    posted = {**fields, **{k: f"{fields[k]} (reworded)" for k in mine}}
    response = auth_client.post(f"/dashboard/{SLUG}/wording", data=posted)
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:3000]
    db = open_db(auth_client.application)
    fixed = get_survey(db, SLUG)
    db.close()
    q = fixed.survey.questions[i]
    assert q.text.endswith(" (reworded)")
    for key, words in q.qtype.wording(q).items():  # every text the type lets a launched survey reword
        for text in [words] if isinstance(words, str) else words:
            assert text.endswith(" (reworded)"), (key, text)
    assert design_fingerprint(fixed.survey) == fingerprint
    assert fixed.text_version == battery.text_version + 1
    survey_page = html.unescape(auth_client.get(f"/s/{SLUG}").get_data(as_text=True))
    assert q.text in survey_page
    assert _headlines(auth_client) == estimates


@pytest.mark.parametrize("qid", question_ids())
def test_a_wording_fix_with_another_number_of_labels_is_refused_by_name(auth_client, battery, qid):
    i = _position(qid)
    q = battery.survey.questions[i]
    lists = [key for key, words in q.qtype.wording(q).items() if not isinstance(words, str)]
    page = auth_client.get(f"/dashboard/{SLUG}/edit").get_data(as_text=True)
    fields = form_fields(page, "wording-form")
    if not lists:  # nothing but texts to reword (a number): labels posted for it change nothing of it
        response = auth_client.post(f"/dashboard/{SLUG}/wording",
                                    data={**fields, f"wording-questions-{i}-options-0": "a label"})
        assert response.status_code == 409  # "nothing changed", not a 500 nor a changed design
        return
    key = lists[0]
    n = len(q.qtype.wording(q)[key])
    for posted in ({**fields, f"wording-questions-{i}-{key}-{n}": "one more"},
                   {k: v for k, v in fields.items() if k != f"wording-questions-{i}-{key}-{n - 1}"}):
        response = auth_client.post(f"/dashboard/{SLUG}/wording", data=posted)
        assert response.status_code == 422
        text = html.unescape(response.get_data(as_text=True))
        assert f"Question {i + 1}, " in text and "a launched survey keeps their number" in text
        assert f'id="wording-questions-{i}-{key}-0-errors"' in text  # the message sits at the field
    db = open_db(auth_client.application)
    stored = get_survey(db, SLUG)
    assert stored.text_version == battery.text_version and wording_history(db, stored.id) == []
    assert stored.survey == battery.survey
    db.close()


@pytest.mark.parametrize("qid", question_ids())
def test_the_store_lets_a_launched_questions_spec_change_in_its_words_only(auth_client, battery, qid):
    """The frozen-design trigger (store/schema.py): a type's own fields (``spec``) of a launched survey may
    change where they hold words the type lets a launched survey reword, and nowhere else."""
    q = battery.survey.questions[_position(qid)]
    db = open_db(auth_client.application)
    try:
        (spec,) = db.execute("SELECT spec FROM questions WHERE qid = ? AND survey_id = ?", [qid, battery.id]).fetchone()
        spec = json.loads(spec) if spec else {}
        update = "UPDATE questions SET spec = ? WHERE qid = ? AND survey_id = ?"
        for key, value in spec.items():
            changed = {**spec, key: f"{value} (reworded)" if isinstance(value, str) else 7}
            if key in q.qtype.wording(q):
                db.execute(update, [json.dumps(changed), qid, battery.id])
                db.execute(update, [json.dumps(spec), qid, battery.id])
            else:
                with pytest.raises(sqlite3.DatabaseError, match="not a draft"):
                    db.execute(update, [json.dumps(changed), qid, battery.id])
        with pytest.raises(sqlite3.DatabaseError, match="not a draft"):
            db.execute(update, [json.dumps({**spec, "added": 1}), qid, battery.id])
    finally:
        db.conn.close()
