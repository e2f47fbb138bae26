"""Randomized-response designs, each defined once by its misclassification matrix.

A design for a question with ``k`` true answers is the matrix ``M[r, t] = P(report r | truth t)``
(``k_r`` reports × ``k`` answers, columns summing to 1).  Every design here is **realized** on
32-bit integers, as k-ary randomized response is (:mod:`.mechanism`): column t is the integer
weights ``W[r, t]`` with ``Σ_r W[r, t] = 2^32``, and the sampler reports the first r whose
cumulative weight exceeds one uniform 32-bit draw ``u`` (:func:`sample`).  The realized matrix
is exactly ``W / 2^32``, and the browser and this module draw the same report from the same ``u``.

**ε from the matrix.**  A report r is ``M[r, t] / M[r, t']`` times likelier under answer t than
under t'; the design is ε-LDP for ``ε = max_r max_{t, t'} ln(M[r, t] / M[r, t'])``
(Warner 1965 for the binary case; Wang, Wu & Hu 2016, "Using randomized response for differential
privacy preserving data collection", Definition 3 and Theorem 1).  A report with probability 0
under one answer and positive under another gives that answer away: ε is infinite and the design
is **not ε-LDP** (:attr:`Design.ldp` False) — accepted, as the plain list experiment is, but never
with a finite ε.  The realized ε is computed from the integer weights, exactly.

**Decimals as typed.**  A parameter is the decimal a person wrote: a float is read as the decimal of its
shortest repr (``0.23`` is 23/100, not the binary double nearest it, 0.2300000000000000099…), so that
``forced(0.62, [0.23, 0.15])`` adds up to 1 exactly, as on paper; a float with more than 12 decimal
places (``2/3`` computed in Python) is the simplest fraction within 1e-12 of it (:func:`typed_fraction`).
Python's float repr is the shortest string that reads back to the same double (Steele & White 1990;
Python's ``float.__repr__``), and JSON numbers in a survey file and the builder's fields reach here as
such floats, so every surface reads the same fraction.

k-ary randomized response at ε, the project's default design, keeps its own sampler
(:mod:`.mechanism`, :mod:`.randomizer`); these are the others.

**Designs** (parameters as the survey literature writes them; Blair, Imai & Zhou 2015 and
Fox 2016 for forced response and the unrelated question; Kuk 1990; Yu, Tian & Tang 2008 for the
crosswise model):

``forced``    forced response: answer truthfully with probability ``p``, otherwise say option i
              with probability ``p_i`` (``p + Σ p_i = 1``); binary and k-ary.
``unrelated`` unrelated question with known prevalence: with probability ``p`` answer the
              sensitive question, otherwise answer "yes" with the unrelated question's known
              prevalence ``π_u`` (the browser draws that answer); binary.
``warner``    Warner's (mirrored) design: with probability ``p`` answer "am I in the group?",
              otherwise "am I not in the group?"; binary.
``kuk``       Kuk's two decks: a member of the group reports the colour of a card from a deck
              with red share ``θ₁``, a non-member from one with ``θ₂``; binary.
``crosswise`` the crosswise model: "are your answer to the sensitive question and to an
              innocuous one with known prevalence ``π_y`` the same?"; binary.  Randomized by the
              browser it is Warner's design with ``p = π_y`` (ε holds against anyone).
              **Respondent-side** (the respondent combines the answer with a private fact,
              such as a birth month, that not even the device sees: :func:`crosswise_respondent`,
              ``"side": "respondent"`` in a definition) its ε is stated as a range
              over the fact's plausible prevalence (:func:`crosswise_epsilon_range`) and only
              against an observer who does not know the fact; against one who does, the report
              is the answer itself (not ε-LDP).
``custom``    any matrix of probabilities; a singular one (two answers with the same report
              distribution, or more answers than independent reports) is refused: the answers
              could not be told apart by any estimator.

References
----------
.. [1] S. L. Warner, "Randomized response: a survey technique for eliminating evasive answer
   bias", JASA 60 (1965) 63–69.
.. [2] A. Y. C. Kuk, "Asking sensitive questions indirectly", Biometrika 77 (1990) 436–438.
.. [3] J.-W. Yu, G.-L. Tian, M.-L. Tang, "Two new models for survey sampling with sensitive
   characteristic", Metrika 67 (2008) 251–263.
.. [4] G. Blair, K. Imai, Y.-Y. Zhou, "Design and analysis of the randomized response technique",
   JASA 110 (2015) 1304–1319.
.. [5] Y. Wang, X. Wu, D. Hu, "Using randomized response for differential privacy preserving
   data collection", EDBT/ICDT Workshops 2016.
.. [6] J.-P. Fox, *Randomized Item Response Theory Models*, 2nd ed. (2016).
.. [7] G. L. Steele, J. L. White, "How to print floating-point numbers accurately", PLDI 1990
   (the shortest decimal that reads back to the same double).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from deniable.errors import sent

from .mechanism import TWO_32, MechanismError, check_k, delegated

DESIGNS = ("forced", "unrelated", "warner", "kuk", "crosswise", "custom")
MAX_REPORTS = 64


class DesignError(MechanismError):
    """A design's parameters are out of their domain; ``field`` names the parameter."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}", field)
        self.problem = problem


