"""Rate limits (Flask-Limiter): login attempts and submissions, counted across all workers.

The counters live in :mod:`server.limits_sqlite` (``<DATABASE>.limits``) so every gunicorn
worker sees the same counts.  They are keyed by a keyed hash of the client address (HMAC with
the app's secret key), never the address itself: the server keeps no IP address anywhere
(DESIGN.md, invariant 2), and the counters, which expire within minutes, cannot be joined to
the responses, which carry no address at all.

Settings (``DENIABLE_`` environment variables or the instance ``config.py``):
``RATELIMIT_LOGIN`` (default ``10 per minute``), ``RATELIMIT_SUBMIT`` (default ``30 per minute``:
generous, because many respondents can share one address behind a NAT), ``RATELIMIT_ENABLED``
(default true) and ``RATELIMIT_STORAGE_URI``.  Behind a reverse proxy set ``PROXY_FIX_X_FOR``
(see :mod:`server.security`) so the address is the client's, not the proxy's.  If the counters
file cannot be used, each worker counts in memory until it can (Flask-Limiter's in-memory
fallback): never a 500, never no limit.

Cost: about 17 µs per hit in the storage and about 150–190 µs per limited request in all,
most of it Flask-Limiter's own bookkeeping (``python scripts/bench_limits.py``).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time

from flask import current_app, request
from flask_limiter import Limiter

from . import limits_sqlite  # noqa: F401  registers the deniable+sqlite:// storage scheme

DEFAULTS = {
    "RATELIMIT_LOGIN": "10 per minute",
    "RATELIMIT_SUBMIT": "30 per minute",
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


def login_limit() -> str:
    return current_app.config["RATELIMIT_LOGIN"]


def submit_limit() -> str:
    return current_app.config["RATELIMIT_SUBMIT"]


# endpoint → (limit, methods it applies to)
LIMITED = {
    "auth.login": (login_limit, ["POST"]),
    "respond.submit": (submit_limit, None),
    "api.submit": (submit_limit, None),
}


def init_app(app) -> Limiter:
    """Give the app its own limiter (settings are per app) and limit the endpoints in LIMITED."""
    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    app.config.setdefault("RATELIMIT_STORAGE_URI", f"deniable+sqlite://{app.config['DATABASE']}.limits")
    limiter = Limiter(key_func=client_key, app=app)
    app.extensions["deniable.limiter"] = limiter  # Flask-Limiter itself keeps only a weak reference
    for endpoint, (limit, methods) in LIMITED.items():
        app.view_functions[endpoint] = limiter.limit(limit, methods=methods)(app.view_functions[endpoint])
    return limiter
