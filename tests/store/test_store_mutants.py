"""Store behaviour that mutation testing found unchecked (docs/developing.md, "Mutation testing").

Each test reads the store through its API on a real SQLite file: a quarter of the slots stays free
after every submission and every bulk batch even when no growth pass runs, a rebuild doubles the
slots and only when needed, the widths are multiples of 16, a padded counter and its pad make eight
bytes at every boundary, a stored or bulk report out of range is named with its row, and the raking
datasets and daily codes hold every respondent as one row per respondent would.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from deniable.server.store import aggregates, slots
from deniable.server.store.db import init_db, write_transaction
from deniable.server.store.responses import (ReportError, check_open, insert_many, insert_validated, load_db_dataset,
                                             raking_sources, validate_reports)
from deniable.server.store.surveys import get_survey, insert_survey, today
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.dataset import NOT_ANSWERED
from support.store import store_response

DATA = Path(__file__).parents[1] / "data"

WORK = {"slug": "work", "title": "Work", "questions": [
    {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"], "required": False},
    {"id": "hours", "text": "Hours?", "type": "numeric", "min": 0, "max": 10, "step": 0.5, "epsilon": 2.0,
     "mechanism": "laplace", "required": False},
    {"id": "many", "text": "Which?", "type": "multi", "options": [f"Thing {i}" for i in range(9)], "epsilon": 3.0,
     "required": False},
    {"id": "sex", "text": "Sex?", "options": ["Female", "Male"]},
]}


def store_without_growth(db, stored, reports) -> None:
    """One submission as the server stores it, but no growth pass afterwards (a pass that cannot keep up)."""
    check_open(stored)
    clean = validate_reports(stored, reports)
    with write_transaction(db):
        insert_validated(db, stored, clean, None, today())


def quarter_free(db, stored) -> bool:
    slots_now, filled, _, _ = slots.sizes(db.conn, stored.id)
    return (slots_now - filled) * 4 >= slots_now


def test_a_quarter_of_the_slots_stays_free_after_every_submission_without_growth_passes(db, stored):
    for i in range(150):
        store_without_growth(db, stored, {"drug_use": i % 2, "cheating": i % 4})
        assert quarter_free(db, stored), i
    slots_now, filled, _, _ = slots.sizes(db.conn, stored.id)
    assert filled == 150 and slots_now >= 200
    assert db.execute("SELECT count(*) FROM response_slots WHERE survey_id = ?", [stored.id]).fetchone()[0] == slots_now
    assert len(load_db_dataset(db, stored.slug).columns["drug_use"]) == 150


def test_a_quarter_of_the_slots_stays_free_after_every_bulk_batch(db, stored):
    rng = np.random.default_rng(5)
    total = 0
    for n in (100, 40, 20, 40, 3, 1, 60, 7):
        insert_many(db, stored, {"drug_use": rng.integers(0, 2, n), "cheating": rng.integers(0, 4, n)})
        total += n
        assert quarter_free(db, stored), n
        assert slots.sizes(db.conn, stored.id)[1] == total
    assert len(load_db_dataset(db, stored.slug).columns["cheating"]) == total


def test_the_slot_widths_are_multiples_of_16_with_a_quarter_to_spare(db):
    survey = parse_definition({"slug": "wide", "title": "Wide", "questions": [
        {"id": f"question_with_a_long_identifier_{i}", "text": "Q", "options": ["Yes", "No"]} for i in range(6)]})
    stored = insert_survey(db, survey, status="open")
    store_response(db, stored, {q.id: 1 for q in survey.questions})
    reports, design = db.execute("SELECT reports, design FROM responses").fetchone()
    _, _, reports_width, design_width = slots.sizes(db.conn, stored.id)
    for text, width in ((reports, reports_width), (design, design_width)):
        assert width % 16 == 0 and len(text.encode()) * 5 // 4 <= width < len(text.encode()) * 5 // 4 + 16
    assert slots.width_for(["x" * 100]) == 128 and slots.width_for(["x"]) == 16
    assert slots.width_for(["x" * 100], 200) == 200 and slots.width_for(["x" * 300], 200) == 384
    assert slots.width_for([]) == 0 and slots.width_for([], 48) == 48 and slots.width_for([""]) == 0
    assert slots.width_for(["x" * 48], 48) == 48 and slots.width_for(["x" * 49], 48) == 64


def test_wider_reports_widen_the_reports_from_their_own_width(db, stored):
    store_response(db, stored, {"drug_use": 0, "cheating": 0})
    _, _, reports_width, design_width = slots.sizes(db.conn, stored.id)
    assert reports_width < design_width  # the two widths differ: each grows from its own
    long = {"drug_use": 1, "cheating": 3, "age_group": 3}
    with write_transaction(db):  # the slots made narrow for the reports only: the next response rebuilds them
        slots.rebuild(db.conn, stored.id, room=0, reports_width=0, design_width=design_width)
        db.execute("UPDATE response_slot_sizes SET reports_width = ? WHERE survey_id = ?",
                   [slots.OFFSET + 16, stored.id])
    rid = store_response(db, stored, long)
    reports = db.execute("SELECT reports FROM responses WHERE id = ?", [rid]).fetchone()[0]
    assert slots.sizes(db.conn, stored.id)[2] == slots.width_for([reports], 16)


def test_a_growth_pass_starts_only_when_fewer_than_half_the_slots_are_free(db, stored):
    for i in range(32):
        store_response(db, stored, {"drug_use": i % 2, "cheating": i % 4})
    assert slots.sizes(db.conn, stored.id)[:2] == (64, 32)  # exactly half free: no pass
    with write_transaction(db):
        assert not slots.growth_due(db.conn, stored.id)
    store_response(db, stored, {"drug_use": 1, "cheating": 1})
    assert slots.sizes(db.conn, stored.id)[:2] == (128, 33)


def test_a_growth_step_without_a_pass_under_way_changes_nothing(db, stored):
    with write_transaction(db):
        assert slots.grow_step(db.conn, stored.id) is False  # no slots yet
    for i in range(5):
        store_response(db, stored, {"drug_use": i % 2, "cheating": i % 4})
    before = db.execute("SELECT * FROM response_slots ORDER BY id").fetchall()
    with write_transaction(db):
        assert slots.grow_step(db.conn, stored.id) is False
    assert db.execute("SELECT * FROM response_slots ORDER BY id").fetchall() == before
    assert slots.sizes(db.conn, stored.id)[:2] == (64, 5)


def sqlite_integer_size(n: int) -> int:
    """The bytes SQLite's record format stores the integer ``n`` in (serial types 8/9, 1-6)."""
    if n in (0, 1):
        return 0
    for size in (1, 2, 3, 4, 6):
        if -(1 << (8 * size - 1)) <= n < 1 << (8 * size - 1):
            return size
    return 8


