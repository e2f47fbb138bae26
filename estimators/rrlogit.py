"""The randomized-response multinomial logit: likelihood, its derivatives, and the fit.

Model.  Respondent i has covariates ``x_i`` (a row of the design matrix, intercept first) and a
true answer ``Y_i ∈ {0, …, k − 1}`` with ``P(Y_i = j | x_i) = π_ij = exp(η_ij) / Σ_l exp(η_il)``,
``η_ij = x_i · β_j`` and ``β_ref = 0`` for the reference option (a binary logit when k = 2).  The
report ``R_i`` goes through the k-ary randomized-response channel, ``P(R = r | Y = j) = p`` if
``r = j`` else ``q``, so

    P(R_i = r | x_i) = L_ir = q + (p − q) π_ir,

and the log-likelihood of frequency-weighted reports (``w_i`` responses share the pattern
``(x_i, r_i)``) is ``ℓ(β) = Σ_i w_i log L_i,r_i`` (Warner 1965; for regression, Maddala 1983,
van den Hout & van der Heijden 2002, Blair, Imai & Zhou 2015).

Derivatives (with respect to η_i, then chained through ``∂η_ij/∂β_j = x_i``).  Write
``s_i = (p − q) π_ir / L_ir`` and ``u_i = e_r − π_i``.  From ``∂π_ir/∂η_ij = π_ir(δ_rj − π_ij)``:

    ∂ log L_ir / ∂η_ij = s_i u_ij,
    ∂² log L_ir / ∂η_ij ∂η_il = s_i (q / L_ir) u_ij u_il − s_i (δ_jl π_ij − π_ij π_il),

using ``∂s_i/∂η_il = s_i (q / L_ir) u_il``.  With q = 0 (p = 1: the question asked directly)
``s_i = 1`` and these are the multinomial logit's score and Hessian.  The Hessian is not
negative definite everywhere (a mixture likelihood is not concave in β), so the fit is
:func:`scipy.optimize.minimize` with ``method="trust-exact"`` (Moré & Sorensen 1983): Newton's
quadratic convergence near the maximum, a trust region where the Hessian is indefinite.  EM
(Blair, Imai & Zhou 2015) would also converge, but linearly at the rate of the fraction of
missing information, which for ε ≤ 1 is most of it (e.g. 1 − (p − q)² ≈ 0.79 for k = 2, ε = 1);
and the observed information, which the standard errors need, is this same Hessian.

**Any design** (a known misclassification matrix ``M[r, t] = P(R = r | Y = t)``, :mod:`deniable.client.designs`:
forced response with ``p₁ ≠ p₀``, the unrelated question, Kuk, a custom matrix — any with full column
rank, including one with a zero cell, which is not ε-LDP but still has this likelihood):

    P(R_i = r | x_i) = L_ir = Σ_t M[r, t] π_it

(van den Hout & van der Heijden 2002, eq. 4; Heck & Moshagen 2018 fit the same model in ``RRreg``).
Write ``a_ij = M[r, j] π_ij`` and ``b_ij = a_ij / L_ir`` (the posterior probability of true answer j
given the report).  From ``∂π_it/∂η_ij = π_it(δ_tj − π_ij)``, ``∂L_ir/∂η_ij = a_ij − L_ir π_ij``, so

    ∂ log L_ir / ∂η_ij = b_ij − π_ij,
    ∂² log L_ir / ∂η_ij ∂η_il = δ_jl b_ij − b_ij b_il − (δ_jl π_ij − π_ij π_il),

using ``∂a_ij/∂η_il = δ_jl a_ij − a_ij π_il``.  For k-ary randomized response (``M = q + (p − q) I``)
``b_ij − π_ij = s_i u_ij`` and these are the formulas above.  :class:`Data` carries ``matrix`` (None:
the k-ary channel of ``p`` and ``q``).

References
----------
.. [1] S. L. Warner, "Randomized response", JASA 60 (1965) 63–69.
.. [2] G. S. Maddala, *Limited-dependent and qualitative variables in econometrics*, Cambridge
   University Press (1983), section 2.15.
.. [3] A. van den Hout, P. G. M. van der Heijden, "Randomized response, statistical disclosure
   control and misclassification: a review", International Statistical Review 70 (2002) 269–288.
.. [4] G. Blair, K. Imai, Y.-Y. Zhou, "Design and analysis of the randomized response
   technique", JASA 110 (2015) 1304–1319.
.. [5] J. J. Moré, D. C. Sorensen, "Computing a trust region step", SIAM J. Sci. Stat. Comput.
   4 (1983) 553–572.
.. [6] D. W. Heck, M. Moshagen, "RRreg: an R package for correlation and regression analyses of
   randomized response data", J. Stat. Softw. 85 (2018).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

GTOL = 1e-10  # gradient norm of the per-response log-likelihood at which the trust region stops
STEP_SE = 1e-6  # converged: the remaining Newton step is shorter than this many standard errors
MAX_ITER = 500


@dataclass(frozen=True)
class Data:
    """Distinct patterns: design rows ``X`` (N × d), reports ``r`` (N,), weights ``w`` (N,).

    ``matrix`` (reports × k), when given, is the design's misclassification matrix and ``r`` indexes
    its reports; ``p`` and ``q`` are then unused (module notes, "Any design")."""

    X: np.ndarray
    r: np.ndarray
    w: np.ndarray
    k: int
    p: float
    q: float
    reference: int
    matrix: np.ndarray | None = None

    @property
    def others(self) -> np.ndarray:
        """The options with coefficients, in order (every option but the reference)."""
        return np.array([j for j in range(self.k) if j != self.reference])

    @property
    def size(self) -> int:
        """Number of free parameters ``(k − 1) · d``."""
        return (self.k - 1) * self.X.shape[1]


def log_probabilities(theta: np.ndarray, data: Data) -> np.ndarray:
    """Return ``log π`` (N × k) for the flat parameter vector ``theta`` ((k − 1) blocks of d)."""
    beta = theta.reshape(data.k - 1, data.X.shape[1])
    eta = np.zeros((data.X.shape[0], data.k))
    eta[:, data.others] = data.X @ beta.T
    # log-softmax by hand (scipy's general one costs three times as much on 10^6 rows)
    eta -= eta.max(axis=1, keepdims=True)
    eta -= np.log(np.exp(eta).sum(axis=1, keepdims=True))
    return eta


def _log_report(log_pi_r: np.ndarray, p: float, q: float) -> np.ndarray:
    """``log(q + (p − q) π_r)`` without underflow when q = 0 and π_r is tiny."""
    if q == 0:
        return log_pi_r + math.log(p)
    return np.logaddexp(math.log(q), math.log(p - q) + log_pi_r)


def posterior(theta: np.ndarray, data: Data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Under a design's matrix: ``(log π, log L_i,r_i, b)`` with ``b_ij = M[r_i, j] π_ij / L_i,r_i``.

    ``log L`` is a log-sum-exp over the answers, with ``log 0 = −inf`` for a zero cell (a report that
    rules an answer out contributes nothing for that answer)."""
    log_pi = log_probabilities(theta, data)
    with np.errstate(divide="ignore"):
        log_m = np.log(np.asarray(data.matrix, dtype=float))[data.r]
    joint = log_m + log_pi
    top = joint.max(axis=1, keepdims=True)
    log_l = (top + np.log(np.exp(joint - top).sum(axis=1, keepdims=True)))[:, 0]
    return log_pi, log_l, np.exp(joint - log_l[:, None])


