"""The result of :func:`deniable.estimators.regress`: named arrays, ``summary()`` and ``to_dict()`` (a
:class:`~deniable.estimators.result.Result`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .regression_effects import Effect
from .result import Result


def _num(value):
    value = float(value)
    return value if math.isfinite(value) else None


def _fmt(value: float, digits: int = 4) -> str:
    if math.isnan(value):
        return "—"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:.{digits}f}"


def modelled(options, reference: int) -> str:
    """What the coefficients are of, in words: ``log-odds of Yes against No`` for a yes/no outcome
    (the option that is not the reference against the reference), ``log-odds of each of Once,
    Several times against Never`` for more options (each non-reference option against the reference:
    the multinomial logit's ``log P(j | x) / P(reference | x) = x·β_j``)."""
    others = [label for j, label in enumerate(options) if j != reference]
    what = others[0] if len(others) == 1 else "each of " + ", ".join(others)
    return f"log-odds of {what} against {options[reference]}"


def _p_value(value: float) -> str:
    if math.isnan(value):
        return "—"
    return "<1e-16" if value < 1e-16 else (f"{value:.2e}" if value < 1e-3 else f"{value:.4f}")


@dataclass(frozen=True, eq=False)
class RegressionResult(Result):
    """A randomized-response (multinomial) logit fitted by maximum likelihood of the reports.

    ``params``, ``std_error``, ``z``, ``p_value`` and the interval ends are flat arrays in the
    order of ``names`` ("option: covariate" for k > 2, "covariate" for k = 2), the coefficients
    of each non-reference option in turn.  ``cov`` is the inverse observed information.
    """

    names: tuple[str, ...]
    outcome: str
    options: tuple[str, ...]
    reference: int
    k: int
    n: float  # responses (sum of the frequency weights)
    patterns: int  # distinct (covariates, report) patterns the likelihood was summed over
    epsilon: float
    declared_epsilon: float
    p: float
    q: float
    confidence: float
    params: np.ndarray
    std_error: np.ndarray
    z: np.ndarray
    p_value: np.ndarray
    ci_low: np.ndarray  # Wald
    ci_high: np.ndarray
    profile_low: np.ndarray  # profile likelihood (NaN when not computed)
    profile_high: np.ndarray
    cov: np.ndarray
    loglik: float
    loglik_null: float
    lr_stat: float
    lr_df: int
    lr_p_value: float
    converged: bool
    iterations: int
    effects: tuple[Effect, ...] = ()
    note: str = field(default="")
    design: str = ""  # a design given by its matrix, in words ("" for k-ary randomized response)

    @property
    def models(self) -> str:
        """What the coefficients model, in words (:func:`modelled`): the first line of every output."""
        return modelled(self.options, self.reference)

    def coefficient_rows(self) -> list[dict]:
        """One dict per coefficient: name, estimate, std_error, z, p_value and both intervals."""
        return [
            {"name": name, "estimate": _num(self.params[i]), "std_error": _num(self.std_error[i]),
             "z": _num(self.z[i]), "p_value": _num(self.p_value[i]),
             "ci_low": _num(self.ci_low[i]), "ci_high": _num(self.ci_high[i]),
             "profile_low": _num(self.profile_low[i]), "profile_high": _num(self.profile_high[i])}
            for i, name in enumerate(self.names)
        ]

    def effect_rows(self) -> list[dict]:
        return [
            {"term": e.term, "level": e.level, "option": self.options[e.option],
             "prevalence": _num(e.prevalence), "prevalence_low": _num(e.prevalence_low),
             "prevalence_high": _num(e.prevalence_high), "effect": _num(e.effect),
             "effect_std_error": _num(e.effect_std_error), "effect_low": _num(e.effect_low),
             "effect_high": _num(e.effect_high)}
            for e in self.effects
        ]

    def to_dict(self) -> dict:
        """The result as JSON-safe data (non-finite numbers become None): ``models`` first, then the fit,
        the coefficients and the effects."""
        return {
            "models": self.models, "modelled": [o for j, o in enumerate(self.options) if j != self.reference],
            "outcome": self.outcome, "options": list(self.options), "reference": self.options[self.reference],
            "k": self.k, "n": _num(self.n), "patterns": self.patterns,
            "epsilon": _num(self.epsilon), "declared_epsilon": _num(self.declared_epsilon),
            "p": _num(self.p), "q": _num(self.q), "confidence": self.confidence,
            "loglik": _num(self.loglik), "loglik_null": _num(self.loglik_null),
            "lr_test": {"statistic": _num(self.lr_stat), "df": self.lr_df, "p_value": _num(self.lr_p_value)},
            "converged": self.converged, "iterations": self.iterations,
            "coefficients": self.coefficient_rows(), "effects": self.effect_rows(), "note": self.note or None,
        }

    def as_dict(self) -> dict:
        """:meth:`to_dict` (its earlier name, kept: it is public API)."""
        return self.to_dict()

    def summary(self) -> str:
        """A text table like statsmodels' ``summary()``: the model, the coefficients, the effects."""
        level = f"{100 * self.confidence:g}%"
        design = (f"ε = {self.epsilon:.4f} (declared {self.declared_epsilon:g}), p = {self.p:.4f}, q = {self.q:.4f}"
                  if math.isfinite(self.epsilon) else "asked directly (p = 1, q = 0)") if not self.design else self.design
        kind = "logit" if self.k == 2 else "multinomial logit"
        lines = [
            f"Randomized-response {kind} of {self.outcome} (reference option: {self.options[self.reference]}): "
            f"{self.models}",
            f"k = {self.k} · {design}",
            f"n = {self.n:,.0f} responses in {self.patterns:,} patterns · log-likelihood {self.loglik:,.3f} · "
            f"{'converged' if self.converged else 'NOT converged'} after {self.iterations} iterations",
        ]
        # a pseudo-likelihood fit (sampling or raked weights) has neither: its note says why
        pseudo = math.isnan(self.lr_stat) and bool(np.all(np.isnan(self.profile_low)))
        if not pseudo:
            lines += [f"LR test against the intercept-only model: chi2 = {self.lr_stat:.3f} on {self.lr_df} df, "
                      f"p = {_p_value(self.lr_p_value)}",
                      f"{level} intervals: Wald (coef ± z·SE, SE from the observed information) and profile likelihood"]
        else:
            lines.append(f"{level} intervals: Wald (coef ± z·SE, SE from the sandwich)")
        rows = [[r["name"], _fmt(self.params[i]), _fmt(self.std_error[i]), _fmt(self.z[i], 2),
                 _p_value(self.p_value[i]), f"[{_fmt(self.ci_low[i])}, {_fmt(self.ci_high[i])}]",
                 f"[{_fmt(self.profile_low[i])}, {_fmt(self.profile_high[i])}]"][:6 if pseudo else 7]
                for i, r in enumerate(self.coefficient_rows())]
        lines += _grid(["", "coef", "std err", "z", "P>|z|", "Wald interval", "profile interval"][:6 if pseudo else 7],
                       rows)
        categorical = [e for e in self.effects if e.level is not None]
        numeric = [e for e in self.effects if e.level is None]
        if categorical:
            lines.append("Predicted prevalence by group (everyone in the group, other covariates as observed), "
                         "and the difference from the first group:")
            lines += _grid(["term", "level", "option", "prevalence", "interval", "difference", "interval"], [
                [e.term, e.level, self.options[e.option], _fmt(e.prevalence),
                 f"[{_fmt(e.prevalence_low)}, {_fmt(e.prevalence_high)}]",
                 _fmt(e.effect) if e.effect_std_error > 0 else "—",
                 f"[{_fmt(e.effect_low)}, {_fmt(e.effect_high)}]" if e.effect_std_error > 0 else ""]
                for e in categorical])
        if numeric:
            lines.append("Average marginal effects (change in each option's probability per unit):")
            lines += _grid(["term", "option", "effect", "std err", "interval"], [
                [e.term, self.options[e.option], _fmt(e.effect), _fmt(e.effect_std_error),
                 f"[{_fmt(e.effect_low)}, {_fmt(e.effect_high)}]"] for e in numeric])
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines) + "\n"


def _grid(headers, rows, indent="  ") -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]

    def line(cells):
        parts = [str(cells[0]).ljust(widths[0])] + [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return indent + "  ".join(parts).rstrip()

    return [line(headers)] + [line(r) for r in rows]

