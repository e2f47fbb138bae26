"""Planning a survey: how many respondents each question needs at its ε, beside no privacy.

Shared by ``deniable plan`` and the planning panel of the dashboard's survey builder; the
numbers come from :func:`deniable.estimators.plan` (respondents needed, and the worst-case π)
and :func:`~deniable.estimators.worst_case` (the margin at a given n).
"""

from __future__ import annotations

from deniable import estimators
from deniable.client.mechanism import mechanism

from .definition import Survey
from .estimates import grid
from .explain import explain, explain_survey

def plan_rows(k: int, margin: float, epsilons, *, confidence: float = 0.95) -> list[dict]:
    """Respondents needed for a ``margin`` (half-width) at each ε, beside the no-privacy baseline.

    Each row also says what that n delivers: the exact interval's worst-case expected half-width
    and the true proportion π where that worst case is (:func:`deniable.estimators.plan`).
    """
    baseline = estimators.plan(None, k, margin, confidence=confidence)
    rows = []
    for epsilon in epsilons:
        mech = mechanism(k, epsilon)
        needed = estimators.plan(epsilon, k, margin, confidence=confidence)
        rows.append({
            "declared_epsilon": mech.declared_epsilon, "epsilon": mech.epsilon, "p": mech.p, "q": mech.q,
            "n": needed.n, "half_width": needed.half_width, "worst_pi": needed.worst_pi,
            "n_without_privacy": baseline.n, "worst_pi_without_privacy": baseline.worst_pi,
            "ratio": needed.n / baseline.n if baseline.n else None,
        })
    return rows


def plan_table(k: int, margin: float, confidence: float, rows: list[dict]) -> str:
    lines = [f"Respondents needed for a margin of ±{100 * margin:g} points at {100 * confidence:g}% "
             f"confidence, k = {k} options",
             "(worst case over the true proportion π of the exact interval's expected half-width, "
             "summed exactly)"]
    table = [[f"{r['declared_epsilon']:g}", f"{r['epsilon']:.4f}", f"{r['p']:.4f}", f"{r['q']:.4f}",
              f"{r['n']:,}", f"±{r['half_width']:.4f}", f"{r['worst_pi']:.2f}", f"{r['n_without_privacy']:,}",
              f"×{r['ratio']:.1f}"] for r in rows]
    lines += grid(["ε", "realized ε", "p (keep)", "q", "respondents", "half-width", "worst π", "without privacy",
                   "cost"], table)
    return "\n".join(lines) + "\n"


def survey_plan(survey: Survey, target_n: int, margin: float) -> dict:
    """Per question the margin at ``target_n`` and the respondents needed for ``margin``, each
    beside the no-privacy baseline, the plain-words explanation, and the survey's total ε.

    The margins are worst cases over the true proportion; ``worst_pi`` / ``baseline_worst_pi``
    say where.  Every number is cached by the estimators, so a page view after the first costs
    well under a millisecond per question.
    """
    rows = []
    for q in survey.questions:
        baseline = estimators.worst_case(None, q.k, target_n)
        row = {
            "question": q,
            "baseline_moe": baseline.half_width, "baseline_worst_pi": baseline.worst_pi,
            "baseline_needed": estimators.sample_size(None, q.k, margin),
        }
        if q.protected:
            worst = estimators.worst_case(q.epsilon, q.k, target_n)
            row.update(
                mechanism=q.mechanism, explain=explain(q.epsilon, q.k),
                moe=worst.half_width, worst_pi=worst.worst_pi,
                needed=estimators.sample_size(q.epsilon, q.k, margin),
            )
        rows.append(row)
    return {"rows": rows, "target_n": target_n, "margin": margin, "total": explain_survey(survey)["total"]}
