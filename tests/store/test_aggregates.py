"""The answer patterns kept on every insert are exactly the rows, aggregated."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deniable.server.store import aggregates
from deniable.server.store.db import init_db
from deniable.server.store.responses import insert_many, load_db_dataset
from support.store import store_response
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import Question, Survey

# More options than a definition allows today (64), as later question types may have: built
# directly, to test the two-byte patterns.
WIDE = Survey(slug="wide", title="W", description="", questions=(
    Question(id="big", text="B", options=tuple(f"o{i}" for i in range(300)), epsilon=1.0),
    Question(id="small", text="S", options=("a", "b"), required=False)))


def same_counts(patterns, rows) -> None:
    data = patterns.dataset()
    assert data.n_responses == rows.n_responses
    ids = [q.id for q in rows.survey.questions]
    for qid in ids:
        assert np.array_equal(data.counts(qid), rows.counts(qid)), qid
    for a in ids:
        for b in ids:
            if a != b:
                assert np.array_equal(data.joint_counts(a, b), rows.joint_counts(a, b)), (a, b)


def test_single_inserts_and_bulk_inserts_keep_the_patterns(db, stored):
    for reports in ({"drug_use": 1, "cheating": 2}, {"drug_use": 1, "cheating": 2, "age_group": 0},
                    {"drug_use": 0, "cheating": 3}, {"drug_use": 1, "cheating": 2}):
        store_response(db, stored, reports)
    rng = np.random.default_rng(5)
    insert_many(db, stored, {"drug_use": rng.integers(0, 2, 3000), "cheating": rng.integers(0, 4, 3000),
                             "age_group": rng.integers(-1, 4, 3000)}, batch_size=1000, submitted_on="2026-01-02")
    patterns = aggregates.pattern_counts(db, stored)
    same_counts(patterns, load_db_dataset(db, "demo"))
    assert len(patterns.counts) <= 2 * 2 * 4 * 5  # days × patterns, never rows
    days = {str(day): int(patterns.counts[patterns.days == day].sum()) for day in set(patterns.days)}
    assert days["2026-01-02"] == 3000 and sum(days.values()) == 3004


def test_single_diverse_submissions_are_all_counted(db):
    """One response at a time, with many answer patterns: every full bucket grows the day (the
    one-pattern fast path once dropped the response when its bucket was full: 200 submissions to
    eight yes/no questions left 55 in the patterns)."""
    eight = Survey(slug="eight", title="Eight", description="", questions=tuple(
        Question(id=f"q{i}", text="Q", options=("Yes", "No"), epsilon=1.0) for i in range(8)))
    stored = insert_survey(db, eight, status="open")
    rng = np.random.default_rng(3)
    for _ in range(300):
        store_response(db, stored, {f"q{i}": int(rng.integers(0, 2)) for i in range(8)}, scrub_now=False)
    patterns = aggregates.pattern_counts(db, stored)
    assert int(patterns.counts.sum()) == 300
    same_counts(patterns, load_db_dataset(db, "eight"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(0, 299), st.integers(-1, 1)), min_size=1, max_size=40))
def test_wide_questions_use_two_bytes_and_round_trip(db_path, rows):
    db = init_db(db_path)
    try:
        stored = get_survey(db, "wide") or insert_survey(db, WIDE, status="open")
        db.execute("DELETE FROM responses"), db.execute("DELETE FROM pattern_buckets")
        db.execute("UPDATE counts SET count = 0")
        insert_many(db, stored, {"big": np.array([r[0] for r in rows]), "small": np.array([r[1] for r in rows])})
        same_counts(aggregates.pattern_counts(db, stored), load_db_dataset(db, "wide"))
        assert aggregates.encode(WIDE, {"big": 299}) == (300).to_bytes(2, "little") + b"\0\0"
    finally:
        db.conn.close()


def test_the_migration_counts_the_responses_already_stored(tmp_path):
    path = tmp_path / "old.db"
    db = init_db(path)
    stored = insert_survey(db, WIDE, status="open")
    for i, reports in enumerate(({"big": 3, "small": 1}, {"big": 3, "small": 1}, {"big": 299})):
        db.execute("INSERT INTO responses (id, survey_id, submitted_on, reports, design) VALUES (?, ?, ?, ?, '{}')",
                   [f"r{i}", stored.id, "2026-01-01", json.dumps(reports)])
    # As if the database predated the table: responses stored, the migration not yet applied.
    db.execute("DROP TABLE answer_patterns")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm07_answer_patterns'")
    db.conn.commit()
    db.conn.close()
    db = init_db(path)
    try:
        patterns = aggregates.pattern_counts(db, get_survey(db, "wide"))
        assert sorted(zip(patterns.columns["big"].tolist(), patterns.columns["small"].tolist(),
                          patterns.counts.tolist())) == [(3, 1, 2), (299, -1, 1)]
    finally:
        db.conn.close()
