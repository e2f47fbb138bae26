"""An empirical lower bound on ε from samples of a randomizer: the statistics of ``deniable audit``.

A randomizer M is ε-locally differentially private iff for every pair of true values a ≠ b and
every set S of reports, ``P(M(a) ∈ S) ≤ e^ε · P(M(b) ∈ S)``.  So for any a, b, S,

    ε ≥ ln P(M(a) ∈ S) − ln P(M(b) ∈ S).

Run M on a and on b N times each; the counts of reports in S are Binomial(N, P(M(·) ∈ S)).
A one-sided Clopper–Pearson lower bound L on ``P(M(a) ∈ S)`` and upper bound U on
``P(M(b) ∈ S)`` give ``ε ≥ ln(L/U)`` with the stated confidence: this is the hypothesis-testing
audit of Ding, Wang, Wang, Zhang & Kifer, *Detecting violations of differential privacy*
(CCS 2018) and Jagielski, Ullman & Oprea, *Auditing differentially private machine learning*
(NeurIPS 2020), with exact binomial bounds instead of asymptotic ones.

The events tested are the columns of the table: single reports S = {s}, or any partition of
the reports into cells (post-processing, so a binned randomizer is ε-LDP whenever the
randomizer is).  For k-ary randomized response single reports are the tight events
(``P(s | s) / P(s | b) = p/q = e^ε``); for the discrete Laplace mechanism on ``0..m`` they are
the two tails ``{y ≤ 0}`` and ``{y ≥ m}`` against the answers 0 and m (ratio ``t^(−m) = e^ε`` on
every report there), so ``deniable audit`` bins reports into those tails and the values between.
With r true values and s cells there are r·s lower and r·s upper bounds; each is taken at level
``α / (2rs)`` (Bonferroni), so all of them hold together with probability at least ``1 − α`` and
the maximum over every (a, b, s) of ``ln(L[a, s] / U[b, s])`` is a lower bound on the true ε at
confidence ``1 − α``.  A correct randomizer therefore shows a bound above its ε with probability
at most α.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .binomial import cp_lower, cp_upper


@dataclass(frozen=True)
class EpsilonBound:
    """What the samples show: ``lower_bound`` holds with probability ≥ ``confidence``."""

    lower_bound: float        # max over (a, b, s) of ln(L[a, s] / U[b, s]), at least 0
    point: float              # the same with the observed frequencies (no confidence)
    worst: tuple[int, int, int]  # the (a, b, s) giving the bound
    samples: int              # per true value
    bounds_tested: int        # one-sided bounds in the Bonferroni correction (2 r s)
    confidence: float


def epsilon_lower_bound(counts, confidence: float = 0.95) -> EpsilonBound:
    """Lower-bound ε from ``counts[a, s]`` = reports in cell s among N runs on true value a.

    ``counts`` is r × s (r true values, s report cells, both at least 2); every row must hold
    the same number N of runs.
    """
    counts = np.asarray(counts, dtype=np.int64)
    if counts.ndim != 2 or min(counts.shape) < 2:
        raise ValueError(f"counts must be an r × s table with r, s ≥ 2, got shape {counts.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    totals = counts.sum(axis=1)
    if (counts < 0).any() or totals.min() != totals.max() or totals[0] == 0:
        raise ValueError("every true value needs the same positive number of runs")
    k, n = counts.shape[0], int(totals[0])
    tests = 2 * counts.size
    alpha = (1 - confidence) / tests
    low, high = cp_lower(counts, n, alpha), cp_upper(counts, n, alpha)
    freq = counts / n
    best, point, worst = 0.0, 0.0, (0, 1, 0)
    with np.errstate(divide="ignore"):
        for a in range(k):
            for b in range(k):
                if a == b:
                    continue
                ratio = np.log(low[a]) - np.log(high[b])
                s = int(np.argmax(ratio))
                if ratio[s] > best:
                    best, worst = float(ratio[s]), (a, b, s)
                observed = np.log(freq[a]) - np.log(freq[b])
                finite = observed[np.isfinite(observed)]
                if finite.size:
                    point = max(point, float(finite.max()))
    return EpsilonBound(lower_bound=best, point=point, worst=worst, samples=n, bounds_tested=tests,
                        confidence=confidence)
