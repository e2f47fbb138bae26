"""The survey layer of the analysis features: answer patterns, formulas and designs, release documents."""

from __future__ import annotations

import numpy as np
import pytest

from deniable.client import discrete
from deniable.estimators import RegressionError, regress
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.patterns import collapse, daily_counts, from_dataset, n_responses, option_counts
from deniable.server.survey.regression import FormulaError, design, fit_formula, parse_formula
from deniable.server.survey.release import ReleaseError, draw_release, ledger_entries, parse_items

KINDS = ("top", "counts", "groups")

SURVEY = parse_definition({
    "slug": "habits", "title": "Habits", "questions": [
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "Cheated?", "options": ["Never", "Once", "Often"], "epsilon": 2.0, "required": False},
        {"id": "age", "text": "Age", "options": ["18", "25", "40"]},
        {"id": "sex", "text": "Sex", "options": ["f", "m"], "required": False},
    ]})


def dataset(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return Dataset(SURVEY, {"drugs": rng.integers(0, 2, n), "cheat": rng.integers(-1, 3, n),
                            "age": rng.integers(0, 3, n), "sex": rng.integers(-1, 2, n)})


def test_patterns_count_every_row_once():
    data = dataset()
    patterns = from_dataset(data)
    assert n_responses(patterns) == data.n_rows
    matrix = np.column_stack([data.columns[q.id] for q in SURVEY.questions])
    unique, counts = np.unique(matrix, axis=0, return_counts=True)  # independent
    got = np.column_stack([patterns.columns[q.id] for q in SURVEY.questions])
    order = np.lexsort(got.T[::-1])
    np.testing.assert_array_equal(got[order], unique)
    np.testing.assert_array_equal(patterns.counts[order], counts)
    for q in SURVEY.questions:
        np.testing.assert_array_equal(option_counts(patterns, q.id), data.counts(q.id))
    rows, counts = collapse(patterns, ["drugs", "age"])
    assert counts.sum() == data.n_rows and rows.shape[1] == 2


def test_daily_counts_group_by_day():
    patterns = from_dataset(dataset(100))
    patterns.days = np.where(np.arange(len(patterns.counts)) % 2, "2026-01-02", "2026-01-01").astype(object)
    days, table = daily_counts(patterns, "drugs")
    assert days == ["2026-01-01", "2026-01-02"] and table.sum() == 100
    np.testing.assert_array_equal(table.sum(axis=0), option_counts(patterns, "drugs"))


@pytest.mark.parametrize("text,match", [
    ("drugs age", "one '~'"),
    ("drugs ~ age ~ sex", "one '~'"),
    (" ~ age", "no outcome"),
    ("drugs ~ ", "nothing after"),
    ("drugz ~ age", r"unknown question 'drugz' .*expected one of: drugs, cheat, age, sex"),
    ("drugs ~ agee", "unknown question 'agee'"),
    ("drugs ~ cheat", "covariate 'cheat' is protected"),
    ("drugs ~ drugs", "is the outcome"),
    ("drugs ~ age + age", "appears twice"),
    ("drugs ~ age + num(age)", "appears twice"),
    ("drugs ~ age +", "cannot read the covariate ''"),
    ("drugs ~ age * sex", r"cannot read the covariate 'age \* sex'"),
    ("drugs ~ log(age)", "cannot read"),
])
def test_formula_errors_name_the_problem(text, match):
    with pytest.raises(FormulaError, match=match):
        parse_formula(text, SURVEY)


def test_design_dummies_numeric_values_and_complete_cases():
    data = dataset()
    built = design(from_dataset(data), parse_formula("cheat ~ num(age) + sex", SURVEY))
    assert built.names == ("num(age)", "sex[m]")
    assert set(np.unique(built.covariates[:, 0])) == {18.0, 25.0, 40.0}  # the labels are numbers
    complete = (data.columns["cheat"] >= 0) & (data.columns["sex"] >= 0)
    assert built.weights.sum() == complete.sum() and built.left_out == data.n_rows - complete.sum()


def test_fit_formula_equals_regress_on_rows():
    data = dataset()
    _, built, result = fit_formula(from_dataset(data), "drugs ~ age")
    X = np.column_stack([data.columns["age"] == 1, data.columns["age"] == 2]).astype(float)
    direct = regress(data.columns["drugs"], X, 1.0, k=2, profile=False)
    np.testing.assert_allclose(result.params, direct.params, atol=1e-9)
    assert result.names == ("Intercept", "age[25]", "age[40]") and result.options == ("Yes", "No")


def test_fit_formula_reference_label():
    _, _, result = fit_formula(from_dataset(dataset()), "cheat ~ sex", reference="Never", profile=False)
    assert result.reference == 0 and result.names[0] == "Once: Intercept"
    with pytest.raises(FormulaError, match="reference: 'cheat' has no option 'Maybe'"):
        fit_formula(from_dataset(dataset()), "cheat ~ sex", reference="Maybe")


def test_an_empty_level_is_an_empty_cell():
    data = dataset()
    data.columns["age"][data.columns["age"] == 2] = 1
    with pytest.raises(RegressionError, match="empty cell: no response has age = '40'"):
        fit_formula(from_dataset(data), "drugs ~ age")


# ---------------------------------------------------------------- release documents


def test_parse_items_reads_epsilons_and_names_bad_fields():
    items = parse_items(SURVEY, {"counts-age": "1", "top-sex": " 0.5 ", "groups-drugs-age": "", "x": "3"})
    assert [(i.kind, i.question, i.by, i.epsilon) for i in items] == [("counts", "age", None, 1.0),
                                                                       ("top", "sex", None, 0.5)]
    with pytest.raises(ReleaseError, match="counts-age: ε must be a number") as info:
        parse_items(SURVEY, {"counts-age": "lots"})
    assert info.value.field == "counts-age"
    with pytest.raises(ReleaseError, match="counts-age"):
        parse_items(SURVEY, {"counts-age": "0"})
    with pytest.raises(ReleaseError, match="at least one"):
        parse_items(SURVEY, {})


@pytest.mark.parametrize("field,smallest", [("counts-age", 4.7e-10), ("top-sex", 4.7e-10),
                                            ("groups-drugs-age", 4.7e-10)])
def test_parse_items_refuses_an_epsilon_the_noise_cannot_realize(field, smallest):
    """The noise's coin is 32-bit: exp(−ε/scale) must stay below 1 − 2⁻³², so ε ≥ scale · 2.33e-10
    (scale 2 for every kind here: Δ = 2 for counts and tables, 2Δ = 2 for the top answer)."""
    with pytest.raises(ReleaseError, match=f"{field}: ε = 4.6e-10 is too small.*ε ≥ 4.7e-10") as info:
        parse_items(SURVEY, {field: "4.6e-10"})
    assert info.value.field == field
    assert parse_items(SURVEY, {field: str(smallest)})[0].epsilon == smallest


def test_a_release_document_holds_noisy_consistent_values_and_its_ledger():
    data = dataset()
    patterns = from_dataset(data)
    items = parse_items(SURVEY, {"counts-sex": "1", "top-age": "0.5", "groups-drugs-age": "1"})
    rng = np.random.default_rng(3)
    document = draw_release(patterns, items, discrete.source(rng), day="2026-01-05")
    assert document["n"] == 3000 and document["epsilon"] == 2.5
    top, counts, groups = (next(i for i in document["items"] if i["kind"] == kind) for kind in KINDS)
    assert counts["labels"] == ["f", "m", "(not answered)"]  # sex is optional
    assert sum(counts["counts"]) == 3000 and min(counts["counts"]) >= 0
    truth = np.bincount(data.columns["sex"] + 1, minlength=3)[[1, 2, 0]] / 3000
    assert np.all(np.array(counts["ci_low"]) <= truth) and np.all(truth <= np.array(counts["ci_high"]))
    assert np.all(np.abs(np.array(counts["noisy"]) - truth * 3000) <= 40)  # ε = 1, Δ = 2: noise of a few units
    assert counts["sensitivity"] == 2 and counts["mechanism"] == "geometric"
    assert top["mechanism"] == "exponential" and top["sensitivity"] == 1 and 0 <= top["top"] < 3
    assert [g["label"] for g in groups["groups"]] == ["18", "25", "40"]  # age is required
    totals = np.sum([g["counts"] for g in groups["groups"]], axis=0)
    np.testing.assert_array_equal(totals, document["protected"]["drugs"])  # consistent with the exact counts
    entries = ledger_entries(document)
    assert [e["epsilon"] for e in entries] == [0.5, 1.0, 1.0]  # in the order of the candidates
    assert all(e["realized_epsilon"] <= e["epsilon"] for e in entries)
