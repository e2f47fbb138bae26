"""``deniable check`` and the repair of derived aggregates (deniable.server.store.integrity).

``tests/data/lossy-22e6eeb.db`` was written by 22e6eeb itself from single diverse submissions
(scripts/make_lossy_db.py): its answer patterns hold a fifth of the responses.  The check names the
gap without changing the file, ``--repair`` (or any opening by the app, through migration m19)
rebuilds every aggregate from the stored reports, and then every surface counts every response.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store import integrity
from deniable.server.store.db import connect, write_transaction
from deniable.server.store.responses import load_db_dataset
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import Question, Survey
from support.store import store_response

DATA = Path(__file__).parents[1] / "data"
GOLDEN = json.loads((DATA / "lossy-22e6eeb.json").read_text(encoding="utf-8"))


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def digest(path: Path) -> str:
    """The database file's hash, and its WAL's if it holds anything (a reader may leave an empty one)."""
    wal = path.with_name(path.name + "-wal")
    return hashlib.sha256(path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")).hexdigest()


@pytest.fixture
def lossy(tmp_path) -> Path:
    path = tmp_path / "lossy.db"
    shutil.copy(DATA / "lossy-22e6eeb.db", path)
    return path


def test_check_names_the_gap_of_a_22e6eeb_database_and_changes_nothing(lossy):
    before = digest(lossy)
    result = run("check", "--db", lossy)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    for slug, golden in GOLDEN["surveys"].items():
        short = [line for line in lines if line.startswith(f"{slug}: answer patterns: ") and "responses" in line
                 and "{" not in line]
        assert len(short) == 1, lines
        have, want = short[0].removeprefix(f"{slug}: answer patterns: ").split(", responses ")
        assert int(want) == golden["responses"] and int(have) < golden["responses"] / 2
    assert digest(lossy) == before  # read-only: no migration ran, nothing was written


def test_repair_rebuilds_and_every_surface_then_counts_every_response(lossy, tmp_path):
    result = run("check", "--db", lossy, "--repair")
    assert result.exit_code == 0, result.output
    assert "branching: rebuilt every aggregate from the stored responses" in result.stdout
    assert run("check", "--db", lossy).exit_code == 0
    for slug, golden in GOLDEN["surveys"].items():
        document = json.loads(run("estimate", "--db", lossy, slug, "--format", "json").stdout)
        assert document["n_responses"] == golden["responses"]
        for q in document["questions"]:
            if q["id"] in golden["counts"]:
                assert q["n"] == sum(golden["counts"][q["id"]])
        out = tmp_path / slug
        assert run("export", slug, "--db", lossy, "-o", out).exit_code == 0
        lines = (out / f"{slug}-responses.csv").read_text(encoding="utf-8").splitlines()
        rows = [line for line in lines if not line.startswith("#")][1:]  # its comment line, then the header
        assert len(rows) == golden["responses"]
    crosstab = run("estimate", "--db", lossy, "branching", "--crosstab", "age", "tax").stdout
    assert f"n = {GOLDEN['surveys']['branching']['responses']}" in crosstab


def test_opening_a_22e6eeb_database_with_the_app_rebuilds_it(lossy):
    db = integrity.open_repaired(str(lossy))  # as deniable serve and every writing command open it (m19)
    try:
        assert integrity.check(db) == []
        assert db.execute("SELECT count(*) FROM surveys WHERE aggregates_due = 1").fetchone()[0] == 0
        stored = get_survey(db, "branching")
        counts = load_db_dataset(db, "branching")
        assert counts.n_responses == GOLDEN["surveys"]["branching"]["responses"]
        assert integrity.quick_check(db) == {}
    finally:
        db.conn.close()


EIGHT = Survey(slug="eight", title="Eight", description="", questions=(
    *(Question(id=f"q{i}", text="Q", options=("Yes", "No", "Maybe")[:2 + i % 2], epsilon=1.0) for i in range(5)),
    Question(id="direct", text="D", options=("a", "b", "c"), required=False),
    Question(id="ticks", text="T", options=tuple("abcdefghi"), type="multi", epsilon=2.0, required=False)))


@pytest.fixture
def eight(db):
    stored = insert_survey(db, EIGHT, status="open")
    rng = np.random.default_rng(35)
    for i in range(60):
        reports = {f"q{j}": int(rng.integers(2 + j % 2)) for j in range(5)}
        if rng.random() < 0.7:
            reports["direct"] = int(rng.integers(3))
        if rng.random() < 0.7:
            reports["ticks"] = [int(b) for b in rng.integers(0, 2, 9)]
        store_response(db, stored, reports, scrub_now=False)
    return stored


def bump_first(table: str, key: str, by: int):
    """An alteration: add ``by`` to the first row (in key order) of ``ticks`` counted in ``table``."""
    def alter(db) -> None:
        row = db.execute(f"SELECT {key} FROM {table} WHERE qid = 'ticks' AND count > 0 ORDER BY {key} LIMIT 1").fetchone()
        where = " AND ".join(f"{k} = ?" for k in key.split(", "))
        db.execute(f"UPDATE {table} SET count = count + {by} WHERE {where}", row)
    return alter


ALTERATIONS = {  # what is altered by hand: (how, what the check's line names)
    "counts": ("UPDATE counts SET count = count + 1 WHERE qid = 'q1' AND option = 0", "counts: q1 option 0"),
    "cell counts": (bump_first("cell_counts", "qid, stat, cell", -1), "cell counts: ticks"),
    "a pattern bucket": ("DELETE FROM pattern_buckets WHERE bucket = 0", "answer patterns:"),
    "raking cells": (bump_first("raking_cells", "qid, cell, stat, code", 2), "raking cells: ticks"),
    "slot sizes": ("UPDATE response_slot_sizes SET filled = filled + 1", "slot sizes: filled 61, filled slots 60"),
}


@pytest.mark.parametrize("what", sorted(ALTERATIONS))
def test_one_aggregate_row_altered_by_hand_is_found_and_repaired(db, db_path, eight, what):
    assert integrity.check(db) == []
    alter, named = ALTERATIONS[what]
    db.execute(alter) if isinstance(alter, str) else alter(db)
    result = run("check", "--db", db_path)
    assert result.exit_code == 1 and named in result.stdout, result.stdout
    assert all(line.startswith("eight: ") for line in result.stdout.splitlines())
    assert run("check", "--db", db_path, "--repair").exit_code == 0
    assert run("check", "--db", db_path).exit_code == 0
    assert integrity.check(db) == []


def test_single_submissions_after_a_repair_keep_every_aggregate_true(db, eight):
    """The rebuilt buckets are ones the inserts keep growing (a repair is no one-off)."""
    db.execute("DELETE FROM pattern_buckets")
    with write_transaction(db):
        integrity.rebuild(db, eight)
    rng = np.random.default_rng(8)
    for _ in range(80):
        store_response(db, eight, {f"q{j}": int(rng.integers(2 + j % 2)) for j in range(5)}, scrub_now=False)
    assert integrity.check(db) == []
    assert integrity.stored(db, eight).responses == 140


def test_the_start_check_finds_a_short_survey_without_reading_a_report_and_repairs_it(db, eight):
    db.execute("DELETE FROM pattern_buckets WHERE bucket = 1")
    gaps, rebuilt = integrity.repair_quick(db)
    assert rebuilt == ["eight"]
    assert any(str(g).startswith("eight: answer patterns: ") for g in gaps)
    assert integrity.check(db) == []
    assert integrity.summary(*integrity.repair_quick(db)) == \
        "check: every survey's aggregates agree with its responses"


def test_check_refuses_an_unknown_survey_and_a_missing_file(db_path, eight, tmp_path):
    result = run("check", "nope", "--db", db_path)
    assert result.exit_code == 1 and "no survey 'nope'" in result.output
    result = run("check", "--db", tmp_path / "absent.db")
    assert result.exit_code == 1 and "no such database file" in result.output


def test_check_reads_a_database_it_cannot_write(db_path, eight):
    connect(db_path).conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    result = run("check", "eight", "--db", db_path)
    assert result.exit_code == 0 and "1 survey, 60 responses" in result.stdout
