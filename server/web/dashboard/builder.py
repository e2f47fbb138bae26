"""The survey builder's page: the form, its error summary, and a planning panel beside each question.

A single-choice question's panel comes from :func:`.planning.question_plan`; a numeric,
check-all-that-apply or list-experiment question's from :func:`.type_planning.typed_plan`, once
its slot holds a valid question (:func:`.slots.slot_question`).

The panels are computed from what the form holds now (saved or not), so a failed save or a
question action shows them for the questions as typed; ``builder.js`` updates them live from
``/dashboard/plan.json`` (:mod:`.planner`).
"""

from __future__ import annotations

from flask import render_template

from deniable.client.mechanism import MechanismError, mechanism
from deniable.server.survey.definition import MAX_OPTIONS
from deniable.server.survey.explain import explain_total
from deniable.server.survey.planning import question_plan
from deniable.server.survey.type_planning import PLANNERS, typed_plan

from .charts import dp_region
from .forms import LANGUAGE_NAMES, DesignForm, error_summary, split_options
from .naming import KEEP_FIRST, STOP
from .slots import KINDS, MECHANISMS, slot_question


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
        if sub.kind.data in PLANNERS:
            question = slot_question(sub)
            plans.append(None if question is None or question.type != sub.kind.data
                         else typed_plan(question, target, margin))
            continue
        k = len([o for o in split_options(sub.options.data) if o])
        epsilon = None
        if sub.protection.data != "direct":
            try:
                epsilon = mechanism(max(k, 2), float((sub.epsilon.data or "").replace(",", "."))).declared_epsilon
            except (ValueError, MechanismError):
                plans.append(None)
                continue
        if not 2 <= k <= MAX_OPTIONS:
            plans.append(None)
            continue
        plan = question_plan(epsilon, k, target, margin)
        if epsilon is not None:
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
                           language_names=LANGUAGE_NAMES, kinds=KINDS, mechanisms=MECHANISMS,
                           stop_words=" ".join(sorted(STOP)), keep_first=" ".join(sorted(KEEP_FIRST)), **extra), status
