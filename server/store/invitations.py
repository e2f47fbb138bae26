"""Invitation links: single-use tokens that let one person respond to an invitation-only survey.

A token is 144 random bits (``secrets.token_urlsafe(18)``, drawn again while it starts with ``-``
or ``_``, so that no CSV writes it with a spreadsheet guard before it: :func:`new_token`); the
database keeps only its SHA-256.
A slow password hash is not needed: nobody can search a 2^144 space, so the hash only has to
be one-way.  A token is consumed by deleting its hash in the same ``BEGIN IMMEDIATE``
transaction that inserts the response (:func:`.responses.insert_validated`): the response
is stored iff the token was valid and unused, and a refused response leaves the token usable.
The response row holds nothing about the token, and the ``invitations`` table has no rowid, no
time and no "used" flag, so neither table can be joined to the other, not even by order.
"""

from __future__ import annotations

import hashlib
import io
import secrets

import sqlite_utils

from deniable.server.survey.spreadsheet import SafeWriter

from deniable.errors import FieldError

from .db import write_transaction

MAX_BATCH = 100_000
TOKEN_BYTES = 18


class InvitationError(FieldError):
    """An invitation that does not let its holder in (field ``invitation``): a respondent's token that is
    missing, unknown or already used, or — :class:`.accounts.InviteError`, the one kind beside it — a
    colleague's link that is unknown, used, withdrawn or expired."""

    def __init__(self, message: str = "", field: str | None = "invitation"):
        super().__init__(message, field)


def new_token() -> str:
    """A fresh token that starts with a letter or digit (the first character is drawn again
    otherwise: 62 of 64 values remain, about 0.05 bits fewer)."""
    while True:
        token = secrets.token_urlsafe(TOKEN_BYTES)
        if token[0] not in "-_":
            return token


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def generate(db: sqlite_utils.Database, survey_id: int, n: int) -> list[str]:
    """Create ``n`` new tokens for the survey (one transaction) and return them; only hashes are stored."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_BATCH:
        raise ValueError(f"count: must be a whole number from 1 to {MAX_BATCH:,}, got {n!r}")
    tokens = [new_token() for _ in range(n)]
    with write_transaction(db):
        db.conn.executemany("INSERT INTO invitations (token_hash, survey_id) VALUES (?, ?)",
                            [(token_hash(t), survey_id) for t in tokens])
    return tokens


def consume(db: sqlite_utils.Database, survey_id: int, token) -> None:
    """Use up ``token`` for this survey; call inside the response's write transaction."""
    if not isinstance(token, str) or not token:
        raise InvitationError("invitation: this survey takes responses only through an invitation link")
    deleted = db.execute("DELETE FROM invitations WHERE token_hash = ? AND survey_id = ?",
                         [token_hash(token), survey_id]).rowcount
    if deleted != 1:
        raise InvitationError("invitation: this invitation link is not valid for this survey, "
                              "or it has been used already")


def usable(db: sqlite_utils.Database, survey_id: int, token) -> bool:
    """Whether ``token`` would be accepted now (known for this survey, unused), without using it up:
    the survey page says so on arrival, before anything is answered."""
    if not isinstance(token, str) or not token:
        return False
    return db.execute("SELECT 1 FROM invitations WHERE token_hash = ? AND survey_id = ?",
                      [token_hash(token), survey_id]).fetchone() is not None


def links_csv(tokens: list[str], survey_url: str) -> str:
    """The CSV ``token,url`` for a batch of tokens (``url`` = the survey's address + ``?t=TOKEN``)."""
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")  # a token may begin with "-"
    writer.writerow(["token", "url"])
    writer.writerows((t, f"{survey_url}?t={t}") for t in tokens)
    return out.getvalue()


def unused(db: sqlite_utils.Database, survey_id: int) -> int:
    return db.execute("SELECT count(*) FROM invitations WHERE survey_id = ?", [survey_id]).fetchone()[0]


def set_invitation_only(db: sqlite_utils.Database, survey_id: int, flag: bool) -> None:
    db.execute("UPDATE surveys SET invitation_only = ? WHERE id = ?", [int(flag), survey_id])
