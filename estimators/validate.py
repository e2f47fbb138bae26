"""Argument checks shared by the public estimators: one clear :class:`~deniable.errors.FieldError`
(a ValueError) naming the argument in its message and its ``field``."""

from __future__ import annotations

import math
import numbers

import numpy as np

from deniable.errors import FieldError

# Counts are summed and divided in float64, which holds every integer up to 2^53 and not beyond:
# a larger total would be estimated from rounded numbers (or overflow int64 at 2^63), so it is refused.
MAX_TOTAL = 2**53


def exact_total(counts) -> int:
    """The sum of non-negative integer ``counts`` as a Python int, exactly and without overflow.

    >>> exact_total(np.array([2**62, 2**62, 5], dtype=np.int64))
    9223372036854775813
    """
    array = np.asarray(counts).reshape(-1)
    if array.dtype.kind == "f":
        return int(math.fsum(array))  # whole finite floats: exact up to 2^53, correctly rounded beyond
    array = array.astype(np.uint64)  # the 32-bit halves sum in uint64 without overflow below 2^32 values
    high = int((array >> np.uint64(32)).sum(dtype=np.uint64))
    low = int((array & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))
    return (high << 32) + low


def check_total(counts, name: str = "counts") -> int:
    """Return the exact total of ``counts``, or raise FieldError if it is beyond :data:`MAX_TOTAL`."""
    total = exact_total(counts)
    if total > MAX_TOTAL:
        raise FieldError(f"{name} add up to {total:,}, more than 2^53 = {MAX_TOTAL:,}, the most that float64 "
                         "counts exactly", name)
    return total


def check_counts(counts, name: str = "counts", ndim: int = 1) -> np.ndarray:
    """Return ``counts`` as an int64 array of the given rank, or raise FieldError naming ``name``."""
    try:
        array = np.asarray(counts)
    except Exception:  # ragged nested sequences and other non-arrays
        raise FieldError(f"{name} must be a {ndim}-d array of non-negative integers", name) from None
    if array.ndim != ndim:
        raise FieldError(f"{name} must be a {ndim}-d array of non-negative integers, got shape {array.shape}", name)
    if array.dtype == bool or array.dtype.kind not in "iuf":
        raise FieldError(f"{name} must contain non-negative integers, got dtype {array.dtype}", name)
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
            raise FieldError(f"{name} must contain non-negative integers, got non-integer values", name)
    if np.any(array < 0):
        raise FieldError(f"{name} must contain non-negative integers, got a negative count", name)
    if any(size < 2 for size in array.shape):
        raise FieldError(f"{name} must have at least 2 options (k >= 2) along every axis, got shape {array.shape}", name)
    check_total(array, name)
    return array.astype(np.int64)


def check_confidence(confidence) -> float:
    """Return the confidence level as a float in (0, 1), or raise FieldError."""
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise FieldError(f"confidence must be a number in (0, 1), got {confidence!r}", "confidence")
    value = float(confidence)
    if not (math.isfinite(value) and 0 < value < 1):
        raise FieldError(f"confidence must be a number in (0, 1), got {confidence!r}", "confidence")
    return value

