"""The release budget and its ledger, in the store and in the database itself; answer patterns."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from deniable.server.store import releases
from deniable.server.store.aggregates import pattern_counts
from deniable.server.store.responses import insert_many, load_db_dataset
from deniable.server.survey.patterns import from_dataset, n_responses, option_counts


def document(epsilons=(1.0,)):
    items = [{"kind": "counts", "question": "age_group", "mechanism": "geometric", "epsilon": e,
              "realized_epsilon": e - 1e-9, "sensitivity": 2, "what": "counts of age_group"} for e in epsilons]
    return {"released_on": "2026-01-05", "n": 0, "items": items, "protected": {}}


def entries(doc):
    return [{k: item[k] for k in ("mechanism", "epsilon", "realized_epsilon", "sensitivity", "what")}
            for item in doc["items"]]


def release(db, stored, *epsilons):
    doc = document(epsilons)
    return releases.record_release(db, stored, doc, entries(doc))


def test_a_release_needs_a_budget_and_is_refused_beyond_it(db, stored):
    with pytest.raises(releases.BudgetError, match="set a release budget first"):
        release(db, stored, 1.0)
    releases.set_budget(db, stored, 2.0)
    release(db, stored, 0.5, 1.0)
    with pytest.raises(releases.BudgetError, match=r"costs ε = 1, but only 0.5 of the budget of 2 is left"):
        release(db, stored, 1.0)
    release(db, stored, 0.5)  # exactly what is left
    state = releases.budget(db, stored.id)
    assert (state.epsilon, state.spent, state.releases, state.public) == (2.0, 2.0, 2, True)
    assert [row["epsilon"] for row in releases.ledger(db, stored.id)] == [0.5, 1.0, 0.5]
    assert db.execute("SELECT count(*) FROM releases").fetchone()[0] == 2  # the refused one stored nothing


def test_the_budget_is_fixed_once_something_is_released(db, stored):
    releases.set_budget(db, stored, 2.0)
    releases.set_budget(db, stored, 3.0)  # still free to change
    release(db, stored, 1.0)
    with pytest.raises(releases.BudgetError, match="fixed once something has been released"):
        releases.set_budget(db, stored, 10.0)
    for bad in (0.0, -1.0, float("nan"), float("inf"), 101.0):
        with pytest.raises(releases.BudgetError, match="budget: must be"):
            releases.set_budget(db, stored, bad)


def test_the_database_refuses_overspending_and_changes_to_the_ledger(db, stored):
    releases.set_budget(db, stored, 1.0)
    release(db, stored, 1.0)
    release_id = db.execute("SELECT id FROM releases").fetchone()[0]
    with pytest.raises(sqlite3.IntegrityError, match="exceed the survey's release budget"):
        db.execute("INSERT INTO release_ledger (survey_id, release_id, mechanism, epsilon, realized_epsilon, "
                   "sensitivity, what) VALUES (?, ?, 'geometric', 0.1, 0.1, 2, 'more')", [stored.id, release_id])
    for statement in ("UPDATE release_ledger SET epsilon = 0.1", "DELETE FROM release_ledger",
                      "UPDATE releases SET document = '{}'", "DELETE FROM releases",
                      "UPDATE release_budgets SET epsilon = 50"):
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(statement)
    db.execute("UPDATE release_budgets SET public = 0")  # withdrawing is allowed
    assert releases.public_release(db, stored.id) is None and releases.latest_release(db, stored.id) is not None


def test_public_toggle_needs_a_release(db, stored):
    releases.set_budget(db, stored, 1.0)
    with pytest.raises(releases.BudgetError, match="nothing has been released"):
        releases.set_public(db, stored, True)
    release(db, stored, 0.5)
    releases.set_public(db, stored, False)
    assert releases.public_release(db, stored.id) is None
    releases.set_public(db, stored, True)
    assert releases.public_release(db, stored.id)["items"][0]["epsilon"] == 0.5


def test_pattern_counts_agree_with_the_rows(db, stored):
    rng = np.random.default_rng(0)
    insert_many(db, stored, {"drug_use": rng.integers(0, 2, 500), "cheating": rng.integers(0, 4, 500),
                             "age_group": rng.integers(-1, 4, 500)}, submitted_on="2026-01-01")
    insert_many(db, stored, {"drug_use": rng.integers(0, 2, 300), "cheating": rng.integers(0, 4, 300)},
                submitted_on="2026-01-02")
    patterns = pattern_counts(db, stored)
    rows = from_dataset(load_db_dataset(db, stored.slug))  # independent: one row per response
    assert n_responses(patterns) == n_responses(rows) == 800
    assert set(patterns.days) == {"2026-01-01", "2026-01-02"}
    for q in stored.survey.questions:
        np.testing.assert_array_equal(option_counts(patterns, q.id), option_counts(rows, q.id))
    second = patterns.days == "2026-01-02"
    assert patterns.counts[second].sum() == 300 and np.all(patterns.columns["age_group"][second] == -1)
