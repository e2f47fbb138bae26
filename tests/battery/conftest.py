"""Fixtures of the battery: the every-type survey stored in the test app's database, with responses."""

from __future__ import annotations

import pytest

from support import rating
from support.battery import battery_survey
from support.dashboard import ensure_researcher


@pytest.fixture(autouse=True)
def fifth_type():
    """Every battery test runs with the test-only rating scale registered beside the built-in types."""
    with rating.registered() as qtype:
        yield qtype


@pytest.fixture
def owner_id(app, researcher):
    """The id of the logged-in researcher (``auth_client``)."""
    return ensure_researcher(app)


@pytest.fixture
def battery(db_path, owner_id):
    """The battery's survey, open, with 600 simulated respondents, owned by the logged-in researcher."""
    return battery_survey(db_path, owner_id=owner_id)
