"""The cross-tab as people see it: its method and notes reach the JSON and the terminal table."""

import json

import numpy as np
import pytest

from deniable.server.survey import estimates as estimates_module
from deniable.server.survey.definition import parse_definition

SURVEY = parse_definition({"slug": "t", "title": "T", "questions": [
    {"id": "a", "text": "A", "options": ["y", "n"], "epsilon": 1},
    {"id": "b", "text": "B", "options": ["u", "v", "w"], "epsilon": 2}]})


def test_method_and_notes_in_json_and_table():
    ct = estimates_module.crosstab_estimates(SURVEY, "a", "b", np.array([[3, 1, 2], [100, 200, 194]]), confidence=0.95)
    data = ct.to_dict()
    assert data["method"] == "exact" and data["converged"] is True
    assert "too few respondents in row 0" in data["note"]
    assert data["cells"][0]["conditional_estimate"] is None  # refused row: no number
    json.dumps(data, allow_nan=False)
    table = ct.table()
    assert "method: exact (conservative: at least 95% for every cell)" in table
    assert "note: too few respondents in row 0" in table


def test_no_note_when_there_is_nothing_to_say():
    ct = estimates_module.crosstab_estimates(SURVEY, "a", "b", np.array([[200, 150, 100], [300, 150, 100]]))
    assert ct.to_dict()["note"] is None and "note:" not in ct.table()


def test_a_protected_question_against_a_direct_one_states_the_protected_epsilon():
    """A direct question adds no ε (the estimator counts it as infinite): the table states the
    protected side's realized ε and names the direct one, instead of "no randomization"."""
    survey = parse_definition({"slug": "t", "title": "T", "questions": [
        {"id": "a", "text": "A", "options": ["y", "n"], "epsilon": 1},
        {"id": "f", "text": "F", "options": ["y", "n"], "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}},
        {"id": "d", "text": "D", "options": ["u", "v"]}]})
    counts = np.array([[200, 150], [300, 350]])
    for qid, realized in (("a", survey.questions[0].mechanism.epsilon), ("f", np.log(0.75 / 0.15))):
        ct = estimates_module.crosstab_estimates(survey, qid, "d", counts)
        data = ct.to_dict()
        assert data["epsilon"] == pytest.approx(realized, rel=1e-8)  # realized with 2⁻³² integer weights
        assert f"ε = {realized:.4f} (d asked directly)" in ct.table()
