"""The respondent-side crosswise model (issue 24): the respondent combines the sensitive answer with a
private fact and the device sends "same" or "different" as chosen.  Its definition (field errors), its
estimator against exact binomial sums, and its labels on every surface: ε as a range over the fact's
plausible prevalence against an observer who does not know the fact, not ε-LDP against one who does,
and the high end in the survey's total."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from deniable.client import designs
from deniable.estimators.designs import estimate_design
from deniable.server.cli import cli
from deniable.server.store.db import init_db
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.codebook import codebook_dict
from deniable.server.survey.definition import DefinitionError, parse_definition
from deniable.server.survey.explain import explain_survey
from deniable.server.survey.questions.base import NotAvailable

FACT = "Is your mother's birthday in January, February or March?"
DESIGN = {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT, "prevalence_range": [0.23, 0.27]}
# ε against an observer who does not know the fact, |ln(π/(1 − π))| at each end of the range
LOW, HIGH = math.log(0.73 / 0.27), math.log(0.77 / 0.23)


def survey(design=DESIGN, kind=None, options=("Yes", "No")):
    question = {"id": "evaded", "text": "Have you ever evaded a tax?", "design": design}
    question.update({"type": "multi", "options": ["A", "B"]} if kind == "multi" else {"options": list(options)})
    return parse_definition({"slug": "s", "title": "S", "questions": [
        question, {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]})


def refusal(design, **extra) -> str:
    with pytest.raises(DefinitionError) as caught:
        survey(design, **extra)
    return str(caught.value)


@pytest.mark.parametrize("change, field", [
    ({"fact": None}, "questions[0].design.side: the respondent-side crosswise design needs \"fact\""),
    ({"prevalence_range": None}, "questions[0].design.side: the respondent-side crosswise design needs \"prevalence_range\""),
    ({"fact": "  "}, "questions[0].design.fact: must be the private fact's question"),
    ({"fact": 12}, "questions[0].design.fact: must be the private fact's question"),
    ({"fact": "x" * 301}, "questions[0].design.fact: must be one line of at most 300 characters"),
    ({"fact": "two\nlines"}, "questions[0].design.fact: must be one line"),
    ({"prevalence_range": 0.25}, "questions[0].design.prevalence_range: must be [low, high]"),
    ({"prevalence_range": [0.2, 0.25, 0.3]}, "questions[0].design.prevalence_range: must be [low, high]"),
    ({"prevalence_range": [0, 0.3]}, "questions[0].design.prevalence_range[0]: must be a probability in (0, 1)"),
    ({"prevalence_range": [0.2, "high"]}, "questions[0].design.prevalence_range[1]: must be a probability"),
    ({"prevalence_range": [0.27, 0.23]}, "questions[0].design.prevalence_range[1]: must be at least the low end"),
    ({"prevalence_range": [0.4, 0.6], "prevalence": 0.45}, "questions[0].design.prevalence_range: must lie on one side of 1/2"),
    ({"prevalence": 0.3}, "questions[0].design.prevalence: must lie in prevalence_range [0.23, 0.27], got 0.3"),
    ({"side": "browser"}, "questions[0].design.side: must be \"device\""),
    ({"side": "device"}, "questions[0].design.fact: is a parameter of the respondent-side crosswise design only"),
    ({"colour": "red"}, "questions[0].design.colour: is not a parameter of the crosswise design"),
])
def test_a_bad_respondent_side_design_is_refused_naming_the_field(change, field):
    design = {key: value for key, value in {**DESIGN, **change}.items() if value is not None}
    assert refusal(design).startswith(field)


def test_it_is_for_a_single_choice_with_two_options():
    assert refusal(DESIGN, options=("a", "b", "c")).startswith("questions[0].design.name: the crosswise design is "
                                                               "for a question with two options")
    assert refusal(DESIGN, kind="multi").startswith("questions[0].design.side: the respondent-side crosswise design "
                                                    "is for a single-choice question")


def test_the_design_states_a_range_and_the_total_counts_its_high_end():
    s = survey()
    q = s.question("evaded")
    d = designs.from_definition(DESIGN, ["Yes", "No"])
    assert d.respondent_side and d.epsilon_range == pytest.approx((LOW, HIGH))
    assert q.epsilon == pytest.approx(HIGH) and q.protected
    assert s.total_epsilon == pytest.approx(HIGH + s.question("drugs").mechanism.epsilon)
    # the matrix at the stated prevalence: "same" with π for a "Yes", 1 − π for a "No"
    assert d.matrix == pytest.approx(np.array([[0.25, 0.75], [0.75, 0.25]]), abs=1e-9)
    # the device-side crosswise model keeps its form and ε (Warner's with p = π)
    device = survey({"name": "crosswise", "prevalence": 0.25}).question("evaded")
    assert json.loads(device.design) == {"name": "crosswise", "prevalence": 0.25}
    assert device.epsilon == pytest.approx(math.log(3))
    assert json.loads(survey({"name": "crosswise", "side": "device", "prevalence": 0.25}).question("evaded").design) \
        == {"name": "crosswise", "prevalence": 0.25}
    # the definition round-trips as written
    assert json.loads(q.design) == DESIGN
    assert parse_definition(s.to_dict()).question("evaded").design == q.design


@pytest.mark.parametrize("n, pi", [(40, 0.0), (40, 0.1), (60, 0.35), (25, 1.0)])
def test_the_estimate_is_unbiased_and_its_interval_covers_summed_over_the_binomial(n, pi):
    """Independent of the estimator's code: "same" has probability λ = f·π + (1 − f)(1 − π) with the fact's
    prevalence f (Yu, Tian & Tang 2008), so E π̂ = Σ_c Binom(c; n, λ)·π̂(c) must be π exactly, and the exact
    interval's coverage, summed over every count, at least 95%."""
    d = designs.from_definition(DESIGN, ["Yes", "No"])
    f = d.matrix[0, 0]  # the realized prevalence (within 2^-32 of 0.25)
    lam = f * pi + (1 - f) * (1 - pi)
    pmf = stats.binom.pmf(np.arange(n + 1), n, lam)
    mean, covered = 0.0, 0.0
    for c in range(n + 1):
        result = estimate_design(np.array([c, n - c]), d, confidence=0.95, method="exact")
        assert result.estimate[0] == pytest.approx((c / n - (1 - f)) / (2 * f - 1), abs=1e-12)
        mean += pmf[c] * result.estimate[0]
        covered += pmf[c] * (result.ci_low[0] - 1e-12 <= pi <= result.ci_high[0] + 1e-12)
    assert mean == pytest.approx(pi, abs=1e-12)
    assert covered >= 0.95 - 1e-12


