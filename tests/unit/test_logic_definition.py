"""Display and skip logic (a question's ``show_if``) and pages (``page_break``) in survey definitions:
every malformed condition is refused at its field, a condition on a protected answer is refused
saying why, and which questions are asked follows the direct answers (server/survey/logic.py)."""

from __future__ import annotations

import copy

import pytest

from deniable.server.survey import logic
from deniable.server.survey.definition import DefinitionError, dumps_definition, loads_definition, parse_definition

BASE = {"slug": "logic", "title": "Logic", "questions": [
    {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"]},
    {"id": "drugs", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "kinds", "text": "Which?", "type": "multi", "options": ["Pipe", "Cigar", "Vape"], "required": False},
    {"id": "age", "text": "Age?", "type": "numeric", "min": 18, "max": 30},
    {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "epsilon": 2.0,
     "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}, "page_break": True},
    {"id": "pipe", "text": "Pipe brand?", "options": ["A", "B"], "show_if": {"question": "kinds", "in": ["Pipe"]}},
]}


def definition(i=None, **changes):
    data = copy.deepcopy(BASE)
    if i is not None:
        data["questions"][i].update(changes)
        data["questions"][i] = {k: v for k, v in data["questions"][i].items() if v is not None}
    return data


def test_a_valid_definition_round_trips_with_its_conditions_and_page_breaks():
    survey = parse_definition(definition())
    assert survey.questions[4].show_if.question == "smoke" and survey.questions[4].page_break
    again = loads_definition(dumps_definition(survey))
    assert again == survey and again.to_dict()["questions"][4]["show_if"] == {"question": "smoke",
                                                                                  "in": ["Yes", "Sometimes"]}
    assert [[q.id for q in page] for page in logic.pages(survey)] == [["smoke", "drugs", "kinds", "age"],
                                                                       ["many", "pipe"]]


BAD = [
    ({"show_if": "smoke"}, "questions[4].show_if", "must be an object"),
    ({"show_if": {"question": "smoke", "in": ["Yes"], "not": ["No"]}}, "questions[4].show_if", "unknown key 'not'"),
    ({"show_if": {"in": ["Yes"]}}, "questions[4].show_if.question", "earlier question"),
    ({"show_if": {"question": 3, "in": ["Yes"]}}, "questions[4].show_if.question", "earlier question"),
    ({"show_if": {"question": "smoke"}}, "questions[4].show_if.in", "non-empty list"),
    ({"show_if": {"question": "smoke", "in": []}}, "questions[4].show_if.in", "non-empty list"),
    ({"show_if": {"question": "smoke", "in": [1]}}, "questions[4].show_if.in", "non-empty list"),
    ({"show_if": {"question": "smoke", "in": ["Yes", "Yes"]}}, "questions[4].show_if.in", "more than once"),
    ({"show_if": {"question": "nobody", "in": ["Yes"]}}, "questions[4].show_if.question", "no question 'nobody'"),
    ({"show_if": {"question": "many", "in": ["1-5"]}}, "questions[4].show_if.question", "comes at it"),
    ({"show_if": {"question": "pipe", "in": ["A"]}}, "questions[4].show_if.question", "comes after it"),
    ({"show_if": {"question": "drugs", "in": ["Yes"]}}, "questions[4].show_if.question",
     "would reveal the protected answer"),
    ({"show_if": {"question": "age", "in": ["18"]}}, "questions[4].show_if.question", "only a single-choice or check-all"),
    ({"show_if": {"question": "smoke", "in": ["Yes", "Never"]}}, "questions[4].show_if.in[1]",
     "'Never' is not an option of 'smoke'"),
    ({"page_break": "yes"}, "questions[4].page_break", "must be true or false"),
]


@pytest.mark.parametrize(("changes", "field", "words"), BAD)
def test_every_bad_condition_is_refused_at_its_field(changes, field, words):
    with pytest.raises(DefinitionError) as caught:
        parse_definition(definition(4, **changes))
    assert caught.value.field == field and words in caught.value.problem, str(caught.value)


@pytest.mark.parametrize("design", [{"name": "warner", "p": 0.75}, {"name": "forced", "p": 0.6, "forced": [0.4, 0.0]}])
def test_a_condition_on_a_randomized_design_is_refused_even_without_an_epsilon(design):
    """The second design has a zero cell: it is not ε-LDP, so it has no ε, yet it is randomized."""
    data = definition(1, epsilon=None, design=design)
    data["questions"][4]["show_if"] = {"question": "drugs", "in": ["Yes"]}
    with pytest.raises(DefinitionError) as caught:
        parse_definition(data)
    assert caught.value.field == "questions[4].show_if.question" and "protected" in caught.value.problem


def test_a_condition_on_a_protected_check_all_question_is_refused():
    data = definition(2, epsilon=1.0)
    with pytest.raises(DefinitionError) as caught:
        parse_definition(data)
    assert caught.value.field == "questions[5].show_if.question" and "reveal" in caught.value.problem


def test_a_page_break_on_the_first_question_is_refused():
    with pytest.raises(DefinitionError) as caught:
        parse_definition(definition(0, page_break=True))
    assert caught.value.field == "questions[0].page_break"


def test_shown_follows_the_direct_answers_and_a_hidden_question_hides_its_dependents():
    data = definition()
    data["questions"].append({"id": "brand", "text": "Brand?", "options": ["X", "Y"],
                              "show_if": {"question": "pipe", "in": ["A"]}})
    survey = parse_definition(data)
    # smoke: 0 Yes, 1 No, 2 Sometimes; kinds: a bit mask (Pipe = bit 0); pipe: 0 = "A"
    assert logic.shown(survey, {"smoke": 2, "kinds": 0b101, "pipe": 0}) == {
        "smoke": True, "drugs": True, "kinds": True, "age": True, "many": True, "pipe": True, "brand": True}
    hidden = logic.shown(survey, {"smoke": 1, "kinds": 0b110, "pipe": 0})
    assert not hidden["many"] and not hidden["pipe"] and not hidden["brand"]  # brand: pipe was not asked
    assert not logic.shown(survey, {"smoke": 0})["pipe"]  # kinds not answered: pipe not asked
    assert logic.asked_of(survey.questions[4]) == "asked of respondents who answered smoke = “Yes” or “Sometimes”"
    assert logic.asked_of(survey.questions[0]) is None



def test_simulated_respondents_answer_only_the_questions_they_are_asked():
    """``simulate_dataset`` (``deniable simulate``) follows the display logic: a question is answered
    exactly where its condition holds, checked row by row against logic.shown."""
    import numpy as np

    from deniable.server.survey.simulate import simulate_dataset

    survey = parse_definition(definition())
    raw = {"smoke": [0.3, 0.5, 0.2], "drugs": [0.2, 0.8], "kinds": [0.5, 0.4, 0.1],
           "age": {"values": [18, 30], "probabilities": [0.5, 0.5]}, "many": [0.6, 0.4], "pipe": [0.5, 0.5]}
    truth = {q.id: q.qtype.truth(q, raw[q.id], q.id) for q in survey.questions}
    columns = simulate_dataset(survey, truth, 400, np.random.default_rng(3)).columns
    for row in range(400):
        codes = {qid: int(col[row]) for qid, col in columns.items() if int(col[row]) >= 0}
        asked = logic.shown(survey, codes)
        assert all(asked[qid] == (qid in codes) for qid in ("many", "pipe")), codes
    assert 0 < (np.asarray(columns["many"]) >= 0).sum() < 400 and 0 < (np.asarray(columns["pipe"]) >= 0).sum() < 400
