"""Estimates for people and files: counts → estimates → result objects that render themselves.

Shared by ``deniable estimate``, the dashboard's results page, its exports and the results API:
:func:`question_json` is the one per-option estimate record all of them show.  The survey-level
results are of the estimators' :class:`~deniable.estimators.result.Result` family, as statsmodels'
results are (:class:`SurveyResult`): :class:`Estimates` (every question), :class:`Crosstab`,
:class:`Subgroups` (one question within the groups of another) and :class:`EverySubgroup` (every
question within them), each with ``to_dict()`` (the JSON document), ``to_csv()``, ``table()`` (what
``deniable estimate`` prints) and ``summary()``; the weighted ones are in :mod:`.weighted` and
:mod:`.raking`.

Every function here is pure: it takes the survey, counts (sufficient statistics, never rows)
and options, and returns numbers or text.  The JSON follows docs/design.md, "Formats": per question
``n``, the realized ``epsilon`` (``null`` for a question asked directly), ``declared_epsilon``,
the realized ``p`` and ``q``, ``method``, ``confidence``, ``simultaneous``, and per option
``label``, ``noisy_count``, ``estimate``, ``consistent``, ``std_error``, ``ci_low``, ``ci_high``.
Non-finite numbers (an interval with no data) become ``null``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from deniable import estimators
from deniable.estimators.result import Result

from . import logic
from .definition import Question, Survey
from .questions.base import headline, json_number, pct
from .survey_result import SurveyResult
from .tables import csv_text, grid, plural

CSV_COLUMNS = (
    "question", "option", "label", "n", "epsilon", "declared_epsilon", "p", "q", "method",
    "confidence", "simultaneous", "noisy_count", "estimate", "consistent", "std_error",
    "ci_low", "ci_high",
)


# ---------------------------------------------------------------- marginal estimates


def survey_estimates(survey: Survey, counts: dict, *, method: str = "exact", confidence: float = 0.95,
                     simultaneous: bool = False, monitoring: bool = False, tuned_for: int = 10_000) -> list:
    """Return ``[(question, result)]`` for every question of ``survey`` from its sufficient statistics.

    ``counts[qid]`` is the question's sufficient statistics (a categorical question's option counts,
    :meth:`.dataset.Dataset.stats`); the result is its type's (:meth:`.questions.base.QuestionType.estimate`:
    an ``EstimateResult`` for a choice).  A question asked directly is
    estimated with ``epsilon=None`` (no randomization: p = 1, q = 0).  ``monitoring`` gives a
    choice question confidence-sequence intervals (:func:`deniable.estimators.monitor`, tuned for
    ``tuned_for`` respondents) instead of the fixed-n ``method``; the other types keep theirs.
    """
    return [(q, q.qtype.estimate(q, counts[q.id], method=method, confidence=confidence, simultaneous=simultaneous,
                                 monitoring=monitoring, tuned_for=tuned_for))
            for q in survey.questions]


def question_json(question: Question, result) -> dict:
    """One question's estimates in the docs/design.md format: the record everywhere (its type's
    :meth:`~.questions.base.QuestionType.record`).

    For a choice, :meth:`deniable.estimators.EstimateResult.as_dict` with the question's id, text
    and option labels; ε is ``null`` for a question asked directly, and an empty note is ``null``.
    A question with a ``show_if`` adds ``asked_of`` (:func:`.logic.asked_of`): its estimates are of the
    respondents who reached it.
    """
    record = question.qtype.record(question, result)
    if question.show_if is not None:  # a subgroup: only the respondents who reached the question
        record["asked_of"] = logic.asked_of(question)
    return record


def _cell(value):
    """A CSV cell: empty for None, ``true``/``false`` for booleans (as R, pandas and JSON read them)."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    return value


QUESTION_COLUMNS = ("n", "epsilon", "declared_epsilon", "p", "q", "method", "confidence", "simultaneous")
ROW_COLUMNS = ("option", "label", "method", "noisy_count", "estimate", "consistent", "std_error", "ci_low", "ci_high")


