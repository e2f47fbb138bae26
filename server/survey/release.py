"""A public release of a survey's results: what is drawn, with which mechanism, at what cost.

A release is a list of :class:`ReleaseItem` chosen by the survey's owner, each with its own ε:

``counts``  the histogram of a question asked directly ("not answered" a category of its own when
            the question is optional, so the counts add up to the public number of
            respondents), with the geometric mechanism;
``top``     the most common answer to a question asked directly, with the exponential
            mechanism (the counts stay unpublished);
``groups``  a protected question's report counts within each group of a direct question (and
            the estimates within each group), with the geometric mechanism on the table.

What a question's type offers is its type's: a direct question is counted, or grouped by, when
its answers are a few categories (:meth:`~.questions.base.QuestionType.release_labels`), and a
protected question is released within groups when its type makes a table of its reports
(:meth:`~.questions.base.QuestionType.group_columns`) and estimates from a noisy row of it
(:meth:`~.questions.base.QuestionType.group_estimates`); :func:`unavailable` lists the rest with
the reason in words.  A release may hold no item at all: it publishes the protected questions'
estimates alone, at no cost (ε spent: 0).

Sensitivities and intervals are derived in :mod:`deniable.estimators.release`; the exact integer
samplers are :mod:`deniable.client.discrete`.  Protected questions' own counts are published
exactly: they are randomized reports already (post-processing costs no budget).  The whole
release — the numbers drawn once, their intervals, and one ledger entry per item — is one JSON
document (:func:`draw_release`), stored by :mod:`deniable.server.store.releases` and only read
after that: reloading the public page draws nothing.  The protected questions' statistics are
stored in the JSON form their type defines (:meth:`~.questions.base.QuestionType.stats_to_json`;
a choice's: its option counts, as releases have always held them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from deniable.client import discrete
from deniable.client.mechanism import TWO_32, MechanismError, check_epsilon
from deniable.errors import FieldError
from deniable.estimators import release as central

from .definition import Question, Survey
from .parsing import number
from .patterns import Patterns, collapse, n_responses
from .questions.base import NotAvailable

KINDS = ("counts", "top", "groups")
# the scale of each kind's base exp(−ε/scale): the geometric mechanism's Δ, the exponential's 2Δ
SCALES = {"counts": central.HISTOGRAM, "top": 2 * central.SCORE, "groups": central.TABLE}
CONFIDENCE = 0.95
NOT_ANSWERED = "(not answered)"


class ReleaseError(FieldError):
    """A release that cannot be made; ``field`` names the form field it is about."""


@dataclass(frozen=True)
class ReleaseItem:
    kind: str
    question: str
    epsilon: float
    by: str | None = None

    @property
    def field(self) -> str:
        """The form field of this item: ``counts-age``, ``top-age``, ``groups-drugs-age``."""
        return "-".join(p for p in (self.kind, self.question, self.by) if p)


def _categories(q: Question) -> list[str]:
    """The labels of a direct question's codes, or NotAvailable saying why it has none to release."""
    labels = q.qtype.release_labels(q)
    if not q.qtype.in_patterns(q):
        raise NotAvailable("its answers are not held in the answer patterns that releases are drawn from")
    return labels


def _group_columns(q: Question) -> tuple[list[str], np.ndarray]:
    """The columns of a protected question's table within groups, or NotAvailable saying why."""
    columns = q.qtype.group_columns(q)
    if not q.qtype.in_patterns(q):
        raise NotAvailable("its reports are not held in the answer patterns that releases are drawn from")
    return columns


def _offered(survey: Survey) -> tuple[list, list]:
    direct, protected, out, missing = [], [], [], []
    for q in survey.questions:
        if q.protected:
            try:
                _group_columns(q)
            except NotAvailable as exc:
                missing.append((q.id, f"estimates within groups: {exc}"))
            else:
                protected.append(q)
            continue
        try:
            _categories(q)
        except NotAvailable as exc:
            missing.append((q.id, f"counts and most common answer: {exc}"))
        else:
            direct.append(q)
    for q in direct:
        out.append(("counts", q.id, None, f"how many chose each option of {q.id!r}"))
        out.append(("top", q.id, None, f"only the most common answer to {q.id!r}"))
    for q in protected:
        for by in direct:
            out.append(("groups", q.id, by.id, f"estimates of {q.id!r} within each group of {by.id!r}"))
    return out, missing


def candidates(survey: Survey) -> list[tuple[str, str, str | None, str]]:
    """Every item an owner can release: ``(kind, question, by, description)``."""
    return _offered(survey)[0]


def unavailable(survey: Survey) -> list[tuple[str, str]]:
    """``(question, reason)`` for every question, or kind of item, a release does not offer, in words."""
    return _offered(survey)[1]


