"""Cross-tabulation of two protected questions answered by the same respondents.

The model
---------
Question 1 (k1 options) and question 2 (k2 options) are randomized independently, with
``P[r, a] = P(report r | true a) = p`` if r = a else q.  With Π the true joint distribution,
the report pairs are Multinomial(n, Λ) with ``Λ = P1 Π P2ᵀ``.

An exact, conservative interval for each joint cell
---------------------------------------------------
Fix a cell (i, j).  Whether a report names option i depends on the truth only through whether
the truth is i (probability p1 if it is, q1 if not), so collapsing each question to "i or not",
"j or not" is exact: the reports ``A = (i, j)``, ``B = (i, ≠j)``, ``C = (≠i, j)`` have
probabilities (``d = p − q``, ``R_i``, ``C_j`` the true row and column shares)

    Λ_A = q1q2 + q1d2·C_j + d1q2·R_i + d1d2·Π_ij
    Λ_B = P(report i) − Λ_A = q1 + d1R_i − Λ_A
    Λ_C = q2 + d2C_j − Λ_A,

and eliminating ``R_i`` and ``C_j``

    Π_ij = [(1 − q1 − q2) Λ_A − q2 Λ_B − q1 Λ_C + q1q2] / (d1 d2).          (1)

Each of Λ_A, Λ_B, Λ_C is the probability of a Binomial(n, ·) count with a known range
(``[q1q2, p1p2]``, ``[q1(1 − p2), p1(1 − q2)]``, ``[(1 − p1)q2, (1 − q1)p2]``), so each has an
exact Feldman–Cousins interval (:mod:`deniable.estimators.exact`) at level ``1 − α_x``.  With
``α_A + α_B + α_C = α`` all three hold together with probability at least 1 − α (Bonferroni),
and then (1), increasing in Λ_A and decreasing in Λ_B, Λ_C, puts Π_ij between

    [(1 − q1 − q2)Λ_A⁻ − q2Λ_B⁺ − q1Λ_C⁺ + q1q2]/(d1d2)  and  [(1 − q1 − q2)Λ_A⁺ − q2Λ_B⁻ − q1Λ_C⁻ + q1q2]/(d1d2),

clipped to [0, 1]: coverage ≥ 1 − α for every cell at every n and every Π, with no
approximation.  The split of α depends on the design only (so the argument holds): it
minimizes the large-sample width ``Σ_x w_x z(α_x)`` with ``w_x`` = coefficient × binomial sd
at the uniform Π, i.e. ``φ(z_x) ∝ w_x``.  The price is width: 1.0–1.4 × the Wald interval in
``scripts/crosstab_coverage.py``, whose 20,000-replicate Monte Carlo table is in docs/statistics.md.

A randomized-response design on either question
-----------------------------------------------
A question randomized by a design of :mod:`deniable.client.designs` has its own matrix ``M``
(``M[r, t] = P(report r | true t)``) instead of P; randomized independently of the other question,
the pair's reports are again Multinomial(n, Λ) with ``vec Λ = (M1 ⊗ M2) vec Π`` — the joint
matrix is the Kronecker product (the rest of these notes, with P replaced by M).  So
``Π̂ = M1⁻¹ (C/n) M2⁻¹ᵀ`` is unbiased (``E Π̂ = M1⁻¹ M1 Π M2ᵀ M2⁻¹ᵀ = Π``), the consistent
estimate is the same EM and Newton with M1, M2, and the covariance uses ``A = M1⁻¹ ⊗ M2⁻¹``.
The exact intervals need only that whether report i is made depends on the truth only through
whether the truth is i: report i has probability ``p_i`` under answer i and ``q_i < p_i`` under
every other (:func:`deniable.server.survey.questions.choice.per_option`: binary designs whose report
is likelier under its own answer, and forced response).  Then (1) holds for cell (i, j) with
``(p_i, q_i, p_j, q_j)``, and each cell's bounds are computed with its own pair (the α split, at
the uniform Π, still depends on the design only).  A design without that form has no cross-tab
(the caller refuses it).

Conditional distributions
-------------------------
``θ_j|i = Π_ij / R_i``.  Collapsing row i against column j gives the two cells (i, j) and
(i, ≠j) through the four reports (i, j), (i, ≠j), (≠i, j), (≠i, ≠j); (1) for each cell (for
"≠j" the column channel has ``p2' = 1 − q2``, ``q2' = 1 − p2``) bounds both at once when the
four binomial intervals hold together (Bonferroni over four, split as above), and
``θ = a/(a + b)`` is increasing in a = Π_ij and decreasing in b = Π_i,≠j, so
``[a⁻/(a⁻ + b⁺), a⁺/(a⁺ + b⁻)]`` covers θ with probability ≥ 1 − α.  When the exact interval
for the row's share R_i (from the row's report count) reaches 0 — the data cannot rule out
that nobody is in that row — the row's conditionals are not estimated: NaN, interval [0, 1],
and the result's ``note`` says "too few respondents".  Otherwise the conditional estimate is
the ratio of the consistent (maximum-likelihood) joint estimates.

The consistent joint estimate
-----------------------------
The constrained maximum-likelihood estimate on the simplex.  EM (Kairouz et al. 2016) is
``Π ← Π ⊙ P1ᵀ(C/Λ)P2 / n``; it is accelerated by SQUAREM (Varadhan & Roland 2008: two EM steps
r, v, extrapolation ``Π − 2αr + α²v`` with ``α = −‖r‖/‖v‖``, kept non-negative and never
lowering the likelihood) and finished by equality-constrained Newton steps on the support, with
an active-set check of the Karush–Kuhn–Tucker conditions: ``(P1ᵀ(C/Λ)P2)_ab / n`` equals 1 where
``Π_ab > 0`` and is at most 1 where ``Π_ab = 0``, to 1e-9.  If that is not reached the result
says so (``converged`` False, and ``note``).

Many 2 × 2 tables at once (the pairs of a check-all question's options, which share n and the
mechanism) are fitted together by :func:`fit_joints`: the mechanism's inverse applied to the report
shares where that is a distribution (then it is the MLE, proved there), otherwise the best of the
stationary points of the simplex's four facets and the maxima of its six edges, each a closed form
or a one-dimensional root found for every table at once, checked against the same KKT conditions;
:func:`crosstabs` gives each table's :func:`crosstab` from it.
"""

