"""The database schema's history: every migration, frozen, in the order it runs.

A migration is history: once released it never changes, and it imports nothing from the project
(only the standard library and sqlite-utils), so that what it does to an old database cannot
change when the code does; what it needs of the code of its day is copied here, as of that day
(``_response_id``, ``_pattern``).  A new migration is appended with the next number, ``mNN_what``.
``tests/store/test_migrations.py`` checks the imports, the numbering and that a fresh database and
an upgraded one end alike.

No table has a column for an IP address, a user agent or a time finer than the day
(docs/design.md, invariant 2).  Invariant 4 (a launched design is frozen) is enforced here too,
by triggers.

**Names.**  sqlite-utils records each applied migration by name in ``_sqlite_migrations`` and runs
the ones not recorded, in the order they are registered here.  The first twelve were once named
m001…m007, m020, m010, m030, m031, m032 (in the order they run); they are now m01…m12.  Before
applying anything, :meth:`DeniableMigrations.apply` renames the names an existing database
recorded (:data:`LEGACY_NAMES`) to today's, in one transaction, so nothing runs twice.  (A deniable
from before the renaming cannot open a renamed database: it would run m001 again, which fails on
the existing tables and changes nothing.)
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable

import sqlite_utils
from sqlite_utils import Migrations

# The names the migrations were recorded under before they were numbered in order (old → new).
LEGACY_NAMES = {
    "m001_surveys_questions_responses_counts": "m01_surveys_questions_responses_counts",
    "m002_researchers": "m02_researchers",
    "m003_invitations": "m03_invitations",
    "m004_responses_without_order": "m04_responses_without_order",
    "m005_owners_shares_sessions": "m05_owners_shares_sessions",
    "m006_status_transitions_and_scrub": "m06_status_transitions_and_scrub",
    "m007_answer_patterns": "m07_answer_patterns",
    "m020_release_ledger": "m08_release_ledger",
    "m010_information_reopen_and_wording_fixes": "m09_information_reopen_and_wording_fixes",
    "m030_question_types": "m10_question_types",
    "m031_wording_in_specs": "m11_wording_in_specs",
    "m032_protected_estimates_without_a_budget": "m12_protected_estimates_without_a_budget",
}


class DeniableMigrations(Migrations):
    """sqlite-utils' migrations, that first rename the names an older database recorded
    (:data:`LEGACY_NAMES`), and refuse a ``stop_before`` that names no migration of the set."""

    def apply(self, db: sqlite_utils.Database, *, stop_before: str | Iterable[str] | None = None) -> None:
        names = {m.name for m in self._migrations}
        wanted = {stop_before} if isinstance(stop_before, str) else set(stop_before or ())
        if wanted - names:
            raise ValueError(f"no migration named {', '.join(sorted(wanted - names))} in set '{self.name}'")
        rename_legacy_names(db, self.name)
        super().apply(db, stop_before=stop_before)


def rename_legacy_names(db: sqlite_utils.Database, migration_set: str = "deniable") -> int:
    """Rename the legacy names ``db`` recorded to today's, in one transaction; return how many.

    Reads first and writes only when a legacy name is there, so that opening an up-to-date
    database takes no write lock for it."""
    table = Migrations.migrations_table
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table]).fetchone():
        return 0
    placeholders = ", ".join("?" * len(LEGACY_NAMES))
    found = [name for (name,) in db.execute(
        f"SELECT name FROM [{table}] WHERE migration_set = ? AND name IN ({placeholders})",
        [migration_set, *LEGACY_NAMES])]
    if not found:
        return 0
    with db.atomic():
        db.conn.executemany(f"UPDATE [{table}] SET name = ? WHERE migration_set = ? AND name = ?",
                            [(LEGACY_NAMES[name], migration_set, name) for name in found])
    return len(found)


migrations = DeniableMigrations("deniable")


@migrations()
def m01_surveys_questions_responses_counts(db: sqlite_utils.Database) -> None:
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
def m02_researchers(db: sqlite_utils.Database) -> None:
    db["researchers"].create(
        {"id": int, "email": str, "password_hash": str, "created_on": str},  # created_on: YYYY-MM-DD
        pk="id",
        not_null={"email", "password_hash"},
    )
    db["researchers"].create_index(["email"], unique=True)


@migrations()
def m03_invitations(db: sqlite_utils.Database) -> None:
    # Only SHA-256 hashes of unused tokens, and no rowid: nothing records when a token was
    # made or used, so nothing can be lined up with the order of the responses.
    db.execute("CREATE TABLE invitations (token_hash TEXT PRIMARY KEY, "
               "survey_id INTEGER NOT NULL REFERENCES surveys(id)) WITHOUT ROWID")
    db["surveys"].add_column("invitation_only", int, not_null_default=0)


def _response_id() -> str:
    """A random response identifier of 96 bits, as :func:`deniable.server.store.responses.new_response_id`
    made them when this was written (a copy: this migration must not change when that does)."""
    return secrets.token_urlsafe(12)


@migrations(transactional=False)
def m04_responses_without_order(db: sqlite_utils.Database) -> None:
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
                            [(_response_id(), *row) for row in rows])
        db.execute("DROP TABLE responses_ordered")
        db.execute("CREATE INDEX idx_responses_survey_id ON responses (survey_id)")
    db.execute("PRAGMA secure_delete = ON")
    db.execute("VACUUM")


@migrations()
def m05_owners_shares_sessions(db: sqlite_utils.Database) -> None:
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
def m06_status_transitions_and_scrub(db: sqlite_utils.Database) -> None:
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


def _pattern(questions: list[tuple[str, int]], reports: dict) -> bytes:
    """The answer pattern of one response ``{qid: option index}`` when every question was a choice, as
    :func:`deniable.server.store.aggregates.encode` makes it (a copy: this migration must not change
    when that does).  ``questions`` are ``(qid, number of options)`` in the survey's order; per
    question the reported index plus one (0 = not answered), one byte each, or two (little-endian)
    when a question has 255 options or more; a question of 65,535 options or more is left out."""
    kept = [(qid, k) for qid, k in questions if k < 65535]
    width = 1 if max((k for _, k in kept), default=0) < 255 else 2
    return b"".join((reports.get(qid, -1) + 1).to_bytes(width, "little") for qid, _ in kept)


@migrations()
def m07_answer_patterns(db: sqlite_utils.Database) -> None:
    """Per survey and day, how many responses gave each whole answer vector (the sufficient
    statistics of cross-tabs, subgroups and every other grouped view:
    :mod:`deniable.server.store.aggregates`), filled from the responses already stored."""
    db.execute("CREATE TABLE answer_patterns (survey_id INTEGER NOT NULL REFERENCES surveys(id), "
               "day TEXT NOT NULL, pattern BLOB NOT NULL, count INTEGER NOT NULL, "
               "PRIMARY KEY (survey_id, day, pattern)) WITHOUT ROWID")
    # The questions as this migration finds them, all choices, read with plain SQL (not through
    # the store, which reads columns that later migrations add).
    for (survey_id,) in db.execute("SELECT id FROM surveys").fetchall():
        questions = [(qid, len(json.loads(options))) for qid, options in db.execute(
            "SELECT qid, options FROM questions WHERE survey_id = ? ORDER BY position", [survey_id])]
        counted: dict[tuple[str, bytes], int] = {}
        for day, reports in db.execute("SELECT submitted_on, reports FROM responses WHERE survey_id = ?",
                                       [survey_id]):
            key = (day, _pattern(questions, json.loads(reports)))
            counted[key] = counted.get(key, 0) + 1
        db.conn.executemany("INSERT INTO answer_patterns VALUES (?, ?, ?, ?)",
                            [(survey_id, day, pattern, n) for (day, pattern), n in counted.items()])


@migrations()
def m08_release_ledger(db: sqlite_utils.Database) -> None:
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
    change either.  Used by m09, m10 and m11: frozen with them (a later change copies it)."""
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
def m09_information_reopen_and_wording_fixes(db: sqlite_utils.Database) -> None:
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
      to another position).  Reopening (closed → open) was already allowed by m06.
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
def m10_question_types(db: sqlite_utils.Database) -> None:
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
    # A launched survey's question keeps its type and spec too (the m09 trigger, with them added).
    _freeze_questions_but_wording(db, "AND NEW.type IS OLD.type AND NEW.spec IS OLD.spec", "number, order, type")


