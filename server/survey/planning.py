"""Planning a survey: how many respondents each question needs at its ε, beside no privacy.

Shared by ``deniable plan`` and the planning panel of the dashboard's survey builder; the
numbers come from :func:`deniable.estimators.sample_size` and
:func:`~deniable.estimators.margin_of_error`.
"""

from __future__ import annotations

from deniable import estimators
from deniable.client.mechanism import mechanism

from .definition import Survey
from .estimates import grid
from .explain import explain, explain_survey

def plan_rows(k: int, margin: float, epsilons, *, confidence: float = 0.95) -> list[dict]:
    """Respondents needed for a ``margin`` (half-width) at each ε, beside the no-privacy baseline."""
    baseline = int(estimators.sample_size(None, k, margin, confidence=confidence))
    rows = []
    for epsilon in epsilons:
        mech = mechanism(k, epsilon)
        n = int(estimators.sample_size(epsilon, k, margin, confidence=confidence))
        rows.append({
            "declared_epsilon": mech.declared_epsilon, "epsilon": mech.epsilon, "p": mech.p, "q": mech.q,
            "n": n, "n_without_privacy": baseline, "ratio": n / baseline if baseline else None,
        })
    return rows


def plan_table(k: int, margin: float, confidence: float, rows: list[dict]) -> str:
    lines = [f"Respondents needed for a margin of ±{100 * margin:g} points at {100 * confidence:g}% "
             f"confidence, k = {k} options"]
    table = [[f"{r['declared_epsilon']:g}", f"{r['epsilon']:.4f}", f"{r['p']:.4f}", f"{r['q']:.4f}",
              f"{r['n']:,}", f"{r['n_without_privacy']:,}", f"×{r['ratio']:.1f}"] for r in rows]
    lines += grid(["ε", "realized ε", "p (keep)", "q", "respondents", "without privacy", "cost"], table)
    return "\n".join(lines) + "\n"


def survey_plan(survey: Survey, target_n: int, margin: float) -> dict:
    """Per question the margin at ``target_n`` and the respondents needed for ``margin``, each
    beside the no-privacy baseline, the plain-words explanation, and the survey's total ε."""
    rows = []
    for q in survey.questions:
        row = {
            "question": q,
            "baseline_moe": estimators.margin_of_error(None, q.k, target_n),
            "baseline_needed": estimators.sample_size(None, q.k, margin),
        }
        if q.protected:
            row.update(
                mechanism=q.mechanism, explain=explain(q.epsilon, q.k),
                moe=estimators.margin_of_error(q.epsilon, q.k, target_n),
                needed=estimators.sample_size(q.epsilon, q.k, margin),
            )
        rows.append(row)
    return {"rows": rows, "target_n": target_n, "margin": margin, "total": explain_survey(survey)["total"]}