def test_a_padded_counter_makes_eight_bytes_at_every_boundary_in_python_and_in_sql():
    conn = sqlite3.connect(":memory:")
    values = {0, 1, 2, -1}
    for size in (1, 2, 3, 4, 6):
        bound = 1 << (8 * size - 1)
        values |= {bound - 1, bound, -bound, -bound - 1}
    for n in sorted(values):
        pad = conn.execute(f"SELECT {slots.padding(':n')}", {"n": n}).fetchone()[0]
        assert len(slots.pad_of(n)) == len(pad) == 8 - sqlite_integer_size(n), n
        assert slots.pad_of(n) == pad == bytes(8 - sqlite_integer_size(n)), n


def test_every_stored_counter_keeps_eight_bytes_with_its_pad(tmp_path):
    db = init_db(tmp_path / "d.db")
    survey = parse_definition(WORK)
    stored = insert_survey(db, survey, status="open")
    rng = np.random.default_rng(11)
    n_hours = survey.question("hours").qtype.n_cells(survey.question("hours"))
    insert_many(db, stored, {"year": rng.integers(-1, 3, 300), "hours": rng.integers(-1, n_hours, 300),
                             "many": rng.integers(-1, 1 << 9, 300), "sex": rng.integers(0, 2, 300)})
    hours = survey.question("hours")
    for i in range(5):
        store_response(db, stored, {"sex": i % 2, "year": 1, "hours": hours.qtype.report_of(hours, 5),
                                    "many": [1, 0, 0, 0, 0, 0, 0, 0, 1]})
    for table in ("counts", "cell_counts", "raking_cells"):
        rows = db.execute(f"SELECT count, pad FROM {table} WHERE survey_id = ?", [stored.id]).fetchall()
        assert rows and {c for c, _ in rows} - {0, 1}, table  # counters above 1 among them
        for count, pad in rows:
            assert len(pad) + sqlite_integer_size(count) == 8, (table, count)


