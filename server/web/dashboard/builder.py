"""The survey builder's page: the form, its error summary, and a planning panel beside each question.

Each question's panel comes from its type (:meth:`QuestionType.plan
<deniable.server.survey.questions.base.QuestionType.plan>`), once its slot holds a valid question
(:func:`.slots.slot_question`); a type whose panel is its own partial names it
(``plan_template``, rendered by ``_typed_plan.html``), and a type with ``plan_region`` gets the ε-DP
region chart of a test of one answer.  A type without planning numbers says why (NotAvailable) and
its panel asks for nothing more.

The panels are computed from what the form holds now (saved or not), so a failed save or a
question action shows them for the questions as typed; ``builder.js`` updates them live from
``/dashboard/plan.json`` (:mod:`.planner`).
"""

from __future__ import annotations

from flask import render_template

from deniable.server.survey import questions
from deniable.server.survey.explain import explain_total
from deniable.server.survey.questions.base import NotAvailable

from .charts import dp_region
from .forms import LANGUAGE_NAMES, DesignForm, error_summary
from .naming import KEEP_FIRST, STOP
from .slots import kinds, mechanisms, slot_question, slot_type


def _target_and_margin(form: DesignForm) -> tuple[int, float]:
    target = form.target_n.data if isinstance(form.target_n.data, int) and 1 <= form.target_n.data <= 10**8 else 1000
    margin = form.margin.data if isinstance(form.margin.data, float) and 0.001 <= form.margin.data <= 0.499 else 0.05
    return target, margin


def entry_plans(form: DesignForm) -> list[dict | None]:
    """Per question slot, its planning numbers (with the ε-DP region), or None while it is incomplete."""
    target, margin = _target_and_margin(form)
    plans = []
    for position, entry in enumerate(form.questions.entries):
        sub = entry.form
        qtype = slot_type(sub)
        question = slot_question(sub)
        if question is None or question.type != qtype.name:
            plans.append(None)
            continue
        try:
            plan = qtype.plan(question, target, margin)
        except NotAvailable:
            plans.append(None)
            continue
        if qtype.plan_region and plan.get("protected"):
            plan["region"] = dp_region(plan["epsilon"], chart_id=f"region{position}")
        plans.append(plan)
    return plans


def render_builder(form: DesignForm, stored=None, *, status: int = 200, focus: str | None = None, **extra):
    """The builder page (new survey or a draft's design), with the planning panels and the total ε."""
    plans = entry_plans(form)
    protected = [p for p in plans if p and p["protected"]]  # a plain list experiment has no ε
    total = explain_total(sum(p["epsilon"] for p in protected), len(protected))
    target, margin = _target_and_margin(form)
    return render_template("dashboard/edit.html", form=form, stored=stored, plans=plans, total=total,
                           summary=error_summary(form), focus=focus, target=target, margin=margin,
                           language_names=LANGUAGE_NAMES, kinds=kinds(), mechanisms=mechanisms(),
                           types=questions.all_types(), types_by_name={t.name: t for t in questions.all_types()},
                           default_kind=questions.DEFAULT, stop_words=" ".join(sorted(STOP)),
                           keep_first=" ".join(sorted(KEEP_FIRST)), **extra), status
