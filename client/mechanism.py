"""k-ary randomized response: the one place where the mechanism's parameters are defined.

Ideal parameters (docs/design.md, "The mechanism"): ``p = e^ε / (e^ε + k − 1)`` and
``q = (1 − p) / (k − 1)``, so that ``ε = ln(p / q)``.  Every sampler keeps the true option
iff a uniform 32-bit integer ``u < threshold`` with ``threshold = floor(p · 2^32)``, so the
*realized* keep probability is exactly ``threshold / 2^32``.  Rounding down makes the realized
ε never exceed the declared one; estimators use the realized ``p`` and ``q``.

A question asked directly (no ε) is the ``p = 1`` case: :func:`direct` gives its
:class:`Mechanism` (``threshold = 2^32``, ``q = 0``, ε infinite), and :func:`resolve` picks one or
the other from ``(k, ε or None)``.  Option indices are checked in one place, :func:`check_option`.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from decimal import Decimal, localcontext

import numpy as np

from deniable.errors import FieldError, sent

TWO_32 = 2**32
MAX_EPSILON = 20.0


class MechanismError(FieldError):
    """A mechanism parameter (k or ε) is out of its domain."""


def check_k(k) -> int:
    """Return ``k`` as an int, or raise MechanismError naming the problem."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise MechanismError(f"k must be an integer >= 2, got {sent(k)}")
    if k < 2:
        raise MechanismError(f"k must be an integer >= 2, got {k}")
    return int(k)


def check_epsilon(epsilon) -> float:
    """Return ε as a float, or raise MechanismError naming the problem."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise MechanismError(f"epsilon must be a number in (0, {MAX_EPSILON:g}], got {sent(epsilon)}")
    try:
        value = float(epsilon)
    except OverflowError:  # an integer beyond float range (JSON allows any size)
        raise MechanismError(f"epsilon must be a finite number in (0, {MAX_EPSILON:g}], "
                             "got an integer too large for a float") from None
    if not math.isfinite(value) or not 0 < value <= MAX_EPSILON:
        raise MechanismError(f"epsilon must be a finite number in (0, {MAX_EPSILON:g}], got {sent(epsilon)}")
    return value


@functools.lru_cache(maxsize=4096)  # a pure function, asked on every submission
def threshold_for(k: int, epsilon: float) -> int:
    """Return ``floor(p · 2^32)`` for ``p = e^ε / (e^ε + k − 1)``, computed without float rounding.

    ``Decimal.exp`` is correctly rounded, and 60 significant digits leave no room for the
    floor to land on the wrong integer (``p · 2^32`` is below 2^32 < 10^10).
    """
    with localcontext() as ctx:
        ctx.prec = 60
        e = Decimal(epsilon).exp()
        return int((e * TWO_32) / (e + (k - 1)))  # int() truncates toward zero = floor here


def check_option(value, k: int) -> int:
    """Return ``value`` as an option index ``0..k−1``, or raise MechanismError saying why.

    Booleans, floats and strings are refused: an option index is an integer on the wire.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise MechanismError(f"must be an integer option index 0..{k - 1}, got {sent(value)}")
    if not 0 <= value < k:
        shown = value if abs(value) < 10**6 else "a number out of range"
        raise MechanismError(f"must be an option index 0..{k - 1}, got {shown}")
    return int(value)


def check_options(values, k: int, *, missing: bool = False) -> np.ndarray:
    """Return ``values`` as an integer array of option indices ``0..k−1`` (and ``−1`` = not answered
    when ``missing``), or raise MechanismError naming the first value out of range."""
    array = np.asarray(values)
    if array.size == 0:
        return array.astype(np.int64)  # [] parses as float64; nothing to check either way
    if array.dtype.kind not in "iu":
        raise MechanismError(f"must be integer option indices, got dtype {array.dtype}")
    low = -1 if missing else 0
    if array.min() < low or array.max() >= k:
        bad = array[(array < low) | (array >= k)].flat[0]
        raise MechanismError(f"must be option indices {low}..{k - 1}"
                             f"{' (−1 = not answered)' if missing else ''}, got {bad}")
    return array


@dataclass(frozen=True)
class Mechanism:
    """Realized parameters of k-ary randomized response for one question.

    ``threshold = 2^32`` is a question asked directly: ``p = 1``, ``q = 0``, ε infinite.
    """

    k: int
    threshold: int
    declared_epsilon: float

    proof = "deniable.client.mechanism"  # the module notes: ε = ln(p/q) of the realized threshold
    design = None  # k-ary randomized response, not one of .designs

    @property
    def protected(self) -> bool:
        """Whether reports are randomized (``p < 1``)."""
        return self.threshold < TWO_32

    @property
    def p(self) -> float:
        """Realized probability of reporting the true option."""
        return self.threshold / TWO_32

    @property
    def q(self) -> float:
        """Realized probability of reporting one given other option."""
        return (TWO_32 - self.threshold) / ((self.k - 1) * TWO_32)

    @property
    def epsilon(self) -> float:
        """Realized ε = ln(p / q) (never above the declared ε; infinite when asked directly)."""
        if not self.protected:
            return math.inf
        return math.log(self.threshold * (self.k - 1) / (TWO_32 - self.threshold))

    def as_dict(self) -> dict:
        return {
            "k": self.k,
            "threshold": self.threshold,
            "p": self.p,
            "q": self.q,
            "epsilon": self.epsilon,
            "declared_epsilon": self.declared_epsilon,
        }


def mechanism(k, epsilon) -> Mechanism:
    """Return the realized k-ary randomized-response parameters for ``(k, ε)``.

    Examples
    --------
    >>> m = mechanism(2, math.log(3))
    >>> m.threshold, m.p
    (3221225472, 0.75)
    """
    k = check_k(k)
    epsilon = check_epsilon(epsilon)
    threshold = threshold_for(k, epsilon)
    if threshold * k <= TWO_32:
        # p would not exceed q once rounded to 32 bits: no usable mechanism at this ε.
        raise MechanismError(
            f"epsilon {epsilon!r} is too small to realize with 32-bit thresholds for k={k}"
        )
    return Mechanism(k=k, threshold=threshold, declared_epsilon=epsilon)


def direct(k) -> Mechanism:
    """Return the "mechanism" of a question with ``k`` options asked directly: every report is kept."""
    return Mechanism(k=check_k(k), threshold=TWO_32, declared_epsilon=math.inf)


def resolve(k, epsilon) -> Mechanism:
    """Return :func:`mechanism` for a protected question, :func:`direct` when ``epsilon`` is None.

    >>> resolve(3, None).p, resolve(3, None).q
    (1.0, 0.0)
    """
    return direct(k) if epsilon is None else mechanism(k, epsilon)


def delegated(inner: str, name: str, doc: str | None = None) -> property:
    """A read-only property that is the attribute ``name`` of the field ``inner``: how a randomizer that
    wraps another (a grid's or a list's k-ary randomized response, a check-all question's bit, a design)
    answers :class:`~.randomizers.Randomizer`'s members with the wrapped one's."""
    return property(lambda self: getattr(getattr(self, inner), name),
                    doc=doc or f"The ``{name}`` of ``{inner}``.")


class ThroughRR:
    """The privacy of a mechanism whose report goes through one k-ary randomized response, its
    ``rr`` field (the list experiment's count, the grid index): protected, threshold and ε are its."""

    rr: Mechanism
    design = None

    protected = delegated("rr", "protected")
    threshold = delegated("rr", "threshold")
    epsilon = delegated("rr", "epsilon")
    declared_epsilon = delegated("rr", "declared_epsilon")
