"""How each question type's report is written: on the wire, in a cell of a file, as an integer code.

Every report has one integer **code** (a :class:`~.dataset.Dataset` column holds codes, −1 = not
answered), one JSON form (the API's ``reports`` and the database's ``reports`` column) and one
**text cell** (responses CSV and Parquet, counts files; docs/design.md, "Formats"):

================  =============================  ==================================  =====================
type              JSON report                    text cell                           code
================  =============================  ==================================  =====================
choice            option index                   the option's label                  the option index
numeric, grid     grid index j (0..G)            the grid point's value ``12.5``     j
numeric, Laplace  steps y from min (−L..m + L)   the reported value ``min + y·step``  y + L
multi             ticks ``[1, 0, 1]``            ``YNY`` (one letter per option)     bit mask (option j = bit j)
list              ``{"arm": 1, "count": 3}``     ``treatment:3`` / ``control:2``     arm · (J + 2) + count
================  =============================  ==================================  =====================

A numeric question asked directly is a grid with G = m (every answer a grid point).  The page's
hidden fields carry the same reports as text: an integer, ``101`` (ticks), ``1:3`` (arm:count).

**Sufficient statistics** (:func:`stats_from_codes`, and the store's ``cell_counts``): a choice's
option counts; a grid's counts per grid point; a Laplace question's counts per reported value; a
list experiment's counts per (arm, count); a multi question's n, ticks per option, pairwise
co-occurrence and the distribution of the number of ticks (never the bit vectors: with 20
options there are a million of them).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import numpy as np

from deniable.client.listexp import ARMS, check_list_report
from deniable.client.mechanism import MechanismError, check_option
from deniable.client.multi import check_ticks, from_mask, to_mask
from deniable.client.numeric import LaplaceMechanism, check_laplace_report

from .definition import Question

NOT_ANSWERED = -1
NUMBER_RE = re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,12})?")
TICKS_RE = re.compile(r"[YN]{1,20}")
PATTERN_MULTI_MAX = 7  # a multi question's bit vector is in the answer patterns up to this many options


def kind(q: Question) -> str:
    """``choice``, ``grid`` (numeric, randomized or direct), ``laplace``, ``multi`` or ``list``."""
    if q.type == "numeric":
        return "laplace" if q.method == "laplace" else "grid"
    return q.type


def grid_of(q: Question) -> int:
    """G of a numeric question on the grid (m when asked directly)."""
    return q.grid if q.protected else q.steps


def n_cells(q: Question) -> int:
    """How many codes a report of ``q`` can have (codes are 0..n_cells − 1)."""
    what = kind(q)
    if what == "grid":
        return grid_of(q) + 1
    if what == "laplace":
        mech = q.mechanism
        return mech.high - mech.low + 1
    if what == "multi":
        return 1 << q.k
    if what == "list":
        return 2 * q.k
    return q.k


def in_patterns(q: Question) -> bool:
    """Whether the answer patterns hold this question (everything but Laplace and large multi)."""
    what = kind(q)
    if what == "laplace":
        return False
    if what == "multi":
        return q.k <= PATTERN_MULTI_MAX
    return n_cells(q) < 65535


def decimal_text(value: Decimal) -> str:
    """A Decimal in plain notation, without exponent or trailing zeros: ``12.5``, ``40``, ``-3``."""
    text = format(value.normalize() if value != 0 else Decimal(0), "f")
    return text


# ---------------------------------------------------------------- JSON reports


def check_report(q: Question, value) -> int:
    """Validate a JSON report of ``q`` and return its code, or raise MechanismError saying why."""
    what = kind(q)
    if what == "choice":
        return check_option(value, q.k)
    if what == "grid":
        return check_option(value, grid_of(q) + 1)
    if what == "laplace":
        mech: LaplaceMechanism = q.mechanism
        return check_laplace_report(value, mech) - mech.low
    if what == "multi":
        return to_mask(check_ticks(value, q.k))
    arm, count = check_list_report(value, q.mechanism)
    return arm * q.k + count


def invalid_codes(q: Question, column: np.ndarray) -> np.ndarray:
    """Which codes in range are still not a possible report (a plain list experiment's control
    arm cannot count J + 1)."""
    column = np.asarray(column)
    if kind(q) == "list" and not q.protected:
        return column == q.k - 1  # arm 0, count J + 1
    return np.zeros(column.shape, dtype=bool)


def report_of(q: Question, code: int):
    """The JSON report of a code (the inverse of :func:`check_report`)."""
    what = kind(q)
    if what == "laplace":
        return int(code) + q.mechanism.low
    if what == "multi":
        return from_mask(int(code), q.k)
    if what == "list":
        arm, count = divmod(int(code), q.k)
        return {"arm": arm, "count": count}
    return int(code)


def parse_form(q: Question, text: str):
    """The JSON report of a survey page's hidden field (``12``, ``-3``, ``101``, ``1:3``), unchecked.

    Raises MechanismError for text that is not in the field's format.
    """
    what = kind(q)
    if what == "multi":
        if not re.fullmatch(r"[01]{1,20}", text):
            raise MechanismError(f"must be {q.k} ticks written as 0s and 1s, got {text[:30]!r}")
        return [int(c) for c in text]
    if what == "list":
        match = re.fullmatch(r"([01]):([0-9]{1,3})", text)
        if not match:
            raise MechanismError(f"must be ARM:COUNT (arm 0 or 1), got {text[:30]!r}")
        return {"arm": int(match.group(1)), "count": int(match.group(2))}
    if not re.fullmatch(r"-?[0-9]{1,9}", text):
        raise MechanismError(f"must be an integer report, got {text[:30]!r}")
    return int(text)


def form_text(q: Question, report) -> str:
    """The hidden field's text for a JSON report (the inverse of :func:`parse_form`)."""
    what = kind(q)
    if what == "multi":
        return "".join(str(b) for b in report)
    if what == "list":
        return f"{report['arm']}:{report['count']}"
    return str(report)


