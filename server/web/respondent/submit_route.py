"""``POST /api/v1/surveys/<slug>/responses``: the submission route, answered in front of Flask.

Every response sent through the JSON API arrives here, and for this route Flask's machinery
(request and application contexts, matching the path against every blueprint's rules, the
session interface, the before- and after-request hooks, the response object) cost about as much
server CPU as validating and storing the response (docs/benchmarks.md: the profile of
``scripts/bench_load.py``).  So :func:`install` puts a small WSGI application in front of Flask
that answers this one path and hands every other request to Flask untouched.  It keeps
everything Flask did for the route, in the same order:

1. a ``Host`` outside ``TRUSTED_HOSTS`` is refused (400, the message of :func:`..errors.untrusted_host`);
2. only POST is allowed (405, ``Allow: POST``);
3. the per-address submission limit, one count with the survey form (429 with ``Retry-After``);
4. a cross-site request is refused (403), a body that is not ``application/json`` (415);
5. an unknown slug or a draft is 404, a body over ``MAX_CONTENT_LENGTH`` 413 (chunked too), a
   body the client cut off 400 (nothing reads the body before this step);
6. the body is parsed, validated and stored (:func:`.group_commit.submit`: validated as
   :func:`deniable.server.store.responses.validate_reports` does, in a write transaction shared with
   the process's other waiting submissions), and answered ``201 {"id": …}`` once committed;

with the same security headers (:data:`..security.HEADERS`), a connection from the same pool,
the scrubber started after a write (:func:`..connections.pooled`), and every error in the API's
one shape ``{"error", "field"}``.  An unexpected exception is counted, not logged
(:mod:`..logs`: a log line would date the request), and answered 500 with nothing stored, or
raised when the app is testing, as Flask does.
"""

from __future__ import annotations

import json
import re
import sys
import time
from functools import partial

from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge, SecurityError
from werkzeug.http import HTTP_STATUS_CODES, parse_options_header
from werkzeug.wsgi import get_content_length, get_host, get_input_stream, get_path_info

from deniable.server.store.invitations import InvitationError
from deniable.server.store.responses import ReportError, SurveyClosedError
from deniable.server.store.surveys import StoredSurvey, get_launched_survey
from deniable.server.survey.parsing import parsed
from deniable.server.survey.strict_json import DuplicateKeyError, no_duplicate_keys

from ..connections import file_key, pooled
from ..errors import too_large_message, untrusted_host_message
from ..logs import CUT_OFF, TALLY
from ..ratelimit import RateLimited, limiter_of
from ..security import HEADERS
from .group_commit import submit

PATH = re.compile(r"/api/v1/surveys/([^/]+)/responses")


class _Refused(Exception):
    """An API error: ``status`` and the body ``{"error": message, "field": field}``."""

    def __init__(self, status: int, message: str, field: str | None, headers: tuple = ()):
        super().__init__(message)
        self.status, self.message, self.field, self.headers = status, message, field, headers


def _no_duplicate_keys(pairs):
    try:
        return no_duplicate_keys(pairs)
    except DuplicateKeyError as exc:  # the one check of every JSON the project reads, in the API's words
        raise ReportError(f"{exc.key}: appears more than once", exc.key) from None


def parse_body(raw: bytes) -> tuple[object, object]:
    """``(reports, invitation)`` from a submission's JSON body, or :class:`ReportError` naming the part."""
    body = parsed(partial(json.loads, object_pairs_hook=_no_duplicate_keys), raw,
                  lambda exc: ReportError("body: not valid JSON (UTF-8) or too deeply nested", "body"))
    if not isinstance(body, dict):
        raise ReportError('body: must be a JSON object {"reports": {...}}', "body")
    extra = sorted(set(body) - {"reports", "invitation"})
    if extra:
        raise ReportError(f"{extra[0][:64]}: unknown key (the body holds \"reports\" and, "
                          "for an invitation-only survey, \"invitation\")", extra[0][:64])
    if "reports" not in body:
        raise ReportError('reports: is required ({"reports": {"<question id>": <option index>}})', "reports")
    return body["reports"], body.get("invitation")


def read_body(environ, limit: int | None) -> bytes:
    """The request body; RequestEntityTooLarge past ``limit``, a chunked body's too.

    werkzeug stops a chunked body at the limit without a word (a truncated body that still
    parses would be taken for the whole), so one is read here up to one byte past the limit.
    """
    if limit is None or get_content_length(environ) is not None or "wsgi.input_terminated" not in environ:
        return get_input_stream(environ, max_content_length=limit).read()
    stream, parts, size = environ["wsgi.input"], [], 0
    while size <= limit:
        part = stream.read(limit + 1 - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > limit:
        raise RequestEntityTooLarge()
    return b"".join(parts)


def cross_site(environ, host: str) -> str | None:
    """Why the request looks cross-site, or None (its ``Origin`` is not this server's own)."""
    origin = environ.get("HTTP_ORIGIN")
    if origin is not None and origin.rstrip("/") != f"{environ['wsgi.url_scheme']}://{host}":
        return f"cross-origin requests are refused (Origin {origin[:100]!r})"
    if environ.get("HTTP_SEC_FETCH_SITE", "").lower() == "cross-site":
        return "cross-site requests are refused (Sec-Fetch-Site: cross-site)"
    return None


def _respond(start_response, status: int, payload: dict, headers=()) -> list[bytes]:
    """A JSON answer as Flask's ``jsonify`` writes it (sorted keys, ASCII, a final newline)."""
    body = (json.dumps(payload, separators=(",", ":"), sort_keys=True) + "\n").encode()
    return _answer(start_response, f"{status} {HTTP_STATUS_CODES[status].upper()}", body, headers)


def _answer(start_response, status: str, body: bytes, headers=()) -> list[bytes]:
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))), *headers,
                            ("Cache-Control", "no-store"), *HEADERS.items()])
    return [body]


