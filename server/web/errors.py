"""Error responses: JSON ``{"error", "field"}`` under ``/api/`` (one shape for every API
error, :func:`api_error`), an HTML page elsewhere.

Bad input is always a 4xx with a message a person can act on, never a 500 page: every error the
project raises on purpose (:class:`deniable.errors.DeniableError`) that a view does not answer
itself is a 400 here, naming its field.  A failed
CSRF check on the survey form re-renders the form (with a fresh token) and says why.  An
unexpected exception is a 500 page; on the respondents' side it is counted in memory, not logged
(:mod:`.logs`: a log line would date the request that caused it), on a researcher's route
(:func:`.logs.researchers_route`) it is written at once with its traceback.
"""

from __future__ import annotations

from flask import current_app, jsonify, render_template, request
from flask_babel import lazy_gettext as _l
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException, InternalServerError, RequestEntityTooLarge, SecurityError

from deniable.errors import DeniableError

from . import logs
from .ratelimit import RateLimited

# Translated on the respondents' pages (server/web/i18n.py), English elsewhere.
TITLES = {400: _l("Something in the request was wrong"), 403: _l("Not allowed"), 404: _l("Not found"),
          405: _l("Method not allowed"), 409: _l("Not accepted now"), 410: _l("Gone"),
          413: _l("Too much data"), 415: _l("Unsupported content type"), 429: _l("Too many requests"),
          500: _l("Something went wrong")}


def _wants_json() -> bool:
    return request.path.startswith("/api/")


def api_error(status: int, message: str, field: str | None = None):
    """The one JSON error of ``/api/v1``: ``{"error": message, "field": what it is about or null}``."""
    return jsonify(error=message, field=field), status


def _respond(code: int, message: str, field: str | None = None):
    if _wants_json():
        return api_error(code, message, field)
    title = str(TITLES.get(code, "Error"))
    return render_template("error.html", code=code, title=title, message=message), code


def http_error(exc: HTTPException):
    return _respond(exc.code or 500, exc.description or exc.name)


def too_large_message(config) -> str:
    return f"request body: larger than the limit of {config.get('MAX_CONTENT_LENGTH')} bytes"


def too_large(exc: RequestEntityTooLarge):
    return _respond(413, too_large_message(current_app.config), "body")


def csrf_error(exc: CSRFError):
    message = (f"The form's security token was not accepted ({exc.description.rstrip('.')}). "
               "Please submit again; if this repeats, allow cookies for this site.")
    if request.blueprint == "respond" and request.view_args and "slug" in request.view_args:
        from .respondent.pages import render_with_error

        try:
            return render_with_error(request.view_args["slug"], message, 400)
        except HTTPException as inner:
            return http_error(inner)
    return _respond(400, message, "csrf_token")


def untrusted_host_message(config, host: str, exc: SecurityError) -> str:
    """What to do about a ``Host`` outside ``TRUSTED_HOSTS``."""
    host = "".join(c for c in host[:100] if c.isprintable())
    trusted = ", ".join(config.get("TRUSTED_HOSTS") or [])
    return (f"{exc.description} This server answers only to: {trusted}. If {host!r} is its public "
            f"name, start it with `deniable serve --public-host {host.split(':')[0] or 'NAME'}` "
            "(or add it to DENIABLE_TRUSTED_HOSTS).")


def untrusted_host(exc: SecurityError):
    """A ``Host`` outside ``TRUSTED_HOSTS``: no URL can be built for it, so no page template."""
    message = untrusted_host_message(current_app.config, request.headers.get("Host", ""), exc)
    if _wants_json():
        return api_error(400, message, "Host")
    return message, 400, {"Content-Type": "text/plain; charset=utf-8"}


def rate_limited(exc: RateLimited):
    response, code = _respond(429, exc.description)
    return response, code, {"Retry-After": str(exc.retry_after)}


def refused(exc: DeniableError):
    """Anything the project refuses on purpose (:mod:`deniable.errors`) that a view did not answer
    itself: 400 with the message, and the field it is about (JSON under ``/api/``)."""
    return _respond(400, str(exc), getattr(exc, "field", None))


def server_error(exc: InternalServerError):
    return _respond(500, "An unexpected error happened on the server. Nothing was stored.")


def init_app(app) -> None:
    logs.init_app(app)
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(RequestEntityTooLarge, too_large)
    app.register_error_handler(CSRFError, csrf_error)
    app.register_error_handler(RateLimited, rate_limited)
    app.register_error_handler(SecurityError, untrusted_host)
    app.register_error_handler(DeniableError, refused)
    app.register_error_handler(InternalServerError, server_error)
