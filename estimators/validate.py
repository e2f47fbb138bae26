"""Argument checks shared by the public estimators: one clear ValueError naming the argument."""

from __future__ import annotations

import math
import numbers

import numpy as np

def check_counts(counts, name: str = "counts", ndim: int = 1) -> np.ndarray:
    """Return ``counts`` as an int64 array of the given rank, or raise ValueError."""
    try:
        array = np.asarray(counts)
    except Exception:  # ragged nested sequences and other non-arrays
        raise ValueError(f"{name} must be a {ndim}-d array of non-negative integers") from None
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array of non-negative integers, got shape {array.shape}")
    if array.dtype == bool or array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must contain non-negative integers, got dtype {array.dtype}")
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
            raise ValueError(f"{name} must contain non-negative integers, got non-integer values")
    if np.any(array < 0):
        raise ValueError(f"{name} must contain non-negative integers, got a negative count")
    if any(size < 2 for size in array.shape):
        raise ValueError(f"{name} must have at least 2 options (k >= 2) along every axis, got shape {array.shape}")
    return array.astype(np.int64)


def check_confidence(confidence) -> float:
    """Return the confidence level as a float in (0, 1), or raise ValueError."""
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    value = float(confidence)
    if not (math.isfinite(value) and 0 < value < 1):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    return value

