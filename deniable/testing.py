"""Conformance checks for question types: :func:`check_question_type`, as scikit-learn's ``check_estimator``.

A question type (:mod:`deniable.server.survey.questions.base`) passes when its core is well formed,
every surface of the protocol is either one it opts into or one it refuses with a reason in words, its
examples parse and survive their own definition, its reports, codes and text cells are one another's
inverses, reports simulated through its randomizer estimate what a larger simulation estimates within
the interval the type gives, and every surface it declares answers each example (or says why not, in
words).  The checks take seconds; the battery of tests (tests/battery) then runs the type through
every page, file and command::

    from deniable.testing import check_question_type
    check_question_type(MyType())

Each check is a function of the type in :data:`CHECKS`, so a test can parametrize over them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np

from deniable.client.mechanism import MechanismError
from deniable.server.survey.definition import dumps_definition, loads_definition, parse_definition
from deniable.server.survey.questions import registry
from deniable.server.survey.questions.base import Capabilities, NotAvailable, QuestionType
from deniable.server.survey.questions.surfaces import SURFACES, opted_into

N_SMALL, N_LARGE = 1500, 15000  # simulated respondents: the interval's sample, and the estimate it must hold
CONFIDENCE = 0.999  # of the small sample's interval (the seeds are fixed: the check is deterministic)
MAX_CODES = 300  # codes checked per question (a Laplace number has thousands)


def _fail(check: str, what: str) -> None:
    # an AssertionError, as scikit-learn's checks raise: a type that fails is a bug in the type, not bad input
    raise AssertionError(f"{check}: {what}")


def _words(check: str, reason, what: str) -> None:
    if not isinstance(reason, str) or not reason.strip():
        _fail(check, f"{what} must be a reason in words, got {reason!r}")


def _questions(qtype):
    """The type's example questions, parsed (ids ``<type>_<n>``, the name's other characters as ``_``), each with its truth-file entry."""
    examples = qtype.examples()
    if not examples:
        _fail("examples", f"{qtype.name}: examples() gives none")
    prefix = re.sub(r"\W", "_", qtype.name)  # a question id is a word
    data = [{"id": f"{prefix}_{n}", **definition} for n, (definition, _) in enumerate(examples)]
    survey = parse_definition({"slug": "check", "title": "Conformance", "questions": data})
    return survey, [(q, truth) for q, (_, truth) in zip(survey.questions, examples)]


def _answers(check: str, what: str, call):
    """``call()``'s value, or None when it refuses with :class:`NotAvailable` in words."""
    try:
        return call()
    except NotAvailable as exc:
        _words(check, str(exc), f"{what}'s refusal")
        return None


def check_core(qtype) -> None:
    """The core: a :class:`QuestionType` with a name, a label, its keys and its :class:`Capabilities`."""
    if not isinstance(qtype, QuestionType):
        _fail("core", f"{qtype!r} is not a QuestionType")
    for attr in ("name", "label"):
        if not isinstance(getattr(qtype, attr), str) or not getattr(qtype, attr):
            _fail("core", f"{type(qtype).__name__}.{attr} must be a non-empty string")
    if not isinstance(qtype.keys, frozenset) or not set(qtype.needed) <= qtype.keys:
        _fail("core", f"{qtype.name}: needed {qtype.needed!r} must be among keys {sorted(qtype.keys)}")
    caps = qtype.capabilities
    if not isinstance(caps, Capabilities):
        _fail("core", f"{qtype.name}: capabilities must be a Capabilities, got {caps!r}")
    for flag in ("crosstab", "regression", "covariate", "condition", "builder"):
        reason = getattr(caps, flag)
        if reason is not None:
            _words("core", reason, f"{qtype.name}: capabilities.{flag}")
        if flag != "builder" and getattr(qtype, flag) != reason:
            _fail("core", f"{qtype.name}.{flag} says otherwise than capabilities.{flag}")
    for flag in ("categorical", "shuffles"):
        if not isinstance(getattr(caps, flag), bool):
            _fail("core", f"{qtype.name}: capabilities.{flag} must be True or False")