def test_the_patterns_of_a_survey_without_responses_are_empty(db, stored):
    patterns = aggregates.pattern_counts(db, stored)
    assert len(patterns.counts) == 0 and len(patterns.days) == 0
    assert {qid: len(column) for qid, column in patterns.columns.items()} == {
        "drug_use": 0, "cheating": 0, "age_group": 0}
    assert patterns.dataset().columns["cheating"].shape == (0,)


def test_a_stored_report_out_of_range_is_named(db, stored):
    store_response(db, stored, {"drug_use": 1, "cheating": 2})
    store_response(db, stored, {"drug_use": 0, "cheating": 1})
    rid = store_response(db, stored, {"drug_use": 0, "cheating": 0})
    with write_transaction(db):
        db.execute("UPDATE response_slots SET reports = replace(reports, '\"cheating\":0', '\"cheating\":4') "
                   "WHERE id = ?", [rid])
    with pytest.raises(ValueError, match=r"demo: stored report for cheating out of range: 4$"):
        load_db_dataset(db, stored.slug)
    with write_transaction(db):
        db.execute("UPDATE response_slots SET reports = replace(reports, '\"cheating\":4', '\"cheating\":-2') "
                   "WHERE id = ?", [rid])
    with pytest.raises(ValueError, match=r"demo: stored report for cheating out of range: -2$"):
        load_db_dataset(db, stored.slug)


def test_raking_sources_of_an_upgraded_database_make_its_cells_once_or_read_its_rows_read_only(tmp_path):
    path = tmp_path / "old.db"
    shutil.copy(DATA / "compat-7ad577a.db", path)
    db = init_db(path)  # upgraded: every survey's raking cells are due
    due = "SELECT raking_cells_due FROM surveys WHERE slug = ?"
    slugs = [s for (s,) in db.execute("SELECT slug FROM surveys WHERE raking_cells_due = 1")
             if aggregates.outside_patterns(get_survey(db, s).survey)]
    assert slugs
    for slug in slugs:
        stored = get_survey(db, slug)
        patterns = aggregates.pattern_counts(db, stored).dataset()
        rows = load_db_dataset(db, slug).columns
        raking = [q.id for q in aggregates.raking_questions(stored.survey)]
        # read-only: one dataset of every response per question, from the rows, and nothing written
        read = raking_sources(db, stored, patterns, read_only=True)
        assert db.execute(due, [slug]).fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM raking_cells WHERE survey_id = ?", [stored.id]).fetchone()[0] == 0
        for q in aggregates.outside_patterns(stored.survey):
            (dataset,) = read[q.id]
            assert dataset.weights is None
            assert weighted_rows(dataset) == Counter(zip(*(rows[r.id].tolist() for r in dataset.survey.questions)))
            assert {r.id for r in dataset.survey.questions} == {*raking, q.id}
        # with a writer: the cells are made once, and the datasets come from them
        made = raking_sources(db, stored, patterns)
        assert db.execute(due, [slug]).fetchone()[0] == 0
        for q in aggregates.outside_patterns(stored.survey):
            assert all(dataset.weights is not None for dataset in made[q.id])
            if len(made[q.id]) == 1:
                assert weighted_rows(made[q.id][0]) == weighted_rows(read[q.id][0])


def weighted_rows(dataset) -> Counter:
    """``{(codes of the dataset's questions): responses}`` of a (weighted) dataset."""
    ids = [q.id for q in dataset.survey.questions]
    weights = np.ones(len(dataset.columns[ids[0]]), dtype=np.int64) if dataset.weights is None else dataset.weights
    out: Counter = Counter()
    for i, w in enumerate(weights.tolist()):
        out[tuple(int(dataset.columns[qid][i]) for qid in ids)] += int(w)
    return +out


