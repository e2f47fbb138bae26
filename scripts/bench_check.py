"""What the integrity check costs: the start check of ``deniable serve`` and the full ``deniable check``.

    python scripts/bench_check.py --responses 1000000            # the figures in docs/benchmarks.md
    python scripts/bench_check.py --responses 1000000 --scale 10 --no-full  # 10⁷: the start check

Stores ``--responses`` responses to a survey of eight questions (five single choices, two of them
protected, a check-all question of nine options kept outside the answer patterns, and a numeric
question), spread over ``--days`` days, by bulk insert (``insert_many``) into a fresh file; then
times, on that file and in the same run:

- the **floor**: ``SELECT count(*) FROM response_slots`` — one scan of the slots, what any check
  of the responses' number at least reads;
- the **start check** (:func:`deniable.server.store.integrity.repair_quick`, what ``deniable serve``
  runs before it listens): per survey and day the filled slots against the answer patterns, the
  slots' sizes and the single choices' counts against the patterns' — nothing to repair here;
- the **full check** (:func:`deniable.server.store.integrity.check`, ``deniable check``): every
  report read and every aggregate computed again.

Each is run ``--repeat`` times after one warm-up (the file in the page cache, as on a server that
just wrote it); the table gives the median in seconds and its ratio to the floor.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deniable.server.store import integrity  # noqa: E402
from deniable.server.store import slots  # noqa: E402
from deniable.server.store.db import connect, init_db, write_transaction  # noqa: E402
from deniable.server.store.responses import insert_many  # noqa: E402
from deniable.server.store.surveys import insert_survey  # noqa: E402
from deniable.server.survey.definition import parse_definition  # noqa: E402
from deniable.server.survey.simulate import simulate_dataset  # noqa: E402

SURVEY = {"slug": "bench", "title": "Bench", "questions": [
    {"id": "smoke", "text": "S", "options": ["Yes", "No"]},
    {"id": "age", "text": "A", "options": ["18-29", "30-49", "50-64", "65+"]},
    {"id": "drugs", "text": "D", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "cheat", "text": "C", "options": ["Never", "Once", "More"], "epsilon": 2.0, "required": False},
    {"id": "region", "text": "R", "options": ["North", "South", "East"]},
    {"id": "ticks", "text": "T", "type": "multi", "options": list("abcdefghi"), "epsilon": 2.0, "required": False},
    {"id": "drinks", "text": "N", "type": "numeric", "min": 0, "max": 20, "epsilon": 1.0, "required": False},
]}


TRUTH = {"ticks": [0.3, 0.05, 0.1, 0.05, 0.2, 0.4, 0.5, 0.1, 0.6],
         "drinks": {"values": [0, 2, 5, 10, 20], "probabilities": [0.3, 0.3, 0.2, 0.15, 0.05]}}


def build(path: str, n: int, days: int) -> None:
    db = init_db(path)
    stored = insert_survey(db, parse_definition(SURVEY), status="open")
    rng = np.random.default_rng(1)
    truth = {q.id: q.qtype.truth(q, TRUTH.get(q.id) or [1 / q.k] * q.k, q.id) for q in stored.survey.questions}
    per_day = -(-n // days)
    for d in range(days):
        m = min(per_day, n - d * per_day)
        data = simulate_dataset(stored.survey, truth, m, rng)
        insert_many(db, stored, data.columns, submitted_on=f"2026-11-{d + 1:02d}")
        print(f"  stored {min(n, (d + 1) * per_day):,} responses", file=sys.stderr)
    db.conn.close()


def scale(path: str, k: int) -> None:
    """Make the database ``k`` times larger inside SQLite: every slot copied ``k − 1`` times under new
    keys (its key and a suffix), every count, cell, raking cell and answer pattern's count times
    ``k`` — a consistent file in minutes where inserting ``k`` times the responses takes an hour."""
    db = connect(path)
    with write_transaction(db):
        for i in range(1, k):
            db.execute("INSERT INTO response_slots SELECT survey_id, id || ?, filled, submitted_on, reports, design, "
                       "text_version FROM response_slots WHERE length(id) = 16", [f"~{i}"])
        for table in ("counts", "cell_counts", "raking_cells"):
            db.execute(f"UPDATE {table} SET count = count * ?", [k])
        db.execute(f"UPDATE response_slot_sizes SET slots = {slots.OFFSET} + (slots & {slots.MASK}) * ?, "
                   f"filled = {slots.OFFSET} + (filled & {slots.MASK}) * ?", [k, k])
        for sid, day, bucket, entries in db.execute("SELECT * FROM pattern_buckets").fetchall():
            width = len(entries) // slots.ENTRIES
            out = b"".join((int.from_bytes(entries[at:at + 8], "big") * k).to_bytes(8, "big") + entries[at + 8:at + width]
                           for at in range(0, len(entries), width))
            db.execute("UPDATE pattern_buckets SET entries = ? WHERE survey_id = ? AND day = ? AND bucket = ?",
                       [out, sid, day, bucket])
    db.conn.close()


def timed(f, repeat: int) -> float:
    f()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-full", action="store_true", help="skip the full check (minutes at 10⁷)")
    parser.add_argument("--scale", type=int, default=1, metavar="K",
                        help="then make the file K times larger inside SQLite (scale)")
    parser.add_argument("--keep", metavar="FILE", help="build the database in FILE, or reuse FILE if it exists")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or str(Path(tmp) / "bench.db")
        if not Path(path).exists():
            build(path, args.responses, args.days)
            if args.scale > 1:
                scale(path, args.scale)
        db = connect(path)
        floor = timed(lambda: db.execute("SELECT count(*) FROM response_slots").fetchone(), args.repeat)
        rows = [("floor: count the slots", floor)]
        rows.append(("start check (deniable serve)", timed(lambda: integrity.repair_quick(db), args.repeat)))
        assert integrity.repair_quick(db) == ([], [])
        if not args.no_full:
            rows.append(("full check (deniable check)", timed(lambda: integrity.check(db), 1)))
        print(f"{args.responses * args.scale:,} responses over {args.days} days"
              + (f" ({args.responses:,} inserted, then the file made {args.scale} times larger)" if args.scale > 1 else ""))
        print(f"| {'what':<30} | seconds | × floor |\n| {'-' * 30} | ------- | ------- |")
        for what, seconds in rows:
            print(f"| {what:<30} | {seconds:7.3f} | {seconds / floor:7.1f} |")


if __name__ == "__main__":
    main()