# A float is read as the decimal it was typed as when its shortest repr has at most this many decimal
# places (0.23 is 23/100), else as the simplest fraction within FLOAT_TOLERANCE of it (2/3 is 2/3).
TYPED_DECIMALS = 12
FLOAT_TOLERANCE = Fraction(1, 10**12)


def _simplest_between(low: Fraction, high: Fraction) -> Fraction:
    """The fraction with the smallest denominator in ``[low, high]`` (``0 ≤ low ≤ high``), by continued fractions.

    If an integer lies in the interval the smallest one is the answer; otherwise both ends share the
    integer part ``a`` and the answer is ``a + 1/s`` with ``s`` the simplest fraction in
    ``[1/(high − a), 1/(low − a)]`` (the Stern–Brocot descent; Khinchin, *Continued Fractions*, §6).
    """
    whole = math.ceil(low)
    if whole <= high:
        return Fraction(whole)
    a = math.floor(low)
    return a + 1 / _simplest_between(1 / (high - a), 1 / (low - a))


def typed_fraction(value: float) -> Fraction:
    """The fraction a person meant by the float ``value``: the decimal of its shortest repr when that has at
    most :data:`TYPED_DECIMALS` decimal places (``0.23`` is 23/100, not the binary double nearest it), else
    the simplest fraction within :data:`FLOAT_TOLERANCE` of it (``2/3`` typed in Python is 2/3)."""
    text = repr(float(value))
    if -Decimal(text).as_tuple().exponent <= TYPED_DECIMALS:
        return Fraction(text)
    exact = Fraction(value)
    # a positive value stays positive (a forced share of 1e-13 is not a zero cell as typed)
    return _simplest_between(exact - min(FLOAT_TOLERANCE, exact / 2), exact + FLOAT_TOLERANCE)


