"""No submission order at rest in the page layout of the database file (issue 23, item 1).

SQLite writes a new cell below the cells already in its page, and moves a cell whose size changes
to the lowest offset, so sorting a page's cells by offset can give the order they were written.
Here every leaf and interior page of every b-tree of the file is read as raw bytes after each
submission (:class:`support.layout.LayoutWatch`), and the cells that the newest 60 submissions
wrote, moved or overwrote are compared, pair by pair within a page, with the order of those
submissions: for the responses, for the aggregates (answer patterns, counts, cell counts) and for
the raking cells (a Laplace question's statistics per raking cell) the agreement is at most 0.60 (0.5: nothing learned), as the median of 20 runs, in a survey that was
empty and in one that had 1,000 responses, and in a survey of a database made by an earlier
deniable and upgraded.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import numpy as np
import pytest

from deniable.server.store.db import init_db
from deniable.server.store.responses import insert_many
from support.store import store_response
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition
from support.layout import LayoutWatch

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parents[1] / "data"
RUNS, NEWEST, LIMIT = 20, 60, 0.60  # and at least 1 − LIMIT: the reverse order would give it away too
GROUPS = {"responses": {"responses", "response_slots"},
          "aggregates": {"answer_patterns", "pattern_buckets", "counts", "cell_counts"},
          "raking cells": {"raking_cells"}}


def random_columns(survey, n: int, rng) -> dict[str, np.ndarray]:
    """``n`` random possible reports per question, as codes (a tenth of the optional ones unanswered)."""
    columns = {}
    for q in survey.questions:
        codes = rng.integers(0, q.qtype.n_cells(q), size=n)
        while (bad := q.qtype.invalid_codes(q, codes)).any():
            codes[bad] = rng.integers(0, q.qtype.n_cells(q), size=int(bad.sum()))
        if not q.required:
            codes[rng.random(n) < 0.1] = -1
        columns[q.id] = codes.astype(np.int64)
    return columns


def roots(db) -> dict[str, int]:
    return {name: root for name, root in db.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0")}


def btrees_of(db, tables: set[str]) -> set[str]:
    return {name for name, table in db.execute("SELECT name, tbl_name FROM sqlite_master WHERE rootpage > 0")
            if table in tables}


def newest_submissions(db, path, stored, rng) -> dict[str, float]:
    """Submit :data:`NEWEST` random responses one by one, reading the file after each; the agreement
    of each group's cells with the order of the submissions."""
    survey = stored.survey
    columns = random_columns(survey, NEWEST, rng)
    watch = LayoutWatch()
    db.execute("PRAGMA synchronous = OFF")  # the layout is the same; the 61 checkpoints skip their fsyncs
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    watch.snapshot(path, roots(db))
    for i in range(NEWEST):
        reports = {q.id: q.qtype.report_of(q, int(columns[q.id][i])) for q in survey.questions
                   if columns[q.id][i] >= 0}
        store_response(db, stored, reports)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        watch.snapshot(path, roots(db))
    return {group: watch.agreement(btrees_of(db, tables)) for group, tables in GROUPS.items()}


def median_agreement(make, pool: int = 1, runs: int = RUNS) -> dict[str, tuple[float, int]]:
    """Per group, the median agreement over ``runs`` runs and the pairs of all runs.  A run pools the
    pairs of ``pool`` databases (``make(i)``: a survey whose 60 newest responses fall in many pages
    has few pairs in each, and a median of fractions of a few pairs would be mostly noise)."""
    found: dict[str, list] = {group: [] for group in GROUPS}
    for run in range(runs):
        pooled = {group: [0.0, 0] for group in GROUPS}
        for i in range(pool):
            for group, (fraction, pairs) in make(run * pool + i).items():
                if pairs:
                    pooled[group][0] += fraction * pairs
                    pooled[group][1] += pairs
        for group, (agree, pairs) in pooled.items():
            found[group].append((agree / pairs if pairs else None, pairs))
    return {group: (statistics.median(f for f, p in values if p), sum(p for _, p in values))
            for group, values in found.items()}


def habits():
    return parse_definition(json.loads((ROOT / "examples" / "habits.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("before", [0, pytest.param(1000, marks=pytest.mark.slow)])  # 15 s: the full suite
def test_the_newest_submissions_are_in_no_order_in_the_file(tmp_path, before):
    def run(i):
        path = tmp_path / f"run{i}.db"
        db = init_db(path)
        try:
            rng = np.random.default_rng(i)
            stored = insert_survey(db, habits(), status="open")
            if before:
                insert_many(db, stored, random_columns(stored.survey, before, rng))
            return newest_submissions(db, path, stored, rng)
        finally:
            db.conn.close()

    found = median_agreement(run, pool=3 if before else 1)
    print(f"{before} responses before:", found)
    for group, (fraction, pairs) in found.items():
        assert pairs >= 100, (group, found)  # the attack has pages to read
        assert 1 - LIMIT <= fraction <= LIMIT, (group, found)


@pytest.mark.slow  # 12 s: the full suite runs it
def test_an_upgraded_database_keeps_no_order_either(tmp_path):
    """A database made by an earlier deniable (tests/data/compat-7ad577a.db), upgraded by today's code."""
    def run(i):
        path = tmp_path / f"run{i}.db"
        shutil.copy(DATA / "compat-7ad577a.db", path)
        db = init_db(path)
        try:
            slug = next(slug for (slug,) in db.execute(
                "SELECT slug FROM surveys WHERE status = 'open' ORDER BY (SELECT count(*) FROM questions "
                "WHERE survey_id = surveys.id) DESC, slug"))
            return newest_submissions(db, path, get_survey(db, slug), np.random.default_rng(i))
        finally:
            db.conn.close()

    found = median_agreement(run, pool=3)
    print("upgraded:", found)
    for group, (fraction, pairs) in found.items():
        assert pairs >= 100, (group, found)  # the attack has pages to read
        assert 1 - LIMIT <= fraction <= LIMIT, (group, found)
