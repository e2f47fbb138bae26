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
    from types import SimpleNamespace

    from deniable.server.survey.definition import Question

    from .aggregates import encode

    db.execute("CREATE TABLE answer_patterns (survey_id INTEGER NOT NULL REFERENCES surveys(id), "
               "day TEXT NOT NULL, pattern BLOB NOT NULL, count INTEGER NOT NULL, "
               "PRIMARY KEY (survey_id, day, pattern)) WITHOUT ROWID")
    # The questions as this migration finds them, all choices (not through .surveys, which reads
    # columns that later migrations add).
    for (survey_id,) in db.execute("SELECT id FROM surveys").fetchall():
        shape = SimpleNamespace(questions=[Question(id=qid, text=text, options=tuple(json.loads(options)))
                                           for qid, text, options in db.execute(
            "SELECT qid, text, options FROM questions WHERE survey_id = ? ORDER BY position", [survey_id])])
        counted: dict[tuple[str, bytes], int] = {}
        for day, reports in db.execute("SELECT submitted_on, reports FROM responses WHERE survey_id = ?",
                                       [survey_id]):
            key = (day, encode(shape, json.loads(reports)))
            counted[key] = counted.get(key, 0) + 1
        db.conn.executemany("INSERT INTO answer_patterns VALUES (?, ?, ?, ?)",
                            [(survey_id, day, pattern, n) for (day, pattern), n in counted.items()])


@migrations()
def m020_release_ledger(db: sqlite_utils.Database) -> None:
    """Public releases with central differential privacy (:mod:`deniable.server.store.releases`):
    a release budget per survey (fixed once something is released), the releases (each a JSON
    document of values drawn once), and an append-only ledger of what each release spent.  The
    database itself refuses a ledger entry beyond the budget, a change to the ledger, and a
    change of the budget once anything is spent."""
    db.execute("CREATE TABLE release_budgets (survey_id INTEGER PRIMARY KEY REFERENCES surveys(id), "
               "epsilon REAL NOT NULL CHECK (epsilon > 0), public INTEGER NOT NULL DEFAULT 0)")
    db.execute("CREATE TABLE releases (id INTEGER PRIMARY KEY, survey_id INTEGER NOT NULL REFERENCES surveys(id), "
               "released_on TEXT NOT NULL, document TEXT NOT NULL)")
    db.execute("CREATE INDEX idx_releases_survey_id ON releases (survey_id)")
    db.execute("CREATE TABLE release_ledger (id INTEGER PRIMARY KEY, "
               "survey_id INTEGER NOT NULL REFERENCES surveys(id), release_id INTEGER NOT NULL REFERENCES releases(id), "
               "mechanism TEXT NOT NULL, epsilon REAL NOT NULL CHECK (epsilon > 0), realized_epsilon REAL NOT NULL, "
               "sensitivity INTEGER NOT NULL, what TEXT NOT NULL)")
    db.execute("CREATE INDEX idx_release_ledger_survey_id ON release_ledger (survey_id)")
    db.execute(
        """CREATE TRIGGER release_ledger_within_budget BEFORE INSERT ON release_ledger
        WHEN NEW.epsilon + (SELECT ifnull(sum(epsilon), 0) FROM release_ledger WHERE survey_id = NEW.survey_id)
             > ifnull((SELECT epsilon FROM release_budgets WHERE survey_id = NEW.survey_id), 0) * (1 + 1e-12)
        BEGIN SELECT RAISE(ABORT, 'this release would exceed the survey''s release budget'); END""")
    for event in ("UPDATE", "DELETE"):
        db.execute(f"""CREATE TRIGGER release_ledger_append_only_{event.lower()} BEFORE {event} ON release_ledger
            BEGIN SELECT RAISE(ABORT, 'the release ledger is append-only'); END""")
        db.execute(f"""CREATE TRIGGER releases_kept_{event.lower()} BEFORE {event} ON releases
            BEGIN SELECT RAISE(ABORT, 'a release is kept as it was drawn'); END""")
    db.execute(
        """CREATE TRIGGER release_budget_fixed BEFORE UPDATE OF epsilon ON release_budgets
        WHEN NEW.epsilon IS NOT OLD.epsilon AND EXISTS (SELECT 1 FROM release_ledger WHERE survey_id = OLD.survey_id)
        BEGIN SELECT RAISE(ABORT, 'the release budget is fixed once something has been released'); END""")


def _freeze_questions_but_wording(db: sqlite_utils.Database, also: str = "", what: str = "number, order") -> None:
    """(Re)create the trigger that lets a launched survey's questions change only in wording: the
    text and the option labels (same number, no label moved); ``also`` adds columns that must not
    change either."""
    db.execute("DROP TRIGGER questions_frozen_update")
    db.execute(
        f"""CREATE TRIGGER questions_frozen_update BEFORE UPDATE ON questions
        WHEN (SELECT status FROM surveys WHERE id = OLD.survey_id) != 'draft' AND NOT (
            NEW.id = OLD.id AND NEW.survey_id = OLD.survey_id AND NEW.position = OLD.position
            AND NEW.qid = OLD.qid AND NEW.required = OLD.required AND NEW.k = OLD.k
            AND NEW.epsilon IS OLD.epsilon AND NEW.threshold IS OLD.threshold {also}
            AND json_valid(NEW.options) AND json_type(NEW.options) = 'array'
            AND json_array_length(NEW.options) = json_array_length(OLD.options)
            AND NOT EXISTS (SELECT 1 FROM json_each(OLD.options) AS o JOIN json_each(NEW.options) AS n
                            ON o.value = n.value AND o.key != n.key))
        BEGIN SELECT RAISE(ABORT, 'the survey is not a draft: only the wording of its questions and options may change, not their {what} or epsilon'); END""")


