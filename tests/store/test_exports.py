"""Exports: the responses (CSV, SPSS, Stata) with a codebook that states the design and the wording
each response was answered under; read back by the project's own reader and by pyreadstat."""

from __future__ import annotations

import csv
import json

import pyreadstat
import pytest

from deniable.server.store.exports import load_export, write_export
from deniable.server.store.responses import load_db_dataset
from support.store import next_day, store_response
from deniable.server.store.surveys import insert_survey
from deniable.server.store.wording import fix_wording
from deniable.server.survey.codebook import DesignMismatch, check_design, design_line
from deniable.server.survey.definition import DefinitionError, design_fingerprint, load_definition, loads_definition
from deniable.server.survey.responses_csv import read_design, read_responses_csv


@pytest.fixture
def answered(db, stored):
    store_response(db, stored, {"drug_use": 1, "cheating": 2, "age_group": 0})
    store_response(db, stored, {"drug_use": 0, "cheating": 3})
    return stored


def test_export_is_the_pair_estimate_reads(db, answered, tmp_path):
    csv_path, json_path = write_export(db, "demo", tmp_path / "out")
    assert (csv_path.name, json_path.name) == ("demo-responses.csv", "demo-codebook.json")
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == design_line(answered.survey) and lines[0].startswith("# deniable responses | survey=demo")
    assert lines[1] == "drug_use,cheating,age_group,text-version"
    assert sorted(lines[2:]) == ["No,Often,,1", "Yes,A few times,Under 30,1"]  # in no particular order
    survey = load_definition(json_path)
    assert survey == answered.survey
    assert read_design(csv_path)["design"] == design_fingerprint(survey)
    again = read_responses_csv(csv_path, survey)
    original = load_db_dataset(db, "demo")
    # The same rows, in an order drawn at random (written from the answer patterns: test_export_from_patterns.py)
    ids = list(original.columns)
    assert sorted(zip(*(again.columns[qid].tolist() for qid in ids))) == \
        sorted(zip(*(original.columns[qid].tolist() for qid in ids)))


def test_the_codebook_states_each_mechanism_and_the_fingerprint(db, answered, tmp_path):
    codebook = json.loads(load_export(db, "demo").codebook())
    drug = codebook["questions"][0]["randomization"]
    mech = answered.survey.questions[0].mechanism
    assert drug == {"k": 2, "threshold": mech.threshold, "declared_epsilon": answered.survey.questions[0].epsilon,
                    "realized_epsilon": mech.epsilon, "p": mech.p, "q": mech.q,
                    "matrix": [[mech.p, mech.q], [mech.q, mech.p]]}  # the README's R snippet reads it
    assert codebook["questions"][2]["randomization"]["declared_epsilon"] is None  # asked directly
    assert codebook["design_fingerprint"] == design_fingerprint(answered.survey)
    assert "text_versions" not in codebook  # the wording never changed


def test_an_edited_codebook_is_refused_naming_the_question_and_both_values(db, answered):
    codebook = json.loads(load_export(db, "demo").codebook())
    codebook["questions"][1]["epsilon"] = 1.0  # was 2
    with pytest.raises(DefinitionError) as info:
        loads_definition(json.dumps(codebook), "demo-codebook.json")
    message = str(info.value)
    assert "questions[1].randomization" in message and "'cheating'" in message
    assert "ε = 2.0" in message and "ε = 1" in message
    # without the mechanism either, the CSV's design line still catches it
    for q in codebook["questions"]:
        del q["randomization"]
    del codebook["design_fingerprint"]
    edited = loads_definition(json.dumps(codebook))
    with pytest.raises(DesignMismatch, match=r"question 'cheating': the responses were collected with ε = 2 "
                                             r"\(k = 4, threshold \d+\), but codebook.json says ε = 1"):
        check_design(edited, {"design": None, "questions": {
            q.id: {"k": q.k, "epsilon": q.epsilon, "threshold": q.mechanism.threshold if q.protected else None}
            for q in answered.survey.questions}}, responses="r.csv", codebook="codebook.json")


def test_after_a_wording_fix_each_row_says_its_wording(db, answered, tmp_path):
    fix_wording(db, "demo", {"questions": {"drug_use": {"options": ["No", "Yes, at least once"]}}})
    with next_day():  # recorded from the next day on (the day's responses record the wording it began with)
        store_response(db, answered, {"drug_use": 1, "cheating": 0})
    export = load_export(db, "demo")
    assert sorted(export.text_versions.tolist()) == [1, 1, 2]
    codebook = json.loads(export.codebook())
    versions = codebook["text_versions"]
    assert [(v["version"], v["responses"]) for v in versions] == [(1, 2), (2, 1)]
    assert versions[0]["wording"]["questions"]["drug_use"]["options"] == ["No", "Yes"]
    assert versions[1]["wording"]["questions"]["drug_use"]["options"] == ["No", "Yes, at least once"]
    # Cells use today's labels (those of the codebook's options); text-version says which wording
    # each respondent read, and the codebook's text_versions what that wording was.
    rows = list(csv.reader(export.responses("csv").decode().splitlines()[2:]))
    assert sorted(rows) == [["No", "Often", "", "1"], ["Yes, at least once", "A few times", "Under 30", "1"],
                            ["Yes, at least once", "Never", "", "2"]]
    assert codebook["questions"][0]["options"] == ["No", "Yes, at least once"]  # the codebook reads the file
    paths = write_export(db, "demo", tmp_path)
    assert sorted(read_responses_csv(paths[0], load_definition(paths[1])).columns["drug_use"].tolist()) == [0, 1, 1]


@pytest.mark.parametrize("fmt, reader", [("sav", pyreadstat.read_sav), ("dta", pyreadstat.read_dta)])
def test_spss_and_stata_files_have_value_labels(db, answered, tmp_path, fmt, reader):
    [path, _] = write_export(db, "demo", tmp_path, (fmt,))
    assert path.name == f"demo-responses.{fmt}"
    frame, meta = reader(str(path))
    assert list(frame.columns) == ["drug_use", "cheating", "age_group", "text_version"]
    assert meta.variable_value_labels["cheating"] == {1: "Never", 2: "Once", 3: "A few times", 4: "Often"}
    assert meta.column_labels[0] == answered.survey.questions[0].text
    labelled, _ = reader(str(path), apply_value_formats=True)
    assert sorted(labelled["cheating"].tolist()) == ["A few times", "Often"]
    assert sorted(labelled["age_group"].dropna().tolist()) == ["Under 30"]  # not answered: missing
    assert int(frame["age_group"].isna().sum()) == 1
    note = " ".join(meta.notes) if fmt == "sav" else meta.file_label
    assert design_fingerprint(answered.survey) in note


def test_export_quotes_labels_with_commas(db, tmp_path):
    from deniable.server.survey.definition import parse_definition

    survey = parse_definition({"slug": "quoted", "title": "T", "questions": [
        {"id": "q", "text": "Q?", "options": ['Yes, often', 'No "never"'], "epsilon": 1.0}]})
    stored = insert_survey(db, survey, status="open")
    store_response(db, stored, {"q": 0})
    store_response(db, stored, {"q": 1})
    csv_path, json_path = write_export(db, "quoted", tmp_path)
    again = read_responses_csv(csv_path, load_definition(json_path))
    assert sorted(again.columns["q"].tolist()) == [0, 1]


def test_an_unknown_survey_is_a_lookup_error(db):
    with pytest.raises(LookupError):
        load_export(db, "nope")
