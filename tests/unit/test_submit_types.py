"""client/submit.py answers every question type against the real server (a live Flask app on a port):
the reports it sends are the ones stored, and the estimates from the stored reports recover the
answers the client was given (intervals at 1 − 1e-5, so a correct client fails about once in 10^4 runs
per question); answers outside a question's domain are refused before anything is sent."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from deniable.client.submit import CheckAll, ListExperiment, Numeric, fetch_mechanisms, make_reports, post_reports
from deniable.server.store.db import init_db
from deniable.server.store.responses import load_db_dataset
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

N = 300
CONFIDENCE = 1 - 1e-5
ITEMS = ["I own a bicycle", "I have been abroad this year", "I read a book last month"]
QUESTIONS = [
    {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "drinks", "text": "Drinks?", "type": "numeric", "min": 0, "max": 10, "epsilon": 2.0,
     "mechanism": "grid", "grid": 1},
    {"id": "hours", "text": "Hours?", "type": "numeric", "min": 0, "max": 5, "step": 0.5, "epsilon": 2.0,
     "mechanism": "laplace"},
    {"id": "age", "text": "Age?", "type": "numeric", "min": 18, "max": 30},
    {"id": "used", "text": "Used?", "type": "multi", "options": ["Cannabis", "Cocaine", "Ecstasy"], "epsilon": 2.0},
    {"id": "work", "text": "At work?", "type": "multi", "options": ["Long lunch", "Sick when well"],
     "design": {"name": "warner", "p": 0.8}},
    {"id": "owns", "text": "Own?", "type": "multi", "options": ["Car", "Bike"]},
    {"id": "shop", "text": "How many?", "type": "list", "items": ITEMS, "sensitive": "Shoplifted", "epsilon": 2.0},
    {"id": "drove", "text": "How many?", "type": "list", "items": ITEMS, "sensitive": "Drove drunk"},
    {"id": "cross", "text": "Have you cheated on your taxes?", "options": ["Yes", "No"],
     "design": {"name": "crosswise", "side": "respondent", "prevalence": 0.25,
                "fact": "Is your mother's birthday in January, February or March?", "prevalence_range": [0.23, 0.27]}},
]


def answers_of(i: int) -> dict:
    """Respondent i's answers: fixed shares of the N respondents, so the truth is known exactly."""
    return {"cheated": int(i >= 0.3 * N), "drinks": 10 if i < N // 2 else 4, "hours": 2.5, "age": 20 + i % 3,
            "used": [1, int(i % 2 == 0), 0], "work": [int(i < 0.2 * N), 1], "owns": [1, int(i % 3 == 0)],
            "shop": {"items": i % 4, "sensitive": int(i < 0.4 * N)},
            "drove": {"items": 1, "sensitive": int(i % 5 == 0)}, "cross": int(i % 10 >= 7)}


TRUTH = {"cheated": [0.3, 0.7], "drinks": [7.0], "hours": [2.5], "age": [21.0], "used": [1.0, 0.5, 0.0],
         "work": [0.2, 1.0], "owns": [1.0, 1 / 3]}


@pytest.fixture
def served(app, live_server):
    db = init_db(app.config["DATABASE"])
    insert_survey(db, parse_definition({"slug": "every", "title": "Every type", "questions": QUESTIONS}), status="open")
    db.conn.close()
    return live_server


