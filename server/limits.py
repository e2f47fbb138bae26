"""Rate limits (Flask-Limiter): login attempts and submissions, counted across all workers.

The counters live in :mod:`server.limits_sqlite` (``<DATABASE>.limits``) so every gunicorn
worker sees the same counts.  They are keyed by a keyed hash of the client address (HMAC with
the app's secret key), never the address itself: the server keeps no IP address anywhere
(DESIGN.md, invariant 2), and the counters, which expire within minutes, cannot be joined to
the responses, which carry no address at all.

Settings (``DENIABLE_`` environment variables or the instance ``config.py``):
``RATELIMIT_LOGIN`` (default ``10 per minute``), ``RATELIMIT_SUBMIT`` (default ``300 per minute``,
one count for the survey page and the JSON API together: generous, because many respondents can
share one address behind a NAT — 5 a second sustained, and a whole classroom at once as a
burst), ``RATELIMIT_ENABLED`` (default true) and ``RATELIMIT_STORAGE_URI``.  A limit that does
not parse stops the app at start-up.  Behind a reverse proxy set ``PROXY_FIX_X_FOR`` (see
:mod:`server.security`) so the address is the client's, not the proxy's.  If the counters file
cannot be used, each worker counts in memory until it can (Flask-Limiter's in-memory fallback):
never a 500, never no limit.

Cost (``python scripts/bench_limits.py``): about 15–20 µs per hit in the storage, 120–170 µs
per limited request in all (most of it Flask-Limiter's own bookkeeping), and about 10 µs on
requests that are not limited (see :func:`init_app`).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time

from flask import current_app, request
from flask_limiter import Limiter
from limits import parse_many

from . import limits_sqlite  # noqa: F401  registers the deniable+sqlite:// storage scheme

DEFAULTS = {
    "RATELIMIT_LOGIN": "10 per minute",
    "RATELIMIT_SUBMIT": "300 per minute",
    "RATELIMIT_STRATEGY": "fixed-window",
    # X-RateLimit-* headers on every response cost two more counter reads per request; a refused
    # request gets Retry-After from server.errors instead.
    "RATELIMIT_HEADERS_ENABLED": False,
    # If the counters file cannot be used (full disk, bad path, permissions), each worker counts
    # in its own memory and retries the file now and then: limits stay, per worker, and neither
    # a submission nor a login becomes a 500 because of a rate-limit counter.
    "RATELIMIT_IN_MEMORY_FALLBACK_ENABLED": True,
}


def client_key() -> str:
    """A keyed hash of the client address: stable within the app, not reversible to the address."""
    secret = current_app.config["SECRET_KEY"].encode()
    address = (request.remote_addr or "unknown").encode()
    return hmac.new(secret, address, hashlib.sha256).hexdigest()[:24]


def retry_after() -> int:
    """Seconds until the limit that refused this request resets (inside a 429 handler)."""
    current = current_app.extensions["deniable.limiter"].current_limit
    return max(1, math.ceil(current.reset_at - time.time())) if current else 60


# endpoint → (setting with its limit, methods it applies to, shared scope): the survey page and
# the JSON API share one submission count, so a script gains nothing by alternating between them.
LIMITED = {
    "auth.login": ("RATELIMIT_LOGIN", ["POST"], None),
    "respond.submit": ("RATELIMIT_SUBMIT", None, "submit"),
    "api.submit": ("RATELIMIT_SUBMIT", None, "submit"),
}


def checked_limit(app, setting: str) -> str:
    """The limit in ``setting``, refused at start-up if ``limits`` cannot parse it.

    Flask-Limiter would otherwise log the error on each request and apply no limit at all.
    """
    value = app.config[setting]
    try:
        parse_many(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{setting} (DENIABLE_{setting}): {value!r} is not a rate limit; "
                         "write e.g. '10 per minute' or '5/second;300/minute'") from exc
    return value


def init_app(app) -> Limiter:
    """Give the app its own limiter (settings are per app) and limit the endpoints in LIMITED.

    Flask-Limiter also checks every request in a ``before_request`` hook, but that pass only
    evaluates default, application and meta limits (decorated limits are evaluated by the
    decorator, ``flask_limiter/_manager.py: resolve_limits``), and this app sets none.  The hook
    is removed: it cost about 80 µs on every request that is not limited (a survey page, the
    dashboard) and a little more on each limited one.
    """
    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    app.config.setdefault("RATELIMIT_STORAGE_URI", f"deniable+sqlite://{app.config['DATABASE']}.limits")
    limiter = Limiter(key_func=client_key, app=app)
    app.extensions["deniable.limiter"] = limiter  # Flask-Limiter itself keeps only a weak reference
    hooks = app.before_request_funcs.get(None, [])
    if limiter._check_request_limit in hooks:
        hooks.remove(limiter._check_request_limit)
    for endpoint, (setting, methods, scope) in LIMITED.items():
        limit = checked_limit(app, setting)
        decorate = (limiter.shared_limit(limit, scope, methods=methods) if scope
                    else limiter.limit(limit, methods=methods))
        app.view_functions[endpoint] = decorate(app.view_functions[endpoint])
    return limiter
