"""SPSS measure levels (issue 39, "Exports"): every variable of a .sav export states its measure level —
nominal for categories (a single choice, designed or not; a check-all question's 0/1 ticks; a list
experiment's arm; a two-group question's group and answer; the wording a response was answered under),
scale for numbers (a numeric question's value, a list experiment's count of items).  No variable is
ordinal: a definition states no order among a choice's options.  Read back by pyreadstat's metadata (R's
haven does not keep the measure level: it reads labelled values and numbers, checked as such)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyreadstat
import pytest

from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.statfiles import write_stat_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXPECTED = {
    "habits.json": {"drinks": "scale", "hours": "scale", **{f"used_{j}": "nominal" for j in range(1, 5)},
                    "shoplifting_arm": "nominal", "shoplifting_count": "scale", "year": "nominal"},
    "honesty.json": {**{f"{qid}_{part}": "nominal" for qid in ("copied", "stimulants", "plagiarism", "fabricated")
                        for part in ("group", "answer")}, "year": "nominal"},
    "survey.json": {"drugs": "nominal", "cheated": "nominal", "year": "nominal"},
}


def exported(tmp_path, name: str) -> Path:
    survey = parse_definition(json.loads((EXAMPLES / name).read_text(encoding="utf-8")))
    data = Dataset(survey, {q.id: np.array([0, 1, -1, 1]) for q in survey.questions})
    path = tmp_path / f"{Path(name).stem}.sav"
    write_stat_file(path, data, "sav", text_versions=np.array([1, 1, 2, 1]))
    return path


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_spss_variable_has_its_measure_level(tmp_path, name):
    _, meta = pyreadstat.read_sav(str(exported(tmp_path, name)), metadataonly=True)
    measures = dict(meta.variable_measure)
    expected = {**EXPECTED[name], "text_version": "nominal"}
    assert measures == expected


def test_r_haven_reads_the_nominal_variables_as_labelled_and_the_scale_ones_as_numbers(tmp_path):
    if not shutil.which("Rscript"):
        pytest.fail("R is needed (scripts/test.sh installs r-base, r-cran-haven and r-cran-jsonlite)")
    path = exported(tmp_path, "habits.json")
    script = tmp_path / "read.R"
    script.write_text('library(haven)\nsav <- read_sav(commandArgs(trailingOnly = TRUE)[1])\n'
                      'cat(jsonlite::toJSON(lapply(sav, function(x) list(labelled = is.labelled(x), '
                      'measure = if (is.null(attr(x, "measure"))) "" else attr(x, "measure"))), auto_unbox = TRUE))',
                      encoding="utf-8")
    done = subprocess.run(["Rscript", str(script), str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    _, meta = pyreadstat.read_sav(str(path), metadataonly=True)
    for name, level in meta.variable_measure.items():
        if name != "text_version":
            assert result[name]["labelled"] == (level == "nominal"), (name, level, result[name])
