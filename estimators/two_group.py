"""Two-group designs that estimate non-compliance: CDM, CDMsym, SLD and UQTunknown (RRreg's names).

The respondents are split at random into two groups that answer with different randomization
probabilities ``p``; each group's share of "yes", λ_g, estimates ``P(yes | group g)``, and the two
equations give the prevalence π and a second, nuisance parameter that a one-group design cannot
separate from π.  The parameterizations are RRreg 0.7.5's (Heck & Moshagen 2018):

* **CDM**, cheating detection model (Clark & Desharnais 1998): honest carriers (π) say "yes", honest
  non-carriers (β) say "yes" when prompted (probability p_g), cheaters (γ) always say "no";
  ``P(yes | g) = π + (1 − π − γ) p_g``, π + β + γ = 1.
* **CDMsym**, the symmetric CDM (Ostapczuk, Moshagen, Zhao & Musch 2009): ``p = (p1, p2, p3, p4)``,
  the prompted-"yes" and prompted-"no" probabilities of group 1 (p1, p2) and group 2 (p3, p4);
  ``P(yes | 1) = π (1 − p2) + (1 − π − γ) p1``, ``P(yes | 2) = π (1 − p4) + (1 − π − γ) p3``.
* **SLD**, stochastic lie detector (Moshagen, Musch & Erdfelder 2012): a non-carrier in group g says
  "no" with probability p_g, a carrier says "yes" with probability t (the share of carriers who answer
  truthfully); ``P(yes | g) = π t + (1 − π)(1 − p_g)``.
* **UQTunknown**, the unrelated-question technique with the innocuous question's prevalence π_UQ
  unknown (Greenberg, Abul-Ela, Simmons & Horvitz 1969): group g is directed to the sensitive
  question with probability p_g; ``P(yes | g) = p_g π + (1 − p_g) π_UQ``.

What :func:`estimate_two_group` reports (:class:`TwoGroupResult`):

* ``moment``: the closed-form moment estimates (RRreg's ``RRuni(..., MLest = FALSE)``), **unclipped**;
  ``moment_se`` their standard errors exactly as RRreg computes them, with
  ``v_g = λ_g (1 − λ_g) / (n_g − 1)`` — RRreg's convention (n_g − 1, not n_g); for CDMsym's β RRreg
  reports none (NaN here).  ``wald_lower``/``wald_upper``: moment ± z · SE, unclipped, for comparison
  with RRreg (not exact: they can cover far less than stated near a boundary).
* ``estimate``: the **constrained maximum-likelihood** estimate over the admissible parameters
  (:func:`.two_group_fit.constrained_mle`), with ``loglik`` the Bernoulli log-likelihood there (no
  combinatorial constant).  For SLD with π̂ = 0, t is not identified: NaN.
* ``lower``/``upper``: the **exact** intervals (the default): the joint Clopper–Pearson box for
  (P_1, P_2), each at level √confidence, intersected with the admissible polygon and projected onto
  each parameter; coverage ≥ confidence at every n and every true parameter, boundaries included
  (:mod:`.two_group_fit`).  When the box misses the admissible region (``outside_model``: the data are
  far from every admissible parameter) the interval is the constrained estimate alone; when the data
  fit the model so badly that the constrained estimate lies outside the box (it weighs the groups by
  their sizes, the box does not), the interval is widened to include it — a superset, so coverage is
  unchanged — and the note says so.
* ``profile_lower``/``profile_upper``: profile-likelihood intervals (χ²₁ quantile), confined to the
  admissible region; asymptotic, not exact.

Every interval field is a dict keyed by the parameter names of ``parameters`` (``("pi", "gamma",
"beta")`` for CDM and CDMsym, ``("pi", "t")`` for SLD, ``("pi", "piUQ")`` for UQTunknown).

References
----------
.. [1] R. Clark, R. A. Desharnais, "Honest answers to embarrassing questions: detecting cheating in the
   randomized response model", Psychological Methods 3 (1998) 160–168.
.. [2] A. Ostapczuk, M. Moshagen, Z. Zhao, J. Musch, "Assessing sensitive attributes using the
   randomized response technique: evidence for the importance of response symmetry", Journal of
   Educational and Behavioral Statistics 34 (2009) 267–287.
.. [3] M. Moshagen, J. Musch, E. Erdfelder, "A stochastic lie detector", Behavior Research Methods 44
   (2012) 222–231.
.. [4] B. G. Greenberg, A.-L. A. Abul-Ela, W. R. Simmons, D. G. Horvitz, "The unrelated question
   randomized response model: theoretical framework", JASA 64 (1969) 520–539.
.. [5] D. W. Heck, M. Moshagen, "RRreg: an R package for correlation and regression analyses of
   randomized response data", Journal of Statistical Software 85(2) (2018); RRreg 0.7.5 (CRAN).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from deniable.errors import FieldError

from .result import Result, frozen, json_number
from .two_group_fit import Geometry, Parameter
from .validate import check_confidence


@dataclass(frozen=True)
class Model:
    """One two-group design: its p-vector's length, nuisance parameter and P(yes | group) map."""

    name: str
    p_length: int
    nuisance: str
    parameters: tuple[str, ...]
    citation: str

    def yes_probability(self, pi: float, nuisance: float, p) -> tuple[float, float]:
        """``(P(yes | group 1), P(yes | group 2))`` at π and the nuisance parameter, as RRreg states it."""
        p = [float(v) for v in p]
        if self.name == "CDM":
            gamma = nuisance
            return tuple(pi + (1 - pi - gamma) * pg for pg in p)
        if self.name == "CDMsym":
            gamma = nuisance
            return (pi * (1 - p[1]) + (1 - pi - gamma) * p[0], pi * (1 - p[3]) + (1 - pi - gamma) * p[2])
        if self.name == "SLD":
            t = nuisance
            return tuple(pi * t + (1 - pi) * (1 - pg) for pg in p)
        pi_uq = nuisance
        return tuple(pg * pi + (1 - pg) * pi_uq for pg in p)

    def geometry(self, p) -> Geometry:
        """The design as ``P = c + A θ`` with θ = (π, γ), (π, s = π t) or (π, π_UQ), and its polygon."""
        p = [float(v) for v in p]
        if self.name == "CDM":
            c, a = (p[0], p[1]), ((1 - p[0], -p[0]), (1 - p[1], -p[1]))
        elif self.name == "CDMsym":
            c, a = (p[0], p[2]), ((1 - p[0] - p[1], -p[0]), (1 - p[2] - p[3], -p[2]))
        elif self.name == "SLD":
            c, a = (1 - p[0], 1 - p[1]), ((p[0] - 1, 1.0), (p[1] - 1, 1.0))
        else:
            c, a = (0.0, 0.0), ((p[0], 1 - p[0]), (p[1], 1 - p[1]))
        return Geometry(np.array(c), np.array(a), VERTICES[self.name])


