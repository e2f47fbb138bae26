"""Logistic regression of the carrier share under the two-group non-compliance designs (RRreg's ``RRlog``).

Model.  Respondent i, in group g(i) with covariates ``x_i`` (intercept first), carries the attribute with
probability ``π_i = expit(x_i · β)``; the design says how likely a "yes" is from a carrier and from a
non-carrier of group g, given the nuisance parameter ν of the design:

    P(yes | x_i, g) = P_i = b_g(ν) + (a_g(ν) − b_g(ν)) π_i,

* **SLD** (Moshagen, Musch & Erdfelder 2012), ν = t: ``a_g = t``, ``b_g = 1 − p_g`` (a non-carrier of group g
  answers "no" with probability p_g; a carrier "yes" with probability t);
* **UQTunknown** (Greenberg et al. 1969), ν = π_UQ: ``a_g = p_g + (1 − p_g) π_UQ``, ``b_g = (1 − p_g) π_UQ`` (the
  sensitive question with probability p_g, otherwise the unrelated one, whose prevalence π_UQ is unknown);
* **CDM** (Clark & Desharnais 1998), ν = γ: ``a_g = 1 − γ``, ``b_g = (1 − γ) p_g``; **CDMsym** (Ostapczuk et al.
  2009), ``p = (yes₁, no₁, yes₂, no₂)``: ``a_g = (1 − γ)(1 − no_g)``, ``b_g = (1 − γ) yes_g`` — every respondent,
  carrier or not, cheats (says "no") with probability γ, independently of x, as RRreg's ``RRgen`` simulates it,
  so the univariate CDM's π (honest carriers) is ``(1 − γ)`` times the carriers' share.

RRreg 0.7.5's ``RRlog`` fits SLD and UQTunknown with this likelihood.  For CDM and CDMsym its likelihood leaves
γ out (``a_g = 1``, ``b_g = p_g``; its third coefficient is the unchanged start value): ``gamma="ignore"``
fits that model, to reproduce RRlog, and the default ``gamma="estimate"`` fits the one above, whose
coefficients are those of the carriers' share (RRlog's are biased by the cheaters: they model P(yes) as if
every "no" of a cheater were a non-carrier's).

Derivatives.  With ``w_i = y_i / P_i − (1 − y_i)/(1 − P_i)`` and ``v_i = y_i / P_i² + (1 − y_i)/(1 − P_i)²``:
``∂P_i/∂β = (a − b) π_i(1 − π_i) x_i``, ``∂P_i/∂ν = a′ π_i + b′ (1 − π_i)`` (a and b are affine in ν, so
``∂²P/∂ν² = 0``), ``∂²P_i/∂β∂β′ = (a − b) π_i(1 − π_i)(1 − 2π_i) x_i x_i′``, ``∂²P_i/∂β∂ν = (a′ − b′) π_i(1 − π_i) x_i``;
the score is ``Σ w_i ∂P_i`` and the observed Hessian ``Σ w_i ∂²P_i − v_i ∂P_i ∂P_i′``.  The fit is Fisher scoring
(the expected information ``Σ ∂P_i ∂P_i′ / (P_i(1 − P_i))`` is positive definite, so every step ascends after
step halving), ν kept inside [0, 1]; when ν's maximum is on a bound it is held there and reported without a
standard error.  Standard errors are from the observed information (RRlog's: optim's numerical Hessian).

Frequency weights.  ``weights=w`` says that row i stands for ``w_i`` respondents with the same response, group
and covariates (a survey's answer patterns, :mod:`deniable.server.survey.patterns`).  The respondents are
independent, so the log-likelihood of the expanded rows is ``Σ_i w_i ℓ_i`` (the ``w_i`` copies of row i each add
``ℓ_i``), and so are its score ``Σ w_i w_i′ ∂P_i``, the observed information and the expected information: every
sum above, and the start's group shares, take the weight of each row, and nothing else changes.  The fit, its
log-likelihood and its standard errors are those of the expanded rows (up to the order of floating-point
additions), and ``n`` is ``Σ w_i``.  The weights must be whole numbers: they count respondents (a sampling
weight would need a sandwich variance, which this fit does not have).  Rows of weight 0 are left out.

References
----------
.. [1] D. W. Heck, M. Moshagen, "RRreg: an R package for correlation and regression analyses of randomized
   response data", J. Stat. Softw. 85 (2018).
.. [2] M. Moshagen, J. Musch, E. Erdfelder, "A stochastic lie detector", Behav. Res. Methods 44 (2012) 222–231.
.. [3] S. M. Clark, R. A. Desharnais, "Honest answers to embarrassing questions: detecting cheating in the
   randomized response model", Psychol. Methods 3 (1998) 160–168.
.. [4] B. G. Greenberg et al., "The unrelated question randomized response model: theoretical framework",
   JASA 64 (1969) 520–539.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from deniable.errors import FieldError

from .result import Result, frozen, json_number

TOLERANCE = 1e-10  # Fisher scoring stops when the step is below this (in every coordinate)
MAX_STEPS = 200


def _channel(model: str, p, nu: float | None):
    """Per group: (a, b, a′, b′) — P(yes | carrier), P(yes | non-carrier) and their slopes in ν."""
    p = np.asarray(p, dtype=float)
    if model == "SLD":
        return np.full(2, nu), 1 - p, np.ones(2), np.zeros(2)
    if model == "UQTunknown":
        return p + (1 - p) * nu, (1 - p) * nu, 1 - p, 1 - p
    yes, no = (p, np.zeros(2)) if model == "CDM" else (p[0::2], p[1::2])
    keep = 1.0 if nu is None else 1 - nu
    return keep * (1 - no), keep * yes, -(1 - no), -yes


@dataclass(frozen=True)
class GroupLogitResult(Result):
    """Coefficients of the carriers' log-odds (and the design's nuisance parameter), with standard errors from
    the observed information and Wald intervals; ``loglik`` is the Bernoulli log-likelihood at the fit."""

    model: str
    p: tuple
    names: tuple
    coefficients: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    loglik: float
    n: int
    confidence: float
    nuisance_on_bound: bool
    steps: int

    @property
    def has_nuisance(self) -> bool:
        """Whether the last coefficient is the design's nuisance parameter (not for RRlog's CDM likelihood)."""
        from .two_group import MODELS

        return self.names[-1] == MODELS[self.model].nuisance

    def summary(self) -> str:
        width = max(14, 2 + max(map(len, self.names)))  # a long covariate name keeps the columns aligned
        lines = [f"{self.model} logistic regression of the carriers' share (n = {self.n}, p = "
                 f"{', '.join(f'{x:g}' for x in self.p)}), log-likelihood {self.loglik:.4f}",
                 f"{'':<{width}}{'estimate':>10}{'SE':>10}  {self.confidence:.0%} interval"]
        for name, b, s, lo, hi in zip(self.names, self.coefficients, self.se, self.lower, self.upper):
            shown = "—" if math.isnan(s) else f"{s:.4f}"
            bounds = "—" if math.isnan(lo) else f"[{lo:.4f}, {hi:.4f}]"
            lines.append(f"{name:<{width}}{b:>10.4f}{shown:>10}  {bounds}")
        from .two_group import MODELS

        betas = len(self.names) - (self.names[-1] == MODELS[self.model].nuisance)
        if not np.isfinite(self.se[:betas]).all():
            lines.append("no finite maximum: a fitted share runs to 0 or 1 (too few respondents, or data the "
                         "design cannot produce)")
        if self.nuisance_on_bound:
            lines.append(f"{self.names[-1]} is at a bound of [0, 1]: held there, without a standard error")
        return "\n".join(lines) + "\n"


def _check(model, p, response, group, X, names, weights=None):
    """The model's name, its p (:func:`.two_group.check_model`, :func:`.two_group.check_p`: the same checks as
    the univariate estimates), and the data as arrays (the rows of positive weight, and their weights), or
    FieldError naming the argument."""
    from .two_group import check_model, check_p

    spec = check_model(model)
    p = tuple(float(x) for x in check_p(spec, p))
    y = np.asarray(response)
    g = np.asarray(group)
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if y.ndim != 1 or not np.isin(y, (0, 1)).all():
        raise FieldError("must be 0 (no) or 1 (yes) for every respondent", "response")
    if g.shape != y.shape or not np.isin(g, (1, 2)).all():
        raise FieldError("must be 1 or 2 for every respondent", "group")
    if X.shape[0] != y.size or not np.isfinite(X).all():
        raise FieldError("must have one row of finite numbers per respondent", "X")
    names = tuple(names) if names is not None else ("(Intercept)", *(f"x{j}" for j in range(1, X.shape[1])))
    if len(names) != X.shape[1]:
        raise FieldError(f"must name the {X.shape[1]} columns of X, got {len(names)} names", "names")
    if weights is None:
        w = np.ones(y.size)
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != y.shape or not np.isfinite(w).all() or (w < 0).any() or (w != np.round(w)).any():
            raise FieldError("must be one whole number of respondents (0 or more) per row", "weights")
    keep = w > 0
    if not keep.any():
        raise FieldError("no row has a positive weight", "weights")
    return spec.name, p, y[keep].astype(float), g[keep].astype(int) - 1, X[keep], names, w[keep]


def _parts(theta, model, p, g, X, free_nu: bool, nu_fixed):
    k = X.shape[1]
    nu = theta[k] if free_nu else nu_fixed
    a, b, da, db = _channel(model, p, nu)
    a, b, da, db = a[g], b[g], da[g], db[g]
    pi = 1 / (1 + np.exp(-(X @ theta[:k])))
    prob = b + (a - b) * pi
    slope = (a - b) * pi * (1 - pi)
    grad = slope[:, None] * X
    if free_nu:
        grad = np.column_stack([grad, da * pi + db * (1 - pi)])
    return pi, prob, slope, grad, da - db


def _loglik(prob, y, wt) -> float:
    with np.errstate(divide="ignore"):
        return float(np.sum(wt * np.where(y == 1, np.log(prob), np.log1p(-prob))))


def _observed_information(theta, model, p, y, g, X, free_nu, nu_fixed, wt) -> np.ndarray:
    pi, prob, slope, grad, dab = _parts(theta, model, p, g, X, free_nu, nu_fixed)
    w = wt * (y / prob - (1 - y) / (1 - prob))
    v = wt * (y / prob**2 + (1 - y) / (1 - prob) ** 2)
    hessian = -(grad * v[:, None]).T @ grad
    k = X.shape[1]
    hessian[:k, :k] += (X * (w * slope * (1 - 2 * pi))[:, None]).T @ X
    if free_nu:
        cross = X.T @ (w * dab * pi * (1 - pi))
        hessian[:k, k] += cross
        hessian[k, :k] += cross
    return -hessian


def _score(theta, model, p, y, g, X, free_nu, nu_fixed, wt):
    _, prob, _, grad, _ = _parts(theta, model, p, g, X, free_nu, nu_fixed)
    w = wt * (y / prob - (1 - y) / (1 - prob))
    fisher = (grad * (wt / (prob * (1 - prob)))[:, None]).T @ grad
    return grad.T @ w, fisher, _loglik(prob, y, wt)


def _scoring(theta, model, p, y, g, X, free_nu, nu_fixed, wt):
    """Fisher scoring with step halving; ν (the last entry when free) kept inside (0, 1)."""
    score, fisher, ll = _score(theta, model, p, y, g, X, free_nu, nu_fixed, wt)
    for steps in range(1, MAX_STEPS + 1):
        try:
            step = np.linalg.solve(fisher, score)
        except np.linalg.LinAlgError:  # the information is singular: a share at 0 or 1, the fit diverging
            return theta, ll, steps
        scale = 1.0
        while scale > 1e-12:
            trial = theta + scale * step
            if not free_nu or 0 < trial[-1] < 1:
                new = _score(trial, model, p, y, g, X, free_nu, nu_fixed, wt)
                if new[2] >= ll - 1e-12 * abs(ll):
                    break
            scale /= 2
        else:
            return theta, ll, steps
        theta = trial
        score, fisher, ll = new
        if np.max(np.abs(scale * step)) < TOLERANCE:
            return theta, ll, steps
    return theta, ll, MAX_STEPS


def _start(model, p, y, g, X, free_nu, wt):
    """Start from the intercept-only answer: the group shares' moment estimates (clipped inside (0, 1))."""
    lam = np.array([np.average(y[g == j], weights=wt[g == j]) if np.any(g == j) else 0.5 for j in (0, 1)])
    if free_nu:
        best = None
        for nu in (0.05, 0.3, 0.5, 0.7, 0.95):
            a, b, _, _ = _channel(model, p, nu)
            share = float(np.clip(np.mean((lam - b) / np.where(a != b, a - b, 1)), 0.02, 0.98))
            theta = np.zeros(X.shape[1] + 1)
            theta[0], theta[-1] = math.log(share / (1 - share)), nu
            ll = _score(theta, model, p, y, g, X, True, None, wt)[2]
            if best is None or ll > best[1]:
                best = (theta, ll)
        return best[0]
    a, b, _, _ = _channel(model, p, None)
    share = float(np.clip(np.mean((lam - b) / np.where(a != b, a - b, 1)), 0.02, 0.98))
    theta = np.zeros(X.shape[1])
    theta[0] = math.log(share / (1 - share))
    return theta