PROTECTED_ONLY = "protected-only"  # the form field asking for the protected estimates alone (no item, ε 0)


def parse_items(survey: Survey, form: dict) -> list[ReleaseItem]:
    """Read ``{field: ε text}`` (empty = not released) into items, or raise ReleaseError naming the field.

    No item is a release of the protected questions' estimates alone, when the form asks for it
    (``protected-only=1``) and the survey has protected questions.
    """
    items = []
    for kind, qid, by, _ in candidates(survey):
        field = "-".join(p for p in (kind, qid, by) if p)
        text = (form.get(field) or "").strip()
        if not text:
            continue
        try:
            epsilon = check_epsilon(number(text, field))
        except FieldError:  # not a number, or MechanismError: not in (0, 20]
            raise ReleaseError(f"{field}: ε must be a number in (0, 20], got {text[:20]!r}", field) from None
        scale = SCALES[kind]
        try:  # the mechanism's 32-bit coin cannot realize an ε below about scale · 2.3e-10
            discrete.base_threshold(epsilon, scale)
        except MechanismError:
            smallest = scale * -math.log1p(-2.0**-32)
            raise ReleaseError(f"{field}: ε = {epsilon:g} is too small for the release's noise (its 32-bit "
                               f"coin needs ε ≥ {smallest:.2g})", field) from None
        items.append(ReleaseItem(kind, qid, epsilon, by))
    if not items:
        if (form.get(PROTECTED_ONLY) or "").strip() == "1":
            if not any(q.protected for q in survey.questions):
                raise ReleaseError(f"{PROTECTED_ONLY}: the survey has no protected question to publish", PROTECTED_ONLY)
            return []
        raise ReleaseError("choose at least one thing to release (give it an ε), or publish the protected "
                           "questions' estimates alone (ε spent: 0)", None)
    return items


def _always_answered(question: Question) -> bool:
    """Whether every respondent answers the question: required, and asked of everyone (no display logic)."""
    return question.required and question.show_if is None


def _group_labels(question: Question) -> list[str]:
    """The categories of a direct question (its type's), and "not answered" unless everyone answers it."""
    labels = _categories(question)
    return [*labels] if _always_answered(question) else [*labels, NOT_ANSWERED]


def _code_counts(patterns: Patterns, question: Question) -> np.ndarray:
    """Answers with each code of a direct question (answered rows only), one per category."""
    size = len(_categories(question))
    column = patterns.columns[question.id]
    answered = column >= 0
    return np.bincount(column[answered], weights=patterns.counts[answered], minlength=size).astype(np.int64)


def _histogram(patterns: Patterns, question: Question) -> np.ndarray:
    """Counts of each category (:func:`_group_labels`): they add up to every respondent."""
    answered = _code_counts(patterns, question)
    return answered if _always_answered(question) else np.append(answered, n_responses(patterns) - int(answered.sum()))


def _table(patterns: Patterns, question: Question, by: Question, columns: np.ndarray) -> np.ndarray:
    """The columns of ``question``'s reports (:func:`_group_columns`) within each option of ``by`` and
    "not answered" (rows)."""
    rows, counts = collapse(patterns, [by.id, question.id])
    table = np.zeros((len(_group_labels(by)), columns.shape[1]), dtype=np.int64)
    for (group, report), count in zip(rows, counts):
        if report >= 0:  # group −1 only when not everyone answers ``by`` (_always_answered)
            table[group if group >= 0 else len(_categories(by))] += count * columns[report]
    return table


def _mechanism_entry(item: ReleaseItem, mechanism: str, scale: int, sensitivity: int, threshold: int,
                     what: str) -> dict:
    return {"kind": item.kind, "question": item.question, "by": item.by, "mechanism": mechanism,
            "epsilon": item.epsilon, "realized_epsilon": discrete.realized_epsilon(threshold, scale),
            "sensitivity": sensitivity, "threshold": threshold, "what": what}


def _release_counts(patterns, item, question, draw) -> dict:
    counts = _histogram(patterns, question)
    noisy, threshold = discrete.geometric_mechanism(counts, item.epsilon, central.HISTOGRAM, draw)
    n = n_responses(patterns)
    beta = threshold / TWO_32
    intervals = [central.noisy_share_interval(int(y), n, beta, CONFIDENCE) for y in noisy]
    entry = _mechanism_entry(item, "geometric", central.HISTOGRAM, central.HISTOGRAM, threshold,
                             f"counts of {question.id} ({counts.size} categories)")
    return {**entry, "labels": _group_labels(question), "noisy": noisy.tolist(),
            "counts": central.consistent_counts(noisy, n).tolist(),
            "ci_low": [low for low, _ in intervals], "ci_high": [high for _, high in intervals]}