def _matrix_derivatives(theta: np.ndarray, data: Data) -> tuple[float, np.ndarray, np.ndarray]:
    """``(ℓ, ∇ℓ, ∇²ℓ)`` under a design's matrix (module notes, "Any design")."""
    X, w, k = data.X, data.w, data.k
    log_pi, log_l, b = posterior(theta, data)
    pi = np.exp(log_pi)
    others = data.others
    b_o, pi_o = b[:, others], pi[:, others]
    gradient = ((w[:, None] * (b_o - pi_o)).T @ X).reshape(-1)
    d = X.shape[1]
    zb = (b_o[:, :, None] * X[:, None, :]).reshape(X.shape[0], -1)
    zp = (pi_o[:, :, None] * X[:, None, :]).reshape(X.shape[0], -1)
    hessian = (zp * w[:, None]).T @ zp - (zb * w[:, None]).T @ zb
    for j in range(k - 1):
        block = slice(j * d, (j + 1) * d)
        hessian[block, block] += (X * (w * (b_o[:, j] - pi_o[:, j]))[:, None]).T @ X
    return float(w @ log_l), gradient, hessian


def loglik(theta: np.ndarray, data: Data) -> float:
    """Return ``ℓ(β) = Σ_i w_i log(q + (p − q) π_i,r_i)`` (``Σ_i w_i log Σ_t M[r_i, t] π_it`` under a matrix)."""
    if data.matrix is not None:
        return float(data.w @ posterior(theta, data)[1])
    log_pi = log_probabilities(theta, data)
    log_pi_r = log_pi[np.arange(data.X.shape[0]), data.r]
    return float(data.w @ _log_report(log_pi_r, data.p, data.q))


