"""Files: the columns of the SPSS, Stata and Parquet exports and the responses CSV's design line: the :class:`Files` mixin of the question-type protocol.

Each default gives a type without numbers of its own one text column of its text cells
(:meth:`~.wire.Wire.text_of`), so a type that opts in needs the :class:`~.wire.Wire` surface.

A type opts in by naming the mixin among its bases (``class Choice(Wire, …, QuestionType)``) and
overrides the members it changes; the defaults below are what a type that overrides nothing does.
The protocol's table of contents is :mod:`.base`'s docstring.
"""

from __future__ import annotations

import numpy as np

from ..definition import Question


class Files:
    """Files: the defaults of the surface a type opts into (:mod:`.base`, table of contents)."""

    def stat_columns(self, q: Question, codes: np.ndarray) -> list[tuple[str, np.ndarray, dict | None, str]]:
        """The columns of ``q`` in SPSS and Stata files: ``(suffix, values, value labels, label)``.

        ``values`` are floats with NaN for not answered (or, for a text column, strings with "" for
        not answered); a suffix is appended to the question id (``""`` for one column).  The
        default, for a type that has no numbers to give, is one text column of its text cells.
        """
        unique, inverse = np.unique(np.asarray(codes, dtype=np.int64), return_inverse=True)
        texts = np.array(["" if c < 0 else self.text_of(q, c) for c in unique.tolist()], dtype=object)
        return [("", texts[inverse.reshape(-1)], None, q.text)]

    def parquet_array(self, q: Question, codes: np.ndarray):
        """The Parquet column of ``q`` (a ``pyarrow.Array``; null = not answered).  The default: the
        text cells, dictionary-encoded (the CSV's cells, docs/design.md "Formats")."""
        import pyarrow as pa

        codes = np.asarray(codes, dtype=np.int64)
        unique, inverse = np.unique(codes, return_inverse=True)
        texts = ["" if c < 0 else self.text_of(q, c) for c in unique.tolist()]
        return pa.DictionaryArray.from_arrays(pa.array(inverse.reshape(-1).astype(np.int32), mask=codes < 0),
                                              pa.array(texts, pa.string()))

    def number_codes(self, q: Question, values: list) -> np.ndarray | None:
        """The codes of the distinct numbers of a Parquet column of numbers (−2: not a report of
        ``q``); None when this type's cells are text only (the reader then says so)."""
        return None

    def design_fields(self, q: Question) -> dict:
        """What the responses CSV's design line (and the codebook's check of it) states beyond k, ε and
        the threshold: ``{key: str or int}`` in order, None values left out."""
        return {"type": self.name}
