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


# what `deniable plan --k 2 --margin …` and `deniable estimate` of a small responses CSV must not load
# (issue 40: a cold start within 1.5x of `python -c "import click, numpy, scipy.special"`)
HEAVY = ("pandas", "pyarrow", "flask", "jinja2", "babel", "sqlite_utils", "sqlite3", "gevent", "werkzeug")

_LOADED = """
import json, sys
from deniable.server.cli import cli
try:
    cli(sys.argv[1:], prog_name="deniable", standalone_mode=False)
finally:
    print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules_after(args: list[str], env: dict) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _LOADED, *args], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("command", ["plan", "estimate"])
def test_plan_and_estimate_load_no_heavy_module(tmp_path, command):
    """Cold `deniable plan --k 2 --margin 0.1` (an empty cache directory, so the planner computes) and
    `deniable estimate` of a 50-row responses CSV load none of pandas, pyarrow, flask, jinja2, babel,
    sqlite_utils (nor sqlite3, gevent, werkzeug), and no part of scipy that ``import scipy.special``
    does not load itself."""
    import os

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    if command == "plan":
        args = ["plan", "--k", "2", "--margin", "0.1"]
    else:
        responses = tmp_path / "f.csv"
        made = subprocess.run([sys.executable, "-m", "deniable.server.cli", "simulate", str(SURVEY), "--n", "50",
                               "--truth", str(ROOT / "examples" / "truth.json"), "--seed", "1"],
                              capture_output=True, text=True, env=env, timeout=120)
        if made.returncode != 0:  # no `python -m` entry point: the click group directly
            made = subprocess.run([sys.executable, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')",
                                   "simulate", str(SURVEY), "--n", "50", "--truth", str(ROOT / "examples" / "truth.json"),
                                   "--seed", "1"], capture_output=True, text=True, env=env, timeout=120, check=True)
        responses.write_text(made.stdout)
        args = ["estimate", str(SURVEY), str(responses)]
    loaded = _modules_after(args, env)
    floor = subprocess.run([sys.executable, "-c", "import json, sys, click, numpy, scipy.special; "
                            "print(json.dumps(sorted(sys.modules)))"], capture_output=True, text=True, env=env,
                           timeout=120, check=True)
    allowed_scipy = {m for m in json.loads(floor.stdout) if m == "scipy" or m.startswith("scipy.")}
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert heavy == [], heavy
    assert sorted(m for m in loaded if m.startswith("scipy.") and m not in allowed_scipy) == []
    if command == "plan":  # nor the survey's definition and estimates (SurveyPlan's base is survey_result's)
        assert {"deniable.server.survey.definition", "deniable.server.survey.estimates"} & loaded == set()


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


@pytest.mark.parametrize("name", ["survey", "everything", "habits", "honesty"])
def test_a_small_csv_is_read_without_arrow_as_arrow_reads_it(tmp_path, name):
    """``read_patterns_csv`` of a small file (the csv module, no pyarrow) gives the patterns and counts
    Arrow's reader gives, and a file it does not take plainly (a bad cell) is left to Arrow, whose
    error names the line."""
    from deniable.server.survey import responses_csv

    survey_path = ROOT / "examples" / f"{name}.json"
    made = subprocess.run([sys.executable, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')",
                           "simulate", str(survey_path), "--n", "300", "--seed", "5"],
                          capture_output=True, text=True, timeout=120, check=True)
    path = tmp_path / "r.csv"
    path.write_text(made.stdout)
    survey = load_definition(survey_path)
    header, line = responses_csv._read_header(path, survey)
    small = responses_csv._small_patterns(path, survey, header, line)
    assert small is not None

    def rows(data):
        ids = [q.id for q in survey.questions]
        out = {}
        for i in range(data.n_rows):
            key = tuple(int(data.columns[qid][i]) for qid in ids)
            out[key] = out.get(key, 0) + int(data.weights[i])
        return out

    arrow = responses_csv.read_responses_csv(path, survey)
    expected = {}
    ids = [q.id for q in survey.questions]
    for i in range(arrow.n_rows):
        key = tuple(int(arrow.columns[qid][i]) for qid in ids)
        expected[key] = expected.get(key, 0) + 1
    assert rows(small) == expected
    lines = path.read_text().splitlines()
    lines[4] = ",".join(["no such label"] * len(lines[4].split(",")))
    path.write_text("\n".join(lines) + "\n")
    assert responses_csv._small_patterns(path, survey, header, line) is None
    with pytest.raises(CSVError, match=":5: column"):
        responses_csv.read_patterns_csv(path, survey)


@pytest.mark.parametrize("name", ["survey", "habits", "honesty", "everything"])
def test_the_csv_export_from_patterns_is_the_row_by_row_file(tmp_path, name):
    """``deniable export``'s CSV a line per distinct row repeated in the file's order
    (``exports._csv_from_patterns``: the answer patterns in the drawn order, or the row scan's distinct
    rows in the key order) is byte for byte what the row-by-row writer writes of the same rows
    (display logic's NA, quoting, the text-version column)."""
    import dataclasses

    from deniable.server.store.db import init_db
    from deniable.server.store.exports import load_export
    from deniable.server.store.responses import insert_many
    from deniable.server.store.surveys import insert_survey

    survey = load_definition(ROOT / "examples" / f"{name}.json")
    made = subprocess.run([sys.executable, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')",
                           "simulate", str(ROOT / "examples" / f"{name}.json"), "--n", "400", "--seed", "7"],
                          capture_output=True, text=True, timeout=120, check=True)
    path = tmp_path / "r.csv"
    path.write_text(made.stdout)
    data = read_responses_csv(path, survey)
    db = init_db(str(tmp_path / "d.db"))
    stored = insert_survey(db, survey, status="open", target_n=400)
    insert_many(db, stored, data.columns)
    export = load_export(db, stored.slug)
    assert export.source == ("rows" if name in ("habits", "everything") else "patterns")
    fast = export.responses("csv")
    assert fast == dataclasses.replace(export, order=None).responses("csv")
    db.conn.close()
