"""Monte-Carlo coverage of the randomized-response logit's intervals (docs/analysis.md, "Regression").

Model: a yes/no question (k = 2) whose true answer follows a logit in two questions asked
directly — ``year`` (3 levels, shares 0.4/0.35/0.25) and ``gender`` (2 levels, 0.5/0.5) —
with coefficients Intercept −1.0, year[2] 0.5, year[3] 1.0, gender[f] −0.5 (true prevalences
from 0.18 to 0.50).  Each replication draws n respondents, randomizes the answer with the
shipped randomizer at ε (seeded), fits ``regress`` and checks whether each coefficient's Wald and
profile-likelihood intervals cover the truth, and whether the predicted prevalence of "Yes" in
each year covers its sample-average truth.  Fits that stop with an error (separation) are
counted and left out.

    python scripts/regression_coverage.py                  # 5,000 replications per cell (SE of a coverage 0.003)
    python scripts/regression_coverage.py --reps 200       # a quick look
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import expit

from deniable.client.randomizer import randomize
from deniable.estimators import RegressionError, Term, regress

BETA = np.array([-1.0, 0.5, 1.0, -0.5])
NAMES = ["Intercept", "year[2]", "year[3]", "gender[f]"]
TERMS = (Term("year", (0, 1), ("1", "2", "3")), Term("gender", (2,), ("m", "f")))


def replicate(n: int, epsilon: float, rng) -> dict | None:
    year = rng.choice(3, size=n, p=[0.4, 0.35, 0.25])
    gender = rng.integers(0, 2, size=n)
    X = np.column_stack([year == 1, year == 2, gender == 1]).astype(float)
    design = np.column_stack([np.ones(n), X])
    prob_yes = expit(design @ BETA)
    truth = np.where(rng.random(n) < prob_yes, 0, 1)  # option 0 = "Yes", the reference is "No"
    reports = randomize(truth, 2, epsilon, rng=rng)
    try:
        result = regress(reports, X, epsilon, k=2, names=NAMES[1:], terms=TERMS, options=["Yes", "No"])
    except RegressionError:
        return None
    wald = (result.ci_low <= BETA) & (BETA <= result.ci_high)
    profile = (result.profile_low <= BETA) & (BETA <= result.profile_high)
    # Predicted prevalence of Yes with everyone in year g, gender as observed: the sample-average truth.
    prevalence = []
    for g in range(3):
        shifted = design.copy()
        shifted[:, 1:3] = 0
        if g:
            shifted[:, g] = 1
        target = expit(shifted @ BETA).mean()
        row = next(e for e in result.effects if e.term == "year" and e.level == str(g + 1) and e.option == 0)
        prevalence.append(row.prevalence_low <= target <= row.prevalence_high)
    return {"wald": wald, "profile": profile, "prevalence": np.array(prevalence)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"randomized-response logit, k = 2, yes ~ year + gender; {args.reps:,} replications per cell; "
          "nominal 0.95")
    print(f"{'n':>6} {'eps':>4}  {'Wald, per coefficient':<30} {'min':>6}  {'profile, per coefficient':<30} "
          f"{'min':>6}  {'prevalence by year':<22} {'failed':>6} {'s':>5}")
    for n in (1000, 10000):
        for epsilon in (1.0, 2.0):
            started = time.perf_counter()
            runs = [replicate(n, epsilon, rng) for _ in range(args.reps)]
            done = [r for r in runs if r is not None]
            wald = np.mean([r["wald"] for r in done], axis=0)
            profile = np.mean([r["profile"] for r in done], axis=0)
            prevalence = np.mean([r["prevalence"] for r in done], axis=0)
            print(f"{n:>6} {epsilon:>4g}  {' '.join(f'{v:.3f}' for v in wald):<30} {wald.min():>6.3f}  "
                  f"{' '.join(f'{v:.3f}' for v in profile):<30} {profile.min():>6.3f}  "
                  f"{' '.join(f'{v:.3f}' for v in prevalence):<22} {len(runs) - len(done):>6} "
                  f"{time.perf_counter() - started:>5.0f}", flush=True)
    print(f"coefficients in order: {', '.join(NAMES)} (truth {BETA.tolist()})")


if __name__ == "__main__":
    main()
