"""The survey builder without JavaScript: question actions that keep every edit, names made from
words, the respondents' texts, and the planning numbers (the page's and /dashboard/plan.json's)."""

from __future__ import annotations

import html
import json
import re

import pytest
from click.testing import CliRunner

from deniable import estimators
from deniable.server.cli import cli
from deniable.server.store.surveys import get_survey
from support.dashboard import builder_form, csrf_token, open_db
from support.plan_cache import assert_decided

QUESTIONS = [
    {"qid": "drugs", "text": "Used drugs?", "options": "Yes\nNo", "protection": "protected", "epsilon": "1"},
    {"qid": "cheat", "text": "Cheated?", "options": "Never\nOnce\nOften", "protection": "protected", "epsilon": "2"},
    {"qid": "age", "text": "Age group", "options": "<30\n30+", "protection": "direct", "epsilon": ""},
]


def builder_data(token, questions=QUESTIONS, **extra):
    return builder_form(token, {"slug": "habits", "title": "Habits", "description": "", "target_n": "500", **extra},
                        questions)


def slots(page: str) -> list[str]:
    """The question ids of the form's slots, in order."""
    return re.findall(r'<input[^>]*id="questions-\d+-qid"[^>]*value="([^"]*)"', page)


@pytest.mark.parametrize("action, order, focus", [
    ("up-1", ["cheat", "drugs", "age"], "questions-0-up"),
    ("down-0", ["cheat", "drugs", "age"], "questions-1-down"),
    ("up-0", ["drugs", "cheat", "age"], "questions-0-up"),  # the first cannot go higher: nothing moves
    ("duplicate-1", ["drugs", "cheat", "cheat_copy", "age"], "questions-2-text"),
    ("delete-1", ["drugs", "age"], "questions-1-text"),
])
def test_question_actions_work_without_javascript_and_keep_every_edit(app, auth_client, action, order, focus):
    token = csrf_token(auth_client, "/dashboard/new")
    edited = [dict(q) for q in QUESTIONS]
    edited[0]["text"] = "Used drugs? (edited, not saved)"
    response = auth_client.post("/dashboard/new", data=builder_data(token, edited, action=action))
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert slots(page) == order
    assert "Used drugs? (edited, not saved)" in page  # nothing typed is lost
    assert f'data-focus="{focus}"' in page  # the same button (or the new question) gets the focus back
    assert get_survey(open_db(app), "habits") is None  # nothing saved


def test_deleting_the_only_question_leaves_an_empty_slot(auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    page = auth_client.post("/dashboard/new", data=builder_data(token, QUESTIONS[:1], action="delete-0")).get_data(
        as_text=True)
    assert slots(page) == [""]


def test_a_blank_address_and_ids_are_made_from_the_words(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    questions = [{**q, "qid": ""} for q in QUESTIONS]
    questions[1]["text"] = "How often have you cheated on an exam?"
    response = auth_client.post("/dashboard/new", data=builder_data(
        token, questions, slug="", title="Campus health: 2025 édition!", save="Save draft"))
    assert response.status_code == 302 and response.headers["Location"] == "/dashboard/campus-health-2025-edition/edit"
    stored = get_survey(open_db(app), "campus-health-2025-edition")
    assert [q.id for q in stored.survey.questions] == ["used_drugs", "how_often_cheated_exam", "age_group"]


def test_the_respondents_texts_are_saved_and_shown(app, auth_client, client):
    token = csrf_token(auth_client, "/dashboard/new")
    auth_client.post("/dashboard/new", data=builder_data(
        token, information="We study habits.\n\nAnswers are anonymous.", contact="Ada, ada@example.org",
        consent="y", language="fr", save="Save draft"))
    survey = get_survey(open_db(app), "habits").survey
    assert (survey.information, survey.contact, survey.consent, survey.language) == (
        "We study habits.\n\nAnswers are anonymous.", "Ada, ada@example.org", True, "fr")
    preview = auth_client.get("/dashboard/habits/preview").get_data(as_text=True)
    assert '<html lang="fr">' in preview and "<p>We study habits.</p>" in preview
    assert 'id="consent-agree"' in preview and "Ada, ada@example.org" in preview
    consent = re.search(r'<input type="checkbox" id="consent-agree"[^>]*>', preview).group(0)
    assert "name=" not in consent  # nothing about the agreement is sent


def test_consent_without_information_is_refused(auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, consent="y", save="Save draft"))
    assert response.status_code == 422
    assert "Agreement: asks respondents to agree to the information" in html.unescape(response.get_data(as_text=True))


@pytest.mark.parametrize("k, epsilon, margin", [(2, 1.0, 0.05), (4, 2.0, 0.05), (3, 0.5, 0.1), (2, 3.0, 0.03)])
def test_plan_json_gives_the_numbers_of_deniable_plan(auth_client, k, epsilon, margin):
    response = auth_client.get(f"/dashboard/plan.json?k={k}&epsilon={epsilon}&target=700&margin={margin}")
    assert response.status_code == 200
    plan = response.get_json()
    result = CliRunner().invoke(cli, ["plan", "--k", str(k), "--margin", str(margin), "--epsilon", str(epsilon),
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.output)["plans"]
    assert (plan["needed"], plan["baseline_needed"]) == (row["n"], row["n_without_privacy"])
    # both plan by the decided search (issue 40): the margin met exactly, within 1 % above the exhaustive n
    assert_decided(plan["needed"], epsilon, k, margin)
    assert_decided(plan["baseline_needed"], None, k, margin)
    assert plan["needed_exact"] and plan["epsilon"] == row["epsilon"] and plan["p"] == row["p"]
    assert plan["moe"] == estimators.margin_of_error(epsilon, k, 700)
    assert plan["baseline_moe"] == estimators.margin_of_error(None, k, 700)
    assert (plan["warning"] is not None) == (epsilon >= 3)


@pytest.mark.parametrize("query, field", [
    ("k=1&epsilon=1", "k"), ("k=2&epsilon=0", "epsilon"), ("k=2&epsilon=one", "epsilon"), ("k=65", "k"),
    ("k=2&epsilon=1&target=0", "target"), ("k=2&margin=0.6", "margin"), ("epsilon=1", "k"),
])
def test_plan_json_refuses_bad_parameters_naming_them(auth_client, query, field):
    response = auth_client.get(f"/dashboard/plan.json?{query}")
    assert response.status_code == 400 and response.get_json()["field"] == field


def test_plan_json_needs_a_login(client):
    assert client.get("/dashboard/plan.json?k=2&epsilon=1").status_code == 302


def test_a_high_epsilon_warns_that_the_answer_is_nearly_exposed(auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    questions = [{**QUESTIONS[0], "epsilon": "8"}]
    page = html.unescape(auth_client.post("/dashboard/new", data=builder_data(token, questions, action="up-0"))
                         .get_data(as_text=True))
    assert "Warning:</strong> At ε = 8 the answer is practically exposed" in page
    assert "Keeps the true answer <strong>more than 99.9%</strong>" in page  # never "100.0%"
