"""Exact coverage of the intervals of designs with more than two answers (docs/statistics.md).

A design with k = 3 answers and three reports whose every report mixes several shares (a custom
matrix) gets the simultaneous region intervals of :mod:`deniable.estimators.design_region`.  For
each design and n, every multinomial outcome (x₁, x₂, x₃) with x₁ + x₂ + x₃ = n is enumerated
once and its intervals computed by the function ``estimate_design`` calls for such designs
(:func:`~deniable.estimators.design_region.region_intervals`); the coverage at a true π is
then the sum of the outcomes' multinomial probabilities under λ = M π where the interval holds
π_t — per answer (the smallest of the three is shown) and for all three at once.  No simulation:
the numbers are exact up to floating point.

    python scripts/design_coverage.py                 # n = 20, 50, 100, 200: a few seconds
    python scripts/design_coverage.py --n 20 50       # fewer cells
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import multinomial

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))

from deniable.client.designs import custom  # noqa: E402
from deniable.estimators.design_region import region_intervals  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[20, 50, 100, 200])
    parser.add_argument("--confidence", type=float, default=0.95)
    args = parser.parse_args()
    started = time.perf_counter()
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
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
