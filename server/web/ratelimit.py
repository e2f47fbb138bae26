"""Rate limits: submissions and logins per client address, failed logins per account.

A view declares its limit where it is defined, ``@limited("RATELIMIT_SUBMIT", scope="submit")``;
the count is taken by the app's first before-request function (:func:`check`), so a request over
its limit is refused before anything parses its body (the CSRF check and the unnamed-field
check parse the form: work an attacker could otherwise make the server do without limit).  By
default the counters live in memory shared by the worker processes (:mod:`.ratelimit_storage`,
``deniable+shared://``), never on disk.  A client is counted under
a keyed hash of its address whose key is made in memory at start-up and never stored, so the
counters cannot be turned back into addresses (docs/design.md, invariants 2 and 6), even with
a storage elsewhere (``RATELIMIT_STORAGE_URI``, e.g. ``redis://…``).

Settings (``DENIABLE_`` environment variables or the instance ``config.py``):
``RATELIMIT_SUBMIT`` (default ``300 per minute``, one count for the survey page and the JSON
API together: generous, because many respondents can share one address behind a NAT — 5 a
second sustained, and a whole classroom at once as a burst), ``RATELIMIT_LOGIN`` (login
attempts per address, default ``10 per minute``), ``RATELIMIT_LOGIN_ACCOUNT`` (failed logins
per account, a ladder that backs off: 5 a minute, 10 in 10 minutes, 20 an hour, 50 a day;
a successful login starts the account afresh), ``RATELIMIT_LOGIN_DEVICE`` (failed logins from a
browser that holds a device cookie of the account, the same ladder by default: they count against
that device instead of the account, :meth:`RateLimiter.attempt_login`), ``RATELIMIT_ENABLED``
(default true) and
``RATELIMIT_STORAGE_URI``.  A limit that does not parse stops the app at start-up.  Behind a
reverse proxy set ``PROXY_FIX_X_FOR`` (see :mod:`.security`) so the address is the client's.
If the counters cannot be used, each worker counts in its own memory for that hit: never a 500,
never no limit.

A login attempt is counted *before* its password is checked, in one step with the check of the
count (:meth:`.ratelimit_storage.SharedMemoryStorage.take`): 40 parallel attempts against a limit
of 5 check 5 passwords, where a check followed by a count after the password let 6 or more
through.  A successful login takes the attempts back (its count starts afresh).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import threading
import time

from flask import current_app, request
from limits import parse_many
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import FixedWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

from deniable.errors import FieldError
from deniable.server.survey.parsing import parsed

from . import ratelimit_storage  # noqa: F401  registers the deniable+shared:// storage scheme

LIMITS = ("RATELIMIT_LOGIN", "RATELIMIT_LOGIN_ACCOUNT", "RATELIMIT_LOGIN_DEVICE", "RATELIMIT_SUBMIT")
DEFAULTS = {
    "RATELIMIT_LOGIN": "10 per minute",
    "RATELIMIT_LOGIN_ACCOUNT": "5 per minute;10 per 10 minutes;20 per hour;50 per day",
    "RATELIMIT_LOGIN_DEVICE": "5 per minute;10 per 10 minutes;20 per hour;50 per day",
    "RATELIMIT_SUBMIT": "300 per minute",
    "RATELIMIT_ENABLED": True,
    "RATELIMIT_STORAGE_URI": "deniable+shared://",
}


class RateLimited(TooManyRequests):
    """A client over its limit; ``retry_after`` is the seconds until the window resets."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


def checked_limit(app, setting: str) -> list:
    """The limits in ``setting``, refused at start-up (FieldError naming it) if ``limits`` cannot parse them."""
    value = app.config[setting]
    return parsed(parse_many, value, lambda exc: FieldError(
        f"{setting} (DENIABLE_{setting}): {value!r} is not a rate limit; write e.g. '10 per minute' or "
        "'5/second;300/minute'", setting))


