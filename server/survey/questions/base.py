"""The question-type protocol: everything that differs between question types, in one class per type.

Every surface — definitions, the submission path, files, estimates, the dashboard, exports, the
command line — asks a question's type (``question.qtype``, a :class:`QuestionType`) instead of
comparing type names.  A type module (:mod:`.choice`, :mod:`.numeric`, :mod:`.multi`,
:mod:`.listexp`) subclasses :class:`QuestionType`, fills in what its questions do, and registers
one instance (:func:`.registry.register`).  What a type does not support it says with a reason in
words (:attr:`QuestionType.crosstab`, :attr:`QuestionType.regression`): the surfaces show that
reason ("not available for this type") instead of failing.

Reports have one integer **code** per type (a :class:`~..dataset.Dataset` column holds codes,
−1 = not answered), one JSON form (the API's ``reports``) and one **text cell** (CSV and Parquet);
each type's module documents its three forms.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np

from ..definition import DefinitionError, Question, number

NOT_ANSWERED = -1


class NotAvailable(ValueError):
    """A surface that a question's type does not support; the message says why, in words."""


def json_number(value):
    """A JSON-safe number: a Python float or int, or None when not finite (or None)."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None


def decimal_text(value: Decimal) -> str:
    """A Decimal in plain notation, without exponent or trailing zeros: ``12.5``, ``40``, ``-3``."""
    return format(value.normalize() if value != 0 else Decimal(0), "f")


def pct(x) -> str:
    """A share as a percent for terminal tables (``—`` when not finite)."""
    x = json_number(x)
    return "—" if x is None else f"{100 * x:.1f}%"


def fmt(x, digits: int = 3) -> str:
    x = json_number(x)
    return "—" if x is None else f"{x:,.{digits}f}"


def mean_json(mean, scale: float = 1.0, offset: float = 0.0) -> dict:
    """A :class:`~deniable.estimators.numeric.MeanResult` as JSON, in the question's units."""
    def units(x):
        x = json_number(x)
        return None if x is None else offset + scale * x

    return {"n": mean.n, "estimate": units(mean.estimate), "std_error": json_number(mean.std_error * scale),
            "ci_low": units(mean.ci_low), "ci_high": units(mean.ci_high), "method": mean.method,
            "confidence": mean.confidence, "clt_half_width": json_number(mean.clt_half_width * scale),
            "width_ratio": json_number(mean.width_ratio)}


def headline(record: dict, low_key: str = "ci_low", high_key: str = "ci_high", *, lower: float = 0.0,
             upper: float = 1.0):
    """The number a page shows for one estimate: one that lies inside its own interval and the range.

    The unbiased estimate (``record["estimate"]``) while it lies in ``[ci_low, ci_high]`` and in
    ``[lower, upper]``; otherwise the consistent one (``record["consistent"]``, when the record has
    it) and, should that too fall outside, the nearest end of the interval (the point of the
    interval closest to the unbiased estimate, which is the maximum-likelihood point of the range
    the data do not reject).  The unbiased estimate stays in the record, labelled, for files and
    the API.
    """
    estimate = json_number(record.get("estimate"))
    low, high = json_number(record.get(low_key)), json_number(record.get(high_key))
    low = lower if low is None else max(low, lower)
    high = upper if high is None else min(high, upper)
    if estimate is None:
        return None
    if low <= estimate <= high:
        return estimate
    consistent = json_number(record.get("consistent"))
    if consistent is not None and low <= consistent <= high:
        return consistent
    return min(max(estimate, low), high) if low <= high else estimate


