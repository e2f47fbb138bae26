"""Survey definitions: parsing, the messages that name the field, and the round trip."""

from __future__ import annotations

import copy
import json

import pytest

from deniable.server.survey.definition import (
    DefinitionError,
    dumps_definition,
    load_definition,
    loads_definition,
    parse_definition,
)

GOOD = {
    "slug": "drugs-2024",
    "title": "Student survey",
    "description": "About habits.",
    "questions": [
        {"id": "cannabis", "text": "Used cannabis this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "year", "text": "Year of study", "options": ["1", "2", "3", "4+"]},
        {"id": "cheat", "text": "Cheated on an exam?", "options": ["Never", "Once", "More"],
         "epsilon": 2, "required": False},
    ],
}


def with_change(path, value=None, *, delete=False):
    data = copy.deepcopy(GOOD)
    target = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


def test_good_definition():
    survey = parse_definition(GOOD)
    assert survey.slug == "drugs-2024" and len(survey.questions) == 3
    cannabis, year, cheat = survey.questions
    assert cannabis.protected and cannabis.k == 2 and cannabis.mechanism.k == 2
    assert not year.protected and not year.mechanism.protected and year.mechanism.p == 1 and year.epsilon is None
    assert cheat.epsilon == 2.0 and not cheat.required
    assert survey.total_epsilon == pytest.approx(3.0) and survey.total_epsilon <= 3.0  # realized
    assert survey.question("year") is year
    with pytest.raises(KeyError):
        survey.question("nope")


@pytest.mark.parametrize("data, message", [
    ({"slug": "demo\n"}, "slug: must be lowercase letters"),
    ({"questions": [{"id": "q\n", "text": "Q", "options": ["a", "b"]}]}, "questions[0].id: must be a letter"),
    ({"questions": [{"id": "q", "text": "Q", "options": ["=1+1", "'=1+1"]}]},
     "questions[0].options[0]: label '=1+1' is written \"'=1+1\" in CSV exports"),
])
def test_identifiers_match_whole_and_labels_stay_distinct_in_spreadsheets(data, message):
    base = {"slug": "s", "title": "T", "questions": [{"id": "q", "text": "Q", "options": ["a", "b"]}]}
    with pytest.raises(DefinitionError) as info:
        parse_definition({**base, **data})
    assert str(info.value).startswith(message)


def test_round_trip():
    survey = parse_definition(GOOD)
    assert loads_definition(dumps_definition(survey)) == survey
    assert parse_definition(survey.to_dict()) == survey


@pytest.mark.parametrize(
    "data,message",
    [
        ([], "definition: must be a JSON object"),
        (with_change(["extra"], 1), "definition: unknown key 'extra'"),
        (with_change(["slug"], delete=True), "slug: is required"),
        (with_change(["slug"], "Bad Slug"), "slug: must be lowercase letters"),
        (with_change(["title"], "  "), "title: must not be empty"),
        (with_change(["title"], 3), "title: must be a string, got 3"),
        (with_change(["questions"], []), "questions: must be a non-empty list"),
        (with_change(["questions", 0], "q"), "questions[0]: must be an object"),
        (with_change(["questions", 0, "id"], "1abc"), "questions[0].id: must be a letter"),
        (with_change(["questions", 0, "id"], "csrf_token"), "questions[0].id: 'csrf_token' is reserved"),
        (with_change(["questions", 1, "text"], delete=True), "questions[1].text: is required"),
        (with_change(["questions", 1, "options"], ["only"]), "questions[1].options: needs between 2 and 64"),
        (with_change(["questions", 1, "options"], "a,b"), "questions[1].options: must be a list"),
        (with_change(["questions", 1, "options"], ["a", "a"]), "questions[1].options[1]: duplicate label 'a'"),
        (with_change(["questions", 1, "options"], ["a", ""]), "questions[1].options[1]: must not be empty"),
        (with_change(["questions", 0, "epsilon"], 0), "questions[0].epsilon: epsilon must be a finite number"),
        (with_change(["questions", 0, "epsilon"], 25), "questions[0].epsilon: epsilon must be a finite number"),
        (with_change(["questions", 0, "epsilon"], "1"), "questions[0].epsilon: epsilon must be a number"),
        (with_change(["questions", 2, "required"], "no"), "questions[2].required: must be true or false"),
        (with_change(["questions", 2, "weight"], 1), "questions[2]: unknown key 'weight'"),
        (with_change(["questions", 2, "id"], "cannabis"), "questions[2].id: duplicate question id 'cannabis'"),
    ],
)
def test_bad_definitions_name_the_field(data, message):
    with pytest.raises(DefinitionError) as info:
        parse_definition(data)
    assert str(info.value).startswith(message)


def test_file_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "survey.json"
    path.write_text('{\n  "slug": "x",\n  "title": \n}\n')
    with pytest.raises(DefinitionError, match=r"survey\.json: line 4: not valid JSON"):
        load_definition(path)
    path.write_text(json.dumps(with_change(["slug"], "Bad")))
    with pytest.raises(DefinitionError, match=r"survey\.json: slug: must be lowercase"):
        load_definition(path)
    with pytest.raises(DefinitionError, match=r"missing\.json: cannot read"):
        load_definition(tmp_path / "missing.json")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    assert load_definition(good).slug == "drugs-2024"
