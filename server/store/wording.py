"""Fixing the wording of a launched survey: title, description, information, contact, question
texts and option labels — never the design.

The number of options, their order, ε and everything else the reports depend on stay as they
were (invariant 4; the triggers of :func:`.migrations.m09_information_reopen_and_wording_fixes`
refuse anything else, whatever the caller).  Every fix is a new *text version*:
``wording_versions`` keeps each wording with the day it took effect and who made it, and
``responses.text_version`` says which wording each response was answered under, so an export's
codebook can state it (:mod:`.exports`).

A survey's texts in other languages (its ``translations``, :mod:`deniable.server.survey.translations`)
are fixed the same way, one language at a time (:func:`fix_translation`), with the checks of an import
(:func:`~deniable.server.survey.translations.parse_translations`: words only, every label list of the
original's length, no text emptied, no unknown key) and no label moved to another position; a launched
survey gains a language with the same checks (:func:`add_translation`).  A translation's fix or addition
is a new text version too: the wording a version keeps holds the translations, so the
codebook's ``text_versions`` state what a response answered under it read, in whichever language (which
language is not recorded), and the submission path's cache of a launched survey, keyed by the text
version, reads the new texts at once.
"""

from __future__ import annotations

import json
from dataclasses import replace

import sqlite_utils

from deniable.errors import FieldError
from deniable.server.survey.definition import DefinitionError, field_name, parse_definition
from deniable.server.survey.translations import NAMES, PAGE_TEXTS, original_language, parse_translations

from .db import write_transaction
from .surveys import LifecycleError, StoredSurvey, get_survey, spec_json, today

PAGE_FIELDS = ("title", "description", "information", "contact")


class WordingError(FieldError):
    """A wording fix that would change more than words; ``field`` names the field."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}", field)
        self.message = message


def wording_of(survey) -> dict:
    """The words of a survey: its page texts, and per question id the texts its type lets a launched
    survey reword (:meth:`~deniable.server.survey.questions.base.QuestionType.wording`: a choice's text
    and option labels, a numeric question's text, a list experiment's text, items and sensitive item); and its ``translations`` when it has any (as the definition writes them)."""
    words = {**{name: getattr(survey, name) for name in PAGE_FIELDS},
             "questions": {q.id: q.qtype.wording(q) for q in survey.questions}}
    if survey.translations:
        words["translations"] = json.loads(json.dumps(survey.translations))  # a copy: history rows are data
    return words


def _reworded(q, position: int, words: dict):
    """``q`` with the posted ``words`` in place (keys it has not: unchanged); WordingError for a list of
    labels of another length, or a label moved to another position."""
    current = q.qtype.wording(q)
    names = q.qtype.wording_labels(q)
    texts = {}
    for key, was in current.items():
        value = words.get(key, was)
        where = f"questions[{position}].{key}"
        label = names.get(key, (key, key))[0]
        if isinstance(was, str):
            if not isinstance(value, str):
                raise WordingError(where, "must be a text")
            texts[key] = value
            continue
        value = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(value) != len(was):
            raise WordingError(where, f"has {len(was)} {label}s; a launched survey keeps their number (got {len(value)})")
        for i, new in enumerate(value):
            if not isinstance(new, str):
                raise WordingError(f"{where}[{i}]", "must be a text")
        _no_label_moved(where, value, was, label)
        texts[key] = value
    return replace(q, **q.qtype.reworded(q, texts))


def _no_label_moved(where: str, labels: list, was: list, label: str) -> None:
    """WordingError if a label of ``labels`` is another position's label in ``was``: a launched survey
    keeps the order of its options (and items), in every language."""
    for i, new in enumerate(labels):
        for j, old in enumerate(was):
            if j != i and new.strip() == old:
                raise WordingError(f"{where}[{i}]", f"{new.strip()!r} is {label} {j + 1}'s label: a launched survey "
                                   f"keeps the order of its {label}s (reword them, do not move them)")


def _design(survey) -> list:
    return [(q.id, q.type, q.k, q.epsilon, q.required, q.qtype.design(q), q.qtype.stored_design(q))
            for q in survey.questions]


def _fixed_survey(stored: StoredSurvey, wording: dict):
    """The stored survey with ``wording`` in place, checked like a definition; the design unchanged."""
    survey = stored.survey
    reworded = [_reworded(q, position, wording.get("questions", {}).get(q.id, {}))
                for position, q in enumerate(survey.questions)]
    definition = {**survey.to_dict(), "questions": [q.to_dict() for q in reworded]}
    for name in PAGE_FIELDS:
        definition[name] = wording.get(name, getattr(survey, name))
    try:
        fixed = parse_definition(definition)
    except DefinitionError as exc:
        raise WordingError(_wording_field(survey, exc.path), exc.problem) from None
    # parse_definition re-derived every mechanism from the definition: it must be the same as before.
    if _design(fixed) != _design(survey):
        raise WordingError("questions", "a wording fix cannot change the design")
    return replace(fixed, consent=survey.consent, language=survey.language)


def _wording_field(survey, path: tuple) -> str:
    """A definition path (``questions, 2, items, 0``) as the wording's field (``questions[2].options[0]``)."""
    if len(path) >= 3 and path[0] == "questions" and isinstance(path[1], int) and path[1] < len(survey.questions):
        q = survey.questions[path[1]]
        names = {written: k for k, (_, written) in q.qtype.wording_labels(q).items()}
        rest = path[2:]
        rest = rest[next((i for i, part in enumerate(rest) if part in names), 0):]  # a word inside a design: its fact
        return f"questions[{path[1]}].{names.get(rest[0], rest[0])}" + "".join(f"[{p}]" for p in rest[1:])
    return ".".join(str(p) for p in path) if path else "wording"


