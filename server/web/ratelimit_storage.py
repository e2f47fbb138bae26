"""Rate-limit counters in memory shared by the server's worker processes, never on disk.

A ``limits`` storage (``deniable+shared://``): a fixed table of slots in an anonymous shared
memory map created when the app is created — before gunicorn forks its workers (``serve``
preloads the app) — so every worker counts in the same table, and nothing of it is ever in a
file.  A slot holds a 64-bit keyed BLAKE2 hash of the ``limits`` key (which is itself a keyed hash
of the client address, :meth:`.ratelimit.RateLimiter.client_key`), the end of its window and a
count; the hash key is random, made in memory at start-up and never written anywhere, so the
table cannot be turned back into addresses even by someone who also holds every file on disk.
Windows are aligned to the clock (a minute window ends at a whole minute), so a slot says
"this minute", not when a client first came; an expired slot is reused, and a stopped server
leaves nothing behind.

Besides ``limits``' own calls, :meth:`SharedMemoryStorage.take` checks and counts several limits
in one hold of the lock (failed logins: the check and the count cannot be split by a parallel
request in any worker).

The table has :data:`SLOTS` slots (24 bytes each); a key probes at most :data:`PROBES` of them.
When all are taken by live windows (an attack from more than ~65,000 addresses inside one
window) the key is counted in the worker's own memory instead (``LocalFallback``): still a
limit, per worker.  Without gunicorn's fork (another server that imports the app in each
worker) each worker has its own table, so limits are per worker.
"""

from __future__ import annotations

import hashlib
import mmap
import multiprocessing
import os
import struct
import time
import urllib.parse

from limits.storage import Storage

SLOTS = 1 << 16
PROBES = 32
SLOT = struct.Struct("<Qdq")  # key hash, window end (Unix seconds), count


class LocalFallback(Exception):
    """No slot free for a key: the limiter counts it in the worker's own memory."""


class SharedMemoryStorage(Storage):
    """Fixed-window counters in an anonymous shared memory map (see the module docstring)."""

    STORAGE_SCHEME = ["deniable+shared"]

    def __init__(self, uri: str = "deniable+shared://", wrap_exceptions: bool = False, **options):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        query = urllib.parse.parse_qs(urllib.parse.urlparse(uri).query)  # deniable+shared://?slots=N
        self.slots = int(query.get("slots", [options.get("slots", SLOTS)])[0])
        self._map = mmap.mmap(-1, self.slots * SLOT.size)  # MAP_SHARED | MAP_ANONYMOUS: shared across fork
        self._lock = multiprocessing.Lock()  # a POSIX semaphore, also shared across fork
        self._key = os.urandom(32)  # only in memory; a restart makes a new one

    @property
    def base_exceptions(self):
        return (LocalFallback,)

    def _hash(self, key: str) -> int:
        digest = hashlib.blake2b(key.encode(), key=self._key, digest_size=8).digest()
        return int.from_bytes(digest, "little") or 1  # 0 marks an empty slot

    def _find(self, h: int, now: float, *, create: bool) -> int | None:
        """The slot of ``h`` (a live one), or with ``create`` a free one for it; None if neither."""
        start = h % self.slots
        free = None
        for i in range(PROBES):
            index = (start + i) % self.slots
            key, end, _ = SLOT.unpack_from(self._map, index * SLOT.size)
            if key == h and end > now:
                return index
            if free is None and (key == 0 or end <= now):
                free = index
        return free if create else None

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        h = self._hash(key)
        with self._lock:
            return self._incr_held(h, key, expiry, now, amount)

    def take(self, limits: list[tuple[str, float, int]]) -> int | None:
        """Count one hit against every ``(key, expiry, amount)`` of ``limits`` at once, unless one of
        them already holds ``amount`` hits: then count none and return that one's index.

        One hold of the lock for the check and the count, so that parallel requests (in any worker)
        never get past the limit between the two: 40 at once against 5 get 5 through.
        """
        now = time.time()
        hashes = [self._hash(key) for key, _, _ in limits]
        with self._lock:
            for position, (h, (_, _, amount)) in enumerate(zip(hashes, limits)):
                index = self._find(h, now, create=False)
                if index is not None and SLOT.unpack_from(self._map, index * SLOT.size)[2] >= amount:
                    return position
            for h, (key, expiry, _) in zip(hashes, limits):
                self._incr_held(h, key, expiry, now)
            return None

    def _incr_held(self, h: int, key: str, expiry: float, now: float, amount: int = 1) -> int:
        """:meth:`incr` with the lock already held."""
        index = self._find(h, now, create=True)
        if index is None:
            raise LocalFallback(key)
        stored, end, count = SLOT.unpack_from(self._map, index * SLOT.size)
        if stored != h or end <= now:  # a new window, aligned to the clock
            end, count = (now // expiry + 1) * expiry, 0
        count += amount
        SLOT.pack_into(self._map, index * SLOT.size, h, end, count)
        return count

    def _read(self, key: str) -> tuple[float, int] | None:
        now = time.time()
        h = self._hash(key)
        with self._lock:
            index = self._find(h, now, create=False)
            if index is None:
                return None
            _, end, count = SLOT.unpack_from(self._map, index * SLOT.size)
            return end, count

    def get(self, key: str) -> int:
        found = self._read(key)
        return found[1] if found else 0

    def get_expiry(self, key: str) -> float:
        found = self._read(key)
        return found[0] if found else time.time()

    def check(self) -> bool:
        return True

    def reset(self) -> int | None:
        with self._lock:
            self._map[:] = bytes(len(self._map))
        return None

    def clear(self, key: str) -> None:
        now = time.time()
        h = self._hash(key)
        with self._lock:
            index = self._find(h, now, create=False)
            if index is not None:
                SLOT.pack_into(self._map, index * SLOT.size, 0, 0.0, 0)