def check_surfaces(qtype) -> None:
    """Every surface is opted into (its mixin among the type's bases, with the surfaces it builds on) or
    refused with a reason in words, which every member of the surface then raises."""
    has = {surface.name for surface in opted_into(qtype)}
    known = {surface.name for surface in SURFACES}
    refused = dict(qtype.capabilities.refused)
    if set(refused) - known:
        _fail("surfaces", f"{qtype.name} refuses unknown surfaces {sorted(set(refused) - known)}")
    for surface in SURFACES:
        if surface.name in has:
            if surface.name in refused:
                _fail("surfaces", f"{qtype.name} both opts into and refuses the {surface.name} surface")
            missing = [need for need in surface.needs if need not in has]
            if missing:
                _fail("surfaces", f"{qtype.name}: the {surface.name} surface builds on {missing}, not opted into")
            continue
        _words("surfaces", refused.get(surface.name),
               f"{qtype.name} has no {surface.name} surface ({surface.mixin.__name__}): its refusal")
        for member in surface.members:
            try:
                getattr(qtype, member)
            except NotAvailable as exc:
                if str(exc) != refused[surface.name]:
                    _fail("surfaces", f"{qtype.name}.{member} must refuse with the {surface.name} surface's reason")
            else:
                _fail("surfaces", f"{qtype.name}.{member} answers, though the {surface.name} surface is refused")


def check_examples(qtype) -> None:
    """The examples parse, and each question's definition (``to_dict``) parses back to the same question."""
    survey, questions = _questions(qtype)
    again = loads_definition(dumps_definition(survey))
    for (q, _), back in zip(questions, again.questions):
        if q.qtype.name != qtype.name:
            _fail("examples", f"{q.id}: parses as a {q.qtype.name!r} question")
        if back != q or back.to_dict() != q.to_dict():
            _fail("examples", f"{q.id}: to_dict() does not parse back to the same question: {q.to_dict()!r}")


def check_reports(qtype) -> None:
    """Reports ↔ codes ↔ text cells: each possible code's JSON report checks back to it, and its text
    cell reads back to it; a cell that is none of them is refused."""
    if "wire" not in {s.name for s in opted_into(qtype)}:
        return
    _, questions = _questions(qtype)
    for q, _ in questions:
        wire = q.qtype
        n_cells = wire.n_cells(q)
        codes = np.arange(n_cells) if n_cells <= MAX_CODES else \
            np.unique(np.linspace(0, n_cells - 1, MAX_CODES).round().astype(np.int64))
        invalid = wire.invalid_codes(q, codes)
        for code in codes[~invalid].tolist():
            report = json.loads(json.dumps(wire.report_of(q, code)))
            if wire.check_report(q, report) != code:
                _fail("reports", f"{q.id}: code {code}'s report {report!r} checks back to another code")
            text = wire.text_of(q, code)
            if wire.code_of(q, text) != code:
                _fail("reports", f"{q.id}: code {code}'s text cell {text!r} reads back to another code")
            if wire.codes_of(q, [text, "", None]).tolist() != [code, -1, -1]:
                _fail("reports", f"{q.id}: codes_of does not read {text!r}, an empty cell and None")
        if wire.code_of(q, "✗ no such cell") is not None:
            _fail("reports", f"{q.id}: code_of accepts a cell that is no report")
        try:
            wire.check_report(q, "✗")
        except MechanismError as exc:
            _words("reports", str(exc), f"{q.id}: a refused report's message")
        else:
            _fail("reports", f"{q.id}: check_report accepts a report that is no report")
        _words("reports", wire.expected(q), f"{q.id}: expected()")


def _estimate(q, truth, n: int, seed: int):
    codes = q.qtype.simulate(q, truth, n, np.random.default_rng(seed))
    stats = q.qtype.column_stats(q, codes)
    result = q.qtype.estimate(q, stats, method="exact", confidence=CONFIDENCE, simultaneous=False)
    return codes, stats, result, q.qtype.record(q, result)


def check_estimates(qtype) -> None:
    """Simulated reports (the type's truth, its real randomizer) are valid codes; their estimate is a
    record in JSON whose headlines lie in their intervals, and every headline of a large simulation
    lies in the interval a smaller one gives."""
    has = {s.name for s in opted_into(qtype)}
    if not {"audit", "statistics", "presentation"} <= has:
        return
    _, questions = _questions(qtype)
    for q, entry in questions:
        truth = q.qtype.truth(q, entry, q.id)
        codes, stats, result, record = _estimate(q, truth, N_SMALL, 1)
        codes = np.asarray(codes)
        if codes.shape != (N_SMALL,) or codes.min() < 0 or codes.max() >= q.qtype.n_cells(q) \
                or q.qtype.invalid_codes(q, codes).any():
            _fail("estimates", f"{q.id}: simulate() gives codes that are no reports")
        if q.qtype.n_of_stats(q, stats) != N_SMALL or q.qtype.n_of(result) != N_SMALL:
            _fail("estimates", f"{q.id}: the statistics or the result do not count the {N_SMALL} reports")
        json.dumps(record)
        small = q.qtype.headlines(q, record)
        large = q.qtype.headlines(q, _estimate(q, truth, N_LARGE, 2)[3])
        if len(small) != len(large):
            _fail("estimates", f"{q.id}: headlines() gives {len(small)} and {len(large)} headlines")
        for (shown, low, high), (far, _, _) in zip(small, large):
            if shown is None:
                continue
            if (low is not None and shown < low - 1e-12) or (high is not None and shown > high + 1e-12):
                _fail("estimates", f"{q.id}: the headline {shown} is outside its interval [{low}, {high}]")
            if far is not None and not ((low is None or far >= low - 1e-9) and (high is None or far <= high + 1e-9)):
                _fail("estimates", f"{q.id}: {N_LARGE} simulated respondents estimate {far}, outside the "
                                   f"{CONFIDENCE:.1%} interval [{low}, {high}] of {N_SMALL}")


