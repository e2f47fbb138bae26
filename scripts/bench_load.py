"""Load benchmark: submissions per second through the JSON API of a real ``deniable serve``.

    python scripts/bench_load.py                        # 3 gevent workers, 24 clients, 15 s
    python scripts/bench_load.py --workers 2 --clients 32 --seconds 10
    python scripts/bench_load.py --seconds 5 --json     # the figures as one JSON object
    python scripts/bench_load.py --seconds 5 --fixed-body             # every request the same body
    python scripts/bench_load.py --seconds 5 --survey examples/habits.json   # every question type

Starts ``deniable serve`` on a fresh SQLite file in a temporary folder with the demo survey (or
``--survey FILE``) open, submits reports from concurrent keep-alive connections on loopback,
bounded by ``--seconds`` and ``--max-requests``, and prints its environment (CPUs, load average,
workers, clients, SQLite settings), sustained submissions per second, latency percentiles, errors
and the server's CPU time per submission (which, unlike the rate, hardly depends on what else runs
on the machine), then the load generator's own CPU time per submission (it shares the machine's
CPUs with the server).

The bodies are diverse: each request answers every question it is asked with a report drawn at
random from all the question's possible reports, leaves an optional question out one time in five,
and follows the survey's display logic (``scripts/loadgen.py``).  ``--fixed-body`` sends one body,
drawn once, with every request instead (one answer pattern), to compare against.

Afterwards it checks conservation: the acknowledged (201) submissions are exactly the stored rows,
and the answer patterns and the per-question counts hold exactly those rows, pattern by pattern;
and ``PRAGMA integrity_check`` is ok.  Exit status 1 if any check fails or any request failed.

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loadgen import (LOAD_ENV, ServerProcess, check_store, distinct_bodies, drive, make_reports,  # noqa: E402
                     run_deniable)

from deniable.server.store.db import connect  # noqa: E402
from deniable.server.store.demo import DEMO_DEFINITION  # noqa: E402
from deniable.server.web.ratelimit import DEFAULTS as LIMIT_DEFAULTS  # noqa: E402
from deniable.server.survey.definition import dumps_definition, load_definition, parse_definition  # noqa: E402


def load_survey(path: str | None):
    """The survey to load: the demo's, or a definition file's."""
    return parse_definition(DEMO_DEFINITION) if path is None else load_definition(path)


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
    parser.add_argument("--survey", metavar="FILE", help="a survey definition to load instead of the demo survey")
    parser.add_argument("--fixed-body", action="store_true",
                        help="send one body, drawn once, with every request (one answer pattern) instead of "
                             "a random answer per question per request")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as one JSON object instead of the table")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    survey = load_survey(args.survey)
    reports = make_reports(survey, args.max_requests, args.seed, fixed=args.fixed_body)
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
            warm = iter(make_reports(survey, 200, args.seed, fixed=args.fixed_body))  # (fixed: the same body)
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
        kept = check_store(db, survey.slug, warm_tally.acked + tally.acked,
                           unanswered=len(warm_tally.unanswered) + len(tally.unanswered))
        problems = list(kept.problems)
        if warm_tally.errors:
            problems.append(f"{warm_tally.errors} errors while warming up")

    latencies = sorted(tally.latencies)
    ms = [1000 * x for x in latencies] or [float("nan")]
    server_cpu_us = (1e6 * (cpu_after - cpu_before) / len(tally.acked)
                     if cpu_before is not None and tally.acked else None)
    server_cpu = f"{server_cpu_us:,.0f}" if server_cpu_us is not None else "n/a"
    bodies = "fixed" if args.fixed_body else "diverse"
    distinct = distinct_bodies(tally.acked)
    if args.json:
        print(json.dumps({
            "cpus": os.cpu_count(), "load_average_before": load_before,
            "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
            "sqlite_settings": sqlite_setting, "workers": args.workers, "clients": args.clients,
            "max_seconds": args.seconds, "max_requests": args.max_requests,
            "survey": survey.slug, "bodies": bodies, "distinct_bodies": distinct,
            "submissions": len(tally.acked), "seconds": elapsed,
            "per_second": len(tally.acked) / elapsed,
            "p50_ms": statistics.median(ms), "p99_ms": ms[int(0.99 * (len(ms) - 1))], "max_ms": ms[-1],
            "errors": tally.errors, "statuses": {str(s): n for s, n in sorted(tally.statuses.items())},
            "server_cpu_us_per_submission": server_cpu_us,
            "loadgen_cpu_us_per_submission": 1e6 * own / max(1, len(tally.acked)),
            "acknowledged": kept.acknowledged, "stored": kept.rows, "in_patterns": kept.in_patterns,
            "distinct_patterns": kept.distinct_patterns, "lost": kept.lost, "conservation_ok": kept.ok,
            "database_ok": not problems, "problems": problems[:10],
        }, indent=1))
        if not kept.ok:
            print(kept.line(), file=sys.stderr)
        return 1 if problems or tally.errors else 0
    print(f"deniable load benchmark — {os.cpu_count()} CPUs (load average {load_before:.1f} before the run), "
          f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version} {sqlite_setting}, loopback\n"
          f"deniable serve: {args.workers} gunicorn gevent workers; "
          f"load: {args.clients} keep-alive clients for at most {args.seconds:g} s / {args.max_requests:,} requests\n"
          f"rate limiter on, with DENIABLE_RATELIMIT_SUBMIT={LOAD_ENV['DENIABLE_RATELIMIT_SUBMIT']!r} "
          f"(the default, {LIMIT_DEFAULTS['RATELIMIT_SUBMIT']} per address, would stop one loopback address at once)\n"
          f"survey {survey.slug!r} ({len(survey.questions)} questions); bodies: "
          + ("one fixed body with every request (--fixed-body)" if args.fixed_body else
             "a random report per question per request, optional questions left out one time in five")
          + f"; {distinct:,} distinct bodies acknowledged")
    print(f"{'submissions':>12} {'seconds':>8} {'per second':>11} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'max ms':>7} {'errors':>7} {'server CPU µs/submission':>25}")
    print(f"{len(tally.acked):>12,} {elapsed:>8.1f} {len(tally.acked) / elapsed:>11,.0f} "
          f"{statistics.median(ms):>7.1f} {ms[int(0.99 * (len(ms) - 1))]:>7.1f} {ms[-1]:>7.1f} "
          f"{tally.errors:>7} {server_cpu:>25}")
    print(f"load generator CPU µs/submission {1e6 * own / max(1, len(tally.acked)):,.0f}")
    print(f"{'acknowledged (201, with warm-up)':>33} {'stored':>8} {'in patterns':>12} "
          f"{'distinct patterns':>18} {'lost':>6}")
    print(f"{kept.acknowledged:>33,} {kept.rows:>8,} {kept.in_patterns:>12,} {kept.distinct_patterns:>18,} "
          f"{kept.lost:>6,}")
    if tally.statuses:
        print("other answers: " + ", ".join(f"{s}×{n}" for s, n in sorted(tally.statuses.items())))
    print(kept.line())
    if problems:
        print("database check: FAILED")
    for problem in itertools.islice(problems, 10):
        print("  " + problem)
    return 1 if problems or tally.errors else 0


if __name__ == "__main__":
    sys.exit(main())
