"""Exact integer samplers for central differential privacy: the geometric (discrete Laplace)
mechanism and the exponential mechanism, from uniform 32-bit integers and integer thresholds.

One primitive, as in the randomizer (docs/design.md, invariant 8): a trial *succeeds* iff a
uniform 32-bit integer ``u < threshold``, so its probability is exactly ``β' = threshold / 2^32``.

* **Threshold.**  A mechanism at ε with sensitivity Δ needs ``β = exp(−ε/Δ)`` (geometric) or
  ``β = exp(−ε/(2Δ))`` (exponential mechanism).  :func:`base_threshold` returns
  ``ceil(β · 2^32)`` computed with 60-digit ``Decimal`` arithmetic: rounding *up* makes
  ``β' ≥ β``, more noise, so the realized ``ε' = −Δ ln β'`` (resp. ``−2Δ ln β'``) is never above
  the declared ε.  (The randomizer rounds its keep threshold *down* for the same reason.)
* **Geometric.**  ``G`` = the number of successes before the first failure:
  ``P(G = g) = (1 − β') β'^g`` exactly, for g = 0, 1, ….  Counting trials one by one costs
  ``1/(1 − β')`` draws, about ``2Δ/ε`` — two billion at ε = 10⁻⁹ — so :func:`geometric` counts
  them that way only when ``β' ≤ 1/2`` (at most 2 expected draws).  Otherwise it splits ``G``
  into blocks of ``L = ⌊1/γ⌋`` trials, ``γ = ln(2^32/threshold)`` (so ``β' = e^(−γ)`` and
  ``1 − γ < Lγ ≤ 1``), as Canonne, Kamath & Steinke [3]_ (Algorithm 2) do for the discrete
  Laplace: ``G = L·V + U`` with, independently,

  - ``V`` the number of blocks that hold no failure: geometric of base ``β'^L``,
    ``P(V = v) = (1 − β'^L) β'^(Lv)``, counted with coins of probability ``β'^L ≤ e^(−(1−γ))``;
  - ``U`` the successes in the block that holds the first failure: ``P(U = u) ∝ β'^u`` for
    u = 0 … L−1, by rejection: propose ``u`` uniformly, accept with probability ``β'^u ≥ e^(−1)``.

  The product ``(1 − β'^L) β'^(Lv) · (1 − β') β'^u / (1 − β'^L) = (1 − β') β'^(Lv + u)`` is
  the geometric law exactly, whatever ``L`` is (``L`` only sets the cost): every ``g ≥ 0`` is
  ``Lv + u`` in one way.  Expected draws per ``G``: at most ``e · (2 + 1)`` for ``U`` (at most
  e proposals of at most 2 draws for the uniform index and 1 for the coin) and
  ``1/(1 − e^(−(1 − ln 2)))  < 3.8`` coins for ``V`` (``γ < ln 2``), whatever ε is: fewer than 13,
  against two billion.
* **Exact coins of probability β'^m.**  :func:`power_coin` compares a uniform ``X ∈ [0, 1)``,
  read 32 bits at a time, with ``(threshold/2^32)^m``.  It brackets that power between two
  integers at ``B`` bits: the powers ``β'^(2^i)`` are squared with 64 guard bits more than
  there are squarings and rounded down and up to ``B`` (each within a unit), and their product over the bits of ``m`` is
  rounded down for the lower end and up for the upper end (values at most 1: the errors add,
  < 2 units per factor on each side), so the true power lies between ends at most
  ``4·popcount(m) ≤ 132`` units apart.  The first word decides unless it falls in the bracket
  (probability below ``133 · 2^−32``); then the next words are read, ``B`` growing 32 bits a
  word, each deciding but with probability about ``2^−32``.  No float and no logarithm decides
  a coin: it is exactly Bernoulli(β'^m), the Bernoulli(exp(−γm)) of [3]_ for this γ, and with
  ``m = 1`` the one-draw coin ``u < threshold``.
* **A bound on draws.**  :func:`geometric_mechanism` and :func:`exponential_choice` count the
  uint32 values they draw and raise :class:`DrawLimitError` beyond :func:`draw_limit` (a
  hundred times the expected count, plus 10⁴): no correct source ever reaches it, a broken one
  (always 0, say: every coin succeeds) stops there instead of looping.
* **Discrete Laplace.**  ``Y = G₁ − G₂`` for independent geometrics:
  ``P(Y = y) = Σ_g (1 − β')² β'^g β'^(g + |y|) = (1 − β')/(1 + β') · β'^|y|``, the two-sided
  geometric distribution of Ghosh, Roughgarden & Sundararajan (2012).  Added to a query of L1
  sensitivity Δ it is ε'-DP: shifting by at most Δ in total changes each probability by a factor
  of at most ``β'^(−Δ) = e^(ε')``.
* **Exponential mechanism.**  Choose option i with probability ``∝ β'^(s_max − s_i)``
  (``= exp(ε' s_i/(2Δ))`` up to a constant, McSherry & Talwar 2007) by rejection: propose i
  uniformly (rejection sampling on uint32: no modulo bias), accept with an exact coin of
  probability ``β'^(s_max − s_i)`` (:func:`power_coin`), else propose again.  The best option is
  always accepted, so a proposal is accepted with probability at least 1/k.

Canonne, Kamath & Steinke (2020) sample Bernoulli(exp(−a/b)) exactly for a rational a/b; here
the base is rounded once to the 32-bit threshold instead (the comparison the randomizer uses,
erring on the private side), and their coins become exact coins of that rational base's powers.
The realized ε is therefore ``−Δ ln(threshold/2^32)`` exactly, as before, and the release
document states it with the threshold.  Draws come from the OS CSPRNG (``os.urandom``)
unless a ``draw(size) -> uint32 array`` is given (seeded generators and fixed sequences are for
simulation and tests).

References
----------
.. [1] A. Ghosh, T. Roughgarden, M. Sundararajan, "Universally utility-maximizing privacy
   mechanisms", SIAM J. Comput. 41 (2012) 1673–1693.
.. [2] F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS 2007.
.. [3] C. L. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy",
   NeurIPS 2020.
.. [4] C. Dwork, A. Roth, *The algorithmic foundations of differential privacy*, Found. Trends
   Theor. Comput. Sci. 9 (2014), sections 3.3–3.4.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable
from decimal import Decimal, localcontext

import numpy as np

from deniable.errors import sent

from .mechanism import TWO_32, MechanismError, check_epsilon
from .randomizer import _uint32_source  # the one place that reads the OS CSPRNG

Draw = Callable[[int], np.ndarray]


def check_sensitivity(sensitivity) -> int:
    """Return Δ as a positive int, or raise MechanismError."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 1:
        raise MechanismError(f"sensitivity must be a positive integer, got {sent(sensitivity)}")
    return int(sensitivity)


