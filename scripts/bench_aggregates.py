"""What the grouped views' aggregates cost on the submission path, and what they save on reads.

    python scripts/bench_aggregates.py              # 20 questions × 4 options, 3,000 inserts, 100,000 rows

For a survey of ``--questions`` questions, on a fresh SQLite file with the app's schema, it times
the submission transaction three ways (each one ``BEGIN IMMEDIATE`` … ``COMMIT`` per response,
as ``insert_validated`` does):

- **rows + counts**: the response row and one counts update per question (what the results page
  needs);
- **+ answer pattern** (what the app does): one more upsert, of the whole answer vector;
- **+ pair counts** (the alternative): an upsert per pair of questions (190 for 20 questions).

Then, with ``--rows`` responses stored, it times a cross-tab of two questions read three ways:
from the answer patterns (``aggregates.pattern_counts``), from the pair counts, and by scanning
the rows with ``json_extract`` (what the views did before).  Prints a table.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deniable.server.store import aggregates  # noqa: E402
from deniable.server.store.db import init_db, write_transaction  # noqa: E402
from deniable.server.store.responses import _compact, design_of, insert_many, load_db_dataset, new_response_id  # noqa: E402
from deniable.server.store.surveys import insert_survey, today  # noqa: E402
from deniable.server.survey.definition import parse_definition  # noqa: E402


def survey_of(m: int, k: int):
    return parse_definition({"slug": "wide", "title": "Wide", "questions": [
        {"id": f"q{i}", "text": f"Q{i}", "options": [f"o{j}" for j in range(k)],
         **({"epsilon": 1.0} if i % 2 == 0 else {})} for i in range(m)]})


def submit(db, stored, reports: dict, *, patterns: bool, pairs: bool) -> None:
    survey, day = stored.survey, today()
    with write_transaction(db):
        db.execute("INSERT INTO responses (id, survey_id, submitted_on, reports, design) VALUES (?, ?, ?, ?, ?)",
                   [new_response_id(), stored.id, day, _compact(reports), _compact(design_of(survey))])
        db.conn.executemany("UPDATE counts SET count = count + 1 WHERE survey_id = ? AND qid = ? AND option = ?",
                            [(stored.id, qid, option) for qid, option in reports.items()])
        if patterns:
            db.execute(aggregates.UPSERT, [stored.id, day, aggregates.encode(survey, reports), 1])
        if pairs:
            ids = list(reports)
            db.conn.executemany(
                "INSERT INTO pair_counts VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1",
                [(stored.id, a, reports[a], b, reports[b]) for a, b in itertools.combinations(ids, 2)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--options", type=int, default=4)
    parser.add_argument("--inserts", type=int, default=3000)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    survey = survey_of(args.questions, args.options)
    rng = np.random.default_rng(1)
    print(f"deniable aggregates benchmark — {os.cpu_count()} CPUs, {args.questions} questions × {args.options} options")
    print("\nsubmission transaction (one response each; median of 3 runs of", f"{args.inserts:,})")
    print(f"{'write path':<34} {'µs per submission':>18}")
    for name, patterns, pairs in (("rows + counts", False, False), ("+ answer pattern (the app)", True, False),
                                  (f"+ pair counts ({args.questions * (args.questions - 1) // 2} pairs)", False, True)):
        runs = []
        for _ in range(3):
            with tempfile.TemporaryDirectory() as tmp:
                db = init_db(Path(tmp) / "bench.db")
                db.execute("CREATE TABLE pair_counts (survey_id, qa, a, qb, b, count, PRIMARY KEY (survey_id, qa, a, qb, b))"
                           " WITHOUT ROWID")
                stored = insert_survey(db, survey, status="open")
                answers = rng.integers(0, args.options, (args.inserts, args.questions))
                started = time.perf_counter()
                for row in answers:
                    submit(db, stored, {f"q{i}": int(v) for i, v in enumerate(row)}, patterns=patterns, pairs=pairs)
                runs.append((time.perf_counter() - started) / args.inserts)
                db.conn.close()
        print(f"{name:<34} {1e6 * statistics.median(runs):>18,.0f}")

    print(f"\ncross-tab q0 × q1 with {args.rows:,} responses stored (median of 5 reads)")
    print(f"{'read':<34} {'ms':>8} {'rows read':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        db = init_db(Path(tmp) / "bench.db")
        stored = insert_survey(db, survey, status="open")
        columns = {f"q{i}": rng.integers(0, args.options, args.rows) for i in range(args.questions)}
        insert_many(db, stored, columns)
        db.execute("CREATE TABLE pair_counts AS SELECT 0 AS qa, 0 AS qb, 0 AS a, 0 AS b, 0 AS count LIMIT 0")
        joint = load_db_dataset(db, "wide").joint_counts("q0", "q1")
        db.conn.executemany("INSERT INTO pair_counts VALUES (0, 1, ?, ?, ?)",
                            [(a, b, int(joint[a, b])) for a in range(args.options) for b in range(args.options)])

        def timed(read):
            times = []
            for _ in range(5):
                started = time.perf_counter()
                result = read()
                times.append(time.perf_counter() - started)
            return 1e3 * statistics.median(times), result

        ms, table = timed(lambda: aggregates.pattern_counts(db, stored).dataset().joint_counts("q0", "q1"))
        assert np.array_equal(table, joint)
        distinct = db.execute("SELECT count(*) FROM answer_patterns").fetchone()[0]
        print(f"{'answer patterns (the app)':<34} {ms:>8.1f} {distinct:>10,}")
        ms, _ = timed(lambda: db.execute("SELECT a, b, count FROM pair_counts WHERE qa = 0 AND qb = 1").fetchall())
        print(f"{'pair counts':<34} {ms:>8.1f} {args.options ** 2:>10,}")
        ms, _ = timed(lambda: load_db_dataset(db, "wide").joint_counts("q0", "q1"))
        print(f"{'rows (json_extract scan)':<34} {ms:>8.1f} {args.rows:>10,}")
        db.conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
