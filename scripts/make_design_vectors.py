"""Write ``tests/data/design_vectors.json``: test vectors for the randomized-response designs' sampler.

Each case is one design as a survey definition states it (``{"name": "forced", ...}``, with its
options), its realized integer weights (reports × answers, each column summing to 2^32), true
answers, one uint32 draw per answer, and the reports that result.  The draws are chosen at the
edges: for every true answer, each cumulative weight ``C[t][r]`` and ``C[t][r] − 1`` (the last
draw that gives report r and the first that gives the next), 0 and 2^32 − 1, then draws at random.
The reports are computed by the Python reference, :func:`deniable.client.designs.sample`; the
browser's ``designs.js`` (``sampleDesign``) must reproduce them (tests/e2e/test_design_js.py).

``tick_cases`` do the same for a check-all question with a binary design on each tick: the design,
the number of options K, true subsets (bit masks: the empty and the full set, each single option,
then at random), K draws per subset (the edge draws of both answers' columns, then at random) and
the reported subsets of :func:`deniable.client.designs.sample_ticks`, which ``sampleTicks`` must
reproduce.

Run from the repository root:

    python scripts/make_design_vectors.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deniable.client.designs import from_definition, sample, sample_ticks, tick_design  # noqa: E402
from deniable.client.mechanism import TWO_32  # noqa: E402

OUT = ROOT / "tests" / "data" / "design_vectors.json"
SEED = 20261124
RANDOM_DRAWS = 16
DESIGNS = [
    ({"name": "forced", "p": 2 / 3, "forced": [1 / 6, 1 / 6]}, ["Yes", "No"]),
    ({"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}, ["Yes", "No"]),
    ({"name": "forced", "p": 0.7, "forced": [0.1, 0.05, 0.15]}, ["None", "Some", "Much"]),
    ({"name": "forced", "p": 0.5, "forced": [0.1, 0.1, 0.1, 0.1, 0.1]}, ["a", "b", "c", "d", "e"]),
    ({"name": "forced", "p": 0.8, "forced": [0.2, 0]}, ["Yes", "No"]),  # not ε-LDP: "No" is never forced
    ({"name": "unrelated", "p": 0.7, "prevalence": 0.25}, ["Yes", "No"]),
    ({"name": "warner", "p": 0.75}, ["Yes", "No"]),
    ({"name": "warner", "p": 0.3}, ["Yes", "No"]),
    ({"name": "kuk", "theta_1": 0.8, "theta_2": 0.3}, ["Yes", "No"]),
    ({"name": "crosswise", "prevalence": 1 / 12}, ["Yes", "No"]),
    ({"name": "custom", "matrix": [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]}, ["low", "mid", "high"]),
    ({"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}, ["Yes", "No"]),  # triangular: not ε-LDP
    # decimals that add up to 1 only as typed (issue 36): 0.62 + 0.23 + 0.15 in binary floats does not
    ({"name": "forced", "p": 0.62, "forced": [0.23, 0.15]}, ["Yes", "No"]),
    ({"name": "forced", "p": 0.62, "forced": [0.23, 0.15, 0]}, ["None", "Some", "Much"]),  # a zero share: not ε-LDP
    ({"name": "custom", "matrix": [[0.62, 0.2, 0.1], [0.23, 0.6, 0.2], [0.15, 0.2, 0.7]]}, ["low", "mid", "high"]),
]


# binary designs on each tick of a check-all question: (design, K)
TICK_DESIGNS = [
    ({"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}, 3),
    ({"name": "unrelated", "p": 0.7, "prevalence": 0.25}, 2),
    ({"name": "warner", "p": 0.3}, 4),
    ({"name": "kuk", "theta_1": 0.8, "theta_2": 0.3}, 3),
    ({"name": "crosswise", "prevalence": 1 / 12}, 2),
    ({"name": "custom", "matrix": [[0.7, 0.2], [0.3, 0.8]]}, 5),
    ({"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}, 3),  # triangular: not ε-LDP
]
RANDOM_SUBSETS = 12


def edge_draws(weights: list[list[int]]) -> list[tuple[int, int]]:
    """``(answer, draw)`` at every boundary of every answer's cumulative weights, and at 0 and 2^32 − 1."""
    out = []
    k = len(weights[0])
    for t in range(k):
        total = 0
        draws = {0, TWO_32 - 1}
        for row in weights:
            total += row[t]
            draws.update(d for d in (total - 1, total) if 0 <= d < TWO_32)
        out.extend((t, d) for d in sorted(draws))
    return out


def make_case(spec: dict, labels: list[str], rng: np.random.Generator) -> dict:
    design = from_definition(spec, labels)
    weights = [list(row) for row in design.weights]
    pairs = edge_draws(weights)
    pairs += [(int(rng.integers(0, design.k)), int(rng.integers(0, TWO_32))) for _ in range(RANDOM_DRAWS)]
    values = [t for t, _ in pairs]
    draws = [d for _, d in pairs]
    reports = [int(r) for r in sample(design, values, draws)]
    return {"design": spec, "options": labels, "weights": weights, "epsilon": design.epsilon if design.ldp else None,
            "values": values, "draws": draws, "reports": reports}


def make_tick_case(spec: dict, k: int, rng: np.random.Generator) -> dict:
    design = tick_design(spec)
    edges = sorted({d for _, d in edge_draws([list(row) for row in design.weights])})
    masks = [0, (1 << k) - 1, *(1 << j for j in range(k))]
    masks += [int(rng.integers(0, 1 << k)) for _ in range(RANDOM_SUBSETS)]
    # every edge draw on every option at least once, cycling through the subsets; the rest at random
    draws = [[int(rng.integers(0, TWO_32)) for _ in range(k)] for _ in masks]
    for i, (d, j) in enumerate((d, j) for d in edges for j in range(k)):
        draws[i % len(masks)][j] = d
    reports = [int(r) for r in sample_ticks(design, masks, draws, k)]
    return {"design": spec, "k": k, "weights": [list(row) for row in design.weights],
            "tick_epsilon": design.epsilon if design.ldp else None, "masks": masks, "draws": draws,
            "reports": reports}


def make_tick_cases() -> list[dict]:
    rng = np.random.default_rng(SEED + 1)
    return [make_tick_case(spec, k, rng) for spec, k in TICK_DESIGNS]


def make_cases() -> list[dict]:
    rng = np.random.default_rng(SEED)
    return [make_case(spec, labels, rng) for spec, labels in DESIGNS]


def main() -> None:
    cases, ticks = make_cases(), make_tick_cases()
    lines = ",\n  ".join(json.dumps(case, separators=(", ", ": ")) for case in cases)
    tick_lines = ",\n  ".join(json.dumps(case, separators=(", ", ": ")) for case in ticks)
    OUT.write_text('{"generated_by": "python scripts/make_design_vectors.py",\n "cases": [\n  '
                   + lines + '\n ],\n "tick_cases": [\n  ' + tick_lines + "\n ]}\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(cases)} designs, {sum(len(c['values']) for c in cases)} draws; "
          f"{len(ticks)} designs on ticks, {sum(len(c['masks']) * c['k'] for c in ticks)} draws")


if __name__ == "__main__":
    main()