def base_threshold(epsilon, scale) -> int:
    """Return ``ceil(exp(−ε/scale) · 2^32)``: the trial threshold of base ``β' ≥ exp(−ε/scale)``.

    ``scale`` is Δ for the geometric mechanism and 2Δ for the exponential mechanism.

    >>> t = base_threshold(1.0, 2)  # β = e^(−1/2) = 0.60653…, rounded up
    >>> t, t / 2**32 >= math.exp(-0.5), (t - 1) / 2**32 < math.exp(-0.5)
    (2605029348, True, True)
    """
    epsilon = check_epsilon(epsilon)
    with localcontext() as ctx:
        ctx.prec = 60
        value = (Decimal(-epsilon) / Decimal(scale)).exp() * TWO_32
        threshold = int(value.to_integral_value(rounding="ROUND_CEILING"))
    if threshold >= TWO_32:
        raise MechanismError(f"epsilon {epsilon!r} is too small for a 32-bit threshold at scale {scale}")
    return threshold


def realized_epsilon(threshold: int, scale) -> float:
    """The ε a threshold really gives: ``−scale · ln(threshold / 2^32)`` (never above the declared ε)."""
    return -scale * math.log(threshold / TWO_32)


def source(rng: np.random.Generator | None = None) -> Draw:
    """``draw(size) -> uint32 array``: the OS CSPRNG, or a seeded generator for simulation."""
    return _uint32_source(rng)


def sequence(values: Iterable[int]) -> Draw:
    """A draw function that hands out the given uint32 values in order (test vectors)."""
    it = iter(values)

    def draw(size: int) -> np.ndarray:
        out = np.array([next(it) for _ in range(size)], dtype=np.uint64)
        if np.any(out >= TWO_32):
            raise ValueError("test draws must be below 2^32")
        return out.astype(np.uint32)

    return draw


class DrawLimitError(MechanismError):
    """A sampler drew more uint32 values than its bound (:func:`draw_limit`): a broken source."""


def draw_limit(samples: int, per_sample: int = 25) -> int:
    """The most uint32 values ``samples`` draws may take: 100 times ``per_sample``, their expected
    cost bound (module notes), each, plus 10,000.  A correct source stays far below it: a sample
    needing 100 times its expected draws has probability below 10⁻¹⁰⁰ (the costs have geometric
    tails: the longest loop, V's, goes on with probability below 0.74 per coin)."""
    return 10_000 + 100 * per_sample * samples


def timed(draw: Draw, seconds: float) -> Draw:
    """``draw``, raising :class:`DrawLimitError` once ``seconds`` have passed since this call: a
    deadline on a whole release, whatever its source costs (a slow or stalled one included), so
    that a request never outlives the server's worker timeout."""
    deadline = time.monotonic() + seconds

    def in_time(size: int) -> np.ndarray:
        if time.monotonic() > deadline:
            raise DrawLimitError(f"the noise took longer than {seconds:g} s (the deadline for a release)")
        return draw(size)

    return in_time


