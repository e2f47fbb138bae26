"""Statistics: codes → sufficient statistics → the estimator's result and its record: the :class:`Statistics` mixin of the question-type protocol.

The sufficient statistics of a question from its codes (the answer patterns, the store's cell
counts), the estimate and the record every surface shows (docs/design.md, "Formats"), the CSV rows
of the estimates, what sampling weights need (linear scores, ticks, arms) and the numbers a
regression's covariate stands for.

A type opts in by naming the mixin among its bases (``class Choice(Wire, …, QuestionType)``) and
overrides the members it changes; the defaults below are what a type that overrides nothing does.
The protocol's table of contents is :mod:`.base`'s docstring.
"""

from __future__ import annotations

import numpy as np

from ..definition import Question
from .base import NotAvailable


class Statistics:
    """Statistics: the defaults of the surface a type opts into (:mod:`.base`, table of contents)."""

    raking_stats: tuple[str, ...] = ("cell",)

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

    def linear_scores(self, q: Question, codes: np.ndarray) -> np.ndarray | None:
        """Each answered report's unbiased score of the mean answer, in the question's units, when the
        type's headline is such a mean (a linear statistic, which sampling weights can weight:
        :mod:`deniable.server.survey.sampling`); None when it is not."""
        return None

    def tick_columns(self, q: Question) -> tuple[np.ndarray, float | None] | None:
        """When every option of ``q`` is ticked or not, each tick a binary randomized response of its
        own: the 0/1 matrix ``(n_cells × options)`` of each report code's ticks, and the declared ε of
        one tick (None: asked directly), so that sampling weights estimate each tick's share as a
        two-option question's (:mod:`deniable.server.survey.sampling`); None for other types."""
        return None

    def arm_scores(self, q: Question) -> tuple[np.ndarray, np.ndarray] | None:
        """When the headline of ``q`` is a difference of two random arms' mean counts (a list
        experiment): each report code's arm (0 control, 1 treatment) and its unbiased score of the
        count, so that sampling weights estimate the difference of the arms' weighted means
        (:mod:`deniable.server.survey.sampling`); None for other types."""
        return None

    def covariate_values(self, q: Question, codes: np.ndarray) -> np.ndarray:
        """The number each answer stands for as a numeric covariate of a regression (a type whose
        ``covariate`` is None and that is not categorical says; NaN for not answered)."""
        raise NotAvailable(f"{self.label} questions' answers are not numbers")
