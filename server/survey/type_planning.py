"""Planning numbers for the question types beyond single choice, for the builder's panel.

- **numeric**: the margin of the mean at the target n for every candidate mechanism
  (:func:`deniable.estimators.numeric.plan_numeric`, best first: the planner's choice), in the
  question's units, worst case over the answers' distribution and with answers spread evenly;
  the respondents a margin of ``margin`` × (max − min) needs;
- **multi**: each option is a yes/no question randomized at ε/K, so its prevalence has the exact
  planning numbers of a yes/no question at that ε (:func:`.planning.question_plan` with k = 2);
- **list**: the margin of the difference in means (the sensitive item's prevalence) at n
  respondents, half in each arm (:func:`deniable.estimators.listexp.list_margin`), worst case
  and typical, beside a plain list experiment's.
"""

from __future__ import annotations

import math

from deniable.client.multi import bit_epsilon
from deniable.estimators.binomial import z
from deniable.estimators.listexp import list_margin
from deniable.estimators.numeric import plan_numeric

from .cells import decimal_text
from .definition import Question
from .planning import question_plan


def numeric_plan(q: Question, target_n: int, margin: float, confidence: float = 0.95) -> dict:
    """The candidates' margins of the mean (question units), the one in use and the planner's choice."""
    step = float(q.step)
    wanted = margin * q.steps  # the margin, as a share of the range, in answer-index units
    out = {"type": "numeric", "protected": q.protected, "target_n": target_n, "margin": margin,
           "margin_units": margin * float(q.maximum - q.minimum), "steps": q.steps,
           "min": decimal_text(q.minimum), "max": decimal_text(q.maximum), "step": decimal_text(q.step)}
    zq = z(confidence)
    worst_direct = q.steps**2 / 4  # a direct answer's largest variance: half at each end
    out["baseline_moe"] = zq * math.sqrt(worst_direct / target_n) * step
    out["baseline_needed"] = math.ceil((zq * math.sqrt(worst_direct) / wanted) ** 2)
    if not q.protected:
        out.update(epsilon=None, moe=out["baseline_moe"], needed=out["baseline_needed"], candidates=[])
        return out
    rows = plan_numeric(q.steps, q.epsilon, target_n, confidence, margin=wanted)
    candidates = [{"mechanism": r.mechanism, "grid": r.grid, "epsilon": r.epsilon,
                   "moe": float(r.margin_worst) * step, "moe_uniform": float(r.margin_uniform) * step, "needed": r.needed,
                   "best": i == 0, "chosen": (r.mechanism, r.grid if r.mechanism == "grid" else None)
                   == (q.method, q.grid if q.method == "grid" else None)}
                  for i, r in enumerate(rows)]
    chosen = next(c for c in candidates if c["chosen"])
    out.update(epsilon=q.mechanism.epsilon, declared_epsilon=q.epsilon, mechanism=q.method, grid=q.grid,
               moe=chosen["moe"], moe_uniform=chosen["moe_uniform"], needed=chosen["needed"],
               planner_choice=chosen["best"], candidates=candidates)
    return out


def multi_plan(q: Question, target_n: int, margin: float, confidence: float = 0.95) -> dict:
    """Each option's planning numbers (a yes/no question at ε/K) and how ε is split."""
    per_option = question_plan(bit_epsilon(q.epsilon, q.k) if q.protected else None, 2, target_n, margin, confidence)
    out = {"type": "multi", "protected": q.protected, "k": q.k, "target_n": target_n, "margin": margin,
           "option": per_option, "epsilon": q.mechanism.epsilon if q.protected else None}
    if q.protected:
        out.update(declared_epsilon=q.epsilon, bit_epsilon=bit_epsilon(q.epsilon, q.k), p=q.mechanism.p)
    return out


def _list_needed(margin_at_n: float, n: int, margin: float) -> int:
    """The respondents for ``margin`` (the margin falls as 1/√n), rounded up to an even number (two arms)."""
    needed = math.ceil(n * (margin_at_n / margin) ** 2)
    return needed + needed % 2


def list_plan(q: Question, target_n: int, margin: float, confidence: float = 0.95) -> dict:
    """The margin of the difference in means at ``target_n`` (worst and typical), and beside a plain one."""
    items = len(q.options)
    mine = list_margin(items, q.epsilon, target_n, confidence)
    plain = list_margin(items, None, target_n, confidence)
    out = {"type": "list", "protected": q.protected, "items": items, "target_n": target_n, "margin": margin,
           "moe": float(mine["margin_worst"]), "moe_typical": float(mine["margin_typical"]),
           "needed": _list_needed(mine["margin_worst"], target_n, margin),
           "baseline_moe": float(plain["margin_worst"]), "baseline_needed": _list_needed(plain["margin_worst"], target_n, margin),
           "epsilon": q.mechanism.epsilon if q.protected else None}
    if q.protected:
        out.update(declared_epsilon=q.epsilon, k=q.mechanism.k, p=q.mechanism.rr.p)
    return out


PLANNERS = {"numeric": numeric_plan, "multi": multi_plan, "list": list_plan}


def typed_plan(q: Question, target_n: int, margin: float, confidence: float = 0.95) -> dict:
    """The planning numbers of a numeric, check-all-that-apply or list-experiment question."""
    return PLANNERS[q.type](q, target_n, margin, confidence)
