"""Planning the question types beyond single choice: numbers, check all that apply, list experiments.

Shared shape with :mod:`.planning` (single choice): per ε, the respondents a wanted margin needs,
beside no privacy.  The numbers come from :mod:`deniable.estimators`:

* **numeric** — :func:`~deniable.estimators.numeric.plan_numeric`: every candidate mechanism
  (grid randomized response for each G dividing the steps up to 50, and m; discrete Laplace), the
  worst-case variance of the mean per report, the respondents the chosen one (least worst-case
  variance) needs for the margin of the mean, and every alternative's margin at that many
  respondents.  Margins are in the question's units (answer-index units times the step).
* **multi** — each option is binary randomized response at ε/K, so its per-option plan is
  exactly that of a yes/no question at ε/K (:func:`deniable.estimators.plan`, exact).
* **list** — :func:`~deniable.estimators.listexp.list_sample_size`: the margin of the
  difference in means, plain (not protected by ε) and at each ε.
"""

from __future__ import annotations

import math

from deniable.client.listexp import check_items, list_mechanism
from deniable.client.multi import bit_epsilon, check_multi_k, multi_mechanism
from deniable.estimators.binomial import z
from deniable.estimators.listexp import list_sample_size
from deniable.estimators.numeric import plan_numeric
from deniable.estimators.planning import model_half_width, plan

from .definition import DefinitionError, Question, number, parse_question
from .estimates import grid

EXACT_UP_TO = 10**6  # multi: beyond this many respondents (large-sample guess) the large-sample n is shown


class PlanInputError(ValueError):
    """A planning input is wrong; ``option`` names the command-line option it came from."""

    def __init__(self, option: str, problem: str):
        self.option, self.problem = option, problem
        super().__init__(f"{option}: {problem}")


# ---------------------------------------------------------------- numeric


def numeric_question(minimum, maximum, step=None) -> Question:
    """The numeric question ``minimum..maximum`` in steps of ``step``, checked as a definition is."""
    data = {"id": "planned", "text": "planned", "type": "numeric", "min": minimum, "max": maximum}
    if step is not None:
        data["step"] = step
    try:
        return parse_question(data)
    except DefinitionError as exc:
        option = "--step" if exc.path[-1] == "step" and step is not None else "--numeric"
        raise PlanInputError(option, exc.problem if option == "--step" else f"{exc.field}: {exc.problem}") from None


def numeric_plan_rows(question: Question, margin: float, epsilons, confidence: float = 0.95) -> list[dict]:
    """Per ε: the planner's mechanism, the respondents it needs for ``margin`` (question units)
    and every candidate's margin of the mean at that many respondents (worst case and uniform
    answers), best first."""
    step, m = float(question.step), question.steps
    index_margin = margin / step
    zq = z(confidence)
    rows = []
    for epsilon in epsilons:
        best = plan_numeric(m, epsilon, 1, confidence, margin=index_margin)[0]
        n = best.needed
        candidates = plan_numeric(m, epsilon, n, confidence, margin=index_margin)
        rows.append({
            "declared_epsilon": float(epsilon), "mechanism": best.mechanism, "grid": best.grid,
            "epsilon": best.epsilon, "n": n,
            "n_without_privacy": math.ceil((zq * m / 2 / index_margin) ** 2),
            "candidates": [{
                "mechanism": c.mechanism, "grid": c.grid, "epsilon": c.epsilon,
                "margin_worst": float(c.margin_worst) * step, "margin_uniform": float(c.margin_uniform) * step,
                "needed": c.needed,
            } for c in candidates],
        })
        rows[-1]["ratio"] = n / rows[-1]["n_without_privacy"]
    return rows


def _name(candidate: dict) -> str:
    return "Laplace" if candidate["mechanism"] == "laplace" else f"grid G={candidate['grid']}"


def numeric_plan_table(question: Question, margin: float, confidence: float, rows: list[dict],
                       alternatives: int = 4) -> str:
    low, high, step = (number(v) for v in (question.minimum, question.maximum, question.step))
    lines = [(f"Respondents needed for a margin of ±{margin:g} on the mean at {100 * confidence:g}% confidence, "
              f"numeric {low}..{high} in steps of {step} ({question.steps + 1} answers)"),
             ("(worst case over the answers' distribution on the range; the planner's mechanism has the least "
              "worst-case variance)")]
    table = [[f"{r['declared_epsilon']:g}", _name(r["candidates"][0]), f"{r['epsilon']:.4f}", f"{r['n']:,}",
              f"{r['n_without_privacy']:,}", f"×{r['ratio']:.1f}"] for r in rows]
    lines += grid(["ε", "mechanism", "realized ε", "respondents", "without privacy", "cost"], table)
    for r in rows:
        shown = r["candidates"][:alternatives]
        if not any(c["mechanism"] == "laplace" for c in shown):
            shown += [c for c in r["candidates"] if c["mechanism"] == "laplace"]
        lines.append(f"ε = {r['declared_epsilon']:g}: margin of each mechanism with {r['n']:,} respondents "
                     f"({len(r['candidates'])} compared)")
        lines += grid(["mechanism", "worst case", "uniform answers", "respondents (worst case)"],
                      [[_name(c), f"±{c['margin_worst']:.4g}", f"±{c['margin_uniform']:.4g}", f"{c['needed']:,}"]
                       for c in shown], indent="    ")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- check all that apply


