"""Planning the question types beyond single choice: numbers, check all that apply, list experiments.

The same numbers as :mod:`.planning` gives single choice, in two shapes: the builder's panel for
one question at the survey's target n (``*_plan``), and ``deniable plan``'s table per ε of the
respondents a wanted margin needs, beside no privacy (``*_plan_rows``, shown as a :class:`.planning.SurveyPlan`:
:class:`NumericPlan`, :class:`MultiPlan`, :class:`DesignPlan`, :class:`ListPlan`).  The
surfaces reach them through the question's type (:meth:`QuestionType.plan
<.questions.base.QuestionType.plan>` and ``plan_cli`` in each type's module; :func:`typed_plan`),
never by its name.
The numbers come from :mod:`deniable.estimators`:

* **numeric** — :func:`~deniable.estimators.numeric.plan_numeric`: every candidate mechanism
  (grid randomized response for each G dividing the steps up to 50, and m; discrete Laplace), the
  worst-case variance of the mean per report, best first (the planner's choice: least worst-case
  variance), the respondents it needs for the margin of the mean, and every alternative's margin.
  Margins are in the question's units (answer-index units times the step), worst case over the
  answers' distribution and with answers spread evenly.
* **multi** — each option is binary randomized response at ε/K, so its per-option plan is
  exactly that of a yes/no question at ε/K (:func:`.planning.question_plan`, :func:`.planning.plan`:
  the decided search, exact).
* **design** (a single choice randomized by a design of :mod:`deniable.client.designs`) —
  :func:`~deniable.estimators.designs.plan_design`: exact for binary designs and forced response
  (their report counts are binomial, affine in a share: :func:`deniable.estimators.planning.plan_channel`),
  the normal approximation for other designs with more than two answers, labelled so.
* **list** — the margin of the difference in means (the sensitive item's prevalence), half the
  respondents in each arm (:func:`~deniable.estimators.listexp.list_margin`,
  :func:`~deniable.estimators.listexp.list_sample_size`), worst case and typical, plain (not
  protected by ε) beside each ε.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from deniable.client.listexp import check_items, list_mechanism
from deniable.client.mechanism import MechanismError
from deniable.client.multi import bit_epsilon, check_multi_k, multi_mechanism
from deniable.client.numeric import MECHANISM_KINDS
from deniable.errors import FieldError
from deniable.estimators.binomial import z
from deniable.estimators.planning import model_half_width

from .questions.base import decimal_text
from .definition import Question, number
from .estimates import grid
from .planning import SurveyPlan, plan, question_plan

EXACT_UP_TO = 10**6  # multi: beyond this many respondents (large-sample guess) the large-sample n is shown


class PlanInputError(FieldError):
    """A planning input is wrong; ``option`` (and ``field``) names the command-line option it came from."""

    def __init__(self, option: str, problem: str):
        self.option, self.problem = option, problem
        super().__init__(f"{option}: {problem}", option)


# ---------------------------------------------------------------- numeric


def numeric_plan_rows(question: Question, margin: float, epsilons, confidence: float = 0.95) -> list[dict]:
    """Per ε: the planner's mechanism, the respondents it needs for ``margin`` (question units)
    and every candidate's margin of the mean at that many respondents (worst case and uniform
    answers), best first."""
    from deniable.estimators.numeric import plan_numeric  # imported here: scipy.signal and scipy.stats

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


def _label(candidate: dict) -> str:
    """A candidate's name in the table, as its mechanism says (:attr:`deniable.client.numeric.MECHANISM_KINDS`)."""
    return MECHANISM_KINDS[candidate["mechanism"]].plan_label(candidate["grid"])


@dataclass(frozen=True, eq=False, kw_only=True)
class NumericPlan(SurveyPlan):
    """``deniable plan --numeric MIN MAX``: :func:`numeric_plan_rows`, then each ε's best ``alternatives``
    candidates (and the ones a plan always shows: Laplace)."""

    type: str
    question: Question
    alternatives: int = 4

    columns: ClassVar[tuple[str, ...]] = ("ε", "mechanism", "realized ε", "respondents", "without privacy", "cost")

    def head(self) -> dict:
        q = self.question
        return {"type": self.type, "min": float(q.minimum), "max": float(q.maximum), "step": float(q.step),
                "answers": q.steps + 1}

    def heading(self) -> list[str]:
        q = self.question
        low, high, step = (number(v) for v in (q.minimum, q.maximum, q.step))
        return [(f"Respondents needed for a margin of ±{self.margin:g} on the mean at {self.at_confidence}, "
                 f"numeric {low}..{high} in steps of {step} ({q.steps + 1} answers)"),
                ("(worst case over the answers' distribution on the range; the planner's mechanism has the least "
                 "worst-case variance)")]

    def cells(self, r: dict) -> list[str]:
        return [f"{r['declared_epsilon']:g}", _label(r["candidates"][0]), f"{r['epsilon']:.4f}", f"{r['n']:,}",
                f"{r['n_without_privacy']:,}", f"×{r['ratio']:.1f}"]

    def details(self) -> list[str]:
        lines = []
        for r in self.rows:
            rest = r["candidates"][self.alternatives:]
            shown = r["candidates"][:self.alternatives] + [
                c for c in rest if MECHANISM_KINDS[c["mechanism"]].always_planned]
            lines.append(f"ε = {r['declared_epsilon']:g}: margin of each mechanism with {r['n']:,} respondents "
                         f"({len(r['candidates'])} compared)")
            lines += grid(["mechanism", "worst case", "uniform answers", "respondents (worst case)"],
                          [[_label(c), f"±{c['margin_worst']:.4g}", f"±{c['margin_uniform']:.4g}", f"{c['needed']:,}"]
                           for c in shown], indent="    ")
        return lines