@migrations()
def m010_information_reopen_and_wording_fixes(db: sqlite_utils.Database) -> None:
    """Issue 10: what respondents read before the questions, and fixing the wording of a launched
    survey without touching its design.

    - ``surveys``: ``information``, ``contact``, ``consent`` and ``language`` (docs/design.md,
      "Formats"), and ``text_version``: which wording respondents see now (1 until a fix).
    - ``wording_versions``: every wording a launched survey has had (title, description, each
      question's text and option labels), from the day it took effect, and who changed it.
    - ``responses.text_version``: the wording each response was answered under, set in the same
      transaction as the insert by a trigger (nothing in the submission path changes).
    - The questions of a launched survey still cannot be inserted or deleted, and their id,
      position, k, ε, threshold and required flag still cannot change; only the question text and
      the option labels may, keeping the number of options and their order (no label may move
      to another position).  Reopening (closed → open) was already allowed by m006.
    """
    db["surveys"].add_column("information", str, not_null_default="")
    db["surveys"].add_column("contact", str, not_null_default="")
    db["surveys"].add_column("consent", int, not_null_default=0)
    db["surveys"].add_column("language", str)
    db["surveys"].add_column("text_version", int, not_null_default=1)
    db.execute("CREATE TABLE wording_versions (survey_id INTEGER NOT NULL REFERENCES surveys(id), "
               "version INTEGER NOT NULL, since TEXT NOT NULL, wording TEXT NOT NULL, changed_by TEXT, "
               "PRIMARY KEY (survey_id, version)) WITHOUT ROWID")
    db.execute("ALTER TABLE responses ADD COLUMN text_version INTEGER NOT NULL DEFAULT 1")
    db.execute(
        """CREATE TRIGGER responses_text_version AFTER INSERT ON responses
        WHEN (SELECT text_version FROM surveys WHERE id = NEW.survey_id) > 1
        BEGIN UPDATE responses SET text_version = (SELECT text_version FROM surveys WHERE id = NEW.survey_id)
              WHERE id = NEW.id; END""")
    _freeze_questions_but_wording(db)


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
    # A launched survey's question keeps its type and spec too (the m010 trigger, with them added).
    _freeze_questions_but_wording(db, "AND NEW.type IS OLD.type AND NEW.spec IS OLD.spec", "number, order, type")


@migrations()
def m031_wording_in_specs(db: sqlite_utils.Database) -> None:
    """Fixing the wording of a launched survey's list experiment (issue 22): its sensitive item is a
    words-only field of ``spec``, so the frozen-design trigger lets ``spec`` change in it — and in
    nothing else: with the sensitive item removed, the new spec must equal the old one."""
    _freeze_questions_but_wording(
        db, "AND NEW.type IS OLD.type AND (NEW.spec IS OLD.spec OR "
            "json_remove(NEW.spec, '$.sensitive') IS json_remove(OLD.spec, '$.sensitive'))", "number, order, type")


@migrations()
def m032_protected_estimates_without_a_budget(db: sqlite_utils.Database) -> None:
    """Publishing the protected questions' estimates alone (issue 22) spends no ε, so it needs no
    release budget: such a release stores a budget of 0 (nothing that depends on direct answers can
    be released until the owner sets one, which stays possible until the ledger has an entry).
    SQLite cannot change a CHECK constraint in place, so ``release_budgets`` is rebuilt with
    ``epsilon >= 0``; the two triggers that name it are made again as m020 made them."""
    db.execute("DROP TRIGGER release_ledger_within_budget")
    db.execute("CREATE TABLE release_budgets_new (survey_id INTEGER PRIMARY KEY REFERENCES surveys(id), "
               "epsilon REAL NOT NULL CHECK (epsilon >= 0), public INTEGER NOT NULL DEFAULT 0)")
    db.execute("INSERT INTO release_budgets_new (survey_id, epsilon, public) "
               "SELECT survey_id, epsilon, public FROM release_budgets")
    db.execute("DROP TABLE release_budgets")
    db.execute("ALTER TABLE release_budgets_new RENAME TO release_budgets")
    db.execute(
        """CREATE TRIGGER release_ledger_within_budget BEFORE INSERT ON release_ledger
        WHEN NEW.epsilon + (SELECT ifnull(sum(epsilon), 0) FROM release_ledger WHERE survey_id = NEW.survey_id)
             > ifnull((SELECT epsilon FROM release_budgets WHERE survey_id = NEW.survey_id), 0) * (1 + 1e-12)
        BEGIN SELECT RAISE(ABORT, 'this release would exceed the survey''s release budget'); END""")
    db.execute(
        """CREATE TRIGGER release_budget_fixed BEFORE UPDATE OF epsilon ON release_budgets
        WHEN NEW.epsilon IS NOT OLD.epsilon AND EXISTS (SELECT 1 FROM release_ledger WHERE survey_id = OLD.survey_id)
        BEGIN SELECT RAISE(ABORT, 'the release budget is fixed once something has been released'); END""")
