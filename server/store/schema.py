"""The database schema, as ``sqlite_utils.Migrations`` (schema changes never drop data).

No table has a column for an IP address, a user agent or a time finer than the day
(docs/design.md, invariant 2).  Invariant 4 (a launched design is frozen) is enforced here too,
by triggers.
"""

from __future__ import annotations

import secrets

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


@migrations(transactional=False)
def m004_responses_without_order(db: sqlite_utils.Database) -> None:
    """Responses get random identifiers instead of sequential rowids (docs/design.md, invariant 6).

    The table is rebuilt WITHOUT ROWID on a random text key, existing rows copied in a random
    order under new random ids, and the file vacuumed so that no free page keeps the old order.
    """
    with db.atomic():
        db.execute("ALTER TABLE responses RENAME TO responses_ordered")
        db.execute("DROP INDEX IF EXISTS idx_responses_survey_id")
        db.execute(
            "CREATE TABLE responses (id TEXT PRIMARY KEY, survey_id INTEGER NOT NULL REFERENCES surveys(id), "
            "submitted_on TEXT NOT NULL, reports TEXT NOT NULL, design TEXT NOT NULL) WITHOUT ROWID")
        rows = db.execute("SELECT survey_id, submitted_on, reports, design FROM responses_ordered").fetchall()
        secrets.SystemRandom().shuffle(rows)
        db.conn.executemany("INSERT INTO responses VALUES (?, ?, ?, ?, ?)",
                            [(new_response_id(), *row) for row in rows])
        db.execute("DROP TABLE responses_ordered")
        db.execute("CREATE INDEX idx_responses_survey_id ON responses (survey_id)")
    db.execute("PRAGMA secure_delete = ON")
    db.execute("VACUUM")


@migrations()
def m005_owners_shares_sessions(db: sqlite_utils.Database) -> None:
    """Every survey has an owner (the first researcher for existing surveys; none, that is
    admin-only, when there was no researcher) and may be shared; accounts can be admins, and
    a session epoch lets logout and password changes end every earlier session."""
    db["researchers"].add_column("is_admin", int, not_null_default=0)
    db["researchers"].add_column("session_epoch", int, not_null_default=0)
    db.execute("ALTER TABLE surveys ADD COLUMN owner_id INTEGER REFERENCES researchers(id)")
    db.execute("UPDATE surveys SET owner_id = (SELECT min(id) FROM researchers)")
    db.execute("CREATE TABLE survey_shares (survey_id INTEGER NOT NULL REFERENCES surveys(id), "
               "researcher_id INTEGER NOT NULL REFERENCES researchers(id), "
               "role TEXT NOT NULL CHECK (role IN ('viewer', 'editor')), "
               "PRIMARY KEY (survey_id, researcher_id)) WITHOUT ROWID")


@migrations()
def m006_status_transitions_and_scrub(db: sqlite_utils.Database) -> None:
    """The database refuses status changes the lifecycle does not allow, and the deletion of a
    launched survey, so that editing the file cannot reopen a design; ``scrub`` is the one-row
    table the scrubber rewrites (:mod:`deniable.server.store.scrub`)."""
    db.execute(
        """CREATE TRIGGER surveys_status_transition BEFORE UPDATE OF status ON surveys
        WHEN NEW.status IS NOT OLD.status AND NOT (
            (OLD.status = 'draft' AND NEW.status = 'open') OR
            (OLD.status = 'open' AND NEW.status = 'closed') OR
            (OLD.status = 'closed' AND NEW.status = 'open'))
        BEGIN SELECT RAISE(ABORT, 'this status change is not allowed: a survey goes draft, open, closed (and may reopen)'); END""")
    db.execute(
        """CREATE TRIGGER surveys_launched_kept BEFORE DELETE ON surveys WHEN OLD.status != 'draft'
        BEGIN SELECT RAISE(ABORT, 'a launched survey cannot be deleted'); END""")
    db.execute("CREATE TABLE scrub (passes INTEGER NOT NULL)")
    db.execute("INSERT INTO scrub VALUES (0)")


def new_response_id() -> str:
    """A random response identifier (96 bits): it orders nothing and reveals nothing."""
    return secrets.token_urlsafe(12)


@migrations()
def m007_answer_patterns(db: sqlite_utils.Database) -> None:
    """Per survey and day, how many responses gave each whole answer vector (the sufficient
    statistics of cross-tabs, subgroups and every other grouped view: :mod:`.aggregates`),
    filled from the responses already stored."""
    import json

    from .aggregates import encode
    from .surveys import get_survey

    db.execute("CREATE TABLE answer_patterns (survey_id INTEGER NOT NULL REFERENCES surveys(id), "
               "day TEXT NOT NULL, pattern BLOB NOT NULL, count INTEGER NOT NULL, "
               "PRIMARY KEY (survey_id, day, pattern)) WITHOUT ROWID")
    for (slug,) in db.execute("SELECT slug FROM surveys").fetchall():
        stored = get_survey(db, slug)
        counted: dict[tuple[str, bytes], int] = {}
        for day, reports in db.execute("SELECT submitted_on, reports FROM responses WHERE survey_id = ?",
                                       [stored.id]):
            key = (day, encode(stored.survey, json.loads(reports)))
            counted[key] = counted.get(key, 0) + 1
        db.conn.executemany("INSERT INTO answer_patterns VALUES (?, ?, ?, ?)",
                            [(stored.id, day, pattern, n) for (day, pattern), n in counted.items()])


@migrations()
def m030_question_types(db: sqlite_utils.Database) -> None:
    """Numeric, check-all-that-apply and list-experiment questions (issue 11).

    ``questions.type`` is the question's type (existing questions are choices) and ``spec`` the
    type's own fields as JSON (a numeric question's min, max, step, mechanism and grid; a list
    experiment's sensitive item).  ``cell_counts`` holds the sufficient statistics of every
    question that is not a choice, kept current in each insert's transaction like ``counts``
    (:mod:`deniable.server.survey.cells`): per (question, statistic, cell) a count — ``cell`` per
    reported code of a numeric or list question, and ``tick``, ``pair`` (cell = j·K + l) and
    ``ticked`` for a check-all-that-apply question.  No order, no time (invariant 6)."""
    db["questions"].add_column("type", str, not_null_default="choice")
    db["questions"].add_column("spec", str)
    db.execute("CREATE TABLE cell_counts (survey_id INTEGER NOT NULL REFERENCES surveys(id), qid TEXT NOT NULL, "
               "stat TEXT NOT NULL, cell INTEGER NOT NULL, count INTEGER NOT NULL, "
               "PRIMARY KEY (survey_id, qid, stat, cell)) WITHOUT ROWID")
