"""The log of a real ``deniable serve`` under attack: systemd and Docker put a time on every line a
process writes, so no request may cause a line.  What went wrong is counted, and each worker
writes the counts when it stops (and at most once a day): no time, no address, no port."""

from __future__ import annotations

import re
import socket
import sqlite3
import sys
import time

import pytest

from deniable.server.web import logs
from support.real_server import SLUG, Server, summaries

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                   reason="sends from many loopback addresses")]

TIMES = 20  # each attack, from as many addresses
API = f"/api/v1/surveys/{SLUG}/responses"
FORM = f"/s/{SLUG}"
VALID = b'{"reports": {"drugs": 1, "cheated": 0, "year": 2}}'
TIME_OF_DAY = re.compile(r"\b\d{1,2}:\d{2}(:\d{2})?\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{2}/\w{3}/\d{4}\b")


def _head(path: str, content_type: str, *, length: int | None = None) -> bytes:
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: {content_type}\r\n"
            f"{framing}\r\n\r\n").encode()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


JSON, FORM_TYPE = "application/json", "application/x-www-form-urlencoded"
ATTACKS = {  # what is sent, and whether the client then hangs up without reading the answer
    "disconnect mid-body (API)": (_head(API, JSON, length=500) + b'{"reports": {', True),
    "disconnect mid-body (form)": (_head(FORM, FORM_TYPE, length=500) + b"drugs=1&", True),
    "disconnect mid-chunk (API)": (_head(API, JSON) + b"40\r\n{\"reports", True),
    "disconnect mid-chunk (form)": (_head(FORM, FORM_TYPE) + _chunk(b"drugs=1") + b"20\r\nyea", True),
    "chunked encoding that does not parse": (_head(API, JSON) + b"zz\r\nnot a chunk\r\n", False),
    "a body that is not JSON": (_head(API, JSON, length=9) + b"{not json", False),
    "a form without its CSRF token": (_head(FORM, FORM_TYPE, length=7) + b"drugs=1", False),
    "an oversized body (Content-Length)": (_head(API, JSON, length=100_000) + b"{", False),
    "an oversized chunked body (API)": (_head(API, JSON) + _chunk(b" " * 70_000) + b"0\r\n\r\n", False),
    "an oversized chunked body (form)": (_head(FORM, FORM_TYPE) + _chunk(b"a" * 70_000) + b"0\r\n\r\n", False),
    "a request line that is not HTTP": (b"NOT HTTP AT ALL\r\n\r\n", False),
    "a header that does not parse": (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: many\r\n\r\n", False),
}
SILENT = _head(API, JSON) + _chunk(b'{"rep')  # then nothing: closed at the deadline


def _attack(port: int, source: str, payload: bytes, hang_up: bool) -> tuple[int, bytes]:
    """Send ``payload`` from ``source``; the source port used and what came back (until the server closes)."""
    with _send(port, source, payload) as sock:
        return sock.getsockname()[1], b"" if hang_up else _answer(sock)


def _send(port: int, source: str, payload: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), source_address=(source, 0), timeout=30)
    sock.sendall(payload)
    return sock


def _answer(sock: socket.socket) -> bytes:
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except ConnectionResetError:
        pass
    return answer


def test_attacks_write_no_line_and_the_summary_has_no_time_address_or_port(data):
    server = Server(data, "--read-timeout", "2")
    ports, answers = [], {}
    try:
        time.sleep(1)
        started = server.log.read_text()
        silent = [_send(server.port, f"127.0.2.{10 + i}", SILENT) for i in range(TIMES)]
        ports += [sock.getsockname()[1] for sock in silent]
        for i in range(TIMES):
            source = f"127.0.{1 + i // 200}.{10 + i % 200}"
            for name, (payload, hang_up) in ATTACKS.items():
                port, answer = _attack(server.port, source, payload, hang_up)
                ports.append(port)
                answers.setdefault(name, set()).add(answer.split(b"\r\n", 1)[0])
        # An unexpected failure on the submission path (the file broken by another process): a 500.
        broken = sqlite3.connect(data / "deniable.db")
        broken.execute("ALTER TABLE counts RENAME TO counts_elsewhere")
        broken.commit()
        broken.close()
        for i in range(TIMES):
            port, answer = _attack(server.port, f"127.0.3.{10 + i}", _head(API, JSON, length=len(VALID)) + VALID,
                                   False)
            ports.append(port)
            answers.setdefault("a 500", set()).add(answer.split(b"\r\n", 1)[0])
        answers["a silent chunked body"] = {_answer(sock) for sock in silent}  # closed at the deadline
        for sock in silent:
            sock.close()
        time.sleep(1)
        during = server.log.read_text()
    finally:
        log = server.stop()
    assert during == started, f"lines written while under attack:\n{during[len(started):][:2000]}"
    assert answers["disconnect mid-body (API)"] == {b""}  # nobody listened
    assert answers["chunked encoding that does not parse"] == {b"HTTP/1.1 400 Bad Request"}
    assert answers["a body that is not JSON"] == {b"HTTP/1.1 400 BAD REQUEST"}
    assert answers["a form without its CSRF token"] == {b"HTTP/1.1 400 BAD REQUEST"}
    assert answers["an oversized chunked body (API)"] == answers["an oversized chunked body (form)"] \
        == answers["an oversized body (Content-Length)"] == {b"HTTP/1.1 413 REQUEST ENTITY TOO LARGE"}
    assert answers["a silent chunked body"] == {b""}  # closed at the deadline
    assert answers["a 500"] == {b"HTTP/1.1 500 INTERNAL SERVER ERROR"}

    counted = summaries(log)
    assert counted[logs.CUT_OFF] == 5 * TIMES  # four cut off, one not chunked encoding
    assert counted[logs.UNPARSED] == 2 * TIMES
    assert counted[logs.TOO_SLOW] == TIMES
    assert counted["INFO messages from flask_wtf.csrf"] == TIMES
    errors = [kind for kind in counted if kind.startswith("unexpected errors in POST /api/v1/surveys/<slug>/responses")]
    assert len(errors) == 1 and "OperationalError" in errors[0] and counted[errors[0]] == TIMES, counted
    assert "no such table: counts" in log  # the first traceback of the kind, for the operator

    # The whole log: no time of day, no date, no address, no client's port.
    assert not TIME_OF_DAY.search(log), TIME_OF_DAY.search(log)
    assert "127.0." not in log
    # gunicorn names its processes (pids share the ports' range) and the port it listens on
    processes = {int(n) for n in re.findall(r"^\[(\d+)\] ", log, re.M)}
    numbers = {int(n) for line in log.splitlines() for n in re.findall(r"\d+", re.sub(r"^\[\d+\] ", "", line))}
    numbers -= processes | {server.port}
    assert not numbers & set(ports), sorted(numbers & set(ports))[:5]
