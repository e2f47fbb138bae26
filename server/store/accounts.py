"""Researchers' accounts: create or reset one, check a password, end every session of an account.

Passwords are stored only as werkzeug's scrypt hashes.  A new password must have at least
:data:`MIN_PASSWORD` characters and be hard to guess by zxcvbn (Dropbox's password-strength
estimator: its 30,000 most common passwords, dictionaries, keyboard patterns, dates and
repeats; score ≥ :data:`MIN_STRENGTH` means an estimated 10^8 guesses or more), so ``12345678``,
``password1234`` or ``aaaaaaaaaaaa`` are refused.

Sessions are cookies signed by the app; each carries the account's ``session_epoch``.
:func:`end_sessions` (logout) and a password reset (:func:`set_researcher`) increment it, so
every cookie issued before stops working at once, on every device (docs/design.md, invariant 7).
"""

from __future__ import annotations

import secrets

import sqlite_utils
from werkzeug.security import check_password_hash, generate_password_hash

from deniable.errors import FieldError

from .db import write_transaction
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

    Replacing the password ends every earlier session of the account.  ``admin`` (True/False)
    sets whether the account sees every survey; None leaves it as it is (False when new).
    """
    email = normalize_email(email)
    check_password(password, email)
    password_hash = generate_password_hash(password)
    with write_transaction(db):
        row = db.execute("SELECT id FROM researchers WHERE email = ?", [email]).fetchone()
        if row:
            db.execute("UPDATE researchers SET password_hash = ?, session_epoch = session_epoch + 1 WHERE id = ?",
                       [password_hash, row[0]])
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
    """The account ``{id, email, is_admin, session_epoch}``, or None."""
    row = db.execute("SELECT id, email, is_admin, session_epoch FROM researchers WHERE id = ?",
                     [researcher_id]).fetchone()
    return dict(zip(("id", "email", "is_admin", "session_epoch"), row)) if row else None


def find_researcher(db: sqlite_utils.Database, email: str) -> dict | None:
    """The account with this email (normalized), or None."""
    try:
        email = normalize_email(email)
    except AccountError:
        return None
    row = db.execute("SELECT id FROM researchers WHERE email = ?", [email]).fetchone()
    return researcher(db, row[0]) if row else None


def end_sessions(db: sqlite_utils.Database, researcher_id: int) -> None:
    """End every session of this account, on every device (logout)."""
    db.execute("UPDATE researchers SET session_epoch = session_epoch + 1 WHERE id = ?", [researcher_id])
