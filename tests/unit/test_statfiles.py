"""SPSS and Stata files: value labels, missing answers, and Stata's short variable names."""

from __future__ import annotations

import numpy as np
import pyreadstat

from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.statfiles import variable_names, write_stat_file

LONG = "a_question_id_far_longer_than_stata_allows"
SURVEY = parse_definition({"slug": "s", "title": "S", "questions": [
    {"id": LONG, "text": "Long?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": LONG[:-1] + "x", "text": "Also long?", "options": ["Yes", "No"], "required": False},
]})


def test_stata_names_are_cut_and_kept_unique_spss_names_are_whole():
    names = variable_names([q.id for q in SURVEY.questions], 31)
    assert names == [LONG[:31], LONG[:29] + "_2"] and all(len(n) <= 31 for n in names)
    assert variable_names([q.id for q in SURVEY.questions], None) == [q.id for q in SURVEY.questions]


def test_round_trip_through_pyreadstat(tmp_path):
    data = Dataset(SURVEY, {LONG: np.array([0, 1, 1]), LONG[:-1] + "x": np.array([1, -1, 0])})
    write_stat_file(tmp_path / "r.dta", data, "dta")
    frame, meta = pyreadstat.read_dta(str(tmp_path / "r.dta"), apply_value_formats=True)
    assert list(frame.columns) == [LONG[:31], LONG[:29] + "_2"]
    assert frame[LONG[:31]].tolist() == ["Yes", "No", "No"]
    assert frame[LONG[:29] + "_2"].isna().tolist() == [False, True, False]
    write_stat_file(tmp_path / "r.sav", data, "sav", text_versions=np.array([1, 1, 2]))
    frame, meta = pyreadstat.read_sav(str(tmp_path / "r.sav"))
    assert list(frame.columns) == [LONG, LONG[:-1] + "x", "text_version"]
    assert frame["text_version"].tolist() == [1, 1, 2] and meta.column_labels[:2] == ["Long?", "Also long?"]
