"""The geometry behind :mod:`.two_group`: likelihood, constrained maximum and intervals in a 2-vector θ.

Every two-group design of :mod:`.two_group` is affine in a 2-vector θ: ``P = c + A θ`` with
``P = (P(yes | group 1), P(yes | group 2))`` and A non-singular (the design is identifiable), and its
admissible parameters are a convex polygon in θ (:class:`Geometry`).  Each group's "yes" count is
Binomial(n_g, P_g), independently, so the Bernoulli log-likelihood

    ℓ(θ) = Σ_g y_g log P_g + (n_g − y_g) log(1 − P_g)      (0 · log 0 = 0)

is concave in θ, maximized without constraints at ``P = λ̂`` (the moment estimate θ̂ = A⁻¹(λ̂ − c)).

* **Constrained maximum** (:func:`constrained_mle`): θ̂ when it is admissible; otherwise the maximum
  lies on the polygon's boundary, so it is the best of the edges' maxima.  Along an edge
  ``P(u) = P_a + u (P_b − P_a)``, u ∈ [0, 1], ℓ is concave in u, its derivative decreasing: the maximum
  is the root of the derivative (``scipy.optimize.brentq`` to 1e-15 in u) or an end (Boyd &
  Vandenberghe 2004, §3.1, §4.2).
* **Exact box** (:func:`clip`, :func:`box_polygon`): the Clopper–Pearson intervals for P_1 and P_2,
  each at level √confidence, cover the true pair at once with probability ≥ confidence at every n (the
  groups are independent); as half-planes in θ they clip the polygon (Sutherland & Hodgman 1974).  A
  parameter linear in θ takes its extremes over the clipped polygon at its vertices; SLD's
  ``t = s/π`` is linear-fractional: its extremes are the slopes of the rays from the origin through
  the vertices (:func:`ratio_range`).
* **Profile likelihood** (:func:`profile_interval`): ``{ψ : 2 (ℓ̂ − max_{θ admissible, ψ(θ) = ψ} ℓ(θ))
  ≤ χ²₁(confidence)}``; a linear ψ's constraint cuts the polygon in a segment (maximized as an
  edge), t's is the ray ``s = t π``.  The profile is quasi-concave (its super-level sets are the
  projections of ℓ's convex ones), so each end is one root (brentq) or the range's end.

References
----------
.. [1] I. E. Sutherland, G. W. Hodgman, "Reentrant polygon clipping", Comm. ACM 17 (1974) 32–42.
.. [2] S. Boyd, L. Vandenberghe, *Convex Optimization* (2004).
.. [3] C. J. Clopper, E. S. Pearson, Biometrika 26 (1934) 404–413.
.. [4] Y. Pawitan, *In All Likelihood* (2001), §2.6 and §3.4 (likelihood intervals, profile likelihood).
.. [5] S. G. Self, K.-Y. Liang, "Asymptotic properties of maximum likelihood estimators and likelihood
   ratio tests under nonstandard conditions", JASA 82 (1987) 605–610.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .binomial import cp_lower, cp_upper

TINY = 1e-12  # a vertex with π below this sits at SLD's origin, where t is not defined


@dataclass(frozen=True)
class Parameter:
    """A reported parameter: ``offset + weight · θ`` (linear), or ``θ₂ / θ₁`` (``ratio``: SLD's t)."""

    name: str
    weight: tuple[float, float] = (0.0, 0.0)
    offset: float = 0.0
    ratio: bool = False

    def value(self, theta) -> float:
        if self.ratio:
            return theta[1] / theta[0] if theta[0] > 0 else math.nan
        return self.offset + self.weight[0] * theta[0] + self.weight[1] * theta[1]


@dataclass(frozen=True)
class Geometry:
    """``P = c + A θ`` and the admissible polygon's vertices (counter-clockwise) in θ."""

    c: np.ndarray
    a: np.ndarray
    vertices: tuple[tuple[float, float], ...]

    def prob(self, theta) -> tuple[float, float]:
        """(P_1, P_2) at θ, clipped to [0, 1] against rounding."""
        a, c = self.a, self.c
        p1 = c[0] + a[0, 0] * theta[0] + a[0, 1] * theta[1]
        p2 = c[1] + a[1, 0] * theta[0] + a[1, 1] * theta[1]
        return min(max(p1, 0.0), 1.0), min(max(p2, 0.0), 1.0)

    def theta(self, probs) -> np.ndarray:
        """θ = A⁻¹ (P − c)."""
        return np.linalg.solve(self.a, np.asarray(probs, dtype=float) - self.c)

    def contains(self, theta, slack: float = 0.0) -> bool:
        """Whether θ is in the polygon (each edge's inner half-plane, to ``slack``)."""
        v = self.vertices
        for i in range(len(v)):
            (x0, y0), (x1, y1) = v[i], v[(i + 1) % len(v)]
            if (x1 - x0) * (theta[1] - y0) - (y1 - y0) * (theta[0] - x0) < -slack:
                return False
        return True


def _xlogy(x: float, y: float) -> float:
    if x == 0:
        return 0.0
    return x * math.log(y) if y > 0 else -math.inf


def loglik(probs, yes, n) -> float:
    """The Bernoulli log-likelihood Σ_g y_g log P_g + (n_g − y_g) log(1 − P_g), with 0 · log 0 = 0."""
    return sum(_xlogy(y, p) + _xlogy(m - y, 1.0 - p) for p, y, m in zip(probs, yes, n))


def _slope(p: float, d: float, y: float, m: float) -> float:
    """d/du of group g's term at P_g = p moving by d per unit u (±inf at a boundary it leaves)."""
    if d == 0:
        return 0.0
    up = y / p if p > 0 else (math.inf if y > 0 else 0.0)
    down = (m - y) / (1.0 - p) if p < 1 else (math.inf if m > y else 0.0)
    return d * (up - down)


BIG = 1e300  # brentq is handed finite values: ±inf at a segment's end becomes ±BIG (the sign is what counts)


def segment_max(geometry: Geometry, theta_a, theta_b, yes, n) -> tuple[np.ndarray, float]:
    """The maximum of ℓ on the segment from θ_a to θ_b, and ℓ there (module notes)."""
    from scipy.optimize import brentq

    theta_a, theta_b = np.asarray(theta_a, dtype=float), np.asarray(theta_b, dtype=float)
    pa, pb = geometry.prob(theta_a), geometry.prob(theta_b)
    d = (pb[0] - pa[0], pb[1] - pa[1])

    def derivative(u: float) -> float:
        total = 0.0
        for g in range(2):
            p = min(max(pa[g] + u * d[g], 0.0), 1.0)
            total += _slope(p, d[g], yes[g], n[g])
        return min(max(total, -BIG), BIG)

    if d == (0.0, 0.0):
        u = 0.0
    elif derivative(0.0) <= 0:
        u = 0.0
    elif derivative(1.0) >= 0:
        u = 1.0
    else:
        u = brentq(derivative, 0.0, 1.0, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
    theta = theta_a + u * (theta_b - theta_a)
    return theta, loglik(geometry.prob(theta), yes, n)


def constrained_mle(geometry: Geometry, moment, yes, n) -> tuple[np.ndarray, float]:
    """The maximum of ℓ over the polygon and ℓ there: the moment estimate θ̂ when admissible, else the
    best of the edges' maxima (module notes)."""
    if np.all(np.isfinite(moment)) and geometry.contains(moment):
        return np.asarray(moment, dtype=float), loglik(geometry.prob(moment), yes, n)
    v = geometry.vertices
    best, best_ll = None, -math.inf
    for i in range(len(v)):
        theta, ll = segment_max(geometry, v[i], v[(i + 1) % len(v)], yes, n)
        if best is None or ll > best_ll:
            best, best_ll = theta, ll
    return best, best_ll


def clip(polygon: list, a0: float, a1: float, b: float) -> list:
    """Sutherland–Hodgman: the part of the convex ``polygon`` where ``a0 θ₁ + a1 θ₂ ≥ b``."""
    out = []
    for i in range(len(polygon)):
        cur, nxt = polygon[i], polygon[(i + 1) % len(polygon)]
        fc = a0 * cur[0] + a1 * cur[1] - b
        fn = a0 * nxt[0] + a1 * nxt[1] - b
        if fc >= 0:
            out.append(cur)
        if (fc >= 0) != (fn >= 0):
            w = fc / (fc - fn)
            out.append((cur[0] + w * (nxt[0] - cur[0]), cur[1] + w * (nxt[1] - cur[1])))
    return out


def cp_box(yes, n, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Each group's two-sided Clopper–Pearson interval at level √confidence: (lows, highs)."""
    alpha = (1.0 - math.sqrt(confidence)) / 2
    y, m = np.asarray(yes, dtype=float), np.asarray(n, dtype=float)
    return np.asarray(cp_lower(y, m, alpha), dtype=float), np.asarray(cp_upper(y, m, alpha), dtype=float)


def box_polygon(geometry: Geometry, lows, highs) -> list:
    """The admissible polygon clipped by ``low_g ≤ P_g ≤ high_g`` (empty list: no admissible θ)."""
    polygon = list(geometry.vertices)
    for g in range(2):
        a0, a1, c = geometry.a[g, 0], geometry.a[g, 1], geometry.c[g]
        polygon = clip(polygon, a0, a1, lows[g] - c)
        if polygon:
            polygon = clip(polygon, -a0, -a1, c - highs[g])
        if not polygon:
            return []
    return polygon


def ratio_range(polygon: list) -> tuple[float, float]:
    """The range of θ₂/θ₁ over the points of ``polygon`` with θ₁ > 0 (SLD's t, in [0, 1]): the slopes
    of its vertices (a point's slope lies between theirs), and at a vertex within TINY of the origin,
    where rounding blurs the vertex's own slope, also the slopes of its two edges (the cone it spans)."""
    slopes = []
    k = len(polygon)
    for i, (x, y) in enumerate(polygon):
        if x > 0:
            slopes.append(y / x)
        if x > TINY:
            continue
        # a vertex at (or, by rounding, next to) the origin: the rays along its edges, too (only widens)
        for j in ((i - 1) % k, (i + 1) % k):
            dx, dy = polygon[j][0] - x, polygon[j][1] - y
            if dx > TINY:
                slopes.append(dy / dx)
    if not slopes:
        return 0.0, 1.0
    return min(max(min(slopes), 0.0), 1.0), min(max(max(slopes), 0.0), 1.0)


def polygon_range(parameter: Parameter, polygon: list) -> tuple[float, float]:
    """The parameter's smallest and largest value over ``polygon`` (non-empty)."""
    if parameter.ratio:
        return ratio_range(polygon)
    values = [parameter.value(v) for v in polygon]
    return min(values), max(values)


def constraint_segment(geometry: Geometry, parameter: Parameter, value: float):
    """The admissible θ with ``parameter = value``: a segment ``(θ_a, θ_b)`` (the ray s = t π for a ratio),
    or None when the line misses the polygon."""
    if parameter.ratio:
        return (0.0, 0.0), (1.0, value)
    w0, w1 = parameter.weight
    target = value - parameter.offset
    v = geometry.vertices
    points = []
    for i in range(len(v)):
        a, b = v[i], v[(i + 1) % len(v)]
        fa, fb = w0 * a[0] + w1 * a[1] - target, w0 * b[0] + w1 * b[1] - target
        if fa == 0:
            points.append(a)
        if (fa < 0 < fb) or (fb < 0 < fa):
            w = fa / (fa - fb)
            points.append((a[0] + w * (b[0] - a[0]), a[1] + w * (b[1] - a[1])))
    if not points:
        return None
    along = [w1 * x - w0 * y for x, y in points]  # position along the line
    return points[int(np.argmin(along))], points[int(np.argmax(along))]


def profile(geometry: Geometry, parameter: Parameter, value: float, yes, n) -> float:
    """max ℓ over the admissible θ with ``parameter = value`` (−inf when there are none)."""
    segment = constraint_segment(geometry, parameter, value)
    if segment is None:
        return -math.inf
    return segment_max(geometry, segment[0], segment[1], yes, n)[1]


def parameter_range(geometry: Geometry, parameter: Parameter) -> tuple[float, float]:
    """The parameter's range over the whole admissible polygon."""
    return polygon_range(parameter, list(geometry.vertices))


def profile_interval(geometry: Geometry, parameter: Parameter, mle, best: float, yes, n,
                     confidence: float) -> tuple[float, float]:
    """The profile-likelihood interval ``{ψ : 2 (ℓ̂ − ℓ_prof(ψ)) ≤ χ²₁(confidence)}`` within the
    parameter's admissible range (module notes).

    An end of the range where the constraint pins θ to one vertex of the polygon (SLD's π = 0, CDM's
    π = 1 or β = 1) is tested against χ²₂ instead: there the likelihood ratio compares a point with a
    two-dimensional cone, a mixture of χ²₀, χ²₁ and χ²₂ (Self & Liang 1987) that χ²₁ understates —
    SLD's π = 0 was covered 0.92 with χ²₁ (docs/statistics.md); χ²₂ bounds the mixture."""
    from scipy.optimize import brentq
    from scipy.special import chdtri

    cut = best - chdtri(1, 1.0 - confidence) / 2
    vertex_cut = best - chdtri(2, 1.0 - confidence) / 2
    low, high = parameter_range(geometry, parameter)
    centre = parameter.value(mle)
    if not math.isfinite(centre):  # SLD with π̂ = 0: every t is as likely as the maximum
        return low, high

    def excess(value: float) -> float:
        return max(profile(geometry, parameter, value, yes, n), -BIG) - cut

    ends = []
    for end in (low, high):
        segment = constraint_segment(geometry, parameter, end)
        pinned = segment is not None and not parameter.ratio and np.array_equal(segment[0], segment[1])
        if end == centre or excess(end) >= 0 or (pinned and excess(end) + cut >= vertex_cut):
            ends.append(end)
        else:
            a, b = sorted((end, centre))
            ends.append(brentq(excess, a, b, xtol=1e-12, rtol=4 * np.finfo(float).eps, maxiter=200))
    return ends[0], ends[1]