def bounded(draw: Draw, limit: int) -> Draw:
    """``draw``, raising :class:`DrawLimitError` once more than ``limit`` values are asked for in all."""
    used = 0

    def counted(size: int) -> np.ndarray:
        nonlocal used
        used += size
        if used > limit:
            raise DrawLimitError(f"the noise took more than {limit:,} random draws (the bound for this release)")
        return draw(size)

    return counted


@functools.lru_cache(maxsize=256)
def _bracket(threshold: int, bits: int, count: int) -> tuple[tuple[int, int], ...]:
    """``(lo, hi)`` with ``lo ≤ (threshold/2^32)^(2^i) · 2^bits ≤ hi`` for i = 0 … count−1.

    Squared at ``bits + count + 64`` bits, where a squaring at most doubles the error and adds a
    unit (values at most 1: ``count`` squarings lose fewer than ``count`` bits), then rounded down
    and up to ``bits``: each end is within a unit (and 2^−64) of the true power.
    """
    guard = count + 64
    lo = hi = threshold << (bits + guard - 32)
    out = []
    for _ in range(count):
        out.append((lo >> guard, -(-hi >> guard)))
        lo, hi = (lo * lo) >> (bits + guard), -((-hi * hi) >> (bits + guard))
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _power_bounds(m: int, threshold: int, bits: int) -> tuple[int, int]:
    """``(lo, hi)`` with ``lo ≤ (threshold/2^32)^m · 2^bits ≤ hi``, at most ``4·popcount(m)`` apart.

    Every factor and every product is off by less than one unit, rounded down for ``lo`` and up
    for ``hi``; the values are at most 1, so the errors add up and never multiply.
    """
    lo = hi = 1 << bits
    for i, (blo, bhi) in enumerate(_bracket(threshold, bits, max(m.bit_length(), 1))):
        if m >> i & 1:
            lo, hi = (lo * blo) >> bits, -((-hi * bhi) >> bits)
    return lo, hi


def _coin_exact(m: int, threshold: int, first: int, draw: Draw) -> bool:
    """Finish one power coin whose first word ``first`` straddles the bracket: more words, more bits."""
    prefix, words = first, 1
    while True:
        words += 1
        prefix = (prefix << 32) | int(draw(1)[0])
        bits = 32 * words + 64
        lo, hi = _power_bounds(m, threshold, bits)
        shift = bits - 32 * words  # X ∈ [prefix, prefix + 1) · 2^(−32·words)
        if (prefix + 1) << shift <= lo:
            return True
        if prefix << shift >= hi:
            return False


def power_coin(exponents, threshold: int, draw: Draw) -> np.ndarray:
    """Exact coins: ``out[i]`` is True with probability ``(threshold/2^32)^exponents[i]`` exactly.

    One uint32 ``w`` each, compared with a bracket ``lo ≤ β'^m · 2^32 ≤ hi`` computed in uint64
    (``w < lo``: success, ``w ≥ hi``: failure); the rare ``w`` in between reads more words
    (:func:`_coin_exact`).  Exponents are non-negative integers below 2^63.
    """
    m = np.asarray(exponents, dtype=np.uint64).reshape(-1)
    if m.size and not np.any(m != m[0]):  # one exponent (the blocks' L): one bracket, in Python ints
        lo, hi = (np.uint64(end) for end in _power_bounds(int(m[0]), threshold, 32))
    else:
        lo = np.full(m.size, TWO_32, dtype=np.uint64)
        hi = lo.copy()
        bits = max(int(m.max()).bit_length(), 1) if m.size else 1
        for i, (blo, bhi) in enumerate(_bracket(threshold, 32, bits)):  # each within one unit of β'^(2^i)
            take = ((m >> np.uint64(i)) & np.uint64(1)).astype(bool)
            # products of two values ≤ 2^32 with one below 2^32: below 2^64, and + (2^32 − 1) still fits
            lo[take] = (lo[take] * np.uint64(blo)) >> np.uint64(32)
            hi[take] = (hi[take] * np.uint64(bhi) + np.uint64(TWO_32 - 1)) >> np.uint64(32)
    w = draw(m.size).astype(np.uint64)
    out = w < lo
    for i in np.flatnonzero((w >= lo) & (w < hi)):
        out[i] = _coin_exact(int(m[i]), threshold, int(w[i]), draw)
    return out


def block_length(threshold: int) -> int:
    """``L = ⌊1/γ⌋`` for ``β' = e^(−γ)``: the block of :func:`geometric` (1 when ``β' ≤ 1/2``)."""
    if 2 * threshold <= TWO_32:
        return 1
    gamma = -math.log1p(-(TWO_32 - threshold) / TWO_32)
    return max(1, min(int(1 / gamma), TWO_32 - 1))


