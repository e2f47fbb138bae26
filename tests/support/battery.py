"""The battery's survey: every example question of every registered question type, with responses.

:func:`battery_definition` builds one definition from each registered type's
:meth:`~deniable.server.survey.questions.base.QuestionType.examples` (ids ``<type>_<n>``), plus a
directly asked single-choice question ``group`` to group by; :func:`battery_survey` stores it in a
real SQLite file with simulated respondents (the real randomizers).  Every registered type is in
it, and the test-only rating scale (tests/support/rating.py), which tests/battery/conftest.py
registers around every battery test.
"""

from __future__ import annotations

import numpy as np

from deniable.server.store.db import connect
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey import questions
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.simulate import simulate_dataset

from . import rating

SLUG = "battery"
GROUP = "group"


def battery_questions() -> list[tuple[dict, object]]:
    """``(question definition, truth)`` for every example of every registered type, and the group."""
    out = [({"id": GROUP, "text": "Which campus are you on?", "options": ["North", "South", "Online"]},
            [0.5, 0.3, 0.2])]
    types = questions.all_types()
    designed = []  # examples with a randomized-response design go last: the others' simulated data stay as they were
    for qtype in (*types, *(() if rating.NAME in questions.names() else (rating.RATING,))):
        for n, (definition, truth) in enumerate(qtype.examples()):
            (designed if "design" in definition else out).append(({"id": f"{qtype.name}_{n}", **definition}, truth))
    return out + designed


def battery_definition() -> dict:
    return {"slug": SLUG, "title": "Every question type", "questions": [q for q, _ in battery_questions()]}


def battery_truth(survey) -> dict:
    """The parsed truth of every question (each type's ``truth``)."""
    return {q.id: q.qtype.truth(q, truth, q.id) for q, (_, truth) in zip(survey.questions, battery_questions())}


def battery_survey(db_path, *, n: int = 600, status: str = "open", seed: int = 11, owner_id: int | None = 1):
    """Store the battery's survey with ``n`` simulated respondents; return the stored survey."""
    survey = parse_definition(battery_definition())
    db = connect(db_path)
    try:
        stored = insert_survey(db, survey, status=status, owner_id=owner_id)
        if n:
            data = simulate_dataset(survey, battery_truth(survey), n, np.random.default_rng(seed))
            insert_many(db, stored, data.columns)
        return get_survey(db, SLUG)
    finally:
        db.conn.close()


def question_ids(survey=None) -> list[str]:
    """The battery's question ids but the group's, for parametrizing."""
    return [q["id"] for q, _ in battery_questions() if q["id"] != GROUP]


FRENCH = "FR "  # what the battery's French translation puts before every original text


def battery_translation() -> dict:
    """A French translation (``{"fr": …}``, the definition's ``translations``) of the battery's title and of
    every question: each text its type lets a launched survey reword (:meth:`wording_labels`, under the keys
    the definition writes: a list experiment's ``items`` and ``sensitive``, a respondent-side crosswise
    question's private ``fact``), the original words after
    :data:`FRENCH`.  The question types must be registered (the rating scale too: tests/battery/conftest.py)."""
    survey = parse_definition(battery_definition())
    texts = {}
    for q in survey.questions:
        words = q.qtype.wording(q)
        texts[q.id] = {written: (FRENCH + words[key] if isinstance(words[key], str)
                                 else [FRENCH + label for label in words[key]])
                       for key, (_, written) in q.qtype.wording_labels(q).items()}
    return {"fr": {"title": FRENCH + survey.title, "questions": texts}}
