"""SIGKILL the real server under load, several times: no acknowledged submission is lost or doubled.

Each submission carries a unique number spelled by three direct questions with 64 options each
(no identifier is added to the product), so every acknowledged (2xx) submission can be found
in the database afterwards: it must be there exactly once.  Submissions cut off by the kill
(no answer) may be stored at most once.  The counts must agree with the rows and
``PRAGMA integrity_check`` must say ok.
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


def report_for(number: int) -> dict:
    return {"secret": number % 2, "a": number // 4096, "b": number // 64 % 64, "c": number % 64}


def number_of(reports: dict) -> int:
    return reports["a"] * 4096 + reports["b"] * 64 + reports["c"]


def test_sigkill_under_load_loses_and_doubles_nothing(tmp_path):
    db = tmp_path / "crash.db"
    definition = tmp_path / "crash.json"
    definition.write_text(json.dumps(DEFINITION))
    run_deniable("import", str(definition), "--db", str(db), "--open")
    numbers = iter(range(64 ** 3))

    def next_report():
        number = next(numbers, None)
        return None if number is None else report_for(number)

    acked, unanswered, rng = [], [], random.Random(7)
    for _ in range(KILLS):
        server = ServerProcess(db, workers=2, log=tmp_path / "server.log")
        server.start("/api/v1/surveys/crash")
        results = {}
        load = threading.Thread(target=lambda: results.update(
            tally=drive(server.port, "crash", next_report, clients=16, seconds=4.0)[0]))
        load.start()
        time.sleep(rng.uniform(0.8, 2.5))
        server.kill()
        load.join()
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
