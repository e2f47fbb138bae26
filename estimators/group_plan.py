"""How many respondents a two-group design needs for a margin on π, and how to split them between the groups.

The estimate of π is linear in the two groups' "yes" shares: ``π̂ = w₁ λ̂₁ + w₂ λ̂₂ + const``, with w the first
row of ``A⁻¹`` in the design's ``P = c + A θ`` (:mod:`.two_group_fit`).  With ``σ_g = √(λ_g (1 − λ_g))`` and a
share ``s_g`` of the N respondents in group g:

* the **exact** interval (:func:`.two_group.estimate_two_group`'s default) projects the joint Clopper–Pearson
  box, each side at level √confidence, onto π: its half-width is about ``z′ Σ |w_g| σ_g / √(s_g N)`` with
  ``z′`` the two-sided normal quantile at √confidence.  Minimizing over s₁ + s₂ = 1 (Lagrange):
  ``s_g ∝ (|w_g| σ_g)^{2/3}`` and ``N = (z′/m)² (Σ_g (|w_g| σ_g)^{2/3})³``;
* the **Wald** interval of the moment estimate: variance ``Σ w_g² σ_g² / (s_g N)``, minimized by Neyman's
  allocation ``s_g ∝ |w_g| σ_g``, so ``N = (z/m)² (Σ_g |w_g| σ_g)²``.

Where π and the nuisance parameter are not given, the plan is for the worst case over the admissible
parameters (the largest N on a grid of the admissible region).  For the exact interval the normal
approximation is then checked: the smallest N (at the chosen split) whose exact interval, computed at the
expected counts ``round(λ_g n_g)``, is no wider than ±margin, found by bisection.  That is the plan's ``n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from deniable.errors import FieldError

from .result import Result

GRID = 41  # points per side of the grid over the admissible region for the worst case


@dataclass(frozen=True)
class GroupPlan(Result):
    """Respondents for a margin on π under a two-group design: ``n`` in all, ``n_groups`` per group (the
    split that minimizes n: ``share`` in group 1), at the parameters ``at``; ``half_width`` is the interval's
    half-width at n (exact: computed; Wald: the formula), ``n_equal`` what an even split would need."""

    model: str
    p: tuple
    margin: float
    confidence: float
    interval: str
    n: int
    n_groups: tuple
    share: float
    at: dict
    half_width: float
    n_equal: int

    def summary(self) -> str:
        at = ", ".join(f"{k} = {v:.3g}" for k, v in self.at.items())
        return (f"{self.model}, p = {', '.join(f'{v:g}' for v in self.p)}: {self.n:,} respondents for ±{self.margin:g} "
                f"on π ({self.interval} {self.confidence:.0%} interval, at {at}): {self.n_groups[0]:,} in group 1 "
                f"and {self.n_groups[1]:,} in group 2 ({self.share:.0%} in group 1 minimizes n; an even split "
                f"needs {self.n_equal:,})")


def _weights(geometry) -> np.ndarray:
    return np.abs(np.linalg.inv(geometry.a)[0])


def _sigma(geometry, theta) -> np.ndarray:
    lam = np.clip(np.array(geometry.prob(theta)), 0.0, 1.0)
    return np.sqrt(lam * (1 - lam))


def _approximate(w, sigma, margin, zq, interval):
    """(N, share of group 1) of the normal approximation (module notes)."""
    ws = w * sigma
    parts = ws ** (2 / 3) if interval == "exact" else ws
    n = (zq / margin) ** 2 * (parts.sum() ** 3 if interval == "exact" else ws.sum() ** 2)
    share = parts[0] / parts.sum() if parts.sum() > 0 else 0.5
    return n, float(share)


def _admissible_grid(geometry):
    xs = np.linspace(0, 1, GRID)
    return [np.array((a, b)) for a in xs for b in xs if geometry.contains((a, b), slack=1e-12)]


def plan_two_group(model: str, p, margin: float, *, confidence: float = 0.95, interval: str = "exact",
                   pi: float | None = None, nuisance: float | None = None) -> GroupPlan:
    """Respondents for a margin of ±``margin`` on π under ``model`` with RRreg's ``p``, split between the groups
    to minimize them; at ``pi`` and ``nuisance`` (γ, t or π_UQ) if given, else at the worst case.

    >>> plan = plan_two_group("UQTunknown", [0.7, 0.3], 0.05)
    >>> plan.n, plan.n_groups, plan.half_width <= 0.05 < half_width_at(plan, plan.n - 1)
    (6001, (3826, 2175), True)
    """
    from .binomial import z
    from .two_group import PARAMETERS, check_model, check_p
    from .validate import check_confidence

    spec = check_model(model)
    p = check_p(spec, p)
    confidence = check_confidence(confidence)
    if isinstance(margin, bool) or not (isinstance(margin, (int, float)) and 0 < margin < 1):
        raise FieldError(f"must be a number in (0, 1), got {margin!r}", "margin")
    if interval not in ("exact", "wald"):
        raise FieldError(f"must be 'exact' or 'wald', got {interval!r}", "interval")
    if (pi is None) != (nuisance is None):
        raise FieldError(f"give both π and {spec.nuisance}, or neither (the worst case)", "pi" if pi is None else "nuisance")
    geometry = spec.geometry(p)
    w = _weights(geometry)
    zq = z(math.sqrt(confidence)) if interval == "exact" else z(confidence)
    if pi is not None:
        for name, value in (("pi", pi), ("nuisance", nuisance)):
            if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0 <= value <= 1):
                raise FieldError(f"must be a number in [0, 1], got {value!r}", name)
        thetas = [geometry.theta(spec.yes_probability(pi, nuisance, p))]
        if not geometry.contains(thetas[0], slack=1e-9):
            raise FieldError(f"π = {pi:g} and {spec.nuisance} = {nuisance:g} are not admissible together", "nuisance")
    else:
        thetas = _admissible_grid(geometry)
    n_approx, share, theta = _worst(w, geometry, thetas, margin, zq, interval)
    at = {"pi": float(theta[0]), spec.nuisance: float(PARAMETERS[spec.nuisance].value(theta))}
    plan = GroupPlan(model=spec.name, p=tuple(float(v) for v in p), margin=float(margin), confidence=confidence,
                     interval=interval, n=0, n_groups=(0, 0), share=share, at=at, half_width=math.nan, n_equal=0)
    lam = np.array(geometry.prob(theta))
    n = _smallest(lambda total: _half_width(plan, w, lam, total, share), margin, max(5, math.ceil(n_approx)))
    n_equal = _smallest(lambda total: _half_width(plan, w, lam, total, 0.5), margin, max(5, math.ceil(n_approx)))
    return GroupPlan(**{**plan.__dict__, "n": n, "n_groups": tuple(_split(n, share)),
                        "half_width": _half_width(plan, w, lam, n, share), "n_equal": n_equal})


def half_width_at(plan: GroupPlan, total: int) -> float:
    """The interval's half-width on π (see :func:`_half_width`) with ``total`` respondents split as ``plan``'s."""
    from .two_group import check_model

    geometry = check_model(plan.model).geometry(plan.p)
    theta = geometry.theta(check_model(plan.model).yes_probability(*plan.at.values(), plan.p)) \
        if plan.model != "SLD" else np.array((plan.at["pi"], plan.at["pi"] * plan.at["t"]))
    return _half_width(plan, _weights(geometry), np.array(geometry.prob(theta)), total, plan.share)


def _half_width(plan: GroupPlan, w, lam, total: int, share: float) -> float:
    """Exact: the half-width of the joint Clopper–Pearson box (each side at √confidence) projected onto π at the
    expected counts ``round(λ_g n_g)`` — an upper bound of the exact interval's, which clips the box to the
    admissible region; Wald: ``z √(Σ w_g² λ_g (1 − λ_g) / n_g)``."""
    from .binomial import z
    from .two_group_fit import cp_box

    sizes = np.array(_split(total, share), dtype=float)
    if plan.interval == "wald":
        return z(plan.confidence) * math.sqrt(float(np.sum(w ** 2 * lam * (1 - lam) / sizes)))
    yes = np.round(lam * sizes)
    lows, highs = cp_box(yes, sizes, plan.confidence)
    return float(np.sum(w * (highs - lows)) / 2)


def _smallest(width, margin: float, guess: int) -> int:
    """The smallest total n ≥ 5 with ``width(n) ≤ margin``, by doubling then bisection from ``guess``."""
    low, high = max(4, guess // 2), guess
    while width(high) > margin:
        low, high = high, 2 * high
    while width(low) <= margin and low > 4:
        low, high = max(4, low // 2), low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if width(mid) <= margin else (mid, high)
    return high


def _worst(w, geometry, thetas, margin, zq, interval):
    """(N, share of group 1, θ) of the normal approximation at the θ of ``thetas`` that needs the most."""
    best = None
    for theta in thetas:
        n, share = _approximate(w, _sigma(geometry, theta), margin, zq, interval)
        if best is None or n > best[0]:
            best = (n, share, theta)
    return best


def _split(total: int, share: float) -> list[int]:
    first = min(max(int(round(total * share)), 2), total - 2)
    return [first, total - first]


__all__ = ["GroupPlan", "half_width_at", "plan_two_group"]
