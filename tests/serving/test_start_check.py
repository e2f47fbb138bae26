"""``deniable serve`` checks the aggregates at every start, rebuilds a survey it finds short, and says
so in one line of its log (deniable.server.store.integrity.repair_quick)."""

from __future__ import annotations

import sqlite3
import subprocess

from support.real_server import DENIABLE, ROOT, SLUG, Server


def deniable(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*DENIABLE, *args], capture_output=True, text=True, timeout=300, check=False)


def check_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith("check: ")]


def test_a_short_survey_is_rebuilt_at_start_in_one_line(data):
    db = str(data / "deniable.db")
    assert deniable("simulate", str(ROOT / "examples" / "survey.json"), "--n", "300", "--seed", "3",
                    "--truth", str(ROOT / "examples" / "truth.json"), "--db", db).returncode == 0
    with sqlite3.connect(db) as conn:  # a bucket lost, as single submissions lost them up to 22e6eeb
        conn.execute("UPDATE pattern_buckets SET entries = zeroblob(length(entries)) WHERE bucket = "
                     "(SELECT bucket FROM pattern_buckets WHERE entries != zeroblob(length(entries)) LIMIT 1)")
    assert deniable("check", "--db", db).returncode == 1
    server = Server(data)
    log = server.stop()
    assert len(check_lines(log)) == 1, log
    line = check_lines(log)[0]
    assert line.startswith(f"check: rebuilt the aggregates of 1 survey(s) from their responses ({SLUG}); ") \
        and "answer patterns: 254, responses 300" in line, log
    result = deniable("check", "--db", db)
    assert result.returncode == 0 and "300 responses" in result.stdout, result.stdout


def test_a_sound_database_starts_with_one_line_that_says_so(data):
    log = Server(data).stop()
    assert check_lines(log) == ["check: every survey's aggregates agree with its responses"], log
