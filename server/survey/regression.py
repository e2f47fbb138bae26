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

import ast
import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from deniable import estimators
from deniable.estimators import RegressionResult, Term

from deniable.errors import FieldError

from .definition import QUESTION_ID_RE, Question, Survey
from .estimates import SurveyResult
from .parsing import number_or_none
from .patterns import Patterns, collapse

if TYPE_CHECKING:
    from .raking import Raked


class FormulaError(FieldError):
    """A formula that does not fit the survey; the message names the question and the problem."""


@dataclass(frozen=True)
class Factor:
    """One factor of a term: a question entered as categories, as a number, or an expression ``I(…)``."""

    text: str  # as the formula is written back: ``year``, ``num(year)``, ``I(age / 10)``
    questions: tuple[Question, ...]
    categorical: bool  # one dummy per option after the first (a single-choice question as such)
    expression: ast.expr | None = None  # I(…): arithmetic over the questions' numbers


@dataclass(frozen=True)
class Formula:
    text: str
    outcome: Question
    terms: tuple[tuple[Factor, ...], ...]  # each term: its factors (more than one: an interaction a:b)

    @property
    def questions(self) -> list[Question]:
        """The covariates' questions, each once, in the order they appear."""
        seen: dict[str, Question] = {}
        for term in self.terms:
            for factor in term:
                for q in factor.questions:
                    seen.setdefault(q.id, q)
        return list(seen.values())


def _question(survey: Survey, qid: str, role: str) -> Question:
    if not QUESTION_ID_RE.fullmatch(qid):
        raise FormulaError(f"{role} {qid!r} is not a question id (letters, digits and _)")
    try:
        return survey.question(qid)
    except KeyError:
        ids = ", ".join(q.id for q in survey.questions)
        raise FormulaError(f"unknown question {qid!r} in the formula (expected one of: {ids})") from None


def _split(text: str, sign: str) -> list[str]:
    """``text`` split at ``sign`` outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth < 0:
            raise FormulaError(f"unbalanced parentheses in the formula: {text.strip()!r}")
        if c == sign and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise FormulaError(f"unbalanced parentheses in the formula: {text.strip()!r}")
    return [*parts, text[start:]]


_OPERATORS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power}
# Operators and parentheses in one I(…): its tree is at most this deep, so that reading it, writing
# it back and evaluating it (each recursive) stay far from Python's recursion limit.
MAX_OPERATORS = 100


def _short(text: str, size: int = 60) -> str:
    return text if len(text) <= size else f"{text[:size]}…"


def _expression(text: str) -> tuple[ast.expr, list[str]]:
    """Parse the inside of ``I(…)``: numbers, question ids, + − × / and ^, parentheses.

    ``^`` is a power, as in R's formulas (read as Python's ``**``: it binds tighter than × and /, and
    from the right, as R's does), never a bitwise operator."""
    text = text.strip()
    if sum(text.count(c) for c in "+-*/^(") > MAX_OPERATORS:
        raise FormulaError(f"I({_short(text)}): more than {MAX_OPERATORS} operators and parentheses in the formula; "
                           "write a shorter expression")
    unreadable = FormulaError(f"cannot read I({_short(text, 200)}) in the formula: write arithmetic with + - * / ^ on "
                              "question ids and numbers, e.g. I(age/10) or I((age/10)^2)")
    if "\0" in text:  # ast.parse refuses a null byte with a SyntaxError, or in some Python versions a ValueError
        raise unreadable
    source = text.replace("^", "**")
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        raise unreadable from None
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            continue
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            continue
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            try:
                finite = math.isfinite(float(node.value))
            except OverflowError:  # an integer beyond a float's range
                finite = False
            if not finite:
                number = _short(ast.get_source_segment(source, node) or "", 20)
                raise FormulaError(f"I({_short(text)}): the number {number} in the formula is beyond a float's range "
                                   "(about 1.8e308)")
            continue
        elif not isinstance(node, (ast.operator, ast.unaryop, ast.expr_context)):
            raise FormulaError(f"I({_short(text, 200)}) in the formula: only numbers, question ids, + - * / ^ and "
                               "parentheses")
    if not names:
        raise FormulaError(f"I({_short(text, 200)}) in the formula names no question")
    return tree, names


def _evaluate(node: ast.expr, values: dict[str, np.ndarray]) -> np.ndarray:
    """The value of an ``I(…)`` expression for every row (numpy arithmetic, no Python ``eval``)."""
    if isinstance(node, ast.Constant):
        return np.asarray(float(node.value))
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.UnaryOp):
        inner = _evaluate(node.operand, values)
        return -inner if isinstance(node.op, ast.USub) else inner
    with np.errstate(all="ignore"):
        return _OPERATORS[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))


def _covariate(survey: Survey, outcome: Question, qid: str) -> Question:
    question = _question(survey, qid, "covariate")
    if question.id == outcome.id:
        raise FormulaError(f"{question.id!r} is the outcome; it cannot also be a covariate")
    if question.protected:
        raise FormulaError(f"covariate {question.id!r} is protected (randomized, ε = {question.epsilon:g}): "
                           "covariates must be questions asked directly")
    if question.qtype.covariate is not None:
        raise FormulaError(f"covariate {question.id!r} is a {question.qtype.label} question, not available "
                           f"as a covariate: {question.qtype.covariate}")
    return question


