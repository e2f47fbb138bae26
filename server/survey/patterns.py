"""Answer patterns: distinct (day, reported options) rows with how many responses had each.

What ``deniable.server.store.aggregates.pattern_counts`` reads from the table the store keeps
current on every insert: ``survey``, ``days`` (one ``YYYY-MM-DD`` per pattern row), ``columns`` (question id →
the reported option index per pattern row, −1 = not answered) and ``counts`` (responses per
row).  Everything that needs more than per-option counts — regression, the daily path of the
monitoring page, released tables — reads patterns, never rows: a survey with 10⁶ responses to
a few questions has a few hundred patterns per day at most.  :func:`from_dataset` makes the same
shape from a :class:`~.dataset.Dataset` (the offline path: a responses CSV has no days).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dataset import Dataset
from .definition import Survey

NO_DAY = ""  # the day of patterns made from a CSV, which does not say when anyone answered


@dataclass
class Patterns:
    """Distinct answer patterns and their counts (see the module docstring)."""

    survey: Survey
    days: np.ndarray
    columns: dict[str, np.ndarray]
    counts: np.ndarray

    def dataset(self) -> Dataset:
        """All days together, as a weighted :class:`~.dataset.Dataset`."""
        return Dataset(self.survey, dict(self.columns), self.counts)



def n_responses(patterns: Patterns) -> int:
    """The number of responses the patterns stand for."""
    return int(np.asarray(patterns.counts).sum())


def _unique_rows(matrix: np.ndarray, radices: list[int]):
    """``np.unique(matrix, axis=0)`` with counts, through one int64 key per row when it fits."""
    if matrix.shape[1] == 0:
        return np.zeros((1 if matrix.shape[0] else 0, 0), dtype=np.int64), np.array(
            [matrix.shape[0]] if matrix.shape[0] else [], dtype=np.int64)
    if float(np.prod([float(r) for r in radices])) < 2.0**62:
        key = np.zeros(matrix.shape[0], dtype=np.int64)
        for j, radix in enumerate(radices):
            key = key * radix + (matrix[:, j] + 1)  # −1 (not answered) becomes digit 0
        unique, counts = np.unique(key, return_counts=True)
        rows = np.empty((unique.size, matrix.shape[1]), dtype=np.int64)
        for j in range(matrix.shape[1] - 1, -1, -1):
            rows[:, j] = unique % radices[j] - 1
            unique = unique // radices[j]
        return rows, counts.astype(np.int64)
    rows, counts = np.unique(matrix, axis=0, return_counts=True)
    return rows.astype(np.int64), counts.astype(np.int64)


def from_dataset(dataset: Dataset, day: str = NO_DAY) -> Patterns:
    """Aggregate a dataset's rows into patterns (all on one ``day``).

    >>> from deniable.server.survey.definition import parse_definition
    >>> survey = parse_definition({"slug": "s", "title": "S", "questions": [
    ...     {"id": "a", "text": "A?", "options": ["x", "y"]}]})
    >>> p = from_dataset(Dataset(survey, {"a": np.array([0, 1, 1, -1])}))
    >>> p.columns["a"].tolist(), p.counts.tolist()
    ([-1, 0, 1], [1, 1, 2])
    """
    survey = dataset.survey
    ids = [q.id for q in survey.questions]
    matrix = np.column_stack([dataset.columns[qid] for qid in ids]) if dataset.n_rows else \
        np.zeros((0, len(ids)), dtype=np.int64)
    rows, counts = _unique_rows(matrix, [q.qtype.n_cells(q) + 1 for q in survey.questions])  # codes 0 … n_cells − 1
    return Patterns(survey=survey, days=np.full(len(counts), day, dtype=object),
                    columns={qid: rows[:, j] for j, qid in enumerate(ids)}, counts=counts)


def collapse(patterns: Patterns, qids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the questions ``qids`` (days merged) and their counts."""
    matrix = np.column_stack([patterns.columns[qid] for qid in qids]) if qids else \
        np.zeros((len(patterns.counts), 0), dtype=np.int64)
    if not len(patterns.counts):
        return np.zeros((0, len(qids)), dtype=np.int64), np.zeros(0, dtype=np.int64)
    key_rows, inverse = _row_index(matrix)
    counts = np.bincount(inverse, weights=patterns.counts, minlength=len(key_rows)).astype(np.int64)
    keep = counts > 0
    return key_rows[keep], counts[keep]


def _row_index(matrix: np.ndarray):
    if matrix.shape[1] == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(matrix.shape[0], dtype=np.int64)
    rows, inverse = np.unique(matrix, axis=0, return_inverse=True)
    return rows.astype(np.int64), inverse.reshape(-1)


def option_counts(patterns: Patterns, qid: str) -> np.ndarray:
    """Reports of each option of ``qid`` (answered rows only)."""
    k = patterns.survey.question(qid).k
    column = patterns.columns[qid]
    answered = column >= 0
    return np.bincount(column[answered], weights=patterns.counts[answered], minlength=k).astype(np.int64)


def daily_counts(patterns: Patterns, qid: str) -> tuple[list[str], np.ndarray]:
    """Per day (sorted), the reports of each code of ``qid`` that arrived that day: ``(days, T × cells)``
    (a choice's cells are its options; other types' codes: their ``n_cells``)."""
    q = patterns.survey.question(qid)
    k = q.qtype.n_cells(q)
    column = patterns.columns[qid]
    answered = column >= 0
    days = np.asarray(patterns.days, dtype=str)
    order = sorted(set(days[answered].tolist()))
    if not order:
        return [], np.zeros((0, k), dtype=np.int64)
    index = {day: t for t, day in enumerate(order)}
    rows = np.array([index[d] for d in days[answered]], dtype=np.int64)
    table = np.zeros((len(order), k), dtype=np.int64)
    np.add.at(table, (rows, column[answered]), patterns.counts[answered])
    return order, table


def cumulative_stats(question, days, codes, counts) -> tuple[list[str], list]:
    """Per day (sorted), the sufficient statistics of ``question`` from every report up to that day.

    ``days``, ``codes`` (−1 = not answered) and ``counts`` are parallel: pattern rows
    (:class:`Patterns`) or one row per stored response.  Statistics add up, so day t's are the
    statistics of all rows of days ≤ t (its type's :meth:`histogram_stats`): O(days × rows), and
    the rows are distinct patterns, or one question's reports, never whole responses.
    """
    days = np.asarray(days, dtype=str)
    codes = np.asarray(codes, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    answered = codes >= 0
    order = sorted(set(days[answered].tolist()))
    out = []
    for day in order:
        rows = answered & (days <= day)
        out.append(question.qtype.histogram_stats(question, codes[rows], counts[rows]))
    return order, out


def pattern_cumulative_stats(patterns: Patterns, qid: str) -> tuple[list[str], list]:
    """:func:`cumulative_stats` of a question the patterns hold."""
    return cumulative_stats(patterns.survey.question(qid), patterns.days, patterns.columns[qid], patterns.counts)
