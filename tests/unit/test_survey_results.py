"""Every survey-level result renders itself, one battery for all of them (as scikit-learn's
``check_estimator`` runs on every estimator): each is a :class:`deniable.estimators.result.Result`
whose ``to_dict()`` is JSON (no NaN), ``to_csv()`` a CSV whose every row has the header's columns,
``table()`` the text ``deniable estimate`` prints and ``summary()`` that table.  A group's label
with a line break stays in its one cell of a subgroups CSV."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from deniable.estimators.result import Result
from deniable.server.survey import analysis, raking, weighted
from deniable.server.survey.dataset import Dataset, DesignColumns
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.estimates import Estimates, EverySubgroup, SurveyResult

SURVEY = parse_definition({"slug": "s", "title": "S", "questions": [
    {"id": "g", "text": "Campus?", "options": ["North\nside", "South"]},
    {"id": "a", "text": "Cheated?", "options": ["Yes", "No"], "epsilon": 1},
    {"id": "d", "text": "Year?", "options": ["First", "Second", "Third"]}]})
N = 300
COLUMNS = DesignColumns(weights="w", strata="s", cluster=None, fpc=None)


def dataset() -> Dataset:
    rng = np.random.default_rng(3)
    codes = {"g": rng.integers(0, 2, N), "a": rng.integers(0, 2, N), "d": rng.integers(0, 3, N)}
    design = {"weights": rng.gamma(2.0, 30.0, N), "strata": rng.choice(["x", "y"], N).astype(object)}
    return Dataset(SURVEY, {k: v.astype(np.int64) for k, v in codes.items()}, design=design)


def results() -> dict:
    data = dataset()
    g, a, d = (SURVEY.question(qid) for qid in ("g", "a", "d"))
    margins = raking.parse_margins({"g": {"0": 0.4, "South": 0.6}}, SURVEY)
    return {
        "Estimates": Estimates(SURVEY, N, analysis.marginal_estimates(SURVEY, data.all_stats())),
        "Crosstab": analysis.crosstab(SURVEY, "a", "d", data),
        "Subgroups": analysis.subgroups(SURVEY, "a", "g", data),
        "EverySubgroup": EverySubgroup(SURVEY, g, analysis.every_subgroup(SURVEY, "g", data)),
        "Weighted": weighted.weighted_estimates(data, COLUMNS),
        "WeightedSubgroups": weighted.weighted_subgroups(data, COLUMNS, g),
        "WeightedCrosstab": weighted.weighted_crosstab_of(data, COLUMNS, a, d),
        "Raked": raking.raked_estimates(data, margins),
        "RakedBy": raking.raked_by(data, margins, g),
        "RakedCrosstab": raking.raked_crosstab_of(data, margins, a, d),
    }


RESULTS = results()


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_a_result_renders_itself(name):
    result = RESULTS[name]
    assert isinstance(result, SurveyResult) and isinstance(result, Result)
    json.dumps(result.to_dict(), allow_nan=False)
    header, *rows = list(csv.reader(io.StringIO(result.to_csv())))
    assert rows and all(len(row) == len(header) for row in rows), name
    table = result.table()
    assert table.endswith("\n") and result.summary() == table


@pytest.mark.parametrize("name", ["Subgroups", "EverySubgroup", "WeightedSubgroups", "RakedBy"])
def test_a_label_with_a_line_break_stays_in_its_cell(name):
    header, *rows = list(csv.reader(io.StringIO(RESULTS[name].to_csv())))
    groups = {row[header.index("group")] for row in rows}
    assert groups == {"North\nside", "South", "not answered"}


def test_the_tables_head_what_deniable_estimate_prints_above_them():
    assert RESULTS["Estimates"].table().startswith("S (s): 300 responses\n\ng: Campus?\n")
    assert RESULTS["Weighted"].table().startswith("S (s): 300 responses\ndesign: weighted by column 'w' · 2 strata")
    assert RESULTS["Raked"].table().startswith("S (s): 300 responses\nraked to the margins of 'g' in ")