def multi_plan_rows(k: int, margin: float, epsilons, confidence: float = 0.95) -> list[dict]:
    """Per ε: the per-option plan of a K-option question (binary randomized response at ε/K)."""
    try:
        k = check_multi_k(k)
    except ValueError as exc:
        raise PlanInputError("--multi", str(exc)) from None
    baseline = plan(None, 2, margin, confidence=confidence)
    rows = []
    for epsilon in epsilons:
        mech = multi_mechanism(k, epsilon)
        guess = (z(confidence) / (2 * margin * (mech.p - mech.q))) ** 2
        if guess <= EXACT_UP_TO:
            needed = plan(bit_epsilon(epsilon, k), 2, margin, confidence=confidence)
            n, half_width, exact = needed.n, needed.half_width, True
        else:  # the exact search takes minutes here; the large-sample model is within a fraction of a percent
            n = math.ceil(guess)
            half_width, exact = model_half_width(n, mech.p, mech.q, z(confidence))[0], False
        rows.append({
            "declared_epsilon": mech.declared_epsilon, "epsilon": mech.epsilon,
            "bit_epsilon": mech.bit.declared_epsilon, "realized_bit_epsilon": mech.bit.epsilon,
            "p": mech.p, "q": mech.q, "n": n, "half_width": half_width, "exact": exact,
            "n_without_privacy": baseline.n, "ratio": n / baseline.n,
        })
    return rows


def multi_plan_table(k: int, margin: float, confidence: float, rows: list[dict]) -> str:
    lines = [(f"Respondents needed for a margin of ±{100 * margin:g} points on each option's prevalence at "
              f"{100 * confidence:g}% confidence, check all that apply with K = {k} options"),
             f"(each option's tick is yes/no randomized response at ε/{k}; exact worst case over the prevalence"
             + (", ~ = large-sample)" if not all(r["exact"] for r in rows) else ")")]
    table = [[f"{r['declared_epsilon']:g}", f"{r['bit_epsilon']:.4g}", f"{r['epsilon']:.4f}", f"{r['p']:.4f}",
              ("" if r["exact"] else "~") + f"{r['n']:,}", f"±{r['half_width']:.4f}", f"{r['n_without_privacy']:,}",
              f"×{r['ratio']:.1f}"] for r in rows]
    lines += grid(["ε", "ε per option", "realized ε", "p (keep)", "respondents", "half-width", "without privacy",
                   "cost"], table)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- list experiment


def list_plan_rows(items: int, margin: float, epsilons, confidence: float = 0.95) -> list[dict]:
    """The plain list experiment, then each ε: respondents (half per arm) for the prevalence's margin."""
    try:
        items = check_items(items)
    except ValueError as exc:
        raise PlanInputError("--list", str(exc)) from None
    rows = []
    for epsilon in (None, *epsilons):
        mech = list_mechanism(items, epsilon)
        needed = list_sample_size(items, epsilon, margin, confidence)
        rows.append({"declared_epsilon": None if epsilon is None else mech.rr.declared_epsilon,
                     "epsilon": mech.epsilon if mech.protected else None,
                     "p": mech.rr.p, "q": mech.rr.q, **needed})
    plain = rows[0]["needed_worst"]
    for r in rows:
        r["ratio"] = r["needed_worst"] / plain
    return rows


def list_plan_table(items: int, margin: float, confidence: float, rows: list[dict]) -> str:
    lines = [(f"Respondents needed (half per arm) for a margin of ±{100 * margin:g} points on the sensitive "
              f"item's prevalence at {100 * confidence:g}% confidence, list experiment with J = {items} control items"),
             ("(difference in means; worst case: every arm's counts at the two ends of their range; typical: "
              "control items held by half, the sensitive one by 10%)")]
    table = [["plain (not protected by ε)" if r["declared_epsilon"] is None else f"{r['declared_epsilon']:g}",
              "—" if r["epsilon"] is None else f"{r['epsilon']:.4f}", f"{r['needed_worst']:,}",
              f"{r['needed_typical']:,}", f"×{r['ratio']:.1f}"] for r in rows]
    lines += grid(["ε", "realized ε", "respondents (worst)", "respondents (typical)", "cost"], table)
    return "\n".join(lines) + "\n"
