"""The question-type protocol: everything that differs between question types, in one class per type.

Every surface — definitions, the submission path, files, estimates, the dashboard, exports, the
command line — asks a question's type (``question.qtype``) instead of comparing type names.  A type
module (``choice``, ``numeric``, ``multi``, ``listexp`` of this package) defines one class that
derives from the small core, :class:`QuestionType`, and opts into the surfaces it has by naming their
mixins, each in its own module holding that surface's defaults::

    class Choice(Wire, Files, Statistics, Monitoring, Presentation, Builder, Audit, QuestionType): ...

and registers one instance (:func:`.registry.register`).  A type's author reads the core and the
surfaces the type changes.  What a type supports is one value, its :class:`Capabilities`: each thing it
does not support (a cross-tab, a regression's outcome, the builder, a whole surface) with a reason in
words, which the surfaces show ("not available for this type") instead of failing; a member of a
surface the type refuses raises :class:`NotAvailable` with that reason.
:func:`deniable.testing.check_question_type` checks a type against the protocol.

Table of contents (the surfaces as data: :data:`.surfaces.SURFACES`; tests/unit/test_question_type_protocol.py
keeps this table true):

============  ===================================  =================================================
surface       mixin                                members
============  ===================================  =================================================
core          :class:`QuestionType`                name, label, keys, needed, capabilities
                                                   (:class:`Capabilities`: crosstab, regression,
                                                   covariate, condition, builder, categorical,
                                                   shuffles, refused; the flags also read as
                                                   attributes), parse, to_dict, k, mechanism,
                                                   examples, regression_fit
wire          :class:`.wire.Wire`                  answer_in, spec, from_spec, design, n_cells,
                                                   code_dtype, structured_report, report_offset,
                                                   stored_design, in_patterns, check_report,
                                                   invalid_codes, report_of, parse_form, text_of,
                                                   code_of, expected, codes_of, api_design
files         :class:`.exports.Files`              stat_columns, parquet_array, number_codes,
                                                   design_fields
statistics    :class:`.statistics.Statistics`      raking_stats, histogram_stats, column_stats,
                                                   stats, dense, cell_rows, stats_from_cells,
                                                   n_of_stats, estimate, record, n_of, csv_rows,
                                                   linear_scores, tick_columns, arm_scores,
                                                   covariate_values
monitoring    :class:`.monitoring.Monitoring`      group_columns, group_estimates, release_labels,
                                                   summary, anytime, monitor_series, stats_to_json,
                                                   stats_from_json
presentation  :class:`.presentation.Presentation`  table, headlines, chart, shown_rows, unprotected,
                                                   page_data, card, script, coin, explanation,
                                                   plain_explanation, card_words, report_words
builder       :class:`.builder.Builder`            wording, reworded, wording_labels, slot_fields,
                                                   direct_words, builder_hint, builder_dict,
                                                   builder_entry, refuses_builder, plan_template,
                                                   plan_region, plan_needs, plan_missing,
                                                   plan_option, direct_choice, plan_cli, plan,
                                                   plan_query
audit         :class:`.audit.Audit`                audit_samplers, audit_sampler, truth, simulate
============  ===================================  =================================================

The defaults of one surface call members of the surfaces it builds on (``needs`` in
:data:`.surfaces.SURFACES`: files and statistics build on wire, presentation on statistics,
monitoring on statistics and presentation).

Reports have one integer **code** per type (a :class:`~..dataset.Dataset` column holds codes,
−1 = not answered), one JSON form (the API's ``reports``) and one **text cell** (CSV and Parquet);
each type's module documents its three forms.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

import numpy as np

from deniable.errors import DeniableError, sent
from deniable.estimators.result import json_number

from ..definition import DefinitionError, Question, number
from ..parsing import parsed

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


_CAPABILITY_FLAGS = ("crosstab", "regression", "covariate", "condition", "categorical", "shuffles")


@dataclass(frozen=True)
class Capabilities:
    """What a question type supports, as one value: where it supports a capability, None (or True for
    the two flags); where it does not, the reason in words, which the surfaces show ("not available
    for this type") instead of failing.

    Attributes
    ----------
    crosstab : str or None
        None when two questions of this kind can be cross-tabulated, else why not.
    regression : str or None
        None when it can be a regression's outcome, else why not.
    covariate : str or None
        None when its answers can be a regression's covariate, else why not
        (:meth:`~.statistics.Statistics.covariate_values`).
    condition : str or None
        None when a direct question of this type can decide whether a later one is shown
        (``show_if``, :meth:`~.wire.Wire.answer_in`), else why not.
    builder : str or None
        None when the builder can edit the question, else why not (a save would drop what its form
        cannot show; :meth:`~.builder.Builder.refuses_builder`).
    categorical : bool
        Whether its codes are its options (a choice): what grouping and the central releases of
        direct answers need.
    shuffles : bool
        Whether a question may say ``"shuffle": true``: its options shown in a random order per
        respondent (the survey page's browser code draws it; nothing is sent).
    refused : mapping
        The surfaces (:data:`.surfaces.SURFACES`, by name) the type does not opt into, each with the
        reason: a member of such a surface raises :class:`NotAvailable` saying it.
    """

    crosstab: str | None = "a cross-tab needs two single-choice questions"
    regression: str | None = "a regression's outcome must be a single-choice question"
    covariate: str | None = "a covariate must be a single-choice question or a number asked directly"
    condition: str | None = ("only a single-choice or check-all question asked directly can decide whether a "
                             "later question is shown")
    builder: str | None = None
    categorical: bool = False
    shuffles: bool = False
    refused: Mapping[str, str] = field(default_factory=dict)

    def refusal(self, surface: str) -> str | None:
        """Why the type does not have ``surface`` (a name of :data:`.surfaces.SURFACES`), or None."""
        return self.refused.get(surface)


def _capability(flag: str) -> property:
    """The core's attribute ``flag``: the type's :class:`Capabilities` value of it (what every surface reads)."""
    return property(lambda self: getattr(self.capabilities, flag),
                    doc=f"The type's ``capabilities.{flag}`` (:class:`Capabilities`).")


class QuestionType:
    """The core of one question type: what every type has.  Instances are stateless; every method takes
    the question it is about.

    A type sets ``name`` (the definition's ``"type"``), ``label`` (the type in words, for people:
    "check all that apply"), ``keys`` (the definition keys a question of this type may have) and
    ``needed`` (the keys it must have beyond ``id`` and ``text``); ``capabilities``, what it supports
    (:class:`Capabilities`; its flags are read as attributes too, ``qtype.crosstab``); and the five
    methods below.  Everything else is a surface's, in the mixin the type opts into (the table of
    contents is this module's docstring); a member of a surface the type refuses raises
    :class:`NotAvailable` with the reason its capabilities give.  (A type that does neither gets the
    surface's defaults, as every type did before the protocol was split by surface;
    :func:`deniable.testing.check_question_type` refuses it until it chooses.)
    """

    name: str = ""
    label: str = ""
    keys: frozenset = frozenset()
    needed: tuple[str, ...] = ()
    capabilities: Capabilities = Capabilities()

    crosstab = _capability("crosstab")
    regression = _capability("regression")
    covariate = _capability("covariate")
    condition = _capability("condition")
    categorical = _capability("categorical")
    shuffles = _capability("shuffles")

    def __init_subclass__(cls, **kwargs):
        # A flag set the way types set them before capabilities were one value (``crosstab = None``, or
        # ``builder_refusal = "…"``) is folded into the class's capabilities, so the two never disagree.
        super().__init_subclass__(**kwargs)
        changes = {}
        for attr, flag in (*((f, f) for f in _CAPABILITY_FLAGS), ("builder_refusal", "builder")):
            value = vars(cls).get(attr)
            if attr in vars(cls) and not isinstance(value, property):
                changes[flag] = value
                delattr(cls, attr)
        if changes:
            cls.capabilities = dataclasses.replace(cls.capabilities, **changes)

    def __getattr__(self, attr: str):
        # Reached only for a member that no class of the type defines: one of a surface it does not opt into.
        # A refused surface says why; a type that neither opts in nor refuses (one written before the
        # protocol was split, deriving from QuestionType alone) gets the surface's default, as it always
        # did, and deniable.testing.check_question_type asks it to choose.
        if not attr.startswith("_"):
            from .surfaces import surface_of

            surface = surface_of(attr)
            if surface is not None:
                reason = self.capabilities.refusal(surface.name)
                if reason:
                    raise NotAvailable(reason)
                default = vars(surface.mixin)[attr]
                return default.__get__(self, type(self)) if hasattr(default, "__get__") else default
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

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

    def examples(self) -> list[tuple[dict, object]]:
        """Example questions of this type, each ``(definition without "id", truth-file entry)``: every
        variant a surface must handle (protected and asked directly, each mechanism).  The battery of
        tests (tests/battery) builds a survey from the examples of every registered type, and
        :func:`deniable.testing.check_question_type` checks the type on each."""
        raise NotImplementedError

    def regression_fit(self, q: Question, design, *, reference: int | None, confidence: float, profile: bool):
        """A regression with ``q`` as its outcome, fitted the type's own way, or None (the default): the shared
        logit of the reports (:func:`deniable.estimators.regress`, what a single-choice outcome has).

        ``design`` is the formula's :class:`~..regression.Design` (the outcome's codes, the covariates' columns
        without an intercept, each row's count of responses, the columns' names and terms); ``reference``
        the index of the option without coefficients (None: the last).  A type whose reports the shared
        logit cannot read (a two-group design's answer depends on its group) returns a result that renders
        itself as :class:`~..regression.Regression` reads it (``models``, ``to_dict()``, ``summary()``,
        ``coefficient_rows()``, ``n``, ``confidence``), or raises FieldError for what it cannot fit.
        Only asked when ``capabilities.regression`` is None."""
        return None


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
    """One mechanism's sampler for ``deniable audit`` (:mod:`deniable.server.survey.audit_settings`).

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
        raise DefinitionError(path, f"must be a number, got {sent(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise DefinitionError(path, "must be a finite number")
    out = parsed(lambda x: Decimal(repr(x)) if isinstance(x, float) else Decimal(int(x)), value,
                 lambda exc: DefinitionError(path, f"must be a number, got {sent(value)}"[:100]))
    if abs(out) > Decimal(10) ** 12 or out.as_tuple().exponent < -6:
        raise DefinitionError(path, "must be at most 10^12 in size, with at most 6 decimal places")
    return out.normalize() if out != 0 else Decimal(0)


__all__ = ["AuditSampler", "Capabilities", "NOT_ANSWERED", "NotAvailable", "QuestionType", "decimal_field", "decimal_text", "fmt",
           "headline", "json_number", "lines", "number", "pct", "placed_after", "typed_number"]
