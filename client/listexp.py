"""The list experiment (item-count technique), plain or protected by ε.

J control items and one sensitive item.  The browser assigns the respondent to **control**
(arm 0: sees the J control items) or **treatment** (arm 1: sees all J + 1) with a fair coin —
treatment iff a uniform 32-bit integer is below ``2^31`` (:func:`arm_one`) — before the items are
shown, and records the arm with the report; the respondent gives only *how many* items apply.

**Plain** (no ε): the count is sent as given.  It is not differentially private: a treatment
respondent who reports 0 or J + 1 reveals the sensitive answer (floor and ceiling effects), so
the page says "not protected by ε".

**Protected** (ε): the count goes through k-ary randomized response over ``0..J + 1``
(``k = J + 2``, :mod:`.mechanism`) in both arms, so for any two true answers (any control items,
either sensitive answer) every report is at most ``e^ε`` times likelier under one than under
the other: the question is ε-LDP.  The arm is independent of the answers, so publishing it costs
nothing.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from deniable.errors import sent

from .mechanism import Mechanism, MechanismError, ThroughRR, direct, mechanism
from .randomizer import _uint32_source, randomize, randomize_one

MAX_ITEMS = 10  # control items
HALF = 2**31
CONTROL, TREATMENT = 0, 1
ARMS = ("control", "treatment")


@dataclass(frozen=True)
class ListMechanism(ThroughRR):
    """The count's randomized response over ``0..J + 1`` (``p = 1`` for a plain list experiment)."""

    items: int  # J, the control items
    rr: Mechanism  # k = J + 2

    proof = "deniable.client.listexp"  # the module notes, "Protected": ε of rr over the count

    @property
    def k(self) -> int:
        return self.items + 2

    def as_dict(self) -> dict:
        return {"mechanism": "list" if self.protected else "plain list", "items": self.items, **self.rr.as_dict()}


def check_items(j) -> int:
    if isinstance(j, bool) or not isinstance(j, numbers.Integral) or not 1 <= j <= MAX_ITEMS:
        raise MechanismError(f"a list experiment needs between 1 and {MAX_ITEMS} control items, got {sent(j)}")
    return int(j)


def list_mechanism(j, epsilon) -> ListMechanism:
    """Return the list experiment's mechanism for J control items, plain when ``epsilon`` is None.

    >>> list_mechanism(3, 1.0).k, list_mechanism(3, None).protected
    (5, False)
    """
    j = check_items(j)
    return ListMechanism(items=j, rr=direct(j + 2) if epsilon is None else mechanism(j + 2, epsilon))


def check_list_report(value, mech: ListMechanism) -> tuple[int, int]:
    """Return ``(arm, count)`` from ``{"arm": 0|1, "count": c}``, or raise MechanismError saying why.

    A plain list experiment's control arm can report at most J; randomized counts range over
    ``0..J + 1`` in both arms.
    """
    if not isinstance(value, dict) or set(value) != {"arm", "count"}:
        raise MechanismError('must be {"arm": 0 or 1, "count": how many apply}')
    arm, count = value["arm"], value["count"]
    if isinstance(arm, bool) or not isinstance(arm, numbers.Integral) or arm not in (CONTROL, TREATMENT):
        raise MechanismError(f"arm must be 0 (control) or 1 (treatment), got {sent(arm)}")
    top = mech.items + 1 if (mech.protected or arm == TREATMENT) else mech.items
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or not 0 <= count <= top:
        raise MechanismError(f"count must be an integer 0..{top} in the {ARMS[arm]} arm, got {sent(count)}")
    return int(arm), int(count)


def arm_one(draws: Iterable[int]) -> int:
    """The fair coin: treatment (1) iff the draw is below 2^31."""
    return TREATMENT if next(iter(draws)) < HALF else CONTROL


def count_one(count: int, arm: int, mech: ListMechanism, draws: Iterable[int]) -> int:
    """Randomize one true count (0..J in control, 0..J + 1 in treatment) from explicit draws."""
    top = mech.items + (arm == TREATMENT)
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or not 0 <= count <= top:
        raise MechanismError(f"count must be 0..{top} in the {ARMS[arm]} arm, got {sent(count)}")
    if not mech.protected:
        return int(count)
    return randomize_one(int(count), mech.rr, draws)


def assign_arms(size: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """``size`` fair coins: 1 (treatment) iff a uint32 draw is below 2^31."""
    return (_uint32_source(rng)(size) < HALF).astype(np.int64)


def randomize_counts(counts, mech: ListMechanism, rng: np.random.Generator | None = None) -> np.ndarray:
    """Randomize true counts (0..J + 1) with the count's randomized response (identity when plain)."""
    counts = np.asarray(counts, dtype=np.int64)
    if not mech.protected:
        return counts.copy()
    return randomize(counts, mech.k, mech.rr.declared_epsilon, rng=rng)