@migrations()
def m11_wording_in_specs(db: sqlite_utils.Database) -> None:
    """Fixing the wording of a launched survey's list experiment (issue 22): its sensitive item is a
    words-only field of ``spec``, so the frozen-design trigger lets ``spec`` change in it — and in
    nothing else: with the sensitive item removed, the new spec must equal the old one."""
    _freeze_questions_but_wording(
        db, "AND NEW.type IS OLD.type AND (NEW.spec IS OLD.spec OR "
            "json_remove(NEW.spec, '$.sensitive') IS json_remove(OLD.spec, '$.sensitive'))", "number, order, type")


@migrations()
def m12_protected_estimates_without_a_budget(db: sqlite_utils.Database) -> None:
    """Publishing the protected questions' estimates alone (issue 22) spends no ε, so it needs no
    release budget: such a release stores a budget of 0 (nothing that depends on direct answers can
    be released until the owner sets one, which stays possible until the ledger has an entry).
    SQLite cannot change a CHECK constraint in place, so ``release_budgets`` is rebuilt with
    ``epsilon >= 0``; the two triggers that name it are made again as m08 made them."""
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


# m13's constants and helpers, as of its day (copied, not imported: a migration is frozen).
_COUNTER_OFFSET = 1 << 56  # a stored counter is this + n: eight bytes whatever n is (n < 2⁵⁶)
_FREE_DAY = "0000-00-00"
_MIN_SLOTS = 64