def geometric(size: int, threshold: int, draw: Draw | None = None) -> np.ndarray:
    """``size`` independent Geometric: successes (``u < threshold``) before the first failure.

    At ``β' ≤ 1/2`` trial by trial, every sample still running drawing one uint32 per round, in
    order; above, ``L·V + U`` in blocks of ``L`` trials (module notes), in O(1) expected draws.
    """
    draw = draw or source()
    block = block_length(threshold)
    counts = np.zeros(size, dtype=np.int64)
    if block > 1:  # U: uniform proposals in 0..L−1, each kept with probability β'^u
        pending = np.arange(size)
        while pending.size:
            proposal = uniform_index(pending.size, block, draw)
            keep = power_coin(proposal, threshold, draw)
            counts[pending[keep]] = proposal[keep]
            pending = pending[~keep]
    running = np.arange(size)
    while running.size:  # V (or G itself when L = 1): coins of β'^L until the first failure
        success = (draw(running.size) < threshold if block == 1
                   else power_coin(np.full(running.size, block), threshold, draw))
        counts[running[success]] += block
        running = running[success]
    return counts


def discrete_laplace(size: int, threshold: int, draw: Draw | None = None) -> np.ndarray:
    """``size`` draws of ``G₁ − G₂``: ``P(Y = y) = (1 − β')/(1 + β') β'^|y|``, β' = threshold/2^32."""
    draw = draw or source()
    return geometric(size, threshold, draw) - geometric(size, threshold, draw)


def uniform_index(size: int, k: int, draw: Draw) -> np.ndarray:
    """``size`` uniform indices in 0..k−1: ``u mod k`` for ``u`` below ``2^32 − (2^32 mod k)``."""
    limit = TWO_32 - TWO_32 % k
    out = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        u = draw(pending.size).astype(np.int64)
        ok = u < limit
        out[pending[ok]] = u[ok] % k
        pending = pending[~ok]
    return out


def exponential_mechanism(scores, threshold: int, size: int = 1, draw: Draw | None = None) -> np.ndarray:
    """Choose ``size`` options independently with ``P(i) ∝ β'^(max(scores) − scores[i])``.

    ``scores`` are integers (counts).  Rejection sampling as in the module notes: exact, and
    ε'-DP for ``β' = threshold / 2^32`` when every score has sensitivity Δ and the threshold was
    made with ``base_threshold(ε, 2Δ)``.
    """
    draw = draw or source()
    scores = np.asarray(scores, dtype=np.int64)
    if scores.ndim != 1 or scores.size < 1:
        raise MechanismError(f"scores must be a non-empty 1-d array, got shape {scores.shape}")
    gap = scores.max() - scores
    chosen = np.full(size, -1, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        proposal = uniform_index(pending.size, scores.size, draw)
        accept = power_coin(gap[proposal], threshold, draw)
        chosen[pending[accept]] = proposal[accept]
        pending = pending[~accept]
    return chosen


def geometric_mechanism(values, epsilon, sensitivity, draw: Draw | None = None, repeats: int | None = None):
    """Release integer ``values`` (a query of L1 sensitivity Δ) with discrete Laplace noise at ε.

    Returns ``(noisy, threshold)``; with ``repeats`` the first axis holds that many independent
    releases (for auditing the mechanism), otherwise ``noisy`` is shaped like ``values``.  Raises
    :class:`DrawLimitError` if ``draw`` is asked for more than :func:`draw_limit` values.
    """
    values = np.asarray(values, dtype=np.int64)
    threshold = base_threshold(epsilon, check_sensitivity(sensitivity))
    shape = values.shape if repeats is None else (repeats, *values.shape)
    size = int(np.prod(shape))
    draw = bounded(draw or source(), draw_limit(size))
    return values + discrete_laplace(size, threshold, draw).reshape(shape), threshold


def exponential_choice(scores, epsilon, sensitivity, draw: Draw | None = None, size: int | None = None):
    """Choose an option with the exponential mechanism at ε for scores of sensitivity Δ.

    Returns ``(chosen, threshold)``: one index, or ``size`` independent ones (for auditing).
    Expected proposals per choice are at most k, each costing about 2 draws at most; more than
    :func:`draw_limit` of them raises :class:`DrawLimitError`.
    """
    threshold = base_threshold(epsilon, 2 * check_sensitivity(sensitivity))
    k = np.asarray(scores).size
    draw = bounded(draw or source(), draw_limit((1 if size is None else size) * max(k, 1), per_sample=3))
    chosen = exponential_mechanism(scores, threshold, 1 if size is None else size, draw)
    return (int(chosen[0]) if size is None else chosen), threshold
