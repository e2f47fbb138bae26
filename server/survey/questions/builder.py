"""Builder and planning: the dashboard's builder slot, wording fixes after launch, the planning panel and ``deniable plan``: the :class:`Builder` mixin of the question-type protocol.

Whether the builder may edit a question at all is the core's capability ``builder``
(:class:`~.base.Capabilities`); :meth:`Builder.refuses_builder` says it per question.

A type opts in by naming the mixin among its bases (``class Choice(Wire, …, QuestionType)``) and
overrides the members it changes; the defaults below are what a type that overrides nothing does.
The protocol's table of contents is :mod:`.base`'s docstring.
"""

from __future__ import annotations

from ..definition import Question
from .base import NotAvailable, lines


class Builder:
    """Builder and planning: the defaults of the surface a type opts into (:mod:`.base`, table of contents)."""

    def wording(self, q: Question) -> dict:
        """The texts of ``q`` a launched survey may reword: ``{key: str or list of str}``."""
        return {"text": q.text, "options": list(q.options)}

    def reworded(self, q: Question, texts: dict) -> dict:
        """The :class:`Question` fields for reworded ``texts`` (same number of labels: checked by caller)."""
        return {"text": texts["text"], "options": tuple(texts["options"])}

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
        return self.capabilities.builder

    plan_template: str | None = None  # the builder panel's partial (a Jinja template) for :meth:`plan`'s dict

    plan_region = False  # whether the builder's panel adds the ε-DP region chart (a test of one answer)

    # What builder.js needs before it asks /dashboard/plan.json: parameters, each with its range
    # ("k:2:64"), space-separated; and the sentence the panel shows while one is missing.
    plan_needs = ""

    plan_missing = "Fill in the question to see how private and how precise it will be."

    plan_option: str | None = None  # ``deniable plan``'s option for this type (``--numeric``), with :meth:`plan_cli`

    direct_choice = "directly (not protected)"  # what the builder calls asking without ε, in its error messages

    def plan_cli(self, value, step, margin: float, epsilons, confidence: float):
        """``deniable plan`` with :attr:`plan_option`'s ``value``: a :class:`~..planning.SurveyPlan` (its
        ``to_dict`` the JSON, its ``table`` the text); PlanInputError naming the option for a bad value."""
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
