"""Stored surveys: insert a definition, read it back, the lifecycle, counts.

draft → open → closed, and a closed survey may reopen; a draft may be deleted, and any survey
duplicated as a new draft.  The design (options, ε, and so each question's ``threshold``) is
frozen once a survey opens (docs/design.md, invariant 4): :func:`replace_design` refuses anything
but a draft, and triggers in the schema refuse it as well.  Only the wording of a launched
survey may still be fixed (:mod:`.wording`).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import weakref
from dataclasses import dataclass, replace

import numpy as np
import sqlite_utils

from deniable.server.survey import questions
from deniable.server.survey.questions import DEFAULT as DEFAULT_TYPE
from deniable.server.survey.definition import Condition, DefinitionError, Question, Survey

from deniable.errors import FieldError

from .db import write_transaction
from .slots import pad_of, stored_patterns

STATUSES = ("draft", "open", "closed")
TRANSITIONS = {"draft": {"open"}, "open": {"closed"}, "closed": {"open"}}
MAX_SLUG = 63


class LifecycleError(FieldError):
    """A change the survey's status does not allow."""


@dataclass(frozen=True)
class StoredSurvey:
    id: int
    survey: Survey
    status: str
    target_n: int
    created_on: str | None
    opened_on: str | None
    closed_on: str | None
    invitation_only: bool = False  # responses need a single-use invitation token (store.invitations)
    owner_id: int | None = None  # the researcher who owns it; None: only admins see it (store.access)
    text_version: int = 1  # which wording respondents see now (store.wording)

    @property
    def slug(self) -> str:
        return self.survey.slug


_fixed_day: str | None = None  # set_today: a test's clock


def today() -> str:
    """The date at day granularity, the finest time the database keeps.

    Every day the store writes comes from here.  Tests fix it: :func:`set_today` (or
    :func:`fixed_today`) in their own process, ``DENIABLE_TODAY=YYYY-MM-DD`` in the environment of a
    server they start (a test setting only: docs/developing.md).
    """
    day = _fixed_day or os.environ.get("DENIABLE_TODAY")
    if day:
        return datetime.date.fromisoformat(day).isoformat()  # a malformed setting fails loudly
    return datetime.date.today().isoformat()


def set_today(day: str | None) -> str | None:
    """Make :func:`today` return ``day`` (``YYYY-MM-DD``; None: the clock again); return the setting
    it replaces.  For tests."""
    global _fixed_day
    before, _fixed_day = _fixed_day, None if day is None else datetime.date.fromisoformat(day).isoformat()
    return before


@contextlib.contextmanager
def fixed_today(day: str):
    """:func:`today` is ``day`` inside the block.  For tests."""
    before = set_today(day)
    try:
        yield
    finally:
        set_today(before)


def spec_json(q: Question) -> str | None:
    """The type's own fields as JSON, with ``"shuffle": true`` when the options are shown in a random
    order (None when there is nothing beyond options)."""
    spec = q.qtype.spec(q)
    if q.shuffle:
        spec = {**(spec or {}), "shuffle": True}
    if q.show_if is not None:  # display logic and pages, kept beside shuffle (no column of their own)
        spec = {**(spec or {}), "show_if": q.show_if.to_dict()}
    if q.page_break:
        spec = {**(spec or {}), "page_break": True}
    return None if spec is None else json.dumps(spec, ensure_ascii=False)


def _question_rows(survey_id: int, survey: Survey) -> list[dict]:
    rows = []
    typed = any(q.type != DEFAULT_TYPE or spec_json(q) is not None for q in survey.questions)
    for position, q in enumerate(survey.questions):
        row = {
            "survey_id": survey_id, "position": position, "qid": q.id, "text": q.text,
            "options": json.dumps(list(q.options), ensure_ascii=False), "required": int(q.required),
            "epsilon": q.epsilon, "k": q.k, "threshold": q.mechanism.threshold if q.protected else None,
        }
        if typed:  # a survey of choices only keeps the columns' defaults (and a schema from before m10 works)
            row.update(type=q.type, spec=spec_json(q))
        rows.append(row)
    return rows