# ---------------------------------------------------------------- check all that apply


def multi_plan_rows(k: int, margin: float, epsilons, confidence: float = 0.95) -> list[dict]:
    """Per ε: the per-option plan of a K-option question (binary randomized response at ε/K)."""
    try:
        k = check_multi_k(k)
    except MechanismError as exc:
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


@dataclass(frozen=True, eq=False, kw_only=True)
class MultiPlan(SurveyPlan):
    """``deniable plan --multi K``: :func:`multi_plan_rows`."""

    type: str
    k: int

    columns: ClassVar[tuple[str, ...]] = ("ε", "ε per option", "realized ε", "p (keep)", "respondents", "half-width",
                                          "without privacy", "cost")

    def head(self) -> dict:
        return {"type": self.type, "options": self.k}

    def heading(self) -> list[str]:
        return [(f"Respondents needed for a margin of {self.points} on each option's prevalence at "
                 f"{self.at_confidence}, check all that apply with K = {self.k} options"),
                f"(each option's tick is yes/no randomized response at ε/{self.k}; exact worst case over the prevalence"
                + self.approximate("large-sample")]

    def cells(self, r: dict) -> list[str]:
        return [f"{r['declared_epsilon']:g}", f"{r['bit_epsilon']:.4g}", f"{r['epsilon']:.4f}", f"{r['p']:.4f}",
                self.respondents(r), f"±{r['half_width']:.4f}", f"{r['n_without_privacy']:,}", f"×{r['ratio']:.1f}"]


# ---------------------------------------------------------------- randomized-response designs


def design_plan_rows(spec, margin: float, confidence: float = 0.95) -> list[dict]:
    """``deniable plan --design JSON``: the respondents the design needs for ``margin`` on every answer's
    share, beside the same question asked directly (exact both)."""
    import json

    from deniable.client.designs import DesignError, from_definition
    from deniable.estimators.designs import plan_design

    try:
        raw = json.loads(spec) if isinstance(spec, str) else spec
    except json.JSONDecodeError as exc:
        raise PlanInputError("--design", f"not JSON: {exc}") from None
    if not isinstance(raw, dict) or "name" not in raw:
        raise PlanInputError("--design", 'a JSON object with a "name", e.g. {"name": "forced", "p": 0.6, '
                                         '"forced": [0.3, 0.1]}')
    k = len(raw["forced"]) if isinstance(raw.get("forced"), list) else (
        len(raw["matrix"][0]) if isinstance(raw.get("matrix"), list) and raw["matrix"]
        and isinstance(raw["matrix"][0], list) else 2)
    try:
        design = from_definition(raw, [f"answer {t + 1}" for t in range(k)])
    except DesignError as exc:
        raise PlanInputError("--design", str(exc)) from None
    except (KeyError, TypeError, FieldError) as exc:  # a MechanismError: too many answers
        raise PlanInputError("--design", f"cannot read the design: {exc}") from None
    planned = plan_design(design, margin, confidence=confidence, decided=True)
    baseline = plan(None, design.k, margin, confidence=confidence)
    return [{"design": design.name, "k": design.k, "epsilon": design.epsilon if design.ldp else None,
             "ldp": design.ldp, "n": planned.n, "half_width": planned.half_width, "exact": planned.exact,
             "method": planned.method, "n_without_privacy": baseline.n, "ratio": planned.n / baseline.n}]


@dataclass(frozen=True, eq=False, kw_only=True)
class DesignPlan(SurveyPlan):
    """``deniable plan --design JSON``: :func:`design_plan_rows` (one row, the design's own ε)."""

    columns: ClassVar[tuple[str, ...]] = ("design", "realized ε", "respondents", "half-width", "without privacy",
                                          "cost")

    def heading(self) -> list[str]:
        r = self.rows[0]
        return [(f"Respondents needed for a margin of {self.points} on every answer's share at "
                 f"{self.at_confidence}, {r['design']} design with {r['k']} answers"),
                f"({r['method']}" + self.approximate("approximate")]

    def cells(self, r: dict) -> list[str]:
        return [r["design"], "not ε-LDP" if r["epsilon"] is None else f"{r['epsilon']:.4f}", self.respondents(r),
                f"±{r['half_width']:.4f}", f"{r['n_without_privacy']:,}", f"×{r['ratio']:.1f}"]


