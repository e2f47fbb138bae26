"""``SharedMemoryStorage.take``: the check and the count of a failed-login ladder in one step, exact
across the processes gunicorn forks (server/web/ratelimit_storage.py)."""

from __future__ import annotations

import multiprocessing

from deniable.server.web.ratelimit_storage import SharedMemoryStorage

LADDER = [("a/minute", 60, 5), ("a/day", 86400, 7)]  # (key, expiry, amount), as RateLimiter builds them


def _take_at_once(storage, barrier, tries, results):
    barrier.wait()  # every process asks at the same moment
    results.put([storage.take([("k", 86400, 5)]) for _ in range(tries)])


def test_forked_processes_get_exactly_the_limit_through():
    processes, tries = 8, 10
    storage = SharedMemoryStorage()
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(processes, timeout=30), context.Queue()
    children = [context.Process(target=_take_at_once, args=(storage, barrier, tries, results), daemon=True)
                for _ in range(processes)]
    for child in children:
        child.start()
    taken = [full for _ in children for full in results.get(timeout=60)]
    for child in children:
        child.join(timeout=30)
    assert taken.count(None) == 5 and taken.count(0) == processes * tries - 5
    assert storage.get("k") == 5  # the refused ones counted nothing


def test_a_full_rung_counts_nothing_on_the_others():
    storage = SharedMemoryStorage()
    assert [storage.take(LADDER) for _ in range(6)] == [None] * 5 + [0]
    assert (storage.get("a/minute"), storage.get("a/day")) == (5, 5)
    storage.clear("a/minute")  # the minute's window ends; the day's has room for two more
    assert [storage.take(LADDER) for _ in range(3)] == [None, None, 1]
    assert (storage.get("a/minute"), storage.get("a/day")) == (2, 7)