def question_rows(q: Question, result) -> list[dict]:
    """The estimates CSV's rows of one question as dicts of :data:`CSV_COLUMNS` (None for empty):
    the question's columns from its record, each row's from its type's ``csv_rows`` (``option``
    names what a row is: an option index, ``mean``, ``pair:j:l``, ``prevalence``, …)."""
    data = question_json(q, result)
    base = {"question": q.id, **{c: data.get(c) for c in QUESTION_COLUMNS},
            "simultaneous": data.get("simultaneous", False)}
    rows = []
    for row in q.qtype.csv_rows(q, result):
        own = {c: row[c] for c in ROW_COLUMNS if row.get(c) is not None}
        rows.append({**base, **own, "method": own.get("method") or base["method"]})
    return rows


def _csv_rows(results):
    """One list of :data:`CSV_COLUMNS` values per question × row."""
    for q, r in results:
        for row in question_rows(q, r):
            yield [_cell(row.get(c)) for c in CSV_COLUMNS]


def _interval(low, high) -> str:
    return f"[{pct(low)}, {pct(high)}]"


@dataclass(frozen=True, eq=False)
class Estimates(SurveyResult):
    """Every question's estimates (:func:`survey_estimates`' pairs), of a survey and its responses."""

    survey: Survey
    n_responses: int
    results: list  # of (Question, its type's result)

    def to_dict(self) -> dict:
        """The estimates JSON of docs/design.md ("Formats"): ``deniable estimate --format json``, the
        export and the results API."""
        return {"survey": self.survey.slug, "n_responses": int(self.n_responses),
                "questions": [question_json(q, r) for q, r in self.results]}

    def to_csv(self) -> str:
        """One row per question × option (columns :data:`CSV_COLUMNS`)."""
        return csv_text([CSV_COLUMNS, *_csv_rows(self.results)])

    def table(self) -> str:
        """The survey and its responses, then one block per question: n, ε, the method and the
        intervals (its type's table)."""
        return (f"{self.survey.title} ({self.survey.slug}): {plural(self.n_responses, 'response')}\n\n"
                + "\n\n".join(self._block(q, r) for q, r in self.results) + "\n")

    @staticmethod
    def _block(question: Question, result) -> str:
        lines = [f"{question.id}: {question.text}"]
        if question.show_if is not None:  # its estimates are of a subgroup
            lines.append(f"  {logic.asked_of(question)}: its estimates are of them only")
        lines += question.qtype.table(question, result, grid)
        if result.note:
            lines.append(f"  note: {result.note}")
        return "\n".join(lines)


# ---------------------------------------------------------------- cross-tabs


@dataclass(frozen=True)
class Crosstab(SurveyResult):
    """Joint and conditional estimates of two questions, with the questions they are about."""

    row: Question
    col: Question
    noisy_counts: np.ndarray
    result: object  # estimators.CrosstabResult

    def to_dict(self) -> dict:
        """Per cell the reports, the joint share and the column's share given the row, each with the
        headline a page shows; the pair's ε, the method and the note."""
        r = self.result
        cells = []
        for i, row_label in enumerate(self.row.options):
            for j, col_label in enumerate(self.col.options):
                cells.append({
                    "row_label": row_label,
                    "col_label": col_label,
                    "noisy_count": int(self.noisy_counts[i, j]),
                    **r.cell(i, j),
                })
                # what a page shows (docs/design.md: a headline lies in its interval); the unbiased stays beside it
                cells[-1]["headline"] = headline(cells[-1])
                cells[-1]["conditional_headline"] = headline({
                    "estimate": cells[-1]["conditional_estimate"], "ci_low": cells[-1]["conditional_ci_low"],
                    "ci_high": cells[-1]["conditional_ci_high"]})
        total_epsilon = sum(q.epsilon for q in (self.row, self.col) if q.protected)
        privacy = pair_privacy(self.row, self.col)
        return {
            "row": {"id": self.row.id, "text": self.row.text, "epsilon": self.row.epsilon},
            "col": {"id": self.col.id, "text": self.col.text, "epsilon": self.col.epsilon},
            "n": int(r.n),
            "declared_epsilon": total_epsilon if total_epsilon else None,
            # the realized ε of the protected sides (a question asked directly adds none: the table's own
            # r.epsilon counts it as infinite; a design that is not ε-LDP: null)
            "epsilon": json_number(privacy.epsilon),
            "confidence": json_number(r.confidence),
            # exact conservative intervals (deniable.estimators.joint); the note says whether the
            # consistent fit converged and which rows were too small for conditionals
            "method": r.method,
            "converged": bool(r.converged),
            "note": r.note or None,
            "cells": cells,
        }

    def table(self) -> str:
        """Per cell the reports, the joint share and the conditional one, with their intervals."""
        r = self.result
        lines = [f"{self.row.id} × {self.col.id}: {self.row.text} / {self.col.text}",
                 f"  n = {int(r.n):,} answered both · {pair_privacy(self.row, self.col).text} · "
                 f"{100 * r.confidence:g}% intervals, method: {r.method} (conservative: at least "
                 f"{100 * r.confidence:g}% for every cell)"]
        headers = [f"{self.row.id} \\ {self.col.id}", "reported", "joint", "interval",
                   f"{self.col.id} | {self.row.id}", "interval"]
        rows = [
            [f"{c['row_label']} · {c['col_label']}", f"{c['noisy_count']:,}", pct(c["estimate"]),
             _interval(c["ci_low"], c["ci_high"]), pct(c["conditional_estimate"]),
             _interval(c["conditional_ci_low"], c["conditional_ci_high"])]
            for c in self.to_dict()["cells"]
        ]
        notes = [f"  note: {r.note}"] if r.note else []
        return "\n".join(lines + grid(headers, rows) + notes) + "\n"

    def to_csv(self) -> str:
        """One row per cell: the pair, n, ε and confidence, then the cell's fields."""
        data = self.to_dict()
        keys = list(data["cells"][0])
        return csv_text([["row", "col", "n", "epsilon", "confidence", *keys],
                         *([self.row.id, self.col.id, data["n"], data["epsilon"] or "", data["confidence"],
                            *("" if cell[k] is None else cell[k] for k in keys)] for cell in data["cells"])])