def _count_rows(survey_id: int, survey: Survey) -> list[dict]:
    """Zeroed option counts of the choice questions (the other types' statistics: ``cell_counts``)."""
    return [
        {"survey_id": survey_id, "qid": q.id, "option": i, "count": 0, "pad": pad_of(0)}
        for q in survey.questions if q.qtype.categorical for i in range(q.k)
    ]


def insert_survey(db: sqlite_utils.Database, survey: Survey, *, status: str = "draft",
                  target_n: int = 1000, owner_id: int | None = None) -> StoredSurvey:
    """Store a new survey (as a draft unless ``status`` says otherwise) with zeroed counts.

    ``owner_id`` is the researcher it belongs to; None leaves it to the admins.
    """
    if status not in STATUSES:
        raise LifecycleError(f"status: must be one of {', '.join(STATUSES)}, got {status!r}")
    with write_transaction(db):
        if db.execute("SELECT 1 FROM surveys WHERE slug = ?", [survey.slug]).fetchone():
            raise DefinitionError(("slug",), f"a survey {survey.slug!r} already exists")
        survey_id = db["surveys"].insert({
            "slug": survey.slug, "title": survey.title, "description": survey.description,
            "status": "draft", "target_n": target_n, "created_on": today(), "owner_id": owner_id,
            **_page_texts(survey),
        }).last_pk
        db["questions"].insert_all(_question_rows(survey_id, survey))
        db["counts"].insert_all(_count_rows(survey_id, survey))
        if status != "draft":  # along the lifecycle the triggers allow: draft → open (→ closed)
            db["surveys"].update(survey_id, {"status": "open", "opened_on": today()})
        if status == "closed":
            db["surveys"].update(survey_id, {"status": "closed", "closed_on": today()})
    return get_survey(db, survey.slug)


def _id_and_status(db: sqlite_utils.Database, slug: str) -> tuple[int, str]:
    """The survey's id and status (LookupError if there is none), read inside the caller's transaction."""
    row = db.execute("SELECT id, status FROM surveys WHERE slug = ?", [slug]).fetchone()
    if row is None:
        raise LookupError(f"no survey {slug!r}")
    return row


def replace_design(db: sqlite_utils.Database, slug: str, survey: Survey, *,
                   target_n: int | None = None) -> StoredSurvey:
    """Replace a draft's title, description and questions (the slug stays)."""
    with write_transaction(db):
        survey_id, status = _id_and_status(db, slug)
        if status != "draft":
            raise LifecycleError(f"survey {slug!r} is {status}: its options and epsilon are frozen")
        changes = {"title": survey.title, "description": survey.description, **_page_texts(survey)}
        if target_n is not None:
            changes["target_n"] = target_n
        db["surveys"].update(survey_id, changes)
        db.execute("DELETE FROM counts WHERE survey_id = ?", [survey_id])
        db.execute("DELETE FROM cell_counts WHERE survey_id = ?", [survey_id])
        db.execute("DELETE FROM raking_cells WHERE survey_id = ?", [survey_id])
        db.execute("DELETE FROM answer_patterns WHERE survey_id = ?", [survey_id])
        db.execute("DELETE FROM pattern_buckets WHERE survey_id = ?", [survey_id])
        db.execute("DELETE FROM questions WHERE survey_id = ?", [survey_id])
        db["questions"].insert_all(_question_rows(survey_id, survey))
        db["counts"].insert_all(_count_rows(survey_id, survey))
    return get_survey(db, slug)


def _page_texts(survey: Survey) -> dict:
    return {"information": survey.information, "contact": survey.contact, "consent": int(survey.consent),
            "language": survey.language,
            "translations": json.dumps(survey.translations, ensure_ascii=False) if survey.translations else None}


def set_status(db: sqlite_utils.Database, slug: str, status: str) -> StoredSurvey:
    """Move a survey along draft → open → closed, or reopen a closed one (its design stays
    frozen); any other move raises LifecycleError.  Reopening keeps the first opening day."""
    with write_transaction(db):
        survey_id, current = _id_and_status(db, slug)
        if status not in TRANSITIONS.get(current, set()):
            raise LifecycleError(f"survey {slug!r} is {current}: it cannot become {status!r}")
        if current == "closed":
            db["surveys"].update(survey_id, {"status": status, "closed_on": None})
        else:
            stamp = {"open": "opened_on", "closed": "closed_on"}[status]
            db["surveys"].update(survey_id, {"status": status, stamp: today()})
    return get_survey(db, slug)