def _release_top(patterns, item, question, draw) -> dict:
    scores = _code_counts(patterns, question)
    chosen, threshold = discrete.exponential_choice(scores, item.epsilon, central.SCORE, draw)
    entry = _mechanism_entry(item, "exponential", 2 * central.SCORE, central.SCORE, threshold,
                             f"the most common answer to {question.id}")
    return {**entry, "labels": _categories(question), "top": chosen}


def _release_groups(patterns, item, question, by, draw) -> dict:
    """The table of ``question``'s report columns within each group of ``by``, drawn with the geometric
    mechanism at sensitivity 2w (a respondent moving to another group leaves w cells for w others;
    w = 1 for a choice's one column per option, :meth:`~.questions.base.QuestionType.group_columns`),
    made consistent column by column (each column's total is public: the protected reports are
    published exactly), and each group's estimates from it (the type's
    :meth:`~.questions.base.QuestionType.group_estimates`, intervals that account for the noise)."""
    labels, columns = _group_columns(question)
    width = int(columns.sum(axis=1)[0])
    sensitivity = central.TABLE * width
    table = _table(patterns, question, by, columns)
    noisy, threshold = discrete.geometric_mechanism(table, item.epsilon, sensitivity, draw)
    totals = table.sum(axis=0)  # each column in all: public, exact (randomized already)
    consistent = np.column_stack([central.consistent_counts(noisy[:, j], int(totals[j]))
                                  for j in range(table.shape[1])])
    beta = threshold / TWO_32
    groups, rows = [], []
    for g, label in enumerate(_group_labels(by)):
        rows = question.qtype.group_estimates(question, consistent[g], noisy[g], beta, CONFIDENCE)
        groups.append({"label": label, "n": int(consistent[g].sum()) // width, "counts": consistent[g].tolist(),
                       "noisy": noisy[g].tolist(), "estimate": [r["estimate"] for r in rows],
                       "ci_low": [r["ci_low"] for r in rows], "ci_high": [r["ci_high"] for r in rows]})
    entry = _mechanism_entry(item, "geometric", sensitivity, sensitivity, threshold,
                             f"reports of {question.id} within each group of {by.id} "
                             f"({table.shape[0]} × {table.shape[1]} table)")
    return {**entry, "labels": [r["label"] for r in rows], "columns": labels,
            "lower": [r["lower"] for r in rows], "upper": [r["upper"] for r in rows], "groups": groups}


DEADLINE = 10.0  # seconds for drawing a whole release, well within gunicorn's worker timeout (30 s)


def draw_release(patterns: Patterns, items: list[ReleaseItem], draw=None, *, day: str = "",
                 survey: Survey | None = None, stats: dict | None = None) -> dict:
    """Draw every item once and return the release document (JSON-ready).

    ``draw`` is ``deniable.client.discrete``'s uint32 source (the OS CSPRNG by default).  The
    document holds the public number of respondents, every protected question's exact sufficient
    statistics (its type's JSON form), and per item the mechanism, ε, the realized ε, the
    sensitivity and the values.  ``survey`` and ``stats`` (every question's statistics,
    ``deniable.server.store.surveys.survey_stats``) give the protected questions the answer
    patterns do not hold; without them, the patterns' questions are published.
    """
    full = survey or patterns.survey
    survey = patterns.survey
    draw = discrete.timed(draw or discrete.source(), DEADLINE)
    protected = {}
    for q in full.questions:
        if not q.protected:
            continue
        if stats is not None and q.id in stats:
            protected[q.id] = q.qtype.stats_to_json(q, stats[q.id])
        elif q.id in patterns.columns:
            protected[q.id] = q.qtype.stats_to_json(q, q.qtype.histogram_stats(
                q, patterns.columns[q.id], patterns.counts))
    released = []
    for item in items:
        question = survey.question(item.question)
        try:
            if item.kind == "counts":
                released.append(_release_counts(patterns, item, question, draw))
            elif item.kind == "top":
                released.append(_release_top(patterns, item, question, draw))
            elif item.kind == "groups":
                released.append(_release_groups(patterns, item, question, survey.question(item.by), draw))
            else:
                raise ReleaseError(f"unknown kind of release {item.kind!r}")
        except discrete.DrawLimitError as exc:  # a broken random source: refused before anything is stored
            raise ReleaseError(f"{item.field}: {exc}: refused, nothing was released or spent", item.field) from None
    return {
        "survey": survey.slug, "released_on": day, "n": n_responses(patterns),
        "epsilon": math.fsum(item.epsilon for item in items), "confidence": CONFIDENCE,
        "protected": protected,
        "items": released,
    }


def ledger_entries(document: dict) -> list[dict]:
    """One ledger row per item of a release document: mechanism, ε, realized ε, sensitivity, what."""
    return [{key: item[key] for key in ("mechanism", "epsilon", "realized_epsilon", "sensitivity", "what")}
            for item in document["items"]]
