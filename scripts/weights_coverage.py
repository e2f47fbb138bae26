"""Monte Carlo coverage of the weighted estimate's intervals under unequal weights and clusters.

A finite population of ``M`` clusters of ``B`` people is drawn once per cell: each cluster's
shares of the three options from a Dirichlet with total concentration 19, so that each option's
indicator has an intra-class correlation of exactly 1/(19 + 1) = 0.05 (Dirichlet-multinomial),
the population's means (0.2, 0.5, 0.3).  Each person has a size ``v = exp(σ e + γ [answer = 0])``
(``e`` standard normal; γ = 0.7 makes the sampling informative: the people of option 0 are
under-sampled, so an unweighted estimate is biased), and is drawn with probability ∝ 1/v, its
weight ∝ v.  σ is solved per population so that the coefficient of variation of the sample's
weights is exactly the cell's (0.5 or 1.5): for a draw with probabilities ∝ 1/v_i the weights'
CV² is ``mean(v)·mean(1/v) − 1`` (one stage) or ``mean_c(S_c Σ_c v)/B² − 1`` with
``S_c = Σ_{i∈c} 1/v_i`` (two stages).

* **Not clustered**: n people drawn with replacement with probabilities ∝ 1/v (PPS with
  replacement); the design is the weights alone (each respondent its own cluster).
* **Clustered**: n/10 clusters drawn with replacement with equal probabilities, then 10 people
  in each with replacement with probabilities ∝ 1/v within the cluster; the design is the weights
  and the clusters (a cluster drawn twice counts as two: the with-replacement design that
  linearization assumes).

Each respondent's answer is randomized with k-ary randomized response at ε (``client.mechanism``'s
p and q, applied here by its definition: the true option with probability p, each other with q),
or reported as is (asked directly, p = 1), and :func:`deniable.estimators.weights.weighted_estimate`
gives the 95 % intervals.  A cell's coverage is the share of replicates whose interval holds the
population's share of option 0 (the sensitive one, 0.2) and, separately, the smallest coverage
over the three options; its Monte Carlo standard error is ``√(0.95 · 0.05 / reps)``.  A cell
falls short when its coverage is below 0.95 − 2 MC SE.  The unweighted column is the same
estimator with equal weights (and the same clusters), for contrast.  Usage::

    python scripts/weights_coverage.py              # 2,000 replicates per cell: 44 minutes on a shared machine
    python scripts/weights_coverage.py --reps 500   # a quick look (about 3 minutes)
    python scripts/weights_coverage.py --reps 500 --cv 1.5 --n 200   # only those cells

**The cross-tab** (``--crosstab``): the same population, clusters and weights, but each person
answers two questions, a row question of two options and a column question of three, their joint
shares ``JOINT`` (row 0, share 0.25, is the sensitive one and is under-sampled: γ on row 0); each
cluster's six joint shares come from a Dirichlet of total concentration 19 (ICC 0.05 for every
cell's indicator).  Both answers are randomized independently (ε per question, or a row asked
directly and the column randomized, or both asked directly), and
:func:`deniable.estimators.weights.weighted_crosstab` gives the conditional shares of the column
given the row with their 95 % intervals: for a randomized row the union of Fieller's interval and
Korn–Graubard's at the ratio's effective sample size, for a row asked directly Korn–Graubard's of
the row's domain.  Beside them, for contrast, the t interval on the
linearized ratio that the cross-tab gave before (``R ± t_df·se``, kept in [0, 1]).  Coverage: of
the conditional share of column option 2 given row 0 (0.2 of 0.25: the rare cell), and the
smallest over the six conditional shares::

    python scripts/weights_coverage.py --crosstab              # 2,000 replicates per cell

**Questions randomized by a design** (``--designed``): the same populations, clusters and weights,
each respondent's answer randomized through a design's realized matrix (each report drawn from
its answer's column of ``M``): a single choice's shares by
:func:`deniable.estimators.weights.weighted_design_estimate` — forced response on three answers
(Korn–Graubard through each report's affine map), Warner's design on answer 0 against the other
two (a binary design; a check-all question's tick is estimated the same way), a custom matrix
whose reports each mix several shares (the union of the t interval and Korn–Graubard's at the
estimate's effective sample size) — and the cross-tab's conditional shares by
:func:`deniable.estimators.weights.weighted_crosstab` with the two matrices (a Warner row and a
forced-response column; a row asked directly and the custom column, whose shares get the same union
on each row's domain).  Coverage of
option 0 (or of column 2 given row 0) and the smallest over the options (conditional shares)::

    python scripts/weights_coverage.py --designed              # 2,000 replicates per cell

**Raking with very unequal weights** (``--raking``): R ``survey``'s ``apipop`` (6,194 Californian
schools, read from R: ``data(api)``), samples of n schools drawn without replacement with
probabilities ∝ a size (successive sampling, as R's ``sample(prob = )``): ×1, ×10, ×20 for
elementary, high and middle schools (``stype`` E, H, M) and ×4 when the school did not meet its
schoolwide target (``sch.wide`` = No), each size raised to a power, the skew (1: the issue's cell;
0.5 milder, 1.5 harsher), weights ∝ 1/size, raked (:func:`deniable.estimators.weights.rake`) to the
population's ``stype`` and ``sch.wide`` margins.  Two shares asked directly (p = 1): ``awards`` = Yes
(0.6727) and ``api00`` > 850 (0.0788), each estimated by
:func:`deniable.estimators.weights.raked_estimate` — Korn and Graubard's interval at the calibration
variance on n − 1 degrees of freedom, joined with the exact interval at the raked weights' Kish
effective sample size — and, for contrast, by R's own recipe alone (``svyciprop(method = "beta")`` of
the ``rake()``d ``svydesign(ids = ~1)``: :func:`deniable.estimators.weights.korn_graubard` at the
calibration variance, n − 1 degrees of freedom).  A sample in which a raking category has no school
cannot be raked (refused by name) and is counted, not estimated.  ``--r-check N`` runs R itself on
the first N samples of each cell and prints the largest difference between its intervals and the
recipe's::

    python scripts/weights_coverage.py --raking --reps 3000               # the grid: n 100-1,000, skew 0.5-1.5
    python scripts/weights_coverage.py --raking --reps 3000 --n 200 --skew 1   # the acceptance cell
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import brentq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deniable.client import designs  # noqa: E402
from deniable.client.mechanism import resolve  # noqa: E402
from deniable.estimators.weights import (SamplingDesignError, korn_graubard, rake, raked_estimate,  # noqa: E402
                                         raked_mean, survey_design, weighted_crosstab, weighted_design_estimate,
                                         weighted_estimate)

K = 3
MEANS = np.array([0.2, 0.5, 0.3])
ICC = 0.05
GAMMA = 0.7
CLUSTERS, CLUSTER_SIZE = 2000, 40  # the population: 80,000 people
PER_CLUSTER = 10  # respondents drawn in each sampled cluster
NS = (200, 1000, 5000)
EPSILONS = (None, 4.0, 2.0, 1.0)
CVS = (0.5, 1.5)
NOMINAL = 0.95


def population(rng: np.random.Generator, cv: float, clustered: bool) -> dict:
    """A population with the module's ICC, and sizes whose sample weights have coefficient of variation ``cv``."""
    concentration = 1 / ICC - 1
    shares = rng.dirichlet(MEANS * concentration, size=CLUSTERS)
    cum = shares.cumsum(axis=1)
    u = rng.random((CLUSTERS, CLUSTER_SIZE))
    answers = (u[:, :, None] > cum[:, None, :]).sum(axis=2).clip(0, K - 1)  # M × B
    e = rng.standard_normal((CLUSTERS, CLUSTER_SIZE))
    informative = GAMMA * (answers == 0)

    def sizes(sigma):
        return np.exp(sigma * e + informative)

    def cv_squared(sigma):
        v = sizes(sigma)
        if clustered:
            return float(np.mean((1 / v).sum(axis=1) * v.sum(axis=1))) / CLUSTER_SIZE**2
        return float(np.mean(v) * np.mean(1 / v))

    sigma = brentq(lambda s: cv_squared(s) - 1 - cv**2, 0.0, 5.0, xtol=1e-12)
    v = sizes(sigma)
    truth = np.bincount(answers.ravel(), minlength=K) / answers.size
    return {"answers": answers, "v": v, "truth": truth, "sigma": sigma, "clustered": clustered,
            "icc": population_icc(answers == 0)}


