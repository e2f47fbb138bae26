"""Rate limits: login attempts and submissions, counted across all workers with ``limits``.

A view declares its limit where it is defined, ``@limited("RATELIMIT_SUBMIT", scope="submit")``;
the decorator hits the ``limits`` fixed-window strategy directly (no per-request hook on the
other views).  The counters live in :mod:`.ratelimit_storage` (``<DATABASE>.limits``) so every
gunicorn worker sees the same counts.  They are keyed by a keyed hash of the client address
(HMAC with the app's secret key), never the address itself (docs/design.md, invariant 2).

Settings (``DENIABLE_`` environment variables or the instance ``config.py``):
``RATELIMIT_LOGIN`` (default ``10 per minute``), ``RATELIMIT_SUBMIT`` (default ``300 per minute``,
one count for the survey page and the JSON API together: generous, because many respondents can
share one address behind a NAT — 5 a second sustained, and a whole classroom at once as a
burst), ``RATELIMIT_ENABLED`` (default true) and ``RATELIMIT_STORAGE_URI``.  A limit that does
not parse stops the app at start-up.  Behind a reverse proxy set ``PROXY_FIX_X_FOR`` (see
:mod:`.security`) so the address is the client's, not the proxy's.  If the counters cannot be
used, each worker counts in its own memory for that hit: never a 500, never no limit.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import time

from flask import current_app, request
from limits import parse_many
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import FixedWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

from . import ratelimit_storage  # noqa: F401  registers the deniable+sqlite:// storage scheme

LIMITS = ("RATELIMIT_LOGIN", "RATELIMIT_SUBMIT")
DEFAULTS = {
    "RATELIMIT_LOGIN": "10 per minute",
    "RATELIMIT_SUBMIT": "300 per minute",
    "RATELIMIT_ENABLED": True,
}


class RateLimited(TooManyRequests):
    """A client over its limit; ``retry_after`` is the seconds until the window resets."""

    def __init__(self, limit, retry_after: int):
        super().__init__(f"Too many requests from this address: at most {limit}. "
                         "Please wait a little and try again.")
        self.retry_after = retry_after


def checked_limit(app, setting: str) -> list:
    """The limits in ``setting``, refused at start-up if ``limits`` cannot parse them."""
    value = app.config[setting]
    try:
        return parse_many(value)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{setting} (DENIABLE_{setting}): {value!r} is not a rate limit; "
                         "write e.g. '10 per minute' or '5/second;300/minute'") from exc


class RateLimiter:
    """One app's limits, counters and keyed hash of the client address."""

    def __init__(self, app):
        self.enabled = bool(app.config["RATELIMIT_ENABLED"])
        self.limits = {setting: checked_limit(app, setting) for setting in LIMITS}
        self.storage = storage_from_string(app.config["RATELIMIT_STORAGE_URI"])
        self.shared = FixedWindowRateLimiter(self.storage)
        self.local = FixedWindowRateLimiter(MemoryStorage())  # when the shared counters fail
        self._secret = app.config["SECRET_KEY"].encode()

    def client_key(self) -> str:
        """A keyed hash of the client address: stable within the app, not reversible to the address."""
        address = (request.remote_addr or "unknown").encode()
        return hmac.new(self._secret, address, hashlib.sha256).hexdigest()[:24]

    def hit(self, setting: str, scope: str) -> None:
        """Count one request of this client against ``setting``; raise RateLimited past the limit."""
        key = self.client_key()
        for item in self.limits[setting]:
            try:
                strategy, allowed = self.shared, self.shared.hit(item, scope, key)
            except self.storage.base_exceptions:
                strategy, allowed = self.local, self.local.hit(item, scope, key)
            if not allowed:
                reset = strategy.get_window_stats(item, scope, key).reset_time
                raise RateLimited(item, max(1, math.ceil(reset - time.time())))


def limited(setting: str, *, scope: str, methods=("POST",)):
    """Limit a view's ``methods`` by ``app.config[setting]``; views with the same ``scope`` share one count."""
    def decorate(view):
        @functools.wraps(view)
        def wrapped(*args, **kwargs):
            limiter = current_app.extensions["deniable.ratelimit"]
            if limiter.enabled and request.method in methods:
                limiter.hit(setting, scope)
            return view(*args, **kwargs)
        return wrapped
    return decorate


def init_app(app) -> RateLimiter:
    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    app.config.setdefault("RATELIMIT_STORAGE_URI", f"deniable+sqlite://{app.config['DATABASE']}.limits")
    limiter = app.extensions["deniable.ratelimit"] = RateLimiter(app)
    return limiter
