"""Databases written by earlier deniables (tests/data/compat*.db, each made by scripts/make_compat_db.py
with the revision named in the .json beside it: compat.db before migrations m11 and m12, under the
migrations' old names; compat-7ad577a.db by the last revision with the old names) open unchanged with
today's code: the same definitions and design fingerprints, and the same estimates, for surveys of
every question type."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from deniable.server.store.db import init_db
from deniable.server.store.responses import load_db_dataset
from deniable.server.store.surveys import get_survey, survey_stats
from deniable.server.survey.definition import design_fingerprint
from deniable.server.survey.estimates import Estimates, survey_estimates

DATA = Path(__file__).parents[1] / "data"
FIXTURES = sorted(p.stem for p in DATA.glob("compat*.json"))  # each with its .db
assert {"compat", "compat-7ad577a"} <= set(FIXTURES), FIXTURES
GOLDEN = {name: json.loads((DATA / f"{name}.json").read_text(encoding="utf-8")) for name in FIXTURES}
CASES = [(name, slug) for name in FIXTURES for slug in sorted(GOLDEN[name]["surveys"])]


def contains(found, expected, where="") -> None:
    """``found`` holds everything ``expected`` holds (new keys, such as headlines, may be added)."""
    if isinstance(expected, dict):
        assert isinstance(found, dict), where
        for key, value in expected.items():
            assert key in found, f"{where}.{key} is gone"
            contains(found[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(found, list) and len(found) == len(expected), where
        for i, (a, b) in enumerate(zip(found, expected)):
            contains(a, b, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert found == pytest.approx(expected, rel=1e-12, abs=1e-15), where
    else:
        assert found == expected, where


@pytest.fixture
def old_db(tmp_path, name):
    """A copy of the fixture database ``name`` (the test's parameter), opened by today's code."""
    path = tmp_path / f"{name}.db"
    shutil.copy(DATA / f"{name}.db", path)
    db = init_db(str(path))  # applies whatever migrations today's code adds
    yield db
    db.conn.close()


@pytest.mark.parametrize(("name", "slug"), CASES)
def test_an_earlier_database_opens_unchanged(old_db, name, slug):
    golden = GOLDEN[name]["surveys"][slug]
    stored = get_survey(old_db, slug)
    assert stored.survey.to_dict() == golden["definition"]
    assert design_fingerprint(stored.survey) == golden["fingerprint"]
    n = golden["estimates"]["n_responses"]
    from_counts = Estimates(stored.survey, n, survey_estimates(stored.survey, survey_stats(old_db, stored))).to_dict()
    contains(from_counts, golden["estimates"], slug)
    rows = load_db_dataset(old_db, slug)
    assert rows.n_responses == n
    contains(Estimates(stored.survey, n, survey_estimates(stored.survey, rows.all_stats())).to_dict(), golden["estimates"], slug)


@pytest.mark.parametrize("name", FIXTURES)
def test_the_earlier_database_has_every_question_type(name):
    from deniable.server.survey import questions

    found = {q.get("type", questions.DEFAULT) for s in GOLDEN[name]["surveys"].values()
             for q in s["definition"]["questions"]}
    assert found == {"choice", "numeric", "multi", "list"} and found <= set(questions.names())
