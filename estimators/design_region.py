"""Intervals for designs with more than two answers that no binomial maps to one share.

A design's report counts are Multinomial(n, λ) with ``λ = M π`` (:mod:`.designs`).  For forced
response and binary designs one report's count is binomial in an affine function of one share,
and the exact binomial intervals map through it.  Any other design with k > 2 answers (a custom
matrix, the unrelated question with several answers) mixes several shares in every report, so
those intervals do not apply.  This module gives such designs intervals with a **guaranteed**
coverage, by a simultaneous confidence region for λ mapped through the design:

1. For each of the R reports, the Clopper–Pearson interval ``[l_r, u_r]`` for ``λ_r`` at level
   ``1 − α/R`` (the exact binomial interval: ``l_r`` the ``α/2R`` quantile of
   Beta(x_r, n − x_r + 1), ``u_r`` the ``1 − α/2R`` quantile of Beta(x_r + 1, n − x_r);
   Clopper & Pearson 1934).  Each count is Binomial(n, λ_r), so each interval misses with
   probability at most α/R, and by Bonferroni's inequality the box ``B = ∏ [l_r, u_r]`` holds
   the true λ with probability at least ``1 − α``, whatever π and n.
2. The shares that could have made a λ in the box: ``S = {π ∈ Δ : l ≤ M π ≤ u}`` (Δ the simplex).
   Whenever ``λ = Mπ ∈ B``, the true π lies in S, so the interval
   ``[min_{π ∈ S} π_t, max_{π ∈ S} π_t]`` for each answer t covers π_t with probability at least
   ``1 − α`` — simultaneously for all answers.  Each end is a linear program in k variables,
   solved exactly by enumerating the polytope's vertices (or, for many answers, by HiGHS through
   :func:`scipy.optimize.linprog`).
3. When S is empty (the box missed every λ the design can make: possible only when the box
   missed the true λ, so it costs no coverage), the interval is the whole [0, 1].

This is conservative: the exact coverage, summed over every multinomial outcome
(``scripts/design_coverage.py``, tests/unit/test_design_region.py), is at least the nominal level at
every π, and usually well above it, since the region is simultaneous over the R reports and over
the k answers.  It is offered only where no sharper exact interval exists.

References
----------
.. [1] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in the
   case of the binomial", Biometrika 26 (1934) 404–413.
.. [2] C. P. Quesenberry, D. C. Hurst, "Large sample simultaneous confidence intervals for
   multinomial proportions", Technometrics 6 (1964) 191–195 (simultaneous regions for λ).
"""

from __future__ import annotations

import numpy as np

METHOD = "simultaneous exact region"  # the DesignResult's method, in words


