"""Fixtures for the tests of ``deniable serve`` itself: a database with the example survey, open;
enough file descriptors for thousands of connections."""

from __future__ import annotations

import resource
import subprocess

import pytest

from support.real_server import DENIABLE, ROOT


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    result = subprocess.run([*DENIABLE, "import", str(ROOT / "examples" / "survey.json"), "--db",
                             str(folder / "deniable.db"), "--open"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture
def many_files():
    """A soft open-file limit high enough for thousands of sockets here and in the server (its child)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 12_000 if hard == resource.RLIM_INFINITY else min(hard, 12_000)
    if wanted < 6_000:
        pytest.skip(f"the hard open-file limit ({hard}) is too low for thousands of connections")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
