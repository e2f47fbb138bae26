"""Monte-Carlo check of the confidence sequences (monitoring mode): time-uniform coverage and width.

For each ε and k, simulate PATHS paths of N respondents (true answers from a fixed π, randomized
with the shipped randomizer, seeded) and check the sequence of every option at *every* n from 1
to N: a path covers if no n excludes the truth.  The sequence excludes λ exactly when the
mixture martingale log M_n(λ) reaches log(1/α) (the interval is the hull of that acceptance set,
estimators/sequential.py), so the check evaluates log M_n(λ_true) at every n through lookup
tables of log Γ; a sample of (path, n) points is cross-checked against the interval function.

Width: the confidence sequence against the exact fixed-n interval at n = 10,000, at the
expected counts (every option) and averaged over the first 200 paths.

    python scripts/sequence_coverage.py                   # 2,000 paths of 10^5 per cell
    python scripts/sequence_coverage.py --paths 200 --n 10000   # a quick look
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.special import gammaln

from deniable.client.mechanism import mechanism
from deniable.client.randomizer import randomize
from deniable.estimators import estimate
from deniable.estimators.sequential import DEFAULT_TUNED_FOR, PRIOR_FRACTION, confidence_sequence, log_martingale

TRUTH = {2: np.array([0.3, 0.7]), 4: np.array([0.4, 0.3, 0.2, 0.1])}
WIDTH_N = 10_000


def tables(lam: float, n_max: int, c: float):
    """log Γ lookups so that log M_n(λ) is a few array lookups per (path, n)."""
    a, b = c * lam, c * (1 - lam)
    grid = np.arange(n_max + 1, dtype=float)
    const = gammaln(a) + gammaln(b) - gammaln(a + b)
    return gammaln(a + grid), gammaln(b + grid), gammaln(a + b + grid), const


def run_cell(k: int, epsilon: float, paths: int, n_max: int, confidence: float, rng, chunk: int):
    mech = mechanism(k, epsilon)
    pi = TRUTH[k]
    lam = mech.q + (mech.p - mech.q) * pi
    c = PRIOR_FRACTION * DEFAULT_TUNED_FOR
    look = [tables(float(l), n_max, c) for l in lam]
    threshold = math.log(1 / (1 - confidence))
    threshold_all = math.log(k / (1 - confidence))  # Bonferroni over the k options
    n = np.arange(1, n_max + 1)
    peak = np.empty((paths, k))  # max over n of log M_n(λ_i)
    width_paths = []
    checked = mismatched = 0
    cdf = np.cumsum(pi)
    for start in range(0, paths, chunk):
        size = min(chunk, paths - start)
        truth = np.searchsorted(cdf, rng.random((size, n_max)), side="right").astype(np.int64)
        truth = np.minimum(truth, k - 1)
        reports = randomize(truth, k, epsilon, rng=rng)
        for i in range(k):
            x = np.cumsum(reports == i, axis=1)  # (size, n_max): count of option i after n reports
            t_a, t_b, t_ab, const = look[i]
            log_m = (t_a[x] + t_b[n - x] - t_ab[n] - const
                     - x * math.log(lam[i]) - (n - x) * math.log(1 - lam[i]))
            peak[start:start + size, i] = log_m.max(axis=1)
            if start == 0:  # cross-check the lookups and the interval function on a sample
                for row in range(min(size, 20)):
                    for m in (1, 10, 100, 1000, n_max // 2, n_max):
                        xm = int(x[row, m - 1])
                        direct = float(log_martingale(xm, m, lam[i], c))
                        assert abs(direct - log_m[row, m - 1]) < 1e-6 * (1 + abs(direct)), (direct, log_m[row, m - 1])
                        low, high = confidence_sequence(xm, m, mech.p, mech.q, confidence)
                        inside = bool(low <= pi[i] <= high)
                        checked += 1
                        mismatched += inside != (direct < threshold)
        if start == 0 and n_max >= WIDTH_N:
            counts = np.stack([np.count_nonzero(reports[:, :WIDTH_N] == i, axis=1) for i in range(k)], axis=1)
            for row in counts[:200]:
                cs_low, cs_high = confidence_sequence(row, WIDTH_N, mech.p, mech.q, confidence)
                fixed = estimate(row, epsilon, confidence=confidence)
                width_paths.append(np.max((cs_high - cs_low) / (fixed.ci_high - fixed.ci_low)))
    per_option = np.mean(peak < threshold, axis=0)
    together = float(np.mean(np.all(peak < threshold_all, axis=1)))
    # Width at the expected counts at n = 10,000.
    expected = np.round(WIDTH_N * lam).astype(np.int64)
    expected[-1] = WIDTH_N - expected[:-1].sum()
    cs_low, cs_high = confidence_sequence(expected, WIDTH_N, mech.p, mech.q, confidence)
    fixed = estimate(expected, epsilon, confidence=confidence)
    ratio = (cs_high - cs_low) / (fixed.ci_high - fixed.ci_low)
    return {"per_option": per_option, "together": together, "ratio_expected": float(ratio.max()),
            "ratio_paths": float(np.mean(width_paths)) if width_paths else float("nan"),
            "checked": checked, "mismatched": mismatched}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paths", type=int, default=2000)
    parser.add_argument("--n", type=int, default=100_000, help="respondents per path")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--chunk", type=int, default=50, help="paths simulated at once (memory)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"confidence sequences (beta-binomial mixture, tuned for n = {DEFAULT_TUNED_FOR:,}), "
          f"level {args.confidence}: {args.paths:,} paths of {args.n:,} respondents per cell, "
          f"checked at every n")
    print(f"truth: k=2 π = {TRUTH[2].tolist()}, k=4 π = {TRUTH[4].tolist()}")
    header = (f"{'k':>2} {'eps':>4}  {'time-uniform coverage per option':<34} {'min':>6}  "
              f"{'all options (Bonferroni)':>24}  {'width/exact at n=10^4':>22}  {'(paths)':>7}  {'s':>5}")
    print(header)
    for k in (2, 4):
        for epsilon in (0.5, 1.0, 2.0):
            started = time.perf_counter()
            cell = run_cell(k, epsilon, args.paths, args.n, args.confidence, rng, args.chunk)
            options = " ".join(f"{v:.4f}" for v in cell["per_option"])
            assert cell["mismatched"] == 0, f"interval and martingale disagree at {cell['mismatched']} points"
            print(f"{k:>2} {epsilon:>4g}  {options:<34} {cell['per_option'].min():>6.4f}  "
                  f"{cell['together']:>24.4f}  {cell['ratio_expected']:>22.3f}  {cell['ratio_paths']:>7.3f}  "
                  f"{time.perf_counter() - started:>5.0f}", flush=True)
    print("every sampled (path, n) point: the interval contains π exactly when log M_n(λ) < log(1/α)")


if __name__ == "__main__":
    main()