def derivatives(theta: np.ndarray, data: Data) -> tuple[float, np.ndarray, np.ndarray]:
    """Return ``(ℓ, ∇ℓ, ∇²ℓ)`` at ``theta`` (module notes give the formulas)."""
    if data.matrix is not None:
        return _matrix_derivatives(theta, data)
    X, w, k, p, q = data.X, data.w, data.k, data.p, data.q
    rows = np.arange(X.shape[0])
    log_pi = log_probabilities(theta, data)
    pi = np.exp(log_pi)
    log_pi_r = log_pi[rows, data.r]
    log_l = _log_report(log_pi_r, p, q)
    value = float(w @ log_l)
    s = np.exp(math.log(p - q) + log_pi_r - log_l)  # (p − q) π_r / L, in [0, 1]
    others = data.others
    u = -pi[:, others]
    u += data.r[:, None] == others[None, :]  # e_r − π, on the non-reference options
    ws = w * s
    # Gradient: Σ_i w_i s_i u_ij x_i for each option j.
    gradient = ((ws[:, None] * u).T @ X).reshape(-1)
    d = X.shape[1]
    # Hessian term 1: Σ_i w_i s_i (q / L_i) (u_i ⊗ x_i)(u_i ⊗ x_i)ᵀ.
    hessian = np.zeros((data.size, data.size))
    if q > 0:
        z = (u[:, :, None] * X[:, None, :]).reshape(X.shape[0], -1)
        hessian += (z * (ws * q * np.exp(-log_l))[:, None]).T @ z
    # Term 2: − Σ_i w_i s_i (diag(π_i) − π_i π_iᵀ) ⊗ x_i x_iᵀ, on the non-reference options.
    pi_o = pi[:, others]
    y = (pi_o[:, :, None] * X[:, None, :]).reshape(X.shape[0], -1)
    hessian += (y * ws[:, None]).T @ y
    for j in range(k - 1):
        block = slice(j * d, (j + 1) * d)
        hessian[block, block] -= (X * (ws * pi_o[:, j])[:, None]).T @ X
    return value, gradient, hessian


@dataclass(frozen=True)
class Fit:
    theta: np.ndarray
    loglik: float
    gradient: np.ndarray
    hessian: np.ndarray
    converged: bool
    iterations: int


def _newton(theta, state, free, data: Data, steps: int):
    """Up to ``steps`` Newton steps (halved until ℓ does not drop) while −H is positive definite.

    Returns ``(theta, state, iterations, converged)``; stops early, unconverged, where the
    likelihood is not concave (the trust region takes over there).
    """
    for iteration in range(steps + 1):
        value, gradient, hessian = state
        decrement = _newton_decrement(gradient[free], hessian[np.ix_(free, free)])
        if decrement is None:
            return theta, state, iteration, False
        if decrement <= STEP_SE or iteration == steps:
            return theta, state, iteration, decrement <= STEP_SE
        step = np.linalg.solve(-hessian[np.ix_(free, free)], gradient[free])
        for _ in range(30):
            trial = theta.copy()
            trial[free] += step
            trial_state = derivatives(trial, data)
            if trial_state[0] >= value - 1e-12 * abs(value):
                break
            step /= 2
        else:
            return theta, state, iteration, False
        theta, state = trial, trial_state
    return theta, state, steps, False