def _probability(value, field: str, *, open_low: bool = False, open_high: bool = False) -> Fraction:
    """A probability as an exact fraction: a float as the decimal typed (:func:`typed_fraction`), a Decimal,
    int or Fraction as it is."""
    if isinstance(value, Decimal) and value.is_finite():
        value = Fraction(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DesignError(field, f"must be a probability (a number in [0, 1]), got {sent(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise DesignError(field, f"must be a finite probability, got {sent(value)}")
    # a float's binary expansion is not what was typed: 0.62 + 0.23 + 0.15 add up to 1 only as decimals,
    # and 2/3 + 1/6 + 1/6 only as the fractions meant, so that shares meant to add up to 1 do
    frac = typed_fraction(value) if isinstance(value, float) else Fraction(value)
    if frac < 0 or frac > 1 or (open_low and frac == 0) or (open_high and frac == 1):
        ends = f"{'(' if open_low else '['}0, 1{')' if open_high else ']'}"
        raise DesignError(field, f"must be a probability in {ends}, got {sent(value)}")
    return frac


def _total(total: Fraction) -> str:
    """A sum that should be 1, in words that show how far it is (``1 + 1e-13``, never a bare ``1``)."""
    shown = f"{float(total):.6g}"
    if shown != "1" or total == 1:
        return shown
    return f"1 {'+' if total > 1 else '−'} {float(abs(total - 1)):.3g}"


def realize_column(probabilities: list[Fraction]) -> list[int]:
    """Integer weights summing to 2^32 for one column: each ``floor(P · 2^32)``, then one unit to each
    of the largest remainders (ties to the lower report), so every weight is within one unit of
    ``P · 2^32`` and a zero probability stays exactly zero."""
    scaled = [p * TWO_32 for p in probabilities]
    weights = [math.floor(s) for s in scaled]
    short = TWO_32 - sum(weights)
    order = sorted(range(len(scaled)), key=lambda r: (-(scaled[r] - weights[r]), r))
    for r in order[:short]:
        weights[r] += 1
    return weights


@dataclass(frozen=True)
class Design:
    """A realized design: its name, parameters, and integer weights ``W[r][t]`` (columns sum to 2^32)."""

    name: str
    params: tuple  # ((name, value), ...) as given, for the codebook and the page
    weights: tuple  # reports × answers, ints
    reports: tuple  # the label of each report (e.g. "Yes", "No", "same", "different", "red")
    # the respondent-side crosswise model: (ε at one end, ε at the other) of the private fact's plausible
    # prevalence, against an observer who does not know the fact (:func:`crosswise_respondent`); None otherwise
    epsilon_range: tuple | None = None

    @property
    def respondent_side(self) -> bool:
        """Whether the respondent, not the device, randomizes (the respondent-side crosswise model)."""
        return self.epsilon_range is not None

    @property
    def k(self) -> int:
        """Number of true answers (columns)."""
        return len(self.weights[0])

    @property
    def k_reports(self) -> int:
        return len(self.weights)

    @property
    def matrix(self) -> np.ndarray:
        """The realized misclassification matrix ``W / 2^32`` (reports × answers)."""
        return np.array(self.weights, dtype=float) / TWO_32

    @property
    def epsilon(self) -> float:
        """Realized ε: ``max_r ln(max_t W[r, t] / min_t W[r, t])``, infinite when not ε-LDP; for the
        respondent-side crosswise model the high end of its range (:attr:`epsilon_range`), which is
        what a survey's total counts."""
        if self.epsilon_range is not None:
            return self.epsilon_range[1]
        worst = 0.0
        for row in self.weights:
            high, low = max(row), min(row)
            if high == 0:
                continue  # a report no answer gives
            if low == 0:
                return math.inf
            worst = max(worst, math.log(high / low))
        return worst

    @property
    def ldp(self) -> bool:
        """Whether the design is ε-LDP for a finite ε (no report rules an answer out)."""
        return math.isfinite(self.epsilon)

    def cumulative(self) -> np.ndarray:
        """``C[t, r] = Σ_{s ≤ r} W[s, t]``: the sampler reports the first r with ``u < C[t, r]``."""
        return np.cumsum(np.array(self.weights, dtype=np.int64).T, axis=1)

    def as_dict(self) -> dict:
        out = {"design": self.name, **{name: _plain(value) for name, value in self.params},
               "reports": list(self.reports), "weights": [list(row) for row in self.weights],
               "epsilon": self.epsilon if self.ldp else None, "ldp": self.ldp}
        if self.respondent_side:
            out["epsilon_range"] = list(self.epsilon_range)
        return out

    @property
    def privacy(self) -> str:
        """The design's privacy in words, for researchers (results, codebook, planning panel, audit):
        ``ε = …`` or ``not ε-LDP``; for the respondent-side crosswise model the range of ε against an
        observer who does not know the fact, and not ε-LDP against one who knows it."""
        if self.respondent_side:
            low, high = (float(v) for v in dict(self.params)["prevalence_range"])
            return (f"ε between {self.epsilon_range[0]:.4f} and {self.epsilon_range[1]:.4f} against an observer "
                    f"who does not know the private fact (its prevalence between {low:g} and {high:g}); "
                    "not ε-LDP against one who knows it")
        return f"ε = {self.epsilon:.4f}" if self.ldp else "not ε-LDP"

    def plain_words(self, labels) -> tuple[str, dict]:
        """What the respondent's device does, for one sentence in plain words: ``(key, values)``, the key naming
        the sentence (the server's :func:`~deniable.server.survey.explain.design_coin` holds the sentences, to
        translate them) and its values — a share (a probability, shown as a percentage), an answer's label
        (a string) or, for forced response, the ``(label, share)`` of every answer it forces."""
        return PLAIN_WORDS.get(self.name, _matrix_words)(self, list(labels))


def _plain(value):
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _check_full_rank(weights: list[list[int]], field: str) -> None:
    """Refuse a matrix whose answers cannot be told apart (rank below the number of answers), exactly."""
    rows = [[Fraction(w) for w in row] for row in weights]
    k = len(rows[0])
    rank, col = 0, 0
    for col in range(k):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][col] != 0:
                factor = rows[r][col] / rows[rank][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[rank])]
        rank += 1
    if rank < k:
        raise DesignError(field, f"the matrix is singular (rank {rank} for {k} answers): some answers give the "
                                 "same distribution of reports, so no estimator can tell them apart")


def _frozen(value):
    """Lists as tuples, so that a design (and a question holding one) is hashable."""
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def _build(name: str, params: dict, columns: list[list[Fraction]], reports: list[str], field: str) -> Design:
    weights_by_column = [realize_column(col) for col in columns]
    weights = [list(row) for row in zip(*weights_by_column)]
    _check_full_rank(weights, field)
    return Design(name=name, params=tuple((key, _frozen(value)) for key, value in params.items()),
                  weights=tuple(tuple(r) for r in weights), reports=tuple(reports))


