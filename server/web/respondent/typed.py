"""What the survey page needs to draw a question with its type's card (not radio buttons).

Each type says it (:meth:`~deniable.server.survey.questions.base.QuestionType.page_data`): only
integers reach the page's ``data-`` attributes (docs/design.md, invariant 8).
"""

from __future__ import annotations


def card_scripts(survey) -> list[str]:
    """The browser modules of the survey's cards (each type's ``script``, once, in question order): the
    page loads them before survey.js, and each registers its card's behaviour with types.js."""
    out = []
    for q in survey.questions:
        if q.qtype.page_data(q) is not None and q.qtype.script and q.qtype.script not in out:
            out.append(q.qtype.script)
    return out


def survey_page_data(survey) -> dict:
    """The page data of every question drawn by its type's card, by id."""
    out = {}
    for q in survey.questions:
        data = q.qtype.page_data(q)
        if data is not None:
            out[q.id] = data
    return out
