"""Numeric questions: the discrete Laplace mechanism and grid randomized response, exactly.

A numeric question's answers are ``A, A + s, …, B``: the page and every sampler work with the
answer's **index** ``i = (x − A)/s`` in ``0..m`` (``m = (B − A)/s`` steps), so nothing here sees a
fraction.  Both mechanisms use uniform 32-bit integers and integer thresholds only
(docs/design.md, invariant 8); ``client/static/rr.js`` holds their browser twins.

**Discrete Laplace** (:class:`LaplaceMechanism`).  Report ``y = clamp(i + Z, −L, m + L)`` with
``P(Z = z) = (1 − t)/(1 + t) · t^|z|``.  Two answers differ by at most m steps, so for every y
``P(y | i) / P(y | i') ≤ t^(−m)``: the question is ε-LDP with ``ε = −m ln t``.  The ideal
``t = e^(−ε/m)`` is realized as ``t = threshold / 2^32`` with ``threshold = ceil(e^(−ε/m) · 2^32)``
(60-digit ``Decimal``): rounding *up* adds noise, so the realized ``ε = −m ln(threshold/2^32)``
is never above the declared one.  The sampler (sign and magnitude, zero handled once; cf.
Canonne, Kamath & Steinke 2020, Algorithm 2):

1. draw u; the sign is − iff ``u ≥ 2^31``;
2. the magnitude M counts draws below ``threshold`` before the first draw that is not
   (``P(M = k) = (1 − t) t^k`` exactly), stopping early at ``C = m + L + 1``;
3. a negative sign with M = 0 is rejected (start again at 1): zero is counted once, and
   ``P(Z = z) ∝ t^|z|`` for every integer z;
4. report ``clamp(i ± M, −L, m + L)``.

Clamping is post-processing (it keeps ε-LDP), and every ``M ≥ C`` clamps to the same report, so
stopping at C changes nothing but the number of draws.  The tail ``L`` is the least integer with
``t^L ≤ 2^−40``: the mean of a clamped report differs from ``i`` by less than ``L · 2^−40`` steps.
Never a floating-point Laplace: its output's low bits reveal the input (Mironov 2012).

**Grid randomized response** (:class:`GridMechanism`; Waudby-Smith, Wu & Ramdas 2023, with
``G = 1`` the mechanism of Duchi, Jordan & Wainwright 2013).  The G + 1 grid points are the
answers ``j · d`` (``d = m/G``; G divides m).  Stochastic rounding: ``j0 = i // d``, ``r = i mod d``;
if ``r > 0``, draw a uniform integer v in ``0..d−1`` (rejection below ``2^32 − 2^32 mod d``: no
modulo bias) and round up iff ``v < r``, so ``P(up) = r/d`` and ``E[j·d] = i`` exactly.  Then k-ary
randomized response (:mod:`.mechanism`, :mod:`.randomizer`) on the grid index with ``k = G + 1``.
Rounding happens before anything leaves the device, so the report is as private as the k-ary
randomized response alone: realized ε = ``ln(p/q)`` of that mechanism.

A numeric question asked directly is the grid with ``G = m`` and ``p = 1`` (:func:`direct_grid`).

References
----------
.. [1] C. L. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy",
   NeurIPS 2020.
.. [2] I. Mironov, "On significance of the least significant bits for differential privacy",
   CCS 2012.
.. [3] I. Waudby-Smith, Z. S. Wu, A. Ramdas, "Nonparametric extensions of randomized response
   for private confidence sets", ICML 2023.
.. [4] J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Local privacy and statistical minimax
   rates", FOCS 2013.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, localcontext

import numpy as np

from deniable.errors import sent

from .mechanism import TWO_32, Mechanism, MechanismError, ThroughRR, check_epsilon, direct, mechanism
from .randomizer import _uint32_source, randomize, randomize_one

MAX_STEPS = 1000  # answers per numeric question: m + 1 ≤ 1001
TAIL_BITS = 40  # t^L ≤ 2^-40
HALF = 2**31
SAMPLE_BLOCK = 1 << 16  # reports per round of the vectorized Laplace sampler


def check_steps(m) -> int:
    """Return the number of steps ``m`` as an int in ``1..MAX_STEPS``, or raise MechanismError."""
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or not 1 <= m <= MAX_STEPS:
        raise MechanismError(f"a numeric question needs between 2 and {MAX_STEPS + 1} possible answers, "
                             f"got {sent(m)} steps")
    return int(m)


def check_index(value, m: int, name: str = "value") -> int:
    """Return an answer index ``0..m`` as an int, or raise MechanismError (no bool, float or str)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise MechanismError(f"{name} must be an integer answer index 0..{m}, got {sent(value)}")
    if not 0 <= value <= m:
        raise MechanismError(f"{name} must be an answer index 0..{m}, got {value if abs(value) < 10**9 else '…'}")
    return int(value)


