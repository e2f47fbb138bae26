"""Researchers' accounts: create or reset one, check a password, end every session of an account.

Passwords are stored only as werkzeug's scrypt hashes.  A new password must have at least
:data:`MIN_PASSWORD` characters and be hard to guess by zxcvbn (Dropbox's password-strength
estimator: its 30,000 most common passwords, dictionaries, keyboard patterns, dates and
repeats; score ≥ :data:`MIN_STRENGTH` means an estimated 10^8 guesses or more), so ``12345678``,
``password1234`` or ``aaaaaaaaaaaa`` are refused.

A session is a random token (:func:`new_session`, 32 bytes from :mod:`secrets`) that the browser
keeps in the app's signed cookie; the table ``sessions`` keeps only its SHA-256, with the account and
the day the session began.  So a copy of the files (the database and the app's secret) signs no
cookie that logs in: it holds hashes, not tokens.  :func:`end_sessions` (logout, ``deniable
end-sessions``) and a password reset (:func:`set_researcher`) delete the account's rows, so every
cookie issued before stops working at once, on every device (docs/design.md, invariant 7).  A
*device* token (:func:`new_device`) is kept the same way in ``devices``: the browser that logged in
holds it, and the login form lets the right password through from it however many failures came
from elsewhere (:mod:`deniable.server.web.dashboard.auth`).  Rows past their longest life are
deleted when a new one is made.

An admin can also *invite* a colleague (:func:`invite`, the dashboard's Colleagues page): a
one-time link whose random token (32 bytes) is stored only as its SHA-256 in ``researcher_invites``,
with the email, whether the account will be an admin, and the day it was made.  The link works
for :data:`INVITE_DAYS` days; :func:`accept_invite` deletes it, creates the account and starts its
first session in one transaction.  The server sends no mail: the admin passes the link on.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import secrets

import sqlite_utils
from werkzeug.security import check_password_hash, generate_password_hash

from deniable.errors import FieldError

from .db import write_transaction
from .invitations import InvitationError
from .surveys import today

MIN_PASSWORD = 12
MIN_STRENGTH = 3  # zxcvbn score 0..4
# Checked against when the email is unknown, so a wrong email costs as long as a wrong password.
_DUMMY_HASH = generate_password_hash(secrets.token_hex(16))


class AccountError(FieldError):
    """An email or password that cannot make an account; the message names the field."""


def normalize_email(email: str) -> str:
    email = (email or "").strip().lower()
    if "@" not in email or len(email) > 254 or any(c.isspace() for c in email):
        raise AccountError(f"email: not an email address: {email!r}")
    return email


def check_password(password: str, email: str = "") -> None:
    """Raise AccountError if ``password`` is shorter than 12 characters or easy to guess."""
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise AccountError(f"password: must be at least {MIN_PASSWORD} characters "
                           "(several unrelated words are easy to remember and hard to guess)")
    from zxcvbn import zxcvbn  # loads its word lists: only when a password is set

    # zxcvbn's matching grows quickly with length; the first 100 characters decide the score.
    result = zxcvbn(password[:100], user_inputs=[email, email.split("@")[0], "deniable", "survey"])
    if result["score"] < MIN_STRENGTH:
        why = result["feedback"].get("warning") or "it is a common or predictable password"
        raise AccountError(f"password: too easy to guess ({why.rstrip('.')}); "
                           "try several unrelated words, or a password manager's")


def set_researcher(db: sqlite_utils.Database, email: str, password: str, *, admin: bool | None = None) -> int:
    """Create the researcher ``email`` or replace their password; return their id.

    Replacing the password ends every earlier session of the account and forgets its devices.
    ``admin`` (True/False) sets whether the account sees every survey; None leaves it as it is
    (False when new).
    """
    email = normalize_email(email)
    check_password(password, email)
    password_hash = generate_password_hash(password)
    with write_transaction(db):
        row = db.execute("SELECT id FROM researchers WHERE email = ?", [email]).fetchone()
        if row:
            db.execute("UPDATE researchers SET password_hash = ? WHERE id = ?", [password_hash, row[0]])
            for table in ("sessions", "devices"):  # a new password: no earlier session or device counts
                db.execute(f"DELETE FROM {table} WHERE researcher_id = ?", [row[0]])
            if admin is not None:
                db.execute("UPDATE researchers SET is_admin = ? WHERE id = ?", [int(admin), row[0]])
            return row[0]
        return db["researchers"].insert(
            {"email": email, "password_hash": password_hash, "created_on": today(), "is_admin": int(bool(admin))}
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


def researcher(db: sqlite_utils.Database, researcher_id: int) -> dict | None:
    """The account ``{id, email, is_admin}``, or None."""
    row = db.execute("SELECT id, email, is_admin FROM researchers WHERE id = ?", [researcher_id]).fetchone()
    return dict(zip(("id", "email", "is_admin"), row)) if row else None


def find_researcher(db: sqlite_utils.Database, email: str) -> dict | None:
    """The account with this email (normalized), or None."""
    try:
        email = normalize_email(email)
    except AccountError:
        return None
    row = db.execute("SELECT id FROM researchers WHERE email = ?", [email]).fetchone()
    return researcher(db, row[0]) if row else None


def token_hash(token: str) -> str:
    """The SHA-256 of a session or device token, as stored (hex)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _first_day(days: int) -> str:
    """The earliest day a row made ``days`` days ago or later has (YYYY-MM-DD)."""
    return (datetime.date.fromisoformat(today()) - datetime.timedelta(days=days)).isoformat()


