"""Check-all-that-apply questions: every option's tick randomized on its own (unary encoding).

A respondent ticks any subset of K options (possibly none); the true answer is a vector of K
bits.  Each bit goes through binary randomized response: kept iff a uniform 32-bit integer is
below ``threshold = floor(p · 2^32)``, else flipped — symmetric unary encoding (Wang, Blocki, Li
& Jha 2017), one uint32 draw per option, in the options' order.

**Privacy accounting.**  Two subsets can differ in every one of the K bits, and the bits are
randomized independently, so for any report r and subsets a, b

    P(r | a) / P(r | b) = Π over bits where a and b differ of (p/(1 − p))^(±1) ≤ (p/(1 − p))^K.

The question is therefore ε-LDP with ``ε = K · ε_bit``, ``ε_bit = ln(p/(1 − p))``, and the bound is
reached (a, b complements, r = a).  The budget is split evenly: each bit is binary randomized
response at ``ε/K`` (:func:`bit_epsilon`), with its threshold rounded down as for every other
question, so the realized total ``K · ln(threshold/(2^32 − threshold))`` is never above the
declared ε.  Optimized unary encoding (Wang et al.'s OUE) saves budget only when exactly one
option can be chosen (two bits change); with any subset allowed its per-bit cost is higher than
binary randomized response's, which is the optimal binary mechanism (Kairouz, Oh & Viswanath 2016).

A question asked directly is ``p = 1`` (:func:`direct_multi`).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from deniable.errors import sent

from .mechanism import Mechanism, MechanismError, check_epsilon, delegated, direct, mechanism
from .randomizer import _uint32_source

MAX_MULTI = 20  # options of a check-all-that-apply question (pairs: 190)


def bit_epsilon(epsilon: float, k: int) -> float:
    """The declared ε of each option's bit: ``ε / K`` (the one place this split is computed)."""
    return check_epsilon(epsilon) / k


@dataclass(frozen=True)
class MultiMechanism:
    """K independent binary randomized responses, each at ε/K; the whole report is ε-LDP."""

    k: int
    bit: Mechanism  # binary randomized response of each tick (k = 2)
    declared_epsilon: float

    proof = "deniable.client.multi"  # the module notes, "Privacy accounting": ε = K · ε_bit
    design = None

    protected = delegated("bit", "protected")
    threshold = delegated("bit", "threshold")
    p = delegated("bit", "p", "Probability that a bit is reported as it is.")
    q = delegated("bit", "q", "Probability that a bit is flipped.")

    @property
    def epsilon(self) -> float:
        """Realized ε of the whole report: K times the realized ε of one bit."""
        return self.k * self.bit.epsilon

    def as_dict(self) -> dict:
        return {"mechanism": "unary", "options": self.k, "threshold": self.threshold, "p": self.p, "q": self.q,
                "bit_epsilon": self.bit.epsilon, "epsilon": self.epsilon, "declared_epsilon": self.declared_epsilon}


def check_multi_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 2 <= k <= MAX_MULTI:
        raise MechanismError(f"a check-all-that-apply question needs between 2 and {MAX_MULTI} options, got {sent(k)}")
    return int(k)


def multi_mechanism(k, epsilon) -> MultiMechanism:
    """Return the realized mechanism of a check-all-that-apply question with ``k`` options at ε.

    >>> m = multi_mechanism(4, 2.0)
    >>> m.epsilon <= 2.0, m.bit.declared_epsilon
    (True, 0.5)
    """
    k = check_multi_k(k)
    epsilon = check_epsilon(epsilon)
    return MultiMechanism(k=k, bit=mechanism(2, bit_epsilon(epsilon, k)), declared_epsilon=epsilon)


def direct_multi(k) -> MultiMechanism:
    k = check_multi_k(k)
    return MultiMechanism(k=k, bit=direct(2), declared_epsilon=float("inf"))


def check_ticks(value, k: int) -> list[int]:
    """Return a report of K ticks as a list of 0/1 ints, or raise MechanismError saying why."""
    if not isinstance(value, (list, tuple)):
        raise MechanismError(f"must be a list of {k} ticks (0 or 1, one per option), got {sent(value)}")
    if len(value) != k:
        raise MechanismError(f"must be a list of {k} ticks (0 or 1, one per option), got {len(value)}")
    for bit in value:
        if isinstance(bit, bool) or not isinstance(bit, numbers.Integral) or bit not in (0, 1):
            raise MechanismError(f"every tick must be 0 or 1, got {sent(bit)}")
    return [int(b) for b in value]


def to_mask(ticks: Sequence[int]) -> int:
    """Ticks (option 0 first) as a bit mask: option j is bit j."""
    return sum(int(b) << j for j, b in enumerate(ticks))


def from_mask(mask: int, k: int) -> list[int]:
    return [(mask >> j) & 1 for j in range(k)]


def multi_one(ticks, mech: MultiMechanism, draws: Iterable[int]) -> list[int]:
    """Randomize one subset (K ticks) from explicit uint32 draws: one draw per option, in order."""
    ticks = check_ticks(list(ticks), mech.k)
    draws = iter(draws)
    return [b if next(draws) < mech.threshold else 1 - b for b in ticks]


def randomize_multi(masks, mech: MultiMechanism, rng: np.random.Generator | None = None) -> np.ndarray:
    """Randomize subsets given as bit masks (option j = bit j); returns the reported masks (int64)."""
    masks = np.asarray(masks, dtype=np.int64)
    if masks.size and (masks.min() < 0 or masks.max() >= 1 << mech.k):
        raise MechanismError(f"masks must be subsets of {mech.k} options (0..{(1 << mech.k) - 1})")
    if not mech.protected:
        return masks.copy()
    draw = _uint32_source(rng)
    flips = draw(masks.size * mech.k).reshape(masks.size, mech.k) >= mech.threshold
    flip_mask = (flips.astype(np.int64) << np.arange(mech.k, dtype=np.int64)).sum(axis=1)
    return (masks.reshape(-1) ^ flip_mask).reshape(masks.shape)
