"""How ``deniable serve`` runs the app under gunicorn: workers that slow clients cannot stall, and
logs that hold no client address and no time.

**Slow clients.**  Small deployments run ``deniable serve`` without a reverse proxy, so the
server itself must not let a few dozen connections that dribble their headers or body one
byte at a time hold every worker (gunicorn's threaded workers give each such connection a
thread until its request is complete).  :class:`Worker` is gunicorn's gevent worker: every
connection is a greenlet, so a slow one costs a few kilobytes, not a thread; and
:class:`Handler` gives each request :data:`READ_SECONDS` to arrive whole — request line,
headers and body, which it reads completely before the app sees the request — after which the
connection is closed.  An idle keep-alive connection is closed after the same time.

**Logs.**  :class:`Logger` writes gunicorn's error log without timestamps, and replaces
anything that looks like an IP address in a message (``Invalid request from ip=…``) by
``[address]``; :class:`Handler` does the same for gevent's own messages about bad requests and
for tracebacks: no log line ties an address, or a moment, to a request (docs/design.md,
invariant 6).  There is no access log.
"""

from __future__ import annotations

import io
import logging
import os
import re
import signal
import socket
import traceback

import gevent
from gunicorn import glogging
from gunicorn.workers.ggevent import GeventPyWSGIWorker, PyWSGIHandler

READ_SECONDS = 15  # a request must arrive whole within this time (an idle keep-alive ends then too)
MAX_BUFFERED_BODY = 1 << 20  # bodies up to this size are read before the app runs (the app limits to 64 KiB)

_ADDRESS = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:.])"
                      r"|\b(?:\d{1,3}\.){3}\d{1,3}\b")  # IPv6 (also with an IPv4 tail), then IPv4


def redact(text: str) -> str:
    """``text`` with every IPv4 or IPv6 address replaced by ``[address]``.

    >>> redact("Invalid request from ip=203.0.113.7: bad header")
    'Invalid request from ip=[address]: bad header'
    >>> redact("from ::ffff:10.0.0.1 and 2001:db8::1")
    'from [address] and [address]'
    """
    return _ADDRESS.sub("[address]", text)


class _Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:  # tracebacks are formatted here, then redacted
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


class Logger(glogging.Logger):
    """gunicorn's logger with no time in its lines and no address in its messages."""

    error_fmt = "[%(process)d] [%(levelname)s] %(message)s"

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for handler in self.error_log.handlers:
            handler.addFilter(_Redact())


class Handler(PyWSGIHandler):
    """A request must arrive whole (line, headers, body) within READ_SECONDS, or the connection ends."""

    def read_requestline(self):
        self._deadline = gevent.Timeout.start_new(READ_SECONDS, socket.timeout("request too slow"))
        try:
            return super().read_requestline()
        except socket.timeout:
            return None  # closes the connection quietly

    def get_environ(self):
        environ = super().get_environ()
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if 0 < length <= MAX_BUFFERED_BODY:
            # Read the body now, under the deadline: the app then never waits on a slow client.
            environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(length))
        self._deadline.close()
        return environ

    def log_request(self):
        """Nothing: there is no access log, so gunicorn's per-request record is not even built."""

    def log_error(self, msg, *args):
        """gevent's own messages about bad requests, without the client's address."""
        try:
            message = msg % args if args else msg
        except Exception:  # noqa: BLE001 - a message that does not format is still reported
            message = f"{msg!r} {args!r}"
        self.server.error_log.write(redact(str(message)) + "\n")

    def _log_error(self, kind, value, tb):
        """An exception that escaped the app: its traceback, without the request's environ
        (gevent would print it, client address included)."""
        if not issubclass(kind, gevent.GreenletExit):
            self.server.error_log.write(redact("".join(traceback.format_exception(kind, value, tb))))

    def handle_one_request(self):
        try:
            return super().handle_one_request()
        except socket.timeout:
            return None
        finally:
            deadline = getattr(self, "_deadline", None)
            if deadline is not None:
                deadline.close()


class Worker(GeventPyWSGIWorker):
    """gunicorn's gevent worker with :class:`Handler`."""

    wsgi_handler = Handler

    def init_process(self):
        # Until gunicorn installs the worker's own handlers, a TERM meets the handler inherited from
        # the master, which only queues it: a worker told to stop while booting (gevent's patching
        # makes that take a while) would run on until the graceful timeout.  Nothing is in flight
        # yet, so it may simply leave.
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
        super().init_process()


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
