"""The plain-words meaning of ε for respondents: numbers from the realized mechanism."""

from __future__ import annotations

import math
import re

import pytest

from deniable.client.mechanism import mechanism
from deniable.server.store.demo import demo_survey
from deniable.server.survey.explain import explain, explain_survey, explain_total, percent


def test_yes_no_at_ln3_is_75_percent():
    info = explain(math.log(3), 2)
    assert info["p_true"] == 0.75 and info["p_other"] == 0.25
    assert info["posterior"] == ("So what is sent is never proof: someone who sees it, and could only guess your "
                                 "answer before (50/50), can be at most 75% sure of it.")
    assert info["coin"] == "Your device sends your true answer 75% of the time; otherwise it sends the other answer."
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


@pytest.mark.parametrize("x, text", [(0.75, "75%"), (0.8808, "88.1%"), (0.8801, "88.1%"), (0.5, "50%"),
                                     (0.999, "99.9%"), (0.99901, "more than 99.9%"), (0.0001, "less than 0.1%")])
def test_percent_rounds_bounds_up(x, text):
    assert percent(x) == text


def test_percent_in_french_and_spanish():
    assert percent(0.755, "fr") == "75,5\u00a0%" and percent(0.755, "es") == "75,5\u00a0%"


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


EPSILONS = [1e-6, 0.01, 0.1, 0.25, 0.5, 1.0, math.log(3), 1.5, 2.0, 2.9, 2.95, 3.0, 4.0, 5.0, 6.9, 7.0, 10.0, 15.0, 20.0]
KS = [2, 3, 4, 5, 7, 10, 16, 33, 64]
NUMBER = re.compile(r"(\d+(?:\.\d+)?)%")


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_sentences_read_right_for_every_k_and_epsilon(epsilon, k):
    """No "at most more than 99.9%", no 100% or 0%, no jargon; the bound said is never below the true one;
    the coin and the bound say the same number."""
    info = explain(epsilon, k)
    mech = mechanism(k, epsilon)
    for sentence in (info["coin"], info["posterior"]):
        assert "at most more than" not in sentence and "up to more than" not in sentence
        assert not re.search(r"\b100%|\b0%|\b0\.0%", sentence), sentence
        assert "ε" not in sentence and "50/50 before" not in sentence.replace("(50/50)", "")
    kept = NUMBER.findall(info["coin"])[0]
    if mech.p > 0.999:
        assert "more than 99.9%" in info["coin"] and "almost certain" in info["posterior"]
    else:
        assert float(kept) / 100 >= mech.p - 1e-12  # rounded up: never promises more than it delivers
        assert float(kept) / 100 - mech.p < 0.001
        assert f"{kept}% sure" in info["posterior"]
    chance = "(50/50)" if k == 2 else f"(a 1 in {k} chance)"
    assert chance in info["posterior"] or mech.p > 0.999
    assert (info["warning"] is not None) == (math.exp(epsilon) / (1 + math.exp(epsilon)) >= 0.95)


@pytest.mark.parametrize("epsilon", EPSILONS + [30.0, 60.0])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_the_total_reads_right(epsilon, n):
    total = explain_total(epsilon, n)
    assert "at most more than" not in total["posterior"] and not re.search(r"\b100%", total["posterior"])
    said = NUMBER.findall(total["posterior"])[0]
    bound = math.exp(epsilon) / (1 + math.exp(epsilon))
    assert float(said) / 100 >= bound - 1e-12 or "more than 99.9%" in total["posterior"]
