"""A survey's texts in several languages: the definition's ``translations``, checked, and the survey as a
respondent reads it in one of them.

::

    "translations": {
      "es": {"title": "Hábitos", "description": "…", "information": "…", "contact": "…",
             "questions": {"drugs": {"text": "¿Ha consumido…?", "options": ["Sí", "No"]}}},
      "fr": {…}
    }

A language is one the respondents' pages have (``en``, ``es``, ``fr``), other than the one the survey is
written in (its ``language``, English when it has none).  Only words can be translated: the title, the
description, the information, the contact line, and per question the texts its type lets a launched survey reword
(:meth:`~.questions.base.QuestionType.wording`, under their definition keys: a choice's or check-all
question's ``text`` and ``options``, a respondent-side crosswise question's private ``fact`` too, a
number's ``text``, a list experiment's ``text``, ``items`` and ``sensitive``).  A list of labels keeps the original's length and order: option *i* in Spanish is option
*i*, so a report (the option's index) means the same whatever the language, and the design fingerprint
(:func:`~.definition.design_fingerprint`), the counts and every estimate are those of the original.
Anything left out is shown in the original words.
"""

from __future__ import annotations

import json
from dataclasses import replace

from .definition import (LANGUAGES, MAX_CONTACT, MAX_TEXT, QUESTION_KEYS, SURVEY_KEYS, DefinitionError, field_name,
                         parse_question, text_field)

# key → its longest, as the original's (definition.parse_definition)
PAGE_TEXTS = {"title": 200, "description": MAX_TEXT, "information": 10 * MAX_TEXT, "contact": MAX_CONTACT}
NAMES = {"en": "English", "es": "Spanish", "fr": "French"}  # each language in English: the dashboard's words


def original_language(survey) -> str:
    """The language the survey's own texts are written in: its ``language``, else English."""
    return survey.language or "en"


def languages(survey) -> tuple[str, ...]:
    """The languages a respondent may read the survey in, its own first; empty when the survey says
    neither a language nor translations (its pages then follow the browser, :mod:`deniable.server.web.i18n`)."""
    if not survey.translations:
        return (survey.language,) if survey.language else ()
    return (original_language(survey), *survey.translations)


def _written(q) -> dict[str, str]:
    """A question's translatable keys as the definition writes them → the keys of its type's wording."""
    return {written: key for key, (_, written) in q.qtype.wording_labels(q).items()}


def parse_translations(data, survey) -> dict:
    """Validate a definition's ``translations`` against ``survey`` (its parsed questions) and return
    them stripped, in the order of :data:`~.definition.LANGUAGES`; DefinitionError names the path
    (``translations.es.questions.drugs.options[1]``)."""
    path = ("translations",)
    if not isinstance(data, dict):
        raise DefinitionError(path, "must be an object: a language code (es, fr, en) → that language's texts")
    own = original_language(survey)
    out = {}
    for language, texts in data.items():
        where = (*path, language[:20])  # a path in one line, whatever the file holds
        if language not in LANGUAGES:
            raise DefinitionError(where, f"is not a language of the respondents' pages: use one of "
                                  f"{', '.join(LANGUAGES)}"[:160])
        if language == own:
            raise DefinitionError(where, f"the survey is written in {own!r} already (its \"language\", English "
                                  "when left out): translate into another language")
        if not isinstance(texts, dict):
            raise DefinitionError(where, "must be an object: title, description, information, contact, questions")
        for key in texts:
            if key not in PAGE_TEXTS and key != "questions":
                raise DefinitionError((*where, key[:40]), "cannot be translated: only the title, description, information, "
                                      "contact and the questions' texts can" if key in SURVEY_KEYS else
                                      f"unknown key (allowed: {', '.join((*PAGE_TEXTS, 'questions'))})")
        entry = {}
        for key, longest in PAGE_TEXTS.items():
            if key in texts:
                if not getattr(survey, key):
                    raise DefinitionError((*where, key), f"the survey has no {key} to translate")
                entry[key] = text_field(texts[key], (*where, key), max_len=longest)
        if "questions" in texts:
            entry["questions"] = _questions(texts["questions"], survey, (*where, "questions"))
        out[language] = entry
    return {language: out[language] for language in LANGUAGES if language in out}


