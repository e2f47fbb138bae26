"""Rendering estimates: the docs/design.md JSON, the CSV and the terminal table."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from deniable import estimators
from deniable.estimators import EstimateResult
from deniable.server.survey import estimates as estimates_module
from deniable.server.survey.definition import parse_definition

SURVEY = parse_definition({
    "slug": "t", "title": "T",
    "questions": [
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1},
        {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"]},
    ],
})
COUNTS = {"drugs": np.array([420, 580]), "year": np.array([300, 500, 200])}
OPTION_KEYS = ["label", "noisy_count", "estimate", "consistent", "std_error", "ci_low", "ci_high"]
QUESTION_KEYS = ["id", "text", "n", "epsilon", "declared_epsilon", "p", "q", "method", "confidence",
                 "simultaneous", "note", "options"]


def fake_result(k, *, n=100, epsilon=0.99, note=None, nan=False):
    """An EstimateResult with round numbers (not from data), so rendering is tested on its own."""
    values = np.full(k, math.nan if nan else 1 / k)
    return EstimateResult(
        n=n, k=k, epsilon=epsilon, declared_epsilon=1.0, p=0.7, q=0.3, method="wilson", confidence=0.9,
        simultaneous=True, note=note or "", noisy_counts=np.arange(k), estimate=values, consistent=values,
        std_error=values / 10, ci_low=values / 2, ci_high=np.minimum(values * 2, 1))


def test_estimates_csv_cells_are_safe_in_a_spreadsheet():
    survey = parse_definition({"slug": "f", "title": "F", "questions": [
        {"id": "q", "text": "Q", "options": ["=cmd|' /C calc'!A0", "fine"], "epsilon": 1}]})
    result = estimators.estimate([10, 90], 1.0, method="wald")
    rows = list(csv.reader(io.StringIO(estimates_module.Estimates(survey, 100, [(survey.questions[0], result)]).to_csv())))
    assert rows[1][2] == "'=cmd|' /C calc'!A0" and rows[2][2] == "fine"
    assert float(rows[1][estimates_module.CSV_COLUMNS.index("estimate")]) < 0  # numbers stay numbers, negative ones too


def test_json_has_exactly_the_design_fields():
    results = [(SURVEY.questions[0], fake_result(2)),
               (SURVEY.questions[1], fake_result(3, epsilon=math.inf, note="switched to wilson"))]
    data = estimates_module.Estimates(SURVEY, 100, results).to_dict()
    assert list(data) == ["survey", "n_responses", "questions"] and data["survey"] == "t" and data["n_responses"] == 100
    first, second = data["questions"]
    assert list(first) == QUESTION_KEYS and list(first["options"][0]) == OPTION_KEYS
    assert first["epsilon"] == 0.99 and first["declared_epsilon"] == 1.0
    assert second["epsilon"] is None and second["declared_epsilon"] is None  # asked directly
    assert second["note"] == "switched to wilson"
    assert first["options"][1] == {"label": "No", "noisy_count": 1, "estimate": 0.5, "consistent": 0.5,
                                   "std_error": 0.05, "ci_low": 0.25, "ci_high": 1.0}
    json.dumps(data, allow_nan=False)


def test_non_finite_numbers_become_null():
    shown = estimates_module.Estimates(SURVEY, 0, [(SURVEY.questions[0], fake_result(2, n=0, nan=True))])
    data = shown.to_dict()
    option = data["questions"][0]["options"][0]
    assert option["estimate"] is None and option["ci_low"] is None
    json.dumps(data, allow_nan=False)
    assert "—" in shown.table()


def test_csv_one_row_per_question_and_option():
    results = [(SURVEY.questions[0], fake_result(2)), (SURVEY.questions[1], fake_result(3, epsilon=math.inf))]
    rows = list(csv.DictReader(io.StringIO(estimates_module.Estimates(SURVEY, 100, results).to_csv())))
    assert [(r["question"], r["label"]) for r in rows] == [
        ("drugs", "Yes"), ("drugs", "No"), ("year", "First"), ("year", "Second"), ("year", "Third")]
    assert list(rows[0]) == list(estimates_module.CSV_COLUMNS)
    assert rows[0]["epsilon"] == "0.99" and rows[2]["epsilon"] == ""


def test_table_shows_n_epsilon_method_and_interval():
    table = estimates_module.Estimates(SURVEY, 12345, [
        (SURVEY.questions[0], fake_result(2, n=12345, note="exact belt too large: wilson")),
        (SURVEY.questions[1], fake_result(3, epsilon=math.inf))]).table()
    assert table.startswith("T (t): 12,345 responses\n\ndrugs: Drugs?\n")
    assert "drugs: Drugs?" in table
    assert "n = 12,345 · ε = 0.9900 (declared 1) · p = 0.7000, q = 0.3000" in table
    assert "90% simultaneous (Bonferroni) intervals, method: wilson" in table
    assert "[25.0%, 100.0%]" in table and "50.0%" in table
    assert "note: exact belt too large: wilson" in table
    assert "asked directly (not randomized)" in table
    # Columns line up: every row of a block has the same width up to the interval.
    block = table.split("\n\n")[1].splitlines()[3:6]
    assert len({line.index("%") for line in block[1:]}) == 1


def test_survey_estimates_call_the_estimators():
    results = estimates_module.survey_estimates(SURVEY, COUNTS, method="wilson", confidence=0.9)
    assert [q.id for q, _ in results] == ["drugs", "year"]
    drugs = results[0][1]
    expected = estimators.estimate(COUNTS["drugs"], 1.0, confidence=0.9, method="wilson")
    assert np.array_equal(drugs.ci_low, expected.ci_low) and drugs.p == expected.p
    year = results[1][1]
    assert year.p == 1.0 and year.q == 0.0
    assert np.allclose(year.estimate, COUNTS["year"] / 1000)
    data = estimates_module.Estimates(SURVEY, 1000, results).to_dict()
    assert data["questions"][1]["epsilon"] is None and data["questions"][0]["epsilon"] <= 1.0


def test_crosstab_and_subgroups_render():
    survey = parse_definition({"slug": "t", "title": "T", "questions": [
        {"id": "a", "text": "A", "options": ["y", "n"], "epsilon": 1},
        {"id": "b", "text": "B", "options": ["u", "v", "w"], "epsilon": 2},
        {"id": "g", "text": "G", "options": ["g1", "g2"]}]})
    joint = np.array([[200, 150, 100], [300, 150, 100]])
    ct = estimates_module.crosstab_estimates(survey, "a", "b", joint, confidence=0.95)
    data = ct.to_dict()
    assert data["n"] == 1000 and data["declared_epsilon"] == 3.0 and len(data["cells"]) == 6
    assert data["cells"][0]["noisy_count"] == 200 and data["cells"][0]["row_label"] == "y"
    json.dumps(data, allow_nan=False)
    assert "a × b" in ct.table() and ct.summary() == ct.table()
    assert len(ct.to_csv().splitlines()) == 7
    a = survey.question("a")
    sg = estimates_module.Subgroups(question=a, by=survey.question("g"), groups=[
        estimates_module.group_estimate(a, label, False, np.array(row), method="wilson")
        for label, row in zip(("g1", "g2"), ([100, 300], [250, 250]))])
    data = sg.to_dict()
    assert [g["group"] for g in data["groups"]] == ["g1", "g2"] and data["groups"][1]["n"] == 500
    table = sg.table()
    assert "g=g1 (n=400)" in table and "method: wilson" in table


@pytest.mark.parametrize("value,expected", [(np.int64(3), 3), (np.float64(0.5), 0.5), (math.inf, None),
                                            (math.nan, None), (None, None)])
def test_number(value, expected):
    assert estimates_module.json_number(value) == expected
