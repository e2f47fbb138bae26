"""Print the exact coverage and expected width of the interval methods on the audit's grid.

Everything is summed over the binomial distribution of the count (no simulation):

* n ∈ {12, 40, 333, 2000}, ε ∈ {0.3, 0.9, 2.5, 5}, k ∈ {2, 4, 10}, confidence 0.90, 0.95,
  0.99: every method, at 2,001 evenly spaced π (0 and 1 included) plus points 1e-9 either
  side of every interval endpoint (where coverage jumps, so the minimum is found);
* n ∈ {150,000, 10⁶, 10⁷}: "exact", at 501 evenly spaced π plus, for each, the points just
  past the two endpoints nearest to it (where coverage dips); coverage is ``P(x_a ≤ Y ≤ x_b)``
  (see ``deniable.estimators.evaluation``), exact at any n.

Usage::

    python scripts/coverage_table.py            # the whole grid (about 10 minutes on 2 cores)
    python scripts/coverage_table.py --quick    # a corner of it (about a minute)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deniable.client.mechanism import resolve  # noqa: E402
from deniable.estimators import METHODS, coverage, expected_width  # noqa: E402
from deniable.estimators.exact import belt  # noqa: E402
from deniable.estimators.intervals import _to_pi, interval  # noqa: E402

NS = (12, 40, 333, 2000)
LARGE_NS = (150_000, 1_000_000, 10_000_000)
EPSILONS = (0.3, 0.9, 2.5, 5.0)
KS = (2, 4, 10)
LEVELS = (0.90, 0.95, 0.99)


def pi_grid(method: str, n: int, k: int, epsilon: float, confidence: float) -> np.ndarray:
    """2,001 even points (0 and 1 among them) plus the neighbourhoods of every interval endpoint."""
    params = resolve(k, epsilon)
    low, high = interval(method, np.arange(n + 1), n, params.p, params.q, confidence)
    ends = np.concatenate([low, high])
    near = np.concatenate([ends - 1e-9, ends + 1e-9])
    return np.unique(np.clip(np.concatenate([np.linspace(0, 1, 2001), near]), 0, 1))


def small_cell(method, n, k, epsilon, confidence):
    """(min coverage, coverage at π = 0, at π = 1, mean coverage, mean expected width)."""
    even = np.linspace(0, 1, 2001)
    cov_all = coverage(method, n, k, epsilon, pi_grid(method, n, k, epsilon, confidence), confidence=confidence)
    cov_even = coverage(method, n, k, epsilon, even, confidence=confidence)
    width = expected_width(method, n, k, epsilon, even, confidence=confidence)
    return cov_all.min(), cov_even[0], cov_even[-1], cov_even.mean(), width.mean()


def large_cell(n, k, epsilon, confidence):
    """(min coverage, at π = 0, at π = 1, mean coverage) for "exact" at large n."""
    params = resolve(k, epsilon)
    p, q = params.p, params.q
    even = np.linspace(0, 1, 501)
    cov = coverage("exact", n, k, epsilon, even, confidence=confidence)
    # the dips: just past the upper end of the last count below each π's covering range and
    # just before the lower end of the first count above it
    b = belt(n, q, p, confidence)
    lam = q + (p - q) * even
    centre = np.rint(n * lam).astype(np.int64)
    sd = np.sqrt(n * lam * (1 - lam)) + 1
    probes = []
    for shift in (-3, -2, -1.5, 1.5, 2, 3):
        x = np.clip(centre + np.rint(shift * sd).astype(np.int64), 0, n)
        low, high = b.interval(x)
        probes += [_to_pi(high, p, q) + 1e-12, _to_pi(low, p, q) - 1e-12]
    probes = np.clip(np.concatenate(probes), 0, 1)
    cov_probes = coverage("exact", n, k, epsilon, probes, confidence=confidence)
    return min(cov.min(), cov_probes.min()), cov[0], cov[-1], cov.mean()


def nested_and_positive(n, k, epsilon) -> bool:
    """Whether "exact" intervals are nested across the levels and never of zero width, at every count."""
    params = resolve(k, epsilon)
    x = np.arange(n + 1)
    ends = [interval("exact", x, n, params.p, params.q, level) for level in LEVELS]
    nested = all(np.all(wide[0] <= narrow[0]) and np.all(narrow[1] <= wide[1])
                 for narrow, wide in zip(ends, ends[1:]))
    return nested and all(np.all(high > low) for low, high in ends)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 12 and 333, k = 2 and 10, ε = 0.3 and 5, 95%%, "
                        "and n = 150,000")
    args = parser.parse_args(argv)
    ns, ks, epsilons, levels, large = NS, KS, EPSILONS, LEVELS, LARGE_NS
    if args.quick:
        ns, ks, epsilons, levels, large = (12, 333), (2, 10), (0.3, 5.0), (0.95,), (150_000,)
    start = time.perf_counter()

    results = {}
    for level in levels:
        for n in ns:
            for k in ks:
                for epsilon in epsilons:
                    for method in METHODS:
                        results[level, n, k, epsilon, method] = small_cell(method, n, k, epsilon, level)

    print("Exact (Feldman–Cousins) intervals: minimum coverage over π, coverage at π = 0 and at π = 1,")
    print("mean coverage, and mean expected width relative to mapped Wilson")
    for level in levels:
        print(f"\nnominal {level:.2f}")
        print(f"{'n':>5} {'k':>3} {'ε':>4}  {'min':>7} {'π = 0':>7} {'π = 1':>7} {'mean':>7} {'width/Wilson':>13}")
        for n in ns:
            for k in ks:
                for epsilon in epsilons:
                    lo, zero, one, mean, width = results[level, n, k, epsilon, "exact"]
                    wilson = results[level, n, k, epsilon, "wilson"][4]
                    print(f"{n:>5} {k:>3} {epsilon:>4g}  {lo:>7.4f} {zero:>7.4f} {one:>7.4f} {mean:>7.4f} "
                          f"{width / wilson:>13.3f}")

    print("\nEvery method over the same grid: the smallest minimum coverage, the share of cells whose")
    print("minimum is below nominal, the smallest coverage at π = 0 or 1, and the mean width relative to Wilson")
    print(f"{'level':>5} {'method':>16}  {'worst min':>9} {'cells below':>11} {'worst at 0/1':>12} {'width/Wilson':>13}")
    for level in levels:
        cells = [(n, k, e) for n in ns for k in ks for e in epsilons]
        wilson = np.array([results[(level, *c, "wilson")][4] for c in cells])
        for method in METHODS:
            rows = np.array([results[(level, *c, method)] for c in cells])
            below = np.mean(rows[:, 0] < level - 1e-9)
            print(f"{level:>5.2f} {method:>16}  {rows[:, 0].min():>9.4f} {below:>10.0%} "
                  f"{rows[:, 1:3].min():>12.4f} {np.mean(rows[:, 4] / wilson):>13.3f}")

    margins = [results[level, n, k, e, "exact"][0] - level for level in levels for n in ns for k in ks for e in epsilons]
    print(f"\nexact: every minimum at or above nominal: {'yes' if min(margins) >= 0 else 'NO'} "
          f"(smallest margin {min(margins):+.2e})")
    checks = [nested_and_positive(n, k, e) for n in ns for k in ks for e in epsilons]
    print(f"\nexact: nested across {', '.join(f'{v:.2f}' for v in LEVELS)} and never of zero width, at every count "
          f"of every cell: {'yes' if all(checks) else 'NO'}")

    print("\nExact at large n (501 even π plus the dips next to each): minimum, π = 0, π = 1, mean")
    header = "".join(f"  {'min':>7} {'π = 0':>7} {'π = 1':>7} {'mean':>7}" for _ in levels)
    print(f"{'n':>10} {'k':>3} {'ε':>4}" + header + "   " + ", ".join(f"{v:.2f}" for v in levels))
    large_margin = np.inf
    for n in large:
        for k in ks:
            for epsilon in epsilons:
                cells = [large_cell(n, k, epsilon, level) for level in levels]
                large_margin = min(large_margin, *(c[0] - level for c, level in zip(cells, levels)))
                row = "".join(f"  {c[0]:>7.4f} {c[1]:>7.4f} {c[2]:>7.4f} {c[3]:>7.4f}" for c in cells)
                print(f"{n:>10,} {k:>3} {epsilon:>4g}{row}")
    print(f"\nexact at large n: every minimum at or above nominal: {'yes' if large_margin >= 0 else 'NO'} "
          f"(smallest margin {large_margin:+.2e})")
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
