"""``deniable.client.submit`` follows display logic as the server does: the client's rule (``asked``, the
client may not import the server) gives, for every combination of answers, the same questions asked as
``deniable.server.survey.logic.shown``; against the real server (a live Flask app on a port), a call that
answers only what is asked is stored, a hidden question need not be answered even when required, and an
answer to a hidden question is refused before anything is sent, naming the question as the server does."""

from __future__ import annotations

import itertools

import pytest

from deniable.client.submit import asked, published_conditions, published_mechanism, submit
from deniable.server.store.db import connect, init_db
from deniable.server.store.responses import load_db_dataset
from deniable.server.store.surveys import insert_survey
from deniable.server.survey import logic
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.recipes import design_document

DEFINITION = {"slug": "logic", "title": "Logic", "questions": [
    {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"], "required": False},
    {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "epsilon": 2.0,
     "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}},
    {"id": "kinds", "text": "Which?", "type": "multi", "options": ["Pipe", "Cigar", "Cigarette"], "required": False,
     "show_if": {"question": "smoke", "in": ["Yes"]}},
    {"id": "pipe", "text": "Pipe brand?", "options": ["A", "B"],
     "show_if": {"question": "kinds", "in": ["Pipe", "Cigarette"]}},
    {"id": "end", "text": "Anything else?", "options": ["Yes", "No"], "epsilon": 1.0},
]}
SURVEY = parse_definition(DEFINITION)
DESIGN = design_document(SURVEY)  # what GET /api/v1/surveys/logic publishes
TICKS = [None, *map(list, itertools.product((0, 1), repeat=3))]


def test_the_clients_rule_is_the_servers_for_every_combination_of_answers():
    """Shared vectors: each answer to smoke (or none) × each set of ticks of kinds (or none)."""
    mechanisms = {q["id"]: published_mechanism(q) for q in DESIGN["questions"]}
    conditions = published_conditions(DESIGN)
    assert set(conditions) == {"many", "kinds", "pipe"}
    seen = set()
    for smoke, kinds in itertools.product([None, 0, 1, 2], TICKS):
        answers = {qid: a for qid, a in (("smoke", smoke), ("kinds", kinds)) if a is not None}
        codes = {"smoke": smoke} if smoke is not None else {}
        if kinds is not None:
            codes["kinds"] = sum(bit << j for j, bit in enumerate(kinds))  # the server's code: a bit mask
        expected = {qid: shown for qid, shown in logic.shown(SURVEY, codes).items() if qid in conditions}
        client = asked(answers, mechanisms, conditions)
        assert client == expected, (answers, client, expected)
        seen.add(tuple(sorted(client.items())))
    assert len(seen) == 4  # every reachable outcome: none asked, many only, many and kinds, all three


def test_a_bad_answer_to_the_deciding_question_names_it():
    mechanisms = {q["id"]: published_mechanism(q) for q in DESIGN["questions"]}
    with pytest.raises(ValueError, match=r"^smoke: answer "):
        asked({"smoke": 3, "many": 0}, mechanisms, published_conditions(DESIGN))
    with pytest.raises(ValueError, match=r"^kinds: answer "):
        asked({"smoke": 0, "kinds": [1, 0]}, mechanisms, published_conditions(DESIGN))


@pytest.fixture
def served(app, live_server):
    db = init_db(app.config["DATABASE"])
    insert_survey(db, SURVEY, status="open")
    db.conn.close()
    return live_server


def stored_reports(app) -> list[dict]:
    db = connect(app.config["DATABASE"])
    try:
        dataset = load_db_dataset(db, "logic")
        return [{qid: int(column[i]) for qid, column in dataset.columns.items() if int(column[i]) >= 0}
                for i in range(dataset.n_rows)]
    finally:
        db.conn.close()


@pytest.mark.parametrize("answers, stored", [
    ({"smoke": 1, "end": 0}, {"smoke", "end"}),  # "No": the required "many" is not asked, so not required
    ({"end": 1}, {"end"}),  # smoke not answered: nothing depends on it is asked
    ({"smoke": 2, "many": 1, "end": 0}, {"smoke", "many", "end"}),
    ({"smoke": 0, "many": 0, "kinds": [0, 1, 0], "end": 1}, {"smoke", "many", "kinds", "end"}),  # no pipe asked
    ({"smoke": 0, "many": 0, "kinds": [0, 0, 1], "pipe": 1, "end": 1}, {"smoke", "many", "kinds", "pipe", "end"}),
])
def test_a_call_that_answers_what_is_asked_is_stored(app, served, answers, stored):
    submit(served, "logic", answers)
    [row] = stored_reports(app)
    assert set(row) == stored


@pytest.mark.parametrize("answers, question, words", [
    ({"smoke": 1, "many": 0, "end": 0}, "many", "asked of respondents who answered smoke = “Yes” or “Sometimes”"),
    ({"many": 0, "end": 0}, "many", "asked of respondents who answered smoke = “Yes” or “Sometimes”"),
    ({"smoke": 2, "many": 0, "kinds": [1, 0, 0], "end": 0}, "kinds", "asked of respondents who answered smoke = “Yes”"),
    ({"smoke": 0, "many": 0, "kinds": [0, 1, 0], "pipe": 0, "end": 0}, "pipe",
     "asked of respondents who answered kinds = “Pipe” or “Cigarette”"),
    ({"smoke": 1, "kinds": [1, 0, 0], "pipe": 0, "end": 0}, "kinds", "answered smoke = “Yes”"),
])
def test_an_answer_to_a_question_not_asked_is_refused_before_anything_is_sent(app, served, answers, question, words):
    with pytest.raises(ValueError) as refused:
        submit(served, "logic", answers)
    assert str(refused.value).startswith(f"{question}: this question is not asked of this respondent (")
    assert words in str(refused.value) and str(refused.value).endswith("send no answer for it")
    assert stored_reports(app) == []
