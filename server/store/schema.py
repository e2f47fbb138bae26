"""The database schema, as ``sqlite_utils.Migrations`` (schema changes never drop data).

No table has a column for an IP address, a user agent or a time finer than the day
(docs/design.md, invariant 2).  Invariant 4 (a launched design is frozen) is enforced here too,
by triggers.
"""

from __future__ import annotations

import sqlite_utils
from sqlite_utils import Migrations

migrations = Migrations("deniable")


@migrations()
def m001_surveys_questions_responses_counts(db: sqlite_utils.Database) -> None:
    db["surveys"].create(
        {
            "id": int,
            "slug": str,
            "title": str,
            "description": str,
            "status": str,  # draft -> open -> closed
            "target_n": int,
            "created_on": str,  # YYYY-MM-DD
            "opened_on": str,
            "closed_on": str,
        },
        pk="id",
        not_null={"slug", "title", "description", "status"},
        defaults={"status": "draft", "description": "", "target_n": 1000},
    )
    db["surveys"].create_index(["slug"], unique=True)
    db["questions"].create(
        {
            "id": int,
            "survey_id": int,
            "position": int,
            "qid": str,  # the question id of the definition
            "text": str,
            "options": str,  # JSON list of labels
            "required": int,
            "epsilon": float,  # declared; NULL = asked directly (not protected)
            "k": int,
            "threshold": int,  # floor(p * 2^32); NULL for a direct question
        },
        pk="id",
        foreign_keys=[("survey_id", "surveys", "id")],
        not_null={"survey_id", "position", "qid", "text", "options", "required", "k"},
    )
    db["questions"].create_index(["survey_id", "qid"], unique=True)
    db["responses"].create(
        {
            "id": int,
            "survey_id": int,
            "submitted_on": str,  # YYYY-MM-DD: nothing finer than the day
            "reports": str,  # JSON {qid: reported option index}; randomized for protected questions
            "design": str,  # JSON {qid: [k, threshold]}: the mechanism each report was made under
        },
        pk="id",
        foreign_keys=[("survey_id", "surveys", "id")],
        not_null={"survey_id", "submitted_on", "reports", "design"},
    )
    db["responses"].create_index(["survey_id"])
    # Invariant 4: a survey's design is frozen once it opens; the database refuses it too.
    for event, row in (("INSERT", "NEW"), ("UPDATE", "OLD"), ("DELETE", "OLD")):
        db.execute(
            f"""CREATE TRIGGER questions_frozen_{event.lower()} BEFORE {event} ON questions
            WHEN (SELECT status FROM surveys WHERE id = {row}.survey_id) != 'draft'
            BEGIN SELECT RAISE(ABORT, 'the survey is not a draft: its questions are frozen'); END"""
        )
    db["counts"].create(
        {"survey_id": int, "qid": str, "option": int, "count": int},
        pk=("survey_id", "qid", "option"),
        foreign_keys=[("survey_id", "surveys", "id")],
        not_null={"count"},
        defaults={"count": 0},
    )


@migrations()
def m002_researchers(db: sqlite_utils.Database) -> None:
    db["researchers"].create(
        {"id": int, "email": str, "password_hash": str, "created_on": str},  # created_on: YYYY-MM-DD
        pk="id",
        not_null={"email", "password_hash"},
    )
    db["researchers"].create_index(["email"], unique=True)


@migrations()
def m003_invitations(db: sqlite_utils.Database) -> None:
    # Only SHA-256 hashes of unused tokens, and no rowid: nothing records when a token was
    # made or used, so nothing can be lined up with the order of the responses.
    db.execute("CREATE TABLE invitations (token_hash TEXT PRIMARY KEY, "
               "survey_id INTEGER NOT NULL REFERENCES surveys(id)) WITHOUT ROWID")
    db["surveys"].add_column("invitation_only", int, not_null_default=0)