@pytest.mark.parametrize("bulk", [False, True], ids=["one-at-a-time", "bulk"])
def test_the_raking_datasets_hold_every_respondent_as_the_rows_do(tmp_path, bulk):
    db = init_db(tmp_path / "d.db")
    survey = parse_definition(WORK)
    stored = insert_survey(db, survey, status="open")
    hours = survey.question("hours")
    rng = np.random.default_rng(2)
    if bulk:
        n_hours = hours.qtype.n_cells(hours)
        insert_many(db, stored, {"year": rng.integers(-1, 3, 250), "hours": rng.integers(-1, n_hours, 250),
                                 "many": rng.integers(-1, 1 << 9, 250), "sex": rng.integers(0, 2, 250)})
    for _ in range(60):
        reports = {"sex": int(rng.integers(0, 2))}
        if rng.random() < 0.7:
            reports["year"] = int(rng.integers(0, 3))
        if rng.random() < 0.7:
            reports["hours"] = hours.qtype.report_of(hours, int(rng.integers(0, 6)))
        if rng.random() < 0.7:
            reports["many"] = [int(b) for b in rng.integers(0, 2, 9)]
        store_response(db, stored, reports)
    rows = load_db_dataset(db, "work").columns
    patterns = aggregates.pattern_counts(db, stored).dataset()
    found = raking_sources(db, stored, patterns)
    assert sorted(found) == ["hours", "many"]
    # one dataset for the Laplace question: (year, sex, hours) of every respondent, -1 where not answered
    (laplace,) = found["hours"]
    assert [q.id for q in laplace.survey.questions] == ["year", "hours", "sex"]
    expected = Counter(zip(rows["year"].tolist(), rows["hours"].tolist(), rows["sex"].tolist()))
    assert weighted_rows(laplace) == expected
    # one dataset per option of the check-all question: that option's tick alone (2**j or 0), -1 unanswered
    assert len(found["many"]) == 9
    for j, option in enumerate(found["many"]):
        assert [q.id for q in option.survey.questions] == ["year", "many", "sex"]
        ticks = [NOT_ANSWERED if code < 0 else code & (1 << j) for code in rows["many"].tolist()]
        assert weighted_rows(option) == Counter(zip(rows["year"].tolist(), ticks, rows["sex"].tolist())), j


def test_insert_many_refuses_a_column_of_two_dimensions(db, stored):
    with pytest.raises(ValueError, match=r"drug_use: must be a 1-d array of integer option indices"):
        insert_many(db, stored, {"drug_use": np.array([[0], [1]]), "cheating": np.array([0, 0])})
    assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 0


def test_insert_many_names_the_row_of_a_required_question_left_unanswered(db, stored):
    with pytest.raises(ValueError, match=r"drug_use: required question not answered in row 2$"):
        insert_many(db, stored, {"drug_use": np.array([1, 0, -1, 1]), "cheating": np.array([0, 1, 2, 3])})


def test_a_bulk_insert_into_a_new_survey_makes_the_fewest_slots_that_leave_a_quarter_free(db, stored):
    insert_many(db, stored, {"drug_use": np.zeros(48, dtype=np.int64), "cheating": np.zeros(48, dtype=np.int64)})
    assert slots.sizes(db.conn, stored.id)[:2] == (64, 48)  # 16 of 64 free: exactly a quarter


def test_a_bulk_insert_of_wider_reports_widens_every_slot(db):
    survey = parse_definition({"slug": "wide", "title": "Wide", "questions": [
        {"id": f"question_with_a_long_identifier_{i}", "text": "Q", "options": ["Yes", "No"], "required": False}
        for i in range(6)]})
    stored = insert_survey(db, survey, status="open")
    ids = [q.id for q in survey.questions]
    insert_many(db, stored, {ids[0]: np.zeros(10, dtype=np.int64)})
    narrow = slots.sizes(db.conn, stored.id)[2]
    with write_transaction(db):  # designs of any width fit: only the reports are too wide for the next batch
        slots.rebuild(db.conn, stored.id, room=0, reports_width=narrow, design_width=1024)
    insert_many(db, stored, {qid: np.ones(5, dtype=np.int64) for qid in ids})
    longest = db.execute("SELECT max(length(reports)) FROM responses").fetchone()[0]
    reports_width = slots.sizes(db.conn, stored.id)[2]
    assert longest > narrow and reports_width >= longest
    widths = {n for (n,) in db.execute("SELECT length(reports) FROM response_slots WHERE survey_id = ?", [stored.id])}
    assert widths == {reports_width}  # every slot of the survey has the same width
    assert len(load_db_dataset(db, "wide").columns[ids[5]]) == 15