def _slot_width(texts: list[str]) -> int:
    """A slot's width for these JSON texts (bytes): the longest, a quarter more, a multiple of 16."""
    longest = max((len(t.encode()) for t in texts), default=0)
    return max(16, -(-(longest * 5 // 4) // 16) * 16)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - len(text.encode()))


def _padding(expr: str) -> str:
    """SQL: the zero bytes that, beside the integer ``expr`` in a record, make eight bytes (SQLite stores an
    integer in 0 bytes (0 and 1), 1, 2, 3, 4, 6 or 8), as :func:`deniable.server.store.slots.padding` (a copy)."""
    return (f"zeroblob(8 - CASE WHEN {expr} BETWEEN 0 AND 1 THEN 0 WHEN {expr} BETWEEN -128 AND 127 THEN 1 "
            f"WHEN {expr} BETWEEN -32768 AND 32767 THEN 2 WHEN {expr} BETWEEN -8388608 AND 8388607 THEN 3 "
            f"WHEN {expr} BETWEEN -2147483648 AND 2147483647 THEN 4 "
            f"WHEN {expr} BETWEEN -140737488355328 AND 140737488355327 THEN 6 ELSE 8 END)")


_ENTRIES = 8  # entries of a pattern bucket
_FIRST_BUCKETS = 4


def _pattern_buckets(counted: dict[bytes, int], width: int) -> list[bytes]:
    """The rows of one survey and day's pattern buckets, as :mod:`deniable.server.store.aggregates`
    writes them (a copy, as of m13): ``_ENTRIES`` entries of (count, 8 bytes big-endian, 0 = empty;
    pattern), a pattern in bucket blake2b-64(pattern) mod the number of buckets, which is at least 4
    and twice the entries needed, doubled until no bucket overflows."""
    buckets = _FIRST_BUCKETS
    while len(counted) * 2 > buckets * _ENTRIES:
        buckets *= 2
    while True:
        held: list[list[bytes]] = [[] for _ in range(buckets)]
        for pattern in counted:
            held[int.from_bytes(hashlib.blake2b(pattern, digest_size=8).digest(), "big") % buckets].append(pattern)
        if max(map(len, held)) <= _ENTRIES:
            break
        buckets *= 2
    return [b"".join(counted[p].to_bytes(8, "big") + p for p in sorted(patterns))
            + bytes(8 + width) * (_ENTRIES - len(patterns)) for patterns in held]


@migrations(transactional=False)
def m13_response_slots_and_fixed_width_counters(db: sqlite_utils.Database) -> None:
    """No order of submission in the file's page layout (issue 23): SQLite puts a new cell below the
    cells already in its page and moves a cell whose size changes to the lowest offset, so the
    offsets of the cells in a page gave away the order they were written.

    - ``response_slots``: responses live in slots with random keys made ahead of need, in key order
      (:mod:`deniable.server.store.responses`); a submission overwrites a random free slot with
      bytes of exactly its size (``filled`` 0 → 1 takes no bytes either way, ``reports`` and
      ``design`` padded with spaces to the survey's widths, ``text_version`` + 2⁵⁶), which SQLite
      does in place.  ``response_slot_sizes``: per survey the number of slots, of filled ones and
      the widths (each + 2⁵⁶).  ``responses`` becomes a view of the filled slots with the columns
      it had; inserting into it or deleting from it still works (triggers).  Existing responses
      keep their ids; every survey that has any gets as many free slots again (at least 64).
    - ``counts`` and ``cell_counts`` get a column ``pad``: zero bytes that make eight with ``count``
      (:func:`_padding`), so that a row keeps its size and an increment overwrites it in place.
    - ``pattern_buckets``: the answer patterns of a survey and day in fixed-size rows (buckets of
      fixed-width (count, pattern) entries, :func:`_pattern_buckets`), overwritten in place; the
      rows of ``answer_patterns`` move there (the table stays, empty).
    - The file is then vacuumed: every table and index is rebuilt in key order, and nothing of the
      old layout remains.
    """
    with db.atomic():
        db.execute("CREATE TABLE response_slots (survey_id INTEGER NOT NULL REFERENCES surveys(id), id TEXT NOT NULL, "
                   "filled INTEGER NOT NULL, submitted_on TEXT NOT NULL, reports TEXT NOT NULL, design TEXT NOT NULL, "
                   "text_version INTEGER NOT NULL, PRIMARY KEY (survey_id, id)) WITHOUT ROWID")
        db.execute("CREATE TABLE response_slot_sizes (survey_id INTEGER PRIMARY KEY REFERENCES surveys(id), "
                   "slots INTEGER NOT NULL, filled INTEGER NOT NULL, reports_width INTEGER NOT NULL, "
                   "design_width INTEGER NOT NULL)")
        for (survey_id,) in db.execute("SELECT DISTINCT survey_id FROM responses").fetchall():
            rows = db.execute("SELECT id, submitted_on, reports, design, text_version FROM responses "
                              "WHERE survey_id = ?", [survey_id]).fetchall()
            reports_width = _slot_width([r[2] for r in rows])
            design_width = _slot_width([r[3] for r in rows])
            taken = {r[0] for r in rows}
            slots = [(survey_id, rid, 1, day, _pad(rep, reports_width), _pad(des, design_width),
                      _COUNTER_OFFSET + (version or 1)) for rid, day, rep, des, version in rows]
            while len(slots) < max(_MIN_SLOTS, 2 * len(rows)):
                rid = _response_id()
                if rid not in taken:
                    taken.add(rid)
                    slots.append((survey_id, rid, 0, _FREE_DAY, " " * reports_width, " " * design_width,
                                  _COUNTER_OFFSET))
            slots.sort(key=lambda slot: slot[1])
            db.conn.executemany("INSERT INTO response_slots VALUES (?, ?, ?, ?, ?, ?, ?)", slots)
            db.execute("INSERT INTO response_slot_sizes VALUES (?, ?, ?, ?, ?)",
                       [survey_id, *(_COUNTER_OFFSET + n for n in (len(slots), len(rows), reports_width, design_width))])
        db.execute("DROP TABLE responses")  # its index and its text_version trigger with it
        db.execute(f"CREATE VIEW responses AS SELECT id, survey_id, submitted_on, rtrim(reports) AS reports, "
                   f"rtrim(design) AS design, text_version & {_COUNTER_OFFSET - 1} AS text_version "
                   "FROM response_slots WHERE filled = 1")
        db.execute(
            f"""CREATE TRIGGER responses_insert INSTEAD OF INSERT ON responses BEGIN
            INSERT INTO response_slots (survey_id, id, filled, submitted_on, reports, design, text_version)
            VALUES (NEW.survey_id, NEW.id, 1, NEW.submitted_on, NEW.reports, NEW.design,
                    ifnull(NEW.text_version, (SELECT text_version FROM surveys WHERE id = NEW.survey_id)) + {_COUNTER_OFFSET});
            UPDATE response_slot_sizes SET slots = slots + 1, filled = filled + 1 WHERE survey_id = NEW.survey_id;
            END""")
        db.execute(
            f"""CREATE TRIGGER responses_delete INSTEAD OF DELETE ON responses BEGIN
            UPDATE response_slots SET filled = 0, submitted_on = '{_FREE_DAY}', reports = printf('%*s', length(reports), ''),
                   design = printf('%*s', length(design), ''), text_version = {_COUNTER_OFFSET}
            WHERE survey_id = OLD.survey_id AND id = OLD.id;
            UPDATE response_slot_sizes SET filled = filled - 1 WHERE survey_id = OLD.survey_id;
            END""")
        db.execute("CREATE TABLE pattern_buckets (survey_id INTEGER NOT NULL REFERENCES surveys(id), day TEXT NOT NULL, "
                   "bucket INTEGER NOT NULL, entries BLOB NOT NULL, PRIMARY KEY (survey_id, day, bucket)) WITHOUT ROWID")
        days = db.execute("SELECT DISTINCT survey_id, day FROM answer_patterns").fetchall()
        for survey_id, day in days:
            counted = dict(db.execute("SELECT pattern, count FROM answer_patterns WHERE survey_id = ? AND day = ?",
                                      [survey_id, day]).fetchall())
            width = len(next(iter(counted)))
            db.conn.executemany("INSERT INTO pattern_buckets VALUES (?, ?, ?, ?)",
                                [(survey_id, day, b, entries)
                                 for b, entries in enumerate(_pattern_buckets(counted, width))])
        db.execute("DELETE FROM answer_patterns")
        for table in ("counts", "cell_counts"):
            db.execute(f"ALTER TABLE {table} ADD COLUMN pad BLOB NOT NULL DEFAULT x''")
            db.execute(f"UPDATE {table} SET pad = {_padding('count')}")
    db.execute("PRAGMA secure_delete = ON")
    db.execute("VACUUM")


@migrations()
def m14_sessions_as_token_hashes(db: sqlite_utils.Database) -> None:
    """Sessions that a copy of the files cannot forge (issue 23).  A dashboard session was a cookie
    signed with the app's secret holding the account's id and ``session_epoch``: whoever copied the
    ``.secret`` and the database could sign one.  Now a session is a random token in the cookie, and
    ``sessions`` keeps only its SHA-256, the account and the day it began; a device that logged in
    keeps a device cookie, kept the same way in ``devices`` (the day it was made), which lets the
    right password through failed logins from elsewhere.  ``session_epoch`` is dropped: every session
    of the old kind ends with the upgrade."""
    for table in ("sessions", "devices"):
        db.execute(f"CREATE TABLE {table} (token_hash TEXT PRIMARY KEY, "
                   "researcher_id INTEGER NOT NULL REFERENCES researchers(id) ON DELETE CASCADE, "
                   "created_on TEXT NOT NULL) WITHOUT ROWID")  # created_on: YYYY-MM-DD
        db.execute(f"CREATE INDEX idx_{table}_researcher_id ON {table} (researcher_id)")
    db.execute("ALTER TABLE researchers DROP COLUMN session_epoch")


@migrations()
def m15_researcher_invites(db: sqlite_utils.Database) -> None:
    """Colleagues invited from the dashboard (issue 27): an admin's one-time link makes an account.
    Only the SHA-256 of the link's token is kept, with the invited email, whether the account will
    be an admin, and the day the invitation was made (the link works for 7 days); the row is
    deleted when the account is made or the invitation withdrawn.  No rowid: rows are laid out by
    their random hashes."""
    db.execute("CREATE TABLE researcher_invites (token_hash TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, "
               "is_admin INTEGER NOT NULL DEFAULT 0, created_on TEXT NOT NULL) WITHOUT ROWID")  # YYYY-MM-DD


@migrations()
def m16_survey_translations(db: sqlite_utils.Database) -> None:
    """A survey's texts in other languages (issue 27): ``surveys.translations``, the definition's
    ``translations`` as JSON (language → title, description, information and each question's texts),
    NULL when there are none.  Words only: the design a report is made under is the original's, so no
    trigger freezes them."""
    db["surveys"].add_column("translations", str)


@migrations()
def m17_raking_cells(db: sqlite_utils.Database) -> None:
    """Weighting reads aggregates, never rows (issue 26).  The answer patterns leave out discrete
    Laplace questions and check-all questions of more than 7 options; ``raking_cells`` holds their
    statistics within each **raking cell** — a response's answers to the single-choice questions
    asked directly, the only ones raking may weight on — as ``cell_counts`` holds them overall:
    per (question, cell, statistic, code) a count beside its ``pad``, overwritten in place.  ``cell``
    is the codes of those answers joined by commas (−1: not answered).  Surveys that have responses
    today get ``raking_cells_due`` = 1: their rows are made from the responses, once, when a view
    first needs them (:func:`deniable.server.store.responses.raking_cells_of`)."""
    db.execute("CREATE TABLE raking_cells (survey_id INTEGER NOT NULL REFERENCES surveys(id), qid TEXT NOT NULL, "
               "cell TEXT NOT NULL, stat TEXT NOT NULL, code INTEGER NOT NULL, count INTEGER NOT NULL, "
               "pad BLOB NOT NULL, PRIMARY KEY (survey_id, qid, cell, stat, code)) WITHOUT ROWID")
    db["surveys"].add_column("raking_cells_due", int, not_null_default=0)
    db.execute("UPDATE surveys SET raking_cells_due = 1")


@migrations()
def m18_crosswise_fact_in_wording(db: sqlite_utils.Database) -> None:
    """Fixing a launched respondent-side crosswise question's private fact (issue 27): words kept
    inside the design's spec (``$.design.fact``; the design fingerprint and the stored design hold
    only the design's name and weights), so the frozen-design trigger lets ``spec`` change there as
    in ``$.sensitive`` (m11) — and in nothing else."""
    _freeze_questions_but_wording(
        db, "AND NEW.type IS OLD.type AND (NEW.spec IS OLD.spec OR "
            "json_remove(NEW.spec, '$.sensitive', '$.design.fact') IS "
            "json_remove(OLD.spec, '$.sensitive', '$.design.fact'))", "number, order, type")


@migrations()
def m19_aggregates_rebuilt_from_the_reports(db: sqlite_utils.Database) -> None:
    """Derived aggregates written again from the stored reports (issue 35).  Before this version a
    single submission whose answer pattern fell in a full bucket was stored (its slot, its counts)
    but never counted in ``pattern_buckets``, so the answer patterns — and every view built on them —
    held a fraction of a survey's responses.  ``surveys.aggregates_due`` marks every survey that has
    responses; the app rebuilds each marked survey's aggregates from its reports when it opens the
    database (:func:`deniable.server.store.integrity.repair_due`) and clears the mark."""
    db["surveys"].add_column("aggregates_due", int, not_null_default=0)
    db.execute("UPDATE surveys SET aggregates_due = 1 WHERE id IN "
               "(SELECT survey_id FROM response_slots WHERE filled = 1)")


@migrations()
def m20_text_versions_by_day(db: sqlite_utils.Database) -> None:
    """Each response's text version made the one its day began with (issue 41, item 1).  Until this
    version a response recorded the wording at the moment it arrived, so every fix made during a day
    split that day's responses into groups in the order they came (five fixes seconds apart: each
    response carried the window it was sent in).  From now on a fix shows at once but is recorded from
    the next day (``slots.DAY_VERSION``); here the stored responses get the same rule: the highest
    version fixed before their day, else 1.  The column keeps its eight bytes (2⁵⁶ + version), so each
    slot is overwritten in place."""
    offset = 1 << 56
    db.execute(f"""UPDATE response_slots SET text_version = {offset} + coalesce(
                       (SELECT max(version) FROM wording_versions AS w
                        WHERE w.survey_id = response_slots.survey_id AND w.since < response_slots.submitted_on), 1)
                   WHERE filled = 1 AND (text_version & {offset - 1}) != coalesce(
                       (SELECT max(version) FROM wording_versions AS w
                        WHERE w.survey_id = response_slots.survey_id AND w.since < response_slots.submitted_on), 1)""")
