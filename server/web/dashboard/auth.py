"""Researchers' sessions: the login and logout pages and ``login_required``.

Accounts themselves are :mod:`deniable.server.store.accounts`.  Logging in clears the session first, so a
session fixed before login (and its CSRF token) is not carried over.  The session cookie is
HttpOnly and SameSite=Lax; set ``SESSION_COOKIE_SECURE`` (``DENIABLE_SESSION_COOKIE_SECURE=true``)
when the app is served over HTTPS.
"""

from __future__ import annotations

import functools
import secrets

from flask import (Blueprint, abort, flash, g, redirect, render_template, request,
                   session, url_for)
from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField, SubmitField
from wtforms.validators import DataRequired, Length

from deniable.server.store.accounts import authenticate

from ..connections import get_readonly_db
from ..errors import api_error
from ..ratelimit import limited

bp = Blueprint("auth", __name__, url_prefix="/auth")

def current_researcher() -> dict | None:
    """The logged-in researcher (cached on ``g``), or None."""
    if "researcher" not in g:
        researcher_id = session.get("researcher_id")
        g.researcher = None
        if researcher_id is not None:
            rows = list(get_readonly_db()["researchers"].rows_where(
                "id = ?", [researcher_id], select="id, email"))
            g.researcher = rows[0] if rows else None
    return g.researcher


def _safe_next(target: str | None) -> str | None:
    """Only a path on this site: no scheme, no host, no protocol-relative ``//``."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return None


def require_login(*, api: bool = False):
    """Return the response that refuses an anonymous request, or None if logged in."""
    if current_researcher() is not None:
        return None
    if api:
        return api_error(401, "login required")
    return redirect(url_for("auth.login", next=request.full_path if request.query_string else request.path))


def login_required(view):
    """Redirect an anonymous request to the login page."""
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        refused = require_login()
        return refused if refused is not None else view(*args, **kwargs)
    return wrapped


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
    next_url = _safe_next(request.args.get("next"))
    status = 200
    if form.validate_on_submit():
        researcher = authenticate(get_readonly_db(), form.email.data, form.password.data)
        if researcher is not None:
            # A fresh session: nothing (and no CSRF token) survives from before the login.
            session.clear()
            session["researcher_id"] = researcher["id"]
            session["login_nonce"] = secrets.token_hex(16)
            return redirect(next_url or url_for("dashboard.index"))
        form.password.errors.append("Wrong email or password.")
        status = 401
    return render_template("auth/login.html", form=form, next_url=next_url), status


@bp.route("/logout", methods=["POST"])
def logout():
    form = LogoutForm()
    if not form.validate_on_submit():
        abort(400)
    session.clear()
    flash("You are logged out.", "info")
    return redirect(url_for("auth.login"))


@bp.app_context_processor
def _inject_researcher():
    def logout_form():
        return LogoutForm()
    return {"current_researcher": current_researcher, "logout_form": logout_form}
