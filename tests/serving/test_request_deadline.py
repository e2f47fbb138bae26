"""Every request body is read under the deadline, chunked ones included, on every route: thousands
of silent chunked connections neither stall a real ``deniable serve`` nor outlive its deadline."""

from __future__ import annotations

import select
import socket
import sys
import threading
import time
import urllib.request

import pytest

from deniable.server.web import logs
from support.real_server import SLUG, Server, summaries

pytestmark = [pytest.mark.slow, pytest.mark.alone,  # scripts/test.sh runs it by itself
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts the workers' sockets in /proc")]

CONNECTIONS = 2000
DEADLINE = 6  # seconds: --read-timeout, short so that the test does not wait 15 s
ROUTES = {  # the headers of a chunked POST and its first chunk; the rest never comes
    "survey form": (f"POST /s/{SLUG} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "9\r\ndrugs=1&c\r\n"),
    "JSON API": (f"POST /api/v1/surveys/{SLUG}/responses HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "b\r\n{\"reports\":\r\n"),
}


def _probe(base: str, stop: threading.Event, failures: list, answered: list) -> None:
    """GET the survey's design every 0.2 s; each must answer within a second (the socket's timeout)."""
    while not stop.is_set():
        try:
            with urllib.request.urlopen(f"{base}/api/v1/surveys/{SLUG}", timeout=1) as response:
                response.read()
                answered.append(response.status)
        except OSError as exc:
            failures.append(repr(exc))
        stop.wait(0.2)


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True


@pytest.mark.parametrize("route", ROUTES)
def test_silent_chunked_connections_are_all_accepted_and_closed_at_the_deadline(data, many_files, route):
    # All from 127.0.0.1, the probe too: the bound per address is set above them (test_flood.py tests it).
    server = Server(data, "--read-timeout", str(DEADLINE), "--connections-per-address", str(CONNECTIONS + 100))
    stop, failures, answered = threading.Event(), [], []
    prober = threading.Thread(target=_probe, args=(server.base, stop, failures, answered), daemon=True)
    held, peak = [], 0
    try:
        before = server.open_sockets()
        prober.start()
        for _ in range(CONNECTIONS):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            sock.sendall(ROUTES[route].encode())
            held.append(sock)
        while peak < CONNECTIONS and not _readable(held[0]):  # until the first one is closed
            peak = max(peak, server.open_sockets() - before)
            time.sleep(0.1)
        # The server closes every one of them: none is left open long after the deadline.
        waiting, end = {sock.fileno(): sock for sock in held}, time.monotonic() + DEADLINE + 30
        poll = select.poll()
        for fd in waiting:
            poll.register(fd, select.POLLIN)
        while waiting and time.monotonic() < end:
            for fd, _ in poll.poll(1000):
                if _closed(waiting[fd]):
                    poll.unregister(fd)
                    del waiting[fd]
        stop.set()
        prober.join()
    finally:
        stop.set()
        for sock in held:
            sock.close()
        log = server.stop()
    assert peak >= CONNECTIONS, f"the workers held at most {peak} of the {CONNECTIONS} connections at once"
    still_open = len(waiting)
    assert still_open == 0, f"{still_open} connections still open {DEADLINE + 30} s after their last byte"
    assert not failures and len(answered) > 10, (failures[:3], len(answered))
    # Server-side: each worker counted the connections it closed at the deadline, and said so once.
    assert summaries(log) == {logs.TOO_SLOW: CONNECTIONS}, log[-3000:]


def _readable(sock: socket.socket) -> bool:
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(0))
