"""Write ``tests/type_vectors.json``: test vectors for the samplers of the numeric,
check-all-that-apply and list-experiment questions.

Each case fixes a mechanism's integer parameters, the true answers, the uint32 draws that
randomize them in order, and the reports that result.  Draws are chosen to reach the edges:
a sign draw at ``2^31 − 1`` (+) and ``2^31`` (−), trial draws at ``threshold − 1`` (success) and
``threshold`` (failure), a "−0" that must be redrawn, a magnitude stopped at the cap, reports
clamped at both ends; rounding draws in the rejection region ``u ≥ 2^32 − 2^32 mod d`` and either
side of ``u mod d = r``; ticks kept and flipped at the threshold; arm coins at ``2^31 − 1`` and
``2^31``.  The reports come from the Python reference (:mod:`deniable.client.numeric`,
:mod:`~deniable.client.multi`, :mod:`~deniable.client.listexp`); the browser's ``rr.js`` must
reproduce them draw for draw (``tests/e2e/test_rr_js.py``).

Run from the repository root:

    python scripts/make_type_vectors.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deniable.client.listexp import arm_one, count_one, list_mechanism  # noqa: E402
from deniable.client.mechanism import TWO_32  # noqa: E402
from deniable.client.multi import multi_mechanism, multi_one  # noqa: E402
from deniable.client.numeric import (grid_mechanism, grid_one, laplace, laplace_one,  # noqa: E402
                                     uniform_limit)

OUT = ROOT / "tests" / "type_vectors.json"
SEED = 20240611
HALF = 2**31
PER_CASE = 12


class Counting:
    """Iterate over draws and count how many were consumed."""

    def __init__(self, draws):
        self._it, self.used = iter(draws), 0

    def __iter__(self):
        return self

    def __next__(self):
        self.used += 1
        return next(self._it)


def _check_used(draws, run):
    source = Counting(draws)
    reports = run(source)
    assert source.used == len(draws), "every draw must be consumed"
    return reports


def _consumed(run, fresh) -> list[int]:
    """The draws ``run(source)`` consumes from a source that makes each one with ``fresh()``."""
    used: list[int] = []

    def source():
        while True:
            used.append(fresh())
            yield used[-1]

    run(source())
    return used


def laplace_case(m: int, epsilon: float, rng) -> dict:
    mech = laplace(m, epsilon)
    t, values, draws = mech.threshold, [], []
    for i in range(PER_CASE):
        value = [0, m, m // 2][i % 3] if i < 6 else int(rng.integers(0, m + 1))
        values.append(value)
        if i == 0:  # "-0" redrawn, then + with magnitude 1 (success at t − 1, failure at t)
            draws += [HALF, t, HALF - 1, t - 1, t]
        elif i == 1:  # − with magnitude 2
            draws += [HALF, 0, t - 1, TWO_32 - 1]
        elif i == 2 and mech.cap <= 300:  # + and a run that reaches the cap (clamped high)
            draws += [0] + [0] * mech.cap
        elif i == 3 and mech.cap <= 300:  # − and the cap (clamped low)
            draws += [TWO_32 - 1] + [t - 1] * mech.cap
        else:  # random draws, as many as the sampler consumes (trials biased toward successes)
            draws += _consumed(lambda src: laplace_one(value, mech, src),
                               lambda: int(rng.integers(0, t)) if rng.random() < mech.t else int(rng.integers(t, TWO_32)))
    reports = _check_used(draws, lambda src: [laplace_one(v, mech, src) for v in values])
    return {"m": m, "epsilon": epsilon, "threshold": t, "tail": mech.tail, "values": values,
            "draws": draws, "reports": reports}


def grid_case(m: int, grid: int, epsilon: float, rng) -> dict:
    mech = grid_mechanism(m, grid, epsilon)
    d = mech.spacing
    limit = uniform_limit(d)
    values, draws = [], []
    for i in range(PER_CASE):
        value = [0, m, d - 1 if d > 1 else 0, min(d + 1, m)][i % 4] if i < 8 else int(rng.integers(0, m + 1))
        values.append(value)
        r = value % d
        if r:
            if limit < TWO_32 and i % 2 == 0:
                draws.append(int(rng.integers(limit, TWO_32)))  # rejected, redrawn
            draws.append([r - 1, r, d - 1][i % 3] if i < 8 else int(rng.integers(0, limit)))
        keep = [mech.threshold - 1, mech.threshold][i % 2] if i < 4 else int(rng.integers(0, TWO_32))
        draws.append(keep)
        if keep >= mech.threshold and mech.k > 2:
            k_limit = TWO_32 - TWO_32 % (mech.k - 1)
            draws.append(int(rng.integers(0, k_limit)))
    reports = _check_used(draws, lambda src: [grid_one(v, mech, src) for v in values])
    return {"m": m, "grid": grid, "epsilon": epsilon, "threshold": mech.threshold, "values": values,
            "draws": draws, "reports": reports}


def multi_case(k: int, epsilon: float, rng) -> dict:
    mech = multi_mechanism(k, epsilon)
    t = mech.threshold
    values, draws = [], []
    for i in range(PER_CASE):
        ticks = [int(b) for b in rng.integers(0, 2, size=k)] if i > 1 else [i] * k
        values.append(ticks)
        for j in range(k):
            draws.append([t - 1, t, 0, TWO_32 - 1][(i + j) % 4] if i < 4 else int(rng.integers(0, TWO_32)))
    reports = _check_used(draws, lambda src: [multi_one(v, mech, src) for v in values])
    return {"k": k, "epsilon": epsilon, "threshold": t, "values": values, "draws": draws, "reports": reports}


def list_case(items: int, epsilon: float | None, rng) -> dict:
    mech = list_mechanism(items, epsilon)
    values, draws, arms = [], [], []
    for i in range(PER_CASE):
        coin = [HALF - 1, HALF][i % 2] if i < 4 else int(rng.integers(0, TWO_32))
        draws.append(coin)
        arm = arm_one([coin])
        count = int(rng.integers(0, items + arm + 1))
        values.append(count)
        arms.append(arm)
        if mech.protected:
            keep = [mech.threshold - 1, mech.threshold][i % 2] if i < 4 else int(rng.integers(0, TWO_32))
            draws.append(keep)
            if keep >= mech.threshold:
                draws.append(int(rng.integers(0, TWO_32 - TWO_32 % (mech.k - 1))))

    def run(src):
        out = []
        for count in values:
            arm = arm_one(src)
            out.append([arm, count_one(count, arm, mech, src)])
        return out

    reports = _check_used(draws, run)
    assert [r[0] for r in reports] == arms
    return {"items": items, "epsilon": epsilon, "threshold": mech.threshold, "values": values, "draws": draws,
            "reports": reports}


def make_all() -> dict:
    rng = np.random.default_rng(SEED)
    return {
        "laplace": [laplace_case(m, e, rng) for m, e in ((1, 20.0), (4, 1.0), (10, 2.0), (40, 4.0), (40, 0.5))],
        "grid": [grid_case(m, g, e, rng) for m, g, e in ((1, 1, 1.0), (40, 1, 1.0), (40, 4, 2.0), (30, 10, 0.5),
                                                          (12, 4, 4.0), (21, 7, 1.0))],
        "multi": [multi_case(k, e, rng) for k, e in ((2, 1.0), (3, 2.0), (5, 4.0), (8, 0.5))],
        "list": [list_case(j, e, rng) for j, e in ((3, None), (3, 1.0), (4, 2.0), (1, 0.5))],
    }


def main() -> None:
    data = make_all()
    lines = []
    for kind, cases in data.items():
        body = ",\n   ".join(json.dumps(c, separators=(", ", ": ")) for c in cases)
        lines.append(f' "{kind}": [\n   {body}\n ]')
    OUT.write_text('{"generated_by": "python scripts/make_type_vectors.py",\n' + ",\n".join(lines) + "}\n",
                   encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: " + ", ".join(f"{len(v)} {k} cases" for k, v in data.items()))


if __name__ == "__main__":
    main()