# ---------------------------------------------------------------- discrete Laplace


@functools.lru_cache(maxsize=4096)
def laplace_threshold(m: int, epsilon: float) -> int:
    """Return ``ceil(e^(−ε/m) · 2^32)`` computed with 60 significant digits (no float rounding), once
    per (m, ε)."""
    with localcontext() as ctx:
        ctx.prec = 60
        value = (Decimal(-epsilon) / m).exp() * TWO_32
        return int(value.to_integral_value(rounding=ROUND_CEILING))


@functools.lru_cache(maxsize=4096)
def laplace_tail(m: int, threshold: int) -> int:
    """The least L with ``(threshold/2^32)^L ≤ 2^−40``, computed with ``Decimal`` once per (m, threshold)
    (a 60-digit logarithm costs ~240 µs; the submission path asks for it on every Laplace report)."""
    with localcontext() as ctx:
        ctx.prec = 60
        log_t = (Decimal(threshold) / TWO_32).ln()
        return max(1, int((Decimal(-TAIL_BITS) * Decimal(2).ln() / log_t).to_integral_value(rounding=ROUND_CEILING)))


@dataclass(frozen=True)
class LaplaceMechanism:
    """The discrete Laplace mechanism on ``0..m`` with ``t = threshold / 2^32`` (realized)."""

    m: int
    threshold: int
    declared_epsilon: float

    proof = "deniable.client.numeric"  # the module notes, "Discrete Laplace": ε = −m ln t
    design = None
    protected = True  # ε-LDP whatever ε (a number asked directly has no mechanism at all)
    always_planned = True  # ``deniable plan`` shows its margin beside the grids' whatever its rank

    @staticmethod
    def plan_label(grid: int | None = None) -> str:
        """What ``deniable plan`` calls the mechanism (a planned candidate has no grid)."""
        return "Laplace"

    @property
    def k(self) -> int:
        """The true answers it takes: the steps ``0..m``."""
        return self.m + 1

    @property
    def t(self) -> float:
        return self.threshold / TWO_32

    @property
    def epsilon(self) -> float:
        """Realized ε = −m ln t (never above the declared ε)."""
        return -self.m * math.log(self.t)

    @property
    def tail(self) -> int:
        return laplace_tail(self.m, self.threshold)

    @property
    def low(self) -> int:
        """The least possible report, ``−L``."""
        return -self.tail

    @property
    def high(self) -> int:
        """The largest possible report, ``m + L``."""
        return self.m + self.tail

    @property
    def cap(self) -> int:
        """Magnitudes at or above this clamp to the same report: the sampler stops counting there."""
        return self.m + self.tail + 1

    @property
    def noise_variance(self) -> float:
        """``Var Z = 2t/(1 − t)²`` in steps² (clamping changes it by less than 2^−30)."""
        t = self.t
        return 2 * t / (1 - t) ** 2

    def pmf(self, z) -> np.ndarray:
        """``P(Z = z) = (1 − t)/(1 + t) · t^|z|`` (before clamping)."""
        t = self.t
        return (1 - t) / (1 + t) * np.power(t, np.abs(np.asarray(z, dtype=float)))

    def as_dict(self) -> dict:
        return {"mechanism": "laplace", "m": self.m, "threshold": self.threshold, "tail": self.tail,
                "t": self.t, "epsilon": self.epsilon, "declared_epsilon": self.declared_epsilon}


