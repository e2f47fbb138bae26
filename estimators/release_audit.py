"""An empirical lower bound on the ε of a central release mechanism, from runs on two neighbours.

The release analogue of :mod:`deniable.estimators.audit` (which audits the randomizers): a
mechanism M is ε-DP iff ``P(M(D) ∈ S) ≤ e^ε P(M(D') ∈ S)`` for all neighbours D, D' and output
sets S.  Run M N times on D and N times on D', sort the outputs into m events ``S_1 … S_m``
(chosen where the mechanism is tight, e.g. ``{Y ≤ c}`` for a noisy count c), and bound, in both
directions and for every event, ``ln(L/U)`` from one-sided Clopper–Pearson bounds taken at level
``(1 − confidence)/(4m)`` (Bonferroni over 2 directions × m events × 2 bounds): the maximum is a
lower bound on the true ε with probability ≥ ``confidence`` (Ding et al., CCS 2018; Jagielski,
Ullman & Oprea, NeurIPS 2020).
"""

from __future__ import annotations

import numpy as np

from deniable.errors import FieldError

from .audit import EpsilonBound
from .binomial import cp_lower, cp_upper


def neighbour_epsilon_bound(counts_a, counts_b, confidence: float = 0.95) -> EpsilonBound:
    """Lower-bound ε from the event counts of N runs on D (``counts_a``) and N runs on D' (``counts_b``).

    ``worst`` is ``(0, 1, s)`` when the bound comes from ``P(S_s | D)/P(S_s | D')`` and ``(1, 0, s)``
    for the other direction.

    >>> neighbour_epsilon_bound([500_000, 500_000], [500_000, 500_000]).lower_bound
    0.0
    """
    a, b = (np.asarray(c, dtype=np.int64) for c in (counts_a, counts_b))
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise FieldError(f"need two 1-d arrays of event counts of the same length >= 2, got {a.shape}, {b.shape}")
    if not 0 < confidence < 1:
        raise FieldError(f"confidence must be in (0, 1), got {confidence}", "confidence")
    n = int(a.sum())
    if (a < 0).any() or (b < 0).any() or n == 0 or int(b.sum()) != n:
        raise FieldError("both neighbours need the same positive number of runs")
    tests = 4 * a.size
    alpha = (1 - confidence) / tests
    best, point, worst = 0.0, 0.0, (0, 1, 0)
    with np.errstate(divide="ignore"):
        for first, second, direction in ((a, b, (0, 1)), (b, a, (1, 0))):
            ratio = np.log(cp_lower(first, n, alpha)) - np.log(cp_upper(second, n, alpha))
            s = int(np.argmax(ratio))
            if ratio[s] > best:
                best, worst = float(ratio[s]), (*direction, s)
            observed = np.log(first / n) - np.log(second / n)
            finite = observed[np.isfinite(observed)]
            if finite.size:
                point = max(point, float(finite.max()))
    return EpsilonBound(lower_bound=best, point=point, worst=worst, samples=n, bounds_tested=tests,
                        confidence=confidence)
