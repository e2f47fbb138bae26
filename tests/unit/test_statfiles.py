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


TYPED = parse_definition({"slug": "t", "title": "T", "questions": [
    {"id": "x" * 40, "text": "Which of these? " + "long words " * 12, "type": "multi",
     "options": ["Cannabis", "Cocaine"], "epsilon": 2.0},
    {"id": "x" * 40 + "y", "text": "How many?", "type": "list", "items": ["A bike", "A car"],
     "sensitive": "Shoplifted", "epsilon": 1.0},
    {"id": "text_version", "text": "Drinks?", "type": "numeric", "min": 0, "max": 20, "step": 0.5},
]})


def test_suffixed_names_keep_their_suffix_and_stay_unique_within_each_formats_limit():
    assert variable_names(["b" * 40, "b" * 40], 8, ["_arm", "_count"]) == ["bbbb_arm", "bb_count"]
    assert variable_names(["a" * 40, "a" * 40], 10, ["_1", "_1"]) == ["aaaaaaaa_1", "aaaaaa_2_1"]
    assert variable_names(["text_version"], None, taken=("text_version",)) == ["text_version_2"]


def test_every_types_columns_in_stata_and_spss(tmp_path):
    multi, listexp, numeric = TYPED.questions
    data = Dataset(TYPED, {multi.id: np.array([0b01, 0b10, -1]), listexp.id: np.array([3, 1 * listexp.k + 2, -1]),
                           numeric.id: np.array([0, 25, -1])})
    for fmt, reader, limit, label_limit in (("dta", pyreadstat.read_dta, 31, 80),
                                            ("sav", pyreadstat.read_sav, 64, 256)):
        write_stat_file(tmp_path / f"r.{fmt}", data, fmt, text_versions=np.array([1, 1, 1]))
        frame, meta = reader(str(tmp_path / f"r.{fmt}"))
        names = list(frame.columns)
        assert len(names) == len(set(names)) == 2 + 2 + 1 + 1 and all(len(n) <= limit for n in names)
        assert names[0].endswith("_1") and names[1].endswith("_2") and names[2].endswith("_arm")
        assert names[3].endswith("_count") and names[4].startswith("text_version_") and names[5] == "text_version"
        assert frame[names[0]].tolist()[:2] == [1, 0] and frame[names[1]].tolist()[:2] == [0, 1]
        assert meta.variable_value_labels[names[0]] == {0: "No", 1: "Yes"}
        assert meta.column_labels[0].endswith(": Cannabis") and len(meta.column_labels[0]) <= label_limit
        assert frame[names[2]].tolist()[:2] == [0, 1] and frame[names[3]].tolist()[:2] == [3, 2]
        assert meta.variable_value_labels[names[2]] == {0: "control", 1: "treatment"}
        assert frame[names[4]].tolist()[:2] == [0.0, 12.5] and names[4] not in meta.variable_value_labels
        assert frame.iloc[2, :5].isna().all()  # not answered: missing in every column


def test_names_a_format_refuses_are_prefixed_so_that_the_file_is_written(tmp_path):
    survey = parse_definition({"slug": "r", "title": "R", "questions": [
        {"id": "_x", "text": "X?", "options": ["Yes", "No"]}, {"id": "int", "text": "I?", "options": ["Yes", "No"]},
        {"id": "all", "text": "A?", "options": ["Yes", "No"]}]})
    data = Dataset(survey, {"_x": np.array([0, 1]), "int": np.array([1, 0]), "all": np.array([0, 0])})
    write_stat_file(tmp_path / "r.sav", data, "sav")
    assert list(pyreadstat.read_sav(str(tmp_path / "r.sav"))[0].columns) == ["v_x", "int", "vall"]
    write_stat_file(tmp_path / "r.dta", data, "dta")
    frame, meta = pyreadstat.read_dta(str(tmp_path / "r.dta"))
    assert list(frame.columns) == ["_x", "vint", "all"] and meta.column_labels == ["X?", "I?", "A?"]
