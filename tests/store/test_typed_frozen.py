"""Invariant 4 for the other question types: a launched question keeps its type and its spec."""

from __future__ import annotations

import sqlite3

import pytest

from deniable.server.store.db import init_db
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import load_definition


@pytest.mark.parametrize("change", ["type = 'choice'", "spec = '{\"min\": 0, \"max\": 4, \"step\": 1}'"])
def test_a_launched_questions_type_and_spec_are_frozen(tmp_path, change):
    db = init_db(tmp_path / "t.db")
    try:
        insert_survey(db, load_definition("examples/habits.json"), status="open")
        with pytest.raises(sqlite3.IntegrityError, match="not a draft"):
            db.execute(f"UPDATE questions SET {change} WHERE qid = 'drinks'")
        db.execute("UPDATE questions SET text = 'Drinks in the last 7 days?' WHERE qid = 'drinks'")  # wording: fine
    finally:
        db.conn.close()
