"""What every front end shows, computed once: marginal estimates, cross-tabs and subgroups.

The dashboard's results, cross-tab and subgroups pages, the results API, the estimates exports
and ``deniable estimate`` (``--crosstab``, ``--by``) all call these functions, so they give the
same groups and the same numbers.  No Flask, no SQLite: callers pass the survey and its
sufficient statistics (or a :class:`~.dataset.Dataset` holding the questions' columns of codes).

What a request may ask is checked here, once: a bad choice raises :class:`AnalysisError`,
whose ``field`` names what was wrong (``crosstab``, ``by``, ``question``); the dashboard shows it
as a 400 page, the command line as one line (``--crosstab: …``).  What a question's type cannot
do it says in words (:attr:`~.questions.base.QuestionType.crosstab`): "not available for this
type: …".

Subgroups (one rule everywhere): the groups are the options of a directly asked categorical
question, then the respondents who did not answer it ("not answered"); a group nobody in it
answered the estimated question is listed as empty (n = 0, no estimates).  Each group's
statistics are its type's (:meth:`~.questions.base.QuestionType.column_stats` of the group's
rows), so subgroups work for every type of the estimated question.

Why a group's estimate is the marginal estimator on the group's reports: the grouping answer is
not randomized, so the group is fixed before the mechanism acts, and each member's report of the
estimated question went through the same channel ``P(report | truth)`` as everyone's.  The
group's report distribution is therefore ``P · π_group`` and inverting the channel on the group's
counts is unbiased for ``π_group`` with the group's n (the argument of Warner, JASA 60 (1965) §3,
applied to a subpopulation).  Groups are disjoint samples, so each group's intervals hold on their
own; grouping by a randomized answer would not (members would be misassigned at the flip rate).
"""

from __future__ import annotations

import numpy as np

from deniable.errors import FieldError

from .definition import Question, Survey
from .estimates import (NOT_ANSWERED, Crosstab, Group, Subgroups, crosstab_estimates, group_estimate,
                        survey_estimates)

__all__ = ["NOT_ANSWERED", "AnalysisError", "Group", "Subgroups", "check_by", "check_crosstab",
           "check_subgroups", "crosstab", "crosstab_headlines", "crosstab_questions", "every_subgroup",
           "group_statistics", "grouping_questions", "marginal_estimates", "needs_rows", "subgroups"]


class AnalysisError(FieldError):
    """A request the analysis cannot answer; ``field`` names the input at fault (``crosstab``, ``by``,
    ``question``) and ``problem`` says what is wrong, in words."""

    def __init__(self, field_name: str, problem: str):
        super().__init__(f"{field_name}: {problem}", field_name)
        self.problem = problem


def _question(survey: Survey, qid: str, field_name: str) -> Question:
    try:
        return survey.question(qid)
    except KeyError:
        ids = ", ".join(q.id for q in survey.questions)
        raise AnalysisError(field_name, f"unknown question id {qid!r} (expected one of: {ids})") from None


# ---------------------------------------------------------------- marginal estimates


def marginal_estimates(survey: Survey, stats: dict, *, method: str = "exact", confidence: float = 0.95,
                       simultaneous: bool = False, monitoring: bool = False, tuned_for: int = 10_000) -> list:
    """``[(question, result)]`` for every question: each type's estimator on its sufficient statistics
    (:func:`.estimates.survey_estimates`; the records are :func:`.estimates.question_json`)."""
    return survey_estimates(survey, stats, method=method, confidence=confidence, simultaneous=simultaneous,
                            monitoring=monitoring, tuned_for=tuned_for)


# ---------------------------------------------------------------- cross-tabs


def crosstab_questions(survey: Survey) -> list[Question]:
    """The questions a cross-tab can be made of: those whose type allows it."""
    return [q for q in survey.questions if q.qtype.crosstab is None]


def check_crosstab(survey: Survey, row_id: str, col_id: str) -> tuple[Question, Question]:
    """The two questions of a cross-tab, or :class:`AnalysisError` (field ``crosstab``) saying why not."""
    row, col = _question(survey, row_id, "crosstab"), _question(survey, col_id, "crosstab")
    if row.id == col.id:
        raise AnalysisError("crosstab", "give two different questions")
    for q in (row, col):
        if q.qtype.crosstab is not None:
            raise AnalysisError("crosstab", f"question {q.id!r} is {q.qtype.label}: not available for this type: "
                                            f"{q.qtype.crosstab}")
        if q.design:  # the exact intervals need each report likelier under its own answer (estimators/joint.py)
            from deniable.estimators.joint import option_channels, own_reports

            from .questions.choice import design_of

            try:
                option_channels(own_reports(design_of(q))[0])
            except FieldError as exc:
                raise AnalysisError("crosstab", f"question {q.id!r}: {exc}") from None
    return row, col


