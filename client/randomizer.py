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

from .mechanism import TWO_32, Mechanism, MechanismError, check_option, check_options, mechanism


def _os_uint32(size: int) -> np.ndarray:
    return np.frombuffer(os.urandom(4 * size), dtype=np.uint32)


def _uint32_source(rng: np.random.Generator | None):
    """Return ``draw(size) -> uint32 array``: the OS CSPRNG, or a seeded generator for simulation.

    ``rng.integers(0, 2^32, dtype=uint32)`` yields the same stream as ``dtype=uint64`` (both take
    one ``next_uint32`` per value), so switching to uint32 kept every seeded result unchanged.
    """
    if rng is None:
        return _os_uint32
    return lambda size: rng.integers(0, TWO_32, size=size, dtype=np.uint32)


def rejection_limit(k: int) -> int:
    """Return the bound below which a uint32 draw is accepted when choosing among k − 1 options."""
    return TWO_32 - TWO_32 % (k - 1)


def randomize(values, k, epsilon, rng: np.random.Generator | None = None) -> np.ndarray:
    """Randomize option indices ``values`` (0..k−1) with k-ary randomized response.

    Vectorized: the keep decisions are drawn at once, then the other option for every report
    that is not kept, redrawing only the rare draws rejected for being ``>= limit``.
    With ``rng=None`` the draws come from ``os.urandom``.  Returns an int64 array shaped like
    ``values``.
    """
    mech = mechanism(k, epsilon)
    try:
        values = check_options(values, mech.k)
    except MechanismError as exc:
        raise MechanismError(f"values {exc}") from None
    draw = _uint32_source(rng)
    out = values.astype(np.int64)  # a fresh copy: the caller's array is never written to
    flat = out.reshape(-1)
    # uint32 draws compared with a threshold < 2^32 directly: no widening copy of n values.
    moved = np.flatnonzero(draw(flat.size) >= mech.threshold)
    m = mech.k - 1
    if m == 1:
        flat[moved] ^= 1
        return out
    r = draw(moved.size)  # only the moved reports draw their other option
    limit = rejection_limit(mech.k)
    if limit < TWO_32:  # m a power of two: every draw is accepted
        r = r.copy()  # frombuffer arrays are read-only
        pending = np.flatnonzero(r >= limit)
        while pending.size:  # redraw rejected ones, in order, as the loop over all of them did
            u = draw(pending.size)
            ok = u < limit
            r[pending[ok]] = u[ok]
            pending = pending[~ok]
    r = (r % m).astype(np.int64)
    r += r >= flat[moved]
    flat[moved] = r
    return out


def randomize_one(value: int, mech: Mechanism, draws: Iterable[int]) -> int:
    """Randomize one option index from an explicit iterator of uint32 draws (test vectors)."""
    draws = iter(draws)
    try:
        value = check_option(value, mech.k)
    except MechanismError as exc:
        raise MechanismError(f"value {exc}") from None
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


def randomize_design(values, design, rng: np.random.Generator | None = None) -> np.ndarray:
    """Reports of true answers ``values`` under a randomized-response design
    (:class:`deniable.client.designs.Design`): one uint32 draw each, the first report whose cumulative
    weight exceeds it (:func:`deniable.client.designs.sample`, the browser's ``sampleDesign``).  With
    ``rng=None`` the draws come from ``os.urandom``; a seeded generator is for simulation only."""
    from .designs import sample

    values = np.asarray(values)
    try:
        values = check_options(values, design.k)
    except MechanismError as exc:
        raise MechanismError(f"values {exc}") from None
    return sample(design, values, _uint32_source(rng)(values.size).reshape(values.shape))
