"""Cross-tabulation of two protected questions answered by the same respondents."""

from __future__ import annotations

import numpy as np

from deniable.client.mechanism import resolve

from .binomial import z
from .marginal import estimate
from .result import CrosstabResult, frozen
from .validate import check_confidence, check_counts

EM_TOLERANCE = 1e-12
EM_MAX_ITERATIONS = 20_000


def mechanism_matrix(k: int, p: float, q: float) -> np.ndarray:
    """Return ``P`` with ``P[i, j] = P(report i | true j)``: p on the diagonal, q elsewhere."""
    return np.full((k, k), q) + (p - q) * np.eye(k)


def mechanism_inverse(k: int, p: float, q: float) -> np.ndarray:
    """Return ``P⁻¹ = (I − q·11ᵀ)/(p − q)`` (exact, since ``p + (k − 1) q = 1``)."""
    return (np.eye(k) - q) / (p - q)


def em_joint(joint_counts: np.ndarray, p_row: np.ndarray, p_col: np.ndarray) -> np.ndarray:
    """Return the constrained MLE of the joint distribution by EM (Kairouz et al. 2016).

    The reports' cell probabilities are ``Λ = P1 Π P2ᵀ``; an EM step is
    ``Π ← Π ⊙ P1ᵀ (C / Λ) P2 / n``, which keeps Π on the simplex and never lowers the
    multinomial likelihood.
    """
    n = joint_counts.sum()
    pi = np.full(joint_counts.shape, 1.0 / joint_counts.size)
    for _ in range(EM_MAX_ITERATIONS):
        lam = p_row @ pi @ p_col.T
        updated = pi * (p_row.T @ (joint_counts / lam) @ p_col) / n
        if np.abs(updated - pi).max() < EM_TOLERANCE:
            return updated
        pi = updated
    return pi