from __future__ import annotations

import dataclasses

import functools
import math

import numpy as np
from scipy.special import ndtr

from deniable.client.mechanism import resolve
from deniable.errors import FieldError

from .exact import belt
from .marginal import estimate
from .result import CrosstabResult, frozen
from .validate import check_confidence, check_counts

KKT_TOLERANCE = 1e-9
SQUAREM_ITERATIONS = 300
NEWTON_ROUNDS = 12


def mechanism_matrix(k: int, p: float, q: float) -> np.ndarray:
    """Return ``P`` with ``P[i, j] = P(report i | true j)``: p on the diagonal, q elsewhere."""
    return np.full((k, k), q) + (p - q) * np.eye(k)


def mechanism_inverse(k: int, p: float, q: float) -> np.ndarray:
    """Return ``P⁻¹ = (I − q·11ᵀ)/(p − q)`` (exact, since ``p + (k − 1) q = 1``)."""
    return (np.eye(k) - q) / (p - q)


# ---------------------------------------------------------------------------- the MLE


def _em_step(pi, counts, p_row, p_col, n):
    lam = p_row @ pi @ p_col.T
    ratio = np.divide(counts, lam, out=np.zeros_like(lam), where=counts > 0)
    return pi * (p_row.T @ ratio @ p_col) / n


def _log_likelihood(pi, counts, p_row, p_col) -> float:
    lam = p_row @ pi @ p_col.T
    positive = counts > 0
    if np.any(lam[positive] <= 0):
        return -math.inf
    return float(np.sum(counts[positive] * np.log(lam[positive])))


def _kkt_gap(pi, counts, p_row, p_col, n) -> float:
    """How far Π is from the KKT conditions of the constrained MLE (0 at the optimum)."""
    lam = p_row @ pi @ p_col.T
    ratio = np.divide(counts, lam, out=np.zeros_like(lam), where=counts > 0)
    score = p_row.T @ ratio @ p_col / n  # 1 on the support, ≤ 1 off it, at the optimum
    support = pi > 1e-12
    gap = max(0.0, float(score.max()) - 1.0)
    if support.any():
        gap = max(gap, float(np.abs(score[support] - 1.0).max()))
    return gap


def _squarem(pi, counts, p_row, p_col, n, iterations):
    """SQUAREM (Varadhan & Roland 2008, scheme 3) around the EM map, monotone in the likelihood."""
    ll = _log_likelihood(pi, counts, p_row, p_col)
    steps = 0
    for _ in range(iterations):
        one = _em_step(pi, counts, p_row, p_col, n)
        two = _em_step(one, counts, p_row, p_col, n)
        steps += 2
        r, v = one - pi, two - 2 * one + pi
        norm_v = math.sqrt(float(np.sum(v * v)))
        if norm_v == 0:
            pi = two
            break
        alpha = min(-math.sqrt(float(np.sum(r * r))) / norm_v, -1.0)
        candidate = pi - 2 * alpha * r + alpha * alpha * v
        while np.any(candidate < 0) and alpha < -1.0:  # back toward α = −1, which is two EM steps
            alpha = min((alpha - 1.0) / 2, -1.0)
            candidate = pi - 2 * alpha * r + alpha * alpha * v
        candidate = np.maximum(candidate, 0.0)
        candidate = _em_step(candidate / candidate.sum(), counts, p_row, p_col, n)
        steps += 1
        ll_candidate = _log_likelihood(candidate, counts, p_row, p_col)
        if not ll_candidate >= ll - 1e-12 * abs(ll):
            candidate, ll_candidate = two, _log_likelihood(two, counts, p_row, p_col)
        pi, ll = candidate, ll_candidate
        if _kkt_gap(pi, counts, p_row, p_col, n) < 1e-6:
            break
    return pi, steps


def _newton(pi, counts, design, n):
    """Equality-constrained Newton steps on the support of Π, with an active-set KKT check."""
    c = counts.ravel()
    x = pi.ravel().copy()
    for _ in range(NEWTON_ROUNDS):
        support = x > 1e-12
        for _ in range(60):
            a = design[:, support]
            lam = a @ x[support]
            weight = np.divide(c, lam, out=np.zeros_like(lam), where=c > 0)
            gradient = a.T @ weight
            curvature = np.divide(c, lam * lam, out=np.zeros_like(lam), where=c > 0)
            hessian = -(a.T * curvature) @ a - 1e-12 * np.eye(a.shape[1])
            m = a.shape[1]
            kkt = np.zeros((m + 1, m + 1))
            kkt[:m, :m], kkt[:m, m], kkt[m, :m] = hessian, 1.0, 1.0
            try:
                step = np.linalg.solve(kkt, np.concatenate([-gradient, [0.0]]))[:m]
            except np.linalg.LinAlgError:
                break
            before = float(c @ np.log(np.where(c > 0, lam, 1.0)))
            t = 1.0
            while t > 1e-12:  # stay inside the simplex and do not lower the likelihood
                trial = x[support] + t * step
                if np.all(trial > 0):
                    lam_t = a @ trial
                    if np.all(lam_t[c > 0] > 0) and float(c @ np.log(np.where(c > 0, lam_t, 1.0))) >= before - 1e-12 * abs(before):
                        break
                t /= 2
            x[support] = x[support] + t * step
            if np.max(np.abs(t * step)) < 1e-15:
                break
        lam = design @ x
        score = design.T @ np.divide(c, lam, out=np.zeros_like(lam), where=c > 0) / n
        outside = (x <= 1e-12) & (score > 1 + KKT_TOLERANCE)
        if outside.any():  # a component held at 0 should not be: let it in
            x[int(np.argmax(np.where(outside, score, -np.inf)))] = 1e-6
            x = np.maximum(x, 0.0) / np.maximum(x, 0.0).sum()
            continue
        x = np.where(x > 1e-12, x, 0.0)
        x /= x.sum()
        inside = x > 0
        if not inside.any() or float(np.abs(score[inside] - 1).max()) < KKT_TOLERANCE:
            break
    return x.reshape(pi.shape)


