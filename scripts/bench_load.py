"""Load benchmark: submissions per second through the JSON API of a real ``deniable serve``.

    python scripts/bench_load.py                        # 3 gevent workers, 24 clients, 15 s
    python scripts/bench_load.py --workers 2 --clients 32 --seconds 10
    python scripts/bench_load.py --seconds 5 --json     # the figures as one JSON object

Starts ``deniable serve`` on a fresh SQLite file in a temporary folder with the demo survey
open, submits randomized reports (made with the real Python randomizer) from concurrent
keep-alive connections on loopback, bounded by ``--seconds`` and ``--max-requests``, and prints
its environment (CPUs, load average, workers, clients, SQLite settings), sustained
submissions per second, latency percentiles, errors and the server's CPU time per submission
(which, unlike the rate, hardly depends on what else runs on the machine), then the load
generator's own CPU time per submission (it shares the machine's CPUs with the server).  Afterwards it
checks the database: the rows are exactly the acknowledged submissions, per-question counts
agree with the rows, and ``PRAGMA integrity_check`` is ok.  Exit status 1 if any check fails.

The per-address submission limit stays on (its cost is part of what is measured) but is raised
through ``DENIABLE_RATELIMIT_SUBMIT``, since all the load comes from one loopback address.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loadgen import LOAD_ENV, ServerProcess, drive, run_deniable  # noqa: E402

from deniable.client import randomize  # noqa: E402
from deniable.server.store.db import connect  # noqa: E402
from deniable.server.store.demo import DEMO_DEFINITION  # noqa: E402
from deniable.server.web.ratelimit import DEFAULTS as LIMIT_DEFAULTS  # noqa: E402
from deniable.server.survey.definition import dumps_definition, parse_definition  # noqa: E402


def make_reports(survey, count: int, seed: int) -> list[dict]:
    """``count`` submissions: protected answers randomized with the real randomizer."""
    rng = np.random.default_rng(seed)
    columns = {}
    for q in survey.questions:
        truth = rng.integers(0, q.k, count)
        columns[q.id] = randomize(truth, q.k, q.epsilon, rng) if q.protected else truth
    return [{qid: int(col[i]) for qid, col in columns.items()} for i in range(count)]


def check_database(path: Path, survey, acked: list[dict]) -> list[str]:
    """Return the problems found (empty when the database holds exactly the acknowledged rows)."""
    problems = []
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
        if rows != len(acked):
            problems.append(f"{rows} rows stored but {len(acked)} submissions acknowledged")
        stored = Counter()
        for qid, option, count in conn.execute("SELECT qid, option, count FROM counts"):
            stored[(qid, option)] = count
        expected = Counter((qid, option) for report in acked for qid, option in report.items())
        for q in survey.questions:
            for option in range(q.k):
                if stored[(q.id, option)] != expected[(q.id, option)]:
                    problems.append(f"counts[{q.id}][{option}] = {stored[(q.id, option)]}, "
                                    f"acknowledged {expected[(q.id, option)]}")
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        if integrity != "ok":
            problems.append(f"integrity_check: {integrity}")
    finally:
        conn.close()
    return problems


def durability(path: Path) -> str:
    """The journal mode and synchronous setting the server's own ``connect`` gives a connection."""
    db = connect(path)
    try:
        journal = db.execute("PRAGMA journal_mode").fetchone()[0]
        sync = db.execute("PRAGMA synchronous").fetchone()[0]
    finally:
        db.conn.close()
    return f"journal_mode={journal.upper()} synchronous={ {0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA'}[sync]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (default 3)")
    parser.add_argument("--clients", type=int, default=24, help="concurrent connections (default 24)")
    parser.add_argument("--seconds", type=float, default=15.0, help="duration bound (default 15)")
    parser.add_argument("--max-requests", type=int, default=100_000, help="request bound (default 100,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true",
                        help="print the figures as one JSON object instead of the table")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    survey = parse_definition(DEMO_DEFINITION)
    reports = make_reports(survey, args.max_requests, args.seed)
    budget = iter(reports)

    def next_report():
        return next(budget, None)

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "load.db"
        definition = Path(tmp) / "survey.json"
        definition.write_text(dumps_definition(survey))
        run_deniable("import", str(definition), "--db", str(db), "--open")
        server = ServerProcess(db, workers=args.workers, log=Path(tmp) / "server.log")
        server.start(f"/api/v1/surveys/{survey.slug}")
        try:
            # warm up every worker (imports, first connection) before timing
            warm = iter(make_reports(survey, 200, args.seed + 1))
            warm_tally, _ = drive(server.port, survey.slug, lambda: next(warm, None), clients=8, seconds=10)
            cpu_before = server.cpu_seconds()
            own_before = time.process_time()
            tally, elapsed = drive(server.port, survey.slug, next_report, clients=args.clients,
                                   seconds=args.seconds)
            cpu_after = server.cpu_seconds()
            own = time.process_time() - own_before
        finally:
            server.stop()
        sqlite_setting = durability(db)
        problems = check_database(db, survey, warm_tally.acked + tally.acked)
        if warm_tally.errors:
            problems.append(f"{warm_tally.errors} errors while warming up")

    latencies = sorted(tally.latencies)
    ms = [1000 * x for x in latencies] or [float("nan")]
    server_cpu_us = (1e6 * (cpu_after - cpu_before) / len(tally.acked)
                     if cpu_before is not None and tally.acked else None)
    server_cpu = f"{server_cpu_us:,.0f}" if server_cpu_us is not None else "n/a"
    if args.json:
        print(json.dumps({
            "cpus": os.cpu_count(), "load_average_before": load_before,
            "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
            "sqlite_settings": sqlite_setting, "workers": args.workers, "clients": args.clients,
            "max_seconds": args.seconds, "max_requests": args.max_requests,
            "submissions": len(tally.acked), "seconds": elapsed,
            "per_second": len(tally.acked) / elapsed,
            "p50_ms": statistics.median(ms), "p99_ms": ms[int(0.99 * (len(ms) - 1))], "max_ms": ms[-1],
            "errors": tally.errors, "statuses": {str(s): n for s, n in sorted(tally.statuses.items())},
            "server_cpu_us_per_submission": server_cpu_us,
            "loadgen_cpu_us_per_submission": 1e6 * own / max(1, len(tally.acked)),
            "database_ok": not problems, "problems": problems[:10],
        }, indent=1))
        return 1 if problems or tally.errors else 0
    print(f"deniable load benchmark — {os.cpu_count()} CPUs (load average {load_before:.1f} before the run), "
          f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version} {sqlite_setting}, loopback\n"
          f"deniable serve: {args.workers} gunicorn gevent workers; "
          f"load: {args.clients} keep-alive clients for at most {args.seconds:g} s / {args.max_requests:,} requests\n"
          f"rate limiter on, with DENIABLE_RATELIMIT_SUBMIT={LOAD_ENV['DENIABLE_RATELIMIT_SUBMIT']!r} "
          f"(the default, {LIMIT_DEFAULTS['RATELIMIT_SUBMIT']} per address, would stop one loopback address at once)")
    print(f"{'submissions':>12} {'seconds':>8} {'per second':>11} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'max ms':>7} {'errors':>7} {'server CPU µs/submission':>25}")
    print(f"{len(tally.acked):>12,} {elapsed:>8.1f} {len(tally.acked) / elapsed:>11,.0f} "
          f"{statistics.median(ms):>7.1f} {ms[int(0.99 * (len(ms) - 1))]:>7.1f} {ms[-1]:>7.1f} "
          f"{tally.errors:>7} {server_cpu:>25}")
    print(f"load generator CPU µs/submission {1e6 * own / max(1, len(tally.acked)):,.0f}")
    if tally.statuses:
        print("non-2xx answers: " + ", ".join(f"{s}×{n}" for s, n in sorted(tally.statuses.items())))
    print("database check: " + ("ok — rows = acknowledged submissions, counts agree, integrity ok"
                                if not problems else "FAILED"))
    for problem in itertools.islice(problems, 10):
        print("  " + problem)
    return 1 if problems or tally.errors else 0


if __name__ == "__main__":
    sys.exit(main())
