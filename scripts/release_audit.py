"""Empirical privacy audit of the central release mechanisms (docs/analysis.md, "Public results").

The method of ``deniable audit`` (estimators/audit.py), on neighbouring data: run the release
mechanism as the server runs it (``deniable.client.discrete.geometric_mechanism`` and
``exponential_choice``, OS CSPRNG) N times on a survey D and N times on its neighbour D' (one
respondent's answer changed), count an event where the mechanism is tight, and bound ε from
below with one-sided Clopper–Pearson bounds (Bonferroni over the events,
``deniable.estimators.release_audit``).  Each row also audits a variant drawing with an ε 5% above
the declared one: its bound must exceed the declared ε ("caught").

* counts (geometric, Δ = 2): D = (5, 3), D' = (4, 4); event {Y₀ ≥ 5, Y₁ ≤ 3}, probability
  (1/(1+β))² under D and (β/(1+β))² under D' — the ratio is exactly e^ε.
* most common answer (exponential mechanism): scores (10 + g, 10) and (9 + g, 11), with the gap
  g = round(10/ε) so that the rarer answer has probability about e⁻⁵: there the mechanism comes
  close to its ε (log-ratio ε + ln(1 + β^g) − ln(1 + β^(g−2)), β = e^(−ε/2)), yet it is seen
  often enough to measure.

    python scripts/release_audit.py                 # 10^6 runs (counts), 10^7 (most common answer)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from deniable.client import discrete
from deniable.estimators.release_audit import neighbour_epsilon_bound


def counts_bound(epsilon_used: float, runs: int, declared: float):
    a, _ = discrete.geometric_mechanism([5, 3], epsilon_used, 2, repeats=runs)
    b, _ = discrete.geometric_mechanism([4, 4], epsilon_used, 2, repeats=runs)
    event_a = np.count_nonzero((a[:, 0] >= 5) & (a[:, 1] <= 3))
    event_b = np.count_nonzero((b[:, 0] >= 5) & (b[:, 1] <= 3))
    return neighbour_epsilon_bound([event_a, runs - event_a], [event_b, runs - event_b])


def top_bound(epsilon_used: float, runs: int, declared: float):
    gap = round(10 / declared)
    a, _ = discrete.exponential_choice([10 + gap, 10], epsilon_used, 1, size=runs)
    b, _ = discrete.exponential_choice([9 + gap, 11], epsilon_used, 1, size=runs)
    return neighbour_epsilon_bound(np.bincount(a, minlength=2), np.bincount(b, minlength=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts-runs", type=int, default=1_000_000)
    parser.add_argument("--top-runs", type=int, default=10_000_000)
    parser.add_argument("--epsilon", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    args = parser.parse_args()
    print("lower bounds on ε (confidence 0.95 each), OS CSPRNG; a variant drawing with 1.05 ε must be caught")
    print(f"{'mechanism':<26} {'runs':>11} {'declared ε':>10} {'bound':>7} {'obs.':>7} {'verdict':<9} "
          f"{'1.05 ε bound':>12} {'verdict':<8} {'s':>4}")
    for name, bound, runs in (("counts (geometric)", counts_bound, args.counts_runs),
                              ("most common (exponential)", top_bound, args.top_runs)):
        for epsilon in args.epsilon:
            started = time.perf_counter()
            correct, weak = bound(epsilon, runs, epsilon), bound(1.05 * epsilon, runs, epsilon)
            print(f"{name:<26} {runs:>11,} {epsilon:>10g} {correct.lower_bound:>7.4f} {correct.point:>7.4f} "
                  f"{'ok' if correct.lower_bound <= epsilon else 'VIOLATION':<9} {weak.lower_bound:>12.4f} "
                  f"{'caught' if weak.lower_bound > epsilon else 'missed':<8} {time.perf_counter() - started:>4.0f}",
                  flush=True)


if __name__ == "__main__":
    main()
