"""An independent fit of a logit under yes/no randomized response, for checking the estimators' own."""

from __future__ import annotations

import numpy as np


def fit_independently(y, Z, w, p, q):
    """Maximize ``Σ w log L`` with ``L = q + (p − q) σ(Zβ)`` for a Yes report (1 − L for No) by Newton
    steps on a central-difference Hessian of the analytic gradient; the rows' scores at the maximum."""
    def scores(beta):
        pi = 1 / (1 + np.exp(-Z @ beta))
        lam = q + (p - q) * pi
        d = (p - q) * pi * (1 - pi) * (y / lam - (1 - y) / (1 - lam))
        return d[:, None] * Z

    def hessian(beta, h=1e-6):
        cols = []
        for j in range(beta.size):
            e = np.zeros(beta.size)
            e[j] = h
            cols.append((w @ scores(beta + e) - w @ scores(beta - e)) / (2 * h))
        return np.column_stack(cols)

    beta = np.zeros(Z.shape[1])
    for _ in range(50):
        step = np.linalg.solve(-hessian(beta), w @ scores(beta))
        beta = beta + step
        if np.max(np.abs(step)) < 1e-12:
            break
    return beta, scores(beta), -hessian(beta)