def fix_wording(db: sqlite_utils.Database, slug: str, wording: dict, *, changed_by: str | None = None) -> StoredSurvey:
    """Replace the words of the open or closed survey ``slug`` with ``wording`` (the shape of
    :func:`wording_of`; missing entries stay as they are) and record the new text version.

    Raises WordingError for anything but a change of words (another number of options, a label
    moved to another position, an empty text, duplicate labels), LifecycleError for a draft
    (edit its design instead) or when nothing changed.
    """
    stored = _launched(db, slug)
    fixed = _fixed_survey(stored, wording)
    before, after = wording_of(stored.survey), wording_of(fixed)
    if before == after:
        raise LifecycleError("nothing changed: the wording is the same as before")
    with write_transaction(db):
        survey_id, version = _new_version(db, stored, before, after, changed_by)
        db.execute("UPDATE surveys SET title = ?, description = ?, information = ?, contact = ?, text_version = ? "
                   "WHERE id = ?", [fixed.title, fixed.description, fixed.information, fixed.contact,
                                    version + 1, survey_id])
        for old, q in zip(stored.survey.questions, fixed.questions):
            # the spec (a type's own fields) changes only where it holds words: the triggers refuse the rest
            # (as the store writes it: shuffle, display logic and page breaks beside the type's fields)
            spec = spec_json(q)
            if spec == spec_json(old):
                db.execute("UPDATE questions SET text = ?, options = ? WHERE survey_id = ? AND qid = ?",
                           [q.text, json.dumps(list(q.options), ensure_ascii=False), survey_id, q.id])
            else:
                db.execute("UPDATE questions SET text = ?, options = ?, spec = ? WHERE survey_id = ? AND qid = ?",
                           [q.text, json.dumps(list(q.options), ensure_ascii=False), spec, survey_id, q.id])
    return get_survey(db, slug)


def _launched(db: sqlite_utils.Database, slug: str) -> StoredSurvey:
    """The open or closed survey ``slug``: LookupError if there is none, LifecycleError for a draft."""
    stored = get_survey(db, slug)
    if stored is None:
        raise LookupError(f"no survey {slug!r}")
    if stored.status == "draft":
        raise LifecycleError(f"survey {slug!r} is a draft: change its design directly")
    return stored