VERTICES = {  # the admissible region in θ, counter-clockwise
    "CDM": ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0)),  # π, γ ≥ 0, π + γ ≤ 1
    "CDMsym": ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0)),
    "SLD": ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0)),  # 0 ≤ π ≤ 1, 0 ≤ s = π t ≤ π
    "UQTunknown": ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)),  # π, π_UQ in [0, 1]
}

MODELS = {
    "CDM": Model("CDM", 2, "gamma", ("pi", "gamma", "beta"), "Clark & Desharnais 1998"),
    "CDMsym": Model("CDMsym", 4, "gamma", ("pi", "gamma", "beta"), "Ostapczuk et al. 2009"),
    "SLD": Model("SLD", 2, "t", ("pi", "t"), "Moshagen, Musch & Erdfelder 2012"),
    "UQTunknown": Model("UQTunknown", 2, "piUQ", ("pi", "piUQ"), "Greenberg et al. 1969"),
}

PARAMETERS = {  # each reported parameter as a function of θ
    "pi": Parameter("pi", (1.0, 0.0)),
    "gamma": Parameter("gamma", (0.0, 1.0)),
    "beta": Parameter("beta", (-1.0, -1.0), 1.0),
    "piUQ": Parameter("piUQ", (0.0, 1.0)),
    "t": Parameter("t", ratio=True),
}

SINGULAR = 1e-12  # |det A| below this: the two groups' equations do not separate the parameters


def check_model(model) -> Model:
    """The :data:`MODELS` entry named ``model`` (RRreg's name), or FieldError on ``model``."""
    if not isinstance(model, str) or model not in MODELS:
        raise FieldError(f"model must be one of {', '.join(MODELS)}, got {model!r}", "model")
    return MODELS[model]


def check_p(model: Model, p) -> np.ndarray:
    """``p`` as floats: the model's length, each in [0, 1], the two groups' equations non-singular."""
    try:
        values = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise FieldError(f"p must be {model.p_length} probabilities for {model.name}, got {p!r}", "p") from None
    if values.ndim != 1 or values.size != model.p_length:
        raise FieldError(f"p must be {model.p_length} probabilities for {model.name}, got {values.size}", "p")
    if not np.all(np.isfinite(values)) or np.any(values < 0) or np.any(values > 1):
        raise FieldError(f"each of p must be a probability in [0, 1], got {values.tolist()}", "p")
    if abs(np.linalg.det(model.geometry(values).a)) < SINGULAR:
        raise FieldError(f"with p = {values.tolist()} the two groups answer alike, so {model.name} cannot tell "
                         f"pi from {model.nuisance}: the groups need different probabilities", "p")
    return values


