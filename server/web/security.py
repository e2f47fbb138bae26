"""Security headers, cookies, proxies and hosts.

- A strict Content-Security-Policy on every response (no inline script or style anywhere:
  ``tests/test_browser_csp.py`` visits every page in chromium and fails on any violation),
  ``X-Content-Type-Options``, ``Referrer-Policy: no-referrer`` and ``X-Frame-Options``.
- The session cookie is HttpOnly and SameSite=Lax, and Secure whenever the request came over
  HTTPS (or ``SESSION_COOKIE_SECURE`` is set).
- ``PROXY_FIX_X_FOR`` / ``PROXY_FIX_X_PROTO`` (default 0): how many reverse proxies in front
  of the app to trust for ``X-Forwarded-For`` / ``X-Forwarded-Proto`` (werkzeug's ProxyFix),
  so the rate limits see the client and HTTPS is recognised behind a TLS proxy.
- ``TRUSTED_HOSTS`` (Flask): the host names the app answers to, ``localhost`` and ``127.0.0.1``
  unless configured (``deniable serve --public-host NAME``); another ``Host`` gets a 400 that says
  how to add it.  This stops DNS rebinding, and links the app builds are never built from a
  ``Host`` it does not know: invitation links use ``BASE_URL`` (:func:`public_url`).
- ``Cache-Control: no-store`` on every response but the static files: no dashboard page, export
  or survey page is kept by a browser or a shared cache.
"""

from __future__ import annotations

from flask import abort, current_app, request, url_for
from flask.sessions import SecureCookieSessionInterface
from werkzeug.middleware.proxy_fix import ProxyFix

from deniable.server.survey.parsing import number

CSP = (
    "default-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)


# Every response's security headers (and Cache-Control: no-store but on the static files).
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"}
STATIC_ENDPOINTS = {"static", "dashboard.static"}
DEFAULT_TRUSTED_HOSTS = ["localhost", "127.0.0.1"]


def public_url(endpoint: str, **values) -> str:
    """An absolute URL for people outside (invitation links): ``BASE_URL`` + the path when it is
    configured, else the request's own (trusted) host."""
    base = current_app.config.get("BASE_URL")
    if base:
        return base.rstrip("/") + url_for(endpoint, **values)
    return url_for(endpoint, _external=True, **values)


def _headers(response):
    if request.endpoint not in STATIC_ENDPOINTS:
        response.headers.setdefault("Cache-Control", "no-store")
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _reject_unnamed_form_fields():
    """A multipart part whose name werkzeug cannot read comes back as a ``None`` key, which
    Flask-WTF's CSRF check (and our forms) cannot handle: refuse it first, as a 400.  The JSON
    API reads no forms (it answers 415 to them)."""
    if request.method in ("POST", "PUT", "PATCH", "DELETE") and not request.path.startswith("/api/") \
            and request.mimetype in ("multipart/form-data", "application/x-www-form-urlencoded"):
        if any(not isinstance(key, str) for key in request.form):
            abort(400, "form: a field has no readable name")


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions, with the cookie marked Secure on HTTPS requests."""

    def get_cookie_secure(self, app) -> bool:
        return bool(app.config["SESSION_COOKIE_SECURE"]) or request.is_secure

    def open_session(self, app, request):
        # Without a session cookie there is nothing to verify: skip building the itsdangerous
        # serializer, which every cookie-less JSON API submission would otherwise pay for.
        if app.secret_key and not request.cookies.get(self.get_cookie_name(app)):
            return self.session_class()
        return super().open_session(app, request)


def _proxies(app, setting: str) -> int:
    value = app.config.get(setting, 0)
    return number(value, setting, int, f"{setting} (DENIABLE_{setting}): {value!r} is not a number of proxies")


def init_app(app) -> None:
    x_for, x_proto = _proxies(app, "PROXY_FIX_X_FOR"), _proxies(app, "PROXY_FIX_X_PROTO")
    if x_for or x_proto:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=x_for, x_proto=x_proto)
    app.session_interface = SessionInterface()
    app.before_request(_reject_unnamed_form_fields)  # registered before CSRFProtect's check
    app.after_request(_headers)
