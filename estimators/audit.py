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
randomizer is).  The cells of each mechanism, chosen where it is tight:

* **k-ary randomized response** (single choice, and a list experiment's count): single reports
  (``P(s | s) / P(s | b) = p/q = e^ε``).  A list experiment's report is the pair (arm, count);
  the true inputs are the respondents who hold nothing (count 0 in either arm) and everything
  (J in control, J + 1 in treatment), and the cells are every pair (:func:`list_cells`): the pair
  (treatment, J + 1) has ratio p/q.  A *plain* list experiment reports (treatment, J + 1) only
  for the second respondent, so the bound grows without limit with the samples: not ε-LDP.
* **grid randomized response** on 0..m with G + 1 grid points: the answers 0 and m (on the grid:
  no rounding) and the cells {report 0}, {report G}, {anything else} (:func:`end_cells`),
  ratio p/q.  (``deniable audit`` also runs the middle answer, whose rounding is random.)
* **the discrete Laplace mechanism** on 0..m: the two tails ``{y ≤ 0}`` and ``{y ≥ m}`` against
  the answers 0 and m (ratio ``t^(−m) = e^ε`` on every report there), and the values between
  (:func:`tail_cells`).
* **check all that apply** with K options: the empty set against the full set, which differ in
  every bit.  For them the likelihood ratio of a report depends only on its number W of ticks,
  ``(p/q)^(2W − K)``, so the cells are W = 0..K (:func:`tick_cells`, a post-processing of the
  whole report vector that loses nothing for this pair): W = K (the all-ticked pattern) has
  ratio ``(p/q)^K = e^ε``, and W = 0 the same the other way.

With r true values and s cells there are r·s lower and r·s upper bounds; each is taken at level
``α / (2rs)`` (Bonferroni), so all of them hold together with probability at least ``1 − α`` and
the maximum over every (a, b, s) of ``ln(L[a, s] / U[b, s])`` is a lower bound on the true ε at
confidence ``1 − α``.  A correct randomizer therefore shows a bound above its ε with probability
at most α.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deniable.errors import FieldError

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
        raise FieldError(f"counts must be an r × s table with r, s ≥ 2, got shape {counts.shape}", "counts")
    if not 0 < confidence < 1:
        raise FieldError(f"confidence must be in (0, 1), got {confidence}", "confidence")
    totals = counts.sum(axis=1)
    if (counts < 0).any() or totals.min() != totals.max() or totals[0] == 0:
        raise FieldError("every true value needs the same positive number of runs", "counts")
    k, n = counts.shape[0], int(totals[0])
    tests = 2 * counts.size
    alpha = (1 - confidence) / tests
    low, high = cp_lower(counts, n, alpha), cp_upper(counts, n, alpha)
    freq = counts / n
    best, point, worst = 0.0, 0.0, (0, 1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):  # cells never seen: ln 0, and ln 0 − ln 0 (dropped)
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


def end_cells(counts) -> np.ndarray:
    """Grid reports 0..G binned into {0}, {G} and the rest (the rest only when G ≥ 2)."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape[-1] == 2:
        return counts
    return np.stack([counts[..., 0], counts[..., -1], counts[..., 1:-1].sum(axis=-1)], axis=-1)


def tail_cells(counts, low: int, m: int) -> np.ndarray:
    """Discrete Laplace reports ``y = low + i`` (counts[..., i]) binned into y ≤ 0, 0 < y < m, y ≥ m."""
    counts = np.asarray(counts, dtype=np.int64)
    y = low + np.arange(counts.shape[-1])
    return np.stack([counts[..., y <= 0].sum(axis=-1), counts[..., (y > 0) & (y < m)].sum(axis=-1),
                     counts[..., y >= m].sum(axis=-1)], axis=-1)


def tick_cells(masks, k: int) -> np.ndarray:
    """Reported subsets (bit masks of K options) counted by their number of ticks, W = 0..K."""
    masks = np.asarray(masks, dtype=np.int64).reshape(-1)
    ticks = np.zeros(masks.size, dtype=np.int64)
    for j in range(k):
        ticks += (masks >> j) & 1
    return np.bincount(ticks, minlength=k + 1)


def list_cells(arms, reports, items: int) -> np.ndarray:
    """List-experiment reports (arm, count) counted by pair: cell ``arm · (J + 2) + count``."""
    arms, reports = (np.asarray(a, dtype=np.int64).reshape(-1) for a in (arms, reports))
    return np.bincount(arms * (items + 2) + reports, minlength=2 * (items + 2))
