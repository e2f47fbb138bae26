"""The planner's golden file, and a planner that remembers nothing, for the planning tests."""

from __future__ import annotations

import json
import math
from pathlib import Path

from deniable.client.mechanism import resolve
from deniable.estimators import planning

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "data" / "plan_golden.json").read_text())


def forget(cache_dir: Path | None = None) -> None:
    """Empty the planner's caches in memory, and the disk cache under ``cache_dir`` if given."""
    planning._worst_case.cache_clear()
    planning._plan.cache_clear()
    planning._decided.cache_clear()
    if cache_dir is not None:
        for entry in sorted((Path(cache_dir) / "deniable").glob("*/*/*.json")):
            entry.unlink()



def exhaustive_n(epsilon, k: int, margin: float, confidence: float = 0.95) -> int:
    """The exhaustive search's n (``plans(..., decided=False)``): the edge of the tooth the trend reaches."""
    return planning.plans([(epsilon, k, margin)], confidence=confidence, decided=False)[0].n


def assert_decided(n: int, epsilon, k: int, margin: float, confidence: float = 0.95, *, exhaustive: int | None = None,
                   channel: tuple[float, float] | None = None) -> int:
    """``n`` follows the decided planner's rule (issue 40): the exact worst-case half-width at n, computed
    afresh (no memory, no disk), is at most ``margin``, and n is at least the exhaustive search's n and at
    most 1 % (``planning.DECIDED``) above it.  ``channel``: a design's report ``(p, q)`` instead of the
    mechanism of ``(epsilon, k)``; ``exhaustive``: that n when known (else computed).  Returns n."""
    p, q = channel if channel is not None else (resolve(k, epsilon).p, resolve(k, epsilon).q)
    if exhaustive is None:
        exhaustive = planning.plan_channel(p, q, margin, confidence=confidence).n
    value, _ = planning._compute_worst_case(n, p, q, confidence)
    assert value <= margin, (n, value, margin)
    assert exhaustive <= n <= math.floor(exhaustive * (1 + planning.DECIDED)), (n, exhaustive)
    return n


def assert_decided_design(n: int, design, margin: float, confidence: float = 0.95) -> int:
    """:func:`assert_decided` for an exactly planned design: at ``n`` every report channel's exact worst case
    meets the margin, and n is within 1 % above the exhaustive plan's (``plan_design``, the largest of its
    channels' n)."""
    from deniable.estimators.designs import design_channels, plan_design

    exhaustive = plan_design(design, margin, confidence=confidence).n
    for p, q in dict.fromkeys(design_channels(design)):
        value, _ = planning._compute_worst_case(n, p, q, confidence)
        assert value <= margin, (n, value, margin, (p, q))
    assert exhaustive <= n <= math.floor(exhaustive * (1 + planning.DECIDED)), (n, exhaustive)
    return n
