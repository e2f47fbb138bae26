"""Inputs at the edges, on the command line: a JSON key written twice, counts beyond 2^53."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.db import connect

ROOT = Path(__file__).resolve().parents[2]
SURVEY = ROOT / "examples" / "survey.json"
DENIABLE = [sys.executable, "-c", "from deniable.server.cli import cli; cli()"]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result) -> str:
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


DOUBLED = '{"slug": "a",\n "slug": "b", "title": "T", "questions": [{"id": "q", "text": "Q", "options": ["x", "y"]}]}'
DOUBLED_EPSILON = ('{"slug": "a", "title": "T", "questions": [\n {"id": "q", "text": "Q", "options": ["x", "y"],\n'
                   '  "epsilon": 0.5, "epsilon": 5}]}')


@pytest.mark.parametrize("text, message", [
    (DOUBLED, "slug: line 1: the key 'slug' appears more than once in one object"),
    (DOUBLED_EPSILON, "questions[0].epsilon: line 2: the key 'epsilon' appears more than once in one object"),
])
def test_import_refuses_a_key_written_twice_and_stores_nothing(tmp_path, text, message):
    path = tmp_path / "doubled.json"
    path.write_text(text, encoding="utf-8")
    db_path = tmp_path / "x.db"
    assert message in one_line_error(run("import", path, "--db", db_path))
    if db_path.exists():
        db = connect(db_path)
        try:
            assert db.execute("SELECT count(*) FROM surveys").fetchone()[0] == 0
        finally:
            db.conn.close()


def test_every_command_reading_a_definition_refuses_it_in_a_real_process(tmp_path):
    path = tmp_path / "doubled.json"
    path.write_text(DOUBLED, encoding="utf-8")
    result = subprocess.run([*DENIABLE, "estimate", str(path), "--counts", str(tmp_path / "c.csv")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: {path}: slug: line 1: the key 'slug' appears more than once in one object: keep one"]


def test_simulate_refuses_a_truth_file_with_a_key_written_twice(tmp_path):
    truth = tmp_path / "truth.json"
    truth.write_text('{"drugs": [0.2, 0.8],\n "cheated": [0.5, 0.3, 0.2], "year": [0.4, 0.3, 0.3],\n'
                     ' "drugs": [0.9, 0.1]}', encoding="utf-8")
    line = one_line_error(run("simulate", SURVEY, "--n", "10", "--truth", truth, "-o", tmp_path / "r.csv"))
    assert line == f"Error: {truth}:1: 'drugs' appears more than once in one object"
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize("count, total", [(2**62, "9,223,372,036,854,775,808"), (2**52 + 1, "9,007,199,254,740,994")])
@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_counts_beyond_2_53_in_all_are_one_line_naming_the_column(tmp_path, count, total, suffix):
    path = tmp_path / f"counts.{suffix}"
    if suffix == "csv":
        path.write_text(f"drugs,count\nYes,{count}\nNo,{count}\n")
    else:
        pq.write_table(pa.table({"drugs": ["Yes", "No"], "count": pa.array([count, count], pa.int64())}), path)
    line = one_line_error(run("estimate", SURVEY, "--counts", path))
    assert line == (f"Error: {path}: column 'count': the counts add up to {total}, more than 2^53 = "
                    "9,007,199,254,740,992, the most that float64 counts exactly")


def test_counts_of_2_53_in_all_are_estimated(tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text(f"drugs,count\nYes,{2**52}\nNo,{2**52}\n")
    result = run("estimate", SURVEY, "--counts", path, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    drugs = next(q for q in document["questions"] if q["id"] == "drugs")
    assert document["n_responses"] == drugs["n"] == 2**53
    assert [o["noisy_count"] for o in drugs["options"]] == [2**52, 2**52]
    assert [o["estimate"] for o in drugs["options"]] == [0.5, 0.5]
    assert all(o["ci_low"] < 0.5 < o["ci_high"] for o in drugs["options"])
