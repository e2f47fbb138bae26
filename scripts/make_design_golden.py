"""Write ``tests/data/design_golden.json``: golden estimates of RRreg's designs from their closed forms.

Each case is one design as R's RRreg (Heck & Moshagen 2018) names it, with its nominal parameters
(as RRreg takes them, not the 32-bit realization deniable samples), report counts at n = 100, 1,000
and 10,000 — inside [0, 1], with the unbiased estimate exactly 0, and beyond it — and what the
designs' closed forms give, in exact rational arithmetic (:mod:`fractions`), independent of
:mod:`deniable.estimators.designs`:

* **unbiased** ``π̂ = M⁻¹ λ̂``: for a binary design ``(λ̂ − q)/(p − q)`` with ``p, q`` the first
  report's probabilities under the two answers (Warner 1965: ``(λ̂ − (1 − p))/(2p − 1)``; forced
  response ``(λ̂ − p_yes)/p``; the unrelated question ``(λ̂ − (1 − p)π_u)/p``; Kuk
  ``(λ̂ − θ₂)/(θ₁ − θ₂)``; the crosswise model ``(λ̂ + π_y − 1)/(2π_y − 1)``; Mangat's and the
  triangular model ``(λ̂ − (1 − p))/p``); forced response with k answers ``(λ̂_t − p_t)/p``; a
  custom 3 × 3 matrix by Gauss–Jordan elimination over the rationals;
* **standard errors** ``sqrt(diag(M⁻¹ (diag λ̂ − λ̂λ̂ᵀ) M⁻ᵀ)/n)``: ``sqrt(λ̂(1 − λ̂)/n)/|p − q|``
  for a binary design, ``sqrt(λ̂_t(1 − λ̂_t)/n)/p`` for forced response (``M⁻¹ = (I − s1ᵀ)/p`` and
  ``1ᵀ(diag λ − λλᵀ) = 0``), the matrix product for the custom matrix (without RRreg's n − 1);
* **maximum likelihood** on the simplex: ``clip(π̂, 0, 1)`` for two answers (the likelihood is
  concave in one share); for forced response with k answers the water-filling solution of the KKT
  conditions ``c_t p/(p π_t + p_t) = μ`` where ``π_t > 0``, ``≤ μ`` where ``π_t = 0``:
  ``π_t = max(0, c_t/μ − p_t/p)`` with ``μ = Σ_S c_t / (1 + Σ_S p_t/p)`` over the support S, found by
  dropping the answer whose share comes out ≤ 0 until none does; for the custom matrix only
  counts whose ``π̂`` lies in the simplex, where it is the maximum.

Run from the repository root:

    python scripts/make_design_golden.py
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from math import sqrt
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "design_golden.json"

# (RRreg's name, deniable's definition, the binary design's (p, q) of its first report, or None)
BINARY = [
    ("Warner", {"name": "warner", "p": 0.7}, (F(7, 10), F(3, 10))),
    ("FR", {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}, (F(85, 100), F(25, 100))),
    ("UQTknown", {"name": "unrelated", "p": 0.7, "prevalence": 0.25}, (F(7, 10) + F(3, 10) * F(1, 4), F(3, 10) * F(1, 4))),
    ("Kuk", {"name": "kuk", "theta_1": 0.8, "theta_2": 0.3}, (F(8, 10), F(3, 10))),
    ("Crosswise", {"name": "crosswise", "prevalence": 0.25}, (F(1, 4), F(3, 4))),
    ("Mangat", {"name": "custom", "matrix": [[1, 0.3], [0, 0.7]]}, (F(1), F(3, 10))),
    ("Triangular", {"name": "custom", "matrix": [[1, 0.25], [0, 0.75]]}, (F(1), F(1, 4))),
]
FORCED_3 = ("FR (3 answers)", {"name": "forced", "p": 0.7, "forced": [0.1, 0.05, 0.15]}, F(7, 10),
            [F(1, 10), F(5, 100), F(15, 100)])
CUSTOM = ("custom", [[F(6, 10), F(2, 10), F(1, 10)], [F(3, 10), F(6, 10), F(2, 10)], [F(1, 10), F(2, 10), F(7, 10)]])
SIZES = (100, 1000, 10000)


def binary_counts(n: int, p: F, q: F) -> list[int]:
    """The first report's count inside (π = 0.3), with π̂ exactly 0 (n·q, when whole) and beyond 0."""
    inside = round(n * (q + (p - q) * F(3, 10)))
    edge = n * q
    beyond = round(n * q) + (-1 if p > q else 1) * max(2, n // 50)  # past π = 0 on the report's side
    out = [inside, beyond]
    if edge.denominator == 1:
        out.insert(1, int(edge))
    return out


def water_fill(counts: list[int], p: F, shares: list[F]) -> list[F]:
    """Forced response's maximum on the simplex (module notes), exactly."""
    support = set(range(len(counts)))
    while True:
        mu = sum(F(counts[t]) for t in support) / (1 + sum(shares[t] for t in support) / p)
        pi = [F(counts[t]) / mu - shares[t] / p if t in support else F(0) for t in range(len(counts))]
        negative = [t for t in support if pi[t] <= 0]
        if not negative:
            return pi
        support.discard(min(negative, key=lambda t: pi[t]))


def inverse(m: list[list[F]]) -> list[list[F]]:
    """Gauss–Jordan over the rationals."""
    k = len(m)
    a = [row[:] + [F(int(i == j)) for j in range(k)] for i, row in enumerate(m)]
    for col in range(k):
        pivot = next(r for r in range(col, k) if a[r][col] != 0)
        a[col], a[pivot] = a[pivot], a[col]
        a[col] = [v / a[col][col] for v in a[col]]
        for r in range(k):
            if r != col and a[r][col] != 0:
                a[r] = [x - a[r][col] * y for x, y in zip(a[r], a[col])]
    return [row[k:] for row in a]


def case(name, definition, options, counts, unbiased, ses, ml) -> dict:
    return {"rrreg": name, "design": definition, "options": options, "counts": counts,
            "unbiased": [float(v) for v in unbiased], "std_error": ses,
            "consistent": None if ml is None else [float(v) for v in ml]}


def make_cases() -> list[dict]:
    out = []
    for name, definition, (p, q) in BINARY:
        for n in SIZES:
            for x in binary_counts(n, p, q):
                lam = F(x, n)
                pi = (lam - q) / (p - q)
                se = sqrt(lam * (1 - lam) / n) / abs(float(p - q))
                ml = min(max(pi, F(0)), F(1))
                out.append(case(name, definition, ["Yes", "No"], [x, n - x], [pi, 1 - pi], [se, se], [ml, 1 - ml]))
    name, definition, p, shares = FORCED_3
    for n in SIZES:
        for truth in ([F(5, 10), F(3, 10), F(2, 10)], [F(0), F(6, 10), F(4, 10)]):
            lam = [p * t + s for t, s in zip(truth, shares)]
            counts = [round(n * v) for v in lam[:2]]
            counts.append(n - sum(counts))
            for shifted in (counts, [counts[0] - n // 50, counts[1] + n // 50, counts[2]]):
                lam_hat = [F(c, n) for c in shifted]
                pi = [(v - s) / p for v, s in zip(lam_hat, shares)]
                ses = [sqrt(v * (1 - v) / n) / float(p) for v in lam_hat]
                out.append(case(name, definition, ["a", "b", "c"], shifted, pi, ses, water_fill(shifted, p, shares)))
    name, m = CUSTOM
    m_inv = inverse(m)
    definition = {"name": "custom", "matrix": [[float(v) for v in row] for row in m]}
    for n in SIZES:
        for truth in ([F(5, 10), F(3, 10), F(2, 10)], [F(1, 10), F(1, 10), F(8, 10)]):
            lam = [sum(m[r][t] * truth[t] for t in range(3)) for r in range(3)]
            counts = [round(n * v) for v in lam[:2]]
            counts.append(n - sum(counts))
            lam_hat = [F(c, n) for c in counts]
            pi = [sum(m_inv[t][r] * lam_hat[r] for r in range(3)) for t in range(3)]
            cov = [[(lam_hat[r] if r == s else 0) - lam_hat[r] * lam_hat[s] for s in range(3)] for r in range(3)]
            ses = [sqrt(sum(m_inv[t][r] * cov[r][s] * m_inv[t][s] for r in range(3) for s in range(3)) / n)
                   for t in range(3)]
            ml = pi if min(pi) >= 0 else None
            out.append(case(name, definition, ["a", "b", "c"], counts, pi, [float(v) for v in ses], ml))
    return out


def main() -> None:
    cases = make_cases()
    lines = ",\n  ".join(json.dumps(c, separators=(", ", ": ")) for c in cases)
    OUT.write_text('{"generated_by": "python scripts/make_design_golden.py",\n "cases": [\n  ' + lines + "\n ]}\n",
                   encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(cases)} cases")


if __name__ == "__main__":
    main()
