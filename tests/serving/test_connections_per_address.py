"""``deniable serve --connections-per-address``: one address holds at most that many connections at
once, over all the workers, counted in shared memory under a keyed hash of the address; a worker
killed outright has its count forgotten when gunicorn's master replaces it.

The table itself (:class:`~deniable.server.web.ratelimit_storage.ConnectionCounts`) is tested in
this process; the bound, the release and the master's part on a real ``deniable serve``.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import sys
import time

import pytest

from deniable.server.cli import serving
from deniable.server.cli.serve import per_address_bound
from deniable.server.web.ratelimit_storage import COUNTED, REFUSED, UNCOUNTED, ConnectionCounts
from support.real_server import SLUG, Server, summaries


def table(bound: int = 3, columns: int = 5) -> tuple[ConnectionCounts, int, int]:
    counts = ConnectionCounts(bound, columns=columns, connections=100)
    return counts, counts.claim(), counts.claim()


def test_an_address_holds_at_most_the_bound_over_all_workers():
    counts, first, second = table(bound=3)
    key = counts.key(("192.0.2.7", 40000))
    counts.column = first
    assert [counts.enter(key) for _ in range(2)] == [COUNTED, COUNTED]
    counts.column = second  # the other worker sees the first one's count
    assert [counts.enter(key) for _ in range(2)] == [COUNTED, REFUSED]
    assert counts.enter(counts.key(("192.0.2.8", 40000))) == COUNTED  # another address is not held back
    counts.leave(key)
    assert counts.held(key) == 2 and counts.enter(key) == COUNTED
    counts.column = None  # a worker without a column (all taken) still checks, counts nothing
    assert counts.enter(key) == REFUSED
    assert counts.enter(counts.key(("192.0.2.9", 1))) == UNCOUNTED


def test_a_released_column_forgets_its_connections_and_the_last_close_leaves_nothing():
    counts, first, second = table(bound=2)
    key = counts.key(("192.0.2.7", 1))
    counts.column = first
    counts.enter(key)
    counts.enter(key)
    assert counts.enter(key) == REFUSED
    counts.release(first)  # the master, once the worker has exited
    assert counts.held(key) == 0
    assert counts.claim() == first  # free again, and empty
    counts.column = second
    counts.enter(key)
    counts.leave(key)
    assert not any(bytes(counts._map)[8 * counts.columns:]), "an entry stayed after its last connection closed"


def test_the_table_holds_no_address_only_a_keyed_hash():
    counts, first, _ = table(bound=10)
    counts.column = first
    addresses = ["192.0.2.77", "2001:db8::5"]
    for address in addresses:
        counts.enter(counts.key((address, 1, 0, 0) if ":" in address else (address, 1)))
    memory = bytes(counts._map)
    for address in addresses:
        ip = ipaddress.ip_address(address)
        for form in (address.encode(), ip.packed, ip.packed[:8], ip.packed[::-1]):
            assert form not in memory
    other = ConnectionCounts(10, columns=5, connections=100)  # another start: another key
    assert other.key(("192.0.2.77", 1)) != counts.key(("192.0.2.77", 1))


def test_ipv6_counts_by_its_64_and_mapped_ipv4_as_ipv4():
    counts, _, _ = table()
    assert counts.key(("2001:db8:1:2::1", 1, 0, 0)) == counts.key(("2001:db8:1:2:ffff::9", 2, 0, 0))
    assert counts.key(("2001:db8:1:2::1", 1, 0, 0)) != counts.key(("2001:db8:1:3::1", 1, 0, 0))
    assert counts.key(("::ffff:192.0.2.7", 1, 0, 0)) == counts.key(("192.0.2.7", 1))
    assert counts.key("") is None and counts.key(("", 0)) is None  # a Unix socket: no address to bound


def test_no_bound_behind_a_reverse_proxy(capsys):
    assert per_address_bound(128, {}) == 128
    assert per_address_bound(128, {"PROXY_FIX_X_FOR": 0}) == 128
    assert per_address_bound(0, {"PROXY_FIX_X_FOR": 1}) == 0
    assert capsys.readouterr().err == ""
    assert per_address_bound(128, {"PROXY_FIX_X_FOR": 1}) == 0
    assert "limit_conn" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# a real deniable serve

SOURCE = "127.0.0.3"  # the address that holds its connections
OTHER = "127.0.0.4"
SILENT = (f"POST /api/v1/surveys/{SLUG}/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          "Content-Length: 100\r\n\r\n{\"rep").encode()


def _silent(port: int, source: str) -> socket.socket:
    """A connection from ``source`` that sends the start of a request and waits.  One over the bound may be
    reset before the request is sent (on a loaded machine the worker accepts and resets it first): the
    socket is returned all the same, and :func:`_closed` says it was closed."""
    sock = socket.socket()
    try:
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(SILENT)
    except (ConnectionResetError, BrokenPipeError):
        pass
    except BaseException:
        sock.close()  # never left to the garbage collector (a ResourceWarning in a later test)
        raise
    return sock


def _closed(sock: socket.socket, within: float) -> bool:
    """Whether the server closes (or resets) ``sock`` within ``within`` seconds."""
    sock.settimeout(within)
    try:
        return sock.recv(4096) == b""
    except TimeoutError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


def _sockets(pid: int) -> int:
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the workers' sockets in /proc")
def test_a_killed_workers_connections_are_released_when_the_master_replaces_it(data):
    bound = 16
    server = Server(data, "--connections-per-address", str(bound), "--read-timeout", "120")
    held, again = [], []
    try:
        first, second = server.workers()
        os.kill(second, signal.SIGSTOP)  # so that the first worker accepts them all
        try:
            before = _sockets(first)
            held = [_silent(server.port, SOURCE) for _ in range(bound)]
            _wait(lambda: _sockets(first) - before >= bound, 10, "the first worker did not take the connections")
            extra = _silent(server.port, SOURCE)  # one over the bound: reset as it is accepted
            assert _closed(extra, 5), "a connection over the bound was kept"
            extra.close()
            other = _silent(server.port, OTHER)  # another address is not held back
            assert not _closed(other, 0.5)
            other.close()
        finally:
            os.kill(second, signal.SIGCONT)
        assert not any(_closed(sock, 0.01) for sock in held)

        os.kill(first, signal.SIGKILL)  # its connections die with it; the master replaces it
        _wait(lambda: first not in server.workers() and len(server.workers()) == 2, 60,
              "the master did not replace the killed worker")
        for sock in held:
            sock.close()
        # The address may hold the bound again, over both workers, and still not one more.
        again = [_silent(server.port, SOURCE) for _ in range(bound)]
        time.sleep(1)
        kept = sum(not _closed(sock, 0.01) for sock in again)
        assert kept == bound, f"{bound - kept} of {bound} connections reset after the worker was replaced"
        extra = _silent(server.port, SOURCE)
        assert _closed(extra, 5), "a connection over the bound was kept after the worker was replaced"
        extra.close()
    finally:
        for sock in held + again:
            sock.close()
        log = server.stop()
    # Counted in the summary (the killed worker's count of its refusal died with it).
    assert summaries(log).get(serving.REFUSED_CONNECTIONS) == 1, log[-3000:]
