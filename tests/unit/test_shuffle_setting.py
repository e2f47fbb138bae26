"""A question's ``"shuffle"`` in a survey definition: true or false, true only on a type with options to
shuffle (single choice, with or without a design, and check all that apply); a bad value is refused
at ``questions[i].shuffle``, naming the question."""

from __future__ import annotations

import pytest

from deniable.server.survey.definition import (DefinitionError, design_fingerprint, dumps_definition,
                                               loads_definition, parse_definition)

CHOICE = {"id": "drugs", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0}


def survey(*questions):
    return {"slug": "s", "title": "S", "questions": [{"id": "first", "text": "First?", "options": ["a", "b"]},
                                                      *questions]}


@pytest.mark.parametrize("question, problem", [
    ({**CHOICE, "shuffle": "yes"}, "question 'drugs': must be true or false, got \"yes\""),
    ({**CHOICE, "shuffle": 1}, "question 'drugs': must be true or false, got 1"),
    ({**CHOICE, "shuffle": None}, "question 'drugs': must be true or false, got null"),
    ({**CHOICE, "shuffle": [True]}, "question 'drugs': must be true or false, got [true]"),
    ({"id": "age", "text": "Age?", "type": "numeric", "min": 18, "max": 30, "shuffle": True},
     "question 'age': a number question has no options to shuffle"),
    ({"id": "items", "text": "How many?", "type": "list", "items": ["a", "b"], "sensitive": "s", "shuffle": True},
     "question 'items': a list experiment question has no options to shuffle"),
])
def test_a_bad_shuffle_is_refused_at_its_field_naming_the_question(question, problem):
    with pytest.raises(DefinitionError) as caught:
        parse_definition(survey(question))
    assert caught.value.field == "questions[1].shuffle" and caught.value.problem.startswith(problem)
    assert str(caught.value).startswith(f"questions[1].shuffle: {problem}")


@pytest.mark.parametrize("question", [
    {**CHOICE, "shuffle": True},
    {"id": "ticks", "text": "Which?", "type": "multi", "options": ["a", "b", "c"], "epsilon": 1.0, "shuffle": True},
    {"id": "warner", "text": "W?", "options": ["Yes", "No"], "design": {"name": "warner", "p": 0.75}, "shuffle": True},
    {"id": "plain", "text": "P?", "options": ["a", "b"], "shuffle": True},
])
def test_shuffle_is_kept_through_the_json_and_changes_nothing_a_report_means(question):
    parsed = parse_definition(survey(question))
    again = loads_definition(dumps_definition(parsed))
    assert again == parsed and again.questions[1].shuffle is True
    assert '"shuffle": true' in dumps_definition(parsed)
    plain = parse_definition(survey({k: v for k, v in question.items() if k != "shuffle"}))
    assert plain.questions[1].shuffle is False and '"shuffle"' not in dumps_definition(plain)
    # the design fingerprint (what reports mean) is the same with or without it
    assert design_fingerprint(parsed) == design_fingerprint(plain)


def test_false_is_allowed_on_any_type_and_not_written_back():
    parsed = parse_definition(survey({"id": "age", "text": "Age?", "type": "numeric", "min": 18, "max": 30,
                                      "shuffle": False}))
    assert parsed.questions[1].shuffle is False and "shuffle" not in parsed.to_dict()["questions"][1]