def _labels(labels, k: int) -> list[str]:
    if labels is None:
        return ["Yes", "No"] if k == 2 else [f"option {i + 1}" for i in range(k)]
    if len(labels) != k:
        raise DesignError("options", f"{k} labels needed, got {len(labels)}")
    return [str(label) for label in labels]


def forced(p, forced_shares, labels=None) -> Design:
    """Forced response: truth with probability ``p``, else option i with probability ``forced_shares[i]``.

    ``M[r, t] = p·[r = t] + p_r``; ε-LDP iff every ``p_r > 0``, then ``ε = max_r ln((p + p_r)/p_r)``.
    """
    if not isinstance(forced_shares, (list, tuple)) or len(forced_shares) < 2:
        raise DesignError("forced", f"must be a list of at least 2 probabilities (one per option), got {sent(forced_shares)}")
    k = check_k(len(forced_shares))
    truth = _probability(p, "p", open_low=True)
    shares = [_probability(v, f"forced[{i}]") for i, v in enumerate(forced_shares)]
    if truth + sum(shares) != 1:
        raise DesignError("forced", f"p + the forced shares must add up to 1, got {_total(truth + sum(shares))}")
    columns = [[truth * (r == t) + shares[r] for r in range(k)] for t in range(k)]
    return _build("forced", {"p": truth, "forced": shares}, columns, _labels(labels, k), "forced")


def unrelated(p, prevalence, labels=None) -> Design:
    """Unrelated question with known prevalence: ``P(yes | t) = p·t + (1 − p)·π_u`` (truth 0 = "Yes")."""
    truth = _probability(p, "p", open_low=True)
    pi_u = _probability(prevalence, "prevalence")
    yes = lambda t: truth * t + (1 - truth) * pi_u  # noqa: E731  t = 1 for a true "Yes"
    columns = [[yes(1), 1 - yes(1)], [yes(0), 1 - yes(0)]]
    return _build("unrelated", {"p": truth, "prevalence": pi_u}, columns, _labels(labels, 2), "p")


def warner(p, labels=None) -> Design:
    """Warner's (mirrored) design: the report equals the answer with probability ``p ≠ ½``."""
    keep = _probability(p, "p")
    if keep == Fraction(1, 2):
        raise DesignError("p", "must not be 1/2: the report would say nothing about the answer")
    columns = [[keep, 1 - keep], [1 - keep, keep]]
    return _build("warner", {"p": keep}, columns, _labels(labels, 2), "p")


def kuk(theta_1, theta_2, labels=None) -> Design:
    """Kuk's two decks: report "red" with probability θ₁ for a "Yes", θ₂ for a "No" (θ₁ ≠ θ₂)."""
    first, second = _probability(theta_1, "theta_1"), _probability(theta_2, "theta_2")
    if first == second:
        raise DesignError("theta_2", "must differ from theta_1: with equal decks the colour says nothing")
    columns = [[first, 1 - first], [second, 1 - second]]
    return _build("kuk", {"theta_1": first, "theta_2": second}, columns, ["red", "black"], "theta_2")


def crosswise(prevalence, labels=None) -> Design:
    """The crosswise model randomized by the browser: "same" with probability π_y for a "Yes", 1 − π_y
    for a "No" — Warner's design with ``p = π_y`` (π_y ≠ ½)."""
    pi_y = _probability(prevalence, "prevalence")
    if pi_y == Fraction(1, 2):
        raise DesignError("prevalence", "must not be 1/2: 'same' would say nothing about the answer")
    columns = [[pi_y, 1 - pi_y], [1 - pi_y, pi_y]]
    return _build("crosswise", {"prevalence": pi_y}, columns, ["same", "different"], "prevalence")


def crosswise_epsilon_range(low, high) -> tuple[float, float]:
    """ε of the respondent-side crosswise model against an observer who does not know the private
    fact, over its plausible prevalence ``[low, high]`` (e.g. a birth month): ``|ln(π/(1 − π))|`` at
    each π, so ``(min, max)`` over the range (0 when it contains ½).  Against an observer who knows
    the fact the report is the answer: not ε-LDP."""
    a, b = float(_probability(low, "low", open_low=True, open_high=True)), \
        float(_probability(high, "high", open_low=True, open_high=True))
    if a > b:
        raise DesignError("high", f"must be at least low ({a:g}), got {b:g}")
    values = [abs(math.log(x / (1 - x))) for x in (a, b)]
    return (0.0 if a <= 0.5 <= b else min(values)), max(values)