def delete_draft(db: sqlite_utils.Database, slug: str) -> None:
    """Delete a draft and everything that hangs on it; a launched survey is kept (LifecycleError,
    and a trigger refuses it too)."""
    with write_transaction(db):
        survey_id, status = _id_and_status(db, slug)
        if status != "draft":
            raise LifecycleError(f"survey {slug!r} is {status}: only a draft can be deleted "
                                 "(a launched survey keeps its responses)")
        for table in ("counts", "cell_counts", "raking_cells", "answer_patterns", "pattern_buckets", "release_budgets",
                      "questions", "survey_shares", "invitations", "wording_versions", "response_slots", "response_slot_sizes"):
            db.execute(f"DELETE FROM {table} WHERE survey_id = ?", [survey_id])
        db.execute("DELETE FROM surveys WHERE id = ?", [survey_id])


def free_slug(db: sqlite_utils.Database, base: str) -> str:
    """``base`` if no survey has it, else ``base-2``, ``base-3``, … (at most 63 characters)."""
    taken = {row[0] for row in db.execute("SELECT slug FROM surveys WHERE slug = ? OR slug LIKE ?",
                                          [base, base[:MAX_SLUG - 4].rstrip("-") + "-%"])}
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = base[:MAX_SLUG - len(suffix)].rstrip("-") + suffix
        if candidate not in taken:
            return candidate
        n += 1


def duplicate_survey(db: sqlite_utils.Database, slug: str, *, owner_id: int | None) -> StoredSurvey:
    """Copy any survey's design and wording as a new draft (``SLUG-copy``, ``SLUG-copy-2``, …)
    owned by ``owner_id``; no responses, shares or invitations come along."""
    stored = get_survey(db, slug)
    if stored is None:
        raise LookupError(f"no survey {slug!r}")
    new_slug = free_slug(db, f"{slug[:MAX_SLUG - 5].rstrip('-')}-copy")
    copy = replace(stored.survey, slug=new_slug, title=f"{stored.survey.title} (copy)"[:200])
    return insert_survey(db, copy, target_n=stored.target_n, owner_id=owner_id)


def _question_from_row(q: dict) -> Question:
    kind = q.get("type") or DEFAULT_TYPE
    spec = json.loads(q["spec"]) if q.get("spec") else {}
    shuffle = bool(spec.pop("shuffle", False))  # the page's option order, beside the type's own fields
    show_if = spec.pop("show_if", None)
    page_break = bool(spec.pop("page_break", False))
    fields = questions.get(kind).from_spec(spec) if spec else {}
    return Question(id=q["qid"], text=q["text"], options=tuple(json.loads(q["options"])), epsilon=q["epsilon"],
                    required=bool(q["required"]), type=kind, shuffle=shuffle, page_break=page_break,
                    show_if=None if show_if is None else Condition(show_if["question"], tuple(show_if["in"])),
                    **fields)


def _survey_from_rows(row: dict, questions: list[dict]) -> StoredSurvey:
    survey = Survey(
        slug=row["slug"], title=row["title"], description=row["description"] or "",
        questions=tuple(_question_from_row(q) for q in questions),
        information=row.get("information") or "", contact=row.get("contact") or "",
        consent=bool(row.get("consent")), language=row.get("language"),
        translations=json.loads(row["translations"]) if row.get("translations") else {},
    )
    return StoredSurvey(
        id=row["id"], survey=survey, status=row["status"], target_n=row["target_n"],
        created_on=row["created_on"], opened_on=row["opened_on"], closed_on=row["closed_on"],
        invitation_only=bool(row.get("invitation_only")), owner_id=row.get("owner_id"),
        text_version=row.get("text_version") or 1,
    )