@dataclass(frozen=True)
class PairPrivacy:
    """What protects each respondent's two answers in a cross-tab: the one computation behind the
    command line's table and JSON and the dashboard's cross-tab page (:func:`pair_privacy`)."""

    epsilon: float | None  # the randomized sides' realized ε, added up (None: no side at a finite ε)
    protected: tuple[Question, ...]  # randomized at a finite ε
    direct: tuple[Question, ...]  # asked directly: its answer is not randomized, and adds no ε
    not_ldp: tuple[Question, ...]  # randomized by a design one of whose reports can give an answer away

    @property
    def text(self) -> str:
        """The pair's ε as the table says it: ``ε = 1.0000 (age asked directly)``, ``ε = 3.0000 (ε₁ + ε₂)``."""
        if self.not_ldp:
            return f"not ε-LDP ({self.not_ldp[0].id}'s design can give an answer away)"
        if not self.protected:
            return "no randomization"
        if self.direct:
            return f"ε = {self.epsilon:.4f} ({self.direct[0].id} asked directly)"
        return f"ε = {self.epsilon:.4f} (ε₁ + ε₂)"


def pair_privacy(row: Question, col: Question) -> PairPrivacy:
    """The realized ε a respondent spent on the pair's randomized answers (:class:`PairPrivacy`): a
    question asked directly adds none (the estimator counts it as infinite), and a design that is not
    ε-LDP leaves the pair without a finite ε."""
    protected = tuple(q for q in (row, col) if q.protected)
    not_ldp = tuple(q for q in (row, col) if not q.protected and q.design is not None)
    direct = tuple(q for q in (row, col) if not q.protected and q.design is None)
    epsilon = None if not_ldp or not protected else float(sum(q.mechanism.epsilon for q in protected))
    return PairPrivacy(epsilon=epsilon, protected=protected, direct=direct, not_ldp=not_ldp)


def crosstab_estimates(survey: Survey, row_qid: str, col_qid: str, joint_counts, *,
                       confidence: float = 0.95) -> Crosstab:
    """Estimate the joint distribution of two questions from their ``k_row × k_col`` report counts."""
    row, col = survey.question(row_qid), survey.question(col_qid)
    joint = np.asarray(joint_counts)
    from .questions.choice import design_of  # a randomized-response design: its matrix (estimators/joint.py)

    designed = {side: design_of(q) for side, q in (("row_design", row), ("col_design", col)) if q.design}
    result = estimators.crosstab(joint, row.epsilon, col.epsilon, confidence=confidence, **designed)
    return Crosstab(row=row, col=col, noisy_counts=joint, result=result)