MAX_FACT = 300  # characters of the private fact's question


def crosswise_respondent(prevalence, fact, prevalence_range, labels=None) -> Design:
    """The crosswise model combined by the respondent: the page asks the sensitive question and a private
    fact (``fact``, such as "Is your mother's birthday in January, February or March?") and the respondent
    says only whether the two answers are the **same** or **different**; the device sends that choice as
    is, so not even the device sees the answer.

    With the fact's prevalence π, ``P(same | yes) = π`` and ``P(same | no) = 1 − π`` (Yu, Tian & Tang
    2008): the matrix of :func:`crosswise` at ``prevalence``, which the estimates use.  Against an
    observer who does not know the fact the report's likelihood ratio between the two answers is
    ``π/(1 − π)`` or its inverse, so ε is ``|ln(π/(1 − π))|``; the fact's prevalence is only known to lie
    in ``prevalence_range`` (birth months are not uniform), so ε is stated as the range of that over
    the interval (:attr:`Design.epsilon_range`, :func:`crosswise_epsilon_range`) and the design's
    :attr:`Design.epsilon` is its high end.  Against an observer who knows the fact the report is the
    answer: not ε-LDP.  The range must lie on one side of ½ (at ½ "same" says nothing and no estimate
    can be made) and contain ``prevalence``.
    """
    if not isinstance(fact, str) or not fact.strip():
        raise DesignError("fact", "must be the private fact's question in words, such as \"Is your mother's birthday "
                                  "in January, February or March?\"")
    if len(fact) > MAX_FACT or any(ord(c) < 32 for c in fact):
        raise DesignError("fact", f"must be one line of at most {MAX_FACT} characters")
    if (not isinstance(prevalence_range, (list, tuple)) or len(prevalence_range) != 2):
        raise DesignError("prevalence_range", "must be [low, high]: the lowest and highest plausible prevalence of "
                                              f"the private fact, such as [0.22, 0.28], got {sent(prevalence_range)}"[:200])
    low = _probability(prevalence_range[0], "prevalence_range[0]", open_low=True, open_high=True)
    high = _probability(prevalence_range[1], "prevalence_range[1]", open_low=True, open_high=True)
    if low > high:
        raise DesignError("prevalence_range[1]", f"must be at least the low end ({float(low):g}), got {float(high):g}")
    if low <= Fraction(1, 2) <= high:
        raise DesignError("prevalence_range", "must lie on one side of 1/2 (below or above): where the fact is as "
                                              "common as not, 'same' says nothing about the answer")
    pi = _probability(prevalence, "prevalence")
    if not low <= pi <= high:
        raise DesignError("prevalence", f"must lie in prevalence_range [{float(low):g}, {float(high):g}], "
                                        f"got {float(pi):g}")
    base = crosswise(pi, labels)
    return Design(name="crosswise", params=(("side", "respondent"), ("prevalence", pi), ("fact", fact.strip()),
                                            ("prevalence_range", (low, high))),
                  weights=base.weights, reports=base.reports, epsilon_range=crosswise_epsilon_range(low, high))


def custom(matrix, labels=None, reports=None) -> Design:
    """Any misclassification matrix ``matrix[r][t]`` (reports × answers, columns summing to 1)."""
    if not isinstance(matrix, (list, tuple)) or not matrix or not all(isinstance(row, (list, tuple)) for row in matrix):
        raise DesignError("matrix", "must be a list of rows (one per report) of probabilities (one per answer)")
    k = len(matrix[0])
    if k < 2 or any(len(row) != k for row in matrix):
        raise DesignError("matrix", "every row must have one probability per answer (at least 2)")
    if not 2 <= len(matrix) <= MAX_REPORTS:
        raise DesignError("matrix", f"must have between 2 and {MAX_REPORTS} reports (rows), got {len(matrix)}")
    cells = [[_probability(v, f"matrix[{r}][{t}]") for t, v in enumerate(row)] for r, row in enumerate(matrix)]
    for t in range(k):
        total = sum(cells[r][t] for r in range(len(cells)))
        if total != 1:
            raise DesignError("matrix", f"column {t} (answer {t + 1}) must add up to 1, got {_total(total)}")
    columns = [[cells[r][t] for r in range(len(cells))] for t in range(k)]
    shown = list(reports) if reports is not None else [f"report {r + 1}" for r in range(len(cells))]
    if len(shown) != len(cells):
        raise DesignError("reports", f"{len(cells)} labels needed, got {len(shown)}")
    return _build("custom", {"matrix": [[c for c in row] for row in cells]}, columns, shown, "matrix")


