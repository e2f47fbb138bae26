"""How ``deniable serve`` runs the app under gunicorn: workers that slow clients cannot stall, and
logs in which no line can be dated to a request.

**Slow clients.**  Small deployments run ``deniable serve`` without a reverse proxy, so the
server itself must not let connections that dribble their headers or body, or go silent, hold
the server (gunicorn's threaded workers give each such connection a thread until its request is
complete).  :class:`Worker` is gunicorn's gevent worker: every connection is a greenlet, so a
slow one costs a few kilobytes, not a thread; and :class:`Handler` gives each request
:data:`READ_SECONDS` (``deniable serve --read-timeout``) to arrive whole — request line, headers
and body, chunked or not, every route — after which the connection is closed.  The body is read
completely, up to the app's ``MAX_CONTENT_LENGTH``, before the app sees the request: the app
gets it as an ordinary ``Content-Length`` body and never waits on a client; a longer body is
not read at all (the app answers 413 in its own shape, and the connection is closed); a body
cut off by the client, or chunked encoding that does not parse, is a 400 without the app.  An
idle keep-alive connection is closed after the same time.

**Connections per address.**  One address may hold at most ``deniable serve
--connections-per-address`` connections open at once, over all the workers (:data:`PER_ADDRESS`,
counted in shared memory under a keyed hash of the address:
:class:`deniable.server.web.ratelimit_storage.ConnectionCounts`).  :class:`Server` checks as it
accepts, before a greenlet is spawned or a byte read: a connection over the bound is reset at once
(``SO_LINGER`` 0: no TIME_WAIT for a flood's churn) and counted in the summary.  A connection is
released when its greenlet ends, however the connection ended; a worker killed outright has its
count forgotten by the master (:func:`_pre_fork`, :func:`_child_exit`).  Behind a reverse proxy
every connection comes from the proxy, so ``serve`` sets no bound there (the proxy must).

**Logs.**  No request on the respondents' side writes a log line (a supervisor's timestamp on
the line would date the request): bad requests, bodies cut off, connections closed at the
deadline, warnings and exceptions are counted in memory (:mod:`deniable.server.web.logs`) and each
worker writes the counts at most once a day and when it stops.  Only an unexpected exception on a
researcher's route (the dashboard, ``/auth/…``, the researchers' results API:
:func:`deniable.server.web.logs.researchers_route`) is written at once, with its traceback.
:class:`Logger` gives gunicorn's error log, Flask's logger and every other the one format of
:mod:`~deniable.server.web.logs`: no time, no address.  There is no access log.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import struct
import sys

import gevent
from gevent.pywsgi import Input
from gunicorn import glogging
from gunicorn.workers.ggevent import GeventPyWSGIWorker, PyWSGIHandler, PyWSGIServer

from deniable.server.web import logs
from deniable.server.web.ratelimit_storage import COUNTED, REFUSED, ConnectionCounts

READ_SECONDS = 15.0  # a request must arrive whole within this time (an idle keep-alive ends then too)
DEFAULT_MAX_BODY = 64 * 1024  # when the app sets no MAX_CONTENT_LENGTH
_NO_BODY = Input(None, 0)  # what gevent discards after the response: nothing, the body was read before
PER_ADDRESS: ConnectionCounts | None = None  # the bound on one address's connections (None: none); set before the fork
REFUSED_CONNECTIONS = "connections reset as they were accepted: their address held --connections-per-address already"
_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() resets the connection


def _plain_400(message: str) -> bytes:
    body = message.encode()
    return (b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


_BAD_BODY = _plain_400("request body: cut off before its end, or chunked encoding that does not parse")
_BAD_REQUEST = _plain_400("request: the request line or the headers do not parse")


class _BodyRefused(Exception):
    """The body ended before its length, or its chunked encoding does not parse."""


class Logger(glogging.Logger):
    """gunicorn's logger, configured by :func:`deniable.server.web.logs.configure` (for every logger)."""

    error_fmt = logs.FORMAT

    def setup(self, cfg) -> None:
        super().setup(cfg)
        logs.configure(self.error_log.handlers)


