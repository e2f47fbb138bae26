"""Coverage of the list experiment's and the number-ticked intervals, by Monte Carlo (docs/statistics.md).

**List experiment** (:func:`deniable.estimators.listexp.estimate_list`, the difference in means with
Welch's t): J = 3 control items held independently by a share h each, the sensitive item by τ;
each respondent's arm by a fair coin, so the arm sizes are Binomial(n, ½); the report counts of an
arm are Multinomial(n_arm, M λ_arm) with λ_arm the arm's true count distribution (computed
exactly) and M the identity (plain) or k-ary randomized response over 0..J + 1 at ε.  Per cell:
the coverage of τ, the share of intervals of zero width without a note saying why (must be 0) and with one (the
whole large-sample interval outside [0, 1]), the share that are [0, 1] because both arms reported
one constant count, and the mean width.

**Number ticked** (a check-all question's mean number of options ticked,
:func:`deniable.estimators.multi.estimate_multi`'s score interval): K = 4 options; true ticks
independent with prevalences 0.1, 0.2, 0.3, 0.4 ("independent") or all-or-nothing with 0.3
("all or none"); each tick is binary randomized response at ε/K, so the number of reported ticks
W given T true ticks is Binomial(T, p) + Binomial(K − T, q), its distribution computed exactly,
and the replicate's counts of W are Multinomial(n, ·); the interval is computed exactly as the
estimator does (:func:`~deniable.estimators.numeric.moments_mean` on the scores' moments).

The Monte Carlo standard error of a coverage near 0.95 is sqrt(0.95·0.05/reps): 0.005 at 2,000.

    python scripts/types_coverage.py                # 2,000 replicates per cell: about 7 minutes
    python scripts/types_coverage.py --reps 500     # a quick look
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))

from deniable.client.listexp import list_mechanism  # noqa: E402
from deniable.client.multi import multi_mechanism  # noqa: E402
from deniable.estimators.listexp import estimate_list  # noqa: E402
from deniable.estimators.multi import ticked_model, ticked_scores  # noqa: E402
from deniable.estimators.numeric import moments_mean  # noqa: E402
from deniable.estimators.scores import moments  # noqa: E402

CONFIDENCE = 0.95
ITEMS = 3
LIST_CELLS = ((0.05, 0.1), (0.5, 0.1), (0.5, 0.5))  # (h, τ)
LIST_NS = (8, 20, 100, 1000)
LIST_EPSILONS = (None, 1.0, 3.0)
K = 4
TICKED_NS = (50, 500, 5000)
TICKED_EPSILONS = (None, 1.0, 2.0, 4.0)


def list_truth(h: float, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """The true count distributions on 0..J + 1 of the control and the treatment arm."""
    control = np.zeros(ITEMS + 2)
    control[:ITEMS + 1] = binom.pmf(np.arange(ITEMS + 1), ITEMS, h)
    treatment = (1 - tau) * control + tau * np.roll(control, 1)
    return control, treatment


def channel(epsilon) -> np.ndarray:
    """The count's report matrix: identity (plain) or k-ary randomized response over 0..J + 1."""
    mech = list_mechanism(ITEMS, epsilon)
    k = ITEMS + 2
    if not mech.protected:
        return np.eye(k)
    return np.full((k, k), mech.rr.q) + (mech.rr.p - mech.rr.q) * np.eye(k)


def list_cell(h, tau, n, epsilon, reps, rng) -> dict:
    control, treatment = list_truth(h, tau)
    m = channel(epsilon)
    lam_c, lam_t = m @ control, m @ treatment
    covered = silent = unknown = point = 0
    widths = []
    for _ in range(reps):
        n_t = int(rng.binomial(n, 0.5))
        r = estimate_list(rng.multinomial(n - n_t, lam_c), rng.multinomial(n_t, lam_t), ITEMS, epsilon,
                          confidence=CONFIDENCE)
        covered += r.ci_low <= tau <= r.ci_high
        silent += r.ci_low == r.ci_high and not r.note
        point += r.ci_low == r.ci_high
        unknown += (r.ci_low, r.ci_high) == (0.0, 1.0) and "constant count" in r.note
        widths.append(r.ci_high - r.ci_low)
    return {"coverage": covered / reps, "silent_zero": silent / reps, "constant": unknown / reps, "point": point / reps,
            "width": float(np.mean(widths))}


def ticked_truth(name: str) -> np.ndarray:
    """P(T = t), t = 0..K."""
    if name == "all or none":
        out = np.zeros(K + 1)
        out[0], out[K] = 0.7, 0.3
        return out
    dist = np.array([1.0])
    for share in (0.1, 0.2, 0.3, 0.4):
        dist = np.convolve(dist, [1 - share, share])
    return dist


def ticked_cell(name, n, epsilon, reps, rng) -> dict:
    truth = ticked_truth(name)
    mean = float(truth @ np.arange(K + 1))
    if epsilon is None:
        p, q = 1.0, 0.0
    else:
        mech = multi_mechanism(K, epsilon)
        p, q = mech.p, mech.q
    reported = np.zeros(K + 1)  # P(W = w)
    for t, weight in enumerate(truth):
        reported += weight * np.convolve(binom.pmf(np.arange(t + 1), t, p), binom.pmf(np.arange(K - t + 1), K - t, q))
    counts = rng.multinomial(n, reported / reported.sum(), size=reps)
    _, _, low, high, _ = moments_mean(ticked_model(K, p, q), moments(counts, ticked_scores(K, p, q)), CONFIDENCE)
    low, high = np.asarray(low), np.asarray(high)
    return {"coverage": float(np.mean((low <= mean) & (mean <= high))), "width": float(np.mean(high - low))}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261124)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.time()
    print(f"list experiment, J = {ITEMS}, difference in means (Welch t); {args.reps:,} replicates per cell, "
          f"nominal {CONFIDENCE}; seed {args.seed}")
    print(f"{'h':>5} {'tau':>5} {'n':>5} {'eps':>6} {'coverage':>9} {'silent [a,a]':>13} {'[a,a] noted':>12} "
          f"{'[0,1]: constant':>16} {'width':>7}")
    for h, tau in LIST_CELLS:
        for n in LIST_NS:
            for epsilon in LIST_EPSILONS:
                c = list_cell(h, tau, n, epsilon, args.reps, rng)
                print(f"{h:>5g} {tau:>5g} {n:>5} {'plain' if epsilon is None else f'{epsilon:g}':>6} "
                      f"{c['coverage']:>9.3f} {c['silent_zero']:>13.3f} {c['point'] - c['silent_zero']:>12.3f} "
                      f"{c['constant']:>16.3f} {c['width']:>7.3f}")
    print()
    print(f"number ticked, K = {K}, score interval; {args.reps:,} replicates per cell, nominal {CONFIDENCE}")
    print(f"{'truth':>12} {'n':>5} {'eps':>6} {'coverage':>9} {'width':>7}")
    for name in ("independent", "all or none"):
        for n in TICKED_NS:
            for epsilon in TICKED_EPSILONS:
                c = ticked_cell(name, n, epsilon, args.reps, rng)
                print(f"{name:>12} {n:>5} {'plain' if epsilon is None else f'{epsilon:g}':>6} {c['coverage']:>9.3f} "
                      f"{c['width']:>7.3f}")
    print(f"({time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