def laplace(m, epsilon) -> LaplaceMechanism:
    """Return the realized discrete Laplace mechanism for ``m`` steps at declared ε.

    >>> mech = laplace(40, 2.0)
    >>> mech.epsilon <= 2.0, mech.threshold < 2**32
    (True, True)
    """
    m = check_steps(m)
    epsilon = check_epsilon(epsilon)
    threshold = laplace_threshold(m, epsilon)
    if threshold >= TWO_32:
        raise MechanismError(f"epsilon {epsilon!r} is too small to realize with 32-bit thresholds for {m} steps")
    return LaplaceMechanism(m=m, threshold=threshold, declared_epsilon=epsilon)


def check_laplace_report(value, mech: LaplaceMechanism) -> int:
    """Return a discrete Laplace report as an int in ``−L..m + L``, or raise MechanismError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise MechanismError(f"must be an integer report {mech.low}..{mech.high}, got {sent(value)}")
    if not mech.low <= value <= mech.high:
        raise MechanismError(f"must be a report {mech.low}..{mech.high} (steps from the minimum), "
                             f"got {value if abs(value) < 10**9 else 'a number out of range'}")
    return int(value)


def laplace_one(value: int, mech: LaplaceMechanism, draws: Iterable[int]) -> int:
    """Randomize one answer index from an explicit iterator of uint32 draws (test vectors)."""
    value = check_index(value, mech.m)
    draws = iter(draws)
    while True:
        negative = next(draws) >= HALF
        magnitude = 0
        while magnitude < mech.cap and next(draws) < mech.threshold:
            magnitude += 1
        if negative and magnitude == 0:
            continue  # zero is counted once (with the + sign)
        y = value - magnitude if negative else value + magnitude
        return min(max(y, mech.low), mech.high)


def _capped_geometric(size: int, threshold: int, cap: int, draw) -> np.ndarray:
    """``size`` magnitudes: draws below ``threshold`` before the first that is not, at most ``cap``.

    Vectorized in blocks of draws per report; exact in distribution (each trial is one uint32
    compared with the threshold), though the draws are consumed in another order than
    :func:`laplace_one`'s.
    """
    t = threshold / TWO_32
    block = int(min(256, max(8, math.ceil(1 / (1 - t)))))
    out = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        trials = draw(active.size * block).reshape(active.size, block) < threshold
        failed = ~trials
        has_failure = failed.any(axis=1)
        first = np.argmax(failed, axis=1)
        out[active] += np.where(has_failure, first, block)
        keep = ~has_failure & (out[active] < cap)
        active = active[keep]
    return np.minimum(out, cap)


def randomize_laplace(values, mech: LaplaceMechanism, rng: np.random.Generator | None = None) -> np.ndarray:
    """Randomize answer indices ``values`` (0..m) with the discrete Laplace mechanism.

    Draws from ``os.urandom`` unless a seeded ``rng`` is given (simulation); exact in distribution.
    Returns int64 reports in ``−L..m + L``.
    """
    values = np.asarray(values)
    if values.size and (values.dtype.kind not in "iu" or values.min() < 0 or values.max() > mech.m):
        raise MechanismError(f"values must be answer indices 0..{mech.m}")
    draw = _uint32_source(rng)
    flat = values.reshape(-1).astype(np.int64)
    out = np.empty(flat.size, dtype=np.int64)
    for start in range(0, flat.size, SAMPLE_BLOCK):
        pending = np.arange(start, min(start + SAMPLE_BLOCK, flat.size))
        while pending.size:
            negative = draw(pending.size) >= HALF
            magnitude = _capped_geometric(pending.size, mech.threshold, mech.cap, draw)
            redo = negative & (magnitude == 0)
            done = ~redo
            signed = np.where(negative, -magnitude, magnitude)[done]
            out[pending[done]] = np.clip(flat[pending[done]] + signed, mech.low, mech.high)
            pending = pending[redo]
    return out.reshape(values.shape)


# ---------------------------------------------------------------- grid randomized response


@dataclass(frozen=True)
class GridMechanism(ThroughRR):
    """Stochastic rounding of ``0..m`` to ``G + 1`` grid points, then k-ary randomized response."""

    m: int
    grid: int
    rr: Mechanism  # k = grid + 1

    proof = "deniable.client.numeric"  # the module notes, "Grid randomized response": ε of rr (rounding is free)
    always_planned = False  # ``deniable plan`` shows the best few grids only

    @staticmethod
    def plan_label(grid: int | None = None) -> str:
        """What ``deniable plan`` calls the mechanism with G = ``grid``."""
        return f"grid G={grid}"

    @property
    def spacing(self) -> int:
        """Steps between grid points, ``d = m/G``."""
        return self.m // self.grid

    @property
    def k(self) -> int:
        return self.grid + 1

    def as_dict(self) -> dict:
        return {"mechanism": "grid" if self.protected else "direct", "m": self.m, "grid": self.grid,
                **self.rr.as_dict()}


MECHANISM_KINDS = {"grid": GridMechanism, "laplace": LaplaceMechanism}  # by the name definitions and plans give


def check_grid(m: int, grid) -> int:
    """Return G as an int dividing m, or raise MechanismError."""
    if isinstance(grid, bool) or not isinstance(grid, numbers.Integral) or not 1 <= grid <= m or m % grid:
        divisors = [g for g in range(1, m + 1) if m % g == 0]
        shown = ", ".join(map(str, divisors[:12])) + (", …" if len(divisors) > 12 else "")
        raise MechanismError(f"grid must divide the {m} steps between min and max (one of {shown}), got {sent(grid)}")
    return int(grid)


def grid_mechanism(m, grid, epsilon) -> GridMechanism:
    """Return grid randomized response with G = ``grid`` on ``0..m`` at declared ε.

    >>> g = grid_mechanism(40, 1, 1.0)
    >>> g.k, g.spacing, round(g.rr.p, 4)
    (2, 40, 0.7311)
    """
    m = check_steps(m)
    grid = check_grid(m, grid)
    return GridMechanism(m=m, grid=grid, rr=mechanism(grid + 1, epsilon))


def direct_grid(m) -> GridMechanism:
    """A numeric question asked directly: every answer is its own grid point and is sent as given."""
    m = check_steps(m)
    return GridMechanism(m=m, grid=m, rr=direct(m + 1))


def uniform_limit(d: int) -> int:
    """Accept a uint32 draw below this to pick uniformly among d values by ``u mod d``."""
    return TWO_32 - TWO_32 % d


def round_one(value: int, mech: GridMechanism, draws) -> int:
    """Stochastically round one answer index to a grid index, consuming draws as rr.js does."""
    d = mech.spacing
    j, r = divmod(value, d)
    if r == 0:
        return j
    limit = uniform_limit(d)
    u = next(draws)
    while u >= limit:
        u = next(draws)
    return j + int(u % d < r)


def grid_one(value: int, mech: GridMechanism, draws: Iterable[int]) -> int:
    """Randomize one answer index from an explicit iterator of uint32 draws (test vectors)."""
    value = check_index(value, mech.m)
    draws = iter(draws)
    j = round_one(value, mech, draws)
    if not mech.protected:
        return j
    return randomize_one(j, mech.rr, draws)


def stochastic_round(values, mech: GridMechanism, rng: np.random.Generator | None = None) -> np.ndarray:
    """Vectorized unbiased rounding of answer indices to grid indices (exact: rejection sampling)."""
    values = np.asarray(values, dtype=np.int64)
    d = mech.spacing
    j, r = np.divmod(values, d)
    moving = np.flatnonzero(r.reshape(-1) > 0)
    if moving.size:
        draw = _uint32_source(rng)
        limit = uniform_limit(d)
        u = np.array(draw(moving.size), dtype=np.int64)
        pending = np.flatnonzero(u >= limit)
        while pending.size:
            again = np.array(draw(pending.size), dtype=np.int64)
            ok = again < limit
            u[pending[ok]] = again[ok]
            pending = pending[~ok]
        flat = j.reshape(-1)
        flat[moving] += (u % d) < r.reshape(-1)[moving]
    return j


def randomize_grid(values, mech: GridMechanism, rng: np.random.Generator | None = None) -> np.ndarray:
    """Randomize answer indices ``values`` (0..m) with grid randomized response; grid indices out."""
    values = np.asarray(values)
    if values.size and (values.dtype.kind not in "iu" or values.min() < 0 or values.max() > mech.m):
        raise MechanismError(f"values must be answer indices 0..{mech.m}")
    j = stochastic_round(values, mech, rng)
    if not mech.protected:
        return j
    return randomize(j, mech.k, mech.declared_epsilon, rng=rng)
