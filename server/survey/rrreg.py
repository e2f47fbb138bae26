"""Data collected for R's RRreg, analysed here: ``deniable estimate --rrreg MODEL --p P1,P2[,…] DATA.csv``.

The file is a CSV in RRreg's shape: a ``response`` column, 1 for "yes" and 0 for "no" as RRreg codes it (for
``Kuk`` 1 is a red card, for ``Crosswise`` 1 is "same"), a ``group`` column (1 or 2) for the two-group designs,
and any other columns (covariates), which are ignored.  MODEL is RRreg's model name and ``p`` its vector as
``RRuni`` takes it:

- the two-group designs that estimate who did not follow the instructions beside the prevalence:
  ``CDM`` (p₁, p₂), ``CDMsym`` (p₁, p₂, p₃, p₄), ``SLD`` (p₁, p₂), ``UQTunknown`` (p₁, p₂)
  (:mod:`deniable.estimators.two_group`);
- the one-group designs deniable also collects: ``Warner`` (p), ``UQTknown`` (p, π_UQ), ``Kuk`` (p₁, p₂),
  ``FR`` (p₀, p₁: the chances of being told to say "no" and "yes") and ``Crosswise`` (p)
  (:mod:`deniable.client.designs`, estimated as any survey question of that design).

Every problem is a :class:`~deniable.errors.FieldError` naming the option, or the file with its line and column.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

from deniable.errors import FieldError

from .estimates import SurveyResult

from .parsing import number
from .readers import RRREG_ONE_GROUP as ONE_GROUP
from .readers import RRREG_TWO_GROUP as TWO_GROUP

MODELS = (*TWO_GROUP, *ONE_GROUP)


def parse_p(text: str, model: str) -> tuple[float, ...]:
    """``--p`` as numbers, as many as ``model`` takes, each in [0, 1]."""
    p = tuple(number(part, "--p", message=f"must be numbers separated by commas, got {text!r}")
              for part in text.split(","))
    wanted = {**TWO_GROUP, **ONE_GROUP}[model]
    if len(p) != wanted:
        raise FieldError(f"{model} takes {wanted} probabilit{'y' if wanted == 1 else 'ies'}, got {len(p)}", "--p")
    if not all(0 <= x <= 1 for x in p):
        raise FieldError(f"must be probabilities in [0, 1], got {text}", "--p")
    return p


def _design(model: str, p: tuple[float, ...]):
    """The one-group model as deniable's design, its first report RRreg's 1."""
    from deniable.client import designs

    labels = ["yes", "no"]
    if model == "Warner":
        return designs.warner(p[0], labels)
    if model == "UQTknown":
        return designs.unrelated(p[0], p[1], labels)
    if model == "Kuk":
        return designs.kuk(p[0], p[1], labels)
    if model == "FR":
        return designs.forced(1 - p[0] - p[1], [p[1], p[0]], labels)
    return designs.crosswise(p[0], labels)


@dataclass(frozen=True)
class RRregData:
    """The file's responses (0/1) and groups (1/2; None for a one-group model), one per data row."""

    response: list[int]
    group: list[int] | None
    covariates: dict  # column → its numbers (the columns asked for)


def read_rrreg(path, model: str, covariates=()) -> RRregData:
    """The ``response`` (and, for a two-group model, ``group``) column of an RRreg-shaped CSV, and the numbers
    of the ``covariates`` columns."""
    two = model in TWO_GROUP
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            columns = reader.fieldnames or []
            for wanted in ("response", *(("group",) if two else ()), *covariates):
                if wanted not in columns:
                    raise FieldError(f"{path}: no column {wanted!r} (the columns: {', '.join(columns) or 'none'})",
                                     wanted)
            response, group, numbers = [], [], {column: [] for column in covariates}
            for line, row in enumerate(reader, start=2):
                response.append(_value(row["response"], ("0", "1"), path, line, "response"))
                if two:
                    group.append(_value(row["group"], ("1", "2"), path, line, "group"))
                for column in covariates:
                    numbers[column].append(_number(row[column], path, line, column))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise FieldError(f"{path}: cannot read it as a CSV file: {exc}", "DATA") from None
    if not response:
        raise FieldError(f"{path}: no responses", "DATA")
    if two and len(set(group)) < 2:
        raise FieldError(f"{path}: every response is in group {group[0]}; {model} needs both groups", "group")
    return RRregData(response, group if two else None, numbers)