class Handler(PyWSGIHandler):
    """A request must arrive whole (line, headers, body) within READ_SECONDS, or the connection ends."""

    def handle(self):
        try:
            super().handle()
        except OSError:
            pass  # the client is gone (an answer sent to a closed connection): nothing to count twice
        except Exception:  # noqa: BLE001 - gevent would print it with the time and the client's address
            logs.TALLY.exception("the connection handler", sys.exc_info())

    def read_requestline(self):
        self._deadline = gevent.Timeout.start_new(READ_SECONDS, TimeoutError("request too slow"))
        try:
            return super().read_requestline()
        except TimeoutError:
            return None  # an idle connection (or one that never sent a line) closes quietly

    def get_environ(self):
        environ = super().get_environ()
        try:
            self._read_body(environ)
        except TimeoutError:
            raise
        except (OSError, ValueError):  # the client left mid-body, or chunks that do not parse (gevent's errors)
            raise _BodyRefused from None
        self._deadline.close()
        return environ

    def _read_body(self, environ) -> None:
        """Read the body now, under the deadline, and hand it to the app as a ``Content-Length`` body."""
        coding = environ.pop("HTTP_TRANSFER_ENCODING", "")
        chunked = coding.lower() == "chunked"
        if coding and not chunked:
            raise _BodyRefused  # a Transfer-Encoding gevent would not read
        length = self.content_length or 0
        if not chunked and not length:
            return
        limit = self._max_body()
        body = b"" if length > limit else self.wsgi_input.read(limit + 1 if chunked else length)
        self.wsgi_input = _NO_BODY
        if length > limit or len(body) > limit:
            # Not read (or not to its end): the app answers 413 from the length alone, in its own
            # shape, and the connection closes, since the rest of the body was never read.
            environ["CONTENT_LENGTH"], environ["wsgi.input"] = str(max(length, limit + 1)), io.BytesIO()
            self.close_connection = True
        else:
            environ["CONTENT_LENGTH"], environ["wsgi.input"] = str(len(body)), io.BytesIO(body)

    def _max_body(self) -> int:
        config = getattr(self.server.application, "config", None) or {}
        return int(config.get("MAX_CONTENT_LENGTH") or DEFAULT_MAX_BODY)

    def handle_one_request(self):
        try:
            return super().handle_one_request()
        except TimeoutError:
            logs.TALLY.count(logs.TOO_SLOW)
            return None
        except _BodyRefused:
            logs.TALLY.count(logs.CUT_OFF)
            return "400", _BAD_BODY
        finally:
            deadline = getattr(self, "_deadline", None)
            if deadline is not None:
                deadline.close()

    def _handle_client_error(self, ex):
        """A request line or headers that do not parse, or that did not arrive in time: counted, not logged."""
        if isinstance(ex, TimeoutError):
            logs.TALLY.count(logs.TOO_SLOW)
            return None
        logs.TALLY.count(logs.UNPARSED)
        return "400", _BAD_REQUEST

    def _write_with_headers(self, data):
        """gevent's, with the status line, the headers and the first data in one system call: gevent
        sends the head and the data in two, and a submission's whole answer is a head and one short
        body.  (The head is collected from gevent's own ``_sendall`` call, so it is gevent's bytes.)"""
        if len(data) > 65536:  # (a file: not copied to save a call)
            return super()._write_with_headers(data)
        sendall, parts = self._sendall, []
        self._sendall = parts.append  # the head, then the data: collected, sent below as one
        try:
            super()._write_with_headers(data)
        finally:
            del self._sendall
        sendall(b"".join(parts))

    def log_request(self):
        """Nothing: there is no access log, so gunicorn's per-request record is not even built."""

    def log_error(self, msg, *args):
        """gevent's own messages about bad requests: counted, not written."""
        logs.TALLY.count(logs.UNPARSED)

    def _log_error(self, kind, value, tb):
        """An exception that escaped the app: counted, with its traceback kept for the summary."""
        if not issubclass(kind, gevent.GreenletExit):
            logs.TALLY.exception("the app (outside Flask)", (kind, value, tb))