def _new_version(db: sqlite_utils.Database, stored: StoredSurvey, before: dict, after: dict,
                 changed_by: str | None) -> tuple[int, int]:
    """In the caller's write transaction: record ``after`` as the next text version (and ``before`` as
    version 1 if this is the first fix); ``(survey id, the version before)``.  LifecycleError when the survey
    changed since ``stored`` was read (the caller then writes nothing)."""
    survey_id, version, status = db.execute(
        "SELECT id, text_version, status FROM surveys WHERE slug = ?", [stored.slug]).fetchone()
    if status == "draft" or version != stored.text_version:
        raise LifecycleError(f"survey {stored.slug!r} changed meanwhile: reload the page and fix the wording again")
    if not db.execute("SELECT 1 FROM wording_versions WHERE survey_id = ?", [survey_id]).fetchone():
        db.execute("INSERT INTO wording_versions (survey_id, version, since, wording, changed_by) "
                   "VALUES (?, 1, ?, ?, NULL)",
                   [survey_id, stored.opened_on or today(), json.dumps(before, ensure_ascii=False)])
    db.execute("INSERT INTO wording_versions (survey_id, version, since, wording, changed_by) VALUES (?, ?, ?, ?, ?)",
               [survey_id, version + 1, today(), json.dumps(after, ensure_ascii=False), changed_by])
    return survey_id, version


def _translation_field(survey, path: tuple) -> str:
    """A path of :func:`parse_translations` (``translations, fr, questions, drugs, options, 1``) as a field
    with the question's position (``translations.fr.questions[0].options[1]``), keys as the definition
    writes them."""
    if len(path) >= 4 and path[2] == "questions":
        position = next((i for i, q in enumerate(survey.questions) if q.id == path[3]), None)
        if position is not None:
            return field_name((*path[:3], position, *path[4:]))
    return field_name(path)


def _checked_translations(survey, translations: dict) -> dict:
    """``translations`` checked as an import checks them (:func:`parse_translations`); WordingError names the
    field with the question's position."""
    try:
        return parse_translations(translations, survey)
    except DefinitionError as exc:
        raise WordingError(_translation_field(survey, exc.path), exc.problem) from None


def _fixed_translation(survey, language: str, texts: dict) -> dict:
    """``survey``'s translations with ``texts`` (the shape of one language's entry; what it leaves out
    stays) in place of ``language``'s, checked as an import checks them; WordingError names the field."""
    current = survey.translations[language]
    if not isinstance(texts, dict):
        raise WordingError(f"translations.{language}", "must be an object: title, description, information, "
                           "contact, questions")
    entry = {**current, **{key: value for key, value in texts.items() if key != "questions"}}
    if "questions" in texts:
        posted = texts["questions"]
        held = current.get("questions", {})
        entry["questions"] = {**held, **{qid: {**held.get(qid, {}), **words} if isinstance(words, dict) else words
                                         for qid, words in posted.items()}} if isinstance(posted, dict) else posted
    fixed = _checked_translations(survey, {**survey.translations, language: entry})
    # as in the original language, a label keeps its position: option i in French stays option i's
    for position, q in enumerate(survey.questions):
        was = current.get("questions", {}).get(q.id, {})
        names = {written: name for name, written in q.qtype.wording_labels(q).values()}
        for key, labels in fixed[language].get("questions", {}).get(q.id, {}).items():
            if not isinstance(labels, list) or not isinstance(was.get(key), list):
                continue
            _no_label_moved(f"translations.{language}.questions[{position}].{key}", labels, was[key],
                            names.get(key, key))
    return fixed


def _languages_said(survey) -> str:
    """The survey's translations in words: ``Spanish (es), French (fr)``, or ``none``."""
    return ", ".join(f"{NAMES[code]} ({code})" for code in survey.translations) or "none"


def _save_translations(db: sqlite_utils.Database, stored: StoredSurvey, translations: dict,
                       changed_by: str | None, unchanged: str) -> StoredSurvey:
    """Store ``translations`` (checked) as the survey's, recorded as the next text version like
    :func:`fix_wording`'s; LifecycleError ``unchanged`` when the wording would be the same."""
    fixed = replace(stored.survey, translations=translations)
    before, after = wording_of(stored.survey), wording_of(fixed)
    if before == after:
        raise LifecycleError(unchanged)
    with write_transaction(db):
        survey_id, version = _new_version(db, stored, before, after, changed_by)
        db.execute("UPDATE surveys SET translations = ?, text_version = ? WHERE id = ?",
                   [json.dumps(fixed.translations, ensure_ascii=False), version + 1, survey_id])
    return get_survey(db, stored.slug)


