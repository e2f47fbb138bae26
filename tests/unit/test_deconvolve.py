"""The discrete Laplace deconvolution (``estimators.numeric.deconvolve``, EM with both sums by FFT)
against the same EM written with the whole likelihood matrix ``P(Y = y | X = x)``, clamped ends
included, summed directly: the same histogram after the same steps, to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest

from deniable.estimators.numeric import deconvolve
from deniable.server.survey.definition import parse_definition


def mechanism(epsilon: float, maximum: float = 10, step: float = 0.5):
    definition = {"slug": "s", "title": "s", "questions": [
        {"id": "h", "text": "h", "type": "numeric", "min": 0, "max": maximum, "step": step, "epsilon": epsilon,
         "mechanism": "laplace"}]}
    return parse_definition(definition).questions[0].mechanism


def reference(values, counts, mech, steps: int) -> np.ndarray:
    """Richardson–Lucy with the explicit matrix: λ = Kπ, π ← π ∘ Kᵀ(c/λ)/n."""
    x = np.arange(mech.m + 1)
    ys = np.arange(mech.low, mech.high + 1)
    k = np.array([mech.pmf(y - x) for y in ys])  # interior reports: the two-sided geometric pmf
    t = mech.t
    k[0] = np.power(t, -(mech.low - x).astype(float)) / (1 + t)  # P(Z ≤ low − x): the clamped lower end
    k[-1] = np.power(t, (mech.high - x).astype(float)) / (1 + t)  # P(Z ≥ high − x): the clamped upper end
    assert np.allclose(k.sum(axis=0), 1.0)
    observed = np.zeros(ys.size)
    observed[np.asarray(values) - mech.low] = counts
    pi = np.full(x.size, 1.0 / x.size)
    for _ in range(steps):
        lam = k @ pi
        new = pi * (k.T @ np.divide(observed, lam, out=np.zeros_like(lam), where=observed > 0)) / observed.sum()
        pi = new / new.sum()
    return pi


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("seed", [1, 2])
def test_the_fft_em_is_the_em_of_the_likelihood_matrix(epsilon, seed):
    mech = mechanism(epsilon)
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.ones(mech.m + 1))
    x = rng.choice(mech.m + 1, size=5000, p=truth)
    noise = rng.geometric(1 - mech.t, 5000) - rng.geometric(1 - mech.t, 5000)
    reports = np.clip(x + noise, mech.low, mech.high)  # clamped at the ends, as the browser sends them
    values, counts = np.unique(reports, return_counts=True)
    found, steps, _ = deconvolve(values, counts, mech, iterations=40)
    assert found == pytest.approx(reference(values, counts, mech, steps), abs=1e-12)