# ---------------------------------------------------------------- subgroups


NOT_ANSWERED = "not answered"


@dataclass
class Group(Result):
    """One subgroup: its label, how many answered the estimated question in it, and (n > 0) the
    estimate and its record (:func:`question_json`)."""

    label: str
    not_answered: bool
    n: int
    result: object = None
    record: dict | None = None

    @property
    def empty(self) -> bool:
        return self.n == 0

    def to_dict(self) -> dict:
        """The group in the estimates format: its label, then the question's record; an empty group has
        n = 0 and no estimates."""
        head = {"group": self.label, "not_answered": self.not_answered}
        if self.record is None:
            return {**head, "n": 0, "empty": True}
        return {**head, **self.record}


def empty_group_row(by: str, label: str, qid: str, columns) -> list:
    """A subgroups CSV's row of a group nobody in it answered ``qid``: ``by``, the group's ``label``, then
    ``columns`` empty but the question and n = 0."""
    return [by, label, *(qid if c == "question" else 0 if c == "n" else "" for c in columns)]


@dataclass
class Subgroups(SurveyResult):
    """A question's estimates within each option of a direct question (and, from
    :func:`deniable.server.survey.analysis.subgroups`, among those who did not answer it)."""

    question: Question
    by: Question
    groups: list = field(default_factory=list)  # of Group

    def to_dict(self) -> dict:
        return {"id": self.question.id, "by": self.by.id, "groups": [g.to_dict() for g in self.groups]}

    def _name(self, group: Group) -> str:
        return f"{self.by.id} {group.label}" if group.not_answered else f"{self.by.id}={group.label}"

    def table(self) -> str:
        """One block per group: its name and n, then the question's type's table (an empty group says so)."""
        lines = [f"{self.question.id} by {self.by.id}: {self.question.text}"]
        for group in self.groups:
            if group.result is None:
                lines.append(f"  {self._name(group)} (n=0): no respondents")
                continue
            lines.append(f"  {self._name(group)} (n={group.n:,})")
            lines += ["  " + line for line in self.question.qtype.table(self.question, group.result, grid)]
            if getattr(group.result, "note", None):
                lines.append(f"    note: {group.result.note}")
        return "\n".join(lines) + "\n"

    def csv_rows(self):
        """The rows of :meth:`to_csv` after its header."""
        q = self.question
        for group in self.groups:
            if group.result is None:
                yield empty_group_row(self.by.id, group.label, q.id, CSV_COLUMNS)
            else:
                yield from ([self.by.id, group.label, *row] for row in _csv_rows([(q, group.result)]))

    def to_csv(self) -> str:
        """The estimates CSV with two columns in front, ``by`` and ``group``; an empty group is one row
        with n = 0."""
        return csv_text([["by", "group", *CSV_COLUMNS], *self.csv_rows()])


def group_estimate(q: Question, label: str, not_answered: bool, stats, *, method: str = "exact",
                   confidence: float = 0.95, simultaneous: bool = False) -> Group:
    """One group's estimate from its sufficient statistics (none when nobody in it answered ``q``)."""
    n = q.qtype.n_of_stats(q, stats)
    group = Group(label=label, not_answered=not_answered, n=n)
    if n:
        group.result = q.qtype.estimate(q, stats, method=method, confidence=confidence, simultaneous=simultaneous)
        group.record = question_json(q, group.result)
    return group


@dataclass(frozen=True, eq=False)
class EverySubgroup(SurveyResult):
    """Every question but ``by`` within its groups (:func:`.analysis.every_subgroup`'s list):
    ``deniable estimate --by``."""

    survey: Survey
    by: Question
    subgroups: list  # of Subgroups

    def to_dict(self) -> dict:
        return {"survey": self.survey.slug, "by": self.by.id, "questions": [sg.to_dict() for sg in self.subgroups]}

    def to_csv(self) -> str:
        """:meth:`Subgroups.to_csv` of every question under one header."""
        return csv_text([["by", "group", *CSV_COLUMNS], *(row for sg in self.subgroups for row in sg.csv_rows())])

    def table(self) -> str:
        return "\n".join(sg.table() for sg in self.subgroups)