# ---------------------------------------------------------------- each design in plain words (Design.plain_words)


def _forced_words(design: Design, labels: list) -> tuple[str, dict]:
    params = dict(design.params)
    return "forced", {"kept": params["p"],
                      "forced": [(label, share) for label, share in zip(labels, params["forced"]) if share > 0]}


def _unrelated_words(design: Design, labels: list) -> tuple[str, dict]:
    params = dict(design.params)
    return "unrelated", {"kept": params["p"], "yes": labels[0], "no": labels[1], "share": params["prevalence"]}


def _mirrored_words(design: Design, labels: list) -> tuple[str, dict]:
    """Warner's design and the crosswise model: the true answer kept, else the other one."""
    return "mirrored", {"kept": design.matrix[0, 0]}


def _decks_words(design: Design, labels: list) -> tuple[str, dict]:
    m = design.matrix
    return "decks", {"first": labels[0], "second": labels[1], "share_yes": m[0, 0], "share_no": m[0, 1],
                     "yes": labels[0], "no": labels[1]}


def _matrix_words(design: Design, labels: list) -> tuple[str, dict]:
    """Any matrix: the least chance of sending one's own answer."""
    m = design.matrix
    return "matrix", {"kept": min(m[t, t] for t in range(design.k))}


PLAIN_WORDS = {"forced": _forced_words, "unrelated": _unrelated_words, "warner": _mirrored_words,
               "crosswise": _mirrored_words, "kuk": _decks_words, "custom": _matrix_words}


def sample(design: Design, truth, draws) -> np.ndarray:
    """Reports of true answers ``truth`` (0..k−1) from uniform 32-bit ``draws`` (one per answer).

    The report is the first r with ``u < C[t, r]`` (:meth:`Design.cumulative`), so each report has
    probability exactly ``W[r, t] / 2^32``.  The browser's sampler is the same comparison.
    """
    truth = np.asarray(truth, dtype=np.int64)
    if truth.size and (truth.min() < 0 or truth.max() >= design.k):
        raise MechanismError(f"answers must be 0..{design.k - 1}, got {int(truth[(truth < 0) | (truth >= design.k)].flat[0])}")
    u = np.asarray(draws, dtype=np.uint64).reshape(truth.shape)
    table = design.cumulative()  # answers × reports
    return (u[..., None] >= table[truth]).sum(axis=-1).astype(np.int64)


# ---------------------------------------------------------------- designs in a survey definition

# The parameters each design takes in a question's ``"design"`` object, beside ``"name"``.
PARAMETERS = {"forced": ("p", "forced"), "unrelated": ("p", "prevalence"), "warner": ("p",),
              "kuk": ("theta_1", "theta_2"), "crosswise": ("prevalence",), "custom": ("matrix",)}
# The keys a design's object may have beside its parameters, in the order the definition keeps them:
# the crosswise model's ``side`` ("device", the default, or "respondent") and the respondent side's own.
KEYS = {"crosswise": ("side", "prevalence", "fact", "prevalence_range")}
SIDES = ("device", "respondent")
RESPONDENT_KEYS = ("fact", "prevalence_range")
# Named variants of a design, as the builder offers them: the variant's fixed keys and the parameters it edits.
VARIANTS = {"respondent_crosswise": ({"name": "crosswise", "side": "respondent"}, ("prevalence", *RESPONDENT_KEYS))}
# The designs (by the name the builder offers them under) that a check-all question's ticks cannot use
# (:func:`tick_design` refuses them): the respondent-side crosswise model would need a private fact per tick.
NOT_ON_TICKS = frozenset({"respondent_crosswise"})


def variant_of(spec: dict) -> str:
    """The name a design object is offered under (:data:`VARIANTS`): ``respondent_crosswise`` or its name."""
    for variant, (fixed, _) in VARIANTS.items():
        if all(spec.get(key) == value for key, value in fixed.items()):
            return variant
    return spec["name"]


def keys_of(name: str) -> tuple:
    """Every key of a ``name`` design's object beside ``name``, in the definition's order."""
    return KEYS.get(name, PARAMETERS[name])
BINARY = ("unrelated", "warner", "kuk", "crosswise")  # designs of a yes/no question only


