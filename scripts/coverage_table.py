"""Print the exact coverage and expected width of every interval method on the design grid.

Coverage is summed over the binomial pmf for every count 0..n (no simulation), at 2001
evenly spaced π plus points 1e-9 either side of every interval endpoint (where coverage
jumps).  Usage::

    python3 scripts/coverage_table.py            # the whole grid
    python3 scripts/coverage_table.py --quick    # n = 30, 100 only
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deniable.estimators import METHODS, coverage, expected_width  # noqa: E402
from deniable.estimators.intervals import interval  # noqa: E402
from deniable.client.mechanism import resolve  # noqa: E402

NS = (30, 100, 1000)
EPSILONS = (0.5, 1.0, 2.0, 4.0)
KS = (2, 5)


def pi_grid(method: str, n: int, k: int, epsilon: float, confidence: float) -> np.ndarray:
    """Return 2001 even points plus the neighbourhoods of every interval endpoint."""
    params = resolve(k, epsilon)
    low, high = interval(method, np.arange(n + 1), n, params.p, params.q, confidence)
    ends = np.concatenate([low, high])
    near = np.concatenate([ends - 1e-9, ends + 1e-9])
    return np.unique(np.clip(np.concatenate([np.linspace(0, 1, 2001), near]), 0, 1))


def cell(method: str, n: int, k: int, epsilon: float, confidence: float = 0.95) -> tuple[float, float, float]:
    """Return (min coverage, mean coverage over the even grid, mean expected width)."""
    pi = pi_grid(method, n, k, epsilon, confidence)
    even = np.linspace(0, 1, 2001)
    cov_all = coverage(method, n, k, epsilon, pi, confidence)
    cov_even = coverage(method, n, k, epsilon, even, confidence)
    width = expected_width(method, n, k, epsilon, even, confidence)
    return float(cov_all.min()), float(cov_even.mean()), float(width.mean())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only n = 30 and 100")
    args = parser.parse_args(argv)
    ns = NS[:2] if args.quick else NS
    start = time.perf_counter()
    header = f"{'n':>5} {'k':>2} {'eps':>4} " + " ".join(f"{m:>24}" for m in METHODS)
    print("min coverage / mean coverage / mean expected width (nominal 0.95)")
    print(header)
    widths = {m: [] for m in METHODS}
    for n in ns:
        for k in KS:
            for epsilon in EPSILONS:
                cells = [cell(m, n, k, epsilon) for m in METHODS]
                for m, c in zip(METHODS, cells):
                    widths[m].append(c[2])
                row = " ".join(f"{c[0]:8.4f} {c[1]:7.4f} {c[2]:7.4f}" for c in cells)
                print(f"{n:>5} {k:>2} {epsilon:>4g} {row}")
    wilson = np.mean(widths["wilson"])
    print("\nmean expected width over the cells, relative to mapped Wilson:")
    for m in METHODS:
        print(f"  {m:>16}: {np.mean(widths[m]):.4f}  ({np.mean(widths[m]) / wilson:.3f} x wilson)")
    print(f"\n({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
