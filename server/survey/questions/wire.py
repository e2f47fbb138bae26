"""Wire and parsing: how a question is stored and fingerprinted, and its reports in their three forms: the :class:`Wire` mixin of the question-type protocol.

The JSON report (the API's ``reports``, the survey page's hidden field), its integer **code** (a
:class:`~..dataset.Dataset` column, −1 = not answered) and its **text cell** (CSV and Parquet), with
the checks between them; what the store keeps of a question beyond its options (:meth:`Wire.spec`),
what the design fingerprint adds (:meth:`Wire.design`), what the JSON API publishes for a client to
randomize (:meth:`Wire.api_design`), and whether a direct answer decides a later question's
``show_if`` (:meth:`Wire.answer_in`, for a type whose ``condition`` capability is None).

A type opts in by naming the mixin among its bases (``class Choice(Wire, …, QuestionType)``) and
overrides the members it changes; the defaults below are what a type that overrides nothing does.
The protocol's table of contents is :mod:`.base`'s docstring.
"""

from __future__ import annotations

import re

import numpy as np

from deniable.client.mechanism import MechanismError

from ..definition import Question
from .base import NOT_ANSWERED, NotAvailable


class Wire:
    """Wire and parsing: the defaults of the surface a type opts into (:mod:`.base`, table of contents)."""

    def answer_in(self, q: Question, code: int, options: frozenset[int]) -> bool:
        """Whether a direct answer's ``code`` is one of ``options`` (option indices): a later question's
        ``show_if`` (only for a type whose :attr:`condition` is None)."""
        raise NotAvailable(self.condition)

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

    def n_cells(self, q: Question) -> int:
        """How many codes a report of ``q`` can have (codes are 0..n_cells − 1)."""
        return q.k

    code_dtype = np.int64  # a Dataset column's dtype (the readers of files cast their codes to it)

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

    def api_design(self, q: Question) -> dict:
        """The API's entry for ``q`` beyond id, text, required and protected (``GET /api/v1/surveys/<slug>``):
        what a client needs to randomize and report.  Raise :class:`NotAvailable` with the reason when a
        type publishes none (the API says so instead of failing)."""
        raise NotAvailable(f"the API does not publish the design of a {self.label or self.name} question")
