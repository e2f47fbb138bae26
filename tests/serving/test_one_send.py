"""deniable's gevent handler sends an answer's head and a short body in one system call (gevent's own
handler makes two: a second send, and a second TCP segment, per submission)."""

from __future__ import annotations

import queue
import threading
import urllib.request

import pytest
from gunicorn.workers.ggevent import PyWSGIHandler

from deniable.server.cli.serving import Handler

BODY = b'{"id":"x"}\n'


def _app(environ, start_response):
    size = int(environ["PATH_INFO"].strip("/") or len(BODY))
    body = (BODY * (size // len(BODY) + 1))[:size]
    start_response("201 CREATED", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def _sends(base, path: str) -> tuple[list[bytes], bytes]:
    """The handler's ``_sendall`` calls for one request, and the body the client read."""

    class Counting(base):
        def _sendall(self, data):
            sent.append(bytes(data))
            super()._sendall(data)

    sent: list[bytes] = []
    ports, stop = queue.Queue(), threading.Event()

    def serve():  # a gevent hub of its own, in this thread
        import gevent
        from gevent import pywsgi

        server = pywsgi.WSGIServer(("127.0.0.1", 0), _app, handler_class=Counting, log=None, error_log=None)
        server.start()
        ports.put(server.server_port)
        while not stop.is_set():
            gevent.sleep(0.01)
        server.stop()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ports.get(timeout=10)}{path}", timeout=10) as response:
            body = response.read()
    finally:
        stop.set()
        thread.join(timeout=10)
    return sent, body


def test_the_head_and_a_short_body_go_in_one_send():
    sent, body = _sends(Handler, "/")
    assert body == BODY
    assert len(sent) == 1 and sent[0].startswith(b"HTTP/1.1 201 CREATED\r\n") and sent[0].endswith(b"\r\n\r\n" + BODY)


def test_gevents_own_handler_sends_them_apart():  # what the test above tells from
    sent, body = _sends(PyWSGIHandler, "/")
    assert body == BODY and len(sent) == 2 and sent[1] == BODY


@pytest.mark.parametrize("size", [65536, 65537, 300_000])
def test_a_long_body_is_sent_as_gevent_sends_it(size):
    sent, body = _sends(Handler, f"/{size}")
    assert len(body) == size
    assert len(sent) == (1 if size <= 65536 else 2)
