"""One logging configuration for gunicorn, Flask and the app, in which no line can be dated to a respondent's request.

systemd and Docker put a time on every line a process writes, so a line written *because of* a
request dates that request, whatever the line says.  So no request on the respondents' side
writes a line: what goes wrong with requests (a request that does not parse, a body cut off or
too slow, a warning, an unexpected exception) is counted in memory, in :data:`TALLY`, and each
server process writes the counts as a summary at most once a day (:data:`SUMMARY_SECONDS`, from
its own start, not from any request) and when it stops.  A summary holds counts and, for an
unexpected exception, one traceback; no time, no address (:func:`redact`), no port.  A warning
(numpy's ``RuntimeWarning``, say) is a log record too (:func:`configure`), counted like any other.

**The researchers' routes** (:func:`researchers_route`: the dashboard, ``/auth/…`` and the
researchers' results API, every route under the dashboard's parent blueprint) are the exception
for one kind of line: their unexpected exception is written at once, ``unexpected error in
METHOD RULE (answered 500)`` and its traceback — the route's rule, never its path (an invitation
link's token is in its path), no address, and every value the request carried (path, query,
form, cookies, body) blanked out of the exception's message.  Dating a researcher's page view
tells nothing about any respondent, and a researcher who met a 500 needs the traceback now, not
tomorrow.

:func:`configure` gives gunicorn's error log, Flask's logger and every other logger of the
process one format, ``[pid] [LEVEL] message``, and one filter (:class:`Redact`);
:func:`init_app` takes Flask's own handler (which stamps each line with the time) off the app's
logger and turns its exception records (Flask's ``Exception on /s/… [POST]``) into counts.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import traceback
from collections import Counter

FORMAT = "[%(process)d] [%(levelname)s] %(message)s"
SUMMARY_SECONDS = 24 * 60 * 60

# What the server counts instead of logging (the words of the summary).
UNPARSED = "requests whose request line or headers did not parse (answered 400)"
TOO_SLOW = "connections closed at the deadline before their request had arrived whole"
CUT_OFF = "request bodies cut off by the client or not valid chunked encoding (answered 400)"

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


class Redact(logging.Filter):
    """No address in a message or a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:  # tracebacks are formatted here, then redacted
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