def fix_translation(db: sqlite_utils.Database, slug: str, language: str, texts: dict, *,
                    changed_by: str | None = None) -> StoredSurvey:
    """Fix the texts of the open or closed survey ``slug`` in ``language``, one of its translations:
    ``texts`` has the shape of the translation (``{"title": …, "questions": {"drugs": {"options": […]}}}``;
    what it leaves out stays as it is), and the fix is recorded as the next text version, like
    :func:`fix_wording`'s.

    Raises WordingError naming the field (``translations.fr.questions[0].options``) for a language the
    survey has no translation into (:func:`add_translation` adds one), a list of labels of another length, a
    text emptied or too long, a key that is not a translatable text, a label moved to another position;
    LifecycleError for a draft (edit its definition instead) or when nothing changed.
    """
    stored = _launched(db, slug)
    survey = stored.survey
    if not isinstance(language, str) or language not in survey.translations:
        shown = str(language)[:20]
        addable = language in NAMES and language != original_language(survey)
        raise WordingError(f"translations.{shown}", (
            f"the survey has no translation into {shown!r} to fix (it has {_languages_said(survey)})"
            + ("; add it under \"Add a language\"" if addable else "")))
    translations = _fixed_translation(survey, language, texts)
    return _save_translations(db, stored, translations, changed_by,
                              f"nothing changed: the {NAMES[language]} text is the same as before")


def _holds_words(entry: dict) -> bool:
    """Whether one language's checked entry holds any text (a page text, or a question's)."""
    return any(key in entry for key in PAGE_TEXTS) or any(entry.get("questions", {}).values())


def add_translation(db: sqlite_utils.Database, slug: str, language: str, texts: dict, *,
                    changed_by: str | None = None) -> StoredSurvey:
    """Give the open or closed survey ``slug`` a translation into ``language``, one the respondents' pages
    have (:data:`~deniable.server.survey.translations.NAMES`) and the survey has not (neither its own
    language nor a translation): ``texts`` has the shape of a definition's translation, what it leaves out
    is shown in the original words.  Checked as
    an import checks it (words only, every list of labels of the original's length, no text empty or too
    long, no unknown key) and recorded as the next text version, like :func:`fix_translation`'s; the
    design, the responses and every estimate are untouched.

    Raises WordingError naming the field (``language`` for a language the app does not know or the survey
    has already, ``translations.es.questions[0].options`` …, ``translations.es`` when ``texts`` holds no
    text); LifecycleError for a draft (edit its definition instead).
    """
    stored = _launched(db, slug)
    survey = stored.survey
    if not isinstance(language, str) or language not in NAMES:
        raise WordingError("language", f"{str(language)[:20]!r} is not a language of the respondents' pages: use one "
                           f"of {', '.join(f'{name} ({code})' for code, name in NAMES.items())}")
    if language == original_language(survey):
        raise WordingError("language", f"the survey is written in {NAMES[language]} ({language}) already")
    if language in survey.translations:
        raise WordingError("language", f"the survey has a {NAMES[language]} translation already: fix its texts "
                           f"under \"Fix the translations\" instead")
    if not isinstance(texts, dict):
        raise WordingError(f"translations.{language}", "must be an object: title, description, information, "
                           "contact, questions")
    translations = _checked_translations(survey, {**survey.translations, language: texts})
    entry = translations[language]
    if "questions" in entry:  # a question with nothing translated is left out, as the definition would leave it
        entry["questions"] = {qid: words for qid, words in entry["questions"].items() if words}
        if not entry["questions"]:
            del entry["questions"]
    if not _holds_words(entry):
        raise WordingError(f"translations.{language}", "nothing to add: give at least one text in "
                           f"{NAMES[language]} (a text left empty is shown in the original words)")
    return _save_translations(db, stored, translations, changed_by,
                              f"nothing changed: the survey has a {NAMES[language]} translation already")


def wording_history(db: sqlite_utils.Database, survey_id: int) -> list[dict]:
    """Every wording of a survey since it first changed: ``{version, since, changed_by, wording}``,
    oldest first; empty while the wording is the original one."""
    rows = db.execute("SELECT version, since, changed_by, wording FROM wording_versions WHERE survey_id = ? "
                      "ORDER BY version", [survey_id]).fetchall()
    return [{"version": v, "since": since, "changed_by": who, "wording": json.loads(words)}
            for v, since, who, words in rows]


