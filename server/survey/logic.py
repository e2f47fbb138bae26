"""Display and skip logic, and pages: which questions a respondent is asked.

A question's ``show_if`` (:class:`.definition.Condition`) names an earlier question asked directly
and some of its options: the question is shown only to respondents whose answer is one of them (a
check-all question: any of them ticked).  Skip logic is the same rule, seen from the question that
is skipped.  A hidden question is not asked: nothing is sent for it and it is not required, and
the server refuses an answer to it (:func:`deniable.server.store.responses.validate_reports`).  A
question whose condition's question was itself hidden (so not answered) is hidden too.

Only direct answers decide (:func:`.definition.check_conditions`): were a protected answer to decide,
whether the next question appears, and so what is sent for it, would reveal the true answer that the
randomized report hides.

The estimates of a question with a condition are of a subgroup, the respondents who reach it:
:func:`asked_of` says so in words, for the result pages, ``deniable estimate`` and the codebook.

``page_break`` starts a new page of the survey page at a question (:func:`pages`); the browser shows
the pages one at a time (client/static/logic.js), and nothing about them is sent.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .definition import Question, Survey


def option_indices(survey: Survey, q: Question) -> frozenset[int]:
    """The places in its question's ``options`` of the labels of ``q``'s condition."""
    source = survey.question(q.show_if.question)
    return frozenset(source.options.index(label) for label in q.show_if.options)


def shown(survey: Survey, codes: Mapping[str, int]) -> dict[str, bool]:
    """Whether each question is asked, given the answers' codes ``{qid: code}`` (a missing id: not
    answered).  Conditions point back only, so one pass in order decides every question."""
    out = {}
    for q in survey.questions:
        out[q.id] = is_shown(survey, q, out, codes)
    return out


def is_shown(survey: Survey, q: Question, earlier: Mapping[str, bool], codes: Mapping[str, int]) -> bool:
    """Whether ``q`` is asked, given whether each earlier question was (``earlier``) and the codes of
    the answers to them."""
    if q.show_if is None:
        return True
    source = survey.question(q.show_if.question)
    code = codes.get(source.id)
    return earlier[source.id] and code is not None and source.qtype.answer_in(source, code, option_indices(survey, q))


def asked_rows(survey: Survey, columns: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per question with a ``show_if``, whether each row was asked it (a boolean array), from the
    columns of codes (negative = no answer) of the questions its condition names: the rule of
    :func:`shown`, one vectorized pass.  A question whose condition's question is not among the
    ``columns`` (a counts file of some questions) is left out: whether it was asked is unknown."""
    out: dict[str, np.ndarray] = {}
    for q in survey.questions:
        if q.show_if is None or q.show_if.question not in columns:
            continue
        source = survey.question(q.show_if.question)
        if source.show_if is not None and source.id not in out:
            continue  # the condition's own condition is unknown
        codes = np.asarray(columns[source.id])
        unique, inverse = np.unique(codes, return_inverse=True)
        options = option_indices(survey, q)
        fits = np.array([code >= 0 and source.qtype.answer_in(source, int(code), options) for code in unique.tolist()],
                        dtype=bool)
        asked = fits[inverse.reshape(codes.shape)]
        out[q.id] = asked & out[source.id] if source.id in out else asked
    return out


def not_asked(survey: Survey, columns: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per question with a ``show_if``, the rows that were not asked it (and have no answer to it):
    what the exports write as "not asked" rather than "not answered" (docs/design.md, "Formats")."""
    return {qid: ~asked & (np.asarray(columns[qid]) < 0) for qid, asked in asked_rows(survey, columns).items()}


def hide_not_asked(survey: Survey, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Columns of codes (−1 = not answered) with every question's code set to −1 where it was not asked
    (simulated respondents follow the display logic as real ones do)."""
    out = dict(columns)
    for qid, asked in asked_rows(survey, columns).items():
        out[qid] = np.where(asked, np.asarray(out[qid]), -1).astype(np.asarray(out[qid]).dtype)
    return out


def asked_of(q: Question) -> str | None:
    """Who a question with a condition was asked of, in words (None when everyone was asked):
    its estimates are of that subgroup, not of every respondent.  A check-all question's "= “A” or
    “B”" means any of them ticked."""
    if q.show_if is None:
        return None
    labels = " or ".join(f"“{label}”" for label in q.show_if.options)
    return f"asked of respondents who answered {q.show_if.question} = {labels}"


def pages(survey: Survey) -> list[list[Question]]:
    """The survey's questions in pages: a new page at each ``page_break`` (one page without any)."""
    out: list[list[Question]] = []
    for q in survey.questions:
        if q.page_break or not out:
            out.append([])
        out[-1].append(q)
    return out
