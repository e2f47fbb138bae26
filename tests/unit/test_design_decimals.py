"""Designs read decimals as the decimals they are (issue 36, item 1): ``forced(0.62, [0.23, 0.15])``
adds up to 1 as typed, in Python, in a survey file read by ``deniable estimate``, in the builder and in the
design document the embed mounts from; every design written with up to four decimals that adds up to 1
is accepted, and its realized ε is the one the survey states (within a unit of 2^-32 of the typed one).

Before the fix a float was read as the closest fraction with a denominator ≤ 10^15 (0.23 →
229999999999980/999999999999913), and 4,030 of the 5,050 two-decimal binary forced designs were refused
with "must add up to 1, got 1".
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from deniable.client import designs as d
from deniable.client.mechanism import TWO_32
from deniable.server.cli import cli
from deniable.server.survey.definition import parse_definition

FORCED = {"name": "forced", "p": 0.62, "forced": [0.23, 0.15]}
FORCED_ZERO = {"name": "forced", "p": 0.62, "forced": [0.23, 0.15, 0]}
MATRIX = [[0.62, .2, .1], [0.23, .6, .2], [0.15, .2, .7]]
DEFINITION = {"slug": "decimals", "title": "Decimals", "questions": [
    {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "design": FORCED},
    {"id": "often", "text": "How often?", "options": ["Never", "Once", "More"], "design": FORCED_ZERO},
    {"id": "graded", "text": "Graded?", "options": ["Low", "Mid", "High"], "design": {"name": "custom", "matrix": MATRIX}}]}


def realized_epsilon(weights) -> float:
    """ε from the integer weights, computed here: the largest log-ratio of a report's two weights."""
    rows = [row for row in weights if max(row) > 0]
    if any(min(row) == 0 for row in rows):
        return math.inf
    return max(math.log(max(row) / min(row)) for row in rows)


def unit_bound(weights) -> float:
    """How far the realized ε may be from the typed one: each weight is within one unit of ``P · 2^32``, so a
    log-ratio moves by at most ``2 · ln(w/(w − 1))`` for the smallest positive weight w."""
    smallest = min(w for row in weights for w in row if w > 0)
    return 2 * math.log(smallest / (smallest - 1))


def typed_epsilon(columns) -> float:
    """ε from the probabilities as typed (exact fractions), columns = answers."""
    rows = list(zip(*columns))
    return max(math.log(max(row) / min(row)) for row in rows)


@pytest.mark.parametrize("value, expected", [
    (0.23, Fraction(23, 100)), (0.62, Fraction(31, 50)), (0.15, Fraction(3, 20)),
    (2 / 3, Fraction(2, 3)), (1 / 6, Fraction(1, 6)), (1 / 12, Fraction(1, 12)),
    (0.1 + 0.2, Fraction(3, 10)), (1 - 0.77, Fraction(23, 100)),  # computed floats: the simplest within 1e-12
    (0.5 + 1e-9, Fraction(500000001, 10**9)), (0.142857142857, Fraction(142857142857, 10**12)),
    (1e-5, Fraction(1, 100000)), (1.0, Fraction(1)), (0.0, Fraction(0))])
def test_a_float_is_the_decimal_typed_or_the_simplest_fraction_within_1e_12(value, expected):
    assert d.typed_fraction(value) == expected


def test_the_issue_s_designs_are_accepted_in_python():
    two = d.forced(0.62, [0.23, 0.15])
    assert dict(two.params)["forced"] == (Fraction(23, 100), Fraction(3, 20))
    assert two.ldp and two.epsilon == pytest.approx(math.log(0.77 / 0.15), abs=1e-7)
    zero = d.forced(0.62, [0.23, 0.15, 0])
    assert not zero.ldp and zero.weights[2][:2] == (0, 0)  # a zero share: not ε-LDP, accepted as before
    graded = d.custom(MATRIX)
    assert graded.epsilon == pytest.approx(math.log(0.62 / 0.1), abs=1e-7)
    for design in (two, zero, graded):
        assert (np.array(design.weights, dtype=np.int64).sum(axis=0) == TWO_32).all()


def test_every_two_decimal_binary_forced_design_that_adds_up_to_1_is_accepted():
    refused = []
    for p in range(1, 101):
        for a in range(0, 101 - p):
            try:
                d.forced(p / 100, [a / 100, (100 - p - a) / 100])
            except d.DesignError:
                refused.append((p, a))
    assert refused == []


def test_a_sum_off_by_less_than_shown_says_how_far_it_is():
    with pytest.raises(d.DesignError, match=r"must add up to 1, got 1 \+ 1e-13"):
        d.forced(Fraction(1, 2), [Fraction(1, 4), Fraction(1, 4) + Fraction(1, 10**13)])
    with pytest.raises(d.DesignError, match=r"must add up to 1, got 1.01"):
        d.forced(0.62, [0.23, 0.16])


@st.composite
def four_decimal_forced(draw):
    """p > 0 and k shares ≥ 0, integers of 1/10^4 that add up to 10^4, as the person types them."""
    k = draw(st.integers(2, 5))
    p = draw(st.integers(1, 10**4))
    cuts = sorted(draw(st.lists(st.integers(0, 10**4 - p), min_size=k - 1, max_size=k - 1)))
    shares = [b - a for a, b in zip([0, *cuts], [*cuts, 10**4 - p])]
    return [v / 10**4 for v in (p, *shares)]