def wording_changes(history: list[dict], survey=None) -> list[dict]:
    """The change log: per fix, each field that changed with its text before and after.

    Each entry is ``{version, since, changed_by, field, before, after}``; ``field`` is said in
    words ("Question 2, option 1"; with ``survey``, in its question types' words: "Question 3, item 1").
    """
    labels = {q.id: q.qtype.wording_labels(q) for q in survey.questions} if survey is not None else {}
    changes = []
    for old, new in zip(history, history[1:]):
        meta = {"version": new["version"], "since": new["since"], "changed_by": new["changed_by"]}
        for name in PAGE_FIELDS:
            if old["wording"].get(name, "") != new["wording"].get(name, ""):
                changes.append({**meta, "field": name.capitalize(), "before": old["wording"].get(name, ""),
                                "after": new["wording"].get(name, "")})
        for position, (qid, words) in enumerate(new["wording"]["questions"].items(), start=1):
            was = old["wording"]["questions"].get(qid, words)
            for key, after in words.items():
                before = was.get(key, after)
                if isinstance(after, str):
                    if before != after:
                        changes.append({**meta, "field": f"Question {position} ({qid}), {_name(labels, qid, key)}",
                                        "before": before, "after": after})
                    continue
                for i, (a, b) in enumerate(zip(before, after), start=1):
                    if a != b:
                        changes.append({**meta, "field": f"Question {position} ({qid}), {_name(labels, qid, key, True)} {i}",
                                        "before": a, "after": b})
        if "translations" in new["wording"]:  # a wording without them: the survey had none then
            changes += _translation_changes(meta, old["wording"], new["wording"], survey)
    return changes


def _translation_changes(meta: dict, old: dict, new: dict, survey) -> list[dict]:
    """The change log's rows of the translations between two wordings: "French: Question 1 (drugs), option 2";
    a text the translation did not hold before is said as ``""``, and a language added after launch
    (:func:`add_translation`) first as "Spanish: added"."""
    changes = []
    positions = {qid: position for position, qid in enumerate(new["questions"], start=1)}
    by_id = {q.id: q for q in survey.questions} if survey is not None else {}
    for language, texts in new["translations"].items():
        was = old.get("translations", {}).get(language, {})
        name = NAMES.get(language, language)
        if language not in old.get("translations", {}):
            changes.append({**meta, "field": f"{name}: added", "before": "", "after": f"{name} ({language})"})
        for key in PAGE_TEXTS:
            if was.get(key, "") != texts.get(key, ""):
                changes.append({**meta, "field": f"{name}: {key.capitalize()}", "before": was.get(key, ""),
                                "after": texts.get(key, "")})
        for qid, words in texts.get("questions", {}).items():
            before_words = was.get("questions", {}).get(qid, {})
            q = by_id.get(qid)
            # the definition's keys (a list's "items") → the type's wording names ("item")
            names = {written: label for label, written in q.qtype.wording_labels(q).values()} if q is not None else {}
            where = f"{name}: Question {positions.get(qid, '?')} ({qid})"
            for key, after in words.items():
                before = before_words.get(key)
                if isinstance(after, str):
                    if before != after:
                        changes.append({**meta, "field": f"{where}, {'text' if key == 'text' else names.get(key, key)}",
                                        "before": before or "", "after": after})
                    continue
                before = before if isinstance(before, list) else [""] * len(after)
                one = names.get(key, key[:-1] if key.endswith("s") else key)
                for i, (a, b) in enumerate(zip(before, after), start=1):
                    if a != b:
                        changes.append({**meta, "field": f"{where}, {one} {i}", "before": a, "after": b})
    return changes


def _name(labels: dict, qid: str, key: str, one: bool = False) -> str:
    """A wording key in words: the question type's (``wording_labels``) when known, else the key (one
    label of a list: ``options`` → ``option``)."""
    if key != "text" and key in labels.get(qid, {}):  # "text": every question's, said as it always was
        return labels[qid][key][0]
    return key[:-1] if one and key.endswith("s") else key
