"""The admins' Colleagues page: who has an account, and one-time links that invite a colleague.

Only admins see it: anyone else gets the 404 of a page that does not exist
(:mod:`.permissions`).  An invitation (:func:`deniable.server.store.accounts.invite`) is a random
token whose SHA-256 alone is stored; the link is shown once, on the page that answers the
invitation (never in a flash message, which the session cookie would carry), and the server sends
no mail: the admin passes it on.  The invited colleague sets a password at the link
(:mod:`.join`).  The page lists emails and roles only, no dates of login.
"""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, url_for
from flask_wtf import FlaskForm
from wtforms import BooleanField, EmailField, HiddenField, SubmitField
from wtforms.validators import DataRequired, Length

from deniable.server.store import accounts

from ..connections import get_db, get_readonly_db
from ..security import public_url
from .auth import current_researcher

bp = Blueprint("colleagues", __name__, url_prefix="/dashboard/colleagues")


class InviteForm(FlaskForm):
    email = EmailField("Colleague's email", validators=[DataRequired(), Length(max=254)])
    admin = BooleanField("Make them an admin (sees and manages every survey, and invites colleagues)")
    send = SubmitField("Make an invitation link")


class RevokeForm(FlaskForm):
    email = HiddenField(validators=[DataRequired(), Length(max=254)])


@bp.before_request
def _admins_only():
    """The dashboard's hook has made sure someone is logged in; a non-admin learns nothing here."""
    researcher = current_researcher()
    if researcher is None or not researcher["is_admin"]:
        abort(404)


def _page(form: InviteForm, *, link: str | None = None, invited: str | None = None, status: int = 200):
    db = get_readonly_db()
    return render_template("dashboard/colleagues.html", form=form, link=link, invited=invited,
                           researchers=accounts.researchers(db), invites=accounts.pending_invites(db),
                           days=accounts.INVITE_DAYS), status


@bp.route("/")
def colleagues():
    return _page(InviteForm(formdata=None))


@bp.route("/invite", methods=["POST"])
def invite():
    form = InviteForm()
    if not form.validate_on_submit():
        return _page(form, status=400)
    try:
        token = accounts.invite(get_db(), form.email.data, admin=form.admin.data)
    except accounts.AccountError as exc:
        form.email.errors.append(str(exc).removeprefix("email: "))
        return _page(form, status=400)
    # Answered here, not after a redirect: the link is on this page once and nowhere else.
    email = accounts.normalize_email(form.email.data)
    return _page(InviteForm(formdata=None), link=public_url("join.join", token=token), invited=email)


@bp.route("/revoke", methods=["POST"])
def revoke():
    form = RevokeForm()
    if not form.validate_on_submit():
        abort(400)
    if accounts.revoke_invite(get_db(), form.email.data):
        flash(f"The invitation of {form.email.data.strip().lower()} is withdrawn: its link no longer works.", "info")
    else:
        flash(f"There was no pending invitation of {form.email.data.strip().lower()}.", "info")
    return redirect(url_for("dashboard.colleagues.colleagues"), 303)
