"""Wording versions are no clock (issue 41, item 1).

The attack, as an independent red team ran it: fix a launched survey's wording five times, seconds
apart, with submissions between the fixes.  When each response recorded the version at the moment it
arrived, 80 of 80 carried the version of the window they were sent in: every fix made during a day
split that day's responses into groups in the order they came — in the database, the exports'
``text-version`` and the backup.  Now a response records the wording its day began with
(``slots.DAY_VERSION``): a fix shows at once and is recorded from the next day, so a day's responses
carry one version however often it was fixed, and the codebook says which versions each day showed.
"""

from __future__ import annotations

import csv
import datetime
import json
import sqlite3

import pytest

from deniable.server.store import integrity, migrations
from deniable.server.store.backup import backup
from deniable.server.store.db import write_transaction
from deniable.server.store.exports import load_export
from deniable.server.store.surveys import fixed_today, today
from deniable.server.store.wording import fix_wording
from support.store import store_response

FIXES, BETWEEN = 5, 16


def day_after(day: str, days: int = 1) -> str:
    return (datetime.date.fromisoformat(day) + datetime.timedelta(days=days)).isoformat()


def fix(db, n: int) -> None:
    fix_wording(db, "demo", {"title": f"Sensitive habits, take {n}"})


def answer(db, stored, i: int) -> None:
    store_response(db, stored, {"drug_use": i % 2, "cheating": i % 4, "age_group": i % 4})


def versions_by_day(path) -> dict[str, set[int]]:
    """Per day, the text versions its responses record, as someone holding the file reads them."""
    conn = sqlite3.connect(path)
    try:
        found: dict[str, set[int]] = {}
        for day, version in conn.execute("SELECT submitted_on, text_version FROM responses"):
            found.setdefault(day, set()).add(version)
        return found
    finally:
        conn.close()


def test_fixes_seconds_apart_do_not_divide_a_day(db, stored, db_path, tmp_path):
    first = stored.opened_on or today()  # the survey opened on the clock's day: the first wording's day
    second = day_after(first)
    with fixed_today(first):
        for n in range(FIXES):
            for i in range(BETWEEN):
                answer(db, stored, i)
            fix(db, n)
        for i in range(BETWEEN):
            answer(db, stored, i)
    assert versions_by_day(db_path) == {first: {1}}  # 96 responses around five fixes: one version
    copy = tmp_path / "backup.db"
    backup(db_path, copy)
    assert versions_by_day(copy) == {first: {1}}
    export = load_export(db, "demo")
    rows = list(csv.reader(export.responses("csv").decode().splitlines()[1:]))
    assert rows[0][-1] == "text-version" and {row[-1] for row in rows[1:]} == {"1"}
    # the next day records the day's first wording: the last fix of the day before
    with fixed_today(second):
        for i in range(BETWEEN):
            answer(db, stored, i)
        fix(db, FIXES)
        answer(db, stored, 0)
    assert versions_by_day(db_path) == {first: {1}, second: {FIXES + 1}}
    codebook = json.loads(load_export(db, "demo").codebook())
    versions = {v["version"]: v for v in codebook["text_versions"]}
    assert [versions[v]["responses"] for v in sorted(versions)] == [96, 0, 0, 0, 0, 17, 0]
    assert versions[FIXES + 1]["since"] == first and versions[FIXES + 1]["recorded_from"] == second
    assert versions[1]["recorded_from"] == first and versions[2]["recorded_from"] is None  # fixed again that day
    assert versions[FIXES + 2]["recorded_from"] == day_after(second)
    assert "recorded_from" in codebook["text_versions_note"]
    assert integrity.check(db) == []


def test_responses_stored_by_the_moment_are_put_by_the_day(db, stored, db_path):
    """A database written before this rule (versions by the moment) is made to follow it by the migration,
    and ``deniable check`` finds any response off the rule and ``--repair`` puts it right."""
    day = stored.opened_on or today()
    with fixed_today(day):
        for n in range(3):
            answer(db, stored, n)
            fix(db, n)
        answer(db, stored, 3)
    ids = [rid for (rid,) in db.execute("SELECT id FROM response_slots WHERE filled = 1 ORDER BY id")]
    with write_transaction(db):  # what the old rule wrote: each response the version at its moment
        for version, rid in enumerate(ids, start=1):
            db.execute("UPDATE response_slots SET text_version = (1 << 56) + ? WHERE id = ?", [version, rid])
    assert versions_by_day(db_path) == {day: {1, 2, 3, 4}}
    gaps = integrity.check(db)
    assert [(g.structure, g.detail.split(" ")[0]) for g in gaps] == [("text versions", "3")]
    with write_transaction(db):
        migrations.m20_text_versions_by_day(db)
    assert versions_by_day(db_path) == {day: {1}} and integrity.check(db) == []
    with write_transaction(db):
        db.execute("UPDATE response_slots SET text_version = (1 << 56) + 3 WHERE filled = 1")
    assert integrity.repair(db) == ["demo"]
    assert versions_by_day(db_path) == {day: {1}} and integrity.check(db) == []


@pytest.mark.parametrize("day", ["2026-11-28", "2026-12-31"])
def test_the_page_shows_a_fix_at_once(db, stored, day):
    from deniable.server.store.surveys import get_launched_survey

    with fixed_today(day):
        fix(db, 0)
        assert get_launched_survey(db, "demo").survey.title == "Sensitive habits, take 0"
