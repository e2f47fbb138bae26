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

:class:`ConnectionCounts` counts the connections each address holds open, for ``deniable serve
--connections-per-address``, in another map made the same way (before the fork, anonymous,
shared), under a keyed hash of its own: one column per worker, which gunicorn's master empties
when the worker exits, so a killed worker's connections do not stay counted.
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


# ---------------------------------------------------------------------------------------------
# Open connections per client address (``deniable serve --connections-per-address``)

REFUSED, COUNTED, UNCOUNTED = 0, 1, 2  # what :meth:`ConnectionCounts.enter` says about a connection


class ConnectionCounts:
    """How many connections each client address holds open, over all of a server's workers.

    The same principles as :class:`SharedMemoryStorage`: an anonymous shared memory map made in
    gunicorn's master before it forks (``deniable serve``), so every worker reads the same table;
    nothing of it is ever in a file; an address is held only as a 64-bit keyed BLAKE2 hash whose
    key is random, made at start-up and kept only in memory; an entry is zeroed, hash included,
    when its last connection closes.

    The table has one *column* per worker (:meth:`claim` gives one to a worker before it is
    forked, :meth:`release` zeroes it once the worker has exited: gunicorn's master runs both,
    ``pre_fork`` and ``child_exit``), so that the connections of a worker killed outright (SIGKILL,
    the OOM killer) are forgotten when the master replaces it.  Only its worker writes a column
    (in the worker's one thread: no lock, so no lock a killed worker could leave held); a worker
    checks an address by adding up the address's counts in every live column.  Two workers
    accepting from the same address at the same instant may both see room, so the bound can be
    passed by at most one connection per other worker.

    A column is a table of ``slots`` (key hash, count) pairs of 64-bit words, at least twice as
    many as a worker holds connections (gunicorn's ``worker_connections``), so a key probes at
    most :data:`PROBES` slots; in the unlikely case that they are all taken the connection is let
    in uncounted (:data:`UNCOUNTED`).  IPv6 addresses count by their /64 (one subscriber's
    network: changing the low 64 bits costs an attacker nothing), IPv4-mapped ones as IPv4.
    """

    def __init__(self, bound: int, *, columns: int, connections: int):
        self.bound, self.columns = bound, columns
        self.slots = max(1024, 1 << (2 * connections - 1).bit_length())
        self._width = 2 * (self.slots + PROBES)  # words per column; the probes of the last slots never wrap
        self._map = mmap.mmap(-1, 8 * (columns + columns * self._width))  # MAP_SHARED | MAP_ANONYMOUS
        self._words = memoryview(self._map).cast("Q")  # [live flag per column] then the columns
        self._key = os.urandom(32)  # only in memory; a restart makes a new one
        self.column: int | None = None  # the column this process writes (a worker's; None in the master)

    def key(self, address) -> int | None:
        """The keyed hash an accepted connection's ``address`` counts under; None for no IP address."""
        host = address[0] if isinstance(address, tuple) and address else None
        if not isinstance(host, str) or not host:
            return None  # a Unix socket: not a client address
        if ":" in host:
            import ipaddress

            try:
                ip = ipaddress.IPv6Address(host.split("%", 1)[0])
            except ipaddress.AddressValueError:
                return None
            host = str(ip.ipv4_mapped) if ip.ipv4_mapped else ip.packed[:8].hex() + "::/64"
        digest = hashlib.blake2b(host.encode(), key=self._key, digest_size=8).digest()
        return int.from_bytes(digest, "little") or 1  # 0 marks an empty slot

    def _base(self, column: int) -> int:
        return self.columns + column * self._width

    def _slot(self, column: int, h: int, *, free: bool) -> int | None:
        """The word index of ``h``'s slot in ``column``, or with ``free`` of an empty one; None if neither."""
        base = self._base(column)
        first = base + 2 * (h % self.slots)
        hashes = self._words[first:first + 2 * PROBES:2].tolist()
        if h in hashes:
            return first + 2 * hashes.index(h)
        if free and 0 in hashes:
            return first + 2 * hashes.index(0)
        return None

    def held(self, h: int) -> int:
        """The connections counted under ``h`` in every live column."""
        words, total = self._words, 0
        for column, live in enumerate(words[:self.columns].tolist()):
            if live:
                index = self._slot(column, h, free=False)
                if index is not None:
                    total += words[index + 1]
        return total

    def enter(self, h: int) -> int:
        """A connection counted under ``h`` was accepted: :data:`REFUSED` if its address holds the
        bound already (the caller closes it), else counted in this worker's column (:data:`COUNTED`,
        :meth:`leave` when it closes) or, without a column or a free slot, :data:`UNCOUNTED`."""
        if self.held(h) >= self.bound:
            return REFUSED
        if self.column is None:
            return UNCOUNTED
        index = self._slot(self.column, h, free=True)
        if index is None:
            return UNCOUNTED
        words = self._words
        if words[index] == h:
            words[index + 1] += 1
        else:
            words[index + 1] = 1  # the count before the hash: another worker never sees h with count 0
            words[index] = h
        return COUNTED

    def leave(self, h: int) -> None:
        """A connection that :meth:`enter` counted has closed."""
        index = self._slot(self.column, h, free=False) if self.column is not None else None
        if index is None:
            return
        words = self._words
        if words[index + 1] <= 1:
            words[index] = 0  # the address's last connection: nothing of it stays
            words[index + 1] = 0
        else:
            words[index + 1] -= 1

    # gunicorn's master (pre_fork, child_exit): the workers' columns
    def claim(self) -> int | None:
        """A free column, emptied and marked live, for a worker about to be forked; None if none is free."""
        live = self._words[:self.columns].tolist()
        if 0 not in live:
            return None
        column = live.index(0)
        self._zero(column)
        self._words[column] = 1
        return column

    def release(self, column: int) -> None:
        """A worker has exited (however: its connections are closed): forget what it counted."""
        self._words[column] = 0
        self._zero(column)

    def _zero(self, column: int) -> None:
        start = 8 * self._base(column)
        self._map[start:start + 8 * self._width] = bytes(8 * self._width)
