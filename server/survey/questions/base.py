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
import numbers
import re
from decimal import Decimal, InvalidOperation

import numpy as np

from deniable.client.mechanism import MechanismError
from deniable.errors import DeniableError
from deniable.estimators.result import json_number

from ..definition import DefinitionError, Question, number

NOT_ANSWERED = -1


class NotAvailable(DeniableError, ValueError):
    """A surface that a question's type does not support; the message says why, in words."""




def decimal_text(value: Decimal) -> str:
    """A Decimal in plain notation, without exponent or trailing zeros: ``12.5``, ``40``, ``-3``."""
    return format(value.normalize() if value != 0 else Decimal(0), "f")


def pct(x) -> str:
    """A share as a percent with one decimal, ``0.2914 → '29.1%'`` (``—`` when not a number): the one
    formatter of a share for terminal tables, pages and charts."""
    x = json_number(x)
    return "—" if x is None else f"{100 * x:,.1f}%"


def fmt(x, digits: int = 3) -> str:
    x = json_number(x)
    return "—" if x is None else f"{x:,.{digits}f}"


def placed_after(data: dict, key: str, **context) -> dict:
    """``data`` (a result's ``to_dict()``) with the question's ``context`` (its units, its labels)
    placed right after ``key``, where the records have always had it."""
    if key not in data:
        raise KeyError(key)
    out = {}
    for name, value in data.items():
        out[name] = value
        if name == key:
            out.update(context)
    return out


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
    ``builder_refusal`` None when the builder can edit the question, else why not (a save
                    would drop what its form cannot show)
    ``shuffles``    whether a question may say ``"shuffle": true``: its options shown in a random
                    order per respondent (the survey page's browser code draws it; nothing is sent)
    ``condition``   None when a direct question of this type can decide whether a later one is
                    shown (``show_if``, :meth:`answer_in`), else why not
    ``raking_stats`` the statistics of :meth:`cell_rows` that the store keeps per raking cell for
                    a question the answer patterns leave out (what its weighted estimates need)
    """

    name: str = ""
    label: str = ""
    keys: frozenset = frozenset()
    needed: tuple[str, ...] = ()
    crosstab: str | None = "a cross-tab needs two single-choice questions"
    regression: str | None = "a regression's outcome must be a single-choice question"
    categorical: bool = False
    builder_refusal: str | None = None
    shuffles: bool = False
    raking_stats: tuple[str, ...] = ("cell",)
    condition: str | None = ("only a single-choice or check-all question asked directly can decide whether a "
                             "later question is shown")

    def answer_in(self, q: Question, code: int, options: frozenset[int]) -> bool:
        """Whether a direct answer's ``code`` is one of ``options`` (option indices): a later question's
        ``show_if`` (only for a type whose :attr:`condition` is None)."""
        raise NotAvailable(self.condition)

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

    # ------------------------------------------------------------ monitoring, releases and the public page

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

    # ------------------------------------------------------------ examples (the docs and the battery of tests)

    def examples(self) -> list[tuple[dict, object]]:
        """Example questions of this type, each ``(definition without "id", truth-file entry)``: every
        variant a surface must handle (protected and asked directly, each mechanism).  The battery of
        tests (tests/battery) builds a survey from the examples of every registered type."""
        raise NotImplementedError

    # ------------------------------------------------------------ the survey page

    def page_data(self, q: Question) -> dict | None:
        """The ``data-`` attributes (integers only: docs/design.md, invariant 8) and display strings the
        survey page needs to draw ``q`` with its type's card; None: drawn as radio buttons.  The
        attributes hold ``data-type``: the name :attr:`script` registers its behaviour under."""
        return None

    # The survey page's card of a type drawn by its own card (page_data not None): the template of
    # its inputs (under templates/, included in the shared fieldset of survey_types.html, which says
    # "Question N of M", the note on protection and the error) and the browser module (under
    # client/static/) that registers the card's behaviour with types.js; None for the radio buttons.
    card: str | None = None
    script: str | None = None

    def coin(self, q: Question, *, gettext, locale: str) -> str:
        """What the respondent's device does to a protected answer of ``q``, in words (``gettext``
        translates; :mod:`..explain` has the number formats)."""
        raise NotImplementedError

    def explanation(self, q: Question, *, gettext, locale: str) -> dict | None:
        """How ``q``'s answer is protected, in plain words (:func:`..explain.explain_question`): the
        sentences ``coin``, ``posterior``, ``odds``, ``summary`` and the realized numbers; for a question
        asked directly :meth:`plain_explanation`.  The bounds of a protected answer follow from the
        realized ε alone (:func:`..explain.bounds_sentences`, the e^ε odds bound of ε-local differential
        privacy: Dwork & Roth 2014, §3.2)."""
        from ..explain import bounds_sentences

        if not q.protected:
            return self.plain_explanation(q, gettext=gettext)
        return {**bounds_sentences(q.mechanism.epsilon, gettext=gettext, locale=locale), "declared_epsilon": q.epsilon,
                "coin": self.coin(q, gettext=gettext, locale=locale), "protected": True}

    def plain_explanation(self, q: Question, *, gettext) -> dict | None:
        """What the page says of ``q`` asked directly beyond "not protected — sent as you answer", or None.
        A dict has ``note`` (the card's words in bold), ``coin`` (the sentence after them) and ``sent``
        (the thank-you page's "how it was sent")."""
        return None

    def api_design(self, q: Question) -> dict:
        """The API's entry for ``q`` beyond id, text, required and protected (``GET /api/v1/surveys/<slug>``):
        what a client needs to randomize and report.  Raise :class:`NotAvailable` with the reason when a
        type publishes none (the API says so instead of failing)."""
        raise NotAvailable(f"the API does not publish the design of a {self.label or self.name} question")

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

    # ------------------------------------------------------------ analysis (results, cross-tab, subgroups pages)

    def shown_rows(self, q: Question, result) -> list[dict]:
        """The rows of :meth:`csv_rows`, each with the ``headline`` a page shows for it: the type's own
        where its record has one, else the unbiased estimate kept inside its own interval
        (:func:`headline` with no range of its own: a mean or a count)."""
        rows = []
        for row in self.csv_rows(q, result):
            row = dict(row)
            if "headline" not in row:
                row["headline"] = headline(row, lower=-math.inf, upper=math.inf)
            rows.append(row)
        return rows

    def unprotected(self, q: Question) -> str:
        """What the results page says of a question that ε does not protect."""
        return "asked directly (no randomization)"

    # ------------------------------------------------------------ builder and wording

    def wording_labels(self, q: Question) -> dict:
        """Per key of :meth:`wording`: ``(what it is called, the definition key it is written under)``;
        for a list of labels the name of one label ("option"), which the forms number ("Option 2")."""
        return {"text": ("question text", "text"), "options": ("option", "options")}

    # The builder's slot fields (web/dashboard/forms.QuestionForm) this type fills, beyond the text, id,
    # protection, ε and required flag: the builder shows them for this type only.
    slot_fields: tuple[str, ...] = ("options",)
    direct_words = "directly (not protected)"  # the builder's words for "asked without ε"
    builder_hint: str | None = None  # a sentence (HTML) under ε in the builder, or None

    def builder_dict(self, raw: dict, where: tuple, protected: bool) -> dict:
        """The definition's keys of this type (beyond id, text, required and ε) from a builder slot's
        raw strings ``raw`` (``{slot field: text}``); DefinitionError at the field's path."""
        return {"options": lines(raw.get("options"))}

    def builder_entry(self, q: Question) -> dict:
        """The builder slot's fields of this type for a stored question (the inverse of
        :meth:`builder_dict`)."""
        return {"options": "\n".join(q.options)}

    def refuses_builder(self, q: Question) -> str | None:
        """Why the builder cannot edit ``q`` (a save would drop what its form cannot show), or None."""
        return self.builder_refusal

    # ------------------------------------------------------------ planning

    plan_template: str | None = None  # the builder panel's partial (a Jinja template) for :meth:`plan`'s dict
    plan_region = False  # whether the builder's panel adds the ε-DP region chart (a test of one answer)
    # What builder.js needs before it asks /dashboard/plan.json: parameters, each with its range
    # ("k:2:64"), space-separated; and the sentence the panel shows while one is missing.
    plan_needs = ""
    plan_missing = "Fill in the question to see how private and how precise it will be."
    plan_option: str | None = None  # ``deniable plan``'s option for this type (``--numeric``), with :meth:`plan_cli`
    direct_choice = "directly (not protected)"  # what the builder calls asking without ε, in its error messages

    def plan_cli(self, value, step, margin: float, epsilons, confidence: float) -> tuple[dict, list[dict], str]:
        """``deniable plan`` with :attr:`plan_option`'s ``value``: ``(JSON head, rows per ε, table)``;
        PlanInputError naming the option for a bad value."""
        raise NotAvailable(f"deniable plan does not plan {self.label} questions yet")

    def plan(self, q: Question, target_n: int, margin: float, confidence: float = 0.95) -> dict:
        """The builder's planning panel for ``q`` at ``target_n`` respondents and a wanted ``margin``:
        a dict with at least ``protected``, ``target_n`` and ``margin``, and somewhere in it ``needed``
        (the respondents the margin needs); the rest is what the type's panel template shows."""
        raise NotAvailable(f"{self.label} questions have no planning numbers yet")

    def plan_query(self, args, number) -> dict:
        """The definition of the question ``/dashboard/plan.json``'s parameters ``args`` describe
        (labels stand in for options: only their number counts); ``number(name, kind, low, high)``
        reads one checked parameter (FieldError naming it)."""
        raise NotAvailable(f"{self.label} questions have no planning numbers yet")

    # ------------------------------------------------------------ audit (deniable audit) and the codebook

    def audit_samplers(self) -> tuple:
        """The :class:`AuditSampler` of every mechanism a question of this type can have (``deniable
        audit --type`` takes their names, in registration order)."""
        return ()

    def audit_sampler(self, q: Question):
        """The sampler of ``q``'s mechanism, or None when ``q`` randomizes nothing (asked directly);
        NotAvailable, saying so, for a protected question of a type without a sampler (the audit
        lists it as not audited)."""
        samplers = self.audit_samplers()
        if not q.protected:
            return None
        if not samplers:
            raise NotAvailable(f"{self.label} questions have no sampler for deniable audit: their randomizer "
                               "is not checked")
        return samplers[0]

    def design_fields(self, q: Question) -> dict:
        """What the responses CSV's design line (and the codebook's check of it) states beyond k, ε and
        the threshold: ``{key: str or int}`` in order, None values left out."""
        return {"type": self.name}

    # ------------------------------------------------------------ regression (deniable regress, the Regression page)

    covariate: str | None = "a covariate must be a single-choice question or a number asked directly"

    def covariate_values(self, q: Question, codes: np.ndarray) -> np.ndarray:
        """The number each answer stands for as a numeric covariate of a regression (a type whose
        ``covariate`` is None and that is not categorical says; NaN for not answered)."""
        raise NotAvailable(f"{self.label} questions' answers are not numbers")


def lines(text: str | None) -> list[str]:
    """One label per line (the builder's text areas); surrounding blank lines dropped, inner blank
    lines kept (and refused by the definition's checks)."""
    out = [line.strip() for line in (text or "").replace("\r\n", "\n").split("\n")]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return out


def typed_number(raw: str | None, path: tuple, what: str) -> int | float:
    """A number typed in the builder (``1,5`` is 1.5) as the definition's int or float."""
    text = (raw or "").strip().replace(",", ".")
    if not text:
        raise DefinitionError(path, f"enter {what}")
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite() or abs(value) > Decimal(10) ** 12:
        raise DefinitionError(path, f"enter a number such as {what.split()[-1]}, not {text[:40]!r}")
    return int(value) if value == value.to_integral_value() else float(value)


class AuditSampler:
    """One mechanism's sampler for ``deniable audit`` (:mod:`deniable.server.cli.audit_settings`).

    ``name`` is the setting's kind (``--type``); ``js`` an async function run by ``page.evaluate``
    with ``[*js_args(mech, value), n]`` that imports ``/static/rr.js``, runs ``n`` reports of one
    true input and returns the report counts; :meth:`python_row` does the same with the Python
    twin.  :meth:`cells` bins the counts of every input into the events whose ratios are tight
    (:mod:`deniable.estimators.audit` says why).
    """

    name: str = ""
    js: str = ""
    not_protected: str = ""  # a mechanism that is not ε-LDP at all, in words ("a plain list experiment")

    def label(self, mech) -> str:
        raise NotImplementedError

    def inputs(self, mech) -> list[int]:
        raise NotImplementedError

    def js_args(self, mech, value: int) -> list:
        raise NotImplementedError

    def python_row(self, mech, value: int, samples: int, rng) -> np.ndarray:
        raise NotImplementedError

    def cells(self, mech, counts):
        return counts

    def protected(self, mech) -> bool:
        return True

    def k(self, mech) -> int | None:
        """The row's ``k`` in the JSON (the options of a single choice; None otherwise)."""
        return None

    def defaults(self, ks, epsilons) -> list:
        """The mechanisms of the default grid (without ``--db``), for ``--k`` options and ``--epsilon``."""
        raise NotImplementedError


def decimal_field(value, path: tuple) -> Decimal:
    """A definition's number as an exact Decimal (a float through its shortest repr)."""
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


__all__ = ["AuditSampler", "NOT_ANSWERED", "NotAvailable", "QuestionType", "decimal_field", "decimal_text", "fmt",
           "headline", "json_number", "lines", "number", "pct", "placed_after", "typed_number"]