def _factor(survey: Survey, outcome: Question, raw: str) -> Factor:
    part = raw.strip()
    if part.startswith("I(") and part.endswith(")"):
        tree, names = _expression(part[2:-1])
        questions = tuple(dict.fromkeys(_covariate(survey, outcome, name) for name in names))
        return Factor(f"I({ast.unparse(tree).replace(' ** ', '^')})", questions, False, tree)
    if part.startswith("num(") and part.endswith(")"):
        question = _covariate(survey, outcome, part[4:-1].strip())
        return Factor(f"num({question.id})", (question,), False)
    if not part or not QUESTION_ID_RE.fullmatch(part):
        raise FormulaError(f"cannot read the covariate {part!r}: write a question id, num(ID) for an option as a "
                           "number, I(…) for arithmetic (I(age/10), I(age^2)), joined by + (and : for an "
                           "interaction)")
    question = _covariate(survey, outcome, part)
    return Factor(question.id, (question,), question.qtype.categorical)


def parse_formula(text: str, survey: Survey) -> Formula:
    """Parse ``OUTCOME ~ TERM + …`` against the survey, or raise FormulaError saying what is wrong.

    A term is a factor, or factors joined by ``:`` (an interaction: the products of their columns).
    A factor is a question asked directly — a single-choice one as categories (one dummy per
    option after the first), any other (a number) as its value — or ``num(ID)`` for a single-choice
    question's option as a number (its label when every label is a number, such as ages, else its
    position 0, 1, 2, …), or ``I(…)`` for arithmetic on numbers and question ids (``I(age/10)``,
    ``I((age/10)^2)``; ``^`` is a power, as in R).

    >>> from deniable.server.survey.definition import parse_definition
    >>> s = parse_definition({"slug": "s", "title": "S", "questions": [
    ...     {"id": "drugs", "text": "?", "options": ["Yes", "No"], "epsilon": 1},
    ...     {"id": "year", "text": "?", "options": ["1", "2", "3"]},
    ...     {"id": "age", "text": "?", "type": "numeric", "min": 18, "max": 90}]})
    >>> parse_formula("drugs ~ num(year) + I((age/10)^2) + year:age", s).text
    'drugs ~ num(year) + I((age / 10)^2) + year:age'
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
    terms: list[tuple[Factor, ...]] = []
    if right != "1":
        for raw in _split(right, "+"):
            term = tuple(_factor(survey, outcome, f) for f in _split(raw, ":"))
            name = _term_name(term)
            if any(_term_name(t) == name or _main_effect(t) and _main_effect(t) == _main_effect(term) for t in terms):
                raise FormulaError(f"covariate {_main_effect(term) or name!r} appears twice in the formula")
            terms.append(term)
    return Formula(text=f"{outcome.id} ~ {' + '.join(_term_name(t) for t in terms) or '1'}",
                   outcome=outcome, terms=tuple(terms))


def _term_name(term: tuple[Factor, ...]) -> str:
    return ":".join(f.text for f in term)


def _main_effect(term: tuple[Factor, ...]) -> str | None:
    """The question a term enters as itself (``age`` or ``num(age)``: one of them, once), else None."""
    if len(term) == 1 and term[0].expression is None:
        return term[0].questions[0].id
    return None


def numeric_values(question: Question) -> np.ndarray:
    """The number each option stands for in ``num(QUESTION)``: its label, or else its position."""
    if all(_is_number(label) for label in question.options):
        return np.array([float(label) for label in question.options])
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


def _number_of(question: Question, codes: np.ndarray) -> np.ndarray:
    """The number each answer stands for: a choice's option as :func:`numeric_values`, any other
    type's value (:meth:`~.questions.base.QuestionType.covariate_values`)."""
    if question.qtype.categorical:
        return numeric_values(question)[codes]
    return np.asarray(question.qtype.covariate_values(question, codes), dtype=float)


def _factor_columns(factor: Factor, codes: dict[str, np.ndarray], size: int) -> list[tuple[str, np.ndarray]]:
    """A factor's design columns, named: a categorical's dummies, else one column of numbers."""
    if factor.categorical:
        question = factor.questions[0]
        values = codes[question.id]
        return [(f"{question.id}[{question.options[level]}]", (values == level).astype(float))
                for level in range(1, question.k)]
    numbers = {q.id: _number_of(q, codes[q.id]) for q in factor.questions}
    if factor.expression is None:
        return [(factor.text, numbers[factor.questions[0].id])]
    return [(factor.text, np.broadcast_to(_evaluate(factor.expression, numbers), size).astype(float))]


