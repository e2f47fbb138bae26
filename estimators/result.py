"""Result objects: frozen dataclasses of named numpy arrays (read-only)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from deniable.errors import FieldError


def frozen(array, dtype=float) -> np.ndarray:
    """Return a read-only copy of ``array``."""
    out = np.array(array, dtype=dtype)
    out.setflags(write=False)
    return out


def json_number(value):
    """A JSON-safe number: an int stays an int, a float stays a float, and None, NaN and infinity
    become None (the one helper for this, used by every result and every question type)."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None


def _json(value):
    """A result's field as JSON: arrays as lists, non-finite numbers as None, nested results as dicts,
    a dict keyed by tuples (a check-all question's pairs) as a list of ``{"key": [...], **value}``."""
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, np.ndarray):
        return [_json(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        if any(isinstance(key, tuple) for key in value):
            return [{"key": list(key), **_json(item)} for key, item in value.items()]
        return {str(key): _json(item) for key, item in value.items()}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return json_number(value)
    return value


def _shown(value) -> str:
    if isinstance(value, Result):
        return type(value).__name__
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=4, suppress_small=True, max_line_width=100)
    if isinstance(value, (float, np.floating)):
        return f"{value:.6g}"
    return repr(value) if isinstance(value, str) else str(value)


class Result:
    """What every result of :mod:`deniable.estimators` can do: serialize itself (:meth:`to_dict`, JSON-ready)
    and print itself (:meth:`summary`, plain text), as statsmodels' results do."""

    def to_dict(self) -> dict:
        """Every field, JSON-ready (NaN and infinity become None)."""
        from dataclasses import fields

        return {f.name: _json(getattr(self, f.name)) for f in fields(self)}

    def summary(self) -> str:
        """One line per field: its name and value (arrays rounded to 4 digits); a nested result's own
        summary, indented."""
        from dataclasses import fields

        lines = [type(self).__name__]
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Result):
                first, *rest = value.summary().splitlines()
                lines += [f"  {f.name}: {first}", *(f"    {line}" for line in rest)]
            elif isinstance(value, dict) and value:
                lines.append(f"  {f.name}: {len(value)} entries")
            elif value is not None and not (isinstance(value, str) and not value):
                lines.append(f"  {f.name}: {_shown(value)}")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class OptionEstimates(Result):
    """The fields shared by the results with one estimate per option (:class:`EstimateResult`, and a
    check-all question's :class:`~deniable.estimators.multi.MultiResult`), and their options as JSON."""

    n: int
    k: int
    epsilon: float
    declared_epsilon: float
    p: float
    q: float
    method: str
    confidence: float
    simultaneous: bool
    noisy_counts: np.ndarray
    estimate: np.ndarray
    consistent: np.ndarray
    std_error: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray

    def options(self, labels=None) -> list[dict]:
        """Per option its ``label`` (``labels``, default ``"0"``, ``"1"``, …), ``noisy_count``,
        ``estimate``, ``consistent``, ``std_error``, ``ci_low`` and ``ci_high`` (NaN becomes None)."""
        labels = list(labels) if labels is not None else [str(i) for i in range(self.k)]
        if len(labels) != self.k:
            raise FieldError(f"labels must have k={self.k} entries, got {len(labels)}", "labels")
        return [
            {
                "label": labels[i],
                "noisy_count": int(self.noisy_counts[i]),
                "estimate": json_number(self.estimate[i]),
                "consistent": json_number(self.consistent[i]),
                "std_error": json_number(self.std_error[i]),
                "ci_low": json_number(self.ci_low[i]),
                "ci_high": json_number(self.ci_high[i]),
            }
            for i in range(self.k)
        ]


@dataclass(frozen=True, eq=False)
class EstimateResult(OptionEstimates):
    """Estimates, standard errors and intervals for the options of one protected question."""

    note: str = field(default="")

    def as_dict(self, labels=None) -> dict:
        """Return the estimates in the JSON shape of docs/design.md ("Formats"); NaN becomes None."""
        options = self.options(labels)
        return {
            "n": self.n,
            "epsilon": json_number(self.epsilon),
            "declared_epsilon": json_number(self.declared_epsilon),
            "p": self.p,
            "q": self.q,
            "method": self.method,
            "confidence": self.confidence,
            "simultaneous": self.simultaneous,
            "note": self.note,
            "options": options,
        }


    def to_dict(self, labels=None) -> dict:
        """:meth:`as_dict`: the estimates JSON of docs/design.md ("Formats")."""
        return self.as_dict(labels)

    def summary(self, labels=None) -> str:
        """A plain-text table: one line per option."""
        labels = list(labels) if labels is not None else [str(i) for i in range(self.k)]
        which = "simultaneous " if self.simultaneous else ""
        lines = [f"n = {self.n:,}, ε = {self.epsilon:.4g} (p = {self.p:.4f}, q = {self.q:.4f}), "
                 f"{self.confidence:.0%} {which}{self.method} intervals",
                 f"  {'option':<16} {'reported':>9} {'estimate':>9} {'consistent':>10} {'std.err':>8}  interval"]
        for i, label in enumerate(labels):
            lines.append(f"  {label:<16} {int(self.noisy_counts[i]):>9,} {self.estimate[i]:>9.4f} "
                         f"{self.consistent[i]:>10.4f} {self.std_error[i]:>8.4f}  "
                         f"[{self.ci_low[i]:.4f}, {self.ci_high[i]:.4f}]")
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class CrosstabResult(Result):
    """Joint and conditional estimates for two protected questions asked of the same people.

    Every interval is exact and conservative (coverage ≥ ``confidence`` per cell): see
    :mod:`deniable.estimators.joint`.
    """

    n: int
    k_row: int
    k_col: int
    epsilon: float
    confidence: float
    joint_estimate: np.ndarray
    joint_consistent: np.ndarray
    joint_std_error: np.ndarray
    joint_ci_low: np.ndarray
    joint_ci_high: np.ndarray
    conditional_estimate: np.ndarray
    conditional_std_error: np.ndarray
    conditional_ci_low: np.ndarray
    conditional_ci_high: np.ndarray
    row: EstimateResult
    col: EstimateResult
    method: str = "exact"  # exact conservative intervals (deniable.estimators.joint, module notes)
    converged: bool = True  # the consistent estimate's fit met its KKT conditions
    iterations: int = 0  # EM steps of that fit (SQUAREM counts each EM map)
    row_estimable: np.ndarray | None = None  # rows with conditional estimates (the others: NaN, [0, 1])
    note: str = field(default="")  # what the numbers are not: non-convergence, rows too small

    CELL_FIELDS = ("estimate", "consistent", "std_error", "ci_low", "ci_high", "conditional_estimate",
                   "conditional_std_error", "conditional_ci_low", "conditional_ci_high")

    def cell(self, i: int, j: int) -> dict:
        """Cell (i, j), JSON-ready (NaN becomes None): the joint share (``estimate``, ``consistent``,
        ``std_error``, ``ci_low``, ``ci_high``) and the column's share within row i
        (``conditional_estimate``, ``conditional_std_error``, ``conditional_ci_low``,
        ``conditional_ci_high``).

        >>> from deniable.estimators import crosstab
        >>> sorted(crosstab(np.array([[200, 150], [300, 350]]), 1.0, 2.0).cell(0, 1))[:3]
        ['ci_high', 'ci_low', 'conditional_ci_high']
        """
        return {name: json_number(getattr(self, name if name.startswith("conditional_") else f"joint_{name}")[i, j])
                for name in self.CELL_FIELDS}