class QuestionType:
    """One question type.  Instances are stateless; every method takes the question it is about.

    Class attributes a type sets:

    ``name``        the definition's ``"type"``
    ``label``       the type in words, for people ("check all that apply")
    ``keys``        the definition keys a question of this type may have
    ``needed``      the keys it must have (beyond ``id`` and ``text``)
    ``crosstab``    None when two questions of this kind can be cross-tabulated, else why not
    ``regression``  None when it can be a regression's outcome, else why not
    ``categorical`` whether its codes are its options (a choice): what grouping and the
                    central releases of direct answers need
    """

    name: str = ""
    label: str = ""
    keys: frozenset = frozenset()
    needed: tuple[str, ...] = ()
    crosstab: str | None = "a cross-tab needs two single-choice questions"
    regression: str | None = "a regression's outcome must be a single-choice question"
    categorical: bool = False

    # ------------------------------------------------------------ definition

    def parse(self, data: dict, where: tuple, epsilon) -> dict:
        """The type's fields of a :class:`Question` (``options``, ``epsilon`` parsed, …) from ``data``."""
        raise NotImplementedError

    def to_dict(self, q: Question) -> dict:
        """The type's keys of the definition (``type`` and everything beyond id, text, required)."""
        raise NotImplementedError

    def k(self, q: Question) -> int:
        """The number of possible answers the estimators see (options, grid answers, counts)."""
        return len(q.options)

    def mechanism(self, q: Question):
        """The realized randomization of ``q`` (for a question asked directly, with p = 1)."""
        raise NotImplementedError

    def spec(self, q: Question) -> dict | None:
        """The type's own fields as the store keeps them (``questions.spec``, JSON); None: nothing beyond
        options."""
        return None

    def from_spec(self, spec: dict) -> dict:
        """The :class:`Question` fields of a stored ``spec`` (the inverse of :meth:`spec`)."""
        return {}

    def design(self, q: Question) -> tuple:
        """What the design fingerprint adds beyond id, k, ε, threshold and required."""
        return (self.name,)

    # ------------------------------------------------------------ reports: JSON, codes, text cells

    def n_cells(self, q: Question) -> int:
        """How many codes a report of ``q`` can have (codes are 0..n_cells − 1)."""
        return q.k

    code_dtype = np.int32  # a Dataset column's dtype
    structured_report = False  # a JSON report that is not one integer (the store decodes it as text)

    def report_offset(self, q: Question) -> int:
        """``report − code`` of an integer report (0 but for reports that can be negative)."""
        return 0

    def stored_design(self, q: Question) -> list:
        """The mechanism a report is made under, as integers, stored beside each report."""
        raise NotImplementedError

    def in_patterns(self, q: Question) -> bool:
        """Whether the answer patterns (the store's aggregate) hold this question."""
        return self.n_cells(q) < 65535

    def check_report(self, q: Question, value) -> int:
        """Validate a JSON report and return its code, or raise MechanismError saying why."""
        raise NotImplementedError

    def invalid_codes(self, q: Question, column: np.ndarray) -> np.ndarray:
        """Which codes in range are still not a possible report."""
        return np.zeros(np.asarray(column).shape, dtype=bool)

    def report_of(self, q: Question, code: int):
        """The JSON report of a code (the inverse of :meth:`check_report`)."""
        return int(code)

    def parse_form(self, q: Question, text: str):
        """The JSON report of the survey page's hidden field, unchecked (MechanismError if malformed)."""
        import re

        from deniable.client.mechanism import MechanismError

        if not re.fullmatch(r"-?[0-9]{1,9}", text):
            raise MechanismError(f"must be an integer report, got {text[:30]!r}")
        return int(text)

    def text_of(self, q: Question, code: int) -> str:
        """The text cell of a code (labels raw: the CSV writer neutralizes formula-like labels)."""
        raise NotImplementedError

    def code_of(self, q: Question, text: str) -> int | None:
        """The code of a text cell, or None when it is not a valid cell of ``q``."""
        raise NotImplementedError

    def expected(self, q: Question) -> str:
        """What a cell of ``q`` may hold, for error messages."""
        raise NotImplementedError

    # ------------------------------------------------------------ sufficient statistics

    def histogram_stats(self, q: Question, codes, counts):
        """The sufficient statistics of ``q`` from distinct codes and their counts (codes < 0, not
        answered, are left out): a choice's option counts (an array), the other types' a dict."""
        codes = np.asarray(codes, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        keep = codes >= 0
        return self.stats(q, codes[keep], counts[keep])

    def column_stats(self, q: Question, column, weights=None):
        """The sufficient statistics of ``q`` from a column of codes (−1 = not answered), optionally weighted."""
        column = np.asarray(column, dtype=np.int64)
        answered = column >= 0
        weights = np.ones(column.size, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
        codes, inverse = np.unique(column[answered], return_inverse=True)
        counts = np.bincount(inverse.reshape(-1), weights=weights[answered],
                             minlength=codes.size).round().astype(np.int64)
        return self.stats(q, codes, counts)

    def codes_of(self, q: Question, texts) -> np.ndarray:
        """Codes of many distinct text cells (a column's dictionary); −2 marks an unknown cell."""
        out = np.empty(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            if text is None or text == "":
                out[i] = NOT_ANSWERED
            else:
                code = self.code_of(q, text)
                out[i] = -2 if code is None else code
        return out

    def stats(self, q: Question, codes: np.ndarray, counts: np.ndarray):
        """The sufficient statistics of ``q`` from distinct codes (≥ 0) and their counts."""
        return {"counts": self.dense(q, codes, counts)}

    def dense(self, q: Question, codes, counts) -> np.ndarray:
        return np.bincount(np.asarray(codes, dtype=np.int64), weights=np.asarray(counts, dtype=np.int64),
                           minlength=self.n_cells(q)).round().astype(np.int64)

    def cell_rows(self, q: Question, stats) -> list[tuple[str, int, int]]:
        """``(stat, cell, count)`` rows of the store's ``cell_counts`` for statistics (the inverse of
        :meth:`stats_from_cells`)."""
        return [("cell", i, int(c)) for i, c in enumerate(stats["counts"]) if c]

    def stats_from_cells(self, q: Question, found: dict):
        """The statistics from the store's ``cell_counts`` rows, ``{stat: [(cell, count), ...]}``."""
        pairs = found.get("cell", [])
        return self.histogram_stats(q, [c for c, _ in pairs], [n for _, n in pairs])

    def n_of_stats(self, q: Question, stats) -> int:
        """How many reports the statistics stand for."""
        return int(np.sum(stats["counts"]))

    # ------------------------------------------------------------ estimates

    def estimate(self, q: Question, stats, *, method: str, confidence: float, simultaneous: bool,
                 monitoring: bool = False, tuned_for: int = 10_000):
        """The estimator's result for ``q`` from its sufficient statistics."""
        raise NotImplementedError

    def record(self, q: Question, result) -> dict:
        """The estimates record of ``q`` (docs/design.md, "Formats"): the JSON every surface shows."""
        raise NotImplementedError

    def n_of(self, result) -> int:
        return int(result.n)

    def csv_rows(self, q: Question, result):
        """Rows (dicts of :data:`..estimates.CSV_COLUMNS`) of the estimates CSV."""
        raise NotImplementedError

    def table(self, q: Question, result, grid) -> list[str]:
        """The lines of a terminal block after the question's title (``grid`` aligns columns)."""
        raise NotImplementedError

    def headlines(self, q: Question, record: dict):
        """Every ``(headline, low, high)`` a page shows from a record: the property test checks that each
        headline lies in its interval."""
        raise NotImplementedError

    def chart(self, q: Question, record: dict) -> dict | None:
        """The estimate bars of the results page: ``{"labels", "estimate", "ci_low", "ci_high"}`` or None."""
        return None

    # ------------------------------------------------------------ exports (SPSS, Stata, Parquet)

    def stat_columns(self, q: Question, codes: np.ndarray) -> list[tuple[str, np.ndarray, dict | None, str]]:
        """The columns of ``q`` in SPSS and Stata files: ``(suffix, values, value labels, label)``.

        ``values`` are floats with NaN for not answered; a suffix is appended to the question id
        (``""`` for one column).
        """
        raise NotImplementedError

    # ------------------------------------------------------------ examples (the docs and the battery of tests)

    def examples(self) -> list[tuple[dict, object]]:
        """Example questions of this type, each ``(definition without "id", truth-file entry)``: every
        variant a surface must handle (protected and asked directly, each mechanism).  The battery of
        tests (tests/battery) builds a survey from the examples of every registered type."""
        raise NotImplementedError

    # ------------------------------------------------------------ the survey page

    def page_data(self, q: Question) -> dict | None:
        """The ``data-`` attributes (integers only: docs/design.md, invariant 8) and display strings the
        survey page needs to draw ``q`` with its type's card; None: drawn as radio buttons."""
        return None

    # ------------------------------------------------------------ simulation

    def truth(self, q: Question, value, where: str):
        """Parse a truth file's entry for ``q`` (raise ValueError with the problem)."""
        raise NotImplementedError

    def simulate(self, q: Question, truth, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` reports (codes) of ``q`` whose true answers follow ``truth``, through the real randomizer."""
        raise NotImplementedError

    # ------------------------------------------------------------ wording

    def wording(self, q: Question) -> dict:
        """The texts of ``q`` a launched survey may reword: ``{key: str or list of str}``."""
        return {"text": q.text, "options": list(q.options)}

    def reworded(self, q: Question, texts: dict) -> dict:
        """The :class:`Question` fields for reworded ``texts`` (same number of labels: checked by caller)."""
        return {"text": texts["text"], "options": tuple(texts["options"])}


def decimal_field(value, path: tuple) -> Decimal:
    """A definition's number as an exact Decimal (a float through its shortest repr)."""
    import numbers
    from decimal import InvalidOperation

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DefinitionError(path, f"must be a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise DefinitionError(path, "must be a finite number")
    try:
        out = Decimal(repr(value)) if isinstance(value, float) else Decimal(int(value))
    except (InvalidOperation, ValueError, OverflowError):
        raise DefinitionError(path, f"must be a number, got {value!r}"[:100]) from None
    if abs(out) > Decimal(10) ** 12 or out.as_tuple().exponent < -6:
        raise DefinitionError(path, "must be at most 10^12 in size, with at most 6 decimal places")
    return out.normalize() if out != 0 else Decimal(0)


__all__ = ["NOT_ANSWERED", "NotAvailable", "QuestionType", "decimal_field", "decimal_text", "fmt", "headline", "json_number",
           "mean_json", "number", "pct"]
