"""Fixing the wording of a launched survey: title, description, information, contact, question
texts and option labels — never the design.

The number of options, their order, ε and everything else the reports depend on stay as they
were (invariant 4; the triggers of :func:`.schema.m010_information_reopen_and_wording_fixes`
refuse anything else, whatever the caller).  Every fix is a new *text version*:
``wording_versions`` keeps each wording with the day it took effect and who made it, and
``responses.text_version`` says which wording each response was answered under, so an export's
codebook can state it (:mod:`.exports`).
"""

from __future__ import annotations

import json
from dataclasses import replace

import sqlite_utils

from deniable.server.survey.definition import DefinitionError, parse_definition

from .db import write_transaction
from .surveys import LifecycleError, StoredSurvey, get_survey, today

PAGE_FIELDS = ("title", "description", "information", "contact")


class WordingError(ValueError):
    """A wording fix that would change more than words; ``field`` names the field."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def wording_of(survey) -> dict:
    """The words of a survey: its page texts, and per question id its text and option labels."""
    return {**{name: getattr(survey, name) for name in PAGE_FIELDS},
            "questions": {q.id: {"text": q.text, "options": list(q.options)} for q in survey.questions}}


def _fixed_survey(stored: StoredSurvey, wording: dict):
    """The stored survey with ``wording`` in place, checked like a definition; the design unchanged."""
    survey = stored.survey
    new_questions = []
    for position, q in enumerate(survey.questions):
        words = wording.get("questions", {}).get(q.id, {})
        options = list(words.get("options", q.options))
        if len(options) != q.k:
            raise WordingError(f"questions[{position}].options",
                               f"has {q.k} options; a launched survey keeps their number (got {len(options)})")
        for i, label in enumerate(options):
            for j, old in enumerate(q.options):
                if j != i and isinstance(label, str) and label.strip() == old:
                    raise WordingError(f"questions[{position}].options[{i}]",
                                       f"{label.strip()!r} is option {j + 1}'s label: a launched survey keeps "
                                       "the order of its options (reword them, do not move them)")
        new_questions.append({**q.to_dict(), "text": words.get("text", q.text), "options": options})
    definition = {**survey.to_dict(), "questions": new_questions}
    for name in PAGE_FIELDS:
        definition[name] = wording.get(name, getattr(survey, name))
    try:
        fixed = parse_definition(definition)
    except DefinitionError as exc:
        raise WordingError(exc.field, exc.problem) from None
    # parse_definition re-derived every mechanism from k and ε: they must be the same as before.
    assert [(q.id, q.k, q.epsilon, q.required) for q in fixed.questions] == \
        [(q.id, q.k, q.epsilon, q.required) for q in survey.questions]
    return replace(fixed, consent=survey.consent, language=survey.language)


def fix_wording(db: sqlite_utils.Database, slug: str, wording: dict, *, changed_by: str | None = None) -> StoredSurvey:
    """Replace the words of the open or closed survey ``slug`` with ``wording`` (the shape of
    :func:`wording_of`; missing entries stay as they are) and record the new text version.

    Raises WordingError for anything but a change of words (another number of options, a label
    moved to another position, an empty text, duplicate labels), LifecycleError for a draft
    (edit its design instead) or when nothing changed.
    """
    stored = get_survey(db, slug)
    if stored is None:
        raise LookupError(f"no survey {slug!r}")
    if stored.status == "draft":
        raise LifecycleError(f"survey {slug!r} is a draft: change its design directly")
    fixed = _fixed_survey(stored, wording)
    before, after = wording_of(stored.survey), wording_of(fixed)
    if before == after:
        raise LifecycleError("nothing changed: the wording is the same as before")
    with write_transaction(db):
        survey_id, version, status = db.execute(
            "SELECT id, text_version, status FROM surveys WHERE slug = ?", [slug]).fetchone()
        if status == "draft" or version != stored.text_version:
            raise LifecycleError(f"survey {slug!r} changed meanwhile: reload the page and fix the wording again")
        if not db.execute("SELECT 1 FROM wording_versions WHERE survey_id = ?", [survey_id]).fetchone():
            db.execute("INSERT INTO wording_versions (survey_id, version, since, wording, changed_by) "
                       "VALUES (?, 1, ?, ?, NULL)",
                       [survey_id, stored.opened_on or today(), json.dumps(before, ensure_ascii=False)])
        db.execute("INSERT INTO wording_versions (survey_id, version, since, wording, changed_by) VALUES (?, ?, ?, ?, ?)",
                   [survey_id, version + 1, today(), json.dumps(after, ensure_ascii=False), changed_by])
        db.execute("UPDATE surveys SET title = ?, description = ?, information = ?, contact = ?, text_version = ? "
                   "WHERE id = ?", [fixed.title, fixed.description, fixed.information, fixed.contact,
                                    version + 1, survey_id])
        db.conn.executemany(
            "UPDATE questions SET text = ?, options = ? WHERE survey_id = ? AND qid = ?",
            [(q.text, json.dumps(list(q.options), ensure_ascii=False), survey_id, q.id) for q in fixed.questions])
    return get_survey(db, slug)


def wording_history(db: sqlite_utils.Database, survey_id: int) -> list[dict]:
    """Every wording of a survey since it first changed: ``{version, since, changed_by, wording}``,
    oldest first; empty while the wording is the original one."""
    rows = db.execute("SELECT version, since, changed_by, wording FROM wording_versions WHERE survey_id = ? "
                      "ORDER BY version", [survey_id]).fetchall()
    return [{"version": v, "since": since, "changed_by": who, "wording": json.loads(words)}
            for v, since, who, words in rows]


def wording_changes(history: list[dict]) -> list[dict]:
    """The change log: per fix, each field that changed with its text before and after.

    Each entry is ``{version, since, changed_by, field, before, after}``; ``field`` is said in
    words ("Question 2, option 1").
    """
    changes = []
    for old, new in zip(history, history[1:]):
        meta = {"version": new["version"], "since": new["since"], "changed_by": new["changed_by"]}
        for name in PAGE_FIELDS:
            if old["wording"].get(name, "") != new["wording"].get(name, ""):
                changes.append({**meta, "field": name.capitalize(), "before": old["wording"].get(name, ""),
                                "after": new["wording"].get(name, "")})
        for position, (qid, words) in enumerate(new["wording"]["questions"].items(), start=1):
            was = old["wording"]["questions"].get(qid, words)
            if was["text"] != words["text"]:
                changes.append({**meta, "field": f"Question {position} ({qid}), text",
                                "before": was["text"], "after": words["text"]})
            for i, (a, b) in enumerate(zip(was["options"], words["options"]), start=1):
                if a != b:
                    changes.append({**meta, "field": f"Question {position} ({qid}), option {i}",
                                    "before": a, "after": b})
    return changes
