"""Time the rate limiter's SQLite storage per hit; print a table.

    python scripts/bench_limits.py                 # 20,000 hits per row
    python scripts/bench_limits.py --hits 50000 --processes 2

Rows, each on a fresh ``deniable+sqlite://`` file in a temporary folder:

- ``storage.incr``: the bare upsert (one statement, autocommit, WAL, ``synchronous = OFF``);
- ``FixedWindowRateLimiter.hit``: what ``@limited`` calls once per limited request
  (the ``limits`` key building plus one ``incr``), one key, and 10,000 keys (addresses);
- the same from ``--processes`` processes at once on one file (gunicorn workers): wall time per
  hit over all processes, so writer contention on the one file is included;
- ``memory://`` for reference (per process, so useless across workers);
- a whole JSON API submission through the Flask test client with the limiter on and off: the
  difference is what the limiter adds to a request (key function with its HMAC, limit lookup,
  one hit); and the same for a request that is not limited (``GET`` of the survey as JSON),
  which should cost nothing more.

The load benchmark (``scripts/bench_load.py``) needs ≥ 1000 submissions/s on 2 cores, a budget
of about 2 ms of CPU per submission; the limiter's share should be a small fraction of it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from limits import parse  # noqa: E402
from limits.storage import storage_from_string  # noqa: E402
from limits.strategies import FixedWindowRateLimiter  # noqa: E402

from deniable.server.web import ratelimit_storage  # noqa: F401  (registers deniable+sqlite://)
from deniable.server.web.app import create_app
from deniable.server.store.db import init_db  # noqa: E402
from deniable.server.store.demo import ensure_demo  # noqa: E402

LIMIT = parse("100000000 per minute")  # never reached: every hit is counted, none refused


def _hits(uri: str, hits: int, keys: int, bare: bool = False) -> float:
    """Seconds for ``hits`` hits on ``keys`` distinct keys through a fresh storage object."""
    storage = storage_from_string(uri)
    limiter = FixedWindowRateLimiter(storage)
    names = [f"client{i:05d}" for i in range(keys)]
    limiter.hit(LIMIT, names[0])  # opens the connection, creates the table
    start = time.perf_counter()
    if bare:
        for i in range(hits):
            storage.incr(names[i % keys], 60)
    else:
        for i in range(hits):
            limiter.hit(LIMIT, names[i % keys], "submit")
    return time.perf_counter() - start


def _worker(args):
    uri, hits, keys, barrier = args
    barrier.wait()
    return _hits(uri, hits, keys)


def _parallel(uri: str, hits: int, keys: int, processes: int) -> float:
    """Wall seconds for ``processes`` processes doing ``hits`` hits each on one storage file."""
    with multiprocessing.Manager() as manager:
        barrier = manager.Barrier(processes + 1)
        with multiprocessing.Pool(processes) as pool:
            pending = pool.map_async(_worker, [(uri, hits, keys, barrier)] * processes)
            barrier.wait()
            start = time.perf_counter()
            pending.get()
            return time.perf_counter() - start


def _requests(db: str, n: int, rounds: int) -> dict[tuple[bool, bool], float]:
    """Median seconds per request, keyed by (submission?, limiter on?).

    Two apps on one database, limiter off and on, take turns in ``rounds`` rounds of ``n``
    requests each, so a busy machine slows both alike.
    """
    body = {"reports": {"drug_use": 0, "cheating": 1, "age_group": 2}}
    submit_url, read_url = "/api/v1/surveys/demo/responses", "/api/v1/surveys/demo"
    clients = {enabled: create_app({"DATABASE": db, "SECRET_KEY": "bench", "RATELIMIT_ENABLED": enabled,
                                    "RATELIMIT_SUBMIT": "100000000 per minute"}).test_client()
               for enabled in (False, True)}
    for client in clients.values():
        assert client.post(submit_url, json=body).status_code == 201
        assert client.get(read_url).status_code == 200
    times: dict[tuple[bool, bool], list[float]] = {}
    for _ in range(rounds):
        for submit in (True, False):
            for enabled, client in clients.items():
                start = time.perf_counter()
                for _ in range(n):
                    if submit:
                        client.post(submit_url, json=body)
                    else:
                        client.get(read_url)
                times.setdefault((submit, enabled), []).append((time.perf_counter() - start) / n)
    return {key: statistics.median(values) for key, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=20_000, help="hits per row (per process)")
    parser.add_argument("--processes", type=int, default=2, help="concurrent processes")
    parser.add_argument("--requests", type=int, default=500, help="requests per round (request rows)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (median reported)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**6))

        def fresh() -> str:
            return f"deniable+sqlite://{tmp}/bench{next(counter)}.limits"

        def median(run) -> float:
            return statistics.median(run() for _ in range(args.repeat))

        rows = []
        h, p = args.hits, args.processes
        rows.append(("storage.incr, 1 key", "1", h, median(lambda: _hits(fresh(), h, 1, bare=True))))
        rows.append(("FixedWindowRateLimiter.hit, 1 key", "1", h, median(lambda: _hits(fresh(), h, 1))))
        rows.append(("FixedWindowRateLimiter.hit, 10,000 keys", "1", h,
                     median(lambda: _hits(fresh(), h, 10_000))))
        rows.append((f"hit, 1 key, {p} processes on one file", str(p), h * p,
                     median(lambda: _parallel(fresh(), h, 1, p))))
        rows.append((f"hit, 10,000 keys, {p} processes on one file", str(p), h * p,
                     median(lambda: _parallel(fresh(), h, 10_000, p))))
        rows.append(("memory:// (reference, not shared)", "1", h,
                     median(lambda: _hits("memory://", h, 1))))

        db = f"{tmp}/deniable.db"
        ensure_demo(init_db(db))
        n = args.requests
        per_request = _requests(db, n, rounds=3 * args.repeat)

    print(f"Rate-limit storage cost (median of {args.repeat}; SQLite file in a temporary folder)\n")
    print(f"| {'what':<42} | processes | {'hits':>7} | µs per hit | hits/s |")
    print(f"| {'-' * 42} | --------- | {'-' * 7} | ---------: | -----: |")
    for what, procs, hits, seconds in rows:
        print(f"| {what:<42} | {procs:>9} | {hits:>7,} | {seconds / hits * 1e6:10.1f} | "
              f"{hits / seconds:6,.0f} |")
    print(f"\nWhole requests through the Flask test client (median of {3 * args.repeat} rounds of {n:,}, "
          "limiter off and on taking turns; one process), µs per request:\n")
    print("| request                                        | limiter off | limiter on | added |")
    print("| ---------------------------------------------- | ----------: | ---------: | ----: |")
    for what, submit in (("POST /api/v1/surveys/demo/responses (limited)", True),
                         ("GET /api/v1/surveys/demo (not limited)", False)):
        a, b = per_request[submit, False] * 1e6, per_request[submit, True] * 1e6
        print(f"| {what:<46} | {a:11.0f} | {b:10.0f} | {b - a:5.0f} |")


if __name__ == "__main__":
    main()