def _new_token(db: sqlite_utils.Database, table: str, researcher_id: int, days: int) -> str:
    token = secrets.token_urlsafe(32)
    with write_transaction(db):
        db.execute(f"DELETE FROM {table} WHERE researcher_id = ? AND created_on < ?", [researcher_id, _first_day(days)])
        db.execute(f"INSERT INTO {table} (token_hash, researcher_id, created_on) VALUES (?, ?, ?)",
                   [token_hash(token), researcher_id, today()])
    return token


def _token_account(db: sqlite_utils.Database, table: str, token, days: int) -> dict | None:
    if not isinstance(token, str) or not token:
        return None
    row = db.execute(f"SELECT r.id, r.email, r.is_admin FROM {table} t JOIN researchers r ON r.id = t.researcher_id "
                     "WHERE t.token_hash = ? AND t.created_on >= ?", [token_hash(token), _first_day(days)]).fetchone()
    return dict(zip(("id", "email", "is_admin"), row)) if row else None


def new_session(db: sqlite_utils.Database, researcher_id: int, *, days: int = 1) -> str:
    """Start a session of the account; return its token (only its hash is stored).

    ``days``: the session's longest life in whole days, rounded up; the account's rows older than
    that are deleted here."""
    return _new_token(db, "sessions", researcher_id, days)


def session_account(db: sqlite_utils.Database, token, *, days: int = 1) -> dict | None:
    """The account ``{id, email, is_admin}`` whose session ``token`` is, begun at most ``days``
    days ago (by the day), or None."""
    return _token_account(db, "sessions", token, days)


def new_device(db: sqlite_utils.Database, researcher_id: int, *, days: int = 365) -> str:
    """Remember a device that logged in to the account; return its token (only its hash is stored)."""
    return _new_token(db, "devices", researcher_id, days)


def device_account(db: sqlite_utils.Database, token, *, days: int = 365) -> dict | None:
    """The account that the device ``token`` logged in to at most ``days`` days ago, or None."""
    return _token_account(db, "devices", token, days)


def end_sessions(db: sqlite_utils.Database, researcher_id: int | None = None) -> int:
    """End every session of this account (every account's with None), on every device; return
    how many ended."""
    with write_transaction(db):
        if researcher_id is None:
            return db.execute("DELETE FROM sessions").rowcount
        return db.execute("DELETE FROM sessions WHERE researcher_id = ?", [researcher_id]).rowcount


# Invitations of colleagues: an admin's one-time link that makes an account (issue 27).

_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{1,100}")
INVITE_DAYS = 7  # a link works on the day it was made and the 6 days after: never more than 7 × 24 h
NOT_VALID = ("invitation: this link is not valid (it was used, withdrawn or is older than "
             f"{INVITE_DAYS} days); ask the admin who invited you for a new one")


class InviteError(InvitationError):
    """A colleague's invitation link that is unknown, used, revoked or expired: one answer for all four
    (an :class:`~.invitations.InvitationError`, as a respondent's invitation token's refusal is)."""

    def __init__(self, message: str = NOT_VALID, field: str | None = "invitation"):
        super().__init__(message, field)