def test_a_question_of_more_codes_than_all_cells_max_gets_its_cells_one_by_one(db):
    survey = parse_definition({"slug": "big", "title": "Big", "questions": [
        {"id": "v", "text": "V?", "type": "numeric", "min": 0, "max": 1000, "step": 1, "epsilon": 0.04,
         "mechanism": "laplace"}]})
    q = survey.question("v")
    assert aggregates.ALL_CELLS_MAX < q.qtype.n_cells(q) <= 2 * aggregates.ALL_CELLS_MAX
    stored = insert_survey(db, survey, status="open")
    store_response(db, stored, {"v": q.qtype.report_of(q, 1234)})
    store_response(db, stored, {"v": q.qtype.report_of(q, 1234)})
    store_response(db, stored, {"v": q.qtype.report_of(q, 99)})
    rows = db.execute("SELECT cell, count, length(pad) FROM cell_counts WHERE survey_id = ? ORDER BY cell",
                      [stored.id]).fetchall()
    assert rows == [(99, 1, 8), (1234, 2, 7)]
    assert load_db_dataset(db, "big").columns["v"].tolist().count(1234) == 2


def test_a_bulk_batch_that_fits_the_slots_exactly_rebuilds_nothing(db, stored):
    one = {"drug_use": np.ones(4, dtype=np.int64), "cheating": np.full(4, 3)}
    insert_many(db, stored, one)
    reports, design = db.execute("SELECT reports, design FROM responses LIMIT 1").fetchone()
    with write_transaction(db):  # slots exactly as wide as these reports and designs
        slots.rebuild(db.conn, stored.id, room=0, reports_width=len(reports.encode()),
                      design_width=len(design.encode()))
    before = slots.sizes(db.conn, stored.id)
    assert before[2:] == (len(reports.encode()), len(design.encode()))
    insert_many(db, stored, one)
    assert slots.sizes(db.conn, stored.id) == (before[0], 8, *before[2:])


def test_every_response_id_is_16_characters_of_96_random_bits(db, stored):
    ids = [store_response(db, stored, {"drug_use": 0, "cheating": 0}) for _ in range(3)]
    insert_many(db, stored, {"drug_use": np.zeros(3, dtype=np.int64), "cheating": np.zeros(3, dtype=np.int64)})
    stored_ids = [rid for (rid,) in db.execute("SELECT id FROM response_slots")]
    assert set(ids) < set(stored_ids)
    for rid in stored_ids:
        assert len(rid) == 16 and set(rid) <= set(slots.KEY_CHARS), rid


def test_insert_many_stores_a_question_without_a_column_as_not_answered(tmp_path):
    db = init_db(tmp_path / "d.db")
    survey = parse_definition(WORK)
    stored = insert_survey(db, survey, status="open")
    insert_many(db, stored, {"many": np.array([3, -1, 5]), "sex": np.array([0, 1, 1])})  # no year, no hours
    rows = load_db_dataset(db, "work").columns
    assert rows["year"].tolist() == rows["hours"].tolist() == [-1, -1, -1]
    assert sorted(rows["many"].tolist()) == [-1, 3, 5] and sorted(rows["sex"].tolist()) == [0, 1, 1]
    patterns = aggregates.pattern_counts(db, stored)
    assert set(patterns.columns["year"].tolist()) == {-1} and int(patterns.counts.sum()) == 3
    year = db.execute("SELECT sum(count) FROM counts WHERE survey_id = ? AND qid = 'year'", [stored.id]).fetchone()
    assert year[0] == 0


