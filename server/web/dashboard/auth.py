"""Researchers' sessions: the login and logout pages and :func:`require_login`, the check that the
dashboard's one hook makes (:mod:`deniable.server.web.dashboard`).

Accounts themselves are :mod:`deniable.server.store.accounts`.  A session is a random token (32
bytes) in the app's signed cookie, with the researcher's id and when it began and was last used;
the database keeps only the token's SHA-256.  Someone with a copy of every file the server wrote
(the database and the ``.secret`` that signs cookies) can sign a cookie but holds no token, so
none of theirs logs in.  A session is refused server-side when

- its token's hash is not stored: logout, a password change, ``create-researcher`` again and
  ``deniable end-sessions`` delete the account's tokens, ending every session of the account at
  once, on every device;
- it has been idle longer than ``SESSION_IDLE_MINUTES`` (default 30), or is older than
  ``SESSION_MAX_HOURS`` (default 12; the stored row, which keeps the day only, is refused after
  that many hours rounded up to whole days, whatever the cookie says).

Logging in clears the session first, so a session fixed before login (and its CSRF token) is not
carried over.  Logins are limited per address (``RATELIMIT_LOGIN``) and, counted before the
password is checked, per account (``RATELIMIT_LOGIN_ACCOUNT``, :mod:`..ratelimit`).  A successful
login leaves a **device cookie** (``deniable_device``, OWASP's "device cookies" against online
guessing): a random token of its own, stored as a hash too, naming the account in a payload signed
by the app.  A login for that account from a browser that presents it counts against that device
only (``RATELIMIT_LOGIN_DEVICE``), so failures from elsewhere never lock the researcher out of a
browser they logged in from before; without one, the account's limits hold.  The cookies are
HttpOnly, SameSite (Lax for the session, Strict for the device cookie, which only ``/auth/`` gets),
and Secure on HTTPS.
"""

from __future__ import annotations

import math
import time
import unicodedata
from urllib.parse import unquote, urlsplit

from flask import Blueprint, abort, current_app, flash, g, redirect, render_template, request, session, url_for
from flask_wtf import FlaskForm
from itsdangerous import BadData, URLSafeTimedSerializer
from wtforms import EmailField, PasswordField, SubmitField
from wtforms.validators import DataRequired, Length

from deniable.server.store.accounts import (AccountError, authenticate, device_account, end_sessions, new_device,
                                            new_session, normalize_email, session_account, token_hash)

from ..connections import get_db, get_readonly_db
from ..errors import api_error
from ..ratelimit import limited, limiter

bp = Blueprint("auth", __name__, url_prefix="/auth")

SEEN_EVERY = 60  # seconds: how stale "last used" may get before the cookie is rewritten
DEVICE_COOKIE = "deniable_device"
DEVICE_COOKIE_DAYS = 365  # default of DEVICE_COOKIE_DAYS: how long a device is remembered
SESSION_KEYS = ("researcher_id", "sid", "seen", "since")


def _session_days() -> int:
    """``SESSION_MAX_HOURS`` in whole days, rounded up: how old (by the day) a stored session may be."""
    return max(1, math.ceil(float(current_app.config.get("SESSION_MAX_HOURS", 12)) / 24))


def _device_days() -> int:
    return max(1, int(current_app.config.get("DEVICE_COOKIE_DAYS", DEVICE_COOKIE_DAYS)))


def current_researcher() -> dict | None:
    """The logged-in researcher ``{id, email, is_admin}`` (cached on ``g``), or None."""
    if "researcher" not in g:
        g.researcher = _session_researcher()
    return g.researcher


def _session_researcher() -> dict | None:
    token = session.get("sid")
    if token is None:
        return None
    now = time.time()
    idle = 60 * float(current_app.config.get("SESSION_IDLE_MINUTES", 30))
    longest = 3600 * float(current_app.config.get("SESSION_MAX_HOURS", 12))
    seen, since = session.get("seen", 0), session.get("since", 0)
    account = session_account(get_readonly_db(), token, days=_session_days()) if isinstance(token, str) else None
    if (account is None or session.get("researcher_id") != account["id"]
            or not isinstance(seen, (int, float)) or not isinstance(since, (int, float))
            or now - seen > idle or now - since > longest):
        for key in SESSION_KEYS:
            session.pop(key, None)
        return None
    if now - seen > SEEN_EVERY:
        session["seen"] = int(now)
    return account


