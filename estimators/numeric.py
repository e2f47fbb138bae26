"""Estimates for numeric questions: the mean with an honest interval, the distribution, the median.

Every number here is in **answer-index units** (``0..m``, steps from the minimum); the survey
layer turns them into the question's units (``min + step · index``).

Grid randomized response (G + 1 grid points every d = m/G steps)
---------------------------------------------------------------
A report R is k-ary randomized response (k = G + 1) of the stochastically rounded grid index J,
with ``E[J d] = X`` (:mod:`deniable.client.numeric`).  So:

* **The mean** of X is ``d · E J``.  With ``G = 1`` a report is 1 with probability
  ``λ = q + (p − q) θ``, ``θ = E X / m``: the count of ones is exactly Binomial(n, λ) whatever the
  answers' distribution, and the exact Feldman–Cousins interval for λ on [q, p]
  (:mod:`.exact`, the one every option of a choice question gets) covers θ with probability at
  least the nominal level at every distribution and every n.  With ``G > 1`` the count vector
  depends on more than the mean, and the interval is the score interval of :mod:`.scores`
  (Monte-Carlo checked) on the unbiased score ``(R − q G(G + 1)/2)/(p − q)``.
* **The distribution** of J over the grid: the k-ary estimates of :func:`.marginal.estimate`
  (unbiased, consistent, exact intervals per grid point).  Rounding moves mass only between
  neighbouring grid points, so ``F_X(g_j) ≤ F_J(j) ≤ F_X(g_(j+1)⁻)``.
* **The CDF**: the consistent estimate's cumulative sums (non-decreasing, ending at 1), with an
  exact interval at each grid point: the number of reports ``R ≤ j`` is Binomial(n, λ_j),
  ``λ_j = (j + 1) q + (p − q) F_J(j)``, so Feldman–Cousins on ``[(j + 1) q, (j + 1) q + p − q]``.
* **The median** ``inf{x : F_X(x) ≥ ½}``.  If it lies in the cell ``(g_(j−1), g_j]`` then
  ``F_J(j) ≥ F_X(g_j) ≥ ½`` and ``F_J(j − 2) ≤ F_X(g_(j−1)⁻) < ½``.  The cell is kept unless an
  exact one-sided Clopper–Pearson bound at level α/2 contradicts one of these (upper bound of
  ``F_J(j)`` below ½, or lower bound of ``F_J(j − 2)`` above ½): the true cell is dropped with
  probability at most α, and the interval is the hull of the kept cells (test inversion; no
  simultaneous band is needed).  The point estimate is the median of the consistent grid CDF.

The discrete Laplace mechanism
------------------------------
A report is ``X + Z`` with known noise (clamped with probability below 2^−40):

* **the mean** ``E X = E Y``, unbiased from the reports' mean, interval from :mod:`.scores` with
  ``Var Y = Var X + 2t/(1 − t)²``;
* **a deconvolved histogram**: EM for the distribution of X on ``0..m`` as a mixture with known
  components (Dempster, Laird & Rubin 1977; for a convolution this is Richardson–Lucy), from
  the uniform histogram and stopped after at most 200 steps.  The exact maximum-likelihood
  deconvolution is spiky (it converges to few point masses, and slowly); stopping early is the
  usual regularization, so this is a smoothed estimate of the shape, reported with its steps and
  whether the steps had converged.  No intervals: pointwise uncertainty after deconvolving this
  much noise is large, and the mean (above) is the number to quote.

References
----------
.. [1] I. Waudby-Smith, Z. S. Wu, A. Ramdas, "Nonparametric extensions of randomized response
   for private confidence sets", ICML 2023.
.. [2] J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally
   private estimation", JASA 113 (2018) 182–201.
.. [3] G. J. Feldman, R. D. Cousins, Phys. Rev. D 57 (1998) 3873.
.. [4] A. P. Dempster, N. M. Laird, D. B. Rubin, "Maximum likelihood from incomplete data via
   the EM algorithm", JRSS B 39 (1977) 1–38.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from deniable.client.mechanism import resolve
from deniable.client.numeric import LaplaceMechanism, laplace
from deniable.errors import FieldError

from .binomial import cp_lower, cp_upper, z
from .intervals import check_method, interval
from .marginal import estimate
from .result import EstimateResult, Result, frozen, json_number
from .scores import Moments, ScoreModel, additive_model, moments, rr_model, rr_score, score_interval
from .validate import check_confidence

EM_ITERATIONS = 200  # early stopping regularizes the deconvolution (module notes)
EM_TOLERANCE = 1e-8


@dataclass(frozen=True, eq=False)
class MeanResult(Result):
    """The mean of the answers (answer-index units) with its interval.

    ``clt_half_width`` is the half-width of the textbook interval ``mean ± z · std_error``, the
    known-variance (oracle) interval with the variance estimated: ``width_ratio`` compares the
    reported interval's width with it.
    """

    n: int
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    method: str  # "exact" (Feldman–Cousins, G = 1) or "score" (estimators.scores)
    confidence: float
    clt_half_width: float

    @property
    def width_ratio(self) -> float:
        if not self.clt_half_width > 0:
            return float("nan")
        return (self.ci_high - self.ci_low) / (2 * self.clt_half_width)

    def to_dict(self, scale: float = 1.0, offset: float = 0.0) -> dict:
        """Every field and ``width_ratio``, JSON-ready (NaN and infinity become None), in the units
        ``offset + scale · x``: the estimate and the interval move and stretch, the standard error
        and ``clt_half_width`` only stretch, ``width_ratio`` has no units.  A numeric question
        passes its minimum and step (answer index → its units); the defaults keep index units.

        >>> MeanResult(n=10, estimate=2.0, std_error=0.5, ci_low=1.0, ci_high=3.0, method="score",
        ...            confidence=0.95, clt_half_width=0.98).to_dict(scale=0.5, offset=10.0)["ci_high"]
        11.5
        """
        def units(x):
            x = json_number(x)
            return None if x is None else offset + scale * x

        return {"n": self.n, "estimate": units(self.estimate), "std_error": json_number(self.std_error * scale),
                "ci_low": units(self.ci_low), "ci_high": units(self.ci_high), "method": self.method,
                "confidence": self.confidence, "clt_half_width": json_number(self.clt_half_width * scale),
                "width_ratio": json_number(self.width_ratio)}


@dataclass(frozen=True, eq=False)
class NumericResult(Result):
    """Everything estimated for one numeric question (answer-index units)."""

    mechanism: str  # "grid", "laplace" or "direct"
    m: int
    grid: int | None
    n: int
    epsilon: float
    declared_epsilon: float
    confidence: float
    mean: MeanResult
    distribution: EstimateResult | None = None  # over the grid points (grid, direct)
    support: np.ndarray | None = None  # the grid points' answer indices
    cdf: np.ndarray | None = None
    cdf_low: np.ndarray | None = None
    cdf_high: np.ndarray | None = None
    median: float = float("nan")
    median_low: float = 0.0
    median_high: float = 0.0
    histogram: np.ndarray | None = None  # laplace: deconvolved P(X = i), i = 0..m
    histogram_iterations: int = 0
    histogram_converged: bool = True
    note: str = field(default="")

    MEDIAN_METHOD = "grid CDF test inversion (Clopper–Pearson)"

    def to_dict(self, scale: float = 1.0, offset: float = 0.0) -> dict:
        """The estimates JSON of a numeric question (docs/design.md, "Formats"), JSON-ready.

        Values (the grid points, the median, the histogram's bars, the mean) are in the units
        ``offset + scale · index``: a question passes its minimum and step, the defaults keep
        answer-index units.  Keys: ``n``, ``mechanism``, ``grid``, ``epsilon`` and
        ``declared_epsilon`` (None when asked directly), ``confidence``, ``note`` (None when
        empty), ``mean`` (:meth:`MeanResult.to_dict`); with a distribution (grid, direct) ``p``,
        ``q``, ``method``, ``distribution`` (per grid point its ``value``, the per-option fields of
        :meth:`EstimateResult.options` and the CDF with its interval) and ``median``; with the
        discrete Laplace mechanism ``histogram`` (``value``, ``estimate`` per answer),
        ``histogram_iterations`` and ``histogram_converged``.
        """
        def units(index):
            index = json_number(index)
            return None if index is None else offset + scale * index

        data = {"n": self.n, "mechanism": self.mechanism, "grid": self.grid, "epsilon": json_number(self.epsilon),
                "declared_epsilon": json_number(self.declared_epsilon), "confidence": self.confidence,
                "note": self.note or None, "mean": self.mean.to_dict(scale, offset)}
        if self.distribution is not None:
            d = self.distribution
            data.update(p=d.p, q=d.q, method=d.method)
            data["distribution"] = [
                {"value": units(int(self.support[j])), **{key: v for key, v in option.items() if key != "label"},
                 "cdf": json_number(self.cdf[j]), "cdf_low": json_number(self.cdf_low[j]),
                 "cdf_high": json_number(self.cdf_high[j])}
                for j, option in enumerate(d.options())]
            data["median"] = {"estimate": units(self.median), "ci_low": units(self.median_low),
                              "ci_high": units(self.median_high), "method": self.MEDIAN_METHOD}
        if self.histogram is not None:
            data["histogram"] = [{"value": units(i), "estimate": json_number(v)} for i, v in enumerate(self.histogram)]
            data["histogram_iterations"] = int(self.histogram_iterations)
            data["histogram_converged"] = bool(self.histogram_converged)
        return data


# ---------------------------------------------------------------- the mean


def moments_mean(model: ScoreModel, mom: Moments, confidence: float, scale: float = 1.0) -> tuple:
    """``(estimate, std_error, low, high, clt_half_width)`` × ``scale`` from score moments (vectorized)."""
    low, high = score_interval(model, mom, confidence)
    n = np.asarray(mom.n, dtype=float)
    # the standard error of the mean: sqrt(v/n) with the sample variance v = m2 · n/(n − 1)
    se = np.where(n >= 2, np.sqrt(mom.m2 / np.maximum(n - 1, 1)), np.nan)
    est = np.where(n > 0, mom.mean, np.nan)
    return est * scale, se * scale, low * scale, high * scale, z(confidence) * se * scale


def grid_mean(counts, m: int, grid: int, epsilon, confidence: float = 0.95):
    """The mean answer (index units) from grid reports: ``(estimate, std_error, low, high, clt, method)``.

    ``counts[..., j]`` is the number of reports of grid index j (vectorized over leading axes:
    the Monte Carlo script passes many count vectors).  G = 1 uses the exact interval.
    """
    counts = np.asarray(counts, dtype=np.int64)
    mech = resolve(grid + 1, epsilon)
    d = m // grid
    if grid == 1 and mech.protected:
        n = counts.sum(axis=-1)
        if np.ndim(n) == 0:
            n_ = int(n)
            if n_ == 0:
                return np.nan, np.nan, 0.0, float(m), np.nan, "exact"
            lo, hi = interval("exact", counts[..., 1], n_, mech.p, mech.q, confidence)
        else:
            n_ = int(n.flat[0])
            if not (n == n_).all():
                raise FieldError("a batch of count vectors must share n", "counts")
            lo, hi = interval("exact", counts[..., 1], n_, mech.p, mech.q, confidence)
        lam = counts[..., 1] / np.maximum(n, 1)
        est = (lam - mech.q) / (mech.p - mech.q)
        se = np.sqrt(np.clip(lam, mech.q, mech.p) * (1 - np.clip(lam, mech.q, mech.p)) / np.maximum(n, 1)) \
            / (mech.p - mech.q)
        return est * m, se * m, lo * m, hi * m, z(confidence) * se * m, "exact"
    model = rr_model(grid + 1, mech.p, mech.q)
    mom = moments(counts, rr_score(grid + 1, mech.p, mech.q))
    return (*moments_mean(model, mom, confidence, d), "score")


def laplace_model(mech: LaplaceMechanism) -> ScoreModel:
    """The score model of the discrete Laplace mechanism: ``Var Y = Var X + 2t/(1 − t)²``."""
    return additive_model(mech.m, mech.noise_variance)


def laplace_mean(values, counts, m: int, epsilon: float, confidence: float = 0.95):
    """The mean answer from discrete Laplace reports ``values`` (index units) seen ``counts`` times."""
    mech = laplace(m, epsilon)
    mom = moments(counts, np.asarray(values, dtype=float))
    return (*moments_mean(laplace_model(mech), mom, confidence, 1.0), "score")


def _mean_result(parts, n, confidence) -> MeanResult:
    est, se, lo, hi, clt, method = parts
    return MeanResult(n=int(n), estimate=float(est), std_error=float(se), ci_low=float(lo), ci_high=float(hi),
                      method=method, confidence=confidence, clt_half_width=float(clt))


# ---------------------------------------------------------------- distribution, CDF, median


def grid_cdf(counts, mech, consistent, method: str, confidence: float):
    """The consistent CDF over the grid and an exact interval at each grid point."""
    counts = np.asarray(counts, dtype=np.int64)
    k, n = counts.size, int(counts.sum())
    cdf = np.minimum(np.cumsum(np.nan_to_num(consistent)), 1.0)
    low, high = np.zeros(k), np.ones(k)
    if n == 0:
        return cdf, low, high
    below = np.cumsum(counts)
    for j in range(k - 1):
        q_j = (j + 1) * mech.q
        p_j = q_j + (mech.p - mech.q)
        lo, hi = interval(method, below[j:j + 1], n, p_j, q_j, confidence)
        low[j], high[j] = lo[0], hi[0]
    low[-1] = high[-1] = 1.0
    return cdf, low, high


def grid_median(counts, mech, support, cdf, confidence: float):
    """The median's point estimate and interval (answer-index units); see the module notes."""
    counts = np.asarray(counts, dtype=np.int64)
    k, n = counts.size, int(counts.sum())
    if n == 0:
        return float("nan"), float(support[0]), float(support[-1])
    alpha = 1 - confidence
    below = np.cumsum(counts)
    scale = mech.p - mech.q
    shifts = (np.arange(k) + 1) * mech.q
    upper = np.clip((cp_upper(below, n, alpha / 2) - shifts) / scale, 0.0, 1.0)  # bounds on F_J(j)
    lower = np.clip((cp_lower(below, n, alpha / 2) - shifts) / scale, 0.0, 1.0)
    upper[-1] = lower[-1] = 1.0
    kept = []
    for j in range(k):
        too_low = upper[j] < 0.5  # F_J(j) ≥ ½ is contradicted
        too_high = j >= 2 and lower[j - 2] > 0.5  # F_J(j − 2) < ½ is contradicted
        if not (too_low or too_high):
            kept.append(j)
    estimate = float(support[int(np.argmax(cdf >= 0.5 - 1e-12))])
    if not kept:  # cannot happen with a valid count vector, but never claim nothing
        return estimate, float(support[0]), float(support[-1])
    first, last = kept[0], kept[-1]
    return estimate, float(support[max(first - 1, 0)]), float(support[last])


# ---------------------------------------------------------------- discrete Laplace deconvolution


def _end_kernel(y: int, mech: LaplaceMechanism) -> np.ndarray:
    """``P(Y = y | x)`` for x = 0..m at a clamped end y = −L or m + L (the whole tail beyond)."""
    x = np.arange(mech.m + 1)
    z_ = y - x
    if y == mech.low:  # P(Z ≤ z) = t^(−z)/(1 + t) for z ≤ 0
        return np.power(mech.t, -z_.astype(float)) / (1 + mech.t)
    return np.power(mech.t, z_.astype(float)) / (1 + mech.t)  # P(Z ≥ z), z ≥ 0


def deconvolve(values, counts, mech: LaplaceMechanism, iterations: int = EM_ITERATIONS):
    """The maximum-likelihood distribution of X on ``0..m`` from discrete Laplace reports (EM).

    Returns ``(histogram, iterations, converged)``.  With ``λ_y = Σ_x π_x K(y − x)`` the EM step is
    ``π_x ← π_x Σ_y c_y K(y − x)/λ_y / n`` (Richardson–Lucy); both sums are a convolution and a
    correlation of the observed range with the two-sided geometric kernel (by FFT), and the
    clamped end reports use the tail kernel.  Starting from the uniform histogram, it stops after
    ``iterations`` steps or when a step moves no probability by more than 1e-8 (``converged``).
    """
    values = np.asarray(values, dtype=np.int64)
    counts = np.asarray(counts, dtype=float)
    keep = counts > 0
    values, counts = values[keep], counts[keep]
    m = mech.m
    n = counts.sum()
    if n == 0:
        return np.full(m + 1, np.nan), 0, True
    lo, hi = int(values.min()), int(values.max())
    width = hi - lo + 1
    kernel = mech.pmf(np.arange(lo - m, hi + 1))  # index z − (lo − m)
    observed = np.zeros(width)
    observed[values - lo] = counts
    x = np.arange(m + 1)
    ends = {y: _end_kernel(y, mech) for y in (mech.low, mech.high) if lo <= y <= hi and observed[y - lo] > 0}

    # Both products by FFT, the kernel's transform computed once: one length holds either full
    # convolution (kernel with π, or with the reversed ratio), so its wrap-around never reaches them.
    size = 1 << (kernel.size + max(m + 1, width) - 2).bit_length()
    transform = np.fft.rfft(kernel, size)

    def convolve(signal):  # the full convolution of the kernel with ``signal``
        return np.fft.irfft(np.fft.rfft(signal, size) * transform, size)

    def em(pi):
        lam = np.clip(convolve(pi)[m:m + width], 1e-300, None)
        for y, kern in ends.items():
            lam[y - lo] = max(float(kern @ pi), 1e-300)
        ratio = observed / lam
        weights = convolve(ratio[::-1])[width - 1:width + m][::-1]
        for y, kern in ends.items():
            weights += ratio[y - lo] * (kern - kernel[y - lo + m - x])
        new = np.clip(pi * weights / n, 0.0, None)
        return new / new.sum()

    pi = np.full(m + 1, 1.0 / (m + 1))
    for step in range(1, iterations + 1):
        new = em(pi)
        change = float(np.abs(new - pi).max())
        pi = new
        if change < EM_TOLERANCE:
            return pi, step, True
    return pi, iterations, False


def estimate_grid(counts, m: int, grid: int, epsilon, *, confidence: float = 0.95, method: str = "exact") -> NumericResult:
    """Estimate a numeric question asked with grid randomized response (or directly, ``epsilon=None``
    with ``grid = m``).

    Parameters
    ----------
    counts : sequence of int
        ``counts[j]`` reports of grid index j, ``j = 0..G``.
    m, grid : int
        Steps between min and max, and G (dividing m).
    epsilon : float or None
        Declared ε (None: asked directly).
    confidence : float
        Level of every interval.
    method : str
        Interval method of the per-grid-point estimates and the CDF (the mean's interval is
        "exact" for G = 1, else "score"; the median's is Clopper–Pearson based).

    Returns
    -------
    NumericResult
        In answer-index units; see the module notes for each estimate.

    Examples
    --------
    >>> r = estimate_grid([300, 700], m=40, grid=1, epsilon=1.0)
    >>> r.mean.method, round(r.mean.estimate, 2)
    ('exact', 37.31)
    """
    confidence = check_confidence(confidence)
    method = check_method(method)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.ndim != 1 or counts.size != grid + 1 or (counts < 0).any():
        raise FieldError(f"counts must be {grid + 1} non-negative report counts (one per grid point)", "counts")
    mech = resolve(grid + 1, epsilon)
    n = int(counts.sum())
    mean = _mean_result(grid_mean(counts, m, grid, epsilon, confidence), n, confidence)
    dist = estimate(counts, epsilon, confidence=confidence, method=method)
    support = np.arange(grid + 1) * (m // grid)
    cdf, low, high = grid_cdf(counts, mech, dist.consistent, method, confidence)
    median, median_low, median_high = grid_median(counts, mech, support, cdf, confidence)
    return NumericResult(
        mechanism="grid" if mech.protected else "direct", m=m, grid=grid, n=n, epsilon=mech.epsilon,
        declared_epsilon=mech.declared_epsilon, confidence=confidence, mean=mean, distribution=dist,
        support=frozen(support), cdf=frozen(cdf), cdf_low=frozen(low), cdf_high=frozen(high),
        median=median, median_low=median_low, median_high=median_high, note=dist.note,
    )


def estimate_laplace(values, counts, m: int, epsilon: float, *, confidence: float = 0.95) -> NumericResult:
    """Estimate a numeric question asked with the discrete Laplace mechanism.

    Parameters
    ----------
    values, counts : sequences of int
        The distinct reports (answer-index units, ``−L..m + L``) and how often each was seen.
    m : int
        Steps between min and max.
    epsilon : float
        Declared ε.
    confidence : float
        Level of the mean's interval.

    Returns
    -------
    NumericResult
        The mean (score interval, :mod:`.scores`) and the deconvolved histogram.

    Examples
    --------
    >>> r = estimate_laplace([3, 5, 9], [10, 20, 10], m=10, epsilon=4.0)
    >>> round(r.mean.estimate, 2), r.histogram.size
    (5.5, 11)
    """
    confidence = check_confidence(confidence)
    values = np.asarray(values, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if values.shape != counts.shape or values.ndim != 1 or (counts < 0).any():
        raise FieldError("values and counts must be 1-d arrays of the same length, counts non-negative", "values")
    mech = laplace(m, epsilon)
    if values.size and (values.min() < mech.low or values.max() > mech.high):
        raise FieldError(f"reports must lie in {mech.low}..{mech.high}", "values")
    n = int(counts.sum())
    mean = _mean_result(laplace_mean(values, counts, m, epsilon, confidence), n, confidence)
    histogram, steps, converged = deconvolve(values, counts, mech)
    note = ""
    if n == 0:
        note = "no reports: the mean is undefined and its interval is the whole range"
    return NumericResult(
        mechanism="laplace", m=m, grid=None, n=n, epsilon=mech.epsilon, declared_epsilon=mech.declared_epsilon,
        confidence=confidence, mean=mean, histogram=frozen(histogram), histogram_iterations=steps,
        histogram_converged=converged, note=note,
    )


# ---------------------------------------------------------------- planning


@dataclass(frozen=True)
class MechanismPlan(Result):
    """One candidate mechanism for a numeric question: the mean's variance per report and margins."""

    mechanism: str  # "grid" or "laplace"
    grid: int | None
    epsilon: float  # realized
    worst_variance: float  # per report, answer-index units², at the worst distribution on 0..m
    uniform_variance: float  # per report, at answers uniform on 0..m
    margin_worst: float  # z sqrt(worst/n), answer-index units
    margin_uniform: float
    needed: int | None  # respondents for the wanted margin in the worst case (None: no margin asked)


def grid_variances(m: int, grid: int, epsilon) -> tuple[float, float]:
    """The score's variance per report (answer-index units²): largest over all answer distributions,
    and at answers uniform on 0..m.

    By (1)–(2) of :mod:`.scores`, ``Var = d² [Var J/(p − q) + h(μ)]`` with ``Var J ≤ μ(G − μ)``: a
    quadratic in μ, maximized over [0, G] on a fine grid.
    """
    mech = resolve(grid + 1, epsilon)
    d = m // grid
    model = rr_model(grid + 1, mech.p, mech.q)
    mu = np.linspace(0, grid, 2001)
    worst = float(np.max(model.vmax(mu))) * d * d
    rounded = np.zeros(grid + 1)
    for x in range(m + 1):
        j, r = divmod(x, d)
        rounded[j] += (1 - r / d) / (m + 1)
        if r:
            rounded[j + 1] += r / d / (m + 1)
    mean = float(rounded @ np.arange(grid + 1))
    var_j = float(rounded @ (np.arange(grid + 1) - mean) ** 2)
    return worst, float(model.variance(mean, var_j)) * d * d


def laplace_variances(m: int, epsilon) -> tuple[float, float]:
    """``m²/4 + 2t/(1 − t)²`` (answers on both ends) and ``m(m + 2)/12 + 2t/(1 − t)²`` (uniform)."""
    noise = laplace(m, epsilon).noise_variance
    return m * m / 4 + noise, m * (m + 2) / 12 + noise


def grid_candidates(m: int, limit: int = 50) -> list[int]:
    """The G the planner compares: every divisor of m up to ``limit``, and m itself."""
    return sorted({g for g in range(1, min(m, limit) + 1) if m % g == 0} | {m})


def plan_numeric(m: int, epsilon, n: int, confidence: float = 0.95, margin: float | None = None) -> list[MechanismPlan]:
    """Every candidate mechanism's mean margin at n respondents, best (least worst-case variance) first.

    Margins are ``z sqrt(V/n)`` in answer-index units; ``margin`` (same units), if given, adds the
    respondents each candidate needs for it in the worst case.  In the worst case G = 1 always
    wins (Duchi, Jordan & Wainwright 2018: it is minimax optimal for the mean); the uniform
    column shows where larger G or the Laplace mechanism do better for answers spread inside
    the range.

    >>> [(p.mechanism, p.grid) for p in plan_numeric(40, 1.0, 500)][:2]
    [('grid', 1), ('grid', 2)]
    """
    zq = z(check_confidence(confidence))
    rows = []
    options = [("grid", g) for g in grid_candidates(m)] + [("laplace", None)]
    for name, g in options:
        if name == "grid":
            worst, uniform = grid_variances(m, g, epsilon)
            realized = resolve(g + 1, epsilon).epsilon
        else:
            worst, uniform = laplace_variances(m, epsilon)
            realized = laplace(m, epsilon).epsilon
        needed = None if margin is None else int(np.ceil((zq * np.sqrt(worst) / margin) ** 2))
        rows.append(MechanismPlan(mechanism=name, grid=g, epsilon=realized, worst_variance=worst,
                                  uniform_variance=uniform, margin_worst=zq * np.sqrt(worst / n),
                                  margin_uniform=zq * np.sqrt(uniform / n), needed=needed))
    rows.sort(key=lambda r: (r.worst_variance, r.mechanism != "grid", r.grid or 0))
    return rows
