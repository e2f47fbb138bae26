"""Where a submission's time goes: each part of the JSON API's submission path in µs per submission, in-process.

    python scripts/bench_submit_profile.py                 # the demo survey, 4,000 diverse submissions
    python scripts/bench_submit_profile.py --n 20000 --batch 8
    python scripts/bench_submit_profile.py --survey examples/habits.json
    python scripts/bench_submit_profile.py --cprofile      # and the functions cProfile finds under the route
    python scripts/bench_submit_profile.py --cprofile --callees '_lead|insert_validated'
    python scripts/bench_submit_profile.py --statements    # and each SQL statement's µs per submission

One process, one greenlet (gevent's patching, as in the server's workers), no HTTP: a fresh SQLite file with the survey open (``deniable import
--open``), an app as ``deniable serve`` makes it (the limiter on, out of reach; the scrubber off:
its cost is measured on its own below), and bodies with a random answer per question per request
(``scripts/loadgen.py``, as ``scripts/bench_wrk.py`` sends them).  Each part is timed on its own,
in the order the route runs it, on the same bodies:

* ``whole route``: the WSGI call of the submission route (:mod:`deniable.server.web.respondent.submit_route`)
  with a prepared environ, from the path match to the 201 body: everything below, one
  transaction per submission (no other submission to share it with);
* ``checks before the body``: trusted host, method, limiter hit, cross-site, content type;
* ``survey lookup``: :func:`~deniable.server.store.surveys.get_launched_survey` through the pool;
* ``JSON parse``: :func:`~deniable.server.web.respondent.submit_route.parse_body`;
* ``validation``: :func:`check_open` and :func:`validate_reports`;
* inside ``BEGIN IMMEDIATE … COMMIT``, ``--batch`` submissions a transaction (the group commit's
  batch): the survey's status read again, the **slot draw and fill** (:func:`.slots.fill`), the
  **pattern store** (:func:`.aggregates.add`), the per-option counts, the growth check, and the
  transaction's begin and commit (per submission: divided by the batch);
* ``scrub``: one :func:`.scrub.scrub` (the scrubber's tick does one every 0.1 s when something was
  written: per submission at a given rate, its µs divided by the submissions of 0.1 s).

The parts add up to about the whole route; what the route costs beyond its parts is Python's
glue.  What this does not see: the HTTP server (gevent's pywsgi, the floor's own cost: measure it
with ``scripts/bench_wrk.py``), waiting for the write lock across workers, and the GIL of the
scrubber thread.
"""

from __future__ import annotations

from gevent import monkey  # as in a gunicorn gevent worker: time.sleep(0) yields to other greenlets

monkey.patch_all()

import argparse  # noqa: E402
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_load import load_survey  # noqa: E402
from loadgen import LOAD_ENV, make_reports, run_deniable  # noqa: E402

from deniable.server.survey.definition import dumps_definition  # noqa: E402


def environ_for(path: str, body: bytes) -> dict:
    return {"REQUEST_METHOD": "POST", "PATH_INFO": path, "SCRIPT_NAME": "", "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "HTTP_HOST": "127.0.0.1:8000",
            "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1",
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr, "wsgi.multithread": False,
            "wsgi.multiprocess": True, "wsgi.run_once": False}


