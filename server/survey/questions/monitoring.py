"""Monitoring, releases and the public page: headlines over time, tables within groups, released histograms: the :class:`Monitoring` mixin of the question-type protocol.

Built on :class:`~.statistics.Statistics` (:meth:`~.statistics.Statistics.estimate`,
:meth:`~.statistics.Statistics.record`) and :class:`~.presentation.Presentation` (the default
:meth:`Monitoring.summary` is the bars of :meth:`~.presentation.Presentation.chart`).

A type opts in by naming the mixin among its bases (``class Choice(Wire, …, QuestionType)``) and
overrides the members it changes; the defaults below are what a type that overrides nothing does.
The protocol's table of contents is :mod:`.base`'s docstring.
"""

from __future__ import annotations

import numpy as np

from deniable.errors import DeniableError

from ..definition import Question
from .base import NotAvailable, json_number


class Monitoring:
    """Monitoring, releases and the public page: the defaults of the surface a type opts into (:mod:`.base`, table of contents)."""

    def group_columns(self, q: Question) -> tuple[list[str], np.ndarray]:
        """The columns of a protected question's table within groups (a central-DP release, "groups"):
        their labels and the 0/1 matrix ``(n_cells × columns)`` saying which columns each report
        code counts in.  Every code counts in the same number w of columns, so moving one
        respondent to another group changes the table by 2w (its L1 sensitivity).  Raises
        :class:`NotAvailable` with the reason when the type's reports make no such table."""
        raise NotAvailable(f"estimates of a {self.label} question within groups are not released")

    def group_estimates(self, q: Question, counts: np.ndarray, noisy: np.ndarray, beta: float,
                        confidence: float) -> list[dict]:
        """The estimates within one group from its released table row (:meth:`group_columns`):
        ``counts`` made consistent, ``noisy`` as drawn with the discrete Laplace base ``beta``.
        ``[{"label", "estimate", "ci_low", "ci_high", "lower", "upper"}]``: each interval accounts for
        the noise and covers with probability ≥ ``confidence``
        (:func:`deniable.estimators.release.noisy_group_interval`); ``estimate`` None when the
        group is empty."""
        raise NotAvailable(f"estimates of a {self.label} question within groups are not released")

    def release_labels(self, q: Question) -> list[str]:
        """The categories of a directly asked question's codes (code i ↔ label i): what a released
        histogram counts, what "most common answer" chooses among, what "within each group" groups by.
        Raises :class:`NotAvailable` with the reason when its answers are not a few categories."""
        raise NotAvailable(f"{self.label} questions' answers are not categories, so they are not offered as a "
                           "released histogram, most common answer or grouping")

    def summary(self, q: Question, record: dict) -> list[dict]:
        """The headline estimates a page shows for ``q``, labelled: ``{"label", "headline", "ci_low",
        "ci_high", "lower", "upper"}`` (``lower``/``upper``: the range of the value, for a chart's axis).
        The default: the bars of :meth:`chart` (shares, in [0, 1]); NotAvailable when there are none."""
        chart = self.chart(q, record)
        if not chart:
            raise NotAvailable(f"{self.label} questions have no headline estimates to show over time or publish")
        return [{"label": label, "headline": json_number(value), "ci_low": json_number(low),
                 "ci_high": json_number(high), "lower": 0.0, "upper": 1.0}
                for label, value, low, high in zip(chart["labels"], chart["estimate"], chart["ci_low"],
                                                   chart["ci_high"])]

    anytime: bool = False  # whether :meth:`monitor_series` gives anytime-valid intervals (confidence sequences)

    def monitor_series(self, q: Question, days: list[str], cumulative: list, *, confidence: float,
                       tuned_for: int) -> dict:
        """The monitoring page's series: per day, the estimate of every :meth:`summary` headline from
        all reports up to that day (``cumulative[t]``, this type's sufficient statistics).

        ``{"anytime", "labels", "n", "epsilon", "series": [{"label", "estimate", "ci_low", "ci_high",
        "fixed_low", "fixed_high", "lower", "upper"}]}``.  The default re-estimates each day with the
        fixed-n method (:meth:`estimate`), so ``anytime`` is False: each day's interval covers with the
        stated confidence at that day's n only, and the confidence-sequence band equals the fixed-n
        interval.  A day whose reports cannot be estimated yet (say, one arm of a list experiment still
        empty) has NaN values.  NotAvailable (from :meth:`summary`) when the type shows no headlines.
        """
        nan = float("nan")
        n, rows, epsilon = [], [], None
        labels: list | None = None
        for stats in cumulative:
            n.append(self.n_of_stats(q, stats))
            try:
                record = self.record(q, self.estimate(q, stats, method="exact", confidence=confidence,
                                                     simultaneous=False))
            except (DeniableError, ArithmeticError):  # too few reports yet for this type's estimator
                rows.append(None)
                continue
            summary = self.summary(q, record)
            labels = [s["label"] for s in summary]
            epsilon = record.get("epsilon")
            rows.append(summary)
        labels = labels or []  # no day could be estimated yet: no series (the page says so)
        series = []
        for i, label in enumerate(labels):
            def values(key, i=i):
                out = []
                for row in rows:
                    value = None if row is None else row[i][key]
                    out.append(nan if value is None else float(value))
                return out

            shown = next(row[i] for row in rows if row is not None)
            low, high = values("ci_low"), values("ci_high")
            series.append({"label": label, "estimate": values("headline"), "ci_low": low, "ci_high": high,
                           "fixed_low": low, "fixed_high": high, "lower": shown["lower"], "upper": shown["upper"]})
        return {"anytime": self.anytime, "labels": list(days), "n": n, "epsilon": epsilon, "series": series}

    def stats_to_json(self, q: Question, stats):
        """The sufficient statistics as JSON (a release document's ``protected`` part): arrays as lists."""
        return {key: (value.tolist() if isinstance(value, np.ndarray) else value) for key, value in stats.items()}

    def stats_from_json(self, q: Question, data):
        """The inverse of :meth:`stats_to_json`: lists become int64 arrays."""
        return {key: (np.asarray(value, dtype=np.int64) if isinstance(value, list) else value)
                for key, value in data.items()}