def test_daily_codes_of_questions_outside_the_patterns_read_every_response(tmp_path):
    db = init_db(tmp_path / "d.db")
    survey = parse_definition(WORK)
    stored = insert_survey(db, survey, status="open")
    hours = survey.question("hours")
    insert_many(db, stored, {"hours": np.array([0, 5, -1, 5]), "many": np.array([3, -1, 3, 511]),
                             "sex": np.array([0, 1, 1, 0])}, submitted_on="2026-01-01")
    store_response(db, stored, {"sex": 1, "hours": hours.qtype.report_of(hours, 7), "many": [1] + [0] * 8})
    store_response(db, stored, {"sex": 0})
    for qid, expected in (("hours", [0, 5, -1, 5, 7, -1]), ("many", [3, -1, 3, 511, 1, -1])):
        days, codes = aggregates.daily_codes(db, stored, survey.question(qid))
        assert sorted(zip(days.tolist(), codes.tolist())) == sorted(
            zip(["2026-01-01"] * 4 + [today()] * 2, expected)), qid


def test_a_question_hidden_by_display_logic_is_refused_only_when_answered(db):
    survey = parse_definition({"slug": "logic", "title": "Logic", "questions": [
        {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No"]},
        {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "required": False,
         "show_if": {"question": "smoke", "in": ["Yes"]}}]})
    stored = insert_survey(db, survey, status="open")
    assert validate_reports(stored, {"smoke": 1}) == {"smoke": 1}  # hidden, unanswered: fine
    assert validate_reports(stored, {"smoke": 0, "many": 1}) == {"smoke": 0, "many": 1}
    with pytest.raises(ReportError, match="many: this question is not asked of this respondent"):
        validate_reports(stored, {"smoke": 1, "many": 1})


def test_insert_many_names_an_impossible_report_and_its_row(db):
    survey = parse_definition({"slug": "shop", "title": "Shop", "questions": [
        {"id": "shop", "text": "How many apply?", "type": "list", "items": ["I cycle", "I cook"],
         "sensitive": "I shoplifted"}]})
    q = survey.question("shop")
    stored = insert_survey(db, survey, status="open")
    bad = q.k - 1  # arm 0 with a count of J + 1: not a report of a list asked directly
    with pytest.raises(ValueError, match=rf"shop: code {bad} is not a possible report \(row 2\)$"):
        insert_many(db, stored, {"shop": np.array([0, 1, bad, 0])})


def test_a_single_response_that_fits_the_slots_exactly_rebuilds_nothing(db, stored):
    first = {"drug_use": 1, "cheating": 3}
    store_response(db, stored, first)
    reports, design = db.execute("SELECT reports, design FROM responses").fetchone()
    with write_transaction(db):
        slots.rebuild(db.conn, stored.id, room=0, reports_width=len(reports.encode()),
                      design_width=len(design.encode()))
    before = slots.sizes(db.conn, stored.id)
    store_response(db, stored, first)
    assert slots.sizes(db.conn, stored.id) == (before[0], 2, *before[2:])


def test_a_rebuild_doubles_the_slots(db, stored):
    seen = set()
    for i in range(100):
        store_without_growth(db, stored, {"drug_use": i % 2, "cheating": i % 4})
        seen.add(slots.sizes(db.conn, stored.id)[0])
    assert seen == {64, 128, 256}



def test_a_raking_cell_of_one_respondent_who_left_the_question_out_is_kept(tmp_path):
    db = init_db(tmp_path / "d.db")
    survey = parse_definition(WORK)
    stored = insert_survey(db, survey, status="open")
    hours = survey.question("hours")
    store_response(db, stored, {"year": 0, "sex": 0, "hours": hours.qtype.report_of(hours, 3), "many": [1] * 9})
    store_response(db, stored, {"year": 1, "sex": 1})  # alone in its raking cell, neither question answered
    found = raking_sources(db, stored, aggregates.pattern_counts(db, stored).dataset())
    assert weighted_rows(found["hours"][0]) == Counter({(0, 3, 0): 1, (1, -1, 1): 1})
    assert weighted_rows(found["many"][4]) == Counter({(0, 16, 0): 1, (1, -1, 1): 1})