def from_definition(spec, labels) -> Design:
    """The design of a single-choice question with options ``labels`` from its definition's
    ``"design"`` object (``{"name": "forced", "p": 0.75, "forced": [0.1, 0.15]}``).

    In a survey every design has one report per option, the report of option i stored as option
    i's code: forced response and a custom matrix for any number of options (a custom matrix is
    square), the others for two.  Raises :class:`DesignError` whose ``field`` is the parameter
    (``"p"``, ``"forced[1]"``, ``"matrix[0][2]"``; ``"name"`` for the object itself).

    >>> from_definition({"name": "warner", "p": 0.75}, ["Yes", "No"]).weights
    ((3221225472, 1073741824), (1073741824, 3221225472))
    """
    if not isinstance(spec, dict):
        raise DesignError("name", "must be an object such as {\"name\": \"forced\", \"p\": 0.75, \"forced\": [0.125, 0.125]}")
    name = spec.get("name")
    if not isinstance(name, str) or name not in PARAMETERS:
        raise DesignError("name", f"must be one of {', '.join(PARAMETERS)}, got {sent(name)}"[:160])
    allowed = ("name", *keys_of(name))
    extra = sorted(set(spec) - set(allowed))
    if extra:
        raise DesignError(extra[0], f"is not a parameter of the {name} design (it takes {', '.join(PARAMETERS[name])})")
    for key in PARAMETERS[name]:
        if key not in spec:
            raise DesignError(key, f"is required by the {name} design")
    k = len(labels)
    if name in BINARY and k != 2:
        raise DesignError("name", f"the {name} design is for a question with two options; this one has {k}")
    params = {key: spec[key] for key in PARAMETERS[name]}
    if name == "forced":
        shares = params["forced"]
        if isinstance(shares, (list, tuple)) and len(shares) != k:
            raise DesignError("forced", f"needs one share per option ({k}), got {len(shares)}")
        return forced(params["p"], shares, labels)
    if name == "custom":
        matrix = params["matrix"]
        if isinstance(matrix, (list, tuple)) and len(matrix) != k:
            raise DesignError("matrix", f"needs one row per report, and a question's reports are its {k} options; "
                                        f"got {len(matrix)} rows")
        if isinstance(matrix, (list, tuple)) and any(isinstance(row, (list, tuple)) and len(row) != k for row in matrix):
            raise DesignError("matrix", f"every row needs one probability per option ({k})")
        return custom(matrix, labels, labels)
    if name == "kuk":
        return kuk(params["theta_1"], params["theta_2"], labels)
    if name == "crosswise":
        side = spec.get("side", "device")
        if side not in SIDES:
            raise DesignError("side", f"must be \"device\" (the device draws the innocuous answer) or \"respondent\" "
                                      f"(the respondent combines the answer with a private fact), got {sent(side)}"[:200])
        if side == "respondent":
            missing = [key for key in RESPONDENT_KEYS if key not in spec]
            if missing:
                raise DesignError("side", "the respondent-side crosswise design needs "
                                          + " and ".join(f'"{key}"' for key in missing)
                                          + ' (the private fact\'s question, and [low, high] of its plausible prevalence)')
            return crosswise_respondent(params["prevalence"], spec["fact"], spec["prevalence_range"], labels)
        given = [key for key in RESPONDENT_KEYS if key in spec]
        if given:
            raise DesignError(given[0], 'is a parameter of the respondent-side crosswise design only ("side": "respondent")')
        return crosswise(params["prevalence"], labels)
    if name == "warner":
        return warner(params["p"], labels)
    return unrelated(params["p"], params["prevalence"], labels)


@dataclass(frozen=True)
class DesignMechanism:
    """A question's randomization under a design, as the surfaces ask a mechanism: ``k``, ``epsilon``
    (the realized ε, infinite when not ε-LDP), ``protected`` (ε-LDP) and no k-ary threshold."""

    design: Design

    threshold = None  # not k-ary randomized response: the integer weights say everything
    proof = "deniable.client.designs"  # the module notes, "ε from the matrix"

    k = delegated("design", "k")
    protected = delegated("design", "ldp", "Whether the design is ε-LDP for a finite ε.")
    epsilon = delegated("design", "epsilon", "The design's realized ε (infinite when it is not ε-LDP).")
    declared_epsilon = delegated("design", "epsilon", "The design's realized ε: a design declares no other.")

    def as_dict(self) -> dict:
        return {"mechanism": "design", **self.design.as_dict()}


# ---------------------------------------------------------------- a design on each tick of a check-all question

# A tick's two true answers: a binary design's answer 0 ("Yes", the first option) is "ticked", answer 1
# "not ticked"; its report 0 is sent as a tick, report 1 as no tick.
TICK_ANSWERS = ("ticked", "not ticked")