def researchers(db: sqlite_utils.Database) -> list[dict]:
    """Every account ``{id, email, is_admin}``, by email."""
    rows = db.execute("SELECT id, email, is_admin FROM researchers ORDER BY email").fetchall()
    return [dict(zip(("id", "email", "is_admin"), row)) for row in rows]


def _invite_first_day() -> str:
    return _first_day(INVITE_DAYS - 1)


def invite(db: sqlite_utils.Database, email: str, *, admin: bool = False) -> str:
    """Invite ``email`` to make an account; return the link's token (only its SHA-256 is stored).

    A new invitation of the same email replaces the pending one (its link stops working).  An
    email that already has an account is refused (AccountError naming ``email``).  Invitations
    older than :data:`INVITE_DAYS` are deleted here."""
    email = normalize_email(email)
    token = secrets.token_urlsafe(32)
    with write_transaction(db):
        if db.execute("SELECT 1 FROM researchers WHERE email = ?", [email]).fetchone():
            raise AccountError(f"email: {email} already has an account")
        db.execute("DELETE FROM researcher_invites WHERE email = ? OR created_on < ?", [email, _invite_first_day()])
        db.execute("INSERT INTO researcher_invites (token_hash, email, is_admin, created_on) VALUES (?, ?, ?, ?)",
                   [token_hash(token), email, int(bool(admin)), today()])
    return token


def pending_invites(db: sqlite_utils.Database) -> list[dict]:
    """The invitations whose link still works, ``{email, is_admin, created_on, last_day}``, by email."""
    rows = db.execute("SELECT email, is_admin, created_on FROM researcher_invites WHERE created_on >= ? "
                      "ORDER BY email", [_invite_first_day()]).fetchall()
    return [{"email": email, "is_admin": is_admin, "created_on": created_on,
             "last_day": (datetime.date.fromisoformat(created_on)
                          + datetime.timedelta(days=INVITE_DAYS - 1)).isoformat()}
            for email, is_admin, created_on in rows]


def revoke_invite(db: sqlite_utils.Database, email: str) -> bool:
    """Withdraw the invitation of ``email``; return whether there was one."""
    try:
        email = normalize_email(email)
    except AccountError:
        return False
    with write_transaction(db):
        return db.execute("DELETE FROM researcher_invites WHERE email = ?", [email]).rowcount > 0


def _invite_hash(token) -> str | None:
    # A token is 43 characters of the URL-safe alphabet; anything else is not one (and is not hashed).
    return token_hash(token) if isinstance(token, str) and _TOKEN_RE.fullmatch(token) else None


def invited(db: sqlite_utils.Database, token) -> dict | None:
    """The invitation ``{email, is_admin}`` whose link ``token`` is, if it still works, else None."""
    digest = _invite_hash(token)
    if digest is None:
        return None
    row = db.execute("SELECT email, is_admin FROM researcher_invites WHERE token_hash = ? AND created_on >= ?",
                     [digest, _invite_first_day()]).fetchone()
    return {"email": row[0], "is_admin": row[1]} if row else None


def accept_invite(db: sqlite_utils.Database, token, password: str) -> tuple[int, str]:
    """Make the invited account with ``password``; return its id and a new session's token.

    One transaction deletes the invitation, creates the account and starts its session, so a link
    makes one account at most, even when two requests use it at once.  A link that does not work
    raises InviteError (one message, whatever the reason); a password that the policy refuses
    raises AccountError naming ``password``, and the link keeps working."""
    invitation = invited(db, token)
    if invitation is None:
        raise InviteError()
    check_password(password, invitation["email"])
    password_hash = generate_password_hash(password)
    session = secrets.token_urlsafe(32)
    with write_transaction(db):
        if db.execute("DELETE FROM researcher_invites WHERE token_hash = ? AND created_on >= ?",
                      [_invite_hash(token), _invite_first_day()]).rowcount != 1:
            raise InviteError()  # used by a concurrent request since it was read
        if db.execute("SELECT 1 FROM researchers WHERE email = ?", [invitation["email"]]).fetchone():
            raise InviteError()  # made meanwhile with create-researcher: the link has nothing left to do
        researcher_id = db.execute(
            "INSERT INTO researchers (email, password_hash, created_on, is_admin) VALUES (?, ?, ?, ?)",
            [invitation["email"], password_hash, today(), invitation["is_admin"]]).lastrowid
        db.execute("INSERT INTO sessions (token_hash, researcher_id, created_on) VALUES (?, ?, ?)",
                   [token_hash(session), researcher_id, today()])
    return researcher_id, session
