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
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from decimal import Decimal, InvalidOperation

from deniable.client import randomize
from deniable.client.listexp import assign_arms, randomize_counts
from deniable.client.multi import randomize_multi
from deniable.client.numeric import randomize_grid, randomize_laplace

from . import cells
from .dataset import Dataset
from .definition import Question, Survey


class TruthError(ValueError):
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
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TruthError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
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
        truth[q.id] = _truth_of(q, data[q.id], where)
    return truth


def _probabilities(values, where: str, size: int | None, what: str) -> np.ndarray:
    if (not isinstance(values, list)
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)):
        raise TruthError(f"{where}: must be a list of {'' if size is None else f'{size} '}numbers ({what})")
    if size is not None and len(values) != size:
        raise TruthError(f"{where}: has {len(values)} probabilities, but needs {size} ({what})")
    probs = np.asarray(values, dtype=np.float64)
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise TruthError(f"{where}: probabilities must be finite and non-negative")
    return probs


def _sums_to_one(values, where: str) -> None:
    if abs(math.fsum(values) - 1) > 1e-9:
        raise TruthError(f"{where}: probabilities sum to {math.fsum(values)!r}, not 1")


def _truth_of(q: Question, value, where: str):
    what = cells.kind(q)
    if what == "choice":
        if (not isinstance(value, list)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            raise TruthError(f"{where}: must be a list of {q.k} numbers (one per option)")
        if len(value) != q.k:
            raise TruthError(f"{where}: has {len(value)} probabilities, "
                             f"but the question has {q.k} options ({', '.join(q.options)})")
        probs = _probabilities(value, where, q.k, "one per option")
        _sums_to_one(value, where)
        return probs
    if what in ("grid", "laplace"):
        if not isinstance(value, dict) or set(value) != {"values", "probabilities"}:
            raise TruthError(f'{where}: must be {{"values": [...], "probabilities": [...]}}')
        answers = value["values"]
        if not isinstance(answers, list) or not answers:
            raise TruthError(f"{where}: values must be a non-empty list of answers")
        probs = _probabilities(value["probabilities"], where, len(answers), "one per value")
        _sums_to_one(value["probabilities"], where)
        indices = []
        for answer in answers:
            index = _answer_index(q, answer)
            if index is None:
                raise TruthError(f"{where}: value {answer!r} is not an answer of the question "
                                 f"({cells.decimal_text(q.minimum)} to {cells.decimal_text(q.maximum)} "
                                 f"in steps of {cells.decimal_text(q.step)})")
            indices.append(index)
        return {"indices": np.asarray(indices, dtype=np.int64), "probabilities": probs}
    if what == "multi":
        if isinstance(value, dict):
            if set(value) != {"subsets", "probabilities"} or not isinstance(value["subsets"], list):
                raise TruthError(f'{where}: must be a list of {q.k} tick probabilities or '
                                 f'{{"subsets": [[...], ...], "probabilities": [...]}}')
            probs = _probabilities(value["probabilities"], where, len(value["subsets"]), "one per subset")
            _sums_to_one(value["probabilities"], where)
            masks = []
            for subset in value["subsets"]:
                if not isinstance(subset, list) or any(o not in q.options for o in subset):
                    raise TruthError(f"{where}: every subset must be a list of option labels ({', '.join(q.options)})")
                masks.append(sum(1 << q.options.index(o) for o in set(subset)))
            return {"masks": np.asarray(masks, dtype=np.int64), "probabilities": probs}
        probs = _probabilities(value, where, q.k, f"the probability of ticking each of: {', '.join(q.options)}")
        if (probs > 1).any():
            raise TruthError(f"{where}: a tick probability must be at most 1")
        return {"ticks": probs}
    if not isinstance(value, dict) or set(value) != {"control", "sensitive"}:
        raise TruthError(f'{where}: must be {{"control": [P(0), ..., P({len(q.options)})], "sensitive": share}}')
    control = _probabilities(value["control"], where, len(q.options) + 1,
                             f"the probability that 0..{len(q.options)} control items apply")
    _sums_to_one(value["control"], where)
    share = value["sensitive"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
        raise TruthError(f"{where}: sensitive must be a share between 0 and 1")
    return {"control": control, "sensitive": float(share)}


def _answer_index(q: Question, answer) -> int | None:
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return None
    try:
        steps = (Decimal(repr(answer)) - q.minimum) / q.step
    except InvalidOperation:
        return None
    if steps != steps.to_integral_value() or not 0 <= steps <= q.steps:
        return None
    return int(steps)


def simulate_dataset(survey: Survey, truth: dict, n: int, rng: np.random.Generator) -> Dataset:
    """Draw ``n`` true answers per question and randomize the protected ones with the real randomizers."""
    columns = {}
    for q in survey.questions:
        columns[q.id] = simulate_question(q, truth[q.id], n, rng)
    return Dataset(survey, columns)


def simulate_question(q: Question, truth, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` reports (codes, :mod:`.cells`) of question ``q`` whose answers follow ``truth``."""
    what = cells.kind(q)
    if what == "choice":
        true = rng.choice(q.k, size=n, p=truth / truth.sum())
        reported = randomize(true, q.k, q.epsilon, rng=rng) if q.protected else true
        return reported.astype(np.int16)
    if what in ("grid", "laplace"):
        true = truth["indices"][rng.choice(truth["indices"].size, size=n, p=truth["probabilities"] / truth["probabilities"].sum())]
        mech = q.mechanism
        if what == "laplace":
            return randomize_laplace(true, mech, rng) - mech.low
        return randomize_grid(true, mech, rng)
    if what == "multi":
        if "ticks" in truth:
            bits = rng.random((n, q.k)) < truth["ticks"]
            masks = (bits.astype(np.int64) << np.arange(q.k, dtype=np.int64)).sum(axis=1)
        else:
            p = truth["probabilities"] / truth["probabilities"].sum()
            masks = truth["masks"][rng.choice(truth["masks"].size, size=n, p=p)]
        return randomize_multi(masks, q.mechanism, rng)
    mech = q.mechanism
    arms = assign_arms(n, rng)
    control = rng.choice(len(q.options) + 1, size=n, p=truth["control"] / truth["control"].sum())
    true = control + arms * (rng.random(n) < truth["sensitive"])
    return arms * q.k + randomize_counts(true, mech, rng)