@st.composite
def four_decimal_matrix(draw):
    """A k × k matrix whose columns are integers of 1/10^4 adding up to 10^4, diagonally dominant (full rank)."""
    k = draw(st.integers(2, 4))
    columns = []
    for t in range(k):
        off = [draw(st.integers(0, 10**4 // (2 * k))) for _ in range(k - 1)]
        column = off[:t] + [10**4 - sum(off)] + off[t:]
        columns.append([v / 10**4 for v in column])
    return [list(row) for row in zip(*columns)]


@settings(max_examples=300, deadline=None)
@given(four_decimal_forced())
def test_every_four_decimal_forced_design_that_adds_up_to_1_is_accepted(values):
    p, *shares = values
    labels = [f"o{i}" for i in range(len(shares))]
    spec = json.loads(json.dumps({"name": "forced", "p": p, "forced": shares}))  # as a survey file holds it
    design = d.from_definition(spec, labels)
    question = parse_definition({"slug": "s", "title": "t", "questions": [
        {"id": "q", "text": "q", "options": labels, "design": spec}]}).questions[0]
    assert design.weights == d.forced(p, shares, labels).weights
    realized = realized_epsilon(design.weights)
    if design.ldp:
        assert realized <= design.epsilon == question.mechanism.declared_epsilon
        typed = [[Fraction(str(p)) * (r == t) + Fraction(str(s)) for r, s in enumerate(shares)]
                 for t in range(len(shares))]
        assert abs(realized - typed_epsilon(typed)) <= unit_bound(design.weights)
    else:
        assert min(shares) == 0 and question.epsilon is None


@settings(max_examples=150, deadline=None)
@given(four_decimal_matrix())
def test_every_four_decimal_matrix_whose_columns_add_up_to_1_is_accepted(matrix):
    design = d.from_definition(json.loads(json.dumps({"name": "custom", "matrix": matrix})),
                               [f"o{i}" for i in range(len(matrix))])
    realized = realized_epsilon(design.weights)
    assert realized == design.epsilon
    if design.ldp:
        typed = [[Fraction(str(matrix[r][t])) for r in range(len(matrix))] for t in range(len(matrix))]
        assert abs(realized - typed_epsilon(typed)) <= unit_bound(design.weights)


def test_a_survey_file_with_decimal_designs_is_estimated_by_deniable_estimate(tmp_path):
    survey = tmp_path / "decimals.json"
    survey.write_text(json.dumps(DEFINITION))
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"cheated": [0.2, 0.8], "often": [0.6, 0.3, 0.1], "graded": [0.5, 0.3, 0.2]}))
    responses = tmp_path / "responses.csv"
    runner = CliRunner()
    made = runner.invoke(cli, ["simulate", str(survey), "--n", "50", "--truth", str(truth), "--seed", "3",
                               "-o", str(responses)])
    assert made.exit_code == 0, made.output
    result = runner.invoke(cli, ["estimate", str(survey), str(responses), "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["n_responses"] == 50
    assert [q["id"] for q in document["questions"]] == ["cheated", "often", "graded"]
    for q in document["questions"]:
        assert q["n"] == 50 and all(0 <= o["ci_low"] <= o["ci_high"] <= 1 for o in q["options"])


BUILDER = {"qid": "cheated", "text": "Have you ever cheated?", "options": "Yes\nNo", "protection": "protected",
           "randomization": "forced", "design_p": "0,62", "design_forced": "0.23\n0.15", "epsilon": ""}


def test_the_builder_saves_and_plans_a_decimal_design(app, auth_client):
    from deniable.server.store.surveys import get_survey
    from support.dashboard import builder_form, csrf_token, open_db

    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_form(token, {
        "slug": "decimals", "title": "Decimals", "description": "", "target_n": "1000", "save": "Save draft"},
        [BUILDER]))
    assert response.status_code == 302, response.get_data(as_text=True)
    db = open_db(app)
    try:
        (question,) = get_survey(db, "decimals").survey.questions
    finally:
        db.conn.close()
    assert json.loads(question.design) == FORCED
    for design, k in ((FORCED, 2), (FORCED_ZERO, 3)):
        plan = auth_client.get("/dashboard/plan.json", query_string={"k": k, "design": json.dumps(design),
                                                                      "target": 1000, "margin": 0.05})
        assert plan.status_code == 200, plan.get_json()
        assert plan.get_json()["protected"] is (k == 2)


def test_the_embed_s_design_document_carries_the_realized_weights(app, client):
    from support.dashboard import make_survey

    make_survey(app, DEFINITION, status="open")
    document = client.get("/api/v1/surveys/decimals").get_json()
    by_id = {q["id"]: q for q in document["questions"]}
    assert by_id["cheated"]["weights"] == [list(row) for row in d.forced(0.62, [0.23, 0.15]).weights]
    assert by_id["often"]["weights"] == [list(row) for row in d.forced(0.62, [0.23, 0.15, 0]).weights]
    assert by_id["graded"]["weights"] == [list(row) for row in d.custom(MATRIX).weights]
