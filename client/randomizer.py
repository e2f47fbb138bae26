"""Python twin of the browser randomizer (``client/static/rr.js``).

Both sample k-ary randomized response from uniform 32-bit integers in the same way:

1. draw ``u``; keep the true option iff ``u < threshold``;
2. otherwise, with ``m = k − 1`` other options, draw ``u`` until ``u < limit`` where
   ``limit = 2^32 − (2^32 mod m)`` (rejection sampling: no modulo bias), take ``r = u mod m``
   and report ``r`` if ``r < value`` else ``r + 1``.  With ``m = 1`` no draw is needed.

Real reports draw from the operating system's CSPRNG; a seeded ``numpy.random.Generator``
is for simulation only; an explicit sequence of draws is for test vectors.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np

from .mechanism import TWO_32, Mechanism, mechanism


def _os_uint32(size: int) -> np.ndarray:
    return np.frombuffer(os.urandom(4 * size), dtype=np.uint32).astype(np.uint64)


def _uint32_source(rng: np.random.Generator | None):
    if rng is None:
        return _os_uint32
    return lambda size: rng.integers(0, TWO_32, size=size, dtype=np.uint64)


def _check_values(values, k: int) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype.kind not in "iu":
        raise ValueError(f"values must be integer option indices 0..{k - 1}, got dtype {array.dtype}")
    if array.size and (array.min() < 0 or array.max() >= k):
        bad = array[(array < 0) | (array >= k)].flat[0]
        raise ValueError(f"values must be option indices 0..{k - 1}, got {bad}")
    return array.astype(np.int64)


def rejection_limit(k: int) -> int:
    """Return the bound below which a uint32 draw is accepted when choosing among k − 1 options."""
    return TWO_32 - TWO_32 % (k - 1)


def randomize(values, k, epsilon, rng: np.random.Generator | None = None) -> np.ndarray:
    """Randomize option indices ``values`` (0..k−1) with k-ary randomized response.

    Vectorized: the keep decisions are drawn at once, then the other option for every report
    that is not kept, redrawing only the rare draws rejected for being ``>= limit``.
    With ``rng=None`` the draws come from ``os.urandom``.
    """
    mech = mechanism(k, epsilon)
    values = _check_values(values, mech.k)
    draw = _uint32_source(rng)
    out = values.copy()
    flat = out.reshape(-1)
    moved = np.flatnonzero(draw(flat.size) >= mech.threshold)
    m = mech.k - 1
    if m == 1:
        flat[moved] = 1 - flat[moved]
        return out
    limit = rejection_limit(mech.k)
    r = np.empty(moved.size, dtype=np.int64)
    pending = np.arange(moved.size)
    while pending.size:
        u = draw(pending.size)
        ok = u < limit
        r[pending[ok]] = (u[ok] % m).astype(np.int64)
        pending = pending[~ok]
    original = flat[moved]
    flat[moved] = r + (r >= original)
    return out


def randomize_one(value: int, mech: Mechanism, draws: Iterable[int]) -> int:
    """Randomize one option index from an explicit iterator of uint32 draws (test vectors)."""
    draws = iter(draws)
    if not 0 <= value < mech.k:
        raise ValueError(f"value must be an option index 0..{mech.k - 1}, got {value}")
    if next(draws) < mech.threshold:
        return value
    m = mech.k - 1
    if m == 1:
        return 1 - value
    limit = rejection_limit(mech.k)
    u = next(draws)
    while u >= limit:
        u = next(draws)
    r = u % m
    return r + (r >= value)


def randomize_draws(values, k, epsilon, draws: Iterable[int]) -> list[int]:
    """Randomize ``values`` in order, consuming the given uint32 ``draws`` exactly as the browser does."""
    mech = mechanism(k, epsilon)
    source = iter(draws)
    return [randomize_one(int(v), mech, source) for v in values]
