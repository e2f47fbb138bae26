"""Storage of reports: validation, one transaction per response, bulk insert and load (exports: test_exports.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deniable.server.store.db import connect
from deniable.server.store.demo import demo_survey
from deniable.server.store.responses import (ReportError, SurveyClosedError, insert_many, load_db_dataset,
                                             validate_reports)
from deniable.server.store.surveys import get_survey, insert_survey, option_counts, set_status, today
from support.store import store_response


def counts_agree_with_rows(db, stored) -> bool:
    dataset = load_db_dataset(db, stored.slug)
    counts = option_counts(db, stored.id)
    return all(np.array_equal(dataset.counts(q.id), counts[q.id]) for q in stored.survey.questions)


@pytest.mark.parametrize("reports, field, fragment", [
    ({"drug_use": 1}, "cheating", "an answer is required"),
    ({"drug_use": 1, "cheating": 0, "bogus": 0}, "bogus", "has no question"),
    ({"drug_use": True, "cheating": 0}, "drug_use", "got true"),
    ({"drug_use": 1.0, "cheating": 0}, "drug_use", "got 1.0"),
    ({"drug_use": "1", "cheating": 0}, "drug_use", 'got "1"'),
    ({"drug_use": None, "cheating": 0}, "drug_use", "got null"),
    ({"drug_use": 2, "cheating": 0}, "drug_use", "0..1, got 2"),
    ({"drug_use": -1, "cheating": 0}, "drug_use", "0..1, got -1"),
    ({"drug_use": 1, "cheating": 10**100}, "cheating", "out of range"),
    ([1, 0], "reports", "must be an object"),
])
def test_validate_reports_names_the_question(stored, reports, field, fragment):
    with pytest.raises(ReportError) as info:
        validate_reports(stored, reports)
    assert info.value.field == field
    assert fragment in str(info.value)
    assert str(info.value).startswith(field)


def test_store_response_writes_exactly_the_reports_and_counts(db, stored):
    response_id = store_response(db, stored, {"cheating": 3, "drug_use": 1})
    row = dict(zip(("reports", "design", "submitted_on"), db.execute(
        "SELECT reports, design, submitted_on FROM responses WHERE id = ?", [response_id]).fetchone()))
    assert json.loads(row["reports"]) == {"drug_use": 1, "cheating": 3}  # optional age_group absent
    design = json.loads(row["design"])
    assert design == {"drug_use": [2, stored.survey.question("drug_use").mechanism.threshold],
                      "cheating": [4, stored.survey.question("cheating").mechanism.threshold]}
    assert row["submitted_on"] == today()
    counts = option_counts(db, stored.id)
    assert counts["drug_use"].tolist() == [0, 1]
    assert counts["cheating"].tolist() == [0, 0, 0, 1]
    assert counts["age_group"].tolist() == [0, 0, 0, 0]
    store_response(db, stored, {"drug_use": 0, "cheating": 3, "age_group": 2})
    assert counts_agree_with_rows(db, stored)


def test_store_response_refuses_a_survey_closed_meanwhile(db, stored):
    set_status(db, stored.slug, "closed")  # `stored` still says open: the transaction re-checks
    with pytest.raises(SurveyClosedError):
        store_response(db, stored, {"drug_use": 0, "cheating": 0})
    assert db["responses"].count == 0
    assert sum(c.sum() for c in option_counts(db, stored.id).values()) == 0


def test_store_response_refuses_a_draft(db):
    draft = insert_survey(db, demo_survey())
    with pytest.raises(SurveyClosedError, match="draft"):
        store_response(db, draft, {"drug_use": 0, "cheating": 0})


def test_load_db_dataset_unknown_slug(db):
    with pytest.raises(LookupError, match="no survey 'nope'"):
        load_db_dataset(db, "nope")


def test_insert_many_then_load_round_trips(db, stored):
    rng = np.random.default_rng(7)
    n = 12_345
    columns = {"drug_use": rng.integers(0, 2, n), "cheating": rng.integers(0, 4, n),
               "age_group": rng.integers(-1, 4, n)}
    seen = []
    assert insert_many(db, stored, columns, batch_size=5_000, progress=lambda d, t: seen.append((d, t))) == n
    assert seen == [(5_000, n), (10_000, n), (n, n)]
    dataset = load_db_dataset(db, stored.slug)
    # The same responses, in an order that is not the order of insertion (random keys).
    ids = list(columns)
    rows_in = sorted(zip(*(columns[q].tolist() for q in ids)))
    rows_out = list(zip(*(dataset.columns[q].tolist() for q in ids)))
    assert sorted(rows_out) == rows_in and rows_out != list(zip(*(columns[q].tolist() for q in ids)))
    assert counts_agree_with_rows(db, stored)
    row = next(iter(db["responses"].rows))
    assert json.loads(row["design"])["drug_use"] == [2, stored.survey.question("drug_use").mechanism.threshold]
    unanswered = [r for r in db["responses"].rows if "age_group" not in json.loads(r["reports"])]
    assert len(unanswered) == int((columns["age_group"] == -1).sum())


@pytest.mark.parametrize("columns, message", [
    ({"drug_use": np.array([0, 2]), "cheating": np.array([0, 0])}, "drug_use: must be option indices -1..1"),
    ({"drug_use": np.array([0, -1]), "cheating": np.array([0, 0])}, "drug_use: required question not answered"),
    ({"drug_use": np.array([0, 1]), "cheating": np.array([0])}, "same length"),
    ({"drug_use": np.array([0.0, 1.0]), "cheating": np.array([0, 0])}, "integer"),
    ({"drug_use": np.array([0, 1]), "cheating": np.array([0, 0]), "x": np.array([0, 0])}, "x: survey"),
    ({"drug_use": np.array([0, 1])}, "cheating: required question has no column"),
])
def test_insert_many_rejects_bad_columns(db, stored, columns, message):
    with pytest.raises(ValueError, match=message):
        insert_many(db, stored, columns)
    assert db["responses"].count == 0


def test_load_db_dataset_reads_a_readonly_connection(db, stored, db_path):
    store_response(db, stored, {"drug_use": 1, "cheating": 2})
    readonly = connect(db_path, readonly=True)
    try:
        assert load_db_dataset(readonly, "demo").columns["cheating"].tolist() == [2]
        assert get_survey(readonly, "demo").status == "open"
    finally:
        readonly.conn.close()


def test_insert_many_follows_the_display_logic(db):
    """A required question hidden by display logic is not asked, so not required, in a bulk insert as in a
    submission (validate_reports): its rows are -1 where it was hidden; an answer there is refused, and
    so is a blank where it was asked.  22e6eeb refused the hidden blanks (simulate --db ended in a traceback)."""
    from deniable.server.survey.definition import parse_definition

    stored = insert_survey(db, parse_definition({"slug": "branch", "title": "B", "questions": [
        {"id": "smoke", "text": "S", "options": ["Yes", "No"]},
        {"id": "daily", "text": "D", "options": ["Yes", "No"], "epsilon": 1.0,
         "show_if": {"question": "smoke", "in": ["Yes"]}}]}), status="open")
    assert insert_many(db, stored, {"smoke": np.array([0, 1, 1, 0]), "daily": np.array([1, -1, -1, 0])}) == 4
    assert load_db_dataset(db, "branch").counts("daily").tolist() == [1, 1]
    with pytest.raises(ValueError, match=r"daily: answered in row 1, which was not asked"):
        insert_many(db, stored, {"smoke": np.array([0, 1]), "daily": np.array([1, 0])})
    with pytest.raises(ValueError, match=r"daily: required question not answered in row 1"):
        insert_many(db, stored, {"smoke": np.array([0, 0]), "daily": np.array([1, -1])})
    assert load_db_dataset(db, "branch").n_responses == 4
