"""SIGKILL the real server under load, several times: no acknowledged submission is lost or doubled,
and the WAL and -shm keep at most the batch each worker had in flight.

Each submission carries a unique number spelled by three direct questions with 64 options each
(no identifier is added to the product), so every acknowledged (2xx) submission can be found
in the database afterwards: it must be there exactly once.  Submissions cut off by the kill
(no answer) may be stored at most once.  The counts must agree with the rows and
``PRAGMA integrity_check`` must say ok.

After each kill the files are read as an attacker holding a copy would (tests/support/forensics.py):
the -shm's index lists no page beyond the frames the WAL file holds (but the ``scrub`` table's own
page, which a finished scrub leaves listed; frames of any generation count: a restart rewrites the
WAL's header, and syncs it, before it overwrites the frames the -shm still lists).  After each
start, before any submission, the WAL holds no response at all (the start-up scrub runs before the
server listens).

The WAL's commits are also replayed over the database, and the age of the oldest response they add
(from its sending to the kill) is printed, not asserted: it is a time, set by the machine's load,
and at this load SQLite's automatic checkpoints restart the WAL about as often as the scrubber does
(0.16-0.24 s in one run with ``DENIABLE_SCRUB_SECONDS=0``; 0.04-0.20 s at the default, beside the
rest of the suite), so no bound on it here would tell a working scrubber from none.  Where only the scrubber
empties the WAL, at low load, ``tests/e2e/test_attacks.py`` tests it, with and without it.
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from loadgen import ServerProcess, drive, run_deniable  # noqa: E402
from support.forensics import added_by_commits, copied, frames_held, shm_pages  # noqa: E402

pytestmark = pytest.mark.slow

DIGITS = ("a", "b", "c")  # 64³ = 262,144 distinct submissions
DEFINITION = {
    "slug": "crash", "title": "Crash test", "description": "",
    "questions": [
        {"id": "secret", "text": "Protected?", "options": ["Yes", "No"], "epsilon": 1.0},
        *({"id": d, "text": f"Digit {d}", "options": [f"o{i}" for i in range(64)]} for d in DIGITS),
    ],
}
KILLS = 4
WORKERS = 2


def crash_leftovers(db: Path, scrub_page: int) -> tuple[list[set], int, list[int]]:
    """What the files hold: per WAL commit the reports it added, the frames the WAL file holds (of
    any generation, committed or not) and the pages the -shm lists, but for the ``scrub`` table's own
    page, which a finished scrub leaves listed (it tells nothing; ``server/store/scrub.py``)."""
    main, wal, shm = copied(db)
    listed = [page for page in shm_pages(shm) if page != scrub_page]
    return added_by_commits(main, wal, "SELECT reports FROM responses"), frames_held(wal), listed


def report_for(number: int) -> dict:
    return {"secret": number % 2, "a": number // 4096, "b": number // 64 % 64, "c": number % 64}


def number_of(reports: dict) -> int:
    return reports["a"] * 4096 + reports["b"] * 64 + reports["c"]


def test_sigkill_under_load_loses_and_doubles_nothing(tmp_path):
    db = tmp_path / "crash.db"
    definition = tmp_path / "crash.json"
    definition.write_text(json.dumps(DEFINITION))
    run_deniable("import", str(definition), "--db", str(db), "--open")
    conn = sqlite3.connect(db)
    scrub_page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'scrub'").fetchone()[0]
    conn.close()
    numbers, sent = iter(range(64 ** 3)), {}

    def next_report():
        number = next(numbers, None)
        sent[number] = time.monotonic()
        return None if number is None else report_for(number)

    acked, unanswered, rng, in_flight = [], [], random.Random(7), []
    for _ in range(KILLS):
        server = ServerProcess(db, workers=WORKERS, log=tmp_path / "server.log")
        server.start("/api/v1/surveys/crash")
        if acked:  # after a crash: the start-up scrub ran before the server answered
            added, frames, listed = crash_leftovers(db, scrub_page)
            assert all(a == set() for a in added) and len(listed) <= frames, (added, frames, listed)
        results = {}
        load = threading.Thread(target=lambda: results.update(
            tally=drive(server.port, "crash", next_report, clients=16, seconds=4.0)[0]))
        load.start()
        time.sleep(rng.uniform(0.8, 2.5))
        server.kill()
        killed = time.monotonic()
        load.join()
        added, frames, listed = crash_leftovers(db, scrub_page)
        ages = [killed - sent[number_of(json.loads(r))] for responses in added if responses for r in responses]
        in_flight.append((sum(1 for responses in added if responses), round(max(ages, default=0), 2)))
        assert len(listed) <= frames, f"the -shm lists {len(listed)} pages for a WAL of {frames} frames"
        tally = results["tally"]
        assert tally.acked, "the server acknowledged nothing before the kill"
        assert not tally.statuses, f"refusals under load: {tally.statuses}"
        acked += tally.acked
        unanswered += tally.unanswered

    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = Counter(number_of(json.loads(r)) for (r,) in conn.execute("SELECT reports FROM responses"))
        counts = {(qid, option): count for qid, option, count in conn.execute("SELECT qid, option, count FROM counts")}
        rows = [json.loads(r) for (r,) in conn.execute("SELECT reports FROM responses")]
    finally:
        conn.close()

    acked_numbers = [number_of(r) for r in acked]
    assert len(set(acked_numbers)) == len(acked_numbers)
    assert [n for n in acked_numbers if stored[n] != 1] == [], "acknowledged submissions lost or doubled"
    sent = set(acked_numbers) | {number_of(r) for r in unanswered}
    unexpected = [n for n, c in stored.items() if c > 1 or n not in sent]
    assert unexpected == [], "rows that no client sent, or stored twice"
    from_rows = Counter((qid, option) for r in rows for qid, option in r.items())
    assert counts == {key: from_rows.get(key, 0) for key in counts}
    assert sum(from_rows.values()) == sum(counts.values())
    print("after each kill, the WAL's commits that add responses and the oldest one's age (s):", in_flight)
