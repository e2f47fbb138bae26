"""The question-type protocol: a small core, the rest by surface in mixins a type opts into.

The core (:class:`~deniable.server.survey.questions.base.QuestionType`) declares at most 20 members;
every registered type and the test-only fifth type (tests/support/rating.py) has each surface from its
mixin or refuses it with a reason; the table of contents in base.py's docstring lists every mixin's
members; and :func:`deniable.testing.check_question_type` passes on every type and fails on broken ones.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from deniable.server.survey import questions
from deniable.server.survey.questions import base
from deniable.server.survey.questions.base import Capabilities, NotAvailable, QuestionType
from deniable.server.survey.questions.choice import Choice
from deniable.server.survey.questions.surfaces import SURFACES, opted_into, surface_of
from deniable.testing import CHECKS, check_question_type

from support import rating


def core_members() -> list[str]:
    return [name for name in vars(QuestionType) if not name.startswith("__")]


def every_type():
    """Every registered type, each variant for designs, and the fifth type."""
    out = {}
    for qtype in (*questions.all_types(), rating.RATING):
        out[type(qtype).__name__] = qtype
        if getattr(qtype, "designed", None) is not None:
            out[type(qtype.designed).__name__] = qtype.designed
    return out


def test_the_core_declares_at_most_20_members():
    assert len(core_members()) <= 20, core_members()


def test_the_mixins_are_not_bases_of_the_core_and_declare_disjoint_members():
    seen = set(core_members())
    for surface in SURFACES:
        assert not issubclass(QuestionType, surface.mixin), surface.name
        assert surface.members, surface.name
        assert not seen & set(surface.members), (surface.name, seen & set(surface.members))
        seen |= set(surface.members)
        assert all(surface_of(member) is surface for member in surface.members)


@pytest.mark.parametrize("qtype", every_type().values(), ids=list(every_type()))
def test_every_type_has_every_surface_or_refuses_it_with_a_reason(qtype):
    has = {surface.name for surface in opted_into(qtype)}
    for surface in SURFACES:
        reason = qtype.capabilities.refusal(surface.name)
        assert (surface.name in has) != bool(reason), (surface.name, reason)
        if reason:
            assert reason.strip()


def test_the_table_of_contents_lists_every_surface_and_its_members():
    body = base.__doc__.split("\n============  ")[2].split("\n", 1)[1].split("\n============  ")[0]
    rows = re.split(r"\n(?=\S)", body)
    table = {row.split()[0]: " ".join(row.split()) for row in rows}
    assert set(table) == {"core", *(surface.name for surface in SURFACES)}
    for surface in SURFACES:
        row = table[surface.name]
        assert f"{surface.mixin.__name__}`" in row, surface.name
        assert [m.strip() for m in row.split("` ", 1)[1].split(",")] == list(surface.members), surface.name
    for member in core_members():
        assert member in table["core"], member


@pytest.mark.parametrize("qtype", [*questions.all_types(), rating.RATING], ids=lambda t: t.name)
def test_every_type_passes_check_question_type(qtype):
    with rating.registered():
        check_question_type(qtype)


# ---------------------------------------------------------------- types that are not well formed

class Bare(QuestionType):
    """A type that opts into no surface and refuses each with a reason."""

    name = "bare"
    label = "bare question"
    keys = frozenset({"type", "options"})
    needed = ("options",)
    capabilities = Capabilities(refused={s.name: f"a bare question has no {s.name}" for s in SURFACES})


def test_a_refused_surface_answers_with_its_reason():
    bare = Bare()
    with pytest.raises(NotAvailable, match="a bare question has no statistics"):
        bare.estimate
    with pytest.raises(NotAvailable, match="a bare question has no presentation"):
        bare.card
    for check in CHECKS[:2]:
        check(bare)


def test_a_type_that_neither_opts_in_nor_refuses_gets_the_defaults_but_fails_the_checks():
    """A type written before the split (deriving from QuestionType alone) works as it did; the checks ask it
    to choose."""

    class Old(QuestionType):
        name = "old"
        label = "old question"

    old = Old()
    assert old.wording_labels(None) == {"text": ("question text", "text"), "options": ("option", "options")}
    assert old.slot_fields == ("options",) and old.audit_samplers() == ()
    with pytest.raises(AttributeError):
        old.no_such_member
    with pytest.raises(AssertionError, match="old has no wire surface \\(Wire\\): its refusal must be"):
        check_question_type(old)
    assert "old" not in questions.names()


def test_a_flag_set_as_a_class_attribute_is_folded_into_the_capabilities():
    class Old(Choice):
        name = "old"
        crosstab = "not this one"
        builder_refusal = "not in the builder"

    assert Old.capabilities.crosstab == Old().crosstab == "not this one"
    assert Old.capabilities.builder == "not in the builder" and Old.capabilities.categorical
    assert Choice.capabilities.crosstab is None


def test_check_question_type_finds_a_broken_type():
    class LosesText(rating.Rating):
        name = "loses-text"

        def examples(self):
            return [({**definition, "type": self.name}, truth) for definition, truth in super().examples()]

        def code_of(self, q, text):
            return None

    class Biased(LosesText):
        name = "biased"

        def code_of(self, q, text):
            return rating.Rating.code_of(self, q, text)

        def simulate(self, q, truth, n, rng):
            codes = super().simulate(q, truth, n, rng)
            return codes if n < 10_000 else codes * 0  # the large sample says everyone chose the first point

    class Unrefused(LosesText):
        name = "unrefused"
        capabilities = dataclasses.replace(LosesText.capabilities, refused={"audit": ""})

    with pytest.raises(AssertionError, match="reports: .*reads back to another code"):
        check_question_type(LosesText())
    with pytest.raises(AssertionError, match="estimates: .*outside the 99.9% interval"):
        check_question_type(Biased())
    with pytest.raises(AssertionError, match="both opts into and refuses the audit surface"):
        check_question_type(Unrefused())
    assert not {"loses-text", "biased", "unrefused"} & set(questions.names())