class Server(PyWSGIServer):
    """gunicorn's gevent WSGI server, with the bound on each address's open connections (:data:`PER_ADDRESS`).

    gevent's accept loop calls :meth:`do_read` for each connection to start (up to ``max_accept`` in
    a row while the listening socket has more) and :meth:`do_close` once its greenlet is done —
    after the handler returns, raises, or is killed — or when the greenlet could not be spawned.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._counted: dict = {}  # socket → the key its address is counted under

    def do_read(self):
        table = PER_ADDRESS
        for _ in range(self.max_accept):  # a refused connection: take the next one at once, a bounded number
            accepted = super().do_read()
            if accepted is None or table is None:
                return accepted
            sock, address = accepted
            key = table.key(address)
            verdict = table.enter(key) if key is not None else None  # None: not an IP address, not bounded
            if verdict == REFUSED:
                self._refuse(sock)
                continue
            if verdict == COUNTED:
                self._counted[sock] = key
            return accepted
        return None

    @staticmethod
    def _refuse(sock) -> None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
        except OSError:
            pass  # already reset by the client
        sock.close()
        logs.TALLY.count(REFUSED_CONNECTIONS)

    def do_close(self, sock, *args):
        try:
            super().do_close(sock, *args)
        finally:
            key = self._counted.pop(sock, None)
            if key is not None:
                PER_ADDRESS.leave(key)


def _pre_fork(arbiter, worker) -> None:
    """gunicorn's master, before it forks a worker: the worker's column of :data:`PER_ADDRESS`."""
    if PER_ADDRESS is not None:
        worker.deniable_column = PER_ADDRESS.claim()  # None if every column is taken: it counts nothing


def _child_exit(arbiter, worker) -> None:
    """gunicorn's master, once a worker has exited (whatever ended it): its connections are closed."""
    column = getattr(worker, "deniable_column", None)
    if PER_ADDRESS is not None and column is not None:
        worker.deniable_column = None
        PER_ADDRESS.release(column)


def _worker_exit(arbiter, worker) -> None:
    """gunicorn runs this in the exiting worker, and in the master for a worker that vanished
    before it was reaped (``kill_worker``: ESRCH); only the master's counts."""
    if os.getpid() == arbiter.pid:
        _child_exit(arbiter, worker)


HOOKS = {"pre_fork": _pre_fork, "child_exit": _child_exit, "worker_exit": _worker_exit}


class Worker(GeventPyWSGIWorker):
    """gunicorn's gevent worker with :class:`Server` and :class:`Handler`, and the summary of what went wrong."""

    server_class = Server
    wsgi_handler = Handler

    def init_process(self):
        if PER_ADDRESS is not None:
            PER_ADDRESS.column = getattr(self, "deniable_column", None)  # the column the master gave it
        # Until gunicorn installs the worker's own handlers, a TERM meets the handler inherited from
        # the master, which only queues it: a worker told to stop while booting (gevent's patching
        # makes that take a while) would run on until the graceful timeout.  Nothing is in flight
        # yet, so it may simply leave.
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
        from deniable.server.store import scrub

        scrub.leave_to_parent()  # the master's scrubber ticks for the whole server
        super().init_process()

    def run(self):
        # gevent's hub prints a failed greenlet with the time (and the socket, address included).
        gevent.get_hub().print_exception = lambda context, *exc_info: logs.TALLY.exception("a greenlet", exc_info)
        summaries = gevent.spawn(self._summaries)
        try:
            super().run()
        finally:
            summaries.kill()
            logs.summarize()

    @staticmethod
    def _summaries():
        while True:
            gevent.sleep(logs.SUMMARY_SECONDS)
            logs.summarize()


def run_gunicorn(options: dict) -> None:
    """Run :func:`deniable.server.web.app.create_app` under gunicorn with ``options`` (its settings)."""
    from gunicorn.app.base import BaseApplication

    class Application(BaseApplication):
        def load_config(self):
            for key, value in options.items():
                if key in self.cfg.settings:  # settings newer than the installed gunicorn are skipped
                    self.cfg.set(key, value)

        def load(self):
            from deniable.server.web.app import create_app

            return create_app()

    Application().run()
