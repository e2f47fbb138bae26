"""The codebook's ``sampling`` section: a database's export says it has no weights and that estimates
from it are unweighted; a codebook written for a responses file with design columns names each
column and its role; either reads back as the survey definition."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.survey.codebook import UNWEIGHTED, codebook_dict, dumps_codebook, sampling_section
from deniable.server.survey.dataset import DesignColumns
from deniable.server.survey.definition import load_definition, loads_definition

ROOT = Path(__file__).resolve().parents[2]
SURVEY = ROOT / "examples" / "survey.json"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_database_export_says_its_estimates_are_unweighted(tmp_path):
    """``deniable export`` from a database (which has no weights): the codebook says so, and the pair
    still estimates, unweighted."""
    db = tmp_path / "x.db"
    assert run("import", SURVEY, "--db", db, "--open").exit_code == 0
    assert run("simulate", SURVEY, "--n", 50, "--truth", ROOT / "examples" / "truth.json", "--seed", 3,
               "--db", db).exit_code == 0
    result = run("export", "student-life", "--db", db, "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    path = tmp_path / "out" / "student-life-codebook.json"
    sampling = json.loads(path.read_text(encoding="utf-8"))["sampling"]
    assert sampling == {"weighted": False, "columns": {}, "note": UNWEIGHTED}
    assert "simple random sample, unweighted" in sampling["note"] and "--weights COLUMN" in sampling["note"]
    estimated = run("estimate", path, tmp_path / "out" / "student-life-responses.csv", "--format", "json")
    assert estimated.exit_code == 0, estimated.output
    assert "weighted" not in json.loads(estimated.stdout)


def test_a_codebook_names_the_design_columns_of_a_weighted_file(tmp_path):
    survey = load_definition(SURVEY)
    columns = DesignColumns(weights="w", strata="region", cluster="school")
    data = codebook_dict(survey, sampling=columns)
    assert data["sampling"]["weighted"] is True
    assert {name: c["role"] for name, c in data["sampling"]["columns"].items()} == \
        {"w": "weights", "region": "strata", "school": "cluster"}
    assert data["sampling"]["columns"]["w"]["meaning"].startswith("sampling weights: each respondent stands for")
    assert data["sampling"]["note"].endswith("--weights w --strata region --cluster school")
    assert loads_definition(dumps_codebook(survey, sampling=columns)) == survey  # still the definition
    assert sampling_section(DesignColumns()) == sampling_section(None)