class RateLimiter:
    """One app's limits and counters, and the in-memory key that hides who is counted."""

    def __init__(self, app):
        self.enabled = bool(app.config["RATELIMIT_ENABLED"])
        self.limits = {setting: checked_limit(app, setting) for setting in LIMITS}
        self.storage = storage_from_string(app.config["RATELIMIT_STORAGE_URI"])
        self.shared = FixedWindowRateLimiter(self.storage)
        self.local = FixedWindowRateLimiter(MemoryStorage())  # when the shared counters fail
        self._key = os.urandom(32)  # never on disk: made anew at every start
        self._lock = threading.Lock()  # check-and-count for a storage without take()

    def _hidden(self, kind: str, value: str) -> str:
        return hmac.new(self._key, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()[:24]

    def client_key(self, address: str | None) -> str:
        """A keyed hash of the client address; its key exists only in this server's memory."""
        return self._hidden("address", address or "unknown")

    def _each(self, setting: str, scope: str, key: str, action: str):
        """Yield ``(item, strategy, allowed)`` for each limit of ``setting`` after ``action``."""
        for item in self.limits[setting]:
            try:
                strategy = self.shared
                allowed = getattr(strategy, action)(item, scope, key)
            except self.storage.base_exceptions:
                strategy = self.local
                allowed = getattr(strategy, action)(item, scope, key)
            yield item, strategy, allowed

    def _refuse(self, message: str, item, strategy, scope: str, key: str):
        reset = strategy.get_window_stats(item, scope, key).reset_time
        raise RateLimited(message, max(1, math.ceil(reset - time.time())))

    def hit(self, setting: str, scope: str, address: str | None) -> None:
        """Count one request from ``address`` against ``setting``; raise RateLimited past the limit."""
        key = self.client_key(address)
        for item, strategy, allowed in self._each(setting, scope, key, "hit"):
            if not allowed:
                self._refuse(f"Too many requests from this address: at most {item}. "
                             "Please wait a little and try again.", item, strategy, scope, key)

    # Failed logins: per account, or per device for a browser that logged in to the account before.
    def _login_key(self, email: str, device: str | None) -> tuple[str, str, str]:
        """``(setting, scope, key)`` that a login attempt counts against."""
        if device is not None:
            return "RATELIMIT_LOGIN_DEVICE", "device", self._hidden("device", device)
        return "RATELIMIT_LOGIN_ACCOUNT", "account", self._hidden("account", email.strip().lower())

    def _take(self, setting: str, scope: str, key: str):
        """Count one attempt against every limit of ``setting``, or none if one is full: return
        ``(item, strategy)`` of the full one, or None.  The check and the count are one step."""
        items = self.limits[setting]
        take = getattr(self.storage, "take", None)
        strategies = (self.shared, self.local)
        if take is not None:
            try:
                full = take([(item.key_for(scope, key), item.get_expiry(), item.amount) for item in items])
                return None if full is None else (items[full], self.shared)
            except self.storage.base_exceptions:
                strategies = (self.local,)
        with self._lock:  # exact within this process (another kind of storage, or the fallback)
            for strategy in strategies:
                try:
                    full = next((item for item in items if not strategy.test(item, scope, key)), None)
                    if full is not None:
                        return full, strategy
                    for item in items:
                        strategy.hit(item, scope, key)
                    return None
                except self.storage.base_exceptions:
                    continue
        return None

    def attempt_login(self, email: str, device: str | None = None) -> None:
        """Count a login attempt before its password is checked; RateLimited past the limit.

        ``device``: the hash of a device token that logged in to this account before (None
        without one).  Its attempts count against that device only, so failures from elsewhere,
        however many, never refuse it; everyone else's count against the account.
        """
        if not self.enabled:
            return
        setting, scope, key = self._login_key(email, device)
        full = self._take(setting, scope, key)
        if full is not None:
            item, strategy = full
            whose = "from this device" if device is not None else "for this account"
            self._refuse(f"Too many failed logins {whose}: at most {item}. Please wait before you try again.",
                         item, strategy, scope, key)

    def logged_in(self, email: str, device: str | None = None) -> None:
        """A successful login starts its count afresh: the device's if it came with one (the
        account's count, which others' failures built up, stays), else the account's."""
        setting, scope, key = self._login_key(email, device)
        for item in self.limits[setting]:
            for strategy in (self.shared, self.local):
                try:
                    strategy.clear(item, scope, key)
                except self.storage.base_exceptions:
                    pass


def limiter_of(app) -> RateLimiter:
    return app.extensions["deniable.ratelimit"]


def limiter() -> RateLimiter:
    return limiter_of(current_app)


def limited(setting: str, *, scope: str, methods=("POST",)):
    """Limit a view's ``methods`` by ``app.config[setting]``; views with the same ``scope`` share one count.

    The view is only marked: :func:`check` counts, before any other before-request function.
    """
    def decorate(view):
        view.rate_limit = (setting, scope, tuple(methods))
        return view
    return decorate


def check() -> None:
    """Count the request against its view's limit, if it has one; RateLimited past it."""
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    limit = getattr(view, "rate_limit", None)
    if limit is not None and request.method in limit[2]:
        current = limiter()
        if current.enabled:
            current.hit(limit[0], limit[1], request.remote_addr)


def init_app(app) -> RateLimiter:
    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    limiter_ = app.extensions["deniable.ratelimit"] = RateLimiter(app)
    # First of the app's before-request functions, whenever init_app runs: before CSRFProtect's
    # check and security's unnamed-field check, which parse the form.
    functions = app.before_request_funcs.setdefault(None, [])
    if check not in functions:
        functions.insert(0, check)
    return limiter_
