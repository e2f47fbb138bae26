"""Researchers' accounts: create or reset one, check a password (hashes only, werkzeug's scrypt)."""

from __future__ import annotations

import secrets

import sqlite_utils
from werkzeug.security import check_password_hash, generate_password_hash

from .db import write_transaction
from .surveys import today

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