def test_the_client_submits_every_type_and_the_estimates_recover_the_answers(app, served):
    mechanisms = fetch_mechanisms(served, "every")
    assert isinstance(mechanisms["drinks"][1], Numeric) and isinstance(mechanisms["used"][1], CheckAll)
    assert isinstance(mechanisms["shop"][1], ListExperiment) and mechanisms["cross"][1].respondent_side
    sent = []
    for i in range(N):
        reports = make_reports(answers_of(i), mechanisms)
        post_reports(served, "every", reports)
        sent.append(reports)
    # the respondent-side crosswise choice is sent as given, never randomized by the client
    assert [r["cross"] for r in sent] == [answers_of(i)["cross"] for i in range(N)]
    # a direct question's answer as given; a plain list's count is the true one in its arm
    assert [r["age"] for r in sent] == [answers_of(i)["age"] - 18 for i in range(N)]
    assert all(r["drove"]["count"] == 1 + r["drove"]["arm"] * answers_of(i)["drove"]["sensitive"]
               for i, r in enumerate(sent))
    # the discrete Laplace report is in steps from min, within −L..m + L
    hours = mechanisms["hours"][1].mech
    assert all(hours.low <= r["hours"] <= hours.high for r in sent)

    db = init_db(app.config["DATABASE"])
    stored = [json.loads(row["reports"]) for row in db.query("SELECT reports FROM responses")]
    dataset = load_db_dataset(db, "every")
    db.conn.close()
    assert sorted(json.dumps(s, sort_keys=True) for s in stored) == sorted(json.dumps(r, sort_keys=True) for r in sent)

    survey = dataset.survey
    for qid, truth in TRUTH.items():
        q = survey.question(qid)
        result = q.qtype.estimate(q, dataset.stats(qid), method="exact", confidence=CONFIDENCE, simultaneous=False)
        bounds = [(low, high) for _, low, high in q.qtype.headlines(q, q.qtype.record(q, result))]
        for value, (low, high) in zip(truth, bounds):
            assert low - 1e-9 <= value <= high + 1e-9, (qid, truth, bounds)
    # the list experiments: the sensitive item's share (0.4 and 0.2) inside the interval
    for qid, share in (("shop", 0.4), ("drove", 0.2)):
        q = survey.question(qid)
        result = q.qtype.estimate(q, dataset.stats(qid), method="exact", confidence=CONFIDENCE, simultaneous=False)
        low, high = next((lo, hi) for _, lo, hi in q.qtype.headlines(q, q.qtype.record(q, result)))
        assert low <= share <= high, (qid, low, high)
    # the respondent-side crosswise model: 70% "same" at the fact's prevalence 0.25 is a share of yes
    # π = (0.7 − 0.75)/(0.25 − 0.75) = 0.1 exactly (the estimate is unbiased: λ = 0.75 − 0.5π)
    q = survey.question("cross")
    result = q.qtype.estimate(q, dataset.stats("cross"), method="exact", confidence=0.95, simultaneous=False)
    assert result.estimate[0] == pytest.approx(0.1, abs=1e-9)
    # the k-ary randomized response of the choice: every "Yes" kept with the realized p
    kept = sum(r["cheated"] == 0 for i, r in enumerate(sent) if answers_of(i)["cheated"] == 0)
    assert stats.binomtest(kept, int(0.3 * N), survey.question("cheated").mechanism.p).pvalue > 1e-5


@pytest.mark.parametrize("qid, answer, message", [
    ("drinks", 10.5, "drinks: answer must be a number from 0 to 10 in steps of 1, got 10.5"),
    ("hours", 0.25, "hours: answer must be a number from 0 to 5.0 in steps of 0.5"),
    ("age", "20", "age: answer must be a number from 18 to 30"),
    ("used", [1, 0], "used: answer must be a list of 3 ticks"),
    ("work", [1, 2], "work: answer every tick must be 0 or 1"),
    ("shop", {"items": 4, "sensitive": 0}, "shop: answer's count must be a whole number from 0 to 3"),
    ("shop", {"items": 1, "sensitive": 2}, "shop: answer's sensitive must be 0 or 1"),
    ("shop", {"arm": 0, "count": 4}, "shop: answer's count must be a whole number from 0 to 3"),
    ("shop", 2, "shop: answer must be {\"items\""),
    ("cross", 2, "cross: answer must be an option index 0..1"),
])
def test_answers_outside_a_question_are_refused_before_anything_is_sent(app, served, qid, answer, message):
    mechanisms = fetch_mechanisms(served, "every")
    with pytest.raises(ValueError) as caught:
        make_reports({qid: answer}, mechanisms)
    assert str(caught.value).startswith(message), str(caught.value)


def test_a_list_answer_with_its_arm_keeps_the_arm(app, served):
    mechanisms = fetch_mechanisms(served, "every")
    for arm in (0, 1):
        answers = {**answers_of(0), "drove": {"arm": arm, "count": 2}, "shop": {"arm": arm, "count": 0}}
        reports = make_reports(answers, mechanisms)
        assert reports["drove"] == {"arm": arm, "count": 2} and reports["shop"]["arm"] == arm
        assert post_reports(served, "every", reports)