def fit_joint(joint_counts: np.ndarray, p_row: np.ndarray, p_col: np.ndarray) -> tuple[np.ndarray, bool, int]:
    """Return ``(Π̃, converged, EM steps)``: the constrained MLE of the joint distribution.

    SQUAREM-accelerated EM, then Newton on the support (module notes); ``converged`` is whether
    the KKT conditions hold to ``KKT_TOLERANCE``.
    """
    counts = joint_counts.astype(float)
    n = counts.sum()
    pi = np.full(counts.shape, 1.0 / counts.size)
    pi, steps = _squarem(pi, counts, p_row, p_col, n, SQUAREM_ITERATIONS)
    pi = _newton(pi, counts, np.kron(p_row, p_col), n)
    gap = _kkt_gap(pi, counts, p_row, p_col, n)
    if gap >= KKT_TOLERANCE:  # rare: more SQUAREM, then Newton again
        more, extra = _squarem(pi, counts, p_row, p_col, n, 20 * SQUAREM_ITERATIONS)
        pi, steps = _newton(more, counts, np.kron(p_row, p_col), n), steps + extra
        gap = _kkt_gap(pi, counts, p_row, p_col, n)
    return pi, bool(gap < KKT_TOLERANCE), steps


# ---------------------------------------------------------------------------- many 2 × 2 tables at once


SIMPLEX_EDGES = tuple((a, b) for a in range(4) for b in range(a + 1, 4))  # the simplex's 6 edges


def _log_likelihoods(lam, counts):
    """``Σ_x c_x log λ_x`` over the last axis; −inf where a counted report has ``λ_x ≤ 0`` or λ is NaN."""
    counted = counts > 0
    safe = np.where(counted & (lam > 0), lam, 1.0)
    out = np.where(counted, counts * np.log(safe), 0.0).sum(axis=-1)
    bad = (counted & ~(lam > 0)).any(axis=-1)
    return np.where(bad, -np.inf, out)