def design_plan(q: Question, target_n: int, margin: float, confidence: float = 0.95) -> dict:
    """The builder panel's numbers of a designed single choice: the worst-case half-width at ``target_n``
    and the respondents ``margin`` needs, beside asked directly (:func:`.planning.question_plan`'s keys)."""
    from deniable.estimators.designs import design_margin, plan_design

    from .questions.choice import design_of

    design = design_of(q)
    planned = plan_design(design, margin, confidence=confidence, decided=True)
    moe, exact = design_margin(design, target_n, confidence=confidence)
    direct = question_plan(None, q.k, target_n, margin, confidence)
    return {"k": q.k, "target_n": target_n, "margin": margin, "confidence": confidence, "protected": design.ldp,
            "design": design.name, "epsilon": design.epsilon if design.ldp else None,
            "moe": moe, "moe_exact": exact, "needed": planned.n, "needed_exact": planned.exact,
            "method": planned.method, "baseline_moe": direct["baseline_moe"],
            "baseline_needed": direct["baseline_needed"]}


# ---------------------------------------------------------------- list experiment


def list_plan_rows(items: int, margin: float, epsilons, confidence: float = 0.95) -> list[dict]:
    """The plain list experiment, then each ε: respondents (half per arm) for the prevalence's margin."""
    from deniable.estimators.listexp import list_sample_size  # imported here: scipy.stats

    try:
        items = check_items(items)
    except MechanismError as exc:
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


@dataclass(frozen=True, eq=False, kw_only=True)
class ListPlan(SurveyPlan):
    """``deniable plan --list J``: :func:`list_plan_rows` (the plain list experiment first)."""

    type: str
    items: int

    columns: ClassVar[tuple[str, ...]] = ("ε", "realized ε", "respondents (worst)", "respondents (typical)", "cost")

    def head(self) -> dict:
        return {"type": self.type, "items": self.items}

    def heading(self) -> list[str]:
        return [(f"Respondents needed (half per arm) for a margin of {self.points} on the sensitive item's "
                 f"prevalence at {self.at_confidence}, list experiment with J = {self.items} control items"),
                ("(difference in means; worst case: every arm's counts at the two ends of their range; typical: "
                 "control items held by half, the sensitive one by 10%)")]

    def cells(self, r: dict) -> list[str]:
        return ["plain (not protected by ε)" if r["declared_epsilon"] is None else f"{r['declared_epsilon']:g}",
                "—" if r["epsilon"] is None else f"{r['epsilon']:.4f}", f"{r['needed_worst']:,}",
                f"{r['needed_typical']:,}", f"×{r['ratio']:.1f}"]


# ---------------------------------------------------------------- the builder's panel


def numeric_plan(q: Question, target_n: int, margin: float, confidence: float = 0.95) -> dict:
    """The candidates' margins of the mean (question units), the one in use and the planner's choice."""
    from deniable.estimators.numeric import plan_numeric

    step = float(q.step)
    wanted = margin * q.steps  # the margin, as a share of the range, in answer-index units
    out = {"protected": q.protected, "target_n": target_n, "margin": margin,
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
    out = {"protected": q.protected, "k": q.k, "target_n": target_n, "margin": margin,
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
    from deniable.estimators.listexp import list_margin

    items = len(q.options)
    mine = list_margin(items, q.epsilon, target_n, confidence=confidence)
    plain = list_margin(items, None, target_n, confidence=confidence)
    out = {"protected": q.protected, "items": items, "target_n": target_n, "margin": margin,
           "moe": mine.margin_worst, "moe_typical": mine.margin_typical,
           "needed": _list_needed(mine.margin_worst, target_n, margin),
           "baseline_moe": plain.margin_worst, "baseline_needed": _list_needed(plain.margin_worst, target_n, margin),
           "epsilon": q.mechanism.epsilon if q.protected else None}
    if q.protected:
        out.update(declared_epsilon=q.epsilon, k=q.mechanism.k, p=q.mechanism.rr.p)
    return out


def typed_plan(q: Question, target_n: int, margin: float, confidence: float = 0.95) -> dict:
    """The builder panel's planning numbers of ``q``, whatever its type (:meth:`QuestionType.plan
    <.questions.base.QuestionType.plan>`; NotAvailable, with the reason, for a type without any)."""
    return q.qtype.plan(q, target_n, margin, confidence)