def group_logit(model: str, p, response, group, X, names=None, *, gamma: str = "estimate",
                confidence: float = 0.95, weights=None) -> GroupLogitResult:
    """Fit the logit of the carriers' share on ``X`` (one row per respondent, intercept column first) from 0/1
    ``response`` and 1/2 ``group`` under ``model`` with RRreg's ``p`` (as ``RRuni``/``RRlog`` take it).

    ``gamma="ignore"`` (CDM, CDMsym) fits RRlog's likelihood without the cheaters' share.  ``weights``: how many
    respondents each row stands for (whole numbers; the module's "Frequency weights": the fit of the expanded
    rows).

    >>> import numpy as np
    >>> y = np.repeat([1, 0, 1, 0], [30, 70, 45, 55]); g = np.repeat([1, 2], 100)
    >>> fit = group_logit("UQTunknown", [0.7, 0.3], y, g, np.ones((200, 1)))
    >>> [round(float(b), 4) for b in fit.coefficients]  # logit of π̂ = 0.1875, and π̂_UQ = 0.5625
    [-1.4663, 0.5625]
    """
    model, p, y, g, X, names, wt = _check(model, p, response, group, X, names, weights)
    if gamma not in ("estimate", "ignore"):
        raise FieldError(f"must be 'estimate' or 'ignore', got {gamma!r}", "gamma")
    with np.errstate(all="ignore"):  # a share running to 0 or 1 is reported as such, not as a warning
        return _fit(model, p, y, g, X, names, wt, gamma, confidence)


