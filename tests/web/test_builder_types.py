"""The survey builder with numeric, check-all-that-apply and list-experiment questions: create,
edit and save each type without JavaScript; every bad field is a 422 naming it and nothing is
stored; the planning panels (the page's and /dashboard/plan.json's) give each type's numbers."""

from __future__ import annotations

import html
import re

import pytest

from deniable.estimators.listexp import list_margin
from deniable.estimators.numeric import plan_numeric
from deniable.server.store.db import connect
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import load_definition
from support.dashboard import builder_form, csrf_token, ensure_researcher, open_db

NUMERIC = {"kind": "numeric", "qid": "drinks", "text": "Drinks last week?", "minimum": "0", "maximum": "40",
           "step": "1", "mechanism": "auto", "protection": "protected", "epsilon": "1"}
MULTI = {"kind": "multi", "qid": "used", "text": "Which have you used?", "options": "Cannabis\nCocaine\nEcstasy",
         "protection": "protected", "epsilon": "1.5"}
LIST = {"kind": "list", "qid": "shop", "text": "How many apply to you?",
        "items": "I own a bicycle\nI have been abroad\nI read a book", "sensitive": "I have shoplifted",
        "protection": "protected", "epsilon": "1"}
CHOICE = {"qid": "year", "text": "Year of study?", "options": "First\nSecond", "protection": "direct"}


def builder_data(token, questions, **extra):
    return builder_form(token, {"slug": "typed", "title": "Typed", "description": "", "target_n": "1000",
                                "save": "Save draft", **extra}, questions)


def rows(db_path):
    db = connect(db_path)
    try:
        return db.execute("SELECT qid, type, spec, options FROM questions ORDER BY id").fetchall()
    finally:
        db.close()


def test_each_type_is_created_in_the_builder_and_read_back(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, [NUMERIC, MULTI, LIST, CHOICE]))
    assert response.status_code == 302, response.get_data(as_text=True)
    survey = get_survey(open_db(app), "typed").survey
    drinks, used, shop, year = survey.questions
    assert (drinks.type, drinks.minimum, drinks.maximum, drinks.step, drinks.epsilon) == ("numeric", 0, 40, 1, 1.0)
    best = plan_numeric(40, 1.0, 1000)[0]
    assert (drinks.method, drinks.grid) == (best.mechanism, best.grid)  # "auto": the planner's choice
    assert (used.type, used.options, used.epsilon) == ("multi", ("Cannabis", "Cocaine", "Ecstasy"), 1.5)
    assert (shop.type, shop.options, shop.sensitive, shop.epsilon) == (
        "list", ("I own a bicycle", "I have been abroad", "I read a book"), "I have shoplifted", 1.0)
    assert (year.type, year.protected) == ("choice", False)
    page = auth_client.get("/dashboard/typed/edit").get_data(as_text=True)
    checked = re.findall(r'<input checked class="q-kind" id="questions-\d+-kind-\d" [^>]*value="(\w+)"', page)
    assert checked == ["numeric", "multi", "list", "choice"]
    for value in ("I have shoplifted", "Cannabis\nCocaine\nEcstasy", 'name="questions-0-maximum" type="text" value="40"'):
        assert value in html.unescape(page), value
    # each panel speaks of its type
    assert "the planner's choice" in page and "ε/3" in page and "Randomized list experiment, protected by ε" in page


def test_a_typed_draft_is_edited_and_saved(app, auth_client, db_path):
    db = connect(db_path)
    insert_survey(db, load_definition("examples/habits.json"), owner_id=1)
    db.close()
    token = csrf_token(auth_client, "/dashboard/habits/edit")
    page = html.unescape(auth_client.get("/dashboard/habits/edit").get_data(as_text=True))
    assert "does not edit" not in page and 'id="questions-1-mechanism-2"' in page
    hours = {"kind": "numeric", "qid": "hours", "text": "Hours?", "minimum": "0", "maximum": "20", "step": "0,5",
             "mechanism": "grid", "grid": "4", "protection": "protected", "epsilon": "2"}
    plain = {**LIST, "protection": "direct", "epsilon": ""}
    response = auth_client.post("/dashboard/habits/edit", data=builder_data(token, [hours, plain, MULTI]))
    assert response.status_code == 302, response.get_data(as_text=True)
    hours_q, shop, _used = get_survey(open_db(app), "habits").survey.questions
    assert (hours_q.method, hours_q.grid, hours_q.step) == ("grid", 4, 0.5)
    assert shop.type == "list" and not shop.protected
    page = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert "Plain list experiment: not protected by ε." in page
    assert 'name="questions-0-grid" type="text" value="4"' in page  # an override stays an override


