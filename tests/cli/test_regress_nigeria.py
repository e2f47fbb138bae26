"""``deniable regress`` reproduces R's ``rr::rrreg`` on rr's own Nigeria data: numeric covariates from the
responses file and transforms in the formula (tests/data/nigeria/README.md says where the numbers come from)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.responses_csv import write_responses_csv

DATA = Path(__file__).resolve().parents[1] / "data" / "nigeria"
COLUMNS = {"asset": "cov.asset.index", "married": "cov.married", "age": "cov.age", "education": "cov.education",
           "female": "cov.female"}
DEFINITION = {"slug": "nigeria", "title": "Nigeria (rr 1.4.2)", "questions": [
    {"id": "rr_q1", "text": "Have you ever ...? (forced response)", "options": ["Yes", "No"], "epsilon": math.log(5)},
    {"id": "asset", "text": "Asset index", "type": "numeric", "min": 0, "max": 9, "required": False},
    {"id": "married", "text": "Married", "type": "numeric", "min": 0, "max": 1, "required": False},
    {"id": "age", "text": "Age", "type": "numeric", "min": 16, "max": 99, "required": False},
    {"id": "education", "text": "Education", "type": "numeric", "min": 1, "max": 10, "required": False},
    {"id": "female", "text": "Female", "type": "numeric", "min": 0, "max": 1, "required": False}]}
FORMULA = "rr_q1 ~ asset + married + I(age/10) + I((age/10)^2) + education + female"


def files(tmp_path) -> tuple[Path, Path]:
    """The survey definition and its responses file, written by the project's own writer."""
    survey = parse_definition({**DEFINITION, "questions": [{**q, "required": q.get("required", False)}
                                                            for q in DEFINITION["questions"]]})
    with open(DATA / "nigeria.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    columns = {"rr_q1": np.array([-1 if r["rr.q1"] == "" else 1 - int(float(r["rr.q1"])) for r in rows])}
    for qid, name in COLUMNS.items():
        low = float(survey.question(qid).minimum)
        columns[qid] = np.array([-1 if r[name] == "" else int(float(r[name]) - low) for r in rows])
    definition, responses = tmp_path / "nigeria.json", tmp_path / "responses.csv"
    definition.write_text(json.dumps({**DEFINITION, "questions": [{**q, "required": False}
                                                                  for q in DEFINITION["questions"]]}))
    write_responses_csv(responses, Dataset(survey, columns))
    return definition, responses


def test_deniable_regress_reproduces_rrreg_on_the_nigeria_data(tmp_path):
    definition, responses = files(tmp_path)
    result = CliRunner().invoke(cli, ["regress", str(definition), str(responses), FORMULA, "--format", "json",
                                      "--no-profile"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert data["models"] == "log-odds of Yes against No" and data["left_out"] == 2457 - 2423
    with open(DATA / "rr_rrreg_reference.csv", newline="") as fh:
        reference = list(csv.DictReader(fh))
    coefficients = data["coefficients"]
    assert [c["name"] for c in coefficients] == ["Intercept", "asset", "married", "I(age / 10)", "I((age / 10)^2)",
                                                 "education", "female"]
    for ours, theirs in zip(coefficients, reference):
        assert ours["estimate"] == pytest.approx(float(theirs["coef"]), abs=1e-5), theirs["term"]
        assert ours["std_error"] == pytest.approx(float(theirs["se_observed_information"]), rel=1e-5), theirs["term"]
    assert data["loglik"] == pytest.approx(-1540.118, abs=1e-3)


def test_a_covariate_in_cents_or_in_dollars_gives_the_same_fit(tmp_path):
    """The fit runs on scaled columns: the units change the coefficient's units and nothing else."""
    from deniable import estimators

    rng = np.random.default_rng(2)
    income = rng.integers(1_000, 90_000, 3000).astype(float)  # dollars
    truth = rng.random(3000) < 1 / (1 + np.exp(-(-1 + income / 40_000)))
    reports = np.where(rng.random(3000) < 0.8, ~truth, truth).astype(int)  # Yes = 0
    dollars = estimators.regress(reports, income, math.log(4), k=2, names=["income"])
    cents = estimators.regress(reports, income * 100, math.log(4), k=2, names=["income"])
    assert cents.params[1] * 100 == pytest.approx(dollars.params[1], rel=1e-7)
    assert cents.z == pytest.approx(dollars.z, rel=1e-6)
    assert cents.profile_low[1] * 100 == pytest.approx(dollars.profile_low[1], rel=1e-6)


@pytest.mark.parametrize("formula,message", [
    ("rr_q1 ~ I(age/)", "cannot read I(age/)"),
    ("rr_q1 ~ I(__import__('os'))", "only numbers, question ids"),
    ("rr_q1 ~ I(3)", "names no question"),
    ("rr_q1 ~ I(age/(married-married))", "is not a finite number"),
    ("rr_q1 ~ I(nope/10)", "unknown question 'nope'"),
    ("rr_q1 ~ age + (married", "unbalanced parentheses"),
    ("rr_q1 ~ age + age", "appears twice"),
    ("rr_q1 ~ rr_q1:age", "is the outcome"),
])
def test_bad_formulas_are_one_line_naming_the_problem(tmp_path, formula, message):
    definition, responses = files(tmp_path)
    result = CliRunner().invoke(cli, ["regress", str(definition), str(responses), formula, "--no-profile"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("Error: ") and message in lines[-1], result.output


def test_interactions_multiply_their_columns(tmp_path):
    definition, responses = files(tmp_path)
    result = CliRunner().invoke(cli, ["regress", str(definition), str(responses), "rr_q1 ~ age + female + age:female",
                                      "--format", "json", "--no-profile"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert [c["name"] for c in data["coefficients"]] == ["Intercept", "age", "female", "age:female"]
