"""Battery: every registered question type plans (the builder's panel) and simulates (``deniable
simulate``), and a simulated file reads back through ``deniable estimate``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.questions.base import NotAvailable

from support.battery import battery_definition, battery_questions, question_ids


@pytest.mark.parametrize("qid", question_ids())
def test_every_question_plans_or_says_why_not(qid):
    q = parse_definition(battery_definition()).question(qid)
    try:
        plan = q.qtype.plan(q, 1000, 0.05)
    except NotAvailable as exc:
        assert str(exc), qid  # a reason in words
        return
    assert plan["protected"] == q.protected and plan["target_n"] == 1000 and plan["margin"] == 0.05, qid
    assert any(needed(plan)), qid
    if q.protected and "epsilon" in plan:
        assert plan["epsilon"] == pytest.approx(q.mechanism.epsilon)


def needed(plan):
    """Every ``needed`` in a plan, however deep (a check-all question's is its option's)."""
    for key, value in plan.items():
        if key == "needed" and isinstance(value, int) and value > 0:
            yield value
        elif isinstance(value, dict):
            yield from needed(value)


def test_deniable_simulate_writes_every_type_and_estimate_reads_it(tmp_path):
    survey = tmp_path / "battery.json"
    survey.write_text(json.dumps(battery_definition()), encoding="utf-8")
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({q["id"]: t for q, t in battery_questions()}), encoding="utf-8")
    responses = tmp_path / "responses.csv"
    run = CliRunner().invoke(cli, ["simulate", str(survey), "--n", "3000", "--truth", str(truth), "--seed", "3",
                                   "-o", str(responses)])
    assert run.exit_code == 0, run.output
    run = CliRunner().invoke(cli, ["estimate", str(survey), str(responses), "--format", "json"])
    assert run.exit_code == 0, run.output
    shown = {q["id"]: q for q in json.loads(run.output)["questions"]}
    assert sorted(shown) == sorted([*question_ids(), "group"])
    for qid in question_ids():
        assert shown[qid]["n"] > 0, qid