def crosstab(survey: Survey, row_id: str, col_id: str, dataset, *, confidence: float = 0.95) -> Crosstab:
    """The cross-tab of two questions from a dataset holding both (checked by :func:`check_crosstab`)."""
    row, col = check_crosstab(survey, row_id, col_id)
    return crosstab_estimates(survey, row.id, col.id, dataset.joint_counts(row.id, col.id), confidence=confidence)


def crosstab_headlines(ct: Crosstab) -> dict:
    """Per cell the number a page shows, inside its interval: ``{"joint": k1×k2, "conditional": k1×k2}``.

    A joint or conditional share is a probability: its headline is the unbiased estimate while it
    lies in its interval and [0, 1], else the consistent (constrained maximum-likelihood) one when
    that does, else the interval's end nearest the estimate (:func:`.questions.base.headline`).
    """
    from .questions.base import headline

    r = ct.result
    shape = np.shape(r.joint_estimate)
    joint = [[headline({"estimate": r.joint_estimate[i][j], "consistent": r.joint_consistent[i][j],
                        "ci_low": r.joint_ci_low[i][j], "ci_high": r.joint_ci_high[i][j]})
              for j in range(shape[1])] for i in range(shape[0])]
    conditional = [[headline({"estimate": r.conditional_estimate[i][j], "ci_low": r.conditional_ci_low[i][j],
                              "ci_high": r.conditional_ci_high[i][j]})
                    for j in range(shape[1])] for i in range(shape[0])]
    return {"joint": joint, "conditional": conditional}


# ---------------------------------------------------------------- subgroups


def grouping_questions(survey: Survey) -> list[Question]:
    """The questions subgroups can be made by: categorical ones asked directly (whose answers are true
    ones: a type that says why its answers cannot be a covariate cannot group either)."""
    return [q for q in survey.questions if q.qtype.categorical and not q.protected and q.qtype.covariate is None]


def check_by(survey: Survey, by_id: str) -> Question:
    """The grouping question, or :class:`AnalysisError` (field ``by``) saying why it cannot group."""
    by = _question(survey, by_id, "by")
    if not by.qtype.categorical:
        raise AnalysisError("by", f"question {by.id!r} is {by.qtype.label}: subgroups are the options of a "
                                  "single-choice question asked directly")
    if by.protected:
        raise AnalysisError("by", f"question {by.id!r} is randomized (ε = {by.epsilon:g}); subgroups need a "
                                  "question asked directly (grouping by a randomized answer would put respondents "
                                  "in the wrong group)")
    if by.qtype.covariate is not None:
        raise AnalysisError("by", f"question {by.id!r} cannot group respondents: {by.qtype.covariate}")
    return by


def check_subgroups(survey: Survey, qid: str, by_id: str) -> tuple[Question, Question]:
    """The estimated question and the grouping one, or :class:`AnalysisError` naming the field."""
    by = check_by(survey, by_id)
    q = _question(survey, qid, "question")
    if q.id == by.id:
        raise AnalysisError("question", f"{q.id!r} is the grouping question itself: choose another question")
    return q, by


def needs_rows(survey: Survey, qids) -> bool:
    """Whether some of these questions are not in the store's answer patterns (then load the rows)."""
    return any(not survey.question(qid).qtype.in_patterns(survey.question(qid)) for qid in qids)


def group_statistics(q: Question, by: Question, dataset) -> list[tuple[str, bool, object]]:
    """``(label, not_answered, statistics)`` per group: the options of ``by``, then "not answered".

    ``dataset`` is a :class:`~.dataset.Dataset` (optionally weighted: answer patterns) holding the
    columns of both questions; a group's statistics are ``q``'s type's statistics of its rows.
    """
    column = np.asarray(dataset.columns[q.id])
    groups = np.asarray(dataset.columns[by.id])
    weights = None if dataset.weights is None else np.asarray(dataset.weights)
    out = []
    for g, label in [*enumerate(by.options), (-1, NOT_ANSWERED)]:
        rows = groups == g
        out.append((label, g < 0, q.qtype.column_stats(q, column[rows], None if weights is None else weights[rows])))
    return out


def subgroups(survey: Survey, qid: str, by_id: str, dataset, *, method: str = "exact", confidence: float = 0.95,
              simultaneous: bool = False) -> Subgroups:
    """Estimate ``qid`` within each group of ``by_id`` (checked by :func:`check_subgroups`): the options
    of ``by``, then "not answered"; a group with nobody who answered ``qid`` is empty (n = 0)."""
    q, by = check_subgroups(survey, qid, by_id)
    return Subgroups(question=q, by=by, groups=[
        group_estimate(q, label, not_answered, stats, method=method, confidence=confidence, simultaneous=simultaneous)
        for label, not_answered, stats in group_statistics(q, by, dataset)])


def every_subgroup(survey: Survey, by_id: str, dataset, **options) -> list[Subgroups]:
    """:func:`subgroups` of every question but the grouping one (``deniable estimate --by``)."""
    by = check_by(survey, by_id)
    return [subgroups(survey, q.id, by.id, dataset, **options) for q in survey.questions if q.id != by.id]
