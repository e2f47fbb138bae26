"""The two-group non-compliance designs, as the respondent's device draws them: CDM, CDMsym, SLD, UQTunknown.

RRreg's names and p vectors (``P(yes | group g)`` parameters, :mod:`deniable.estimators.two_group`).
The device draws the respondent's **group** (group 1 iff one uniform 32-bit integer is below
:attr:`TwoGroupMechanism.group_threshold`) and then one **instruction** from the group's column of
integer weights (the first instruction whose cumulative weight exceeds a second uint32 draw), shows
the instruction, and sends only the group and the answer the respondent clicks (Yes or No).  The
instruction never leaves the device: the respondent combines it with the true answer, as in the
respondent-side crosswise design.

======================  ===================================  ========================================
model                   p (RRreg)                            instructions of group g
======================  ===================================  ========================================
CDM                     (p₁, p₂)                             "say Yes" (p_g), "answer truthfully"
CDMsym                  (yes₁, no₁, yes₂, no₂)               "say Yes" (yes_g), "say No" (no_g),
                                                             "answer truthfully"
SLD                     (p₁, p₂)                             "answer truthfully" (p_g), "say Yes"
UQTunknown              (p₁, p₂)                             the sensitive question (p_g), the
                                                             unrelated question
======================  ===================================  ========================================

Every probability is realized as integer weights out of 2^32 (:func:`deniable.client.designs.realize_column`,
as every other mechanism): the realized values, :attr:`TwoGroupMechanism.p`, are the ones the
estimates, ε and the codebook use.

**Privacy.**  Assuming compliance, a report ``(g, answer)`` has probability ``P(g) · P(answer | g, x)``:

* CDMsym: ``P(yes | g, x = 1) = 1 − no_g`` and ``P(yes | g, x = 0) = yes_g``; ``P(no | g, 1) = no_g`` and
  ``P(no | g, 0) = 1 − yes_g``; the group is independent of x.  So the report is ε-LDP with
  ``ε_g = max(ln((1 − no_g)/yes_g), ln((1 − yes_g)/no_g))`` in group g and ``ε = max(ε₁, ε₂)``;
  a zero yes_g or no_g is not ε-LDP.
* CDM and SLD: an honest carrier always answers Yes, so a No rules the attribute out: **not ε-LDP**.
* UQTunknown: the answer is the respondent's true answer to whichever question was drawn; the device
  randomizes only which one, so the deniability rests on the answer to the unrelated question,
  which the device does not randomize: **not ε-LDP**.

None of this holds for a respondent who ignores the instruction — which is what the designs estimate.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from deniable.errors import sent

from .designs import realize_column
from .mechanism import TWO_32, MechanismError
from .randomizer import _uint32_source

MODELS = ("CDM", "CDMsym", "SLD", "UQTunknown")
P_LENGTH = {"CDM": 2, "CDMsym": 4, "SLD": 2, "UQTunknown": 2}
# each model's instructions, in the order of a group's column of weights
INSTRUCTIONS = {"CDM": ("yes", "truthful"), "CDMsym": ("yes", "no", "truthful"), "SLD": ("truthful", "yes"),
                "UQTunknown": ("sensitive", "unrelated")}
ANSWERS = ("Yes", "No")  # answer index 0 is Yes, 1 is No
GROUPS = (1, 2)


def _fraction(value) -> Fraction:
    """A probability as an exact fraction of its decimal digits (0.3 is 3/10, not the float's binary value)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return Fraction(repr(value))
    if isinstance(value, Decimal):
        return Fraction(value)
    return Fraction(value)


def group_probabilities(model: str, p) -> list[list[Fraction]]:
    """Each group's instruction probabilities (in :data:`INSTRUCTIONS` order) from RRreg's ``p``."""
    p = [_fraction(v) for v in p]
    if model == "CDM":
        return [[p[g], 1 - p[g]] for g in range(2)]
    if model == "CDMsym":
        return [[p[2 * g], p[2 * g + 1], 1 - p[2 * g] - p[2 * g + 1]] for g in range(2)]
    if model == "SLD":
        return [[p[g], 1 - p[g]] for g in range(2)]
    return [[p[g], 1 - p[g]] for g in range(2)]


@dataclass(frozen=True)
class TwoGroupMechanism:
    """A two-group design as realized: the group's threshold and each group's integer instruction weights."""

    model: str
    group_threshold: int  # group 1 iff a uint32 draw is below it
    columns: tuple  # per group, the instructions' integer weights (summing to 2^32)

    proof = "deniable.client.two_group"  # the module notes, "Privacy"
    threshold = None  # not k-ary randomized response: the weights say everything
    design = None
    k = 2  # the true answers: yes, no

    @property
    def instructions(self) -> tuple[str, ...]:
        return INSTRUCTIONS[self.model]

    @property
    def group_share(self) -> float:
        """The realized share of group 1."""
        return self.group_threshold / TWO_32

    def share(self, group: int, instruction: str) -> float:
        """The realized probability of ``instruction`` in ``group`` (1 or 2)."""
        return self.columns[group - 1][self.instructions.index(instruction)] / TWO_32

    @property
    def p(self) -> tuple[float, ...]:
        """RRreg's p vector as realized."""
        first = {"CDM": "yes", "SLD": "truthful", "UQTunknown": "sensitive"}.get(self.model)
        if first is not None:
            return tuple(self.share(g, first) for g in GROUPS)
        return tuple(self.share(g, which) for g in GROUPS for which in ("yes", "no"))

    @property
    def group_epsilons(self) -> tuple[float, float] | None:
        """CDMsym's ε per group (infinite where a yes or no weight is zero); None for the other models."""
        if self.model != "CDMsym":
            return None
        out = []
        for g in GROUPS:
            yes, no = self.columns[g - 1][0], self.columns[g - 1][1]
            if yes == 0 or no == 0:
                out.append(math.inf)
            else:
                out.append(max(math.log((TWO_32 - no) / yes), math.log((TWO_32 - yes) / no)))
        return tuple(out)

    @property
    def epsilon(self) -> float:
        """The realized ε: the worse group's (CDMsym); infinite for a design that is not ε-LDP."""
        found = self.group_epsilons
        return math.inf if found is None else max(found)

    declared_epsilon = epsilon  # a design declares no other ε than its own

    @property
    def protected(self) -> bool:
        """Whether it is ε-LDP for a finite ε (CDMsym with every weight above zero)."""
        return math.isfinite(self.epsilon)

    ldp = protected

    def cumulative(self, group: int) -> list[int]:
        """Group ``group``'s cumulative weights (the browser samples exactly these)."""
        out, total = [], 0
        for w in self.columns[group - 1]:
            total += w
            out.append(total)
        return out

    def as_dict(self) -> dict:
        return {"mechanism": "two_group", "model": self.model, "p": list(self.p), "group_share": self.group_share,
                "group_threshold": self.group_threshold, "weights": [list(c) for c in self.columns],
                "instructions": list(self.instructions),
                "epsilon": self.epsilon if self.protected else None}


def two_group_mechanism(model: str, p, group_share=0.5) -> TwoGroupMechanism:
    """Realize a design: ``p`` RRreg's vector, ``group_share`` the share of group 1 (MechanismError if invalid).

    >>> m = two_group_mechanism("CDM", [0.3, 0.7])
    >>> m.group_threshold, m.columns[0][0]
    (2147483648, 1288490189)
    """
    if model not in MODELS:
        raise MechanismError(f"model must be one of {', '.join(MODELS)}, got {sent(model)}"[:120])
    if isinstance(p, (str, bytes)) or not hasattr(p, "__len__") or len(p) != P_LENGTH[model]:
        raise MechanismError(f"p must be {P_LENGTH[model]} probabilities for {model}")
    for v in (*p, group_share):
        if isinstance(v, bool) or not isinstance(v, (numbers.Real, Decimal)) or not 0 <= _fraction(v) <= 1:
            raise MechanismError(f"each probability must be a number from 0 to 1, got {sent(v)}"[:80])
    columns = []
    for probabilities in group_probabilities(model, p):
        if min(probabilities) < 0:
            raise MechanismError(f"a group's yes and no probabilities must sum to at most 1, got {sent(p)}"[:120])
        columns.append(tuple(realize_column(probabilities)))
    share = _fraction(group_share)
    group_threshold = realize_column([share, 1 - share])[0]
    if not 0 < group_threshold < TWO_32:
        raise MechanismError("both groups need respondents: the share of group 1 must be above 0 and below 1")
    return TwoGroupMechanism(model=model, group_threshold=group_threshold, columns=tuple(columns))


# ---------------------------------------------------------------- the sampler (the browser's twin)

def group_one(mech: TwoGroupMechanism, draws: Iterable[int]) -> int:
    """The group (1 or 2) from one uint32 draw: 1 iff it is below the group threshold."""
    return 1 if next(iter(draws)) < mech.group_threshold else 2


def instruction_one(mech: TwoGroupMechanism, group: int, draws: Iterable[int]) -> str:
    """The instruction of ``group`` from one uint32 draw: the first whose cumulative weight exceeds it."""
    u = next(iter(draws))
    for name, c in zip(mech.instructions, mech.cumulative(group)):
        if u < c:
            return name
    raise MechanismError("a group's weights must sum to 2^32")  # never: realize_column sums them so


def draw(mech: TwoGroupMechanism, size: int, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``size`` (group, instruction index) pairs: the group first, then the instruction, one uint32 each."""
    source = _uint32_source(rng)
    groups = np.where(source(size).astype(np.int64) < mech.group_threshold, 1, 2)
    u = source(size).astype(np.int64)
    instructions = np.empty(size, dtype=np.int64)
    for g in GROUPS:
        mine = groups == g
        instructions[mine] = np.searchsorted(np.asarray(mech.cumulative(g), dtype=np.int64), u[mine], side="right")
    return groups, instructions


def comply(mech: TwoGroupMechanism, instructions, truth, unrelated=None) -> np.ndarray:
    """The answer index (0 Yes, 1 No) of a respondent who follows each instruction: ``truth`` 1 for a
    carrier, 0 else; ``unrelated`` (UQTunknown) the true answer to the unrelated question (1 yes)."""
    names = np.asarray(mech.instructions)[np.asarray(instructions)]
    truth = np.asarray(truth, dtype=np.int64)
    yes = np.where(names == "yes", 1, np.where(names == "no", 0, truth))
    if mech.model == "UQTunknown":
        if unrelated is None:
            raise MechanismError("UQTunknown needs the true answers to the unrelated question")
        yes = np.where(names == "unrelated", np.asarray(unrelated, dtype=np.int64), truth)
    return (1 - yes).astype(np.int64)


def simulate_reports(mech: TwoGroupMechanism, truth, rng: np.random.Generator | None = None,
                     unrelated=None) -> np.ndarray:
    """Codes ``(group − 1) · 2 + answer`` of compliant respondents with the true answers ``truth`` (1 yes)."""
    truth = np.asarray(truth, dtype=np.int64)
    groups, instructions = draw(mech, truth.size, rng)
    return (groups - 1) * 2 + comply(mech, instructions, truth, unrelated)


def check_two_group_report(value) -> tuple[int, int]:
    """``(group, answer)`` from ``{"group": 1|2, "answer": 0 (Yes) | 1 (No)}``, or MechanismError saying why."""
    if not isinstance(value, dict) or set(value) != {"group", "answer"}:
        raise MechanismError('must be {"group": 1 or 2, "answer": 0 (Yes) or 1 (No)}')
    group, answer = value["group"], value["answer"]
    if isinstance(group, bool) or not isinstance(group, numbers.Integral) or group not in GROUPS:
        raise MechanismError(f"group must be 1 or 2, got {sent(group)}")
    if isinstance(answer, bool) or not isinstance(answer, numbers.Integral) or answer not in (0, 1):
        raise MechanismError(f"answer must be 0 (Yes) or 1 (No), got {sent(answer)}")
    return int(group), int(answer)


__all__ = ["ANSWERS", "GROUPS", "INSTRUCTIONS", "MODELS", "P_LENGTH", "TwoGroupMechanism", "check_two_group_report",
           "comply", "draw", "group_one", "group_probabilities", "instruction_one", "simulate_reports",
           "two_group_mechanism"]