class _TimedStatements:
    """A connection that times each ``execute``/``executemany`` by its statement's first words."""

    def __init__(self, conn):
        self._conn = conn
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def _timed(self, method: str, sql: str, *args):
        start = time.perf_counter()
        result = getattr(self._conn, method)(sql, *args)
        key = f"{method} " + " ".join(sql.split()[:5])[:64]
        self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - start
        self.calls[key] = self.calls.get(key, 0) + 1
        return result

    def execute(self, sql: str, *args):
        return self._timed("execute", sql, *args)

    def executemany(self, sql: str, *args):
        return self._timed("executemany", sql, *args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4000, help="submissions per part (default 4,000)")
    parser.add_argument("--batch", type=int, default=4,
                        help="submissions per write transaction in the store's parts (default 4)")
    parser.add_argument("--rate", type=float, default=1000.0,
                        help="submissions per second the scrub's cost is spread over (default 1,000)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--survey", metavar="FILE")
    parser.add_argument("--cprofile", action="store_true", help="also print cProfile's top functions of the route")
    parser.add_argument("--callees", metavar="REGEX",
                        help="with --cprofile, also what the functions matching REGEX call (e.g. '_lead|insert_validated')")
    parser.add_argument("--statements", action="store_true",
                        help="also time each SQL statement the route makes (its first words), per submission")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.update(LOAD_ENV)
    survey = load_survey(args.survey)
    n = args.n
    bodies = [json.dumps({"reports": r}, separators=(",", ":")).encode()
              for r in make_reports(survey, 4 * n + 1200, args.seed)]
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "profile.db"
        definition = Path(tmp) / "survey.json"
        definition.write_text(dumps_definition(survey))
        run_deniable("import", str(definition), "--db", str(db_path), "--open")
        os.environ["DENIABLE_DATABASE"] = str(db_path)
        from deniable.server.store import aggregates, scrub, slots
        from deniable.server.store.db import write_transaction
        from deniable.server.store.responses import check_open, insert_validated, validate_reports
        from deniable.server.store.surveys import get_launched_survey, today
        from deniable.server.web.app import create_app
        from deniable.server.web.connections import pooled
        from deniable.server.web.ratelimit import limiter_of
        from deniable.server.web.respondent import submit_route
        from deniable.server.web.respondent.submit_route import cross_site, parse_body

        app = create_app({"DATABASE": str(db_path), "SECRET_KEY": "profile", "SCRUB_SECONDS": 0,
                          "RATELIMIT_SUBMIT": LOAD_ENV["DENIABLE_RATELIMIT_SUBMIT"]})
        route = app.wsgi_app
        while not isinstance(route, submit_route.SubmitRoute):  # (ProxyFix or others may wrap it)
            route = route.app
        path = f"/api/v1/surveys/{survey.slug}/responses"
        statuses = []

        def start_response(status, headers):
            statuses.append(status)

        body_iter = iter(bodies)
        # warm up: the first response builds the slots; the connection's caches fill
        for _ in range(200):
            route(environ_for(path, next(body_iter)), start_response)
        times: dict[str, float] = {}

        def timed(name, fn, items):
            start = time.perf_counter()
            for item in items:
                fn(item)
            times[name] = 1e6 * (time.perf_counter() - start) / len(items)

        route_bodies = [next(body_iter) for _ in range(n)]
        environs = [environ_for(path, b) for b in route_bodies]
        timed("whole route (one transaction each)", lambda e: route(e, start_response), environs)
        if args.cprofile:  # on other bodies, after the timing: the profiler slows what it watches
            import cProfile
            import pstats
            profiled = [environ_for(path, next(body_iter)) for _ in range(min(n, 1000))]
            profiler = cProfile.Profile()
            profiler.enable()
            for environ in profiled:
                route(environ, start_response)
            profiler.disable()
        if args.statements:  # on other bodies, after the timing: the wrapper costs a Python call a statement
            with pooled(app) as timed_db:  # the pool's idle connection, which the route checks out next
                conn = timed_db.conn
                timed_db.conn = timers = _TimedStatements(conn)
            statement_bodies = [environ_for(path, next(body_iter)) for _ in range(min(n, 2000))]
            start = time.perf_counter()
            for environ in statement_bodies:
                route(environ, start_response)
            route_us = 1e6 * (time.perf_counter() - start) / len(statement_bodies)
            timed_db.conn = conn  # that very handle unwrapped, whichever the pool hands out next
        if any(not s.startswith("201") for s in statuses):
            print(f"not all 201: {sorted(set(statuses))}", file=sys.stderr)
            return 1

        config = app.config
        limits = limiter_of(app)
        from werkzeug.http import parse_options_header
        from werkzeug.wsgi import get_host

        def checks(environ):
            host = get_host(environ, config["TRUSTED_HOSTS"])
            environ["REQUEST_METHOD"] != "POST"
            if limits.enabled:
                limits.hit("RATELIMIT_SUBMIT", "submit", environ.get("REMOTE_ADDR"))
            cross_site(environ, host)
            parse_options_header(environ.get("CONTENT_TYPE", ""))[0].lower()

        timed("checks before the body (host, method, limiter, cross-site, type)", checks, environs)
        with pooled(app) as db:
            stored = get_launched_survey(db, survey.slug)
        def lookup(_):
            with pooled(app) as db:
                get_launched_survey(db, survey.slug)

        timed("survey lookup (pooled connection, get_launched_survey)", lookup, range(n))
        timed("JSON parse (parse_body)", parse_body, route_bodies)
        reports = [parse_body(b)[0] for b in route_bodies]

        def validate(r):
            check_open(stored)
            validate_reports(stored, r)

        timed("validation (check_open, validate_reports)", validate, reports)
        cleans = [validate_reports(stored, parse_body(next(body_iter))[0]) for _ in range(2 * n)]
        # the store's parts, batch by batch, each in its own transactions (the slots fill as they would)
        day = today()
        parts = {"begin + commit": 0.0, "status read (insert_validated)": 0.0, "slot draw and fill (slots.fill)": 0.0,
                 "pattern store (aggregates.add)": 0.0, "per-option counts": 0.0, "growth check": 0.0}
        from deniable.server.store.responses import COUNT_ONE, _compact, _reports_json, _storing
        plan = _storing(stored.survey)
        questions = {q.id: q for q in stored.survey.questions}
        done = 0
        with pooled(app) as db:
            conn = db.conn
            for start in range(0, n, args.batch):
                batch = cleans[start:start + args.batch]
                t0 = time.perf_counter()
                conn.execute("BEGIN IMMEDIATE")
                t1 = time.perf_counter()
                for clean in batch:
                    a = time.perf_counter()
                    conn.execute("SELECT status, invitation_only FROM surveys WHERE id = ?", [stored.id]).fetchone()
                    b = time.perf_counter()
                    slots.fill(conn, stored.id, day, _compact(_reports_json(stored.survey, clean)),
                               plan.design_json(clean))
                    c = time.perf_counter()
                    aggregates.add(db, stored.id, day, [aggregates.encode(stored.survey, clean)])
                    d = time.perf_counter()
                    conn.executemany(COUNT_ONE, [(stored.id, qid, option) for qid, option in clean.items()
                                                 if questions[qid].qtype.categorical])
                    e = time.perf_counter()
                    parts["status read (insert_validated)"] += b - a
                    parts["slot draw and fill (slots.fill)"] += c - b
                    parts["pattern store (aggregates.add)"] += d - c
                    parts["per-option counts"] += e - d
                g0 = time.perf_counter()
                slots.growth_due(conn, stored.id)
                g1 = time.perf_counter()
                conn.execute("COMMIT")
                t2 = time.perf_counter()
                parts["growth check"] += g1 - g0
                parts["begin + commit"] += (t1 - t0) + (t2 - g1)
                done += len(batch)
                if slots.growth_due(conn, stored.id):  # the server grows between batches, in steps
                    while True:
                        with write_transaction(db):
                            if not slots.grow_step(conn, stored.id):
                                break
        for name, seconds in parts.items():
            times[f"store, {args.batch} a transaction: {name}"] = 1e6 * seconds / done

        # the whole insert_validated, in transactions of --batch, for comparison with its parts
        with pooled(app) as db:
            start = time.perf_counter()
            for at in range(n, 2 * n, args.batch):
                with write_transaction(db):
                    for clean in cleans[at:at + args.batch]:
                        insert_validated(db, stored, clean, None, day)
                    slots.growth_due(db.conn, stored.id)
                if slots.growth_due(db.conn, stored.id):
                    while True:
                        with write_transaction(db):
                            if not slots.grow_step(db.conn, stored.id):
                                break
            times[f"store, {args.batch} a transaction: all of insert_validated + begin/commit"] = \
                1e6 * (time.perf_counter() - start) / n
        # the scrub: one after a few submissions' writes, as the scrubber's tick
        scrub_us = []
        body_list = iter(cleans[:200])
        with pooled(app) as db:
            for _ in range(20):
                with write_transaction(db):
                    insert_validated(db, stored, next(body_list), None, day)
                start = time.perf_counter()
                scrub.scrub(db)
                scrub_us.append(1e6 * (time.perf_counter() - start))
        per_tick = args.rate * 0.1
        times["scrub, one (median)"] = statistics.median(scrub_us)
        times[f"scrub per submission at {args.rate:,.0f}/s (one per 0.1 s tick)"] = statistics.median(scrub_us) / per_tick
    if args.json:
        print(json.dumps(times))
        return 0
    print(f"the submission path, in-process: survey {survey.slug!r} ({len(survey.questions)} questions), "
          f"{n:,} diverse submissions per part, load average {os.getloadavg()[0]:.1f}")
    width = max(map(len, times))
    print(f"{'part':<{width}}  {'µs per submission':>17}")
    for name, us in times.items():
        print(f"{name:<{width}}  {us:>17,.1f}")
    if args.statements:
        count = len(statement_bodies)
        print(f"\nthe route's SQL statements ({count:,} submissions, one transaction each; the route {route_us:,.1f} µs "
              f"a submission with the wrapper, {1e6 * sum(timers.seconds.values()) / count:,.1f} of them in SQLite's calls)")
        print(f"{'µs per submission':>17}  {'calls':>5}  statement")
        for key, seconds in sorted(timers.seconds.items(), key=lambda item: -item[1]):
            print(f"{1e6 * seconds / count:>17,.1f}  {timers.calls[key] / count:>5.2f}  {key}")
    if args.cprofile:
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(45)
        if args.callees:
            stats.sort_stats("cumulative").print_callees(args.callees)
    return 0


if __name__ == "__main__":
    sys.exit(main())