def test_the_laplace_override_is_kept(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    laplace = {**NUMERIC, "mechanism": "laplace", "grid": "7"}  # G is for the grid mechanism only: ignored
    assert auth_client.post("/dashboard/new", data=builder_data(token, [laplace])).status_code == 302
    drinks = get_survey(open_db(app), "typed").survey.questions[0]
    assert (drinks.method, drinks.grid) == ("laplace", None)
    page = auth_client.get("/dashboard/typed/edit").get_data(as_text=True)
    assert '<input checked class="q-mechanism" id="questions-0-mechanism-2"' in page and "your choice" in page


BAD = [
    (NUMERIC, {"minimum": ""}, "questions-0-minimum", "Question 1, min: enter the smallest possible answer"),
    (NUMERIC, {"minimum": "zero"}, "questions-0-minimum", "Question 1, min: enter a number such as 0, not 'zero'"),
    (NUMERIC, {"maximum": "NaN"}, "questions-0-maximum", "Question 1, max: enter a number"),
    (NUMERIC, {"maximum": "-3"}, "questions-0-maximum", "Question 1, max: must be greater than min (0)"),
    (NUMERIC, {"step": "0.7"}, "questions-0-step", "Question 1, step: max − min (40) must be a whole number of steps"),
    (NUMERIC, {"step": "0.001"}, "questions-0-step", "Question 1, step: a numeric question has at most 1001"),
    (NUMERIC, {"mechanism": "grid", "grid": "3"}, "questions-0-grid", "Question 1, G: "),
    (NUMERIC, {"mechanism": "grid", "grid": "two"}, "questions-0-grid", "Question 1, G: enter a whole number"),
    (NUMERIC, {"mechanism": "gaussian"}, "questions-0-mechanism", "Question 1, mechanism: Not a valid choice"),
    (NUMERIC, {"epsilon": "0"}, "questions-0-epsilon", "Question 1, ε: enter a number above 0 and at most 20"),
    (MULTI, {"options": "Only one"}, "questions-0-options", "Question 1, options: needs between 2 and 20 options"),
    (MULTI, {"options": "A\nA"}, "questions-0-options", "Question 1, options: option 2: duplicate label 'A'"),
    (MULTI, {"epsilon": ""}, "questions-0-epsilon", "Question 1, ε: a protected question needs ε"),
    (LIST, {"items": ""}, "questions-0-items", "Question 1, control items: needs between 1 and 10 control items"),
    (LIST, {"sensitive": " "}, "questions-0-sensitive", "Question 1, sensitive item: must not be empty"),
    (LIST, {"sensitive": "I read a book"}, "questions-0-sensitive", "Question 1, sensitive item: must differ"),
    (LIST, {"epsilon": "abc"}, "questions-0-epsilon", "Question 1, ε: enter a number such as 1, not 'abc'"),
    (LIST, {"epsilon": ""}, "questions-0-epsilon",
     "Question 1, ε: a protected question needs ε: enter a number such as 1, or choose “plain (not protected by ε)”"),
    (LIST, {"kind": "ranking"}, "questions-0-kind", "Question 1, type: Not a valid choice"),
]


@pytest.mark.parametrize("question, change, field, message", BAD)
@pytest.mark.parametrize("where", ["new", "edit"])
def test_a_bad_field_is_named_and_nothing_is_stored(app, auth_client, db_path, question, change, field, message,
                                                    where):
    if where == "edit":
        db = connect(db_path)
        insert_survey(db, load_definition("examples/habits.json"), owner_id=1)
        db.close()
    url = "/dashboard/new" if where == "new" else "/dashboard/habits/edit"
    before = rows(db_path)
    token = csrf_token(auth_client, url)
    response = auth_client.post(url, data=builder_data(token, [CHOICE, {**question, **change}]))
    assert response.status_code == 422
    page = html.unescape(response.get_data(as_text=True))
    question_two = message.replace("Question 1", "Question 2")
    field_two = field.replace("questions-0", "questions-1")
    assert f'<a href="#{field_two}">{question_two}' in page  # the summary names the field and links to it
    assert f'id="{field_two}-errors"' in page or field_two.endswith(("-kind", "-mechanism"))
    assert rows(db_path) == before  # nothing partial stored


@pytest.mark.parametrize("query, keys", [
    ("type=numeric&min=0&max=40&epsilon=1&target=1000", {"moe", "candidates", "html"}),
    ("type=numeric&min=0&max=20&step=0.5&epsilon=2&mechanism=laplace", {"moe", "candidates"}),
    ("type=numeric&min=0&max=10", {"moe"}),
    ("type=multi&k=4&epsilon=2&target=500", {"option", "bit_epsilon"}),
    ("type=list&items=3&epsilon=1", {"moe", "baseline_moe"}),
    ("type=list&items=3", {"moe"}),
])
def test_plan_json_gives_each_types_numbers(auth_client, query, keys):
    response = auth_client.get(f"/dashboard/plan.json?{query}")
    assert response.status_code == 200, response.get_json()
    plan = response.get_json()
    assert keys <= set(plan) and plan["html"].strip()


def test_plan_json_numbers_are_the_estimators(auth_client):
    numeric = auth_client.get("/dashboard/plan.json?type=numeric&min=0&max=40&epsilon=1&target=800").get_json()
    expected = plan_numeric(40, 1.0, 800, margin=0.05 * 40)
    assert [(c["mechanism"], c["grid"]) for c in numeric["candidates"]] == [(r.mechanism, r.grid) for r in expected]
    assert numeric["moe"] == pytest.approx(expected[0].margin_worst) and numeric["needed"] == expected[0].needed
    listed = auth_client.get("/dashboard/plan.json?type=list&items=3&epsilon=1&target=800").get_json()
    assert listed["moe"] == pytest.approx(list_margin(3, 1.0, 800).margin_worst)
    assert "Plain list experiment: not protected by ε." in auth_client.get(
        "/dashboard/plan.json?type=list&items=3").get_json()["html"]
    multi = auth_client.get("/dashboard/plan.json?type=multi&k=4&epsilon=2&target=800").get_json()
    single = auth_client.get("/dashboard/plan.json?k=2&epsilon=0.5&target=800").get_json()
    assert multi["option"]["moe"] == pytest.approx(single["moe"])  # each option: a yes/no question at ε/K


@pytest.mark.parametrize("query, field", [
    ("type=ranking", "type"), ("type=numeric&max=40", "min"), ("type=numeric&min=0&max=0", "max"),
    ("type=numeric&min=0&max=40&step=3", "step"), ("type=numeric&min=0&max=40&epsilon=1&mechanism=grid&grid=3", "grid"),
    ("type=numeric&min=0&max=40&epsilon=1&mechanism=x", "mechanism"), ("type=multi&k=1", "k"),
    ("type=multi&k=4&epsilon=99", "epsilon"), ("type=list&items=11", "items"), ("type=list&items=2&target=0", "target"),
])
def test_plan_json_refuses_bad_typed_parameters_naming_them(auth_client, query, field):
    response = auth_client.get(f"/dashboard/plan.json?{query}")
    assert response.status_code == 400 and response.get_json()["field"] == field


@pytest.mark.parametrize("language, texts", [
    ("es", ["Tu respuesta, de 0 a 40:", "Tu respuesta, de 0 a 20 en pasos de 0.5:", "Marca todas las que correspondan",
            "¿Cuántas de estas afirmaciones se aplican a ti?", "Indica un número entero de {min} a {max}.",
            "ninguna marcada", "{count} (de los {shown} elementos mostrados)"]),
    ("fr", ["Votre réponse, de 0 à 40 :", "Cochez toutes celles qui vous concernent", "aucune cochée",
            "Veuillez indiquer un nombre de {min} à {max} par pas de {step}.", "Combien de ces affirmations"]),
])
def test_the_typed_questions_speak_the_respondents_language(app, client, db_path, language, texts):
    db = connect(db_path)
    insert_survey(db, load_definition("examples/habits.json"), status="open", owner_id=ensure_researcher(app))
    db.close()
    page = html.unescape(client.get("/s/habits", headers={"Accept-Language": language}).get_data(as_text=True))
    for text in texts:
        assert text in page, text
    assert "Tick every one" not in page and "Please give a number" not in page


def test_question_actions_keep_a_typed_slots_fields(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    data = builder_data(token, [LIST, NUMERIC], action="duplicate-1")
    del data["save"]
    page = html.unescape(auth_client.post("/dashboard/new", data=data).get_data(as_text=True))
    checked = re.findall(r'<input checked class="q-kind" id="questions-\d+-kind-\d" [^>]*value="(\w+)"', page)
    assert checked == ["list", "numeric", "numeric"]
    assert 'name="questions-2-maximum" type="text" value="40"' in page and "I have shoplifted" in page
    assert get_survey(open_db(app), "typed") is None
