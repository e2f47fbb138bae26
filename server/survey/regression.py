"""Regression formulas over a survey: ``drugs ~ year + gender`` → design → :func:`deniable.estimators.regress`.

The formula language is deliberately small: ``OUTCOME ~ TERM + TERM …`` (or ``OUTCOME ~ 1`` for
the intercept alone), where OUTCOME is any question (protected or asked directly) and each TERM is
a question asked directly, entered as a categorical covariate (one dummy per option after the
first, the first option the reference level), or ``num(QUESTION)`` for a numeric covariate (the
option's label when every label is a number, such as ages, else its position 0, 1, 2, …).
Protected questions cannot be covariates: their reports are randomized, and a covariate
measured with randomized error biases every coefficient.  A full formula library (formulaic,
patsy) would bring pandas and a language whose features (transforms, interactions of numeric
columns) the survey's option-index columns do not need; this parser names the question and
the problem in every error.

The design is built from :class:`~.patterns.Patterns` (distinct answer patterns with counts), so
10⁶ responses cost as much as their few hundred patterns.  Responses that did not answer the
outcome or a covariate are left out (complete cases), and the result says how many.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from deniable import estimators
from deniable.estimators import RegressionResult, Term

from .definition import QUESTION_ID_RE, Question, Survey
from .patterns import Patterns, collapse

_TERM_RE = re.compile(r"(?:num\(\s*(?P<num>[^()\s]+)\s*\)|(?P<cat>[^()\s+~]+))")


class FormulaError(ValueError):
    """A formula that does not fit the survey; the message names the question and the problem."""


@dataclass(frozen=True)
class Formula:
    text: str
    outcome: Question
    terms: tuple[tuple[Question, bool], ...]  # (question, numeric?)


def _question(survey: Survey, qid: str, role: str) -> Question:
    if not QUESTION_ID_RE.fullmatch(qid):
        raise FormulaError(f"{role} {qid!r} is not a question id (letters, digits and _)")
    try:
        return survey.question(qid)
    except KeyError:
        ids = ", ".join(q.id for q in survey.questions)
        raise FormulaError(f"unknown question {qid!r} in the formula (expected one of: {ids})") from None


def parse_formula(text: str, survey: Survey) -> Formula:
    """Parse ``OUTCOME ~ TERM + …`` against the survey, or raise FormulaError saying what is wrong.

    >>> from deniable.server.survey.definition import parse_definition
    >>> s = parse_definition({"slug": "s", "title": "S", "questions": [
    ...     {"id": "drugs", "text": "?", "options": ["Yes", "No"], "epsilon": 1},
    ...     {"id": "year", "text": "?", "options": ["1", "2", "3"]}]})
    >>> f = parse_formula("drugs ~ num(year)", s)
    >>> f.outcome.id, [(q.id, numeric) for q, numeric in f.terms]
    ('drugs', [('year', True)])
    """
    if not isinstance(text, str) or text.count("~") != 1:
        raise FormulaError("a formula is OUTCOME ~ COVARIATE + COVARIATE …, with one '~' "
                           "(e.g. \"drugs ~ year + gender\")")
    left, right = (part.strip() for part in text.split("~"))
    if not left:
        raise FormulaError("the formula has no outcome before '~'")
    outcome = _question(survey, left, "outcome")
    if outcome.qtype.regression is not None:
        raise FormulaError(f"outcome {outcome.id!r} is a {outcome.qtype.label} question, not available for a "
                           f"regression: {outcome.qtype.regression}")
    if not right:
        raise FormulaError("the formula has nothing after '~' (write 1 for the intercept alone)")
    terms: list[tuple[Question, bool]] = []
    if right != "1":
        for raw in right.split("+"):
            part = raw.strip()
            match = _TERM_RE.fullmatch(part)
            if not part or not match:
                raise FormulaError(f"cannot read the covariate {part!r}: write a question id, or num(ID) "
                                   "for a numeric one, joined by +")
            numeric = match.group("num") is not None
            question = _question(survey, match.group("num") or match.group("cat"), "covariate")
            if question.id == outcome.id:
                raise FormulaError(f"{question.id!r} is the outcome; it cannot also be a covariate")
            if question.protected:
                raise FormulaError(f"covariate {question.id!r} is protected (randomized, ε = {question.epsilon:g}): "
                                   "covariates must be questions asked directly")
            if question.qtype.covariate is not None:
                raise FormulaError(f"covariate {question.id!r} is a {question.qtype.label} question, not available "
                                   f"as a covariate: {question.qtype.covariate}")
            if any(q.id == question.id for q, _ in terms):
                raise FormulaError(f"covariate {question.id!r} appears twice in the formula")
            terms.append((question, numeric))
    return Formula(text=f"{outcome.id} ~ {' + '.join(_term_name(q, n) for q, n in terms) or '1'}",
                   outcome=outcome, terms=tuple(terms))


def _term_name(question: Question, numeric: bool) -> str:
    return f"num({question.id})" if numeric else question.id


def numeric_values(question: Question) -> np.ndarray:
    """The number each option stands for in ``num(QUESTION)``: its label, or else its position."""
    try:
        return np.array([float(label) for label in question.options])
    except ValueError:
        return np.arange(question.k, dtype=float)


@dataclass(frozen=True)
class Design:
    """The arrays :func:`deniable.estimators.regress` takes, from a formula and patterns."""

    reports: np.ndarray
    covariates: np.ndarray
    weights: np.ndarray
    names: tuple[str, ...]
    terms: tuple[Term, ...]
    left_out: int  # responses without an answer to the outcome or to a covariate


def design(patterns: Patterns, formula: Formula) -> Design:
    """Build the weighted design of ``formula`` from answer patterns (complete cases)."""
    qids = [formula.outcome.id, *(q.id for q, _ in formula.terms)]
    rows, counts = collapse(patterns, qids)
    complete = np.all(rows >= 0, axis=1) if rows.size else np.zeros(len(counts), dtype=bool)
    left_out = int(counts[~complete].sum())
    rows, counts = rows[complete], counts[complete]
    columns, names, terms = [], [], []
    for position, (question, numeric) in enumerate(formula.terms, start=1):
        values = rows[:, position]
        if numeric:
            terms.append(Term(_term_name(question, True), (len(names),)))
            columns.append(numeric_values(question)[values])
            names.append(_term_name(question, True))
        else:
            first = len(names)
            for level in range(1, question.k):
                columns.append((values == level).astype(float))
                names.append(f"{question.id}[{question.options[level]}]")
            terms.append(Term(question.id, tuple(range(first, len(names))), question.options))
    covariates = np.column_stack(columns) if columns else np.zeros((len(counts), 0))
    return Design(reports=rows[:, 0].astype(np.int64) if len(counts) else np.zeros(0, dtype=np.int64),
                  covariates=covariates, weights=counts.astype(float), names=tuple(names), terms=tuple(terms),
                  left_out=left_out)


def reference_index(question: Question, label: str | None) -> int | None:
    """The option index of ``label`` (the reference outcome), or None for the default (the last)."""
    if label is None:
        return None
    if label not in question.options:
        raise FormulaError(f"reference: {question.id!r} has no option {label!r} "
                           f"(expected one of: {', '.join(question.options)})")
    return question.options.index(label)


def fit_formula(patterns: Patterns, text: str, *, reference: str | None = None, confidence: float = 0.95,
                profile: bool = True, survey: Survey | None = None) -> tuple[Formula, Design, RegressionResult]:
    """Parse, build and fit: the one path of ``deniable regress`` and the dashboard's regression page.

    The formula is read against ``survey`` (default: the patterns' survey; the store's patterns
    leave out the questions they cannot hold, which a formula must still find, to say why it cannot
    use them).  Raises FormulaError for the formula and :class:`deniable.estimators.RegressionError`
    for the fit (empty cells, collinear covariates, separation), each with a one-line message.
    """
    formula = parse_formula(text, patterns.survey if survey is None else survey)
    for q in (formula.outcome, *(q for q, _ in formula.terms)):
        if q.id not in patterns.columns:
            raise FormulaError(f"{q.id!r}: its answers are not in the answer patterns a regression reads")
    built = design(patterns, formula)
    outcome = formula.outcome
    if built.weights.sum() == 0:
        raise FormulaError(f"no response answered {outcome.id!r} and every covariate")
    result = estimators.regress(
        built.reports, built.covariates, outcome.epsilon, k=outcome.k, weights=built.weights, names=built.names,
        terms=built.terms, reference=reference_index(outcome, reference), outcome=outcome.id,
        options=outcome.options, confidence=confidence, profile=profile)
    return formula, built, result


def can_be_outcome(question: Question) -> bool:
    """Whether the question's type allows it as a regression's outcome (else ``qtype.regression`` says why)."""
    return question.qtype.regression is None


def can_be_covariate(question: Question) -> bool:
    """Whether the question can be a covariate: asked directly, of a type that allows it."""
    return not question.protected and question.qtype.covariate is None


def default_formula(survey: Survey) -> str:
    """The first protected question that can be an outcome on every question that can be a covariate
    (or the first question that can be an outcome, or the first question: its type says why not)."""
    outcomes = [q for q in survey.questions if can_be_outcome(q)]
    outcome = next((q for q in outcomes if q.protected), outcomes[0] if outcomes else survey.questions[0])
    covariates = [q.id for q in survey.questions if can_be_covariate(q) and q.id != outcome.id]
    return f"{outcome.id} ~ {' + '.join(covariates) or '1'}"


def reference_choices(question: Question, reference: str | None) -> list[dict]:
    """The choices of the reference option of a regression of ``question`` (``value``: the reference's
    label, ``text``: what is modelled then, in words; ``selected``), the default the last option."""
    from deniable.estimators.regression_result import modelled

    chosen = question.options.index(reference) if reference in question.options else question.k - 1
    # a yes/no outcome lists the option modelled (the other one is the reference), in option order
    order = [1, 0] if question.k == 2 else range(question.k)
    return [{"value": question.options[j], "text": modelled(question.options, j), "selected": j == chosen}
            for j in order]


def regression_json(slug: str, formula: Formula, built: Design, result: RegressionResult) -> dict:
    """The JSON of ``deniable regress --format json``: ``models`` (what the coefficients are of) first."""
    data = result.as_dict()
    return {"models": data.pop("models"), "survey": slug, "formula": formula.text, "left_out": built.left_out,
            **data}


def regression_table(formula: Formula, built: Design, result: RegressionResult) -> str:
    """The terminal output: the formula, who was left out, then the result's summary."""
    lines = [f"{formula.text}: {result.models}"]
    if built.left_out:
        lines.append(f"{built.left_out:,} responses left out (no answer to the outcome or to a covariate)")
    for q in (q for q, numeric in formula.terms if numeric and not all(_is_number(o) for o in q.options)):
        lines.append(f"num({q.id}) uses option positions: " +
                     ", ".join(f"{label} = {i}" for i, label in enumerate(q.options)))
    return "\n".join(lines) + "\n" + result.summary()


def _is_number(label: str) -> bool:
    try:
        float(label)
    except ValueError:
        return False
    return True