def _integers(values, name: str) -> list[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) != 2:
        raise FieldError(f"{name} must be two counts, one per group, got {values!r}", name)
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not (isinstance(v, numbers.Integral)
                                                   or (isinstance(v, numbers.Real) and float(v).is_integer())):
            raise FieldError(f"{name} must be whole numbers, got {v!r}", name)
        out.append(int(v))
    return out


def check_counts(yes, n) -> tuple[list[int], list[int]]:
    """Per group: 0 ≤ yes ≤ n and n ≥ 2 (a group of one has no variance estimate)."""
    yes, n = _integers(yes, "yes"), _integers(n, "n")
    if any(m < 2 for m in n):
        raise FieldError(f"each group needs at least 2 respondents, got n = {n}", "n")
    if any(y < 0 for y in yes):
        raise FieldError(f"yes counts cannot be negative, got {yes}", "yes")
    if any(y > m for y, m in zip(yes, n)):
        raise FieldError(f"a group cannot have more yes answers than respondents, got yes = {yes}, n = {n}", "yes")
    return yes, n


def two_group_counts(response, group) -> tuple[list[int], list[int]]:
    """``(yes, n)`` per group from one 0/1 ``response`` (1 = "yes") and one ``group`` (1 or 2) per respondent."""
    r, g = np.asarray(response), np.asarray(group)
    if r.ndim != 1 or g.ndim != 1 or r.shape != g.shape:
        raise FieldError(f"response and group must be equally long lists, got {r.shape} and {g.shape}", "group")
    if r.dtype.kind not in "biuf" or not np.all(np.isin(r, (0, 1))):
        raise FieldError("response must be 0 (no) or 1 (yes) for every respondent", "response")
    if g.dtype.kind not in "iuf" or not np.all(np.isin(g, (1, 2))):
        raise FieldError("group must be 1 or 2 for every respondent", "group")
    yes = [int(np.sum(r[g == k])) for k in (1, 2)]
    return yes, [int(np.sum(g == k)) for k in (1, 2)]


def moment_estimates(model: Model, p, yes, n) -> tuple[dict, dict]:
    """RRreg's closed-form estimates (unclipped) and standard errors, ``v_g = λ_g(1 − λ_g)/(n_g − 1)``.

    The estimates solve ``λ̂ = c + A θ``; every parameter linear in θ has the SE
    ``sqrt(wᵀ A⁻¹ diag(v) A⁻ᵀ w)`` — term for term the README's closed forms.  SLD's t̂ and its SE are
    RRreg's formulas; CDMsym's β has no SE in RRreg (NaN).
    """
    geometry = model.geometry(p)
    lam = np.array([y / m for y, m in zip(yes, n)])
    v = lam * (1 - lam) / (np.asarray(n, dtype=float) - 1)
    theta = geometry.theta(lam)
    inverse = np.linalg.inv(geometry.a)
    cov = inverse @ np.diag(v) @ inverse.T
    estimates, ses = {}, {}
    for name in model.parameters:
        parameter = PARAMETERS[name]
        if parameter.ratio:
            continue
        w = np.array(parameter.weight)
        estimates[name] = float(parameter.value(theta))
        ses[name] = float(math.sqrt(max(w @ cov @ w, 0.0)))
    if model.name == "CDMsym":
        ses["beta"] = math.nan
    if model.name == "SLD":
        (p1, p2), (l1, l2) = p, lam
        e = p1 - p2 + l1 - l2
        with np.errstate(divide="ignore", invalid="ignore"):
            estimates["t"] = float(np.divide(l2 * (1 - p1) - l1 * (1 - p2), (l2 - l1) + (p2 - p1)))
            ses["t"] = float(np.sqrt(v[0] * np.divide((p1 - p2) * (p2 + l2 - 1), e**2) ** 2
                                     + v[1] * np.divide((p1 - p2) * (p1 + l1 - 1), e**2) ** 2))
    return estimates, ses