def population_icc(indicator: np.ndarray) -> float:
    """The ANOVA estimate of the intra-class correlation of a 0/1 variable over equal clusters (M × B)."""
    m, b = indicator.shape
    y = indicator.astype(float)
    within = float(((y - y.mean(axis=1, keepdims=True)) ** 2).sum()) / (m * (b - 1))
    between = b * float(((y.mean(axis=1) - y.mean()) ** 2).sum()) / (m - 1)
    s2_between = (between - within) / b
    return s2_between / (s2_between + within)


def draw(pop: dict, n: int, rng: np.random.Generator):
    """One sample: the respondents' true answers, weights and cluster labels (or None)."""
    v = pop["v"]
    inv = 1 / v
    if pop["clustered"]:
        m = n // PER_CLUSTER
        chosen = rng.integers(0, CLUSTERS, size=m)
        cdf = np.cumsum(inv[chosen], axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((m, PER_CLUSTER))
        units = (u[:, :, None] > cdf[:, None, :]).sum(axis=2).clip(0, CLUSTER_SIZE - 1)
        rows = np.repeat(chosen, PER_CLUSTER)
        cols = units.ravel()
        # weight ∝ 1/(P(cluster) · P(unit | cluster)) ∝ S_c · v_i
        weights = inv[chosen].sum(axis=1).repeat(PER_CLUSTER) * v[rows, cols]
        return pop["answers"][rows, cols], weights, np.repeat(np.arange(m), PER_CLUSTER)
    flat_inv = inv.ravel()
    cdf = np.cumsum(flat_inv)
    idx = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right").clip(0, flat_inv.size - 1)
    return pop["answers"].ravel()[idx], v.ravel()[idx], None


def randomize(answers: np.ndarray, epsilon, rng: np.random.Generator) -> np.ndarray:
    """k-ary randomized response by its definition: keep with probability p, else any other option alike."""
    mech = resolve(K, epsilon)
    keep = rng.random(answers.size) < mech.p
    other = (answers + rng.integers(1, K, size=answers.size)) % K
    return np.where(keep, answers, other).astype(np.int64)


def cell(pop: dict, n: int, epsilon, reps: int, rng: np.random.Generator, *, unweighted: bool = True) -> dict:
    """Coverage of the 95 % intervals in one cell (module notes), over ``reps`` samples of ``pop``."""
    truth = pop["truth"]
    held = np.zeros((reps, K), dtype=bool)
    held_unweighted = np.zeros(reps, dtype=bool)
    kish, width = [], []
    for r in range(reps):
        answers, weights, clusters = draw(pop, n, rng)
        reports = randomize(answers, epsilon, rng)
        design = survey_design(weights, clusters=clusters)
        result = weighted_estimate(reports, epsilon, design, k=K, confidence=NOMINAL)
        held[r] = (result.ci_low <= truth) & (truth <= result.ci_high)
        kish.append(design.effective_n)
        width.append(result.ci_high[0] - result.ci_low[0])
        if unweighted:
            plain = weighted_estimate(reports, epsilon, survey_design(np.ones(n), clusters=clusters), k=K,
                                      confidence=NOMINAL)
            held_unweighted[r] = plain.ci_low[0] <= truth[0] <= plain.ci_high[0]
    coverage = held.mean(axis=0)
    return {"coverage": float(coverage[0]), "min_coverage": float(coverage.min()),
            "unweighted": float(held_unweighted.mean()) if unweighted else None,
            "mc_se": math.sqrt(NOMINAL * (1 - NOMINAL) / reps), "kish": float(np.mean(kish)),
            "width": float(np.mean(width))}


# ---------------------------------------------------------------- the cross-tab's conditional shares

JOINT = np.array([[0.125, 0.075, 0.05],  # row 0 (0.25): column given row 0 is (0.5, 0.3, 0.2)
                  [0.525, 0.15, 0.075]])  # row 1 (0.75): (0.7, 0.2, 0.1)
K_ROW, K_COL = JOINT.shape
CROSSTAB_EPSILONS = ((None, None), (None, 2.0), (4.0, 4.0), (2.0, 2.0), (1.0, 1.0))


def crosstab_population(rng: np.random.Generator, cv: float, clustered: bool) -> dict:
    """:func:`population` for two questions: each person's cell of ``JOINT`` (row·K_COL + column),
    cluster shares from a Dirichlet of total concentration 1/ICC − 1, sizes informative on row 0."""
    concentration = 1 / ICC - 1
    flat = JOINT.ravel()
    shares = rng.dirichlet(flat * concentration, size=CLUSTERS)
    cum = shares.cumsum(axis=1)
    u = rng.random((CLUSTERS, CLUSTER_SIZE))
    cells = (u[:, :, None] > cum[:, None, :]).sum(axis=2).clip(0, flat.size - 1)
    e = rng.standard_normal((CLUSTERS, CLUSTER_SIZE))
    informative = GAMMA * (cells // K_COL == 0)

    def cv_squared(sigma):
        v = np.exp(sigma * e + informative)
        if clustered:
            return float(np.mean((1 / v).sum(axis=1) * v.sum(axis=1))) / CLUSTER_SIZE**2
        return float(np.mean(v) * np.mean(1 / v))

    sigma = brentq(lambda s: cv_squared(s) - 1 - cv**2, 0.0, 5.0, xtol=1e-12)
    joint = np.bincount(cells.ravel(), minlength=flat.size).reshape(JOINT.shape) / cells.size
    return {"answers": cells, "v": np.exp(sigma * e + informative), "sigma": sigma, "clustered": clustered,
            "truth": joint / joint.sum(axis=1, keepdims=True), "icc": population_icc(cells == K_COL - 1)}


def randomize_k(answers: np.ndarray, k: int, epsilon, rng: np.random.Generator) -> np.ndarray:
    """:func:`randomize` for a question of ``k`` options."""
    mech = resolve(k, epsilon)
    keep = rng.random(answers.size) < mech.p
    other = (answers + rng.integers(1, k, size=answers.size)) % k
    return np.where(keep, answers, other).astype(np.int64)


def crosstab_cell(pop: dict, n: int, epsilons, reps: int, rng: np.random.Generator) -> dict:
    """Coverage of the conditional shares' 95 % intervals (the module's notes, ``--crosstab``)."""
    from scipy.stats import t as student_t

    truth = pop["truth"]
    held = np.zeros((reps, K_ROW, K_COL), dtype=bool)
    held_t = np.zeros((reps, K_ROW, K_COL), dtype=bool)
    width = []
    for r in range(reps):
        cells, weights, clusters = draw(pop, n, rng)
        rows = randomize_k(cells // K_COL, K_ROW, epsilons[0], rng)
        cols = randomize_k(cells % K_COL, K_COL, epsilons[1], rng)
        design = survey_design(weights, clusters=clusters)
        x = weighted_crosstab(rows, cols, *epsilons, design, k_row=K_ROW, k_col=K_COL, confidence=NOMINAL)
        held[r] = (x.conditional_ci_low <= truth) & (truth <= x.conditional_ci_high)
        half = student_t.ppf(0.5 + NOMINAL / 2, x.degrees_of_freedom) * x.conditional_std_error
        low = np.clip(x.conditional_estimate - half, 0, 1)
        high = np.clip(x.conditional_estimate + half, 0, 1)
        held_t[r] = (low <= truth) & (truth <= high)  # NaN (an empty row) does not hold
        width.append(x.conditional_ci_high[0, K_COL - 1] - x.conditional_ci_low[0, K_COL - 1])
    coverage, coverage_t = held.mean(axis=0), held_t.mean(axis=0)
    return {"coverage": float(coverage[0, K_COL - 1]), "min_coverage": float(coverage.min()),
            "t_coverage": float(coverage_t[0, K_COL - 1]), "t_min_coverage": float(coverage_t.min()),
            "width": float(np.mean(width))}


def crosstab_main(args) -> int:
    """The cross-tab's table (``--crosstab``)."""
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    mc_se = math.sqrt(NOMINAL * (1 - NOMINAL) / args.reps)
    floor = NOMINAL - 2 * mc_se
    print(f"weighted cross-tab ({K_ROW} x {K_COL}), 95% intervals of the column's shares given the row; "
          f"{args.reps:,} replicates per cell, Monte Carlo s.e. {mc_se:.4f}, floor 0.95 - 2 MC s.e. = {floor:.4f}; "
          f"seed {args.seed}")
    print(f"population {CLUSTERS * CLUSTER_SIZE:,} in {CLUSTERS:,} clusters of {CLUSTER_SIZE}; row 0 share "
          f"{JOINT[0].sum():g}, column given row 0: {', '.join(f'{x:g}' for x in JOINT[0] / JOINT[0].sum())}; "
          f"ICC {ICC:g}; informative sizes (gamma {GAMMA:g} on row 0); clustered samples: {PER_CLUSTER} per cluster")
    print(f"{'design':<13} {'CV':>4} {'n':>5} {'eps row/col':>11}  {'cov(2|0)':>8} {'min cov':>7} {'below?':>6}  "
          f"{'t cov(2|0)':>10} {'t min':>7} {'width(2|0)':>10}")
    short, short_t = [], []
    for clustered in (False, True):
        for cv in CVS:
            pop = crosstab_population(rng, cv, clustered)
            for n in NS:
                for epsilons in CROSSTAB_EPSILONS:
                    c = crosstab_cell(pop, n, epsilons, args.reps, rng)
                    below = c["min_coverage"] < floor
                    label = "clustered" if clustered else "not clustered"
                    eps = "/".join("direct" if e is None else f"{e:g}" for e in epsilons)
                    print(f"{label:<13} {cv:>4g} {n:>5} {eps:>11}  {c['coverage']:>8.4f} {c['min_coverage']:>7.4f} "
                          f"{'BELOW' if below else 'no':>6}  {c['t_coverage']:>10.4f} {c['t_min_coverage']:>7.4f} "
                          f"{c['width']:>10.3f}", flush=True)
                    if below:
                        short.append(f"{label}, CV {cv:g}, n {n}, eps {eps}")
                    if c["t_min_coverage"] < floor:
                        short_t.append(f"{label}, CV {cv:g}, n {n}, eps {eps}")
    print(f"\ncells below 0.95 - 2 MC s.e.: {len(short)}" + "".join(f"\n  {s}" for s in short))
    print(f"with the t interval on the linearized ratio: {len(short_t)}" + "".join(f"\n  {s}" for s in short_t))
    print("(cov(2|0): column option 2 given row 0, share 0.2; min cov: the smallest over the six conditional "
          "shares; t: the t interval on the linearized ratio, for contrast; width(2|0): mean interval width)")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


# ---------------------------------------------------------------- questions randomized by a design

FORCED = designs.forced(0.6, [0.2, 0.1, 0.1], ["a", "b", "c"])
WARNER = designs.warner(0.75, ["0", "other"])
MIXED = designs.custom([[0.6, 0.3, 0.2], [0.2, 0.5, 0.2], [0.2, 0.2, 0.6]], ["a", "b", "c"])  # no report affine in one share
DESIGNED_NS = (200, 1000)


def through(matrix: np.ndarray, answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each answer's report drawn from its column of the design's matrix."""
    cumulative = np.cumsum(matrix, axis=0)[:, answers].T
    return np.minimum((rng.random(answers.size)[:, None] > cumulative).sum(axis=1), matrix.shape[0] - 1)


def designed_cell(pop: dict, n: int, which: str, reps: int, rng: np.random.Generator) -> dict:
    """Coverage of a designed question's 95 % intervals (the module's notes, ``--designed``)."""
    held, width, floored = [], [], []
    first = K_COL - 1 if which.startswith("crosstab") else 0  # column 2 given row 0, or option 0
    for _ in range(reps):
        answers, weights, clusters = draw(pop, n, rng)
        sample = survey_design(weights, clusters=clusters)
        if which.startswith("crosstab"):
            row_design = WARNER if which == "crosstab warner x forced" else None
            col_design = FORCED if row_design is not None else MIXED
            rows, cols = answers // K_COL, answers % K_COL
            r1 = rows if row_design is None else through(row_design.matrix, rows, rng)
            x = weighted_crosstab(r1, through(col_design.matrix, cols, rng), None, None, sample, k_row=K_ROW,
                                  k_col=K_COL, confidence=NOMINAL,
                                  row_matrix=None if row_design is None else row_design.matrix,
                                  col_matrix=col_design.matrix)
            truth = pop["truth"]
            held.append(((x.conditional_ci_low <= truth) & (truth <= x.conditional_ci_high)).ravel())
            width.append(x.conditional_ci_high[0, first] - x.conditional_ci_low[0, first])
            floored.append(x.note is not None)
            continue
        design = {"forced": FORCED, "warner": WARNER, "custom": MIXED}[which]
        truth = pop["truth"] if design.k == K else np.array([pop["truth"][0], 1 - pop["truth"][0]])
        answers = answers if design.k == K else (answers != 0).astype(np.int64)
        result = weighted_design_estimate(through(design.matrix, answers, rng), design, sample, confidence=NOMINAL)
        held.append((np.asarray(result.ci_low) <= truth) & (truth <= np.asarray(result.ci_high)))
        width.append(result.ci_high[first] - result.ci_low[first])
        floored.append(bool(result.kish_floor[first]))
    coverage = np.mean(held, axis=0)
    return {"coverage": float(coverage[first]), "min_coverage": float(coverage.min()), "width": float(np.mean(width)),
            "floored": float(np.mean(floored))}


def designed_main(args) -> int:
    """The designed questions' table (``--designed``)."""
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    mc_se = math.sqrt(NOMINAL * (1 - NOMINAL) / args.reps)
    floor = NOMINAL - 2 * mc_se
    print(f"weighted estimates of questions randomized by a design, 95% intervals; {args.reps:,} replicates per cell, "
          f"Monte Carlo s.e. {mc_se:.4f}, floor 0.95 - 2 MC s.e. = {floor:.4f}; seed {args.seed}")
    print(f"{'design':<13} {'CV':>4} {'n':>5}  {'question':<26} {'cov':>7} {'min cov':>7} {'below?':>6} "
          f"{'width':>6} {'Kish set':>8}")
    short = []
    for clustered in (False, True):
        for cv in args.cv or CVS:
            pops = {"one": population(rng, cv, clustered), "two": crosstab_population(rng, cv, clustered)}
            for n in args.n or DESIGNED_NS:
                for which in ("forced", "warner", "custom", "crosstab warner x forced", "crosstab direct x custom"):
                    pop = pops["two" if which.startswith("crosstab") else "one"]
                    c = designed_cell(pop, n, which, args.reps, rng)
                    below = c["min_coverage"] < floor
                    label = "clustered" if clustered else "not clustered"
                    print(f"{label:<13} {cv:>4g} {n:>5}  {which:<26} {c['coverage']:>7.4f} {c['min_coverage']:>7.4f} "
                          f"{'BELOW' if below else 'no':>6} {c['width']:>6.3f} {c['floored']:>8.3f}", flush=True)
                    if below:
                        short.append(f"{label}, CV {cv:g}, n {n}, {which}")
    print(f"\ncells below 0.95 - 2 MC s.e.: {len(short)}" + "".join(f"\n  {s}" for s in short))
    print("(cov: option 0 (share 0.2; warner: answer 0 against the others), or column 2 given row 0 (0.2) for a "
          "cross-tab; min cov: the smallest over the options, or over the six conditional shares; width: the mean "
          "width of that first interval; Kish set: the share of samples where the exact interval at Kish's n widened "
          "it (a cross-tab: any of its intervals))")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


# ---------------------------------------------------------------- raking with very unequal weights

RAKING_NS = (100, 200, 500, 1000)
SKEWS = (0.5, 1.0, 1.5)
STYPE_SIZES = np.array([1.0, 10.0, 20.0])  # E, H, M
NOT_MET_SIZE = 4.0  # sch.wide = No
APIPOP_R = r"""
suppressMessages(library(survey))
data(api)
args <- commandArgs(trailingOnly = TRUE)
write.csv(data.frame(stype = apipop$stype, sch_wide = apipop$sch.wide, awards = apipop$awards,
                     api00 = apipop$api00), args[1], row.names = FALSE)
"""


def apipop(path: Path | None = None) -> dict:
    """R survey's ``apipop`` (written by Rscript to ``path``, or read from it when it exists): per school its
    ``stype`` (0 E, 1 H, 2 M), ``wide`` (0 No, 1 Yes) and the two outcomes as 0/1."""
    import csv
    import subprocess
    import tempfile

    if path is None or not Path(path).exists():
        target = Path(path) if path is not None else Path(tempfile.mkdtemp()) / "apipop.csv"
        script = target.with_suffix(".R")
        script.write_text(APIPOP_R, encoding="utf-8")
        subprocess.run(["Rscript", str(script), str(target)], check=True, capture_output=True)
        path = target
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {"stype": np.array(["EHM".index(r["stype"]) for r in rows]),
            "wide": np.array([0 if r["sch_wide"] == "No" else 1 for r in rows]),
            "awards": np.array([r["awards"] == "Yes" for r in rows], dtype=np.int64),
            "api850": np.array([int(r["api00"]) > 850 for r in rows], dtype=np.int64)}


RAKING_SHARES = ("awards", "api850")


def raking_sample(pop: dict, n: int, skew: float, rng: np.random.Generator):
    """One sample: the schools' rows, their weights (1/size) and the raking variables."""
    size = STYPE_SIZES[pop["stype"]] ** skew * np.where(pop["wide"] == 0, NOT_MET_SIZE ** skew, 1.0)
    rows = rng.choice(size.size, n, replace=False, p=size / size.sum())
    return rows, 1.0 / size[rows]


def raking_cell(pop: dict, n: int, skew: float, reps: int, rng: np.random.Generator, r_check: int = 0) -> dict:
    """Coverage of the raked shares' 95 % intervals (the module's notes, ``--raking``)."""
    margins = {"stype": np.bincount(pop["stype"], minlength=3) / pop["stype"].size,
               "wide": np.bincount(pop["wide"], minlength=2) / pop["wide"].size}
    truth = {name: float(pop[name].mean()) for name in RAKING_SHARES}
    held = {(name, how): [] for name in RAKING_SHARES for how in ("ours", "r")}
    width = {(name, how): [] for name in RAKING_SHARES for how in ("ours", "r")}
    floored = {name: [] for name in RAKING_SHARES}
    kish, refused, samples = [], 0, []
    for _ in range(reps):
        rows, w0 = raking_sample(pop, n, skew, rng)
        variables = {"stype": pop["stype"][rows], "wide": pop["wide"][rows]}
        try:
            raked = rake(w0, variables, margins)
        except SamplingDesignError:  # a category with no school in the sample: nothing to rake to
            refused += 1
            continue
        w = np.asarray(raked.weights)
        kish.append(raked.effective_n)
        if len(samples) < r_check:
            samples.append((rows, w0))
        for name in RAKING_SHARES:
            y = pop[name][rows]
            ours = raked_estimate(y, None, w, list(variables.values()), k=2)
            share, variance = raked_mean(y.astype(float), w, list(variables.values()))
            r_low, r_high = korn_graubard(share, variance, n, n - 1, NOMINAL)
            for how, (low, high) in (("ours", (ours.ci_low[1], ours.ci_high[1])), ("r", (r_low, r_high))):
                held[name, how].append(low <= truth[name] <= high)
                width[name, how].append(high - low)
            floored[name].append(bool(ours.kish_floor[1]))
    out = {"kish": float(np.mean(kish)), "kish_low": float(np.percentile(kish, 5)), "refused": refused,
           "estimated": len(kish), "truth": truth,
           "r_check": r_check_cell(pop, samples, margins) if samples else None}
    for key in held:
        out[key] = (float(np.mean(held[key])), float(np.mean(width[key])))
    for name in RAKING_SHARES:
        out[name, "floored"] = float(np.mean(floored[name]))
    return out


R_RAKE_CHECK = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
pop_stype <- data.frame(stype = 0:2, Freq = as.numeric(strsplit(args[2], ",")[[1]]))
pop_wide <- data.frame(wide = 0:1, Freq = as.numeric(strsplit(args[3], ",")[[1]]))
out <- c()
for (s in sort(unique(d$sample))) {
  one <- d[d$sample == s, ]
  des <- svydesign(ids = ~1, weights = ~w, data = one)
  des <- rake(des, list(~stype, ~wide), list(pop_stype, pop_wide), control = list(maxit = 1000, epsilon = 1e-10))
  for (v in c("awards", "api850")) {
    ci <- attr(svyciprop(as.formula(paste0("~", v)), des, method = "beta", level = 0.95), "ci")
    out <- c(out, ci[[1]], ci[[2]])
  }
}
cat(sprintf("%.15g", out), sep = "\n")
"""


def r_check_cell(pop: dict, samples: list, margins: dict) -> float:
    """The largest difference between R's own ``svyciprop(method = "beta")`` of the ``rake()``d design and
    the recipe (:func:`korn_graubard` at the calibration variance) over ``samples``."""
    import csv
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp())
    with open(folder / "samples.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["sample", "w", "stype", "wide", "awards", "api850"])
        for s, (rows, w0) in enumerate(samples):
            for row, weight in zip(rows, w0):
                writer.writerow([s, repr(float(weight)), pop["stype"][row], pop["wide"][row], pop["awards"][row],
                                 pop["api850"][row]])
    (folder / "check.R").write_text(R_RAKE_CHECK, encoding="utf-8")
    size = pop["stype"].size  # R rakes to the population's totals (the estimates do not depend on the scale)
    args = [",".join(repr(float(v) * size) for v in margins[name]) for name in ("stype", "wide")]
    done = subprocess.run(["Rscript", str(folder / "check.R"), str(folder / "samples.csv"), *args], check=True,
                          capture_output=True, text=True)
    r_ends = np.array([float(v) for v in done.stdout.split()]).reshape(len(samples), 2, 2)
    worst = 0.0
    for s, (rows, w0) in enumerate(samples):
        variables = {"stype": pop["stype"][rows], "wide": pop["wide"][rows]}
        w = np.asarray(rake(w0, variables, margins).weights)
        for i, name in enumerate(RAKING_SHARES):
            share, variance = raked_mean(pop[name][rows].astype(float), w, list(variables.values()))
            ends = korn_graubard(share, variance, rows.size, rows.size - 1, NOMINAL)
            worst = max(worst, float(np.max(np.abs(np.array(ends) - r_ends[s, i]))))
    return worst


def raking_main(args) -> int:
    """The raking table (``--raking``)."""
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    mc_se = math.sqrt(NOMINAL * (1 - NOMINAL) / args.reps)
    floor = NOMINAL - 2 * mc_se
    pop = apipop(args.apipop)
    print(f"raked shares of R survey's apipop ({pop['stype'].size:,} schools), 95% intervals; {args.reps:,} samples per "
          f"cell, Monte Carlo s.e. {mc_se:.4f}, floor 0.95 - 2 MC s.e. = {floor:.4f}; seed {args.seed}")
    print("sizes E/H/M 1/10/20 and x4 when sch.wide = No, each ^ skew; drawn without replacement with probability "
          "proportional to size, weights 1/size, raked to the stype and sch.wide margins")
    print(f"{'skew':>4} {'n':>5} {'Kish n':>7} {'5%':>5} {'refused':>7}  {'share':<8} {'ours':>7} {'width':>6} "
          f"{'Kish set':>8} {'below?':>6}  {'R':>7} {'width':>6} {'below?':>6}")
    short, short_r = [], []
    for skew in args.skew or SKEWS:
        for n in args.n or RAKING_NS:
            c = raking_cell(pop, n, skew, args.reps, rng, args.r_check)
            for name in RAKING_SHARES:
                (cov, wid), (r_cov, r_wid) = c[name, "ours"], c[name, "r"]
                below, below_r = cov < floor, r_cov < floor
                label = f"{name} {c['truth'][name]:.3f}"
                print(f"{skew:>4g} {n:>5} {c['kish']:>7.1f} {c['kish_low']:>5.1f} {c['refused']:>7}  {label:<14} "
                      f"{cov:>7.4f} {wid:>6.3f} {c[name, 'floored']:>8.3f} {'BELOW' if below else 'no':>6}  "
                      f"{r_cov:>7.4f} {r_wid:>6.3f} {'BELOW' if below_r else 'no':>6}", flush=True)
                if below:
                    short.append(f"skew {skew:g}, n {n}, {name}")
                if below_r:
                    short_r.append(f"skew {skew:g}, n {n}, {name}")
            if c["r_check"] is not None:
                print(f"      R's own svyciprop on the first {args.r_check} samples: largest difference from the "
                      f"recipe {c['r_check']:.2e}", flush=True)
    print(f"\ncells below 0.95 - 2 MC s.e.: {len(short)}" + "".join(f"\n  {s}" for s in short))
    print(f"with R's interval alone: {len(short_r)}" + "".join(f"\n  {s}" for s in short_r))
    print("(Kish n: the raked weights' mean Kish effective sample size, 5%: its 5th percentile; refused: samples with "
          "a raking category empty, not estimated (coverage is over the others); ours: raked_estimate's interval, "
          "Kish set: the share of samples where the exact interval at Kish's n widened it; R: svyciprop(method = "
          "'beta') of the raked design alone; width: mean interval width)")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="replicates per cell (default 2,000)")
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--crosstab", action="store_true",
                        help="the cross-tab's conditional shares instead of one question's shares")
    parser.add_argument("--designed", action="store_true",
                        help="questions randomized by a randomized-response design (shares and a cross-tab)")
    parser.add_argument("--cv", type=float, action="append", choices=CVS,
                        help="only this coefficient of variation of the weights (repeatable; default all)")
    parser.add_argument("--n", type=int, action="append", choices=sorted({*NS, *RAKING_NS}),
                        help="only this sample size (repeatable)")
    parser.add_argument("--raking", action="store_true",
                        help="raked shares of R survey's apipop under very unequal weights (the module's notes)")
    parser.add_argument("--skew", type=float, action="append", help="--raking: only this skew (repeatable)")
    parser.add_argument("--apipop", type=Path, help="--raking: apipop as a CSV (written there by Rscript if missing)")
    parser.add_argument("--r-check", type=int, default=0,
                        help="--raking: run R's svyciprop on the first N samples of each cell and compare")
    args = parser.parse_args(argv)
    if args.raking:
        return raking_main(args)
    if args.crosstab:
        return crosstab_main(args)
    if args.designed:
        return designed_main(args)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    mc_se = math.sqrt(NOMINAL * (1 - NOMINAL) / args.reps)
    floor = NOMINAL - 2 * mc_se
    print(f"weighted k-ary RR (k = {K}), 95% Korn-Graubard intervals on the weights' Satterthwaite degrees of "
          f"freedom; {args.reps:,} replicates per cell, "
          f"Monte Carlo s.e. {mc_se:.4f}, floor 0.95 - 2 MC s.e. = {floor:.4f}; seed {args.seed}")
    print(f"population {CLUSTERS * CLUSTER_SIZE:,} in {CLUSTERS:,} clusters of {CLUSTER_SIZE}; shares "
          f"{', '.join(f'{m:g}' for m in MEANS)}; ICC {ICC:g}; informative sizes (gamma {GAMMA:g}); "
          f"clustered samples: {PER_CLUSTER} per cluster")
    print(f"{'design':<13} {'CV':>4} {'ICC':>6} {'n':>5} {'eps':>6}  {'cov(0)':>7} {'min cov':>7} {'below?':>6}  "
          f"{'unweighted':>10}  {'Kish n':>7} {'width(0)':>8}")
    short = []
    for clustered in (False, True):
        for cv in args.cv or CVS:
            pop = population(rng, cv, clustered)
            for n in args.n or NS:
                for epsilon in EPSILONS:
                    c = cell(pop, n, epsilon, args.reps, rng)
                    below = c["min_coverage"] < floor
                    label = "clustered" if clustered else "not clustered"
                    eps = "direct" if epsilon is None else f"{epsilon:g}"
                    print(f"{label:<13} {cv:>4g} {pop['icc']:>6.3f} {n:>5} {eps:>6}  {c['coverage']:>7.4f} "
                          f"{c['min_coverage']:>7.4f} {'BELOW' if below else 'no':>6}  {c['unweighted']:>10.4f}  "
                          f"{c['kish']:>7.1f} {c['width']:>8.3f}", flush=True)
                    if below:
                        short.append(f"{label}, CV {cv:g}, n {n}, eps {eps}")
    print(f"\ncells below 0.95 - 2 MC s.e.: {len(short)}" + ("".join(f"\n  {s}" for s in short)))
    print("(cov(0): option 0, share 0.2; min cov: the smallest over the three options; unweighted: option 0 with "
          "equal weights; Kish n: mean effective sample size of the weights; width(0): mean interval width)")
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
