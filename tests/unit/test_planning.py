"""Planning: respondents needed per ε beside the no-privacy baseline (``deniable plan``, the builder)."""

from __future__ import annotations

from support.plan_cache import assert_decided

from deniable import estimators
from deniable.server.survey import planning


def test_plan_rows_against_the_estimators():
    """The rows plan by the decided search (issue 40): each n meets the margin exactly and is within 1 %
    above the exhaustive search's n (:func:`deniable.estimators.sample_size`)."""
    rows = planning.plan_rows(2, 0.05, [1.0, 2.0], confidence=0.95)
    assert_decided(rows[0]["n"], 1.0, 2, 0.05, exhaustive=estimators.sample_size(1.0, 2, 0.05, confidence=0.95))
    assert_decided(rows[1]["n"], 2.0, 2, 0.05)
    assert_decided(rows[0]["n_without_privacy"], None, 2, 0.05,
                   exhaustive=estimators.sample_size(None, 2, 0.05, confidence=0.95))
    assert rows[0]["n"] > rows[1]["n"] and rows[0]["epsilon"] <= 1.0
    worst = estimators.worst_case(1.0, 2, rows[0]["n"])
    assert rows[0]["worst_pi"] == worst.worst_pi and rows[0]["half_width"] == worst.half_width <= 0.05
    exhaustive = planning.plan_rows(2, 0.05, [1.0, 2.0], confidence=0.95, decided=False)
    assert [r["n"] for r in exhaustive] == [estimators.sample_size(e, 2, 0.05) for e in (1.0, 2.0)]
    table = planning.ChoicePlan(k=2, margin=0.05, confidence=0.95, rows=rows).table()
    assert "without privacy" in table and "worst π" in table
    assert f"{worst.worst_pi:.2f}" in table.splitlines()[3] and f"{rows[0]['n']:,}" in table.splitlines()[3]


def test_the_builders_question_plans_and_the_realized_total():
    from deniable.server.store.demo import demo_survey
    from deniable.server.survey.explain import explain_survey

    survey = demo_survey()
    rows = [{"question": q, **planning.question_plan(q.epsilon, q.k, 1000, 0.05)} for q in survey.questions]
    protected = [row for row in rows if row["question"].protected]
    assert len(protected) == 2 and all(row["moe"] > row["baseline_moe"] for row in protected)
    assert all(0 <= row["worst_pi"] <= 1 for row in protected)
    assert all(row["moe"] == estimators.margin_of_error(row["question"].epsilon, row["question"].k, 1000)
               for row in protected)
    assert explain_survey(survey)["total"]["epsilon"] == survey.total_epsilon
