"""The one reader of report files (``deniable.server.survey.readers``): its table of other tools is
what the command line and the dashboard offer, each source reads through its module's reader,
deniable's own files are checked against the codebook, and importing it loads no reader."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from deniable.errors import FieldError
from deniable.server.cli.analysis import estimate
from deniable.server.cli.embed import recipe
from deniable.server.survey import files, readers
from deniable.server.survey.codebook import DesignMismatch
from deniable.server.survey.definition import load_definition
from deniable.server.survey.recipes import RECIPE_PLATFORMS
from deniable.server.survey.responses_csv import write_responses_csv
from deniable.server.survey.simulate import load_truth, simulate_dataset
from deniable.server.web.dashboard.embedding import LABELS

ROOT = Path(__file__).resolve().parents[2]
SURVEY = ROOT / "examples" / "survey.json"
PLATFORMS_DIR = ROOT / "tests" / "data" / "platforms"


def choices(command, name: str) -> tuple[str, ...]:
    return tuple(next(p for p in command.params if p.name == name).type.choices)


def test_the_table_is_what_the_command_line_and_the_dashboard_offer():
    assert choices(estimate, "source") == tuple(readers.SOURCES)
    assert choices(recipe, "platform") == tuple(readers.SOURCES) == RECIPE_PLATFORMS  # a recipe for each tool read
    assert LABELS == {"surveyjs": "SurveyJS", "otree": "oTree", "qualtrics": "Qualtrics", "limesurvey": "LimeSurvey",
                      "redcap": "REDCap"}


def test_the_help_of_from_names_every_source_and_its_file():
    assert readers.sources_help() == (
        "The responses file is another survey tool's results: surveyjs (a JSON list of survey.data objects holding "
        "the embed's reports), otree (oTree's CSV export, wide or one app's), qualtrics, limesurvey or redcap (their "
        "CSV exports; docs/embedding.md).")
    assert next(p for p in estimate.params if p.name == "source").help == readers.sources_help()


@pytest.mark.parametrize("name", readers.SOURCES)
def test_each_source_names_a_reader_of_its_module(name):
    module, function = readers.SOURCES[name].reader.split(":")
    assert callable(getattr(importlib.import_module(f"deniable.server.survey.{module}"), function))


@pytest.mark.parametrize("name", ["qualtrics", "limesurvey", "redcap"])
def test_a_source_reads_what_its_reader_reads(name):
    survey = load_definition(PLATFORMS_DIR / "survey.json")
    path = PLATFORMS_DIR / f"{name}.csv"
    own = getattr(importlib.import_module("deniable.server.survey.platform_exports"), f"read_{name}")(path, survey)
    read = readers.read(path, survey, source=name)
    assert read.n_rows == own.n_rows == 4
    for q in survey.questions:
        assert np.array_equal(read.columns[q.id], own.columns[q.id])


def test_an_unknown_source_is_refused_by_name(tmp_path):
    with pytest.raises(FieldError, match="unknown source 'spss': one of surveyjs, otree, qualtrics, limesurvey, "
                                         "redcap") as caught:
        readers.read(tmp_path / "x.csv", load_definition(SURVEY), source="spss")
    assert caught.value.field == "source"


@pytest.fixture(scope="module")
def responses(tmp_path_factory):
    """The same 500 simulated responses as CSV and as Parquet."""
    folder = tmp_path_factory.mktemp("readers")
    survey = load_definition(SURVEY)
    dataset = simulate_dataset(survey, load_truth(str(ROOT / "examples" / "truth.json"), survey), 500,
                               np.random.default_rng(5))
    write_responses_csv(folder / "r.csv", dataset)
    files.write_responses_parquet(folder / "r.parquet", dataset)
    return survey, dataset, folder


@pytest.mark.parametrize("name", ["r.csv", "r.parquet"])
def test_own_files_read_grouped_or_by_row_give_the_same_counts(responses, name):
    survey, dataset, folder = responses
    rows = readers.read(folder / name, survey)
    grouped = readers.read(folder / name, survey, grouped=True)
    assert rows.n_rows == 500 and grouped.n_responses == 500 and grouped.n_rows < 500
    for q in survey.questions:
        assert np.array_equal(rows.columns[q.id], dataset.columns[q.id])
        assert np.array_equal(grouped.stats(q.id), dataset.stats(q.id))


def test_a_csv_under_another_design_is_refused_naming_the_codebook(responses, tmp_path):
    survey, _, folder = responses
    text = (folder / "r.csv").read_text(encoding="utf-8")
    other = tmp_path / "other.csv"
    other.write_text(text.replace("epsilon=1.0", "epsilon=3.0", 1), encoding="utf-8")
    with pytest.raises(DesignMismatch, match=rf"^{other}: question 'drugs': .* but survey.json says ε = 1"):
        readers.read(other, survey, codebook="survey.json")
    with pytest.raises(DesignMismatch, match="but the definition says"):  # the default name
        readers.read(other, survey)


def test_counts_are_read_by_the_same_module(tmp_path):
    survey = load_definition(SURVEY)
    (tmp_path / "c.csv").write_text("drugs,count\nYes,30\nNo,70\n", encoding="utf-8")
    counts = readers.read_counts(tmp_path / "c.csv", survey)
    assert counts.n_responses == 100 and counts.stats("drugs").tolist() == [30, 70]


def test_importing_the_table_loads_no_reader():
    """The command line takes its --from choices from here at start-up: nothing heavy may come with them."""
    code = ("import sys; import deniable.server.survey.readers; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pyarrow', 'scipy', 'flask'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


READER_MODULES = {"files", "responses_csv", "surveyjs", "otree_export", "platform_exports"}


def reader_calls(source: str) -> list[str]:
    """The readers of ``source`` that bypass :mod:`.readers`: ``read_…`` imported from a reader module, or
    called on one (``files.read_responses``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] in READER_MODULES:
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("read")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("read") and \
                isinstance(node.value, ast.Name) and node.value.id in READER_MODULES:
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_the_scan_finds_a_reader_called_around_the_table():
    assert reader_calls("from deniable.server.survey.surveyjs import read_surveyjs") == \
        ["deniable.server.survey.surveyjs.read_surveyjs"]
    assert reader_calls("from deniable.server.survey import files\nfiles.read_counts(p, s)") == ["files.read_counts"]
    assert reader_calls("from deniable.server.survey import files\nfiles.is_parquet(p)") == []


FRONT_ENDS = sorted((ROOT / "server" / "cli").glob("*.py")) + sorted((ROOT / "server" / "web").rglob("*.py"))


@pytest.mark.parametrize("path", FRONT_ENDS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_command_line_and_the_web_app_read_files_through_the_table(path):
    assert reader_calls(path.read_text(encoding="utf-8")) == []