@dataclass(frozen=True, eq=False)
class TwoGroupResult(Result):
    """Estimates for one two-group design; every per-parameter field is a dict keyed by ``parameters``.

    * ``model``, ``p`` (RRreg's order), ``n`` and ``yes`` (per group), ``confidence``, ``parameters``
      (``("pi", "gamma", "beta")``, ``("pi", "t")`` or ``("pi", "piUQ")``);
    * ``moment``, ``moment_se``: RRreg's closed-form estimates (unclipped) and SEs (n_g − 1);
    * ``estimate``: the constrained maximum-likelihood estimate, ``loglik`` the Bernoulli
      log-likelihood there, ``on_boundary`` whether it lies on the admissible region's boundary;
    * ``lower``, ``upper``: the exact intervals (``method = "exact"``), ``outside_model`` when the
      exact box misses the model (then they are the estimate alone);
    * ``profile_lower``, ``profile_upper``: profile-likelihood intervals; ``wald_lower``,
      ``wald_upper``: moment ± z · SE, RRreg's;
    * ``note``: what the numbers are not (data outside the model, t not identified).

    :meth:`interval` gives one parameter's interval of a kind, :meth:`statement` the results page's
    sentence (module notes of :mod:`deniable.estimators.two_group`).
    """

    model: str
    p: np.ndarray
    n: np.ndarray
    yes: np.ndarray
    confidence: float
    parameters: tuple
    moment: dict
    moment_se: dict
    estimate: dict
    loglik: float
    on_boundary: bool
    lower: dict
    upper: dict
    profile_lower: dict
    profile_upper: dict
    wald_lower: dict
    wald_upper: dict
    outside_model: bool = False
    method: str = "exact"
    note: str = ""

    def interval(self, name: str, kind: str = "exact") -> tuple[float, float]:
        """``(lower, upper)`` of parameter ``name``: ``kind`` "exact" (default), "profile" or "wald"."""
        if name not in self.parameters:
            raise FieldError(f"{self.model} has the parameters {', '.join(self.parameters)}, not {name!r}", "name")
        if kind not in ("exact", "profile", "wald"):
            raise FieldError(f"kind must be exact, profile or wald, got {kind!r}", "kind")
        low, high = {"exact": (self.lower, self.upper), "profile": (self.profile_lower, self.profile_upper),
                     "wald": (self.wald_lower, self.wald_upper)}[kind]
        return low[name], high[name]

    def statement(self, name: str | None = None) -> str:
        """One sentence for the results page: the parameter's estimate and exact interval in percent
        (default: the nuisance parameter — non-compliance, truthful carriers, the unrelated question).
        Bounds are rounded outwards; when the data fit no admissible parameter (``outside_model``) the
        sentence says so instead of giving an interval."""
        model = MODELS[self.model]
        name = name or model.nuisance
        estimate = self.estimate[name]
        low, high = self.interval(name)
        if name == "t" and not math.isfinite(estimate):
            return "the share of carriers who answered truthfully cannot be estimated: the estimated prevalence is 0"
        shown = f"{_percent(estimate, _nearest)} [{_percent(low, _floor)}, {_percent(high, _ceil)}]"
        if self.outside_model:  # the "interval" is the estimate alone: say why instead
            shown = _percent(estimate, _nearest)
        text = f"an estimated {shown} " + {
            "gamma": "of respondents did not follow the instructions",
            "beta": "of respondents are honest non-carriers",
            "t": "of carriers answered truthfully",
            "piUQ": "of respondents would answer yes to the unrelated question",
        }.get(name, "of respondents have the sensitive attribute")
        if self.outside_model:
            text += f" (no interval: the answers fit no {self.model} parameters)"
        return text

    def summary(self) -> str:
        """A plain-text table: per parameter the constrained estimate, the exact, profile and Wald
        intervals, and RRreg's moment estimate with its SE."""
        model = MODELS[self.model]
        lines = [f"{self.model} ({model.citation}), p = {', '.join(f'{v:g}' for v in self.p)}, "
                 f"n = {int(self.n[0]):,} + {int(self.n[1]):,}, yes = {int(self.yes[0]):,} + {int(self.yes[1]):,}, "
                 f"{self.confidence:.0%} intervals",
                 f"  {'':<6} {'estimate':>9}  {'exact':<18}  {'profile':<18}  {'moment':>8} {'s.e.':>7}  {'Wald':<18}"]
        for name in self.parameters:
            spans = [f"[{lo:.4f}, {hi:.4f}]" for lo, hi in (self.interval(name, k) for k in ("exact", "profile", "wald"))]
            lines.append(f"  {name:<6} {self.estimate[name]:>9.4f}  {spans[0]:<18}  {spans[1]:<18}  "
                         f"{self.moment[name]:>8.4f} {self.moment_se[name]:>7.4f}  {spans[2]:<18}")
        lines.append(f"  log-likelihood at the estimate: {self.loglik:.6f}"
                     + (" (on the boundary of the admissible region)" if self.on_boundary else ""))
        lines.append(f"  {self.statement()[0].upper()}{self.statement()[1:]}.")
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Every field, JSON-ready (NaN becomes None)."""
        out = super().to_dict()
        out["loglik"] = json_number(self.loglik)
        return out


def _unit(x: float) -> float:
    """A share computed from θ, with rounding (β = 1 − π − γ at −1e-17) kept in [0, 1]; NaN stays NaN."""
    return min(max(float(x), 0.0), 1.0) if math.isfinite(x) else float(x)


def _nearest(x: float) -> float:
    return math.floor(x + 0.5)  # halves up (Python's round would take 12.5 to 12)


def _floor(x: float) -> float:
    return math.floor(x + 1e-9)


def _ceil(x: float) -> float:
    return math.ceil(x - 1e-9)


def _percent(share: float, rounding) -> str:
    return f"{int(rounding(100 * share))} %"


def estimate_two_group(model: str, p, yes, n, *, confidence: float = 0.95) -> TwoGroupResult:
    """Estimate π and the nuisance parameter of a two-group design from each group's "yes" count.

    ``yes = [y1, y2]`` and ``n = [n1, n2]``: group g answered with the probabilities of ``p`` for group
    g (RRreg's order, :data:`MODELS`).  See the module notes for what is reported.

    >>> r = estimate_two_group("CDM", [0.3, 0.7], [57, 112], [150, 150])
    >>> round(r.moment["gamma"], 4), r.estimate["gamma"], round(r.estimate["pi"], 4)
    (-0.0217, 0.0, 0.1218)
    """
    from .two_group_fit import (box_polygon, constrained_mle, cp_box, polygon_range,
                                profile_interval)
    from .binomial import z

    spec = check_model(model)
    p = check_p(spec, p)
    yes, n = check_counts(yes, n)
    confidence = check_confidence(confidence)
    geometry = spec.geometry(p)
    moment, moment_se = moment_estimates(spec, p, yes, n)
    theta, best = constrained_mle(geometry, geometry.theta([y / m for y, m in zip(yes, n)]), yes, n)
    estimate = {name: _unit(PARAMETERS[name].value(theta)) for name in spec.parameters}
    polygon = box_polygon(geometry, *cp_box(yes, n, confidence))
    lower, upper, prof_lower, prof_upper, wald_lower, wald_upper = {}, {}, {}, {}, {}, {}
    zq = z(confidence)
    widened = False
    for name in spec.parameters:
        parameter = PARAMETERS[name]
        if polygon:
            lower[name], upper[name] = map(_unit, polygon_range(parameter, polygon))
            if math.isfinite(estimate[name]) and not lower[name] <= estimate[name] <= upper[name]:
                widened = True  # a superset of the projected box: coverage unchanged
                lower[name], upper[name] = min(lower[name], estimate[name]), max(upper[name], estimate[name])
        elif parameter.ratio and not math.isfinite(estimate[name]):
            lower[name], upper[name] = 0.0, 1.0
        else:
            lower[name] = upper[name] = estimate[name]
        prof_lower[name], prof_upper[name] = map(_unit, profile_interval(geometry, parameter, theta, best, yes, n,
                                                                         confidence))
        wald_lower[name] = moment[name] - zq * moment_se[name]
        wald_upper[name] = moment[name] + zq * moment_se[name]
    on_boundary = not geometry.contains(theta, slack=-1e-12)
    note = ""
    if not polygon:
        note = ("the data are far from every admissible parameter (the exact confidence box misses the "
                "model): the interval is the constrained estimate alone")
    elif widened:
        note = ("the data fit the model badly: the constrained estimate lies outside the exact confidence box, "
                "so the exact intervals were widened to include it")
    elif spec.name == "SLD" and not math.isfinite(estimate["t"]):
        note = "the estimated prevalence is 0, so t (the share of carriers answering truthfully) is not identified"
    return TwoGroupResult(
        model=spec.name, p=frozen(p), n=frozen(n, dtype=np.int64), yes=frozen(yes, dtype=np.int64),
        confidence=confidence, parameters=spec.parameters, moment=moment, moment_se=moment_se,
        estimate=estimate, loglik=float(best), on_boundary=bool(on_boundary), lower=lower, upper=upper,
        profile_lower=prof_lower, profile_upper=prof_upper, wald_lower=wald_lower, wald_upper=wald_upper,
        outside_model=not polygon, note=note)
