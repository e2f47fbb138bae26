"""Exact coverage of the intervals of designs (docs/statistics.md), summed over the distribution of the reports.

Three parts, none simulated: the numbers are exact up to floating point.

``custom``    A design with k = 3 answers and three reports whose every report mixes several shares (a
              custom matrix) gets the simultaneous region intervals of
              :mod:`deniable.estimators.design_region`.  For each design and n, every multinomial
              outcome (x₁, x₂, x₃) with x₁ + x₂ + x₃ = n is enumerated once and its intervals computed
              by the function ``estimate_design`` calls for such designs
              (:func:`~deniable.estimators.design_region.region_intervals`); the coverage at a true π is
              then the sum of the outcomes' multinomial probabilities under λ = M π where the interval
              holds π_t — per answer (the smallest of the three is shown) and for all three at once.
``forced``    Forced response with k = 3 answers: each answer's exact interval comes from its own
              report's count, Binomial(n, p·π_t + p_t) (``estimate_design``'s intervals, through
              :func:`~deniable.estimators.intervals.interval`), summed over the same multinomial
              outcomes, per answer and for all three at once.
``crosswise`` The respondent-side crosswise model with the private fact's stated prevalence 0.25 in
              [0.23, 0.27]: the count of "same" is Binomial(n, π_y π + (1 − π_y)(1 − π)) at the fact's
              true prevalence π_y, summed over every count within 12 standard deviations (and 12 counts)
              of its mean, at π_y at the range's ends and between them, for the interval the results
              give (:func:`~deniable.estimators.designs.respondent_intervals`: the hull of the
              intervals at the ends and at 0.25) and for the one computed at 0.25 alone (before issue 36).

    python scripts/design_coverage.py                      # every part: about 20 s
    python scripts/design_coverage.py --part custom --n 20 50
    python scripts/design_coverage.py --part crosswise --crosswise-n 50 500 5000 50000 100000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom, multinomial

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))

from deniable.client.designs import crosswise, crosswise_respondent, custom, forced  # noqa: E402
from deniable.estimators.design_region import region_intervals  # noqa: E402
from deniable.estimators.designs import _binary_intervals, respondent_intervals  # noqa: E402
from deniable.estimators.intervals import interval  # noqa: E402

DESIGNS = {  # reports × answers; columns sum to 1
    "diagonal 0.6": [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]],
    "graded": [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]],
}
TRUTHS = [(1 / 3, 1 / 3, 1 / 3), (0.6, 0.3, 0.1), (0.8, 0.2, 0.0), (0.05, 0.05, 0.9), (1.0, 0.0, 0.0)]


def outcomes(n: int) -> np.ndarray:
    """Every (x₁, x₂, x₃) with non-negative entries summing to n."""
    return np.array([(a, b, n - a - b) for a in range(n + 1) for b in range(n + 1 - a)], dtype=np.int64)


def intervals(design, n: int, confidence: float):
    """Every outcome of n and its intervals ``(low, high)``, shape (outcomes, k) each."""
    xs = outcomes(n)
    low, high = np.empty(xs.shape), np.empty(xs.shape)
    for i, x in enumerate(xs):
        low[i], high[i] = region_intervals(x, design.matrix, confidence)
    return xs, low, high


def coverage(design, xs, low, high, truth) -> tuple[np.ndarray, float]:
    """Per-answer and simultaneous coverage at ``truth``, summed over the outcomes exactly."""
    pi = np.asarray(truth, dtype=float)
    lam = design.matrix @ pi
    prob = multinomial.pmf(xs, int(xs[0].sum()), lam)
    held = (low <= pi + 1e-12) & (pi - 1e-12 <= high)
    return prob @ held, float(prob @ held.all(axis=1))


FORCED = {"forced 0.7 / (0.1, 0.05, 0.15)": (0.7, [0.1, 0.05, 0.15]), "forced 0.5 / (⅙, ⅙, ⅙)": (0.5, [1 / 6] * 3)}
FORCED_TRUTHS = [(1 / 3, 1 / 3, 1 / 3), (0.6, 0.3, 0.1), (0.8, 0.2, 0.0), (0.02, 0.0, 0.98), (1.0, 0.0, 0.0)]
FACT = ("Is your mother's birthday in January, February or March?", 0.25, (0.23, 0.27))
FACT_PREVALENCES = (0.23, 0.24, 0.25, 0.26, 0.27)  # the fact's true prevalence: the range's ends and between
CROSSWISE_TRUTHS = (0.0, 0.02, 0.3, 0.5, 0.8, 1.0)


def forced_intervals(design, xs: np.ndarray, n: int, confidence: float):
    """Each answer's exact interval from its own report's count (``estimate_design``'s, for every outcome)."""
    params = dict(design.params)
    truth = float(params["p"])
    low, high = np.empty(xs.shape), np.empty(xs.shape)
    for t, share in enumerate(params["forced"]):
        counts = np.arange(n + 1)
        lo, hi = interval("exact", counts, n, truth + float(share), float(share), confidence)
        low[:, t], high[:, t] = lo[xs[:, t]], hi[xs[:, t]]
    return low, high


def table_custom(args) -> None:
    print(f"Exact coverage of the simultaneous region intervals ({args.confidence:.0%}), k = 3 custom designs")
    print(f"{'design':<14} {'n':>4}  {'true π':<18} {'lowest per answer':>17} {'all three':>9} {'mean width':>10}")
    for name, matrix in DESIGNS.items():
        design = custom(matrix)
        for n in args.n:
            xs, low, high = intervals(design, n, args.confidence)
            for truth in TRUTHS:
                per_answer, together = coverage(design, xs, low, high, truth)
                lam = design.matrix @ np.asarray(truth)
                width = float(multinomial.pmf(xs, n, lam) @ (high - low).mean(axis=1))
                shown = "(" + ", ".join(f"{v:.2f}" for v in truth) + ")"
                print(f"{name:<14} {n:>4}  {shown:<18} {per_answer.min():>17.4f} {together:>9.4f} {width:>10.3f}")


def table_forced(args) -> None:
    print(f"\nExact coverage of forced response's per-answer exact intervals ({args.confidence:.0%}), k = 3")
    print(f"{'design':<30} {'n':>4}  {'true π':<18} {'lowest per answer':>17} {'all three':>9} {'mean width':>10}")
    for name, (p, shares) in FORCED.items():
        design = forced(p, shares)
        for n in args.n:
            xs = outcomes(n)
            low, high = forced_intervals(design, xs, n, args.confidence)
            for truth in FORCED_TRUTHS:
                per_answer, together = coverage(design, xs, low, high, truth)
                lam = design.matrix @ np.asarray(truth)
                width = float(multinomial.pmf(xs, n, lam) @ (high - low).mean(axis=1))
                shown = "(" + ", ".join(f"{v:.2f}" for v in truth) + ")"
                print(f"{name:<30} {n:>4}  {shown:<18} {per_answer.min():>17.4f} {together:>9.4f} {width:>10.3f}")


def crosswise_coverage(design, n: int, confidence: float) -> list[tuple]:
    """Per true π: the hull's lowest coverage over FACT_PREVALENCES, its coverage at each end, the point
    interval's at each end, and the mean widths of both at the stated prevalence."""
    point = crosswise(FACT[1]).matrix
    lams = [prev * pi + (1 - prev) * (1 - pi) for pi in CROSSWISE_TRUTHS for prev in FACT_PREVALENCES]
    spread = [12 * np.sqrt(n * lam * (1 - lam)) + 12 for lam in lams]
    first = max(0, int(min(n * lam - s for lam, s in zip(lams, spread))))
    last = min(n, int(max(n * lam + s for lam, s in zip(lams, spread))) + 1)
    x = np.arange(first, last + 1)
    low, high = respondent_intervals(design, x, n, confidence=confidence)
    plow, phigh = _binary_intervals(point, 0, x, n, "exact", confidence)
    rows = []
    for pi in CROSSWISE_TRUTHS:
        held = (low <= pi + 1e-12) & (pi - 1e-12 <= high)
        point_held = (plow <= pi + 1e-12) & (pi - 1e-12 <= phigh)
        hull, old = {}, {}
        for prev in FACT_PREVALENCES:
            pmf = binom.pmf(x, n, prev * pi + (1 - prev) * (1 - pi))
            hull[prev], old[prev] = float(pmf @ held), float(pmf @ point_held)
        pmf = binom.pmf(x, n, FACT[1] * pi + (1 - FACT[1]) * (1 - pi))
        rows.append((pi, min(hull.values()), hull[FACT_PREVALENCES[0]], hull[FACT_PREVALENCES[-1]],
                     old[FACT_PREVALENCES[0]], old[FACT_PREVALENCES[-1]], float(pmf @ (high - low)),
                     float(pmf @ (phigh - plow))))
    return rows


def table_crosswise(args) -> None:
    fact, stated, (low, high) = FACT
    design = crosswise_respondent(stated, fact, [low, high])
    print(f"\nExact coverage of the respondent-side crosswise interval ({args.confidence:.0%}), the fact's "
          f"prevalence stated as {stated:g} in [{low:g}, {high:g}]; the truth at "
          + ", ".join(f"{v:g}" for v in FACT_PREVALENCES))
    print(f"{'n':>7} {'π':>5}  {'lowest':>7} {'at low':>7} {'at high':>7}  {'at 0.25 only: low':>17} {'high':>7}  "
          f"{'width':>6} {'at 0.25 only':>12}")
    for n in args.crosswise_n:
        for pi, lowest, at_low, at_high, old_low, old_high, width, old_width in crosswise_coverage(
                design, n, args.confidence):
            print(f"{n:>7} {pi:>5g}  {lowest:>7.4f} {at_low:>7.4f} {at_high:>7.4f}  {old_low:>17.4f} {old_high:>7.4f}  "
                  f"{width:>6.3f} {old_width:>12.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", nargs="+", choices=["custom", "forced", "crosswise"],
                        default=["custom", "forced", "crosswise"])
    parser.add_argument("--n", type=int, nargs="+", default=[20, 50, 100, 200])
    parser.add_argument("--crosswise-n", type=int, nargs="+", default=[50, 500, 5000, 50_000, 100_000])
    parser.add_argument("--confidence", type=float, default=0.95)
    args = parser.parse_args()
    started = time.perf_counter()
    for part, table in (("custom", table_custom), ("forced", table_forced), ("crosswise", table_crosswise)):
        if part in args.part:
            table(args)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
