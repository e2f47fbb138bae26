"""Time the rate limiter's SQLite storage per hit; print a table.

    python scripts/bench_limits.py                 # 20,000 hits per row
    python scripts/bench_limits.py --hits 50000 --processes 2

Rows, each on a fresh ``deniable+sqlite://`` file in a temporary folder:

- ``storage.incr``: the bare upsert (one statement, autocommit, WAL, ``synchronous = OFF``);
- ``FixedWindowRateLimiter.hit``: what Flask-Limiter calls once per limited request
  (the ``limits`` key building plus one ``incr``), one key, and 10,000 keys (addresses);
- the same from ``--processes`` processes at once on one file (gunicorn workers): wall time per
  hit over all processes, so writer contention on the one file is included;
- ``memory://`` for reference (per process, so useless across workers);
- a whole JSON API submission through the Flask test client with the limiter on and off: the
  difference is what the limiter adds to a request (key function with its HMAC, limit lookup,
  one hit).

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

from server import create_app, limits_sqlite  # noqa: E402,F401  (registers deniable+sqlite://)
from server.db import init_db  # noqa: E402
from server.demo import ensure_demo  # noqa: E402

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


def _requests(db: str, n: int, enabled: bool) -> float:
    """Seconds for ``n`` JSON API submissions through the Flask test client."""
    app = create_app({"DATABASE": db, "SECRET_KEY": "bench", "RATELIMIT_ENABLED": enabled,
                      "RATELIMIT_SUBMIT": "100000000 per minute"})
    client = app.test_client()
    body = {"reports": {"drug_use": 0, "cheating": 1, "age_group": 2}}
    url = "/api/v1/surveys/demo/responses"
    assert client.post(url, json=body).status_code == 201
    start = time.perf_counter()
    for _ in range(n):
        client.post(url, json=body)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=20_000, help="hits per row (per process)")
    parser.add_argument("--processes", type=int, default=2, help="concurrent processes")
    parser.add_argument("--requests", type=int, default=2_000, help="submissions per request row")
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
        off = median(lambda: _requests(db, n, False))
        on = median(lambda: _requests(db, n, True))

    print(f"Rate-limit storage cost (median of {args.repeat}; SQLite file in a temporary folder)\n")
    print(f"| {'what':<42} | processes | {'hits':>7} | µs per hit | hits/s |")
    print(f"| {'-' * 42} | --------- | {'-' * 7} | ---------: | -----: |")
    for what, procs, hits, seconds in rows:
        print(f"| {what:<42} | {procs:>9} | {hits:>7,} | {seconds / hits * 1e6:10.1f} | "
              f"{hits / seconds:6,.0f} |")
    print(f"\nWhole JSON API submission through the Flask test client ({n:,} requests, one process):\n")
    print("| limiter | µs per submission |")
    print("| ------- | ----------------: |")
    print(f"| off     | {off / n * 1e6:17.0f} |")
    print(f"| on      | {on / n * 1e6:17.0f} |")
    print(f"\nThe limiter adds {(on - off) / n * 1e6:.0f} µs per submission "
          f"({(on - off) / off * 100:.0f}% of the request).")


if __name__ == "__main__":
    main()
