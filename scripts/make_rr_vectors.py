"""Write ``tests/rr_vectors.json``: test vectors for every randomized-response sampler.

Each case fixes ``(k, epsilon)`` (and so ``threshold``), a list of true option indices, the
uint32 draws that randomize them in order, and the reports that result.  The draws are chosen
to exercise the edges: keep draws at ``threshold − 1`` (kept) and ``threshold`` (moved), 0 and
2^32 − 1, and, where ``2^32 mod (k − 1) ≠ 0``, "other option" draws in the rejection region
``u ≥ 2^32 − 2^32 mod (k − 1)`` that must be redrawn.  The reports are computed by the Python
reference, :func:`client.randomizer.randomize_draws`; the browser's ``rr.js`` must reproduce them.

Run from the repository root:

    python scripts/make_rr_vectors.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deniable.client.mechanism import TWO_32, mechanism  # noqa: E402
from deniable.client.randomizer import randomize_draws, rejection_limit  # noqa: E402

OUT = ROOT / "tests" / "rr_vectors.json"
KS = (2, 3, 4, 5, 7, 12)
EPSILONS = (0.5, 1.0, 2.0, 4.0, 20.0)
VALUES_PER_CASE = 24
SEED = 20240501


class CountingIterator:
    """Iterate over draws and count how many were consumed."""

    def __init__(self, draws):
        self._it = iter(draws)
        self.used = 0

    def __iter__(self):
        return self

    def __next__(self):
        value = next(self._it)
        self.used += 1
        return value


def make_case(k: int, epsilon: float, rng: np.random.Generator) -> tuple[dict, int]:
    """Return one case and how many of its draws fall in the rejection region (and are redrawn)."""
    mech = mechanism(k, epsilon)
    m = k - 1
    limit = rejection_limit(k) if m > 1 else TWO_32
    keep_specials = [mech.threshold - 1, mech.threshold, 0, TWO_32 - 1]
    other_specials = [0, m - 1, m, limit - 1, TWO_32 - 1 if limit == TWO_32 else limit - 2]
    values: list[int] = []
    draws: list[int] = []
    rejected = 0
    for i in range(VALUES_PER_CASE):
        value = i % k if i < 2 * k else int(rng.integers(0, k))
        values.append(value)
        keep = keep_specials[i] if i < len(keep_specials) else int(rng.integers(0, TWO_32))
        if i >= len(keep_specials) and i % 3 == 0:
            keep = mech.threshold + int(rng.integers(0, TWO_32 - mech.threshold))  # force a move
        draws.append(keep)
        if keep < mech.threshold or m == 1:
            continue
        if limit < TWO_32 and i % 2 == 0:
            # One or two draws in the rejection region, then an accepted one.
            extra = [int(u) for u in rng.integers(limit, TWO_32, size=1 + i % 4 // 2)]
            draws.extend(extra)
            rejected += len(extra)
        j = i % (len(other_specials) + 2)
        draws.append(other_specials[j] if j < len(other_specials) else int(rng.integers(0, limit)))
    source = CountingIterator(draws)
    reports = randomize_draws(values, k, epsilon, source)
    assert source.used == len(draws), "every draw must be consumed"
    case = {"k": k, "epsilon": epsilon, "threshold": mech.threshold,
            "values": values, "draws": draws, "reports": reports}
    return case, rejected


def main() -> None:
    rng = np.random.default_rng(SEED)
    made = [make_case(k, epsilon, rng) for k in KS for epsilon in EPSILONS]
    cases = [case for case, _ in made]
    rejected = sum(n for _, n in made)
    # One case per line: diffs stay readable and the file small.
    lines = ",\n  ".join(json.dumps(case, separators=(", ", ": ")) for case in cases)
    OUT.write_text('{"generated_by": "python scripts/make_rr_vectors.py",\n "cases": [\n  '
                   + lines + "\n ]}\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(cases)} cases, "
          f"{sum(len(c['values']) for c in cases)} values, {rejected} rejection-region draws")


if __name__ == "__main__":
    main()
