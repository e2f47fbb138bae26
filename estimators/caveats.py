"""What an estimate is, and when to say so: the notes an :class:`EstimateResult` carries.

Three rules, each a number computed for the result at hand:

1. **Uninformative reports** (tiny ε).  The reports can tell "nobody holds this option" from
   "everybody holds it" only if the likelihood-ratio test between π = 0 and π = 1 can:
   ``n · min(KL(p‖q), KL(q‖p)) ≥ χ²₁(confidence)/2`` (the expected log-likelihood ratio of n
   reports, for the Bernoulli report of one option, against the test's critical value).  Below
   it the exact intervals keep their coverage, but where they fall is set by the construction's
   boundaries, not by the data (``estimate([60, 40], 0.001)`` gives π₀ ∈ [0.5, 1]); the note
   says so and how many respondents would reach the critical value.
2. **Bias of the consistent estimate.**  The constrained maximum-likelihood estimate stays in
   [0, 1], so where the truth is near 0 (or 1) it is pulled inward.  For two options it is
   ``clip(π̂, 0, 1)`` of the unbiased π̂, whose bias at π is
   ``Σ_x b(x; n, λ) clip((x/n − q)/(p − q), 0, 1) − π`` — exactly +0.306 at n = 12, ε = 0.3,
   π = 0, +0.073 at n = 333, +0.030 at n = 2,000 (``consistent_bias``).  With more options the
   water-filled estimate of a rare option behaves alike.  The note appears when the bias at the
   estimated proportions reaches one percentage point; since it falls with the distance to the
   nearer end of [0, 1], only the options estimated nearest 0 and nearest 1 are summed.
3. **Few respondents.**  ``std_error`` plugs the clipped ``c/n`` into the exact variance
   ``λ(1 − λ)/(n(p − q)²)``; at n ≤ 40 its expectation is 0.84 to 1.24 times the true
   standard deviation (exact sums over n ∈ {12, 20, 40}, ε ∈ {0.3, 0.9, 2.5, 5},
   k ∈ {2, 4, 10}, 101 values of π).  The note says to read the intervals, which are exact.

References
----------
.. [1] S. S. Wilks, "The large-sample distribution of the likelihood ratio for testing
   composite hypotheses", Annals of Mathematical Statistics 9 (1938) 60–62 (the χ²₁ critical
   value of rule 1).
.. [2] S. Kullback, R. A. Leibler, "On information and sufficiency", Annals of Mathematical
   Statistics 22 (1951) 79–86 (the expected log-likelihood ratio per report).
.. [3] P. Kairouz, K. Bonawitz, D. Ramage, "Discrete distribution estimation under local
   privacy", ICML 2016 (the constrained maximum-likelihood estimate of rule 2).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from .binomial import binom_pmf, z

FEW_RESPONDENTS = 40  # at or below this n, std_error gets a note
MATERIAL_BIAS = 0.01  # consistent-estimate bias worth a note (one percentage point)
_EXACT_SUM_COUNTS = 50_000  # bias sums over at most this many counts; a normal limit beyond


def _kl(a: float, b: float) -> float:
    """KL divergence between Bernoulli(a) and Bernoulli(b)."""
    if b <= 0 or b >= 1:
        return math.inf
    # log1p of the relative differences: log(a/b) rounds away what separates a from b when they are close
    # (ε near 0, a design near p = ½), where the two terms cancel to first order and the KL is second order
    first = a * math.log1p((a - b) / b) if a > 0 else 0.0
    second = (1 - a) * math.log1p((b - a) / (1 - b)) if a < 1 else 0.0
    return float(first + second)


def information(n: int, p: float, q: float) -> float:
    """Expected log-likelihood ratio of n reports between π = 0 and π = 1 for one option."""
    return n * min(_kl(p, q), _kl(q, p))


def respondents_to_inform(p: float, q: float, confidence: float) -> float:
    """Respondents at which ``information`` reaches ``χ²₁(confidence)/2`` (rule 1)."""
    per_report = min(_kl(p, q), _kl(q, p))
    return math.inf if per_report == 0 else z(confidence) ** 2 / 2 / per_report


def consistent_bias(n: int, p: float, q: float, pi) -> np.ndarray:
    """Return the exact bias of ``clip(π̂, 0, 1)`` at each π (the two-option consistent estimate).

    Summed over the counts within ``nλ ± (12σ + 12)`` (below 1e-30 of probability outside);
    beyond 50,000 counts the normal limit ``E[clip(π + sZ, 0, 1)] − π`` with
    ``s = sqrt(λ(1 − λ)/n)/(p − q)``.

    >>> round(float(consistent_bias(12, *_two(0.3), [0.0])[0]), 3)
    0.306
    """
    pi = np.atleast_1d(np.asarray(pi, dtype=float))
    lam = q + (p - q) * pi
    sd = np.sqrt(n * lam * (1 - lam))
    out = np.empty(pi.size)
    for i in range(pi.size):
        spread = 12 * sd[i] + 12
        if 2 * spread > _EXACT_SUM_COUNTS:
            s = sd[i] / n / (p - q)
            out[i] = _normal_clip_mean(pi[i], s) - pi[i]
            continue
        x = np.arange(max(0, math.floor(n * lam[i] - spread)), min(n, math.ceil(n * lam[i] + spread)) + 1)
        values = np.clip((x / n - q) / (p - q), 0.0, 1.0)
        out[i] = binom_pmf(x, n, lam[i]) @ values - pi[i]
    return out


def _normal_clip_mean(mu: float, s: float) -> float:
    """``E[clip(mu + sZ, 0, 1)]`` for a standard normal Z."""
    if s <= 0:
        return min(max(mu, 0.0), 1.0)

    def positive_part(m):  # E[(m + sZ)⁺]
        t = m / s
        return m * ndtr(t) + s * math.exp(-0.5 * t * t) / math.sqrt(2 * math.pi)

    return float(positive_part(mu) - positive_part(mu - 1.0))


def _two(epsilon: float) -> tuple[float, float]:
    """Realized (p, q) of a two-option question (for the doctest)."""
    from deniable.client.mechanism import mechanism

    m = mechanism(2, epsilon)
    return m.p, m.q


def uninformative_note(n: int, info: float, needed: float, privacy: str, confidence: float, what: str = "an option",
                       holds: str = "holds") -> str:
    """Rule 1's note: the reports of n respondents (expected log-likelihood ratio ``info``, below
    ``χ²₁(confidence)/2``) cannot tell ``what`` nobody ``holds`` from one everybody ``holds``; ``needed``
    respondents would reach the critical value.  ``privacy`` names the randomization (``ε = 0.001``)."""
    critical = z(confidence) ** 2 / 2
    return (f"with {privacy} and n = {n:,} the reports cannot tell {what} nobody {holds} from one everybody "
            f"{holds} (expected log-likelihood ratio {info:.2g}, below {critical:.2f}): the intervals keep "
            f"their coverage but mostly show the range [0, 1], not the data; about {math.ceil(needed):,} "
            "respondents would be needed")


def notes(n: int, k: int, p: float, q: float, epsilon: float, confidence: float, consistent) -> list[str]:
    """Return the notes (module rules 1–3) for an estimate with these parameters."""
    if n == 0:
        return []
    out = []
    uninformative = p < 1 and information(n, p, q) < z(confidence) ** 2 / 2
    if uninformative:
        out.append(uninformative_note(n, information(n, p, q), respondents_to_inform(p, q, confidence),
                                      f"ε = {epsilon:.3g}", confidence))
    if p < 1 and not uninformative:  # (when uninformative, every estimate is mostly the clip)
        s = math.sqrt(max(q * (1 - q), p * (1 - p), min(0.25, q * (1 - q) + p * (1 - p))) / n) / (p - q)
        shares = np.clip(np.asarray(consistent, dtype=float), 0, 1)
        ends = np.array([shares.min(), shares.max()])
        # the clipping bias falls with the distance to 0 (or 1): the options estimated nearest
        # the two ends carry the largest.  Its normal limit, with the largest standard error,
        # screens out the cases where it cannot reach a point before summing exactly
        screen = max(abs(_normal_clip_mean(e, s) - e) for e in ends)
        if screen >= 0.7 * MATERIAL_BIAS:
            bias = consistent_bias(n, p, q, ends)
            worst = int(np.argmax(np.abs(bias)))
            if abs(bias[worst]) >= MATERIAL_BIAS:
                out.append(
                    f"the consistent estimate (constrained maximum likelihood) is pulled toward the inside of "
                    f"[0, 1]: for the proportions estimated here its bias is up to about {bias[worst]:+.3f} "
                    f"at this n and ε; the unbiased estimate is in 'estimate'")
    if n <= FEW_RESPONDENTS:
        out.append(
            f"few respondents (n = {n}): std_error is a plug-in guide, between 0.84 and 1.24 times the true "
            f"standard deviation on average at n ≤ {FEW_RESPONDENTS}; the intervals are exact")
    return out