def _fit(model, p, y, g, X, names, wt, gamma, confidence) -> GroupLogitResult:
    from .binomial import z

    free_nu = not (gamma == "ignore" and model in ("CDM", "CDMsym"))
    theta, ll, steps = _scoring(_start(model, p, y, g, X, free_nu, wt), model, p, y, g, X, free_nu, None, wt)
    on_bound = False
    if free_nu and not 1e-6 < theta[-1] < 1 - 1e-6:
        # the maximum in ν is on a bound: fit β with ν held at the nearer bound, and keep the better fit
        bound = float(round(theta[-1]))
        held, held_ll, held_steps = _scoring(theta[:-1].copy(), model, p, y, g, X, False, bound, wt)
        if held_ll >= ll:
            theta, ll, steps, on_bound = np.append(held, bound), held_ll, steps + held_steps, True
    k = X.shape[1]
    info_size = k if (on_bound or not free_nu) else k + 1
    info = _observed_information(theta[:info_size], model, p, y, g, X, info_size > k,
                                 float(theta[-1]) if on_bound else None, wt)
    se = np.full(theta.size, np.nan)
    try:
        cov = np.linalg.inv(info)
        se[:info_size] = np.sqrt(np.abs(np.diag(cov)))
    except np.linalg.LinAlgError:
        pass
    half = z(confidence) * se
    from .two_group import MODELS

    all_names = names + ((MODELS[model].nuisance,) if free_nu else ())
    return GroupLogitResult(model=model, p=p, names=all_names, coefficients=frozen(theta), se=frozen(se),
                            lower=frozen(theta - half), upper=frozen(theta + half), loglik=ll, n=int(round(wt.sum())),
                            confidence=confidence, nuisance_on_bound=on_bound, steps=steps)