def device_serializer(app) -> URLSafeTimedSerializer:
    """What signs a device cookie's payload ``{"account": id, "token": …}`` (with the app's secret).

    The signature keeps the payload as it was made and dates it; what no copy of the files can
    make is the token, whose hash alone is stored (:func:`.accounts.new_device`)."""
    return URLSafeTimedSerializer(app.secret_key, salt="deniable.device-cookie")


def _trusted_device(email: str) -> str | None:
    """The stored hash of this browser's device token if the device logged in to ``email``'s
    account before (a valid signature, a stored token, the same account), else None."""
    value = request.cookies.get(DEVICE_COOKIE)
    if not value:
        return None
    try:
        payload = device_serializer(current_app).loads(value, max_age=_device_days() * 86400)
        email = normalize_email(email)
    except (BadData, AccountError):
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("token"), str):
        return None
    account = device_account(get_readonly_db(), payload["token"], days=_device_days())
    if account is None or account["id"] != payload.get("account") or account["email"] != email:
        return None
    return token_hash(payload["token"])


def _remember_device(response, account_id: int) -> None:
    token = new_device(get_db(), account_id, days=_device_days())
    response.set_cookie(DEVICE_COOKIE, device_serializer(current_app).dumps({"account": account_id, "token": token}),
                        max_age=_device_days() * 86400, path="/auth/", httponly=True, samesite="Strict",
                        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")))


def safe_next(target: str | None) -> str | None:
    """``target`` if it is a path on this site, else None.

    Refused: anything with a scheme or host, protocol-relative ``//`` (also as ``/\\`` or with
    tabs and newlines that browsers drop, encoded or not), and any control character.
    """
    if not target or not target.startswith("/"):
        return None
    for text in (target, unquote(target)):
        if any(unicodedata.category(c).startswith("C") or c in "\\" for c in text):
            return None
        if text.startswith("//") or urlsplit(text).scheme or urlsplit(text).netloc:
            return None
    return target


def require_login(*, api: bool = False):
    """Return the response that refuses an anonymous request, or None if logged in."""
    if current_researcher() is not None:
        return None
    if api:
        return api_error(401, "login required")
    return redirect(url_for("auth.login", next=request.full_path if request.query_string else request.path))


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=1024)])
    submit = SubmitField("Log in")


class LogoutForm(FlaskForm):
    submit = SubmitField("Log out")


@bp.route("/login", methods=["GET", "POST"])
@limited("RATELIMIT_LOGIN", scope="login")
def login():
    form = LoginForm()
    next_url = safe_next(request.args.get("next"))
    status = 200
    if form.validate_on_submit():
        device = _trusted_device(form.email.data)
        # Counted before the password is checked, in one step with the check of the count:
        # 429 while this account (or, with a device cookie of the account, this device) is backing off.
        limiter().attempt_login(form.email.data, device)
        account = authenticate(get_readonly_db(), form.email.data, form.password.data)
        if account is not None:
            limiter().logged_in(form.email.data, device)
            # A fresh session: nothing (and no CSRF token) survives from before the login.
            session.clear()
            now = int(time.time())
            token = new_session(get_db(), account["id"], days=_session_days())
            session.update(researcher_id=account["id"], sid=token, seen=now, since=now)
            response = redirect(next_url or url_for("dashboard.views.index"))
            if device is None:
                _remember_device(response, account["id"])
            return response
        form.password.errors.append("Wrong email or password.")
        status = 401
    return render_template("auth/login.html", form=form, next_url=next_url), status


@bp.route("/logout", methods=["POST"])
def logout():
    form = LogoutForm()
    if not form.validate_on_submit():
        abort(400)
    account = current_researcher()
    if account is not None:
        end_sessions(get_db(), account["id"])  # every session of the account, on every device
    session.clear()
    flash("You are logged out (on every device).", "info")
    return redirect(url_for("auth.login"))


@bp.app_context_processor
def _inject_researcher():
    def logout_form():
        return LogoutForm()
    return {"current_researcher": current_researcher, "logout_form": logout_form}
