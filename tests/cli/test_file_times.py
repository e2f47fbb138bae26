"""The database's file times show the server's timer, not when anything was written (a real gunicorn)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deniable.client.submit import submit
from support.serving import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parents[2]
DENIABLE = [sys.executable, "-c", "from deniable.server.cli import cli; cli()"]

pytestmark = pytest.mark.slow


def times(db_path: Path) -> list[tuple[int, int]]:
    return [(os.stat(p).st_mtime_ns, os.stat(p).st_ctime_ns)
            for p in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm"))]


def one_tick(db_path: Path) -> list[tuple[int, int]]:
    """The files' times once no touch is half done: a tick sets the three files one after another,
    and a read can fall between two of them (or between the master's and the worker's scrubbers,
    which tick at their own moments); a tick takes microseconds, the interval 0.3 s."""
    for _ in range(20):
        snapshot = times(db_path)
        if len({mtime for mtime, _ in snapshot}) == 1:
            return snapshot
        time.sleep(0.05)
    return snapshot


def test_the_files_are_touched_on_a_timer_whether_or_not_anything_was_written(tmp_path):
    db_path = tmp_path / "deniable.db"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DENIABLE_")}
    env.update(PYTHONPATH=str(ROOT), DENIABLE_SCRUB_SECONDS="0.3")
    server = subprocess.Popen(DENIABLE + ["serve", "--port", str(port), "--workers", "1", "--demo", "--db", str(db_path)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_serving(f"{base}/s/demo", server, why=lambda: server.communicate()[1])
        for _ in range(50):  # the -wal and -shm exist once a connection is open
            if Path(f"{db_path}-wal").exists() and Path(f"{db_path}-shm").exists():
                break
            time.sleep(0.1)
        first = times(db_path)
        time.sleep(1.0)  # nothing written: the times still move, all three to one moment
        idle = one_tick(db_path)
        assert all(later[0] > earlier[0] for later, earlier in zip(idle, first)), (first, idle)
        submit(base, "demo", {"drug_use": 1, "cheating": 2})
        written = time.time_ns()
        time.sleep(1.0)  # a write, then a tick: its moment is gone from every file time
        after = one_tick(db_path)
    finally:
        server.terminate()
        server.communicate(timeout=30)
    for snapshot in (idle, after):
        assert len({mtime for mtime, _ in snapshot}) == 1, snapshot  # the same nanosecond: one tick
    mtime = after[0][0]
    assert mtime > written + 50_000_000  # a tick after the write, not the write
    assert all(ctime > written + 50_000_000 for _, ctime in after)  # the touch moved the change time too