def _p_value(z_value: float) -> float:
    from scipy.stats import norm

    return float(2 * norm.sf(abs(z_value))) if math.isfinite(z_value) else math.nan


@dataclass(frozen=True)
class GroupRegressionResult(Result):
    """A survey question of a two-group design as a regression's outcome (``deniable regress``, the dashboard's
    regression page): the fit (:func:`group_logit`, its coefficients those of ``models``), the outcome's id and
    options (Yes, No), the reference option's index (1, No: the log-odds of Yes, the carriers' share; 0, Yes:
    the coefficients' signs turned, the log-odds of No), the design's nuisance parameter in words, and how many
    distinct answer patterns the fit read.  :meth:`to_dict` has ``models`` first, then what is modelled, then the
    fit's keys as ``deniable regress --rrreg`` prints them (``names``, ``coefficients``, ``se``, ``lower``,
    ``upper``: the nuisance parameter last), and ``nuisance`` on its own."""

    fit: GroupLogitResult
    outcome: str
    options: tuple
    reference: int
    nuisance_words: str
    patterns: int
    note: str = ""

    k = 2
    effects = ()  # no predicted shares by group (yet): the coefficients and the nuisance parameter

    @classmethod
    def of(cls, fit: GroupLogitResult, *, outcome: str, options, reference: int, nuisance_words: str,
           patterns: int, note: str = "") -> GroupRegressionResult:
        """The result for ``reference`` (0 or 1) from a fit of the carriers' log-odds (reference 1)."""
        if reference not in (0, 1):
            raise FieldError(f"must be 0 or 1 (the option without coefficients), got {reference!r}", "reference")
        if reference == 0:
            sign = np.ones(fit.coefficients.size)
            sign[:fit.coefficients.size - fit.has_nuisance] = -1
            lower, upper = np.where(sign < 0, -fit.upper, fit.lower), np.where(sign < 0, -fit.lower, fit.upper)
            fit = replace(fit, coefficients=frozen(sign * fit.coefficients), lower=frozen(lower), upper=frozen(upper))
        return cls(fit=fit, outcome=outcome, options=tuple(options), reference=reference,
                   nuisance_words=nuisance_words, patterns=patterns, note=note)

    @property
    def models(self) -> str:
        """What the coefficients are of: ``log-odds of Yes against No`` (the carriers' share)."""
        modelled = self.options[1 - self.reference]
        return f"log-odds of {modelled} against {self.options[self.reference]}"

    @property
    def n(self) -> int:
        return self.fit.n

    @property
    def confidence(self) -> float:
        return self.fit.confidence

    @property
    def model(self) -> str:
        return self.fit.model

    @property
    def p(self) -> tuple:
        return self.fit.p

    def coefficient_rows(self) -> list[dict]:
        """One row per coefficient (not the nuisance parameter): name, estimate, std_error, z, p_value, ci_low,
        ci_high (None where not finite)."""
        fit, rows = self.fit, []
        for j in range(fit.coefficients.size - fit.has_nuisance):
            b, se = float(fit.coefficients[j]), float(fit.se[j])
            z_value = b / se if se > 0 else math.nan
            rows.append({"name": fit.names[j], "estimate": json_number(b), "std_error": json_number(se),
                         "z": json_number(z_value), "p_value": json_number(_p_value(z_value)),
                         "ci_low": json_number(fit.lower[j]), "ci_high": json_number(fit.upper[j])})
        return rows

    @property
    def nuisance(self) -> dict | None:
        """The design's nuisance parameter: name (gamma, t, piUQ), estimate, se, lower and upper (clipped to
        [0, 1]; None where not finite), whether it is held on a bound, and what it is in words."""
        fit = self.fit
        if not fit.has_nuisance:
            return None
        clip = lambda x: json_number(min(max(float(x), 0.0), 1.0)) if math.isfinite(x) else None  # noqa: E731
        return {"name": fit.names[-1], "estimate": json_number(fit.coefficients[-1]), "se": json_number(fit.se[-1]),
                "lower": clip(fit.lower[-1]), "upper": clip(fit.upper[-1]), "on_bound": fit.nuisance_on_bound,
                "words": self.nuisance_words}

    def nuisance_sentence(self) -> str:
        """The nuisance parameter in words: ``γ̂ = 12.3% did not follow the instructions (γ), 95% interval
        [5.1%, 19.5%]``."""
        nu = self.nuisance
        if nu is None:
            return ""
        share = f"{100 * nu['estimate']:.1f}%"
        if nu["on_bound"]:
            return f"{share} {nu['words']}: on a bound of [0, 1], held there (no interval)"
        if nu["lower"] is None:
            return f"{share} {nu['words']} (no interval: the information is singular)"
        return (f"{share} {nu['words']}, {self.confidence:.0%} interval [{100 * nu['lower']:.1f}%, "
                f"{100 * nu['upper']:.1f}%]")

    def to_dict(self) -> dict:
        """``models``, ``modelled``, ``outcome``, ``options``, ``reference``, ``patterns``, the fit's keys (as
        :class:`GroupLogitResult`), ``nuisance`` (:attr:`nuisance`), ``coefficient_rows`` and ``note``."""
        return {"models": self.models, "modelled": [self.options[1 - self.reference]], "outcome": self.outcome,
                "options": list(self.options), "reference": self.options[self.reference], "patterns": self.patterns,
                **self.fit.to_dict(), "nuisance": self.nuisance, "coefficient_rows": self.coefficient_rows(),
                "note": self.note or None}

    def summary(self) -> str:
        """The fit's table (its coefficients of ``models``), the nuisance parameter in words, the note."""
        fit = self.fit
        lines = [f"Two-group logit of {self.outcome} ({fit.model}, p = {', '.join(f'{x:g}' for x in fit.p)}): "
                 f"{self.models}",
                 f"n = {fit.n:,} responses in {self.patterns:,} patterns · log-likelihood {fit.loglik:,.4f} · "
                 f"{fit.confidence:.0%} intervals: Wald (SE from the observed information)",
                 *fit.summary().splitlines()[1:2 + len(fit.names)]]  # the header and one line per coefficient
        if self.nuisance is not None:
            lines.append(self.nuisance_sentence())
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines) + "\n"


__all__ = ["GroupLogitResult", "GroupRegressionResult", "group_logit"]
