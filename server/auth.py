"""Researchers' accounts and sessions: login, logout and ``login_required``.

Passwords are stored only as werkzeug hashes.  Logging in clears the session first, so a
session fixed before login (and its CSRF token) is not carried over.  The session cookie is
HttpOnly and SameSite=Lax; set ``SESSION_COOKIE_SECURE`` (``DENIABLE_SESSION_COOKIE_SECURE=true``)
when the app is served over HTTPS.
"""

from __future__ import annotations

import functools
import secrets

import sqlite_utils
from flask import (Blueprint, abort, flash, g, jsonify, redirect, render_template, request,
                   session, url_for)
from flask_wtf import FlaskForm
from werkzeug.security import check_password_hash, generate_password_hash
from wtforms import EmailField, PasswordField, SubmitField
from wtforms.validators import DataRequired, Length

from .db import get_readonly_db, write_transaction
from .surveys import today

bp = Blueprint("auth", __name__, url_prefix="/auth")

MIN_PASSWORD = 8
# Checked against when the email is unknown, so a wrong email costs as long as a wrong password.
_DUMMY_HASH = generate_password_hash(secrets.token_hex(16))


class AccountError(ValueError):
    """An email or password that cannot make an account."""


def normalize_email(email: str) -> str:
    email = (email or "").strip().lower()
    if "@" not in email or len(email) > 254 or any(c.isspace() for c in email):
        raise AccountError(f"email: not an email address: {email!r}")
    return email


def set_researcher(db: sqlite_utils.Database, email: str, password: str) -> int:
    """Create the researcher ``email`` or replace their password; return their id."""
    email = normalize_email(email)
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"password: must be at least {MIN_PASSWORD} characters")
    password_hash = generate_password_hash(password)
    with write_transaction(db):
        row = db.execute("SELECT id FROM researchers WHERE email = ?", [email]).fetchone()
        if row:
            db["researchers"].update(row[0], {"password_hash": password_hash})
            return row[0]
        return db["researchers"].insert(
            {"email": email, "password_hash": password_hash, "created_on": today()}
        ).last_pk


def authenticate(db: sqlite_utils.Database, email: str, password: str) -> dict | None:
    """Return the researcher's row if the email and password match, else None."""
    try:
        email = normalize_email(email)
    except AccountError:
        email = ""
    rows = list(db["researchers"].rows_where("email = ?", [email]))
    if not rows:
        check_password_hash(_DUMMY_HASH, password)
        return None
    return rows[0] if check_password_hash(rows[0]["password_hash"], password) else None


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
        response = jsonify(error="login required", status=401)
        response.status_code = 401
        return response
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