def report_box(counts, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson intervals ``(l, u)`` for every report's probability at level ``1 − α/R``
    (module notes, step 1)."""
    from scipy.special import betaincinv

    x = np.asarray(counts, dtype=float)
    n = x.sum()
    tail = (1.0 - confidence) / (2 * len(x))
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(x > 0, betaincinv(x, n - x + 1, tail), 0.0)
        high = np.where(x < n, betaincinv(x + 1, n - x, 1.0 - tail), 1.0)
    return low, high


def region_intervals(counts, matrix, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous intervals ``(low, high)`` for every share π_t, of coverage at least ``confidence``
    (module notes, steps 2–3)."""
    return box_intervals(*report_box(counts, confidence), matrix)


def rounded_region_intervals(shares, n: int, matrix, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Intervals for every share π_t that contain :func:`region_intervals` of every whole count vector
    within one of ``n · shares`` (each count rounded down or up): the region of the box whose lower
    ends are the Clopper–Pearson lower ends at the counts rounded down and whose upper ends are the
    upper ends at the counts rounded up.  Both ends of a Clopper–Pearson interval increase with the
    count, so that box holds the box of every such count vector, and a larger box a larger region
    (module notes, step 2) — unless a count vector's own region is empty, when its intervals are
    [0, 1] (step 3): the box of lower ends at the counts rounded up and upper ends at the counts
    rounded down lies in every such vector's box, so when its region is empty too the intervals are
    [0, 1] (a rounding whose region is not empty then only makes them wider than need be).  For
    weighted report shares (:mod:`.weights`): the exact region of the same shares at ``n`` unweighted
    respondents, when ``n · shares`` is not whole; at whole counts it is :func:`region_intervals`."""
    from scipy.special import betaincinv

    x = np.clip(np.asarray(shares, dtype=float), 0.0, 1.0) * n
    nearest = np.round(x)
    whole = np.abs(x - nearest) <= 1e-9 * n
    down = np.where(whole, nearest, np.floor(x))
    up = np.where(whole, nearest, np.ceil(x))
    tail = (1.0 - confidence) / (2 * len(x))
    with np.errstate(divide="ignore", invalid="ignore"):
        low_box = np.where(down > 0, betaincinv(down, n - down + 1, tail), 0.0)
        high_box = np.where(up < n, betaincinv(up + 1, n - up, 1.0 - tail), 1.0)
        inner_low = np.where(up > 0, betaincinv(up, n - up + 1, tail), 0.0)
        inner_high = np.where(down < n, betaincinv(down + 1, n - down, 1.0 - tail), 1.0)
    k = np.asarray(matrix).shape[1]
    if np.any(down != up) and not _nonempty(inner_low, inner_high, matrix):
        return np.zeros(k), np.ones(k)
    return box_intervals(low_box, high_box, matrix)


def _nonempty(low_box, high_box, matrix) -> bool:
    """Whether some shares π make report probabilities ``M π`` in the box (a linear program's feasibility)."""
    from scipy.optimize import linprog

    m = np.asarray(matrix, dtype=float)
    k = m.shape[1]
    a = np.vstack([m, -m, -np.eye(k)])
    b = np.concatenate([np.asarray(high_box, dtype=float), -np.asarray(low_box, dtype=float), np.zeros(k)])
    return linprog(np.zeros(k), A_ub=a, b_ub=b, A_eq=np.ones((1, k)), b_eq=[1.0], method="highs").status == 0


def box_intervals(low_box, high_box, matrix) -> tuple[np.ndarray, np.ndarray]:
    """The intervals of the shares that could have made report probabilities in the box
    ``[low_box, high_box]`` (module notes, steps 2–3)."""
    m = np.asarray(matrix, dtype=float)
    low_box, high_box = np.asarray(low_box, dtype=float), np.asarray(high_box, dtype=float)
    k = m.shape[1]
    # S = {π : A π ≤ b, Σ π = 1}: M π ≤ u, −M π ≤ −l, −π ≤ 0
    a = np.vstack([m, -m, -np.eye(k)])
    b = np.concatenate([high_box, -low_box, np.zeros(k)])
    vertices = _vertices(a, b)
    if vertices is None:
        return _linear_programs(a, b, k)
    if not len(vertices):  # S is empty (step 3)
        return np.zeros(k), np.ones(k)
    return np.clip(vertices.min(axis=0), 0.0, 1.0), np.clip(vertices.max(axis=0), 0.0, 1.0)


MAX_VERTEX_SYSTEMS = 20_000  # beyond: a linear program per end instead of enumerating the vertices


def _vertices(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Every vertex of the bounded polytope ``{π : a π ≤ b, Σ π = 1}`` (None when there are too many
    candidate systems to enumerate).  A vertex has k − 1 of the inequalities active besides the
    equality; each choice is one k × k linear system, solved all at once, and the solutions that
    satisfy every inequality (within 1e-12) are the vertices.  The extremes of a linear function
    over a bounded polytope are attained at vertices, so their coordinate-wise min and max are the
    linear programs' optima."""
    from itertools import combinations
    from math import comb

    rows, k = a.shape
    if comb(rows, k - 1) > MAX_VERTEX_SYSTEMS:
        return None
    chosen = np.array(list(combinations(range(rows), k - 1)), dtype=np.intp).reshape(-1, k - 1)
    systems = np.concatenate([a[chosen], np.ones((len(chosen), 1, k))], axis=1)
    rhs = np.concatenate([b[chosen], np.ones((len(chosen), 1))], axis=1)
    solvable = np.abs(np.linalg.det(systems)) > 1e-12
    points = np.linalg.solve(systems[solvable], rhs[solvable][..., None])[..., 0]
    feasible = np.all(points @ a.T <= b + 1e-12, axis=1)
    return points[feasible]


def _linear_programs(a: np.ndarray, b: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The same ends by two linear programs per share (HiGHS), for designs with many answers."""
    from scipy.optimize import linprog

    ends = np.empty((2, k))
    for t in range(k):
        for side, sign in ((0, 1.0), (1, -1.0)):
            objective = np.zeros(k)
            objective[t] = sign
            fit = linprog(objective, A_ub=a, b_ub=b, A_eq=np.ones((1, k)), b_eq=[1.0], method="highs")
            if fit.status != 0:  # S is empty (step 3)
                return np.zeros(k), np.ones(k)
            ends[side, t] = sign * fit.fun
    return np.clip(ends[0], 0.0, 1.0), np.clip(ends[1], 0.0, 1.0)
