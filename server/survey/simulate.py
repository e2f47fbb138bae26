"""Simulated respondents: true answers drawn from a stated truth, randomized by the real randomizer.

``deniable simulate`` and the benchmarks use this; the reports come from
:func:`deniable.client.randomize`, exactly as real reports do (seeded here, for reproducibility).
A truth file (TRUTH.json) maps each question id to its true distribution:

- a choice question: the probability of each option, ``[0.2, 0.8]``;
- a numeric question: ``{"values": [0, 5, 10], "probabilities": [0.5, 0.3, 0.2]}`` (answers in
  [min, max] on the question's steps);
- a multi question: each option's probability of being ticked, independently, ``[0.3, 0.1]``, or
  ``{"subsets": [["A", "B"], []], "probabilities": [0.2, 0.8]}``;
- a list experiment: ``{"control": [P(0), …, P(J)], "sensitive": 0.2}`` (the number of control
  items that apply, and the share holding the sensitive one, independently).

Every problem with it raises :class:`TruthError` with one line ``FILE:LINE: problem``.

Without a truth file (:func:`default_truth`) every question's true answers are uniform: each option of a
single choice and each answer of a number equally likely, each option of a check-all question ticked with
probability 0.5, a list experiment's control count uniform and its sensitive item held by half, a
two-group question's prevalence 0.5 (and, with an unrelated question of unknown prevalence, its 0.5).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from deniable.errors import FieldError

from . import logic, strict_json
from .dataset import Dataset
from .definition import Question, Survey


class TruthError(FieldError):
    """A truth file cannot be used; the message is one line ``FILE:LINE: problem``."""


def _json_line(text: str, key: str) -> int:
    """The line where ``"key":`` first appears in ``text`` (1 if it does not)."""
    match = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def load_truth(path: str, survey: Survey) -> dict[str, np.ndarray]:
    """Read TRUTH.json (question id → true probability of each option); one-line errors."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TruthError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = strict_json.loads(text)
    except strict_json.DuplicateKeyError as exc:
        raise TruthError(f"{path}:{exc.lineno}: {exc.key[:64]!r} appears more than once in one object") from None
    except strict_json.JSONError as exc:  # with no line: e.g. an integer of more than 4300 digits
        raise TruthError(f"{path}:{exc.lineno or 1}: not valid JSON: {exc.reason[:100]}") from None
    if not isinstance(data, dict):
        raise TruthError(f"{path}:1: must be a JSON object mapping question ids to probabilities")
    ids = [q.id for q in survey.questions]
    for key in data:
        if key not in ids:
            raise TruthError(f"{path}:{_json_line(text, key)}: unknown question id {key!r} "
                                       f"(expected: {', '.join(ids)})")
    truth = {}
    for q in survey.questions:
        if q.id not in data:
            raise TruthError(f"{path}:1: question {q.id!r} is missing: give its true distribution")
        where = f"{path}:{_json_line(text, q.id)}: question {q.id!r}"
        truth[q.id] = q.qtype.truth(q, data[q.id], where)
    return truth


DEFAULT_TRUTH = ("no --truth: every question's true answers are uniform (each option of a single choice and each "
                 "answer of a number equally likely, each option of a check-all question ticked with probability "
                 "0.5, a list experiment's control count uniform and its sensitive item 0.5, a two-group question's "
                 "prevalence 0.5 and its unrelated question's 0.5)")


def _plain_number(value) -> int | float:
    """A Decimal answer as the JSON number a truth file would hold."""
    return int(value) if value == value.to_integral_value() else float(value)


def _uniform_candidates(q: Question):
    """The truth-file values :data:`DEFAULT_TRUTH` describes, in the order they are offered to the question's
    type (:func:`default_truth`): each type's own parser (``truth``) takes the one of its shape, and
    refuses the others (a check-all question takes one tick probability per option, so 0.5 each comes
    before a single choice's 1/k each, which is the same for two options)."""
    items = len(q.options) + 1
    yield {"control": [1 / items] * items, "sensitive": 0.5}  # a list experiment: 0..J control items
    yield {"sensitive": 0.5, "unrelated": 0.5}  # a two-group question with an unrelated question
    yield 0.5  # a two-group question's prevalence
    if q.options:
        yield [0.5] * len(q.options)  # a check-all question's ticks
        yield [1 / len(q.options)] * len(q.options)  # a single choice's options
    if q.minimum is not None and q.step is not None and q.maximum is not None:  # a number's answers
        answers = [_plain_number(q.value(j)) for j in range(q.steps + 1)]
        yield {"values": answers, "probabilities": [1 / len(answers)] * len(answers)}


def default_truth(survey: Survey) -> dict:
    """The truth without a truth file (:data:`DEFAULT_TRUTH`): per question, the first of
    :func:`_uniform_candidates` its type's parser accepts; a :class:`TruthError` for a question whose type
    takes none of them (give a truth file)."""
    truth = {}
    for q in survey.questions:
        for candidate in _uniform_candidates(q):
            try:
                truth[q.id] = q.qtype.truth(q, candidate, f"question {q.id!r}")
                break
            except TruthError:
                continue
        else:
            raise TruthError(f"no --truth: question {q.id!r} has no uniform default for its type: give --truth TRUTH.json")
    return truth


def probabilities(values, where: str, size: int | None, what: str) -> np.ndarray:
    if (not isinstance(values, list)
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)):
        raise TruthError(f"{where}: must be a list of {'' if size is None else f'{size} '}numbers ({what})")
    if size is not None and len(values) != size:
        raise TruthError(f"{where}: has {len(values)} probabilities, but needs {size} ({what})")
    probs = np.asarray(values, dtype=np.float64)
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise TruthError(f"{where}: probabilities must be finite and non-negative")
    return probs


def sums_to_one(values, where: str) -> None:
    if abs(math.fsum(values) - 1) > 1e-9:
        raise TruthError(f"{where}: probabilities sum to {math.fsum(values)!r}, not 1")


def simulate_dataset(survey: Survey, truth: dict, n: int, rng: np.random.Generator) -> Dataset:
    """Draw ``n`` true answers per question and randomize the protected ones with the real randomizers."""
    columns = {}
    for q in survey.questions:
        columns[q.id] = simulate_question(q, truth[q.id], n, rng)
    return Dataset(survey, logic.hide_not_asked(survey, columns))  # not asked: not answered


def simulate_question(q: Question, truth, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` reports (codes) of question ``q`` whose answers follow ``truth`` (its type's simulation)."""
    return q.qtype.simulate(q, truth, n, rng)
