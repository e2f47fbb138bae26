"""Planning a survey: how many respondents each question needs at its ε, beside no privacy.

Shared by ``deniable plan`` and the planning panel of the dashboard's survey builder (rendered
with the page and updated live from ``/dashboard/plan.json`` as the researcher types); the
numbers come from :func:`deniable.estimators.planning.plans` (respondents needed, and the worst-case π)
and :func:`~deniable.estimators.worst_case` (the margin at a given n).

The respondents needed are the decided search's (:func:`plans` here, issue 40): an n whose exact
worst-case half-width meets the margin (``h(n) ≤ margin``, computed exactly), on the tooth of h's
sawtooth the trend reaches or a nearby one — at most 1 % above the smallest n that delivers (on the
golden grid, ``tests/unit/test_plan_golden.py``), found with two or three exact h(n) instead of the
exhaustive search's ten to twenty.  The exhaustive search (``decided=False``) stays the library's
default (:func:`deniable.estimators.plan`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from deniable.client.mechanism import mechanism, resolve
from deniable.estimators import planning
from deniable.estimators.binomial import z
from deniable.estimators.planning import Plan, model_half_width, worst_case, worst_cases

from .survey_result import SurveyResult
from .tables import grid


def plans(requests, *, confidence: float = 0.95, also=(), decided: bool = True) -> list[Plan]:
    """:func:`deniable.estimators.planning.plans`, decided by default: what every planner shown to a
    researcher uses (``deniable plan``, the builder's panel)."""
    return planning.plans(requests, confidence=confidence, also=also, decided=decided)


def plan(epsilon, k: int, margin: float, *, confidence: float = 0.95, decided: bool = True) -> Plan:
    """One request of :func:`plans`."""
    return plans([(epsilon, k, margin)], confidence=confidence, decided=decided)[0]


def plan_rows(k: int, margin: float, epsilons, *, confidence: float = 0.95, decided: bool = True) -> list[dict]:
    """Respondents needed for a ``margin`` (half-width) at each ε, beside the no-privacy baseline.

    Each row also says what that n delivers: the exact interval's worst-case expected half-width
    and the true proportion π where that worst case is (:func:`plans`; ``decided=False``: the
    exhaustive search's n, the smallest that delivers on the tooth the trend reaches).
    """
    # every ε and the baseline searched side by side, their belts computed together (the same numbers)
    baseline, *needs = plans([(None, k, margin)] + [(epsilon, k, margin) for epsilon in epsilons],
                             confidence=confidence, decided=decided)
    rows = []
    for epsilon, needed in zip(epsilons, needs):
        mech = mechanism(k, epsilon)
        rows.append({
            "declared_epsilon": mech.declared_epsilon, "epsilon": mech.epsilon, "p": mech.p, "q": mech.q,
            "n": needed.n, "half_width": needed.half_width, "worst_pi": needed.worst_pi,
            "n_without_privacy": baseline.n, "worst_pi_without_privacy": baseline.worst_pi,
            "ratio": needed.n / baseline.n if baseline.n else None,
        })
    return rows


def with_design_effect(rows: list[dict], deff: float) -> list[dict]:
    """The rows of :func:`plan_rows` for a complex sample with design effect ``deff``: the respondents
    needed multiplied by ``deff``, rounded up.

    A design effect is the variance of the design's estimate over a simple random sample's at the
    same n (Kish 1965, *Survey Sampling*), so the same margin needs ``deff × n`` respondents: with
    unequal weights alone ``deff ≈ 1 + CV²`` of the weights, with clusters of m respondents
    ``≈ 1 + (m − 1)·ICC``.  It applies to the share of reports, whose variance the mechanism only
    rescales; randomization adds noise that is independent between respondents, so a design effect
    measured on answers asked directly overstates the clustering part (conservative).  The simple
    random sample's numbers are kept (``n_simple_random_sample``, ``n_without_privacy_simple_random_sample``).
    """
    out = []
    for r in rows:
        out.append({**r, "design_effect": deff,
                    "n": math.ceil(r["n"] * deff - 1e-9), "n_simple_random_sample": r["n"],
                    "n_without_privacy": math.ceil(r["n_without_privacy"] * deff - 1e-9),
                    "n_without_privacy_simple_random_sample": r["n_without_privacy"]})
    return out


@dataclass(frozen=True, eq=False, kw_only=True)
class SurveyPlan(SurveyResult):
    """What ``deniable plan`` answers for one question: the respondents a wanted ``margin`` needs,
    one row per plan (per ε, or the design's), beside no privacy.

    :meth:`to_dict` is ``--format json``'s document and :meth:`table` the text it prints; a kind of
    question (a subclass: :class:`ChoicePlan` here, the others in :mod:`.type_planning`) says only its
    document's leading keys (:meth:`head`), its heading, its columns and a row's cells.
    """

    margin: float
    confidence: float
    rows: list[dict]

    columns: ClassVar[tuple[str, ...]] = ()

    def head(self) -> dict:
        """The document's keys before ``margin`` and ``confidence``."""
        return {}

    def extra(self) -> dict:
        """The document's keys after ``confidence``, before ``plans``."""
        return {}

    def to_dict(self) -> dict:
        return {**self.head(), "margin": self.margin, "confidence": self.confidence, **self.extra(),
                "plans": self.rows}

    def heading(self) -> list[str]:
        raise NotImplementedError

    def header(self) -> list[str]:
        return list(self.columns)

    def cells(self, r: dict) -> list[str]:
        raise NotImplementedError

    def details(self) -> list[str]:
        """Lines after the table (none but a numeric question's alternatives)."""
        return []

    def table(self) -> str:
        lines = [*self.heading(), *grid(self.header(), [self.cells(r) for r in self.rows]), *self.details()]
        return "\n".join(lines) + "\n"

    # pieces the kinds share

    @property
    def points(self) -> str:
        """The margin of a proportion, in percentage points: ``±3``."""
        return f"±{100 * self.margin:g} points"

    @property
    def at_confidence(self) -> str:
        return f"{100 * self.confidence:g}% confidence"

    def approximate(self, word: str) -> str:
        """The heading's closing parenthesis, saying what ``~`` marks when a row is not exact."""
        return ")" if all(r["exact"] for r in self.rows) else f", ~ = {word})"

    @staticmethod
    def respondents(r: dict) -> str:
        """A row's respondents, ``~`` before one that is not exact."""
        return ("" if r["exact"] else "~") + f"{r['n']:,}"


@dataclass(frozen=True, eq=False, kw_only=True)
class ChoicePlan(SurveyPlan):
    """``deniable plan --k K`` (with ``--deff``, a weighted or clustered sample's): :func:`plan_rows`."""

    k: int
    deff: float | None = None

    def head(self) -> dict:
        return {"k": self.k}

    def extra(self) -> dict:
        return {"design_effect": self.deff} if self.deff else {}

    def heading(self) -> list[str]:
        lines = [f"Respondents needed for a margin of {self.points} at {self.at_confidence}, k = {self.k} options",
                 "(worst case over the true proportion π of the exact interval's expected half-width, summed exactly)"]
        if self.deff is not None:
            lines.append(f"design effect {self.deff:g}: the respondents a simple random sample needs, multiplied by "
                         f"{self.deff:g}")
        return lines

    def header(self) -> list[str]:
        return ["ε", "realized ε", "p (keep)", "q", "respondents", "half-width", "worst π", "without privacy",
                "cost"] + (["simple random sample"] if self.deff is not None else [])

    def cells(self, r: dict) -> list[str]:
        return [f"{r['declared_epsilon']:g}", f"{r['epsilon']:.4f}", f"{r['p']:.4f}", f"{r['q']:.4f}", f"{r['n']:,}",
                f"±{r['half_width']:.4f}", f"{r['worst_pi']:.2f}", f"{r['n_without_privacy']:,}",
                f"×{r['ratio']:.1f}"] + ([f"{r['n_simple_random_sample']:,}"] if self.deff is not None else [])


def choice_plan(k: int, margin: float, epsilons, *, confidence: float = 0.95, deff: float | None = None) -> ChoicePlan:
    """``deniable plan --k K``: :func:`plan_rows`, with ``deff`` :func:`with_design_effect`'s."""
    rows = plan_rows(k, margin, epsilons, confidence=confidence)
    if deff is not None:
        rows = with_design_effect(rows, deff)
    return ChoicePlan(k=k, margin=margin, confidence=confidence, rows=rows, deff=deff)


LIVE_N = 50_000  # the builder computes numbers exactly up to this many respondents (beyond: over 5 s each)


def _about(n: float) -> int:
    """A large number rounded to 2 significant figures, for "about N respondents"."""
    digits = max(0, len(str(int(n))) - 2)
    return int(round(n, -digits))


def question_plan(epsilon, k: int, target_n: int, margin: float, confidence: float = 0.95) -> dict:
    """One question's planning numbers, for the builder's panel (server-rendered and live).

    ``moe`` / ``baseline_moe``: the worst-case expected half-width at ``target_n`` with the
    question's ε and without privacy; ``needed`` / ``baseline_needed``: the respondents a
    ``margin`` needs, the same numbers as ``deniable plan``.  Exact up to :data:`LIVE_N`
    respondents; beyond, where an exact number takes seconds, a large-sample estimate rounded
    to two figures, flagged by ``*_exact = False`` (``deniable plan`` still gives the exact one).
    """
    mech = resolve(k, epsilon)
    baseline = resolve(k, None)
    z_ = z(confidence)
    out = {"k": k, "target_n": target_n, "margin": margin, "confidence": confidence,
           "protected": epsilon is not None}
    # the exact numbers below, computed first side by side (their belts in one batch each step)
    at_target = [(epsilon, k, target_n), (None, k, target_n)] if target_n <= LIVE_N else []
    plans([(e, k, margin) for e, m in ((epsilon, mech), (None, baseline))
           if (z_ / (2 * margin * (m.p - m.q))) ** 2 <= LIVE_N], confidence=confidence, also=at_target)
    worst_cases(at_target, confidence=confidence)  # from memory, unless no search needed computing
    for prefix, m in (("", mech), ("baseline_", baseline)):
        if target_n <= LIVE_N:
            worst = worst_case(epsilon if m is mech else None, k, target_n, confidence=confidence)
            out[f"{prefix}moe"], out[f"{prefix}worst_pi"] = worst.half_width, worst.worst_pi
            out[f"{prefix}moe_exact"] = True
        else:
            out[f"{prefix}moe"] = model_half_width(target_n, m.p, m.q, z_)[0]
            out[f"{prefix}worst_pi"] = None
            out[f"{prefix}moe_exact"] = False
        # the large-sample n, to decide whether the exact search is affordable
        approx = (z_ / (2 * margin * (m.p - m.q))) ** 2
        if approx <= LIVE_N:
            out[f"{prefix}needed"] = plans([(epsilon if m is mech else None, k, margin)],
                                           confidence=confidence)[0].n  # from memory: computed above
            out[f"{prefix}needed_exact"] = True
        else:
            out[f"{prefix}needed"] = _about(approx)
            out[f"{prefix}needed_exact"] = False
    if epsilon is not None:
        from .explain import explain  # babel: only for the builder's panel

        info = explain(epsilon, k)
        out.update(epsilon=mech.epsilon, declared_epsilon=mech.declared_epsilon, p=mech.p, q=mech.q,
                   threshold=mech.threshold, coin=info["coin"], posterior=info["posterior"], warning=info["warning"],
                   short=info["short"], odds=info["odds"])
    return out