def check_declared_surfaces(qtype) -> None:
    """Every surface the type opts into answers each example question, or refuses with words."""
    has = {s.name for s in opted_into(qtype)}
    _, questions = _questions(qtype)
    for q, entry in questions:
        t = q.qtype
        result = record = None
        if {"audit", "statistics"} <= has:
            codes = t.simulate(q, t.truth(q, entry, q.id), 200, np.random.default_rng(3))
            result = t.estimate(q, t.column_stats(q, codes), method="exact", confidence=0.95, simultaneous=False)
            record = t.record(q, result)
        if "wire" in has:
            _answers("wire", f"{q.id}: api_design", lambda: t.api_design(q))
            t.stored_design(q)
            spec = t.spec(q)
            if spec is not None and dataclasses.replace(q, **t.from_spec(json.loads(json.dumps(spec)))) != q:
                _fail("wire", f"{q.id}: from_spec does not give back what spec stored: {spec!r}")
        if "files" in has and result is not None:
            columns = t.stat_columns(q, codes)
            if not columns or any(len(values) != len(codes) for _, values, _, _ in columns):
                _fail("files", f"{q.id}: stat_columns gives no column, or one of another length")
            if len(t.parquet_array(q, codes)) != len(codes):
                _fail("files", f"{q.id}: parquet_array's length differs from the reports'")
            t.design_fields(q)
        if "statistics" in has and result is not None:
            if not list(t.csv_rows(q, result)):
                _fail("statistics", f"{q.id}: csv_rows gives no row")
        if "presentation" in has and record is not None:
            for row in t.shown_rows(q, result):
                if "headline" not in row:
                    _fail("presentation", f"{q.id}: a shown row has no headline")
            _words("presentation", t.unprotected(q), f"{q.id}: unprotected()")
            t.chart(q, record)
            t.page_data(q)
            t.explanation(q, gettext=lambda text: text, locale="en")
        if "monitoring" in has and record is not None:
            _answers("monitoring", f"{q.id}: summary", lambda: t.summary(q, record))
            _answers("monitoring", f"{q.id}: group_columns", lambda: t.group_columns(q))
            _answers("monitoring", f"{q.id}: release_labels", lambda: t.release_labels(q))
        if "builder" in has:
            words = t.wording(q)
            if set(t.wording_labels(q)) != set(words):
                _fail("builder", f"{q.id}: wording_labels names other texts than wording")
            t.reworded(q, words)
            if t.refuses_builder(q) is None:
                t.builder_entry(q)
            else:
                _words("builder", t.refuses_builder(q), f"{q.id}: refuses_builder")
            _answers("builder", f"{q.id}: plan", lambda: t.plan(q, 1000, 0.05))
        if "audit" in has:
            _answers("audit", f"{q.id}: audit_sampler", lambda: t.audit_sampler(q))
        if not math.isfinite(t.k(q)) or t.k(q) < 1:
            _fail("core", f"{q.id}: k is {t.k(q)}")


CHECKS = (check_core, check_surfaces, check_examples, check_reports, check_estimates, check_declared_surfaces)


def check_question_type(qtype) -> None:
    """Run every check of :data:`CHECKS` on ``qtype`` (an instance); raise AssertionError naming the
    first that fails, the question and why.  A type not yet registered is registered for the checks' duration."""
    known = qtype.name in registry.names() if isinstance(getattr(qtype, "name", None), str) else True
    if not known:
        registry.register(qtype)
    try:
        for check in CHECKS:
            check(qtype)
    finally:
        if not known:
            registry.unregister(qtype.name)


__all__ = ["CHECKS", "check_core", "check_declared_surfaces", "check_estimates",
           "check_examples", "check_question_type", "check_reports", "check_surfaces"]