def get_survey(db: sqlite_utils.Database, slug: str) -> StoredSurvey | None:
    """Return the stored survey with this slug, or None."""
    # Plain SQL: sqlite-utils' table objects introspect the schema first, and this runs on
    # every submission.
    row = _dict_rows(db.execute("SELECT * FROM surveys WHERE slug = ?", [slug]))
    if not row:
        return None
    questions = _dict_rows(db.execute(
        "SELECT * FROM questions WHERE survey_id = ? ORDER BY position", [row[0]["id"]]))
    return _survey_from_rows(row[0], questions)


# Per connection (so per worker thread, and never across a replaced database file, since
# web.connections opens a new connection then): survey id → the StoredSurvey read when it had left
# draft.  Entries die with their connection.
_launched: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def get_launched_survey(db: sqlite_utils.Database, slug: str) -> StoredSurvey | None:
    """The survey with this slug unless it is unknown or a draft (None); for the submission path.

    A launched survey's questions, options and ε never change (invariant 4, enforced by
    triggers), a survey never returns to draft and is never deleted, and slugs are unique; so
    after the first request each connection reads only the survey's own row (status,
    invitation-only, dates, text version) and reuses the parsed questions, reading them again
    only after a wording fix (:mod:`.wording`) moved the text version on.  The status read here is a
    snapshot: :func:`deniable.server.store.responses.insert_validated` reads it again inside its write
    transaction, so a survey closed in between accepts nothing.
    """
    row = db.conn.execute("SELECT id, status, target_n, opened_on, closed_on, invitation_only, text_version "
                          "FROM surveys WHERE slug = ?", [slug]).fetchone()
    if row is None or row[1] == "draft":
        return None
    survey_id, status, target_n, opened_on, closed_on, invitation_only, text_version = row
    cache = _launched.setdefault(db, {})
    known = cache.get(survey_id)
    if known is None or known.slug != slug or known.text_version != (text_version or 1):
        known = get_survey(db, slug)
        if known is None:
            return None
        cache[survey_id] = known
    return replace(known, status=status, target_n=target_n, opened_on=opened_on, closed_on=closed_on,
                   invitation_only=bool(invitation_only))


def _dict_rows(cursor) -> list[dict]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, values)) for values in cursor.fetchall()]


def list_surveys(db: sqlite_utils.Database) -> list[StoredSurvey]:
    slugs = [r["slug"] for r in db["surveys"].rows_where(order_by="id desc", select="slug")]
    return [get_survey(db, slug) for slug in slugs]


def option_counts(db: sqlite_utils.Database, survey_id: int) -> dict[str, np.ndarray]:
    """Per question, the number of reports of each option (kept current on every insert): O(total k)."""
    counts: dict[str, list[int]] = {}
    for qid, option, count in db.execute(
        "SELECT qid, option, count FROM counts WHERE survey_id = ? ORDER BY qid, option", [survey_id]
    ):
        counts.setdefault(qid, []).append(count)
    return {qid: np.asarray(values, dtype=np.int64) for qid, values in counts.items()}


def survey_stats(db: sqlite_utils.Database, stored: StoredSurvey) -> dict:
    """Every question's sufficient statistics (each type's): the option counts of the categorical
    questions from ``counts``, the other types' from ``cell_counts``.

    Both tables are kept current on every insert, so this costs O(cells), never a scan of the rows.
    """
    counts = option_counts(db, stored.id)
    rows: dict[str, dict[str, list]] = {}
    for qid, stat, cell, count in db.execute(
        "SELECT qid, stat, cell, count FROM cell_counts WHERE survey_id = ? AND count > 0", [stored.id]
    ):
        rows.setdefault(qid, {}).setdefault(stat, []).append((cell, count))
    out = {}
    for q in stored.survey.questions:
        if q.qtype.categorical:
            out[q.id] = counts.get(q.id, np.zeros(q.k, dtype=np.int64))
        else:
            out[q.id] = q.qtype.stats_from_cells(q, rows.get(q.id, {}))
    return out


def respondent_count(db: sqlite_utils.Database, survey_id: int) -> int:
    """How many responses the survey has: O(distinct answer patterns), not a count of the rows."""
    return sum(count for _, _, count in stored_patterns(db, survey_id))
