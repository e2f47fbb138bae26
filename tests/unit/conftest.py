"""Fixtures of the unit tests."""

import pytest
from support.plan_cache import forget


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """The planner with an empty cache directory and empty in-memory caches: every number is computed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    forget()
    yield tmp_path
    forget()
