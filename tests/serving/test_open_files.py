"""``deniable serve`` raises its soft open-file limit to fit ``--connections`` (its workers inherit
it), and when the hard limit is lower it says so and takes fewer connections: a worker out of file
descriptors would fail to accept, with a traceback (and a time) in the log."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

SCRIPT = """
import resource
from deniable.server.cli.serve import _open_files_for
resource.setrlimit(resource.RLIMIT_NOFILE, (100, {hard}))
print(_open_files_for({connections}), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


@pytest.mark.parametrize("hard,connections,expected", [
    (4096, 1000, "1000 1064"),  # raised to fit, with room for the database files and the log
    (512, 4000, "448 512"),  # raised to the hard limit, and fewer connections
])
def test_the_open_file_limit_is_raised_to_fit_the_connections(hard, connections, expected):
    here = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if here != resource.RLIM_INFINITY and here < hard:
        pytest.skip("this machine's hard open-file limit is lower than the test's")
    result = subprocess.run([sys.executable, "-c", SCRIPT.format(hard=hard, connections=connections)],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == expected.split()
    assert ("open-file limit (512) allows 448 connections per worker" in result.stderr) == (hard == 512)