def test_every_surface_states_the_range_and_not_ldp_against_one_who_knows_the_fact():
    s = survey()
    q = s.question("evaded")
    words = f"ε between {LOW:.4f} and {HIGH:.4f} against an observer who does not know the private fact"
    result = q.qtype.estimate(q, np.array([300, 700]), method="exact", confidence=0.95, simultaneous=False)
    record = q.qtype.record(q, result)
    assert record["privacy"].startswith(words) and "not ε-LDP against one who knows it" in record["privacy"]
    assert record["epsilon_range"] == pytest.approx([LOW, HIGH]) and record["side"] == "respondent"
    assert words in q.qtype.table(q, result, lambda head, rows: [])[0]
    entry = next(e for e in codebook_dict(s)["questions"] if e["id"] == "evaded")["randomization"]
    assert entry["side"] == "respondent" and entry["fact"] == FACT and entry["prevalence_range"] == [0.23, 0.27]
    assert entry["epsilon_range"] == pytest.approx([LOW, HIGH]) and entry["realized_epsilon"] == pytest.approx(HIGH)
    assert np.array(entry["matrix"]) == pytest.approx(np.array([[0.25, 0.75], [0.75, 0.25]])) and words in entry["privacy"]
    plan = q.qtype.plan(q, 1000, 0.05)
    assert plan["epsilon_range"] == pytest.approx([LOW, HIGH]) and plan["design_label"].startswith("crosswise model, "
                                                                                                   "combined by the respondent")
    info = explain_survey(s)["questions"]["evaded"]
    assert "never sees your answer" in info["short"] and len(info["short"].split()) <= 25
    assert "between 73% and 77% sure" in info["posterior"]  # e^ε/(1 + e^ε) at each end: 0.73 and 0.77
    assert "knows your answer to the second question can tell your answer" in info["odds"]
    assert f"between {LOW:.2f} and {HIGH:.2f}" in info["odds"]
    with pytest.raises(NotAvailable, match="not sampled by the device"):
        q.qtype.audit_sampler(q)


def test_deniable_audit_says_it_cannot_sample_it(app, tmp_path):
    """No device randomness to sample: the audit names the question and why, instead of skipping it."""
    db_path = app.config["DATABASE"]
    db = init_db(db_path)
    insert_survey(db, parse_definition({"slug": "cw", "title": "CW", "questions": [
        {"id": "evaded", "text": "Evaded?", "options": ["Yes", "No"], "design": DESIGN}]}), status="open")
    db.conn.close()
    result = CliRunner().invoke(cli, ["audit", "--db", db_path])
    assert result.exit_code == 1
    assert "cw/evaded: the respondent-side crosswise design is not sampled by the device" in result.output
    assert "deniable audit cannot check it" in result.output and f"ε between {LOW:.4f}" in result.output


def test_the_api_publishes_the_fact_and_the_range(app, client):
    db = init_db(app.config["DATABASE"])
    insert_survey(db, survey(), status="open")
    db.conn.close()
    published = {q["id"]: q for q in client.get("/api/v1/surveys/s").get_json()["questions"]}["evaded"]
    assert published["design"] == DESIGN and published["epsilon_range"] == pytest.approx([LOW, HIGH])
    assert published["epsilon"] == pytest.approx(HIGH)
    for report in (0, 1):  # "same" and "different" are stored as sent
        response = client.post("/api/v1/surveys/s/responses", json={"reports": {"evaded": report, "drugs": 0}})
        assert response.status_code == 201, response.get_json()
