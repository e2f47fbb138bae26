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
  ``P(G = g) = (1 − β') β'^g`` exactly, for g = 0, 1, ….
* **Discrete Laplace.**  ``Y = G₁ − G₂`` for independent geometrics:
  ``P(Y = y) = Σ_g (1 − β')² β'^g β'^(g + |y|) = (1 − β')/(1 + β') · β'^|y|``, the two-sided
  geometric distribution of Ghosh, Roughgarden & Sundararajan (2012).  Added to a query of L1
  sensitivity Δ it is ε'-DP: shifting by at most Δ in total changes each probability by a factor
  of at most ``β'^(−Δ) = e^(ε')``.
* **Exponential mechanism.**  Choose option i with probability ``∝ β'^(s_max − s_i)``
  (``= exp(ε' s_i/(2Δ))`` up to a constant, McSherry & Talwar 2007) by rejection: propose i
  uniformly (rejection sampling on uint32: no modulo bias), accept iff a geometric G is at
  least ``s_max − s_i`` — ``P(G ≥ m) = β'^m`` exactly — else propose again.  The best option is
  always accepted, so a proposal is accepted with probability at least 1/k.

Canonne, Kamath & Steinke (2020) sample Bernoulli(exp(−a/b)) exactly for any rational a/b;
rounding the base once to a 32-bit threshold, as here, is simpler, uses only the comparison the
randomizer uses, and errs on the private side.  Draws come from the OS CSPRNG (``os.urandom``)
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

import math
from collections.abc import Callable, Iterable
from decimal import Decimal, localcontext

import numpy as np

from .mechanism import TWO_32, MechanismError, check_epsilon
from .randomizer import _uint32_source  # the one place that reads the OS CSPRNG

Draw = Callable[[int], np.ndarray]


def check_sensitivity(sensitivity) -> int:
    """Return Δ as a positive int, or raise MechanismError."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 1:
        raise MechanismError(f"sensitivity must be a positive integer, got {sensitivity!r}")
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


def geometric(size: int, threshold: int, draw: Draw | None = None) -> np.ndarray:
    """``size`` independent Geometric: successes (``u < threshold``) before the first failure.

    Vectorized: every sample still running draws one uint32 per round, in order.
    """
    draw = draw or source()
    counts = np.zeros(size, dtype=np.int64)
    running = np.arange(size)
    while running.size:
        success = draw(running.size) < threshold
        counts[running[success]] += 1
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
        accept = geometric(pending.size, threshold, draw) >= gap[proposal]
        chosen[pending[accept]] = proposal[accept]
        pending = pending[~accept]
    return chosen


def geometric_mechanism(values, epsilon, sensitivity, draw: Draw | None = None, repeats: int | None = None):
    """Release integer ``values`` (a query of L1 sensitivity Δ) with discrete Laplace noise at ε.

    Returns ``(noisy, threshold)``; with ``repeats`` the first axis holds that many independent
    releases (for auditing the mechanism), otherwise ``noisy`` is shaped like ``values``.
    """
    values = np.asarray(values, dtype=np.int64)
    threshold = base_threshold(epsilon, check_sensitivity(sensitivity))
    shape = values.shape if repeats is None else (repeats, *values.shape)
    size = int(np.prod(shape))
    return values + discrete_laplace(size, threshold, draw).reshape(shape), threshold


def exponential_choice(scores, epsilon, sensitivity, draw: Draw | None = None, size: int | None = None):
    """Choose an option with the exponential mechanism at ε for scores of sensitivity Δ.

    Returns ``(chosen, threshold)``: one index, or ``size`` independent ones (for auditing).
    """
    threshold = base_threshold(epsilon, 2 * check_sensitivity(sensitivity))
    chosen = exponential_mechanism(scores, threshold, 1 if size is None else size, draw)
    return (int(chosen[0]) if size is None else chosen), threshold