def design(patterns: Patterns, formula: Formula) -> Design:
    """Build the weighted design of ``formula`` from answer patterns (complete cases).

    An interaction's columns are the products of its factors' columns, every combination (a
    categorical's dummies times a number: one slope per option after the first)."""
    questions = formula.questions
    qids = [formula.outcome.id, *(q.id for q in questions)]
    rows, counts = collapse(patterns, qids)
    complete = np.all(rows >= 0, axis=1) if rows.size else np.zeros(len(counts), dtype=bool)
    left_out = int(counts[~complete].sum())
    rows, counts = rows[complete], counts[complete]
    codes = {q.id: rows[:, i + 1] for i, q in enumerate(questions)}
    columns, names, terms = [], [], []
    for term in formula.terms:
        parts = [_factor_columns(f, codes, len(counts)) for f in term]
        first = len(names)
        for combination in itertools.product(*parts):
            names.append(":".join(name for name, _ in combination))
            columns.append(np.prod([column for _, column in combination], axis=0))
        if len(term) == 1 and term[0].categorical:
            terms.append(Term(_term_name(term), tuple(range(first, len(names))), term[0].questions[0].options))
        else:  # numbers, and an interaction's products: each column a numeric term of its own
            terms += [Term(names[c], (c,)) for c in range(first, len(names))]
    covariates = np.column_stack(columns) if columns else np.zeros((len(counts), 0))
    bad = ~np.isfinite(covariates)
    if bad.any():
        column = int(np.argwhere(bad)[0][1])
        raise FormulaError(f"covariate {names[column]!r} is not a finite number for some responses (a division "
                           "by zero, or a power of a negative number)")
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
    An outcome whose type fits it its own way (:meth:`~.questions.base.QuestionType.regression_fit`: a
    two-group design's :class:`~deniable.estimators.group_logit.GroupRegressionResult`) returns that
    result in the RegressionResult's place.
    """
    formula = parse_formula(text, patterns.survey if survey is None else survey)
    for q in (formula.outcome, *formula.questions):
        if q.id not in patterns.columns:
            raise FormulaError(f"{q.id!r}: its answers are not in the answer patterns a regression reads")
    built = design(patterns, formula)
    outcome = formula.outcome
    if built.weights.sum() == 0:
        raise FormulaError(f"no response answered {outcome.id!r} and every covariate")
    # a type whose reports the shared logit cannot read fits its own way (a two-group design: its group in the model)
    own = outcome.qtype.regression_fit(outcome, built, reference=reference_index(outcome, reference),
                                       confidence=confidence, profile=profile)
    if own is not None:
        return formula, built, own
    channel = {"epsilon": outcome.epsilon}
    if getattr(outcome, "design", None):  # a randomized-response design: its matrix in the likelihood
        from .questions.choice import design_of

        realized = design_of(outcome)
        privacy = f"ε = {realized.epsilon:.4f}" if realized.ldp else "not ε-LDP"
        channel = {"epsilon": None, "matrix": realized.matrix,
                   "matrix_label": f"{realized.name} design (its misclassification matrix in the likelihood) · {privacy}"}
    result = estimators.regress(
        built.reports, built.covariates, k=outcome.k, weights=built.weights, names=built.names,
        terms=built.terms, reference=reference_index(outcome, reference), outcome=outcome.id,
        options=outcome.options, confidence=confidence, profile=profile, **channel)
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


@dataclass(frozen=True, eq=False)
class Regression(SurveyResult):
    """A fitted formula over a survey (:func:`fit_formula`, or the weighted and raked fits of
    :mod:`.sampling`), rendering itself as ``deniable regress`` prints it; ``raked``, what raking did
    (:class:`~.raking.Raked`), for a fit under raked weights.  There is no CSV of a regression."""

    slug: str
    formula: Formula
    design: Design
    result: RegressionResult
    raked: Raked | None = None

    def to_dict(self) -> dict:
        """The JSON of ``deniable regress --format json``: ``models`` (what the coefficients are of) first;
        under raked weights, ``weighted`` and what raking did (``raking``) last."""
        data = self.result.to_dict()
        document = {"models": data.pop("models"), "survey": self.slug, "formula": self.formula.text,
                    "left_out": self.design.left_out, **data}
        if self.raked is not None:
            document.update(weighted=True, raking=self.raked.raking_dict())
        return document

    def table(self) -> str:
        """The terminal output: what raking did (under raked weights), the formula, who was left out, then
        the result's summary."""
        lines = [f"{self.formula.text}: {self.result.models}"]
        if self.design.left_out:
            lines.append(f"{self.design.left_out:,} responses left out (no answer to the outcome or to a covariate)")
        shown = {f.questions[0].id: f.questions[0] for term in self.formula.terms for f in term
                 if f.text.startswith("num(")}
        for q in (q for q in shown.values() if not all(_is_number(o) for o in q.options)):
            lines.append(f"num({q.id}) uses option positions: " +
                         ", ".join(f"{label} = {i}" for i, label in enumerate(q.options)))
        raking = "" if self.raked is None else self.raked.raking_text() + "\n"
        return raking + "\n".join(lines) + "\n" + self.result.summary()


def _is_number(label: str) -> bool:
    return number_or_none(label) is not None
