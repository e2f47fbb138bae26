"""A designed single choice whose reports are not its options (issue 39, "Exports"): the respondent-side
crosswise model reports "same"/"different" (so does the crosswise model randomized by the device), Kuk's
two decks "red"/"black".  The SPSS and Stata files label the codes as the reports mean them, keeping the
codes (1 = report 1, 2 = report 2); a design whose reports are the options (forced response) and a plain
choice keep the option labels.  The responses CSV keeps its cells as they always were (the option label of
each report's code, which ``deniable estimate``, the Parquet export and every reader map back to codes), so
a CSV exported before the change and one exported after are the same file and both read back.  R's haven
reads the labels back (``as_factor``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyreadstat
import pytest

from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.responses_csv import read_responses_csv, write_responses_csv
from deniable.server.survey.statfiles import write_stat_file

FACT = "Is your mother's birthday in January, February or March?"
DEFINITION = {"slug": "labels", "title": "Labels", "questions": [
    {"id": "evaded", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"],
     "design": {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT,
                "prevalence_range": [0.23, 0.27]}},
    {"id": "cheated", "text": "Have you ever cheated?", "options": ["Yes", "No"],
     "design": {"name": "crosswise", "prevalence": 0.2}},
    {"id": "stole", "text": "Have you ever stolen?", "options": ["Yes", "No"],
     "design": {"name": "kuk", "theta_1": 0.7, "theta_2": 0.3}},
    {"id": "lied", "text": "Have you ever lied?", "options": ["Often", "Never"],
     "design": {"name": "forced", "p": 0.75, "forced": [0.125, 0.125]}},
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
]}
for _question in DEFINITION["questions"]:
    _question["required"] = False  # one row left blank
SURVEY = parse_definition(DEFINITION)
LABELS = {"evaded": {1: "same", 2: "different"}, "cheated": {1: "same", 2: "different"},
          "stole": {1: "red", 2: "black"}, "lied": {1: "Often", 2: "Never"}, "drugs": {1: "Yes", 2: "No"}}
CODES = np.array([0, 1, 1, 0, -1, 1, 0])
DEFAULT = Path(sys.executable).parent / "deniable"


def dataset() -> Dataset:
    return Dataset(SURVEY, {q.id: CODES.copy() for q in SURVEY.questions})


def test_spss_and_stata_label_each_code_as_its_report_means_it(tmp_path):
    for fmt, read in (("sav", pyreadstat.read_sav), ("dta", pyreadstat.read_dta)):
        path = tmp_path / f"r.{fmt}"
        write_stat_file(path, dataset(), fmt)
        codes, meta = read(str(path))
        assert {name: meta.variable_value_labels[name] for name in LABELS} == LABELS, fmt
        for qid in LABELS:  # the codes are kept: 1 = report 1 ("same", "red"), NaN = not answered
            assert codes[qid].tolist()[:4] == [1.0, 2.0, 2.0, 1.0] and np.isnan(codes[qid][4]), (fmt, qid)
        labelled, _ = read(str(path), apply_value_formats=True)
        assert labelled["evaded"].tolist()[:4] == ["same", "different", "different", "same"]
        assert labelled["stole"].tolist()[:4] == ["red", "black", "black", "red"]


def test_the_csv_keeps_its_cells_and_reads_back_before_and_after(tmp_path):
    path = tmp_path / "responses.csv"
    write_responses_csv(path, dataset())
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[1].split(",")
    first = dict(zip(header, lines[2].split(",")))
    # the cell is the option label of the report's code, as in every CSV exported before (an old file reads)
    assert first["evaded"] == "Yes" and first["stole"] == "Yes" and first["lied"] == "Often"
    back = read_responses_csv(path, SURVEY)
    for qid in LABELS:
        assert back.columns[qid].tolist() == CODES.tolist(), qid


def test_deniable_estimate_reads_the_export_back(tmp_path):
    survey, db, out = tmp_path / "survey.json", tmp_path / "d.db", tmp_path / "out"
    survey.write_text(json.dumps(DEFINITION), encoding="utf-8")

    def run(*args) -> str:
        done = subprocess.run([str(DEFAULT), *map(str, args)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"evaded": [0.3, 0.7], "cheated": [0.2, 0.8], "stole": [0.4, 0.6],
                                 "lied": [0.5, 0.5], "drugs": [0.1, 0.9]}), encoding="utf-8")
    run("import", survey, "--db", db, "--open")
    run("simulate", survey, "--n", 300, "--truth", truth, "--seed", 5, "--db", db)
    run("export", "labels", "--db", db, "-o", out, "--spss", "--stata")
    from_db = json.loads(run("estimate", "--db", db, "labels", "--format", "json"))
    from_csv = json.loads(run("estimate", out / "labels-codebook.json", out / "labels-responses.csv",
                              "--format", "json"))
    assert from_csv == from_db
    _, meta = pyreadstat.read_sav(str(out / "labels-responses.sav"), metadataonly=True)
    assert {name: meta.variable_value_labels[name] for name in LABELS} == LABELS


R_READ = r"""
library(haven)
args <- commandArgs(trailingOnly = TRUE)
sav <- read_sav(args[1])
dta <- read_dta(args[2])
result <- list()
for (v in c("evaded", "cheated", "stole", "lied", "drugs")) {
  result[[v]] <- list(sav = as.character(as_factor(sav[[v]])), dta = as.character(as_factor(dta[[v]])),
                      codes = as.numeric(unclass(sav[[v]])))
}
cat(jsonlite::toJSON(result, auto_unbox = TRUE))
"""


def test_r_haven_reads_the_report_labels(tmp_path):
    if not shutil.which("Rscript"):
        pytest.fail("R is needed (scripts/test.sh installs r-base, r-cran-haven and r-cran-jsonlite)")
    for fmt in ("sav", "dta"):
        write_stat_file(tmp_path / f"r.{fmt}", dataset(), fmt)
    script = tmp_path / "read.R"
    script.write_text(R_READ, encoding="utf-8")
    done = subprocess.run(["Rscript", str(script), str(tmp_path / "r.sav"), str(tmp_path / "r.dta")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for qid, labels in LABELS.items():
        expected = [labels[c + 1] if c >= 0 else "NA" for c in CODES.tolist()]
        for fmt in ("sav", "dta"):
            assert [x if x is not None else "NA" for x in result[qid][fmt]] == expected, (qid, fmt)
        assert [x if x is not None else "NA" for x in result[qid]["codes"]] == \
            [c + 1 if c >= 0 else "NA" for c in CODES.tolist()]