SNAPSHOT_SECONDS = 1.0  # how long a process uses an open survey's lookup again (SubmitRoute.launched)


class SubmitRoute:
    """WSGI: the submission path answered here, everything else by ``flask_app`` (the next app)."""

    def __init__(self, app, next_app):
        self.app, self.next_app = app, next_app
        self.snapshots: dict[str, tuple] = {}  # slug → (until, file, the open survey as read): see launched()

    def launched(self, slug: str) -> StoredSurvey | None:
        """The survey as :func:`~deniable.server.store.surveys.get_launched_survey` reads it.

        An open survey's read is used again by this process for :data:`SNAPSHOT_SECONDS` (same file:
        path, device and inode), sparing every submission a pooled connection and a query.  Nothing
        is decided from it that the write does not decide again: the route answers 404 for an
        unknown slug or a draft (a launched survey never returns to draft and is never deleted), and
        the write transaction reads the status and invitation-only flag itself
        (:func:`~deniable.server.store.responses.insert_validated`), so a survey closed a moment ago
        accepts nothing (409, the same answer).  A survey that is not open is read every time."""
        file = file_key(self.app.config["DATABASE"], readonly=False)
        now = time.monotonic()
        found = self.snapshots.get(slug)
        if found is not None and file is not None and found[0] > now and found[1] == file:
            return found[2]
        with pooled(self.app) as db:
            stored = get_launched_survey(db, slug)
        if stored is not None and stored.status == "open":
            self.snapshots[slug] = (now + SNAPSHOT_SECONDS, file, stored)
        else:
            self.snapshots.pop(slug, None)
        return stored

    def __call__(self, environ, start_response):
        match = PATH.fullmatch(get_path_info(environ))
        if match is None:
            return self.next_app(environ, start_response)
        try:
            response_id = self.submit(environ, match.group(1))
        except _Refused as exc:
            return _respond(start_response, exc.status, {"error": exc.message, "field": exc.field}, exc.headers)
        except Exception:
            propagate = self.app.config["PROPAGATE_EXCEPTIONS"]
            if propagate if propagate is not None else (self.app.testing or self.app.debug):
                raise
            TALLY.exception("POST /api/v1/surveys/<slug>/responses", sys.exc_info())
            return _respond(start_response, 500, {
                "error": "An unexpected error happened on the server. Nothing was stored.", "field": None})
        # the 201 as _respond writes it, without the encoder: an id is URL-safe base64 (nothing to escape)
        return _answer(start_response, "201 CREATED", b'{"id":"%s"}\n' % response_id.encode())

    def submit(self, environ, slug: str) -> str:
        """Store one response; its id, or :class:`_Refused`."""
        config = self.app.config
        try:
            host = get_host(environ, config["TRUSTED_HOSTS"])
        except SecurityError as exc:
            raise _Refused(400, untrusted_host_message(config, environ.get("HTTP_HOST", ""), exc), "Host") from None
        if environ["REQUEST_METHOD"] != "POST":
            raise _Refused(405, "The method is not allowed for the requested URL.", None, (("Allow", "POST"),))
        limits = limiter_of(self.app)
        if limits.enabled:
            try:
                limits.hit("RATELIMIT_SUBMIT", "submit", environ.get("REMOTE_ADDR"))
            except RateLimited as exc:
                raise _Refused(429, exc.description, None, (("Retry-After", str(exc.retry_after)),)) from None
        why = cross_site(environ, host)
        if why:
            raise _Refused(403, why, "Origin")
        mimetype = parse_options_header(environ.get("CONTENT_TYPE", ""))[0].lower()
        if mimetype != "application/json":
            raise _Refused(415, f"Content-Type must be application/json, got {mimetype or 'none'!r}",
                          "Content-Type")
        stored = self.launched(slug)
        if stored is None:
            raise _Refused(404, f"no survey {slug!r}", "slug")
        limit = config["MAX_CONTENT_LENGTH"]
        try:
            raw = read_body(environ, limit)
        except RequestEntityTooLarge:
            raise _Refused(413, too_large_message(config), "body") from None
        except (OSError, ValueError, ClientDisconnected):  # the client left mid-body (under another server)
            TALLY.count(CUT_OFF)
            raise _Refused(400, "request body: the connection ended before the whole body arrived", "body") from None
        try:
            reports, invitation = parse_body(raw)
            return submit(self.app, stored, reports, invitation)
        except InvitationError as exc:
            raise _Refused(403, str(exc), exc.field) from None
        except SurveyClosedError:
            raise _Refused(409, f"This survey is closed: “{stored.survey.title}” no longer accepts answers. "
                               "Thank you for your interest.", "slug") from None
        except ReportError as exc:
            raise _Refused(400, str(exc), exc.field) from None


def install(app) -> None:
    """Answer the submission path in front of ``app``'s Flask handling (before any ProxyFix wraps it)."""
    app.wsgi_app = SubmitRoute(app, app.wsgi_app)