def crosstab(joint_counts, epsilon_row, epsilon_col, confidence=0.95) -> CrosstabResult:
    """Estimate the joint and conditional distributions of two protected questions.

    Parameters
    ----------
    joint_counts : array_like, shape (k1, k2)
        ``joint_counts[i, j]`` is the number of respondents who reported option ``i`` to the
        row question and option ``j`` to the column question (both randomized).
    epsilon_row, epsilon_col : float
        Declared ε of the two questions; the privacy cost of the pair is their sum.
    confidence : float, default 0.95
        Level of every (pointwise) interval.

    Returns
    -------
    CrosstabResult
        ``epsilon`` is the realized ``ε_row + ε_col``; ``row`` and ``col`` are the marginal
        :class:`EstimateResult` (exact intervals).

    Notes
    -----
    The two questions are randomized independently, so the joint report probabilities are
    ``vec Λ = (P1 ⊗ P2) vec Π`` with ``P[i, j] = p`` if ``i = j`` else ``q``.  Hence

    * ``joint_estimate = P1⁻¹ (C/n) P2⁻¹`` is unbiased (it may leave [0, 1]);
    * ``joint_consistent`` is the constrained MLE on the simplex, computed by EM;
    * ``Cov(vec Π̂) = A (diag λ − λλᵀ) Aᵀ / n`` with ``A = P1⁻¹ ⊗ P2⁻¹`` (exact multinomial
      covariance), evaluated at the fitted ``λ`` of the consistent estimate (always > 0);
      joint intervals are Wald intervals ``Π̂ ± z·se`` clipped to [0, 1], and where clipping
      would leave a single point, the one-sided ``[0, z·se]`` (or ``[1 − z·se, 1]``);
    * ``conditional_estimate[i, j] = Π̃[i, j] / Σ_j Π̃[i, j]`` (column given row) from the
      consistent joint (NaN, with interval [0, 1], for a row whose estimated mass is below 1e-12), with delta-method standard
      errors from the covariance above and intervals ``θ ± z·se`` clipped to [0, 1].

    References
    ----------
    .. [1] P. Kairouz, K. Bonawitz, D. Ramage, "Discrete distribution estimation under local
       privacy", ICML 2016.
    .. [2] T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for
       frequency estimation", USENIX Security 2017.

    Examples
    --------
    >>> c = crosstab([[300, 100], [100, 500]], 2.0, 2.0)
    >>> c.joint_estimate.shape, round(float(c.joint_estimate.sum()), 6)
    ((2, 2), 1.0)
    """
    counts = check_counts(joint_counts, name="joint_counts", ndim=2)
    confidence = check_confidence(confidence)
    k1, k2 = counts.shape
    row_mech = resolve(k1, epsilon_row)
    col_mech = resolve(k2, epsilon_col)
    row = estimate(counts.sum(axis=1), epsilon_row, confidence)
    col = estimate(counts.sum(axis=0), epsilon_col, confidence)
    n = int(counts.sum())
    shape = (k1, k2)
    nan = np.full(shape, np.nan)
    if n == 0:
        zeros, ones = np.zeros(shape), np.ones(shape)
        return CrosstabResult(
            n=0, k_row=k1, k_col=k2, epsilon=row_mech.epsilon + col_mech.epsilon,
            confidence=confidence, joint_estimate=frozen(nan), joint_consistent=frozen(nan),
            joint_std_error=frozen(nan), joint_ci_low=frozen(zeros), joint_ci_high=frozen(ones),
            conditional_estimate=frozen(nan), conditional_std_error=frozen(nan),
            conditional_ci_low=frozen(zeros), conditional_ci_high=frozen(ones), row=row, col=col,
        )
    p1 = mechanism_matrix(k1, row_mech.p, row_mech.q)
    p2 = mechanism_matrix(k2, col_mech.p, col_mech.q)
    inv1 = mechanism_inverse(k1, row_mech.p, row_mech.q)
    inv2 = mechanism_inverse(k2, col_mech.p, col_mech.q)
    unbiased = inv1 @ (counts / n) @ inv2.T
    fitted = em_joint(counts.astype(float), p1, p2)
    lam = (p1 @ fitted @ p2.T).ravel()
    a = np.kron(inv1, inv2)
    cov = a @ (np.diag(lam) - np.outer(lam, lam)) @ a.T / n
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None)).reshape(shape)
    z_ = z(confidence)
    low, high = _clipped(unbiased, z_ * se)

    # conditional of column given row: θ_ij = Π_ij / R_i, R_i = Σ_j Π_ij
    row_mass = fitted.sum(axis=1)
    empty = row_mass < 1e-12  # a row option with (numerically) no estimated mass has no conditional
    mass = np.where(empty, 1.0, row_mass)
    theta = fitted / mass[:, None]
    grad = np.zeros((k1 * k2, k1 * k2))  # d θ_ij / d Π_ab (only a = i contributes)
    for i in range(k1):
        for j in range(k2):
            for b in range(k2):
                grad[i * k2 + j, i * k2 + b] = ((j == b) - theta[i, j]) / mass[i]
    cov_theta = grad @ cov @ grad.T
    se_theta = np.sqrt(np.clip(np.diag(cov_theta), 0.0, None)).reshape(shape)
    cond_low, cond_high = _clipped(theta, z_ * se_theta)
    theta[empty], se_theta[empty], cond_low[empty], cond_high[empty] = np.nan, np.nan, 0.0, 1.0
    return CrosstabResult(
        n=n, k_row=k1, k_col=k2, epsilon=row_mech.epsilon + col_mech.epsilon,
        confidence=confidence, joint_estimate=frozen(unbiased), joint_consistent=frozen(fitted),
        joint_std_error=frozen(se), joint_ci_low=frozen(low), joint_ci_high=frozen(high),
        conditional_estimate=frozen(theta), conditional_std_error=frozen(se_theta),
        conditional_ci_low=frozen(cond_low), conditional_ci_high=frozen(cond_high), row=row, col=col,
    )


def _clipped(center: np.ndarray, half: np.ndarray):
    """Return ``center ± half`` clipped to [0, 1], widened to one side where it would collapse."""
    low = np.clip(center - half, 0.0, 1.0)
    high = np.clip(center + half, 0.0, 1.0)
    stuck_low = (high <= 0) & (half > 0)
    stuck_high = (low >= 1) & (half > 0)
    high = np.where(stuck_low, np.minimum(half, 1.0), high)
    low = np.where(stuck_high, np.maximum(1.0 - half, 0.0), low)
    return low, high
