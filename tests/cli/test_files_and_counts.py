"""Parquet responses and counts aggregated by another engine give the numbers the CSV gives;
the command line starts without loading what only some commands need."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.survey import files
from deniable.server.survey.definition import load_definition
from deniable.server.survey.responses_csv import CSVError, read_responses_csv

ROOT = Path(__file__).resolve().parents[2]
SURVEY = ROOT / "examples" / "survey.json"
TRUTH = ROOT / "examples" / "truth.json"
CLI_PAGE = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def docs_sql() -> str:
    """The DuckDB statement the command reference shows for aggregating a Parquet export into counts."""
    match = re.search(r"```sql\n(COPY \(SELECT .*? GROUP BY ALL\).*?;)\n```", CLI_PAGE, re.S)
    assert match, "docs/cli.md shows the DuckDB statement in a ```sql block"
    return match.group(1)


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sim")
    for name in ("responses.csv", "responses.parquet"):
        result = run("simulate", SURVEY, "--n", "5000", "--truth", TRUTH, "--seed", "7", "-o", folder / name)
        assert result.exit_code == 0, result.output
    return folder


def estimates(*args) -> dict:
    result = run("estimate", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_parquet_gives_the_numbers_of_the_csv(simulated):
    assert estimates(SURVEY, simulated / "responses.parquet") == estimates(SURVEY, simulated / "responses.csv")
    survey = load_definition(SURVEY)
    from_csv = read_responses_csv(simulated / "responses.csv", survey)
    from_parquet = files.read_responses_parquet(simulated / "responses.parquet", survey)
    for q in survey.questions:
        assert np.array_equal(from_csv.columns[q.id], from_parquet.columns[q.id])


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_counts_made_by_duckdb_give_the_numbers_of_the_rows(simulated, tmp_path, fmt):
    duckdb = pytest.importorskip("duckdb")
    counts = tmp_path / f"counts.{fmt}"
    sql = docs_sql().replace("'student-life-responses.parquet'", f"'{simulated / 'responses.parquet'}'")
    sql = sql.replace("'counts.parquet'", f"'{counts}'")
    if fmt == "csv":
        sql = sql.replace("(FORMAT parquet)", "(FORMAT csv, HEADER)")
    duckdb.sql(sql)
    rows = estimates(SURVEY, simulated / "responses.csv")
    assert estimates(SURVEY, "--counts", counts) == rows
    for extra in (["--crosstab", "drugs", "cheated"], ["--by", "year"], ["--method", "wilson", "--simultaneous"]):
        assert estimates(SURVEY, "--counts", counts, *extra) == estimates(SURVEY, simulated / "responses.csv", *extra)


def test_counts_of_some_questions_estimate_those(simulated, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    counts = tmp_path / "drugs.csv"
    duckdb.sql(f"COPY (SELECT drugs, count(*) AS count FROM '{simulated / 'responses.parquet'}' GROUP BY ALL) "
               f"TO '{counts}' (FORMAT csv, HEADER)")
    data = estimates(SURVEY, "--counts", counts)
    assert [q["id"] for q in data["questions"]] == ["drugs"] and data["n_responses"] == 5000
    full = estimates(SURVEY, simulated / "responses.csv")
    assert data["questions"][0] == full["questions"][0]


def test_aggregate_keeps_every_count(simulated):
    survey = load_definition(SURVEY)
    rows = read_responses_csv(simulated / "responses.csv", survey)
    patterns = files.aggregate(rows)
    assert patterns.n_responses == rows.n_responses == 5000 and patterns.n_rows < 50
    for q in survey.questions:
        assert np.array_equal(patterns.counts(q.id), rows.counts(q.id))
    assert np.array_equal(patterns.joint_counts("drugs", "cheated"), rows.joint_counts("drugs", "cheated"))
    assert np.array_equal(patterns.counts_by("drugs", "year"), rows.counts_by("drugs", "year"))


@pytest.mark.parametrize("name", ["responses.csv", "responses.parquet"])
def test_reading_patterns_keeps_every_count(simulated, name):
    """What `deniable estimate` reads (Arrow groups the rows as it reads them) is the rows, aggregated."""
    survey = load_definition(SURVEY)
    rows = files.read_responses(simulated / name, survey)
    patterns = files.read_patterns(simulated / name, survey)
    assert patterns.n_responses == rows.n_responses == 5000 and patterns.n_rows < 50
    for q in survey.questions:
        assert np.array_equal(patterns.counts(q.id), rows.counts(q.id))
    assert np.array_equal(patterns.joint_counts("drugs", "cheated"), rows.joint_counts("drugs", "cheated"))


def test_reading_patterns_in_many_ranges_or_block_by_block_keeps_every_count(simulated, tmp_path, monkeypatch):
    """Ranges of a few hundred bytes (each split at a line start, read on parallel threads), and a
    survey whose labels hold quotes (a field could span two ranges: read block by block)."""
    from deniable.server.survey import responses_csv
    from deniable.server.survey.dataset import Dataset
    from deniable.server.survey.definition import parse_definition

    survey = load_definition(SURVEY)
    rows = files.read_responses(simulated / "responses.csv", survey)
    monkeypatch.setattr(responses_csv, "RANGE_SIZE", 300)
    assert len(responses_csv._line_ranges(simulated / "responses.csv", survey, 2)) > 100
    patterns = files.read_patterns(simulated / "responses.csv", survey)
    assert patterns.n_rows < 50 and patterns.n_responses == 5000
    for q in survey.questions:
        assert np.array_equal(patterns.counts(q.id), rows.counts(q.id))

    quoted = parse_definition({"slug": "q", "title": "Q", "questions": [
        {"id": "said", "text": "Said?", "options": ['Said "yes"', "No,\nnever"], "epsilon": 1.0}]})
    codes = np.random.default_rng(5).integers(0, 2, 3000).astype(np.int16)
    path = tmp_path / "quoted.csv"
    responses_csv.write_responses_csv(path, Dataset(quoted, {"said": codes}))
    assert responses_csv._line_ranges(path, quoted, 2) is None
    read = files.read_patterns(path, quoted)
    assert read.n_rows == 2 and np.array_equal(read.counts("said"), np.bincount(codes, minlength=2))


@pytest.mark.parametrize("lines, message", [
    (["Yes,Never,First", "Maybe,Never,First"], ":4: column 'drugs': unknown option label 'Maybe'"),
    (["Yes,Never,First", ",Never,First"], ":4: column 'drugs': empty, but the question is required"),
])
def test_reading_patterns_names_the_line_of_a_bad_cell(simulated, tmp_path, lines, message):
    source = (simulated / "responses.csv").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(source[:2] + lines + source[2:]) + "\n", encoding="utf-8")
    survey = load_definition(SURVEY)
    for read in (files.read_responses, files.read_patterns):
        with pytest.raises(CSVError, match=message):
            read(path, survey)


@pytest.mark.parametrize("content, message", [
    ("drugs,n\nYes,3\n", "unknown column 'n'"),
    ("drugs\nYes\n", "no 'count' column"),
    ("count\n3\n", "no question column besides 'count'"),
    ("drugs,count\nYes,-2\n", "line 2: column 'count': must be a count of 0 or more"),
    ("drugs,count\nYes,2.5\n", "column 'count': must hold whole numbers"),
    ("drugs,count\nMaybe,2\n", "row 1: column 'drugs': unknown option label 'Maybe'"),
    ("drugs,drugs,count\nYes,No,2\n", "a column appears twice"),
])
def test_bad_counts_files_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "counts.csv"
    path.write_text(content)
    result = run("estimate", SURVEY, "--counts", path)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert message in result.output.strip().splitlines()[-1], result.output


def test_a_file_that_is_not_parquet_is_a_one_line_error(tmp_path):
    path = tmp_path / "responses.parquet"
    path.write_text("drugs,cheated,year\n")
    result = run("estimate", SURVEY, path)
    assert result.exit_code == 1 and "not a Parquet file" in result.output
    with pytest.raises(CSVError, match="no 'count' column"):
        bad = tmp_path / "c.parquet"
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"drugs": ["Yes"]}), bad)
        files.read_counts(bad, load_definition(SURVEY))


def test_the_command_line_loads_no_scipy_flask_pyarrow_or_numpy():
    """`deniable --help` and the commands that do not need them start without them."""
    code = ("import sys, deniable.server.cli; "
            "print(sorted(m for m in ('scipy', 'flask', 'pyarrow', 'numpy', 'gevent') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_parquet_round_trip_keeps_not_answered_as_null(tmp_path):
    import pyarrow.parquet as pq

    from deniable.server.survey.dataset import Dataset

    survey = load_definition(SURVEY)
    data = Dataset(survey, {"drugs": np.array([0, 1, 1]), "cheated": np.array([-1, 2, 0]), "year": np.array([0, 1, 2])})
    path = tmp_path / "r.parquet"
    files.write_responses_parquet(path, data)
    assert pq.read_table(path).column("cheated").to_pylist() == [None, survey.question("cheated").options[2],
                                                                  survey.question("cheated").options[0]]
    back = files.read_responses_parquet(path, survey)
    assert all(np.array_equal(back.columns[q], data.columns[q]) for q in data.columns)
