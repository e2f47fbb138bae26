"""Result objects: frozen dataclasses of named numpy arrays (read-only)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


def frozen(array, dtype=float) -> np.ndarray:
    """Return a read-only copy of ``array``."""
    out = np.array(array, dtype=dtype)
    out.setflags(write=False)
    return out


def _json_number(value):
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True, eq=False)
class EstimateResult:
    """Estimates, standard errors and intervals for the options of one protected question."""

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
    note: str = field(default="")

    def as_dict(self, labels=None) -> dict:
        """Return the estimates in the JSON shape of docs/design.md ("Formats"); NaN becomes None."""
        labels = list(labels) if labels is not None else [str(i) for i in range(self.k)]
        if len(labels) != self.k:
            raise ValueError(f"labels must have k={self.k} entries, got {len(labels)}")
        return {
            "n": self.n,
            "epsilon": _json_number(self.epsilon),
            "declared_epsilon": _json_number(self.declared_epsilon),
            "p": self.p,
            "q": self.q,
            "method": self.method,
            "confidence": self.confidence,
            "simultaneous": self.simultaneous,
            "note": self.note,
            "options": [
                {
                    "label": labels[i],
                    "noisy_count": int(self.noisy_counts[i]),
                    "estimate": _json_number(self.estimate[i]),
                    "consistent": _json_number(self.consistent[i]),
                    "std_error": _json_number(self.std_error[i]),
                    "ci_low": _json_number(self.ci_low[i]),
                    "ci_high": _json_number(self.ci_high[i]),
                }
                for i in range(self.k)
            ],
        }


@dataclass(frozen=True, eq=False)
class CrosstabResult:
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
