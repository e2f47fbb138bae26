"""What the survey page needs to draw a question with its type's card (not radio buttons).

Each type says it (:meth:`~deniable.server.survey.questions.base.QuestionType.page_data`): only
integers reach the page's ``data-`` attributes (docs/design.md, invariant 8).
"""

from __future__ import annotations


def survey_page_data(survey) -> dict:
    """The page data of every question drawn by its type's card, by id."""
    out = {}
    for q in survey.questions:
        data = q.qtype.page_data(q)
        if data is not None:
            out[q.id] = data
    return out
