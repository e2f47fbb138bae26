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

import math

from flask import render_template

from deniable.client.designs import PARAMETERS, VARIANTS

from deniable.server.survey import questions
from deniable.server.survey.explain import ALMOST_CERTAIN, explain_total, percent, two_way_bound
from deniable.server.survey.questions.base import NotAvailable

from .charts import dp_region
from .forms import LANGUAGE_NAMES, LIMITS, DesignForm, error_summary, randomizations
from .naming import KEEP_FIRST, STOP
from .slots import kinds, mechanisms, slot_question, slot_type


# The total ε above which the respondents' sentence on all their answers says "almost certain"
# (explain.explain_total): e^ε / (1 + e^ε) > ALMOST_CERTAIN  ⇔  ε > ln(ALMOST_CERTAIN / (1 − ALMOST_CERTAIN))
# = ln 999 ≈ 6.907.
ALMOST_CERTAIN_TOTAL = math.log(ALMOST_CERTAIN / (1 - ALMOST_CERTAIN))


def total_warning(epsilon_total: float, *, shown: str | None = None) -> str | None:
    """For researchers: what every respondent will read when the total ε makes them "almost certain", or None.

    The respondent's sentence (:func:`~deniable.server.survey.explain.explain_total`) bounds how sure
    someone who sees every report can be, choosing between two sets of answers at 50/50: the
    posterior e^ε / (1 + e^ε) (Kairouz, Oh and Viswanath, "The composition theorem for differential
    privacy", ICML 2015, the hypothesis-testing view).  Above ``ALMOST_CERTAIN`` it says "almost
    certain … (more than 99.9% sure)", which is the case exactly when ε > ``ALMOST_CERTAIN_TOTAL``.
    ``shown`` replaces the number in the text (builder.js fills in the total as typed).

    >>> total_warning(6.9) is None, total_warning(8.0)[:32]
    (True, 'At a total ε of 8.000 per respon')
    """
    if two_way_bound(epsilon_total) <= ALMOST_CERTAIN:
        return None
    most = math.floor(ALMOST_CERTAIN_TOTAL * 100) / 100
    shown = f"{epsilon_total:.3f}" if shown is None else shown
    return (f"At a total ε of {shown} per respondent, every respondent reads that someone "
            f"who sees everything that was sent could be almost certain of their answers "
            f"({percent(two_way_bound(epsilon_total))} sure). Lower the ε of the protected questions so that "
            f"they add up to at most {most:.2f}, or ask fewer questions protected.")


def design_params() -> dict[str, str]:
    """Per choice of the ``randomization`` field, its design's parameters (``"p forced"``; none for k-ary
    randomized response): builder.js reads the design's fields by these names (data-design-params)."""
    return {name: " ".join(VARIANTS[name][1] if name in VARIANTS else PARAMETERS.get(name, ()))
            for name in randomizations()}


def design_specs() -> dict[str, dict]:
    """Per choice of the ``randomization`` field that is a named variant of a design (the respondent-side
    crosswise model), the design object's fixed keys (data-design-spec: builder.js starts from them)."""
    return {name: VARIANTS[name][0] for name in randomizations() if name in VARIANTS}


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
        planned = question.qtype  # a single choice with a design plans as its designed variant
        try:
            plan = planned.plan(question, target, margin)
        except NotAvailable:
            plans.append(None)
            continue
        if planned.plan_region and plan.get("protected"):
            plan["region"] = dp_region(plan["epsilon"], chart_id=f"region{position}")
        plans.append(plan)
    return plans


def _needed(plan: dict | None) -> int | None:
    """The respondents a plan says the margin needs (its ``needed``, or its headline option's), or None."""
    if not plan:
        return None
    needed = plan.get("needed")
    if needed is None and isinstance(plan.get("option"), dict):
        needed = plan["option"].get("needed")
    return needed if isinstance(needed, int) and needed > 0 else None


def question_lines(form: DesignForm, plans: list[dict | None], *, stored=None, focus: str | None = None) -> list[dict]:
    """Per question slot, its one-line card (issue 39): the text (shortened by the page), its type, its
    protection (ε, the design's name, or "asked directly"), the respondents its panel says the margin needs,
    and whether the card is open.  A card is closed when a saved draft with two questions or more is shown,
    except a blank question, a question with an error (errors never hide) and the question the page focuses
    (added, copied, or after a delete); everything is open on a new survey's page."""
    kinds_now, designs_now = kinds(), randomizations()
    many = stored is not None and len(form.questions.entries) >= 2
    focused = focus.split("-")[1] if focus and focus.startswith("questions-") and not focus.endswith(
        ("-up", "-down")) else None
    lines = []
    for i, entry in enumerate(form.questions.entries):
        sub, plan = entry.form, plans[i]
        qtype = slot_type(sub)
        own = bool(getattr(qtype, "epsilon_from_design", False))
        design = sub.randomization.data if "randomization" in qtype.slot_fields else None
        epsilon = plan.get("epsilon") if plan and plan.get("protected") else None
        if sub.protection.data == "direct" and not own:
            protection = "asked directly"
        elif own:
            protection = f"{sub.group_model.data or ''} design".strip()
            protection += f", ε = {epsilon:.3g}" if isinstance(epsilon, (int, float)) else ""
        elif design and design != "rr" and design in designs_now:
            protection = designs_now[design].split(" (")[0]
            protection += f", ε = {epsilon:.3g}" if isinstance(epsilon, (int, float)) else ""
        else:
            typed = (sub.epsilon.data or "").strip()
            protection = f"ε = {typed}" if typed else "ε not set"
        errors = any(field.errors for field in sub)
        lines.append({"qid": (sub.qid.data or "").strip(), "text": " ".join((sub.text.data or "").split()),
                      "type": kinds_now.get(qtype.name, qtype.name), "protection": protection,
                      "needed": _needed(plan),
                      "open": not many or sub.is_blank() or errors or focused == str(i)})
    return lines


def render_builder(form: DesignForm, stored=None, *, status: int = 200, focus: str | None = None, **extra):
    """The builder page (new survey or a draft's design), with the planning panels and the total ε."""
    plans = entry_plans(form)
    protected = [p for p in plans if p and p["protected"]]  # a plain list experiment has no ε
    total = explain_total(sum(p["epsilon"] for p in protected), len(protected))
    target, margin = _target_and_margin(form)
    return render_template("dashboard/edit.html", form=form, stored=stored, plans=plans, total=total,
                           total_warning=total_warning(total["epsilon"]), almost_certain_total=ALMOST_CERTAIN_TOTAL,
                           total_warning_template=total_warning(2 * ALMOST_CERTAIN_TOTAL, shown="{epsilon}"),
                           summary=error_summary(form), focus=focus, target=target, margin=margin,
                           lines=question_lines(form, plans, stored=stored, focus=focus),
                           language_names=LANGUAGE_NAMES, limits=LIMITS, kinds=kinds(), mechanisms=mechanisms(),
                           randomizations=randomizations(), design_params=design_params(), design_specs=design_specs(),
                           types=questions.all_types(), types_by_name={t.name: t for t in questions.all_types()},
                           default_kind=questions.DEFAULT, stop_words=" ".join(sorted(STOP)),
                           keep_first=" ".join(sorted(KEEP_FIRST)), **extra), status
