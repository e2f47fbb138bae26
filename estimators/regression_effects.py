"""Average predicted prevalence by group, and average marginal effects, with delta-method intervals.

For a categorical term with levels ``g_0 (reference), g_1, …`` (dummy columns, one per level
after the first), the **predicted prevalence** of option j at level g is

    P_gj = Σ_i w_i π_j(x_i with the term set to g) / Σ_i w_i,

the share of the sample that would hold option j if everyone were in group g, the other
covariates as observed (an "average predicted probability", Long & Freese 2014, ch. 4; the
quantity ``rr``'s ``predict`` reports, Blair, Imai & Zhou 2015).  Its gradient in β_l
(l ≠ reference) is ``Σ_i w_i π_ij (δ_jl − π_il) x̃_i / Σ_i w_i`` (x̃_i the modified row), so the
delta method gives ``Var P_gj ≈ ∇ᵀ Σ ∇`` with Σ the inverse observed information.  The interval
is formed on the logit scale, ``expit(logit P ± z · se / (P(1 − P)))``, so it stays in (0, 1).
The **difference** ``P_gj − P_g0,j`` from the reference level is the average marginal effect of
the group, with a Wald interval from the same delta method.

For a numeric term the **average marginal effect** is ``Σ_i w_i ∂π_ij/∂x_it / Σ_i w_i`` with
``∂π_ij/∂x_it = π_ij (β_jt − Σ_l π_il β_lt)``; its gradient in θ is taken by central differences
(step 1e-6 · (1 + |θ|)), and its interval is Wald.

References
----------
.. [1] J. S. Long, J. Freese, *Regression models for categorical dependent variables using
   Stata*, 3rd ed., Stata Press (2014), chapter 4.
.. [2] G. Blair, K. Imai, Y.-Y. Zhou, "Design and analysis of the randomized response
   technique", JASA 110 (2015) 1304–1319.
.. [3] E. C. Norton, B. E. Dowd, M. L. Maciejewski, "Marginal effects — quantifying the effect
   of changes in risk factors in logistic regression models", JAMA 321 (2019) 1304–1305.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from .rrlogit import Data, log_probabilities


@dataclass(frozen=True)
class Term:
    """A covariate as the analyst thinks of it: one numeric column, or a categorical's dummies.

    ``columns`` index the covariate matrix given to :func:`deniable.estimators.regress` (without
    the intercept).  A categorical term has ``levels`` (every level, the reference first) and
    one dummy column per level after the first; a numeric term has one column and no levels.
    """

    name: str
    columns: tuple[int, ...]
    levels: tuple[str, ...] | None = None

    @property
    def categorical(self) -> bool:
        return self.levels is not None


@dataclass(frozen=True)
class Effect:
    """One row of the effects table: a term's level (or a numeric term) and one option."""

    term: str
    level: str | None  # None for a numeric term
    option: int
    prevalence: float  # predicted prevalence (categorical) — NaN for a numeric term
    prevalence_low: float
    prevalence_high: float
    effect: float  # difference from the reference level, or the average marginal effect (numeric)
    effect_std_error: float
    effect_low: float
    effect_high: float


def _prevalence_and_gradient(theta, data: Data, X: np.ndarray):
    """Return ``P_j`` (k,) and its gradient (k × size) for the design rows ``X``."""
    shifted = Data(X, data.r, data.w, data.k, data.p, data.q, data.reference)
    pi = np.exp(log_probabilities(theta, shifted))
    total = data.w.sum()
    prevalence = data.w @ pi / total
    d = X.shape[1]
    grad = np.zeros((data.k, data.size))
    for b, l in enumerate(data.others):
        for j in range(data.k):
            weight = data.w * pi[:, j] * ((j == l) - pi[:, l])
            grad[j, b * d:(b + 1) * d] = weight @ X / total
    return prevalence, grad


def categorical_effects(theta, cov, data: Data, term: Term, z: float) -> list[Effect]:
    """Predicted prevalence at every level of ``term`` and the difference from its reference."""
    columns = [c + 1 for c in term.columns]  # the design matrix has the intercept first
    rows = []
    base = None
    for g, level in enumerate(term.levels):
        X = data.X.copy()
        X[:, columns] = 0.0
        if g > 0:
            X[:, columns[g - 1]] = 1.0
        prevalence, grad = _prevalence_and_gradient(theta, data, X)
        if base is None:
            base = (prevalence, grad)
        for j in range(data.k):
            se = float(np.sqrt(max(grad[j] @ cov @ grad[j], 0.0)))
            share = float(np.clip(prevalence[j], 1e-300, 1 - 1e-16))
            half = z * se / (share * (1 - share))
            low, high = float(expit(logit(share) - half)), float(expit(logit(share) + half))
            diff_grad = grad[j] - base[1][j]
            diff = float(prevalence[j] - base[0][j])
            diff_se = float(np.sqrt(max(diff_grad @ cov @ diff_grad, 0.0)))
            rows.append(Effect(term.name, level, j, float(prevalence[j]), low, high, diff, diff_se,
                               diff - z * diff_se, diff + z * diff_se))
    return rows


def _ame(theta, data: Data, column: int) -> np.ndarray:
    """Average marginal effect of design column ``column`` on every option's probability."""
    pi = np.exp(log_probabilities(theta, data))
    beta = np.zeros((data.k, data.X.shape[1]))
    beta[data.others] = theta.reshape(data.k - 1, -1)
    slope = beta[:, column]  # β_jt for every option (0 for the reference)
    derivative = pi * (slope[None, :] - (pi @ slope)[:, None])
    return data.w @ derivative / data.w.sum()


def numeric_effects(theta, cov, data: Data, term: Term, z: float) -> list[Effect]:
    """Average marginal effect of a numeric term on every option, with a Wald interval."""
    column = term.columns[0] + 1
    value = _ame(theta, data, column)
    grad = np.zeros((data.k, data.size))
    for i in range(data.size):
        step = 1e-6 * (1 + abs(theta[i]))
        up, down = theta.copy(), theta.copy()
        up[i] += step
        down[i] -= step
        grad[:, i] = (_ame(up, data, column) - _ame(down, data, column)) / (2 * step)
    nan = float("nan")
    rows = []
    for j in range(data.k):
        se = float(np.sqrt(max(grad[j] @ cov @ grad[j], 0.0)))
        rows.append(Effect(term.name, None, j, nan, nan, nan, float(value[j]), se,
                           float(value[j] - z * se), float(value[j] + z * se)))
    return rows


def effects(theta, cov, data: Data, terms, z: float) -> list[Effect]:
    """Every term's effects, in the order of ``terms``."""
    out = []
    for term in terms:
        make = categorical_effects if term.categorical else numeric_effects
        out += make(theta, cov, data, term, z)
    return out