def _decreasing_root(function, low, high, start, rounds=80):
    """Roots of decreasing functions, one per element, by Newton's method kept inside a bracket
    (bisection when a step would leave it).  ``function(x)`` returns ``(value, derivative)``."""
    x = start.copy()
    for _ in range(rounds):
        value, slope = function(x)
        low, high = np.where(value > 0, x, low), np.where(value > 0, high, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = x - value / slope
        step = np.where((newton > low) & (newton < high), newton, 0.5 * (low + high))
        step = np.where(value == 0, x, step)
        done = np.abs(step - x) <= 4e-16 * np.maximum(np.abs(x), 1.0)
        x = step
        if done.all():
            break
    return x


def _edge_maxima(counts, design):
    """The maximum of ``Σ c_x log λ_x`` on each edge ``(1 − t) e_a + t e_b`` of the simplex: (m, 6, 4).

    Along an edge the log-likelihood is concave in t, so its slope is decreasing: the maximum is at
    t = 0 when the slope there is ≤ 0, at t = 1 when it is ≥ 0 there, and at the slope's root
    otherwise.
    """
    starts = design[:, [a for a, _ in SIMPLEX_EDGES]].T  # (6, 4): λ at each edge's first vertex
    deltas = design[:, [b for _, b in SIMPLEX_EDGES]].T - starts
    c = counts[:, None, :]
    counted = c > 0

    def slope(t):
        lam = starts + t[..., None] * deltas
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(counted, c / np.where(counted, lam, 1.0), 0.0)
            value = np.nan_to_num((ratio * deltas).sum(axis=-1), nan=0.0)
            curvature = -(ratio * ratio / np.where(counted, c, 1.0) * deltas * deltas).sum(axis=-1)
        return value, curvature

    shape = (counts.shape[0], len(SIMPLEX_EDGES))
    at_start, at_end = slope(np.zeros(shape))[0] <= 0, slope(np.ones(shape))[0] >= 0
    t = _decreasing_root(slope, np.zeros(shape), np.ones(shape), np.full(shape, 0.5))
    t = np.where(at_start, 0.0, np.where(at_end, 1.0, np.clip(t, 0.0, 1.0)))
    points = np.zeros((*shape, 4))
    for e, (a, b) in enumerate(SIMPLEX_EDGES):
        points[:, e, a], points[:, e, b] = 1 - t[:, e], t[:, e]
    return points


def _facet_points(counts, design):
    """The stationary point of ``Σ c_x log λ_x`` in the plane of each facet ``π_t = 0`` of the
    simplex, where one exists: (m, 4, 4), NaN where there is none in the facet.

    In report space the facet's plane is ``{Σ_x λ_x = 1, w·λ = 0}`` with ``w`` row t of ``A⁻¹``.
    Lagrange: ``c_x/λ_x = μ + ν w_x`` for every report counted, ``0 = μ + ν w_x`` for every other
    one; multiplying by λ_x and adding gives ``μ = n`` on the plane.  With every count positive,
    ``λ_x = c_x/(n + ν w_x)`` where ν is the root of ``Σ_x c_x w_x/(n + ν w_x) = 0`` (decreasing
    in ν, between the poles that keep every ``n + ν w_x > 0``); then ``Σ λ_x = 1`` follows.  With one
    report x₀ uncounted, ``ν = −n/w_x₀``: ``λ_x = c_x w_x₀ / (n (w_x₀ − w_x))`` and
    ``λ_x₀ = 1 − Σ_{x≠x₀} λ_x``.  With two or more uncounted the gradient never vanishes in the
    plane (the maximum over the facet is on an edge).  The plane's log-likelihood is concave, so a
    stationary point is its maximum over the facet when it lies in the facet (π = A⁻¹λ ≥ 0).
    """
    m = counts.shape[0]
    w = np.linalg.inv(design)  # row t: π_t = w·λ
    n = counts.sum(axis=-1)[:, None, None]
    c = np.broadcast_to(counts[:, None, :], (m, 4, 4))
    uncounted = (counts == 0).sum(axis=-1)
    lam = np.full((m, 4, 4), np.nan)
    full = uncounted == 0
    if full.any():
        cf, nf = c[full], n[full]
        with np.errstate(divide="ignore"):
            low = np.where(w > 0, -nf / np.where(w > 0, w, 1.0), -np.inf).max(axis=-1)
            high = np.where(w < 0, -nf / np.where(w < 0, w, 1.0), np.inf).min(axis=-1)
        bracketed = np.isfinite(low) & np.isfinite(high)
        low, high = np.where(bracketed, low, -1.0), np.where(bracketed, high, 1.0)

        def balance(nu):
            denominator = nf + nu[..., None] * w
            return (cf * w / denominator).sum(axis=-1), -(cf * w * w / (denominator * denominator)).sum(axis=-1)

        with np.errstate(divide="ignore", invalid="ignore"):
            nu = _decreasing_root(balance, low, high, np.zeros(low.shape))
            lam[full] = np.where(bracketed[..., None], cf / (nf + nu[..., None] * w), np.nan)
    single = uncounted == 1
    if single.any():
        cs, ns = c[single], n[single]
        x0 = np.argmin(counts[single], axis=-1)
        w0 = w[:, x0].T[..., None]  # (m', 4 facets, 1): w_x₀ of each facet
        with np.errstate(divide="ignore", invalid="ignore"):
            part = cs * w0 / (ns * (w0 - w))
            part[np.arange(part.shape[0]), :, x0] = 0.0
            part[np.arange(part.shape[0]), :, x0] = 1.0 - part.sum(axis=-1)
        lam[single] = part
    finite = np.isfinite(lam).all(axis=-1)
    lam = np.where(finite[..., None], lam, 1.0)
    pi = lam @ w.T
    pi[:, np.arange(4), np.arange(4)] = 0.0
    inside = finite & (lam > 0).all(axis=-1) & (pi >= -1e-12).all(axis=-1)
    pi = np.clip(pi, 0.0, None)
    with np.errstate(invalid="ignore"):
        pi = pi / pi.sum(axis=-1, keepdims=True)
    return np.where(inside[..., None], pi, np.nan)


def _kkt_gaps(pi, counts, design):
    """:func:`_kkt_gap` of each row of a stack: ``pi`` and ``counts`` are (m, cells)."""
    n = counts.sum(axis=-1)
    lam = pi @ design.T
    counted = counts > 0
    ratio = np.where(counted, counts / np.where(counted, lam, 1.0), 0.0)
    score = ratio @ design / n[:, None]
    outside = np.maximum(score.max(axis=-1) - 1.0, 0.0)
    inside = np.where(pi > 1e-12, np.abs(score - 1.0), 0.0).max(axis=-1)
    return np.maximum(outside, inside)


def fit_joints(joint_counts, p_row: np.ndarray, p_col: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(Π̃, converged, EM steps)`` for a stack of 2 × 2 tables ``joint_counts[m, i, j]``
    sharing one pair of mechanisms: :func:`fit_joint` of each table, all at once.

    Notes
    -----
    With ``A = P_row ⊗ P_col`` (4 × 4, invertible, columns summing to 1) and ``c`` a table's counts
    (``n = Σ c``), the log-likelihood is ``ℓ(π) = Σ_x c_x log (Aπ)_x`` on the simplex.

    *Closed form where the maximum is interior.*  Over all report distributions λ the multinomial
    log-likelihood ``Σ c_x log λ_x`` is maximized only by ``λ = c/n`` (Agresti 2013, §1.3.2: Gibbs'
    inequality).  If ``π̂ = A⁻¹ c/n`` has no negative entry it is in the simplex (``1ᵀπ̂ = 1ᵀc/n = 1``,
    since ``1ᵀA = 1ᵀ`` gives ``1ᵀA⁻¹ = 1ᵀ``) and ``Aπ̂ = c/n``: no π does better, and no other π does
    as well (A is one-to-one), so π̂ is the constrained MLE.  This is the estimator that inverts the
    mechanism (Warner 1965; Kairouz, Bonawitz & Ramage 2016), exact whenever it is a distribution.

    *Otherwise the maximum is on the boundary*, in the relative interior of one facet ``π_t = 0`` or on
    an edge (the 3-simplex's boundary is its four facets, a facet's is its three edges).  ℓ is concave,
    so each facet's maximum, where interior to it, is the stationary point of ℓ in its plane
    (:func:`_facet_points`: a one-dimensional root, or a closed form), and each edge's maximum is
    where ℓ's slope along it changes sign (:func:`_edge_maxima`).  The MLE is the candidate with the
    largest ℓ.  Every table's answer is then checked against the KKT conditions of :func:`fit_joint`
    (Boyd & Vandenberghe 2004, §5.5.3: sufficient for a concave ℓ) to ``KKT_TOLERANCE``; a table that
    fails them (rounding at a degenerate optimum) is fitted by :func:`fit_joint` itself.  ``EM steps``
    is 0 for the tables fitted here.

    References
    ----------
    .. [1] A. Agresti, "Categorical Data Analysis", 3rd ed., Wiley (2013).
    .. [2] S. L. Warner, "Randomized response", JASA 60 (1965) 63–69.
    .. [3] S. Boyd, L. Vandenberghe, "Convex Optimization", Cambridge (2004).
    """
    table = np.asarray(joint_counts, dtype=float)
    m = table.shape[0]
    if table.shape[1:] != (2, 2):
        raise FieldError(f"fit_joints takes a stack of 2 × 2 tables, got shape {table.shape}", "joint_counts")
    counts = table.reshape(m, 4)
    design = np.kron(p_row, p_col)
    n = counts.sum(axis=-1)
    if (n <= 0).any():
        raise FieldError("fit_joints needs at least one report in every table", "joint_counts")
    pi = (counts / n[:, None]) @ np.linalg.inv(design).T
    boundary = np.flatnonzero(~(pi >= 0).all(axis=-1))
    if boundary.size:
        c = counts[boundary]
        candidates = np.concatenate([_facet_points(c, design), _edge_maxima(c, design)], axis=1)
        scores = _log_likelihoods(np.nan_to_num(candidates, nan=0.0) @ design.T, c[:, None, :])
        scores = np.where(np.isnan(candidates).any(axis=-1), -np.inf, scores)
        pi[boundary] = candidates[np.arange(boundary.size), np.argmax(scores, axis=1)]
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum(axis=-1, keepdims=True)
    converged = _kkt_gaps(pi, counts, design) < KKT_TOLERANCE
    steps = np.zeros(m, dtype=np.int64)
    for i in np.flatnonzero(~converged):  # the reference fit, for the rare table the search misses
        fitted, converged[i], steps[i] = fit_joint(table[i], p_row, p_col)
        pi[i] = fitted.ravel()
    return pi.reshape(m, 2, 2), converged, steps


# ---------------------------------------------------------------------------- exact intervals


def alpha_split(weights, alpha: float) -> np.ndarray:
    """Split α over binomial intervals so that ``φ(z_x) ∝ w_x`` (minimum large-sample width).

    Weights of 0 get α_x = 0 (their interval does not enter).  Depends on the design only, so each
    split is computed once per process (a design's cross-tabs, and every pair of a check-all
    question, share it).
    """
    weights = np.asarray(weights, dtype=float)
    return np.array(_alpha_split(tuple(weights.ravel().tolist()), weights.shape, float(alpha))).reshape(weights.shape)


@functools.lru_cache(maxsize=256)
def _alpha_split(weights: tuple, shape: tuple, alpha: float) -> tuple:
    """:func:`alpha_split` of hashable arguments, its answer as a tuple (cached)."""
    weights = np.array(weights, dtype=float).reshape(shape)
    live = weights > 0
    out = np.zeros(weights.shape)
    w = weights[live] / weights[live].max()

    def total(scale):  # Σ α_x with φ(z_x) = scale·w_x
        density = np.minimum(scale * w, 1 / math.sqrt(2 * math.pi))
        zs = np.sqrt(np.maximum(-2 * np.log(density * math.sqrt(2 * math.pi)), 0.0))
        return 2 * (1 - ndtr(zs)), zs

    low, high = 0.0, 1 / math.sqrt(2 * math.pi)
    for _ in range(100):
        mid = 0.5 * (low + high)
        if total(mid)[0].sum() > alpha:
            high = mid
        else:
            low = mid
    out[live] = total(low)[0]
    out = out * (alpha / out.sum()) if out.sum() > alpha else out
    return tuple(out.ravel().tolist())


def _report_ranges(p1, q1, p2, q2):
    """Ranges of the probabilities of the reports A = (i, j), B = (i, ≠j), C = (≠i, j)."""
    return ((q1 * q2, p1 * p2), (q1 * (1 - p2), p1 * (1 - q2)), ((1 - p1) * q2, (1 - q1) * p2))


def _binomial_interval(counts, n, lower, upper, level):
    """Exact (Feldman–Cousins) interval for the probability of a Binomial(n, ·) count in [lower, upper]."""
    if level >= 1:
        return np.full(np.shape(counts), lower), np.full(np.shape(counts), upper)
    return belt(n, lower, upper, level).interval(counts)


def _cell_bounds(a, b, c, n, design, alphas):
    """Bounds (1) on Π_ij from report counts a = (i, j), b = (i, ≠j), c = (≠i, j) (arrays).

    ``design`` is ``(p1, q1, p2, q2)``; ``alphas`` the α of each report's exact interval.
    """
    p1, q1, p2, q2 = design
    d1, d2 = p1 - q1, p2 - q2
    (ra, rb, rc) = _report_ranges(p1, q1, p2, q2)
    a_lo, a_hi = _binomial_interval(a, n, *ra, 1 - alphas[0])
    b_lo, b_hi = _binomial_interval(b, n, *rb, 1 - alphas[1])
    c_lo, c_hi = _binomial_interval(c, n, *rc, 1 - alphas[2])
    scale = 1 - q1 - q2
    low = (scale * a_lo - q2 * b_hi - q1 * c_hi + q1 * q2) / (d1 * d2)
    high = (scale * a_hi - q2 * b_lo - q1 * c_lo + q1 * q2) / (d1 * d2)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def _uniform_weights(row, col, r, c):
    """``w_x`` = coefficient × binomial sd of each report in (1) when the row and column shares
    are r and c and Π = r·c (the uniform Π: design only, never the data)."""
    p1, q1, p2, q2 = row[0], row[1], col[0], col[1]
    d1, d2 = p1 - q1, p2 - q2
    lam_a = q1 * q2 + q1 * d2 * c + d1 * q2 * r + d1 * d2 * r * c
    lam_b = q1 + d1 * r - lam_a
    lam_c = q2 + d2 * c - lam_a
    sd = np.sqrt([lam * (1 - lam) for lam in (lam_a, lam_b, lam_c)])
    return np.array([1 - q1 - q2, q2, q1]) * sd


def joint_intervals(counts, row, col, confidence):
    """Exact conservative intervals (module notes, (1)) for every joint cell of ``counts[..., i, j]``.

    ``row`` and ``col`` are ``(p, q)`` of the two mechanisms.  Vectorized over leading axes (the
    Monte Carlo script passes many tables at once).
    """
    counts = np.asarray(counts, dtype=np.int64)
    k1, k2 = counts.shape[-2:]
    n = int(counts[(0,) * (counts.ndim - 2)].sum())
    row_reports = counts.sum(axis=-1, keepdims=True)
    col_reports = counts.sum(axis=-2, keepdims=True)
    alphas = alpha_split(_uniform_weights(row, col, 1 / k1, 1 / k2), 1 - confidence)
    return _cell_bounds(counts, row_reports - counts, col_reports - counts, n, (*row, *col), alphas)


def conditional_intervals(counts, row, col, confidence):
    """Exact conservative intervals for ``θ_j|i = Π_ij / R_i`` (module notes), vectorized like
    :func:`joint_intervals`."""
    counts = np.asarray(counts, dtype=np.int64)
    k1, k2 = counts.shape[-2:]
    n = int(counts[(0,) * (counts.ndim - 2)].sum())
    p1, q1 = row
    p2, q2 = col
    row_reports = counts.sum(axis=-1, keepdims=True)
    col_reports = counts.sum(axis=-2, keepdims=True)
    a = counts  # (i, j)
    b = row_reports - counts  # (i, ≠j)
    c = col_reports - counts  # (≠i, j)
    d = n - a - b - c  # (≠i, ≠j)
    # four binomials: A, B, C for the cell (i, j) and D joins for (i, ≠j), whose (1) uses B as its
    # "A", A as its "B" and D as its "C", with the column channel p2' = 1 − q2, q2' = 1 − p2
    weights_here = _uniform_weights(row, col, 1 / k1, 1 / k2)
    weights_other = _uniform_weights(row, (1 - q2, 1 - p2), 1 / k1, 1 - 1 / k2)
    weights = np.array([weights_here[0] + weights_other[1], weights_here[1] + weights_other[0],
                        weights_here[2], weights_other[2]])
    alphas = alpha_split(weights, 1 - confidence)
    here = _cell_bounds(a, b, c, n, (p1, q1, p2, q2), alphas[[0, 1, 2]])
    other = _cell_bounds(b, a, d, n, (p1, q1, 1 - q2, 1 - p2), alphas[[1, 0, 3]])
    with np.errstate(invalid="ignore", divide="ignore"):
        low = here[0] / (here[0] + other[1])
        high = here[1] / (here[1] + other[0])
    low = np.where(np.isfinite(low), low, 0.0)
    high = np.where(np.isfinite(high), high, 1.0)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def per_cell(function, counts, row_pq, col_pq, confidence, rows_only=False):
    """Apply a cell-wise interval ``function`` (:func:`joint_intervals`, :func:`conditional_intervals`)
    with each row option's ``(p_i, q_i)`` and each column option's ``(p_j, q_j)`` (module notes, "A
    randomized-response design"): cell (i, j) of ``function(counts, row_pq[i], col_pq[j])``."""
    counts = np.asarray(counts, dtype=np.int64)
    k1, k2 = counts.shape[-2:]
    low, high = np.zeros(counts.shape), np.ones(counts.shape)
    for i in range(k1):
        for j in range(k2):
            lo, hi = function(counts, row_pq[i], col_pq[j], confidence)
            low[..., i, j], high[..., i, j] = lo[..., i, j], hi[..., i, j]
    return low, high


def row_share_low(counts, row, confidence):
    """The exact lower bound of each row's true share R_i from its report count (0: maybe empty)."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts[(0,) * (counts.ndim - 2)].sum())
    p1, q1 = row
    low, _ = belt(n, q1, p1, confidence).interval(counts.sum(axis=-1))
    return np.clip((low - q1) / (p1 - q1), 0.0, 1.0)


# ---------------------------------------------------------------------------- the public function


def _side(k, epsilon, design, reports, confidence):
    """One question's ``(matrix, inverse, per-option (p, q), marginal result, realized ε)``."""
    if design is None:
        mech = resolve(k, epsilon)
        return (mechanism_matrix(k, mech.p, mech.q), mechanism_inverse(k, mech.p, mech.q),
                [(mech.p, mech.q)] * k, estimate(reports, epsilon, confidence=confidence), mech.epsilon)
    from .designs import estimate_design

    if design.k_reports != k or design.k != k:
        raise FieldError(f"the design has {design.k_reports} reports of {design.k} answers; the table has {k}", "design")
    m = design.matrix
    return m, np.linalg.inv(m), option_channels(own_reports(design)[0]), \
        estimate_design(np.asarray(reports, dtype=np.int64), design, confidence=confidence), design.epsilon


def own_reports(design):
    """``(design, swapped)``: a two-report design whose each report is likelier under the *other*
    answer — the crosswise model at a prevalence below ½, whose "same" is likelier under "No" — with
    its two reports swapped (``swapped`` True), else the design as it is.  A report's label is
    arbitrary: swapping two reports changes no estimate of the answers, and gives each report the
    form the exact intervals need (likelier under its own answer); its counts are swapped with it
    (:func:`own_counts`)."""
    if design is not None and design.k == design.k_reports == 2:
        w = design.weights
        if w[0][0] < w[0][1] and w[1][1] < w[1][0]:
            return dataclasses.replace(design, weights=(w[1], w[0]), reports=tuple(reversed(design.reports))), True
    return design, False


def own_counts(counts, row_design, col_design) -> np.ndarray:
    """The joint report counts (the last two axes: row and column reports) in :func:`own_reports`' order."""
    counts = np.asarray(counts)
    if own_reports(row_design)[1]:
        counts = np.flip(counts, axis=-2)
    if own_reports(col_design)[1]:
        counts = np.flip(counts, axis=-1)
    return counts


def option_channels(design) -> list[tuple[float, float]]:
    """Each report i's ``(p_i, q_i)``: its probability under answer i and under every other answer,
    or FieldError (``design``) when it is not one number under every other answer, below ``p_i`` (module notes)."""
    weights = np.array(design.weights, dtype=np.int64)
    out = []
    for i in range(design.k):
        others = np.delete(weights[i], i)
        # one unit apart is "equally": each column is realized on its own (largest remainders), so the
        # forced share of report i may be realized as w or w + 1 in 2^32 under different answers (a
        # forced design with shares of 0.1); q_i is then their mean, within 2^-32 (2.3e-10) of each
        if others.max() - others.min() > 1 or weights[i, i] <= others.max():
            raise FieldError(f"the {design.name} design's report {i + 1} is not likelier under its own answer than "
                             "under any other, equally: no exact cross-tab interval", "design")
        out.append((float(design.matrix[i, i]), float(others.mean() / 2**32)))
    return out


def crosstab(joint_counts, epsilon_row, epsilon_col, *, confidence=0.95, row_design=None,
             col_design=None) -> CrosstabResult:
    """Estimate the joint and conditional distributions of two protected questions.

    Parameters
    ----------
    joint_counts : array_like, shape (k1, k2)
        ``joint_counts[i, j]`` is the number of respondents who reported option ``i`` to the
        row question and option ``j`` to the column question (both randomized).
    epsilon_row, epsilon_col : float or None
        Declared ε of the two questions (None: asked directly); the privacy cost of the pair
        is their sum.
    confidence : float, default 0.95
        Level of every (pointwise) interval.
    row_design, col_design : deniable.client.designs.Design, optional
        A question randomized by a design instead (its report i stored as option i), of the form
        the exact intervals need: report i has one probability ``p_i`` under answer i and one
        ``q_i < p_i`` under every other (module notes, "A randomized-response design"; else
        FieldError).  That question's ε argument is then ignored: the design's realized ε counts,
        infinite when it is not ε-LDP.

    Returns
    -------
    CrosstabResult
        ``epsilon`` is the realized ``ε_row + ε_col``; ``row`` and ``col`` are the marginal
        :class:`EstimateResult` (exact intervals); ``method`` is "exact"; ``converged`` and
        ``note`` say whether the consistent estimate's fit converged and which rows were too
        small for conditionals (``row_estimable``).

    Notes
    -----
    The two questions are randomized independently, so the joint report probabilities are
    ``vec Λ = (P1 ⊗ P2) vec Π`` with ``P[i, j] = p`` if ``i = j`` else ``q``.  Hence

    * ``joint_estimate = P1⁻¹ (C/n) P2⁻¹ᵀ`` is unbiased (it may leave [0, 1]);
    * ``joint_consistent`` is the constrained MLE on the simplex: SQUAREM-accelerated EM and
      Newton steps, checked against the KKT conditions (module notes);
    * ``joint_std_error`` from ``Cov(vec Π̂) = A (diag λ − λλᵀ) Aᵀ / n``, ``A = P1⁻¹ ⊗ P2⁻¹``
      (the exact multinomial covariance), at the fitted λ of the consistent estimate;
    * joint intervals are exact and conservative: Bonferroni over three Feldman–Cousins
      intervals for report probabilities, mapped through the identity (1) of the module notes —
      coverage ≥ ``confidence`` for every cell at every n, by construction;
    * ``conditional_estimate[i, j] = Π̃[i, j] / Σ_j Π̃[i, j]`` (column given row) from the
      consistent joint, with delta-method standard errors and exact conservative intervals
      (module notes); a row whose share cannot be told from 0 gets NaN and [0, 1] instead.

    References
    ----------
    .. [1] P. Kairouz, K. Bonawitz, D. Ramage, "Discrete distribution estimation under local
       privacy", ICML 2016.
    .. [2] T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for
       frequency estimation", USENIX Security 2017.
    .. [3] R. Varadhan, C. Roland, "Simple and globally convergent methods for accelerating
       the convergence of any EM algorithm", Scandinavian Journal of Statistics 35 (2008).
    .. [4] G. J. Feldman, R. D. Cousins, "Unified approach to the classical statistical
       analysis of small signals", Phys. Rev. D 57 (1998) 3873.
    .. [5] C. E. Bonferroni, "Teoria statistica delle classi e calcolo delle probabilità" (1936).

    Examples
    --------
    >>> c = crosstab([[300, 100], [100, 500]], 2.0, 2.0)
    >>> c.joint_estimate.shape, round(float(c.joint_estimate.sum()), 6), c.method, c.converged
    ((2, 2), 1.0, 'exact', True)
    """
    counts = check_counts(joint_counts, name="joint_counts", ndim=2)
    confidence = check_confidence(confidence)
    k1, k2 = counts.shape
    sides = [_side(k1, epsilon_row, row_design, counts.sum(axis=1), confidence),
             _side(k2, epsilon_col, col_design, counts.sum(axis=0), confidence)]
    (p1, inv1, pq1, row, eps1), (p2, inv2, pq2, col, eps2) = sides
    n = int(counts.sum())
    shape = (k1, k2)
    nan = np.full(shape, np.nan)
    epsilon = eps1 + eps2
    if n == 0:
        zeros, ones = np.zeros(shape), np.ones(shape)
        return CrosstabResult(
            n=0, k_row=k1, k_col=k2, epsilon=epsilon,
            confidence=confidence, joint_estimate=frozen(nan), joint_consistent=frozen(nan),
            joint_std_error=frozen(nan), joint_ci_low=frozen(zeros), joint_ci_high=frozen(ones),
            conditional_estimate=frozen(nan), conditional_std_error=frozen(nan),
            conditional_ci_low=frozen(zeros), conditional_ci_high=frozen(ones), row=row, col=col,
            row_estimable=frozen(np.zeros(k1, dtype=bool), dtype=bool),
            note="no respondent answered both questions: nothing to estimate",
        )
    unbiased = inv1 @ (counts / n) @ inv2.T
    fitted, converged, steps = fit_joint(counts, p1, p2)
    lam = (p1 @ fitted @ p2.T).ravel()
    a = np.kron(inv1, inv2)
    cov = a @ (np.diag(lam) - np.outer(lam, lam)) @ a.T / n
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None)).reshape(shape)
    designed = row_design is not None or col_design is not None
    if designed:  # each cell with its options' own (p, q) (module notes, "A randomized-response design")
        own = own_counts(counts, row_design, col_design)  # each report likelier under its own answer
        low, high = per_cell(joint_intervals, own, pq1, pq2, confidence)
        estimable = np.array([row_share_low(own, pq1[i], confidence)[i] > 0 for i in range(k1)])
    else:
        mechs = pq1[0], pq2[0]
        low, high = joint_intervals(counts, *mechs, confidence)
        estimable = row_share_low(counts, mechs[0], confidence) > 0
    # conditional of column given row: θ_ij = Π_ij / R_i, R_i = Σ_j Π_ij
    row_mass = fitted.sum(axis=1)
    mass = np.where(row_mass > 0, row_mass, 1.0)
    theta = fitted / mass[:, None]
    grad = np.zeros((k1 * k2, k1 * k2))  # d θ_ij / d Π_ab (only a = i contributes)
    for i in range(k1):
        for j in range(k2):
            for b in range(k2):
                grad[i * k2 + j, i * k2 + b] = ((j == b) - theta[i, j]) / mass[i]
    cov_theta = grad @ cov @ grad.T
    se_theta = np.sqrt(np.clip(np.diag(cov_theta), 0.0, None)).reshape(shape)
    if designed:
        cond_low, cond_high = per_cell(conditional_intervals, own, pq1, pq2, confidence)
    else:
        cond_low, cond_high = conditional_intervals(counts, *mechs, confidence)
    hidden = ~estimable | (row_mass <= 0)
    theta[hidden], se_theta[hidden], cond_low[hidden], cond_high[hidden] = np.nan, np.nan, 0.0, 1.0
    notes = []
    if not converged:
        notes.append(f"the consistent estimate's fit did not converge in {steps:,} EM steps and Newton "
                     f"polishing (KKT conditions not met to {KKT_TOLERANCE:g}): joint_consistent and the "
                     f"conditional estimates are approximate")
    if hidden.any():
        rows = ", ".join(str(i) for i in np.flatnonzero(hidden))
        notes.append(f"too few respondents in row{'s' if hidden.sum() > 1 else ''} {rows} to estimate "
                     f"the conditional distribution (its share cannot be told from 0): no estimate, "
                     f"interval [0, 1]")
    return CrosstabResult(
        n=n, k_row=k1, k_col=k2, epsilon=epsilon,
        confidence=confidence, joint_estimate=frozen(unbiased), joint_consistent=frozen(fitted),
        joint_std_error=frozen(se), joint_ci_low=frozen(low), joint_ci_high=frozen(high),
        conditional_estimate=frozen(theta), conditional_std_error=frozen(se_theta),
        conditional_ci_low=frozen(cond_low), conditional_ci_high=frozen(cond_high), row=row, col=col,
        converged=converged, iterations=steps, row_estimable=frozen(~hidden, dtype=bool),
        note="; ".join(notes),
    )


def crosstabs(joint_counts, epsilon_row, epsilon_col, *, confidence=0.95, row_design=None,
              col_design=None) -> list[CrosstabResult]:
    """:func:`crosstab` of each 2 × 2 table of a stack ``joint_counts[m, i, j]``, all at once.

    The tables must share their number of reports n (the pairs of options of one check-all question
    do) and the two mechanisms (or designs).  Every field equals :func:`crosstab`'s, up to rounding:
    the consistent estimate is :func:`fit_joints`' (the same maximum, to ``KKT_TOLERANCE``), the exact
    intervals read the same Feldman–Cousins belts once for the whole stack (their α split depends on
    the design only), and the marginal results are computed once per distinct report count.
    ``iterations`` is the EM steps of the tables that :func:`fit_joints` handed to :func:`fit_joint`
    (0 for the others).

    Examples
    --------
    >>> [c.converged for c in crosstabs([[[300, 100], [100, 500]], [[20, 380], [380, 220]]], 2.0, 2.0)]
    [True, True]
    """
    tables = np.asarray(joint_counts)
    if tables.ndim != 3 or tables.shape[1:] != (2, 2):
        raise FieldError(f"joint_counts must be a stack of 2 × 2 tables, got shape {tables.shape}", "joint_counts")
    confidence = check_confidence(confidence)
    m = tables.shape[0]
    if m == 0:
        return []
    tables = check_counts(tables.reshape(2 * m, 2), name="joint_counts", ndim=2).reshape(m, 2, 2)
    totals = tables.sum(axis=(1, 2))
    n = int(totals[0])
    if n == 0 or (totals != n).any():
        return [crosstab(t, epsilon_row, epsilon_col, confidence=confidence, row_design=row_design,
                         col_design=col_design) for t in tables]
    sides: dict = {}

    def side(epsilon, design, reports):  # the marginal of one option's report counts, once each
        key = (epsilon, id(design), tuple(reports.tolist()))
        if key not in sides:
            sides[key] = _side(2, epsilon, design, reports, confidence)
        return sides[key]

    rows = [side(epsilon_row, row_design, r) for r in tables.sum(axis=2)]
    cols = [side(epsilon_col, col_design, c) for c in tables.sum(axis=1)]
    (p1, inv1, pq1, _, eps1), (p2, inv2, pq2, _, eps2) = rows[0], cols[0]
    counts = tables.astype(float)
    unbiased = inv1 @ (counts / n) @ inv2.T
    fitted, converged, steps = fit_joints(tables, p1, p2)
    lam = (p1 @ fitted @ p2.T).reshape(m, 4)
    a = np.kron(inv1, inv2)
    cov = a @ (lam[:, :, None] * np.eye(4) - lam[:, :, None] * lam[:, None, :]) @ a.T / n
    se = np.sqrt(np.clip(np.diagonal(cov, axis1=1, axis2=2), 0.0, None)).reshape(m, 2, 2)
    if row_design is not None or col_design is not None:
        own = own_counts(tables, row_design, col_design)  # each report likelier under its own answer
        low, high = per_cell(joint_intervals, own, pq1, pq2, confidence)
        estimable = np.stack([row_share_low(own, pq1[i], confidence)[:, i] > 0 for i in range(2)], axis=1)
        cond_low, cond_high = per_cell(conditional_intervals, own, pq1, pq2, confidence)
    else:
        low, high = joint_intervals(tables, pq1[0], pq2[0], confidence)
        estimable = row_share_low(tables, pq1[0], confidence) > 0
        cond_low, cond_high = conditional_intervals(tables, pq1[0], pq2[0], confidence)
    row_mass = fitted.sum(axis=2)
    mass = np.where(row_mass > 0, row_mass, 1.0)
    theta = fitted / mass[:, :, None]
    grad = np.zeros((m, 4, 4))  # d θ_ij / d Π_ab (only a = i contributes), as in crosstab
    for i in range(2):
        for j in range(2):
            for b in range(2):
                grad[:, i * 2 + j, i * 2 + b] = ((j == b) - theta[:, i, j]) / mass[:, i]
    cov_theta = grad @ cov @ grad.transpose(0, 2, 1)
    se_theta = np.sqrt(np.clip(np.diagonal(cov_theta, axis1=1, axis2=2), 0.0, None)).reshape(m, 2, 2)
    hidden = ~estimable | (row_mass <= 0)
    theta[hidden], se_theta[hidden], cond_low[hidden], cond_high[hidden] = np.nan, np.nan, 0.0, 1.0
    # one read-only array per field, each table's result a view of its slice (read-only too)
    unbiased, fitted, se, low, high, theta, se_theta, cond_low, cond_high = (
        frozen(x) for x in (unbiased, fitted, se, low, high, theta, se_theta, cond_low, cond_high))
    shown = frozen(~hidden, dtype=bool)
    out = []
    for t in range(m):
        notes = []
        if not converged[t]:
            notes.append(f"the consistent estimate's fit did not converge in {int(steps[t]):,} EM steps and Newton "
                         f"polishing (KKT conditions not met to {KKT_TOLERANCE:g}): joint_consistent and the "
                         f"conditional estimates are approximate")
        if hidden[t].any():
            which = ", ".join(str(i) for i in np.flatnonzero(hidden[t]))
            notes.append(f"too few respondents in row{'s' if hidden[t].sum() > 1 else ''} {which} to estimate "
                         f"the conditional distribution (its share cannot be told from 0): no estimate, "
                         f"interval [0, 1]")
        out.append(CrosstabResult(
            n=n, k_row=2, k_col=2, epsilon=eps1 + eps2, confidence=confidence,
            joint_estimate=unbiased[t], joint_consistent=fitted[t], joint_std_error=se[t], joint_ci_low=low[t],
            joint_ci_high=high[t], conditional_estimate=theta[t], conditional_std_error=se_theta[t],
            conditional_ci_low=cond_low[t], conditional_ci_high=cond_high[t], row=rows[t][3], col=cols[t][3],
            converged=bool(converged[t]), iterations=int(steps[t]), row_estimable=shown[t], note="; ".join(notes),
        ))
    return out
