"""Resolve a question's (k, ε) into the realized mechanism parameters the estimators use."""

from __future__ import annotations

import math
from dataclasses import dataclass

from client.mechanism import MechanismError, mechanism


@dataclass(frozen=True)
class Params:
    """Realized keep/flip probabilities of one question (``p = 1, q = 0`` when asked directly)."""

    k: int
    p: float
    q: float
    epsilon: float
    declared_epsilon: float


def resolve(k, epsilon) -> Params:
    """Return the realized parameters for ``(k, ε)``; ``epsilon=None`` means no privacy.

    The realized ``p = threshold / 2^32`` comes from :func:`client.mechanism.mechanism`, never
    from ``e^ε`` here, so estimates match what the samplers actually did.
    """
    if epsilon is None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 2:
            raise ValueError(f"k must be an integer >= 2, got {k!r}")
        return Params(k=int(k), p=1.0, q=0.0, epsilon=math.inf, declared_epsilon=math.inf)
    try:
        mech = mechanism(k, epsilon)
    except MechanismError as error:
        raise ValueError(str(error)) from None
    return Params(k=mech.k, p=mech.p, q=mech.q, epsilon=mech.epsilon, declared_epsilon=mech.declared_epsilon)