class Tally:
    """What went wrong with requests, counted in this process's memory until the next summary."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._examples: dict[str, str] = {}

    def count(self, kind: str, example: str | None = None) -> None:
        with self._lock:
            self._counts[kind] += 1
            if example is not None:
                self._examples.setdefault(kind, example)

    def exception(self, where: str, exc_info) -> None:
        """An unexpected exception while serving ``where`` (a route, never a path with its values)."""
        kind, value, tb = exc_info
        frames = traceback.extract_tb(tb)
        place = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
        self.count(f"unexpected errors in {where}: {kind.__name__}{place} (answered 500)",
                   redact("".join(traceback.format_exception(kind, value, tb))).rstrip())

    def take(self) -> list[tuple[str, int, str | None]]:
        """The counts since the last call, ``(kind, count, example)``, most frequent first; and reset."""
        with self._lock:
            counts, examples = self._counts, self._examples
            self._counts, self._examples = Counter(), {}
        return [(kind, n, examples.get(kind)) for kind, n in counts.most_common()]

    def peek(self, kind: str) -> int:
        with self._lock:
            return self._counts[kind]


TALLY = Tally()  # one per process: gunicorn's workers each count and summarise their own


def summarize(logger: logging.Logger | None = None) -> int:
    """Write the counts since the last summary (one line each, no time) and start afresh; how many lines."""
    logger = logger or logging.getLogger("deniable.requests")
    taken = TALLY.take()
    for kind, n, example in taken:
        logger.warning("since the last summary: %d × %s%s", n, kind, f"; the first:\n{example}" if example else "")
    return len(taken)


class CountDuringRequests(logging.Filter):
    """A record logged while a request is served (Flask-WTF's "The CSRF token is missing.", say) is
    counted by its logger and level, with its first message kept for the summary, not written; but
    a researcher's route's unexpected exception (:class:`_CountExceptions` marks it) is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        from flask import has_request_context

        if not has_request_context() or getattr(record, WRITE_AT_ONCE, False):
            return True
        TALLY.count(f"{record.levelname} messages from {record.name}", redact(record.getMessage()))
        return False


def configure(handlers) -> None:
    """Give ``handlers`` (gunicorn's error log) the one format and filters, and send every logger there.

    Flask's app logger, the app's own and any library's reach the root logger, which writes
    through the same handlers: one configuration, one format, no time in any line, and no line
    written while a request is being served (:class:`CountDuringRequests`).
    """
    formatter = logging.Formatter(FORMAT)
    for handler in handlers:
        handler.setFormatter(formatter)
        for kind in (CountDuringRequests, Redact):  # in this order: what is counted is not written
            if not any(isinstance(f, kind) for f in handler.filters):
                handler.addFilter(kind())
    root = logging.getLogger()
    root.handlers = list(handlers)
    root.setLevel(logging.INFO)
    # A warning (numpy's RuntimeWarning, say) would go straight to stderr, with the file and line
    # and no filter: as a record of ``py.warnings`` it is counted during a request like any other.
    logging.captureWarnings(True)


WRITE_AT_ONCE = "deniable_write_at_once"  # the attribute that lets a record through CountDuringRequests
RESEARCHERS_BLUEPRINTS = frozenset({"dashboard", "auth", "join"})  # and every blueprint under "dashboard"


def researchers_route() -> bool:
    """Whether the request being served is on a researcher's route: the dashboard (every blueprint
    registered under its parent, the researchers' results API ``/api/v1/surveys/<slug>/estimates``
    included), ``/auth/login``, ``/auth/logout`` and ``/auth/join/<token>``.  Every other route —
    the survey pages, the respondents' API, the embed files, the public results page, ``/`` and
    ``/static`` — and a path that matches no route is not."""
    from flask import has_request_context, request

    if not has_request_context() or request.url_rule is None:
        return False
    return (request.blueprint or "").split(".")[0] in RESEARCHERS_BLUEPRINTS


class _CountExceptions(logging.Filter):
    """Flask's ``Exception on …`` records (and any other with a traceback) become counts, not lines;
    on a researcher's route, one line at once: the route's rule and the traceback (module notes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.exc_info:
            return True
        if researchers_route():
            # Flask's message has the request's path (an invitation's token is in one): the rule instead
            record.msg, record.args = f"unexpected error in {_route()} (answered 500)", None
            record.exc_text = redact(_without_request_values(traceback.format_exception(*record.exc_info))).rstrip()
            setattr(record, WRITE_AT_ONCE, True)
            return True
        TALLY.exception(_route(), record.exc_info)
        return False


def _without_request_values(lines: list[str]) -> str:
    """A formatted traceback with the request's values blanked out of its unindented lines (the
    exceptions' own messages: one may quote a value); the frames' lines (indented) are code."""
    values = sorted(_request_values(), key=len, reverse=True)
    out = []
    for chunk in lines:
        for line in chunk.splitlines(keepends=True):
            if not line.startswith(" "):
                for value in values:
                    line = line.replace(value, "[request value]")
            out.append(line)
    return "".join(out)


def _request_values() -> set[str]:
    """What the request carried — its path's values (an invitation's token), query, form fields,
    cookies and body — each of at least 8 characters (shorter ones would blank out line numbers)."""
    from flask import request

    values = {str(v) for v in (request.view_args or {}).values()}
    for source in (request.args, request.cookies, *((request.form,) if request.mimetype in _FORMS else ())):
        for _, items in source.lists():
            values.update(items)
    values.add(request.headers.get("Cookie", ""))
    values.add(request.get_data(cache=True, as_text=True))
    return {v for v in values if len(v) >= 8}


_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _route() -> str:
    from flask import has_request_context, request

    if not has_request_context():
        return "the app"
    rule = request.url_rule.rule if request.url_rule is not None else "an unmatched path"
    return f"{request.method} {rule}"


def init_app(app) -> None:
    """No line of Flask's own format (it has the time), and exceptions counted, not written (but a
    researcher's route's, :class:`_CountExceptions`)."""
    from flask.logging import default_handler

    app.logger.removeHandler(default_handler)
    if not any(isinstance(f, _CountExceptions) for f in app.logger.filters):
        app.logger.addFilter(_CountExceptions())