# ---------------------------------------------------------------- text cells


def text_of(q: Question, code: int) -> str:
    """The text cell of a code (labels raw: the CSV writer neutralizes formula-like labels)."""
    what = kind(q)
    code = int(code)
    if what == "choice":
        return q.options[code]
    if what == "grid":
        return decimal_text(q.value(code * (q.steps // grid_of(q))))
    if what == "laplace":
        return decimal_text(q.value(code + q.mechanism.low))
    if what == "multi":
        return "".join("Y" if bit else "N" for bit in from_mask(code, q.k))
    arm, count = divmod(code, q.k)
    return f"{ARMS[arm]}:{count}"


def code_of(q: Question, text: str) -> int | None:
    """The code of a text cell, or None when it is not a valid cell of ``q`` ("" is not answered:
    the readers map it before asking)."""
    what = kind(q)
    if what == "choice":
        try:
            return q.options.index(text)
        except ValueError:
            return None
    if what in ("grid", "laplace"):
        if not NUMBER_RE.fullmatch(text):
            return None
        try:
            steps = (Decimal(text) - q.minimum) / q.step
        except InvalidOperation:
            return None
        if steps != steps.to_integral_value():
            return None
        steps = int(steps)
        if what == "grid":
            d = q.steps // grid_of(q)
            if steps % d or not 0 <= steps // d <= grid_of(q):
                return None
            return steps // d
        mech = q.mechanism
        return steps - mech.low if mech.low <= steps <= mech.high else None
    if what == "multi":
        if len(text) != q.k or not TICKS_RE.fullmatch(text):
            return None
        return to_mask([c == "Y" for c in text])
    arm_text, _, count_text = text.partition(":")
    if arm_text not in ARMS or not count_text.isdigit() or len(count_text) > 3:
        return None
    try:
        return check_report(q, {"arm": ARMS.index(arm_text), "count": int(count_text)})
    except MechanismError:
        return None


def codes_of(q: Question, texts) -> np.ndarray:
    """Codes of many distinct text cells (a column's dictionary); −2 marks an unknown cell."""
    out = np.empty(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        if text is None or text == "":
            out[i] = NOT_ANSWERED
        else:
            code = code_of(q, text)
            out[i] = -2 if code is None else code
    return out


def expected(q: Question) -> str:
    """What a cell of ``q`` may hold, for error messages."""
    what = kind(q)
    if what == "choice":
        return "one of: " + ", ".join(q.options)
    if what == "grid":
        points = [text_of(q, j) for j in range(grid_of(q) + 1)]
        shown = ", ".join(points[:8]) + (", …" if len(points) > 8 else "")
        return f"a grid value ({shown})"
    if what == "laplace":
        mech = q.mechanism
        return (f"a value from {text_of(q, 0)} to {text_of(q, mech.high - mech.low)} "
                f"in steps of {decimal_text(q.step)}")
    if what == "multi":
        return f"{q.k} letters Y or N (one per option: {', '.join(q.options)})"
    return f"control:COUNT or treatment:COUNT (COUNT 0..{q.k - 1})"


# ---------------------------------------------------------------- sufficient statistics


def multi_stats_from_masks(k: int, masks: np.ndarray, weights: np.ndarray) -> dict:
    """n, ticks per option, pairwise co-occurrence and the number-ticked histogram of bit masks."""
    masks = np.asarray(masks, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(k)) & 1).astype(np.int64)  # rows × k
    weighted = bits * weights[:, None]
    ticks = weighted.sum(axis=0)
    pairs = np.triu(weighted.T @ bits, 1)
    ticked = np.bincount(bits.sum(axis=1), weights=weights, minlength=k + 1).round().astype(np.int64)
    return {"n": int(weights.sum()), "ticks": ticks, "pairs": pairs, "ticked": ticked}


def stats_from_histogram(q: Question, codes: np.ndarray, counts: np.ndarray) -> dict | np.ndarray:
    """The sufficient statistics of ``q`` from distinct codes and their counts.

    A choice question's are its option counts (an array, as everywhere else); the other types'
    a dict: ``{"counts"}`` (grid), ``{"values", "counts"}`` (Laplace, values in steps from min),
    ``{"control", "treatment"}`` (list) or ``{"n", "ticks", "pairs", "ticked"}`` (multi).
    """
    codes = np.asarray(codes, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    keep = codes >= 0
    codes, counts = codes[keep], counts[keep]
    what = kind(q)
    if what == "multi":
        return multi_stats_from_masks(q.k, codes, counts)
    if what == "laplace":
        order = np.argsort(codes)
        return {"values": codes[order] + q.mechanism.low, "counts": counts[order]}
    dense = np.bincount(codes, weights=counts, minlength=n_cells(q)).round().astype(np.int64)
    if what == "choice":
        return dense
    if what == "grid":
        return {"counts": dense}
    return {"control": dense[:q.k], "treatment": dense[q.k:]}


def stats_from_codes(q: Question, column: np.ndarray, weights: np.ndarray | None = None):
    """The sufficient statistics of ``q`` from a column of codes (−1 = not answered), optionally weighted."""
    column = np.asarray(column, dtype=np.int64)
    answered = column >= 0
    weights = np.ones(column.size, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    codes, inverse = np.unique(column[answered], return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=weights[answered], minlength=codes.size).round().astype(np.int64)
    return stats_from_histogram(q, codes, counts)


def empty_stats(q: Question):
    """The statistics of no reports."""
    return stats_from_histogram(q, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def n_answered(q: Question, stats) -> int:
    """How many reports the statistics stand for."""
    what = kind(q)
    if what == "choice":
        return int(np.sum(stats))
    if what == "multi":
        return int(stats["n"])
    if what == "list":
        return int(stats["control"].sum() + stats["treatment"].sum())
    return int(np.sum(stats["counts"]))