def tick_design(spec) -> Design:
    """The binary design of every tick of a check-all question, from the question's ``"design"`` object
    (:func:`from_definition` with the two answers :data:`TICK_ANSWERS`); a design for more than two
    answers is refused (DesignError naming the parameter, as for a single choice with two options).

    >>> tick_design({"name": "warner", "p": 0.75}).reports
    ('ticked', 'not ticked')
    """
    if isinstance(spec, dict) and "name" in spec and variant_of(spec) in NOT_ON_TICKS:
        raise DesignError("side", "the respondent-side crosswise design is for a single-choice question: each tick "
                                  "would need its own private fact")
    return from_definition(spec, list(TICK_ANSWERS))


def sample_ticks(design: Design, masks, draws, k: int) -> np.ndarray:
    """Reported subsets (bit masks, option j = bit j) of true subsets ``masks`` under a binary ``design`` on
    each of the ``k`` ticks, from uniform 32-bit ``draws`` (shape ``masks × k``: one per option, in the
    options' order).  Option j's true answer is 0 when ticked, 1 when not; its report is
    :func:`sample` of that answer with its own draw, and report 0 is sent as a tick.  The browser's
    ``sampleTicks`` (designs.js) is the same loop."""
    masks = np.asarray(masks, dtype=np.int64).reshape(-1)
    if design.k != 2 or design.k_reports != 2:
        raise MechanismError(f"a tick's design must be binary (2 answers, 2 reports), got {design.k_reports} × {design.k}")
    if masks.size and (masks.min() < 0 or masks.max() >= 1 << k):
        raise MechanismError(f"masks must be subsets of {k} options (0..{(1 << k) - 1})")
    u = np.asarray(draws, dtype=np.uint64).reshape(masks.size, k)
    out = np.zeros(masks.size, dtype=np.int64)
    for j in range(k):
        answer = 1 - ((masks >> j) & 1)
        out |= (sample(design, answer, u[:, j]) == 0).astype(np.int64) << j
    return out


def randomize_ticks(masks, design: Design, k: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """Randomize true subsets (bit masks) under ``design`` on each tick (:func:`sample_ticks`): ``k`` uint32
    draws per subset from ``os.urandom``, or from a seeded generator (simulation only)."""
    from .randomizer import _uint32_source

    masks = np.asarray(masks, dtype=np.int64)
    draws = _uint32_source(rng)(masks.size * k).reshape(masks.size, k)
    return sample_ticks(design, masks, draws, k).reshape(masks.shape)


@dataclass(frozen=True)
class TickDesignMechanism:
    """A check-all question whose ``k`` ticks are each randomized by one binary ``design``, independently.

    **ε composes over the ticks** as for the check-all question's default mechanism
    (:mod:`deniable.client.multi`): for two subsets a, b and any report r,
    ``P(r | a)/P(r | b) = Π_j M[r_j, a_j]/M[r_j, b_j] ≤ e^{K ε_d}`` with ``ε_d`` the design's realized
    ε (the largest log-ratio of one report's probabilities under the two answers), reached when a and
    b are complements and every ``r_j`` is the report of that largest ratio.  So the question's ε is
    ``K · ε_d``, the sum over the ticks; a design with a zero cell makes every tick, and the
    question, not ε-LDP."""

    k: int
    design: Design

    threshold = None  # not randomized response at ε/K: the design's integer weights say everything
    per_tick = True  # the codebook's matrix is each tick's
    proof = "deniable.client.designs"  # TickDesignMechanism's notes: ε = K · ε_d over the ticks

    protected = delegated("design", "ldp", "Whether the design is ε-LDP for a finite ε.")
    tick_epsilon = delegated("design", "epsilon", "The realized ε of one tick (infinite when the design is not ε-LDP).")

    @property
    def epsilon(self) -> float:
        """The realized ε of the whole report: K times one tick's."""
        return self.k * self.design.epsilon

    @property
    def declared_epsilon(self) -> float:
        return self.epsilon

    def as_dict(self) -> dict:
        return {"mechanism": "design on each tick", "options": self.k, "epsilon": self.epsilon,
                "declared_epsilon": self.declared_epsilon, "tick": self.design.as_dict()}


__all__ = ["BINARY", "DESIGNS", "KEYS", "PARAMETERS", "SIDES", "TICK_ANSWERS", "VARIANTS", "Design", "DesignError",
           "DesignMechanism", "TickDesignMechanism", "crosswise", "crosswise_epsilon_range", "crosswise_respondent",
           "custom", "forced", "from_definition", "keys_of", "kuk", "randomize_ticks", "realize_column", "sample",
           "sample_ticks", "tick_design", "typed_fraction", "unrelated", "variant_of", "warner"]
