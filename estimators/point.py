"""Point estimates and standard errors for one protected question."""

from __future__ import annotations

import numpy as np


def unbiased(noisy_counts: np.ndarray, p: float, q: float) -> np.ndarray:
    """Return the unbiased estimate ``(c/n − q)/(p − q)`` of each option's proportion."""
    n = noisy_counts.sum()
    if n == 0:
        return np.full(noisy_counts.shape, np.nan)
    return (noisy_counts / n - q) / (p - q)


def consistent(noisy_counts: np.ndarray, p: float, q: float) -> np.ndarray:
    """Return the maximum-likelihood estimate of the proportions on the probability simplex.

    The report probabilities are ``λ_i = q + (p − q) π_i``; as π ranges over the simplex,
    λ ranges over ``{λ : Σ λ_i = 1, λ_i ≥ q}`` (``λ_i ≤ p`` follows).  Maximizing the
    multinomial log-likelihood ``Σ c_i log λ_i`` there has the KKT solution
    ``λ_i = max(q, c_i / μ)`` with ``μ`` set so the λ sum to one ("water filling"): the
    options with the largest counts keep ``λ ∝ c``, the rest sit at the floor ``q`` (π = 0).
    This is the fixed point the EM algorithm of Kairouz et al. (2016) converges to.
    """
    n = noisy_counts.sum()
    k = noisy_counts.size
    if n == 0:
        return np.full(noisy_counts.shape, np.nan)
    order = np.argsort(-noisy_counts, kind="stable")
    sorted_counts = noisy_counts[order].astype(float)
    lam_sorted = np.full(k, q)
    for m in range(k, 0, -1):  # m options above the floor: the largest m for which it is consistent
        mu = sorted_counts[:m].sum() / (1.0 - (k - m) * q)
        if sorted_counts[m - 1] / mu >= q:
            lam_sorted[:m] = sorted_counts[:m] / mu
            break
    lam = np.empty(k)
    lam[order] = lam_sorted
    return np.clip((lam - q) / (p - q), 0.0, 1.0)


def std_error(noisy_counts: np.ndarray, p: float, q: float) -> np.ndarray:
    """Return the standard error ``sqrt(λ̃(1 − λ̃)/n)/(p − q)``, ``λ̃ = clip(c/n, q, p)``."""
    n = noisy_counts.sum()
    if n == 0:
        return np.full(noisy_counts.shape, np.nan)
    lam = np.clip(noisy_counts / n, q, p)
    return np.sqrt(lam * (1 - lam) / n) / (p - q)
