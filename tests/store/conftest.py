"""Fixtures of the store tests: a database handle on the test's real SQLite file, and the demo survey in it."""

from __future__ import annotations

import pytest

from deniable.server.store.db import init_db
from deniable.server.store.demo import demo_survey
from deniable.server.store.surveys import insert_survey


@pytest.fixture
def db(migrated_db):
    handle = init_db(migrated_db)  # a copy of the migrated empty database (tests/conftest.py)
    yield handle
    handle.conn.close()


@pytest.fixture
def stored(db):
    """The demo survey, open."""
    return insert_survey(db, demo_survey(), status="open")