def fit(data: Data, start: np.ndarray, fixed: dict[int, float] | None = None) -> Fit:
    """Maximize ℓ over θ, with the coordinates in ``fixed`` held at their values.

    Newton steps first: from a good start (the profile likelihood's warm starts, or a start
    already in the concave region around the maximum) they converge in two or three likelihood
    evaluations.  Where the Hessian is not negative definite, or Newton makes no progress, a
    trust region takes over (``scipy.optimize.minimize``, ``method="trust-exact"``, on the
    likelihood scaled by the total weight so that its stopping rule means the same at every n),
    and Newton steps finish the job: near the maximum the trust region can stop because a gain of
    ~1e-18 per response is below floating-point resolution.  Converged: the remaining Newton
    step is under ``STEP_SE`` standard errors (its length under the observed information, the
    Newton decrement).  ``fixed`` is how the profile likelihood is computed.
    """
    fixed = fixed or {}
    free = np.array([i for i in range(data.size) if i not in fixed], dtype=np.int64)
    theta = np.asarray(start, dtype=float).copy()
    for index, value in fixed.items():
        theta[index] = value
    state = derivatives(theta, data)
    if free.size == 0:
        return Fit(theta, *state, True, 0)
    theta, state, iterations, converged = _newton(theta, state, free, data, steps=8)
    if converged:
        return Fit(theta, *state, True, iterations)
    total = float(data.w.sum())
    cache: dict = {}

    def at(sub):
        key = sub.tobytes()
        if cache.get("key") != key:
            full = theta.copy()
            full[free] = sub
            cache.update(key=key, value=derivatives(full, data))
        return cache["value"]

    result = minimize(
        lambda sub: -at(sub)[0] / total, theta[free],
        jac=lambda sub: -at(sub)[1][free] / total,
        hess=lambda sub: -at(sub)[2][np.ix_(free, free)] / total,
        method="trust-exact", options={"gtol": GTOL, "maxiter": MAX_ITER},
    )
    theta = theta.copy()
    theta[free] = result.x
    state = at(result.x)
    theta, state, polish, converged = _newton(theta, state, free, data, steps=3)
    return Fit(theta, *state, converged, iterations + int(result.nit) + polish)


def _newton_decrement(gradient: np.ndarray, hessian: np.ndarray) -> float | None:
    """``sqrt(gᵀ(−H)⁻¹g)``, or None where −H is not positive definite (not at a maximum)."""
    try:
        factor = np.linalg.cholesky(-hessian)
    except np.linalg.LinAlgError:
        return None
    solved = np.linalg.solve(factor, gradient)
    return float(np.sqrt(solved @ solved))


def profile_interval(data: Data, best: Fit, index: int, drop: float, cov: np.ndarray,
                     max_steps: int = 8) -> tuple[float, float]:
    """Return the profile-likelihood interval ``{b : ℓ̂ − max_{θ_index = b} ℓ ≤ drop}`` of one coefficient.

    Each end is bracketed by stepping out from the Wald end (doubling the distance, at most
    ``max_steps`` times: an end still inside after that is ±inf, the likelihood being too flat to
    close the interval), then found by safeguarded Newton steps on ``h(b) = ℓ̂ − ℓ_p(b) − drop``,
    whose slope is ``−∂ℓ/∂θ_index`` at the constrained maximum (the envelope theorem), each
    evaluation a fit of the other coefficients started from the previous one moved along the
    regression of the others on this one under ``cov`` (the quadratic approximation's path); a
    step outside the bracket is replaced by bisection (Venzon & Moolgavkar 1988 iterate similarly).
    """
    centre = float(best.theta[index])
    step = math.sqrt(max(cov[index, index], 1e-16)) * math.sqrt(2 * drop)
    path = cov[:, index] / cov[index, index]
    ends = []
    for sign in (-1.0, 1.0):
        warm = {"theta": best.theta}

        def excess(b):
            start = warm["theta"] + path * (b - warm["theta"][index])
            fitted = fit(data, start, fixed={index: b})
            warm["theta"] = fitted.theta
            return best.loglik - fitted.loglik - drop, -float(fitted.gradient[index])

        inner, outer = centre, centre + sign * step
        value, slope = excess(outer)
        steps = 0
        while value < 0 and steps < max_steps:
            inner, outer = outer, centre + sign * step * 2 ** (steps + 1)
            value, slope = excess(outer)
            steps += 1
        if value < 0:
            ends.append(sign * math.inf)
            continue
        point, tolerance = outer, 1e-10 * (1 + abs(centre))
        for _ in range(60):
            if abs(value) <= 1e-10 or abs(outer - inner) <= tolerance:
                break
            candidate = point - value / slope if slope != 0 else math.nan
            low, high = sorted((inner, outer))
            if not low < candidate < high:
                candidate = 0.5 * (inner + outer)
            point = candidate
            value, slope = excess(point)
            if value < 0:
                inner = point
            else:
                outer = point
        ends.append(point if abs(value) <= 1e-10 else outer)
    return ends[0], ends[1]
