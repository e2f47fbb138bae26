"""The plain-words meaning of ε for respondents: numbers from the realized mechanism."""

from __future__ import annotations

import math

import pytest

from deniable.client.mechanism import mechanism
from deniable.server.store.demo import demo_survey
from deniable.server.survey.explain import explain, explain_survey, explain_total, percent


def test_yes_no_at_ln3_is_75_percent():
    info = explain(math.log(3), 2)
    assert info["p_true"] == 0.75 and info["p_other"] == 0.25
    assert info["posterior"] == ("Whoever sees your submitted answer can be at most 75% sure of your true "
                                 "answer if they thought it 50/50 before.")
    assert "75% of the time it sends your true answer, otherwise it sends the other answer" in info["coin"]
    assert "at most 3 times as likely" in info["odds"]


@pytest.mark.parametrize("epsilon, k", [(0.1, 2), (0.5, 3), (1.0, 4), (2.0, 7), (5.0, 12), (20.0, 2)])
def test_numbers_are_the_realized_mechanism(epsilon, k):
    info = explain(epsilon, k)
    mech = mechanism(k, epsilon)
    assert info["p_true"] == mech.p and info["p_other"] == mech.q
    assert info["epsilon"] == mech.epsilon <= epsilon
    # Posterior bound from two candidate answers at 50/50: p / (p + q) = e^ε / (1 + e^ε).
    assert info["posterior_bound"] == pytest.approx(mech.p / (mech.p + mech.q), rel=1e-12)
    assert info["odds_bound"] == pytest.approx(mech.p / mech.q, rel=1e-12)
    assert "100%" not in info["posterior"]


@pytest.mark.parametrize("x, text", [(0.75, "75%"), (0.8808, "88.1%"), (0.5, "50%"),
                                     (0.99999, "more than 99.9%"), (0.0001, "less than 0.1%")])
def test_percent(x, text):
    assert percent(x) == text


def test_total_adds_up_the_questions():
    survey = demo_survey()
    # the total is the realized one: never above the declared sum
    assert survey.total_epsilon == pytest.approx(mechanism(2, math.log(3)).epsilon + mechanism(4, 2.0).epsilon)
    assert survey.total_epsilon <= math.log(3) + 2.0
    assert explain_survey(survey)["total"]["epsilon"] == survey.total_epsilon
    total = explain_survey(survey)["total"]
    assert total["n_protected"] == 2
    assert total["posterior_bound"] == pytest.approx(math.exp(total["epsilon"]) / (1 + math.exp(total["epsilon"])))
    assert set(explain_survey(survey)["questions"]) == {"drug_use", "cheating"}


def test_total_without_protected_questions():
    assert explain_total(0.0, 0)["posterior"].startswith("No question of this survey is protected")
