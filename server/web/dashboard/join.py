"""The page of an invitation link (``/auth/join/TOKEN``): the invited colleague sets a password.

No login is needed (the link is the credential), so this blueprint is registered beside
:mod:`.auth`, outside the dashboard's login hook.  A link that does not work — unknown, used,
withdrawn or expired — gets one answer, the same page with the same status, so the page tells
nothing about which; and nothing is stored.  A password that the policy refuses
(:func:`deniable.server.store.accounts.check_password`, as ``deniable create-researcher``) is said
at its field, and the link keeps working.  On success one transaction deletes the invitation,
creates the account and starts its session (:func:`deniable.server.store.accounts.accept_invite`);
the browser gets a fresh session, as after a login.

The token is in the path, so it must not leave the page: every response already carries
``Referrer-Policy: no-referrer`` (:mod:`..security`), and this one sets it itself too; the server
writes no log line for a request (:mod:`..logs`), so the path is not logged.
"""

from __future__ import annotations

import time

from flask import Blueprint, flash, redirect, render_template, session, url_for
from flask_wtf import FlaskForm
from wtforms import PasswordField, SubmitField
from wtforms.validators import DataRequired, EqualTo, Length

from deniable.server.store import accounts

from ..connections import get_db, get_readonly_db
from ..ratelimit import limited

bp = Blueprint("join", __name__, url_prefix="/auth/join")


class JoinForm(FlaskForm):
    password = PasswordField("Choose a password", validators=[DataRequired(), Length(max=1024)])
    confirm = PasswordField("The same password again",
                            validators=[DataRequired(), EqualTo("password", message="The two passwords differ.")])
    create = SubmitField("Make my account")


def _not_valid():
    """The one answer to a link that does not work, whatever the reason."""
    return _no_referrer(render_template("auth/join.html", invitation=None, form=None,
                                        message=accounts.NOT_VALID.removeprefix("invitation: ")), 404)


def _no_referrer(body: str, status: int = 200):
    return body, status, {"Referrer-Policy": "no-referrer"}


@bp.route("/<token>", methods=["GET", "POST"])
@limited("RATELIMIT_LOGIN", scope="join")
def join(token: str):
    invitation = accounts.invited(get_readonly_db(), token)
    if invitation is None:
        return _not_valid()
    form = JoinForm()
    if not form.validate_on_submit():
        status = 400 if form.is_submitted() else 200
        return _no_referrer(render_template("auth/join.html", invitation=invitation, form=form,
                                            min_password=accounts.MIN_PASSWORD), status)
    try:
        researcher_id, sid = accounts.accept_invite(get_db(), token, form.password.data)
    except accounts.InviteError:
        return _not_valid()
    except accounts.AccountError as exc:
        form.password.errors.append(str(exc).removeprefix("password: "))
        return _no_referrer(render_template("auth/join.html", invitation=invitation, form=form,
                                            min_password=accounts.MIN_PASSWORD), 400)
    # A fresh session, as after a login (auth.login): nothing (and no CSRF token) survives from before.
    session.clear()
    now = int(time.time())
    session.update(researcher_id=researcher_id, sid=sid, seen=now, since=now)
    flash(f"Welcome: your account {invitation['email']} is made, and you are logged in.", "info")
    return redirect(url_for("dashboard.views.index"), 303)
