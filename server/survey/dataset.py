"""The data seam: reported option indices per question, and the counts estimators need.

A :class:`Dataset` holds, for every question of a survey, one integer per row: the reported
option index (randomized for a protected question), or ``-1`` when the question was not
answered.  For the other question types the integer is the report's code (:mod:`.cells`: a grid
index, a Laplace report's steps from its least value, a multi question's bit mask, a list
experiment's arm and count), and :meth:`Dataset.stats` gives each question's sufficient
statistics.  A row is one response, or — with ``weights`` — one distinct answer pattern and how
many responses gave it (counts aggregated by a ``GROUP BY``, in this app's store or in any data
engine).  Sampling weights are something else (:mod:`deniable.estimators.weights`): a
responses file's design columns — weights, strata, clusters, population clusters — named by
:class:`DesignColumns` travel beside the rows in :attr:`Dataset.design`, one value per response.
Every source (a responses CSV or Parquet file, a counts file, the database, a
simulation) produces one; everything downstream needs only its counts (sufficient statistics,
docs/design.md), which are ``np.bincount`` (or, for few options, comparison) calls:
aggregating 10^7 reports takes about 0.01 s per question.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deniable.client.mechanism import MechanismError, check_options

from .definition import Survey

NOT_ANSWERED = -1
SMALL_K = 16  # up to this many options, counting by comparison is faster than np.bincount


@dataclass(frozen=True)
class DesignColumns:
    """The columns of a responses file that describe the sample rather than answer a question, by
    name (None: not in the design): sampling weights, strata, clusters, and the number of clusters
    of each stratum in the population (its finite-population correction)."""

    weights: str | None = None
    strata: str | None = None
    cluster: str | None = None
    fpc: str | None = None

    NUMBERS = ("weights", "fpc")  # the roles whose cells are numbers (the others are labels)

    def named(self) -> dict[str, str]:
        """``{role: column}`` for the columns given, in the order weights, strata, cluster, fpc."""
        return {role: name for role in ("weights", "strata", "cluster", "fpc")
                if (name := getattr(self, role)) is not None}


@dataclass
class Dataset:
    """Per question id, the reported option index of every row (``-1`` = not answered);
    ``weights[i]`` responses share row ``i`` (None: one response per row): frequency weights.
    ``design``: the responses file's design columns (:class:`DesignColumns`) by role, one value per
    row — sampling weights and fpc as float64, strata and cluster labels as text; None without."""

    survey: Survey
    columns: dict[str, np.ndarray]
    weights: np.ndarray | None = None
    design: dict[str, np.ndarray] | None = None

    def __post_init__(self) -> None:
        ids = [q.id for q in self.survey.questions]
        if set(self.columns) != set(ids):
            missing = sorted(set(ids) - set(self.columns))
            extra = sorted(set(self.columns) - set(ids))
            raise ValueError(f"dataset columns must be the survey's question ids "
                             f"(missing: {missing}, unknown: {extra})")
        lengths = {len(self.columns[qid]) for qid in ids}
        if self.weights is not None:
            self.weights = np.asarray(self.weights)
            if self.weights.ndim != 1 or self.weights.dtype.kind not in "iu" or (self.weights < 0).any():
                raise ValueError("weights must be a 1-D array of non-negative integer counts")
            lengths.add(len(self.weights))
        if self.design is not None:
            if self.weights is not None:
                raise ValueError("a dataset of answer patterns (frequency weights) cannot carry a sampling design")
            lengths.update(len(values) for values in self.design.values())
        if len(lengths) > 1:
            raise ValueError(f"dataset columns have different lengths: {sorted(lengths)}")
        for q in self.survey.questions:
            column = np.asarray(self.columns[q.id])
            if column.ndim != 1 or column.dtype.kind not in "iu":
                raise ValueError(f"column {q.id!r}: must be a 1-D integer array, got {column.dtype}")
            try:
                self.columns[q.id] = check_options(column, q.qtype.n_cells(q), missing=True)
            except MechanismError as exc:
                raise ValueError(f"column {q.id!r}: {exc}") from None

    @property
    def n_rows(self) -> int:
        """The number of rows (responses, or distinct patterns when weighted)."""
        if self.weights is not None:
            return len(self.weights)
        return len(next(iter(self.columns.values()))) if self.columns else 0

    @property
    def n_responses(self) -> int:
        """The number of responses the rows stand for."""
        return int(self.weights.sum()) if self.weights is not None else self.n_rows

    def counts(self, qid: str) -> np.ndarray:
        """Return the number of reports of each option of question ``qid`` (answered rows only)."""
        q = self.survey.question(qid)
        k = q.qtype.n_cells(q)
        column = self.columns[qid]
        if self.weights is not None:
            return _weighted_bincount(column.astype(np.intp) + 1, self.weights, k + 1)[1:]
        if k <= SMALL_K:
            # One vectorized comparison per option beats bincount's widening copy to intp.
            return np.array([np.count_nonzero(column == i) for i in range(k)], dtype=np.int64)
        # Shift by one so "not answered" lands in bin 0: no boolean mask, no filtered copy.
        return np.bincount(column.astype(np.intp) + 1, minlength=k + 1)[1:].astype(np.int64)

    def all_counts(self) -> dict[str, np.ndarray]:
        """Return :meth:`counts` for every question, in the survey's order."""
        return {q.id: self.counts(q.id) for q in self.survey.questions}

    def stats(self, qid: str):
        """The sufficient statistics of question ``qid`` (its type's): a categorical question's option
        counts, a dict for the other types."""
        q = self.survey.question(qid)
        if q.qtype.categorical:
            return self.counts(qid)
        return q.qtype.column_stats(q, self.columns[qid], self.weights)

    def all_stats(self) -> dict:
        """Return :meth:`stats` for every question, in the survey's order."""
        return {q.id: self.stats(q.id) for q in self.survey.questions}

    def joint_counts(self, q_row: str, q_col: str) -> np.ndarray:
        """Return the ``k_row × k_col`` table of reports, over the rows where both were answered."""
        if q_row == q_col:
            raise ValueError(f"a cross-tab needs two different questions, got {q_row!r} twice")
        row, col = self.survey.question(q_row), self.survey.question(q_col)
        k1, k2 = row.qtype.n_cells(row), col.qtype.n_cells(col)
        cell = (self.columns[q_row].astype(np.intp) + 1) * (k2 + 1) + (self.columns[q_col] + 1)
        size = (k1 + 1) * (k2 + 1)
        if self.weights is not None:
            table = _weighted_bincount(cell, self.weights, size)
        else:
            table = np.bincount(cell, minlength=size)
        return table.reshape(k1 + 1, k2 + 1)[1:, 1:].astype(np.int64)

    def counts_by(self, qid: str, by_qid: str) -> np.ndarray:
        """Return the ``g × k`` counts of ``qid`` within each option of the direct question ``by_qid``.

        Subgroups are defined by a question asked directly: grouping by a randomized report would
        put respondents in the wrong group at the mechanism's flip rate.
        """
        if self.survey.question(by_qid).protected:
            raise ValueError(f"question {by_qid!r} is protected (randomized): "
                             "subgroups need a question asked directly")
        return self.joint_counts(by_qid, qid)


def _weighted_bincount(bins: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Integer sums of ``weights`` per bin (exact: float64 sums of integer counts below 2^53)."""
    return np.rint(np.bincount(bins, weights=weights, minlength=size)).astype(np.int64)