def _number(text, path, line, column) -> float:
    message = f"{path}, line {line}: {column} must be a finite number, got {text!r}"
    value = number(text, column, message=message)
    if not math.isfinite(value):
        raise FieldError(message, column)
    return value


def _value(text, allowed, path, line, column) -> int:
    value = (text or "").strip()
    if value.endswith(".0"):  # R's write.csv of a double column
        value = value[:-2]
    if value not in allowed:
        raise FieldError(f"{path}, line {line}: {column} must be {' or '.join(allowed)}, got {text!r}", column)
    return int(value)


@dataclass(frozen=True)
class RRregEstimate(SurveyResult):
    """What ``deniable estimate --rrreg`` prints: per parameter (π, and a two-group design's nuisance parameter)
    the estimate, its interval, and RRreg's moment estimate with its standard error; ``table()``, ``to_dict()``
    and ``to_csv()`` as every survey-level result."""

    model: str
    p: tuple
    result: object  # a TwoGroupResult, or a one-group design's DesignResult

    def _one_group(self) -> dict:
        r = self.result
        return {"model": self.model, "p": list(self.p), "n": r.n, "yes": int(r.counts[0]), "confidence": r.confidence,
                "parameters": ["pi"], "moment": {"pi": r.estimate[0]},
                "moment_se": {"pi": None if r.std_error is None else r.std_error[0]},
                "estimate": {"pi": r.consistent[0]},
                "lower": {"pi": None if r.ci_low is None else r.ci_low[0]},
                "upper": {"pi": None if r.ci_high is None else r.ci_high[0]},
                "method": r.method, "epsilon": r.epsilon, "note": r.note or ""}

    def to_dict(self) -> dict:
        from deniable.estimators.result import _json

        return _json(self.result.to_dict() if self.model in TWO_GROUP else self._one_group())

    def table(self) -> str:
        if self.model in TWO_GROUP:
            return self.result.summary() + "\n"
        d = self._one_group()
        shown = lambda v: "—" if v is None else f"{v:.4f}"  # noqa: E731
        lines = [f"{self.model}, p = {', '.join(f'{v:g}' for v in self.p)}, n = {d['n']:,}, yes = {d['yes']:,}, "
                 f"{d['confidence']:.0%} intervals ({d['method'] or 'none'}), "
                 f"ε = {d['epsilon']:.4f}" if d["epsilon"] != float("inf") else "not ε-LDP",
                 f"  {'':<6} {'estimate':>9}  {'interval':<18}  {'moment':>8} {'s.e.':>7}",
                 f"  {'pi':<6} {d['estimate']['pi']:>9.4f}  "
                 f"{'[' + shown(d['lower']['pi']) + ', ' + shown(d['upper']['pi']) + ']':<18}  "
                 f"{d['moment']['pi']:>8.4f} {shown(d['moment_se']['pi']):>7}"]
        if d["note"]:
            lines.append(f"  note: {d['note']}")
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        d = self.to_dict()
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        keys = [key for key in ("estimate", "lower", "upper", "profile_lower", "profile_upper", "moment", "moment_se",
                                "wald_lower", "wald_upper") if key in d]
        writer.writerow(["model", "parameter", *keys])
        for name in d["parameters"]:
            writer.writerow([self.model, name, *("" if d[key][name] is None else repr(d[key][name]) for key in keys)])
        return out.getvalue()


def estimate_rrreg(path, model: str, p_text: str, *, confidence: float = 0.95, method: str = "exact") -> RRregEstimate:
    """The estimates of ``model`` from the file: π and a two-group design's nuisance parameter
    (:class:`~deniable.estimators.two_group.TwoGroupResult`) or, for a one-group model, the design's
    :class:`~deniable.estimators.designs.DesignResult`."""
    if model not in MODELS:
        raise FieldError(f"unknown model {model!r}: one of {', '.join(MODELS)}", "--rrreg")
    p = parse_p(p_text, model)
    data = read_rrreg(path, model)
    if model in TWO_GROUP:
        from deniable.estimators.two_group import estimate_two_group, two_group_counts

        yes, n = two_group_counts(data.response, data.group)
        return RRregEstimate(model, p, estimate_two_group(model, p, yes, n, confidence=confidence))
    from deniable.estimators.designs import estimate_design

    yes = sum(data.response)
    try:
        design = _design(model, p)
    except FieldError as exc:
        raise FieldError(f"{model}: {exc}", "--p") from None
    return RRregEstimate(model, p, estimate_design([yes, len(data.response) - yes], design, confidence=confidence,
                                                   method=method, answers=["yes", "no"]))