def _questions(data, survey, where: tuple) -> dict:
    if not isinstance(data, dict):
        raise DefinitionError(where, "must be an object: a question id → its translated texts")
    positions = {q.id: i for i, q in enumerate(survey.questions)}
    out = {}
    for qid, texts in data.items():
        at = (*where, qid[:64])
        if qid not in positions:
            raise DefinitionError(at, "the survey has no question with this id")
        q = survey.questions[positions[qid]]
        written = _written(q)
        if not isinstance(texts, dict):
            raise DefinitionError(at, f"must be an object with the question's {', '.join(written)}")
        for key in texts:
            if key not in written:
                raise DefinitionError((*at, key[:40]), (
                    f"cannot be translated: it is part of the question's design (what its reports mean); only its "
                    f"{', '.join(written)} can" if key in QUESTION_KEYS | q.qtype.keys else
                    f"unknown key (a {q.qtype.label} question's translatable keys: {', '.join(written)})"))
        current = q.qtype.wording(q)
        labels = q.qtype.wording_labels(q)
        for key, value in texts.items():
            was = current[written[key]]
            if isinstance(was, list):
                if not isinstance(value, list):
                    raise DefinitionError((*at, key), f"must be a list of {len(was)} {labels[written[key]][0]}s")
                if len(value) != len(was):
                    raise DefinitionError((*at, key), f"has {len(was)} {labels[written[key]][0]}s in the original: a "
                                          f"translation gives the same number, in the same order (got {len(value)})")
        # every check the question's type makes on its words (empty, too long, duplicate labels, …), the words
        # put in place by the type (a word may live inside another key: a crosswise design's private fact)
        words = {**current, **{written[key]: value for key, value in texts.items()}}
        try:
            parsed = parse_question(replace(q, **q.qtype.reworded(q, words)).to_dict(), ("questions", positions[qid]))
        except DefinitionError as exc:
            rest = exc.path[2:]
            rest = rest[next((i for i, part in enumerate(rest) if part in written), 0):]
            raise DefinitionError((*at, *rest), exc.problem) from None
        words = parsed.qtype.wording(parsed)
        out[qid] = {key: words[written[key]] for key in texts}
    return out


def translated(survey, language: str | None):
    """``survey`` as a respondent reads it in ``language``: its texts and option labels replaced by the
    translation's (the original's where the translation leaves one out), the design untouched; the survey
    itself for its own language or one it has no translation into."""
    texts = survey.translations.get(language) if language else None
    if not texts:
        return survey
    questions = []
    for q in survey.questions:
        own = texts.get("questions", {}).get(q.id)
        if own:
            written = _written(q)
            words = {**q.qtype.wording(q), **{written[key]: value for key, value in own.items()}}
            q = replace(q, **q.qtype.reworded(q, words))
        questions.append(q)
    # a display condition names its source's options by label: the same options, in the same language
    labels = {q.id: dict(zip(original.options, q.options)) for q, original in zip(questions, survey.questions)}
    questions = [replace(q, show_if=replace(q.show_if, options=tuple(labels[q.show_if.question].get(label, label)
                                                                     for label in q.show_if.options)))
                 if getattr(q, "show_if", None) is not None and q.show_if.question in labels else q
                 for q in questions]
    return replace(survey, questions=tuple(questions), language=language,
                   **{key: texts[key] for key in PAGE_TEXTS if key in texts})


def carry_over(survey, translations: dict):
    """``survey`` with the parts of ``translations`` (an earlier design's) that still fit its questions: the
    builder saves a draft from its form, which has no translations, and keeps the draft's.  Returns the
    survey and the fields of what no longer fits and was left out (a question removed, another number of
    options, the survey's own language now)."""
    kept = json.loads(json.dumps(translations))
    dropped = []
    for _ in range(10_000):  # each round removes one part: a bounded loop
        try:
            return replace(survey, translations=parse_translations(kept, survey) if kept else {}), dropped
        except DefinitionError as exc:
            path = exc.path[1:]
            if not path:
                return replace(survey, translations={}), ["translations"]
            if len(path) >= 3 and path[1] == "questions":
                del kept[path[0]]["questions"][path[2]]
                dropped.append(field_name(exc.path[:4]))
            elif len(path) >= 2:
                del kept[path[0]][path[1]]
                dropped.append(field_name(exc.path[:3]))
            else:
                del kept[path[0]]
                dropped.append(field_name(exc.path[:2]))
    raise RuntimeError("unreachable: every round removes a part")  # pragma: no cover
