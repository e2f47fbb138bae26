"""The two-group non-compliance designs as a question type (issue 38): the definition's field errors, the
integer realization of every probability, ε (CDMsym's per group; the other models not ε-LDP), the reports'
three forms, the sampler's twin, and the conformance battery of :func:`deniable.testing.check_question_type`."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from deniable.client.designs import realize_column
from deniable.client.mechanism import TWO_32
from deniable.client.two_group import draw, group_one, instruction_one, simulate_reports, two_group_mechanism
from deniable.estimators.two_group import estimate_two_group
from deniable.server.survey.definition import DefinitionError, dumps_definition, loads_definition, parse_definition
from deniable.server.survey.questions import get
from deniable.testing import check_question_type


def survey(**question):
    data = {"id": "cheated", "text": "Have you ever cheated on an exam?", "type": "two_group", **question}
    return parse_definition({"slug": "tg", "title": "Two groups", "questions": [{"id": "x", "text": "X?",
                                                                                  "options": ["a", "b"]}, data]})


def question(**fields):
    return survey(**fields).questions[1]


def test_check_question_type_passes():
    check_question_type(get("two_group"))


@pytest.mark.parametrize("fields, path, words", [
    ({"model": "CDX", "p": [0.3, 0.7]}, "questions[1].model", "must be one of CDM, CDMsym, SLD, UQTunknown"),
    ({"model": "CDM", "p": [0.3]}, "questions[1].p", "must be a list of 2 probabilities"),
    ({"model": "CDMsym", "p": [0.3, 0.7]}, "questions[1].p", "must be a list of 4 probabilities"),
    ({"model": "CDM", "p": [0.3, 1.5]}, "questions[1].p[1]", "must be a probability from 0 to 1"),
    ({"model": "CDM", "p": [0.3, "x"]}, "questions[1].p[1]", "must be a number"),
    ({"model": "CDM", "p": [0.5, 0.5]}, "questions[1].p", "the two groups answer alike"),
    ({"model": "CDMsym", "p": [0.6, 0.5, 0.2, 0.2]}, "questions[1].p[1]", "must sum to at most 1"),
    ({"model": "CDM", "p": [0.3, 0.7], "group_share": 1}, "questions[1].group_share", "must be above 0 and below 1"),
    ({"model": "CDM", "p": [0.3, 0.7], "epsilon": 1.0}, "questions[1].epsilon", "leave epsilon out"),
    ({"model": "UQTunknown", "p": [0.3, 0.7]}, "questions[1].unrelated", "is required for UQTunknown"),
    ({"model": "SLD", "p": [0.3, 0.7], "unrelated": "Tea?"}, "questions[1].unrelated", "only UQTunknown"),
    ({"model": "CDM"}, "questions[1].p", "is required"),
    ({"model": "CDM", "p": [0.3, 0.7], "group_share": 0.1234567}, "questions[1].group_share", "6 decimal places"),
    ({"model": "CDM", "p": [0.3, 0.7], "known_prevalence": 2}, "questions[1].known_prevalence",
     "must be a prevalence from 0 to 1"),
])
def test_definition_errors_name_the_field(fields, path, words):
    with pytest.raises(DefinitionError) as caught:
        question(**fields)
    assert caught.value.field == path and words in caught.value.problem, str(caught.value)


def test_every_probability_is_realized_as_an_integer_threshold_and_used_everywhere():
    q = question(model="CDMsym", p=[0.2, 0.3, 0.3, 0.2], group_share=0.4)
    mech = q.mechanism
    assert mech.group_threshold == realize_column([Fraction(2, 5), Fraction(3, 5)])[0]
    assert mech.columns[0] == tuple(realize_column([Fraction(1, 5), Fraction(3, 10), Fraction(1, 2)]))
    assert all(sum(column) == TWO_32 for column in mech.columns)
    assert mech.p == tuple(w / TWO_32 for column in mech.columns for w in column[:2])
    api = q.qtype.api_design(q)
    assert api["p"] == list(mech.p) and api["p_declared"] == [0.2, 0.3, 0.3, 0.2] and api["weights"][0] == list(mech.columns[0])
    # the estimate uses the realized p
    result = q.qtype.estimate(q, {"counts": np.array([40, 60, 70, 30])}, method="exact", confidence=0.95,
                              simultaneous=False)
    assert list(result.p) == list(mech.p)
    assert q.qtype.record(q, result)["design_p"] == list(mech.p)


def test_cdmsym_epsilon_is_the_worse_groups_from_the_realized_thresholds():
    q = question(model="CDMsym", p=[0.2, 0.3, 0.3, 0.2])
    mech = q.mechanism
    (y1, n1, _), (y2, n2, _) = mech.columns
    e1 = max(math.log((TWO_32 - n1) / y1), math.log((TWO_32 - y1) / n1))
    e2 = max(math.log((TWO_32 - n2) / y2), math.log((TWO_32 - y2) / n2))
    assert mech.group_epsilons == (e1, e2) and q.epsilon == mech.epsilon == max(e1, e2)
    assert e1 == pytest.approx(math.log(0.7 / 0.2)) and q.protected
    assert q.qtype.unprotected(q).startswith("ε = ")
    info = q.qtype.explanation(q, gettext=str, locale="en")
    assert info["protected"] and info["epsilon"] == q.epsilon and "never the instruction" in info["coin"]
    assert info["short"].startswith("Your device tells you at random to say Yes, to say No or to answer truthfully")
    # a zero "say No" leaves a report that rules the attribute out: not ε-LDP
    zero = question(model="CDMsym", p=[0.2, 0.0, 0.3, 0.2])
    assert zero.epsilon is None and not zero.protected and not zero.mechanism.protected


@pytest.mark.parametrize("fields, words", [
    ({"model": "CDM", "p": [0.3, 0.7]}, "not ε-LDP"),
    ({"model": "SLD", "p": [0.3, 0.8]}, "not ε-LDP"),
    ({"model": "UQTunknown", "p": [0.3, 0.8], "unrelated": "Tea?"},
     "not ε-LDP; deniability rests on the unrelated question"),
])
def test_the_other_models_are_not_epsilon_ldp(fields, words):
    q = question(**fields)
    assert q.epsilon is None and not q.protected and math.isinf(q.mechanism.epsilon)
    assert q.qtype.unprotected(q).startswith(words)
    assert q.qtype.api_design(q)["ldp"] is False and q.qtype.api_design(q)["epsilon"] is None
    info = q.qtype.explanation(q, gettext=str, locale="en")
    assert info["protected"] is False and "never the instruction" in info["coin"]


def test_the_definition_round_trips_and_the_store_spec_too():
    s = survey(model="UQTunknown", p=[0.3, 0.8], group_share=0.25, unrelated="Do you prefer tea to coffee?")
    again = loads_definition(dumps_definition(s))
    assert again == s
    q = s.questions[1]
    assert q.to_dict() == {"id": "cheated", "text": "Have you ever cheated on an exam?", "type": "two_group",
                           "model": "UQTunknown", "p": [0.3, 0.8], "group_share": 0.25,
                           "unrelated": "Do you prefer tea to coffee?"}
    assert q.qtype.from_spec(json.loads(json.dumps(q.qtype.spec(q)))) == {"method": q.method, "sensitive": q.sensitive}


def test_reports_codes_and_cells():
    q = question(model="CDM", p=[0.3, 0.7])
    t = q.qtype
    assert [t.check_report(q, {"group": g, "answer": a}) for g in (1, 2) for a in (0, 1)] == [0, 1, 2, 3]
    assert [t.text_of(q, c) for c in range(4)] == ["1:Yes", "1:No", "2:Yes", "2:No"]
    assert t.parse_form(q, "2:1") == {"group": 2, "answer": 1}
    for bad in ({"group": 3, "answer": 0}, {"group": 1, "answer": 2}, {"group": 1}, {"group": True, "answer": 0},
                {"group": 1, "answer": 0, "instruction": "yes"}):
        with pytest.raises(Exception) as caught:
            t.check_report(q, bad)
        assert type(caught.value).__name__ == "MechanismError"
    columns = t.stat_columns(q, np.array([0, 1, 2, 3, -1]))
    assert [c[0] for c in columns] == ["_group", "_answer"]
    assert columns[0][1][:4].tolist() == [1, 1, 2, 2] and columns[1][1][:4].tolist() == [1, 0, 1, 0]
    assert math.isnan(columns[0][1][4]) and columns[1][2] == {1: "Yes", 0: "No"}


def test_explicit_draws_and_the_vectorized_twin_agree():
    mech = two_group_mechanism("CDMsym", [0.2, 0.3, 0.3, 0.2], 0.4)
    assert group_one(mech, [mech.group_threshold - 1]) == 1 and group_one(mech, [mech.group_threshold]) == 2
    c = mech.cumulative(1)
    assert [instruction_one(mech, 1, [u]) for u in (0, c[0] - 1, c[0], c[1] - 1, c[1], TWO_32 - 1)] == \
        ["yes", "yes", "no", "no", "truthful", "truthful"]
    groups, instructions = draw(mech, 200_000, np.random.default_rng(1))
    assert np.mean(groups == 1) == pytest.approx(0.4, abs=0.005)
    assert np.mean(instructions[groups == 2] == 0) == pytest.approx(0.3, abs=0.005)


@pytest.mark.parametrize("model, p, nuisance, value", [("CDM", [0.3, 0.7], "gamma", 0.0),
                                                         ("SLD", [0.3, 0.8], "t", 1.0)])
def test_compliant_simulated_reports_estimate_the_truth(model, p, nuisance, value):
    mech = two_group_mechanism(model, p, 0.5)
    rng = np.random.default_rng(5)
    codes = simulate_reports(mech, (rng.random(40_000) < 0.25).astype(int), rng)
    c = np.bincount(codes, minlength=4)
    r = estimate_two_group(model, list(mech.p), [c[0], c[2]], [c[0] + c[1], c[2] + c[3]])
    assert r.estimate["pi"] == pytest.approx(0.25, abs=0.02)
    assert r.estimate[nuisance] == pytest.approx(value, abs=0.03)


def test_a_group_with_fewer_than_two_reports_is_not_estimated_yet():
    q = question(model="CDM", p=[0.3, 0.7])
    result = q.qtype.estimate(q, {"counts": np.array([1, 0, 3, 4])}, method="exact", confidence=0.95,
                              simultaneous=False)
    record = q.qtype.record(q, result)
    assert record["estimate"] is None and "at least 2" in record["note"] and record["n"] == 8