@dataclass(frozen=True)
class RRregPlan(SurveyResult):
    """``deniable plan --rrreg MODEL --p …``: respondents for a margin on π under a two-group design, for the
    exact and the Wald interval, at the worst case, split between the groups to minimize them."""

    plans: tuple  # GroupPlan, exact then Wald

    def to_dict(self) -> dict:
        return {plan.interval: plan.to_dict() for plan in self.plans}

    def table(self) -> str:
        first = self.plans[0]
        lines = [f"Respondents needed for a margin of ±{first.margin * 100:g} points on π at {first.confidence:.0%} "
                 f"confidence, {first.model} with p = {', '.join(f'{v:g}' for v in first.p)} (worst case over π and "
                 f"{MODEL_NUISANCE[first.model]})",
                 f"  {'interval':<8} {'respondents':>11} {'group 1':>8} {'group 2':>8} {'share 1':>8} "
                 f"{'even split':>10} {'half-width':>10}"]
        for plan in self.plans:
            lines.append(f"  {plan.interval:<8} {plan.n:>11,} {plan.n_groups[0]:>8,} {plan.n_groups[1]:>8,} "
                         f"{plan.share:>8.1%} {plan.n_equal:>10,} {'±' + format(plan.half_width, '.4f'):>10}")
        lines.append("  exact: the projected Clopper–Pearson box, which holds at every n; Wald: the moment estimate's, "
                     "about as wide as the profile-likelihood interval")
        return "\n".join(lines) + "\n"


MODEL_NUISANCE = {"CDM": "γ", "CDMsym": "γ", "SLD": "t", "UQTunknown": "π_UQ"}


def plan_rrreg(model: str, p_text: str, margin: float, *, confidence: float = 0.95) -> RRregPlan:
    """The plans of ``deniable plan --rrreg``; a one-group model is refused (``deniable plan --design`` plans it)."""
    if model not in TWO_GROUP:
        raise FieldError(f"plans a two-group design ({', '.join(TWO_GROUP)}); plan {model} with --design", "--rrreg")
    from deniable.estimators.group_plan import plan_two_group

    p = parse_p(p_text, model)
    return RRregPlan(tuple(plan_two_group(model, p, margin, confidence=confidence, interval=interval)
                           for interval in ("exact", "wald")))


@dataclass(frozen=True)
class RRregRegression(SurveyResult):
    """``deniable regress --rrreg MODEL --p … DATA.csv "response ~ x + …"``: the logit of the carriers' share on
    the file's numeric columns, with the design's nuisance parameter (:func:`deniable.estimators.group_logit`)."""

    formula: str
    fit: object  # GroupLogitResult

    def to_dict(self) -> dict:
        return {"formula": self.formula, **self.fit.to_dict()}

    def table(self) -> str:
        return f"{self.formula}\n{self.fit.summary()}"


def regress_rrreg(path, model: str, p_text: str, formula: str, *, confidence: float = 0.95) -> RRregRegression:
    """Fit ``formula`` — ``response ~ x + z`` (columns of numbers) or ``response ~ 1`` — under a two-group ``model``."""
    if model not in TWO_GROUP:
        raise FieldError(f"regresses under a two-group design ({', '.join(TWO_GROUP)}); {model}'s data "
                         "are a survey question's: deniable regress SURVEY.json RESPONSES.csv", "--rrreg")
    left, sep, right = formula.partition("~")
    terms = [term.strip() for term in right.split("+")]
    if not sep or left.strip() != "response" or not all(terms):
        raise FieldError(f"must be \"response ~ COLUMN + …\" (or \"response ~ 1\"), got {formula!r}", "FORMULA")
    columns = tuple(dict.fromkeys(term for term in terms if term != "1"))
    p = parse_p(p_text, model)
    data = read_rrreg(path, model, columns)
    import numpy as np

    from deniable.estimators.group_logit import group_logit

    X = np.column_stack([np.ones(len(data.response)), *(data.covariates[c] for c in columns)])
    fit = group_logit(model, p, data.response, data.group, X, ("(Intercept)", *columns), confidence=confidence)
    return RRregRegression(formula, fit)
