"""Researchers' sessions: the login and logout pages and :func:`require_login`, the check that the
dashboard's one hook makes (:mod:`deniable.server.web.dashboard`).

Accounts themselves are :mod:`deniable.server.store.accounts`.  A session is the app's signed
cookie holding the researcher's id, their account's ``session_epoch`` at login, and when it was
last used; it is refused server-side when

- the account's epoch has moved on: logout, a password change or ``create-researcher`` again end
  every earlier session of the account at once, on every device;
- it has been idle longer than ``SESSION_IDLE_MINUTES`` (default 30), or is older than
  ``SESSION_MAX_HOURS`` (default 12).

Logging in clears the session first, so a session fixed before login (and its CSRF token) is not
carried over.  Logins are limited per address (``RATELIMIT_LOGIN``) and, for failures, per
account with a back-off (``RATELIMIT_LOGIN_ACCOUNT``, :mod:`..ratelimit`).  The cookie is
HttpOnly and SameSite=Lax, and Secure on HTTPS.
"""

from __future__ import annotations

import time
import unicodedata
from urllib.parse import unquote, urlsplit

from flask import Blueprint, abort, current_app, flash, g, redirect, render_template, request, session, url_for
from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField, SubmitField
from wtforms.validators import DataRequired, Length

from deniable.server.store.accounts import authenticate, end_sessions, researcher

from ..connections import get_db, get_readonly_db
from ..errors import api_error
from ..ratelimit import limited, limiter

bp = Blueprint("auth", __name__, url_prefix="/auth")

SEEN_EVERY = 60  # seconds: how stale "last used" may get before the cookie is rewritten


def current_researcher() -> dict | None:
    """The logged-in researcher ``{id, email, is_admin, session_epoch}`` (cached on ``g``), or None."""
    if "researcher" not in g:
        g.researcher = _session_researcher()
    return g.researcher


def _session_researcher() -> dict | None:
    researcher_id = session.get("researcher_id")
    if researcher_id is None:
        return None
    now = time.time()
    idle = 60 * float(current_app.config.get("SESSION_IDLE_MINUTES", 30))
    longest = 3600 * float(current_app.config.get("SESSION_MAX_HOURS", 12))
    seen, since = session.get("seen", 0), session.get("since", 0)
    account = researcher(get_readonly_db(), researcher_id) if isinstance(researcher_id, int) else None
    if (account is None or session.get("epoch") != account["session_epoch"]
            or not isinstance(seen, (int, float)) or not isinstance(since, (int, float))
            or now - seen > idle or now - since > longest):
        for key in ("researcher_id", "epoch", "seen", "since"):
            session.pop(key, None)
        return None
    if now - seen > SEEN_EVERY:
        session["seen"] = int(now)
    return account


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
        limiter().check_account(form.email.data)  # 429 while this account is backing off
        account = authenticate(get_readonly_db(), form.email.data, form.password.data)
        if account is not None:
            limiter().logged_in(form.email.data)
            # A fresh session: nothing (and no CSRF token) survives from before the login.
            session.clear()
            now = int(time.time())
            session.update(researcher_id=account["id"], epoch=account["session_epoch"], seen=now, since=now)
            return redirect(next_url or url_for("dashboard.views.index"))
        limiter().failed_login(form.email.data)
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
