"""The raking cells: the statistics of the questions the answer patterns leave out, per raking cell (m17).

Each test counts the stored responses again, one by one in Python, and compares: after submissions
one at a time and in bulk, and in a database made before the raking cells existed, upgraded (whose
cells are made from its responses the first time a view asks).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import numpy as np

from deniable.server.store import aggregates
from deniable.server.store.db import init_db
from deniable.server.store.responses import insert_many, load_db_dataset, raking_cells_of
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition
from support.store import store_response

DATA = Path(__file__).parents[1] / "data"
SURVEY = {"slug": "work", "title": "Work", "questions": [
    {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"], "required": False},
    {"id": "hours", "text": "Hours?", "type": "numeric", "min": 0, "max": 10, "step": 0.5, "epsilon": 2.0,
     "mechanism": "laplace", "required": False},
    {"id": "many", "text": "Which?", "type": "multi", "options": [f"Thing {i}" for i in range(9)], "epsilon": 3.0,
     "required": False},
    {"id": "sex", "text": "Sex?", "options": ["Female", "Male"]},
]}


def recount(survey, columns) -> dict:
    """The raking cells counted from each response's codes: Laplace codes, and a check-all question's
    ticks per option and the number of its ticks (``raking_cells``' form, counts above zero)."""
    raking = aggregates.raking_questions(survey)
    found: dict = {}
    n = len(next(iter(columns.values())))
    for i in range(n):
        cell = ",".join(str(int(columns[q.id][i])) for q in raking)
        for q in aggregates.outside_patterns(survey):
            code = int(columns[q.id][i])
            if code < 0:
                continue
            stats = found.setdefault(q.id, {}).setdefault(cell, {})
            if q.type == "multi":
                ticks = [j for j in range(q.k) if code >> j & 1]
                for j in ticks:
                    stats.setdefault("tick", Counter())[j] += 1
                stats.setdefault("ticked", Counter())[len(ticks)] += 1
            else:
                stats.setdefault("cell", Counter())[code] += 1
    return {qid: {cell: {stat: sorted(counter.items()) for stat, counter in stats.items()}
                  for cell, stats in cells.items()} for qid, cells in found.items()}


def stored(db, stored_survey) -> dict:
    return {qid: {cell: {stat: sorted(pairs) for stat, pairs in stats.items()} for cell, stats in cells.items()}
            for qid, cells in raking_cells_of(db, stored_survey).items()}


def test_the_raking_cells_count_every_response_one_at_a_time_and_in_bulk(tmp_path):
    db = init_db(tmp_path / "d.db")
    survey = parse_definition(SURVEY)
    assert [q.id for q in aggregates.raking_questions(survey)] == ["year", "sex"]
    assert [q.id for q in aggregates.outside_patterns(survey)] == ["hours", "many"]
    s = insert_survey(db, survey, status="open")
    rng = np.random.default_rng(7)
    n_hours = survey.question("hours").qtype.n_cells(survey.question("hours"))
    columns = {"year": rng.integers(-1, 3, 400), "hours": rng.integers(-1, n_hours, 400),
               "many": rng.integers(-1, 1 << 9, 400), "sex": rng.integers(0, 2, 400)}
    insert_many(db, s, columns)
    for _ in range(40):
        reports = {"sex": int(rng.integers(0, 2))}
        if rng.random() < 0.8:
            reports["year"] = int(rng.integers(0, 3))
        if rng.random() < 0.8:
            reports["hours"] = survey.question("hours").qtype.report_of(survey.question("hours"),
                                                                        int(rng.integers(0, n_hours)))
        if rng.random() < 0.8:
            reports["many"] = [int(b) for b in rng.integers(0, 2, 9)]
        store_response(db, s, reports)
    assert db.execute("SELECT raking_cells_due FROM surveys").fetchone()[0] == 0  # a new survey keeps them from the start
    dataset = load_db_dataset(db, "work")
    assert stored(db, s) == recount(survey, dataset.columns)
    # every code of a raking cell has its row from the first response in it on (counts overwritten in place)
    rows = db.execute("SELECT count(*) FROM raking_cells WHERE qid = 'hours'").fetchone()[0]
    cells = {",".join(map(str, key)) for key in zip(dataset.columns["year"].tolist(), dataset.columns["sex"].tolist())}
    assert rows == len(cells) * n_hours


def test_a_survey_without_a_question_asked_directly_keeps_no_raking_cells(tmp_path):
    db = init_db(tmp_path / "d.db")
    survey = parse_definition({**SURVEY, "questions": SURVEY["questions"][1:3]})
    s = insert_survey(db, survey, status="open")
    store_response(db, s, {"many": [1] * 9})
    assert aggregates.outside_patterns(survey) == ()
    assert db.execute("SELECT count(*) FROM raking_cells").fetchone()[0] == 0
    assert raking_cells_of(db, s) == {}


def test_an_upgraded_database_makes_its_raking_cells_from_its_responses_once(tmp_path):
    path = tmp_path / "old.db"
    shutil.copy(DATA / "compat-7ad577a.db", path)
    db = init_db(path)  # upgraded: every survey's raking cells are due
    slugs = [slug for (slug,) in db.execute("SELECT slug FROM surveys WHERE raking_cells_due = 1")]
    assert slugs and db.execute("SELECT count(*) FROM raking_cells").fetchone()[0] == 0
    made = 0
    for slug in slugs:
        s = get_survey(db, slug)
        expected = recount(s.survey, load_db_dataset(db, slug).columns)
        assert stored(db, s) == expected
        made += bool(expected)
        assert db.execute("SELECT raking_cells_due FROM surveys WHERE slug = ?", [slug]).fetchone()[0] == 0
        if s.status == "open" and aggregates.outside_patterns(s.survey):  # a new response adds to the made cells
            store_response(db, s, {r.id: r.qtype.report_of(r, 0) for r in s.survey.questions})
            assert stored(db, s) == recount(s.survey, load_db_dataset(db, slug).columns)
    assert made, "the compat database has a Laplace question beside a question asked directly"
