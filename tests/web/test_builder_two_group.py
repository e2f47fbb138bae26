"""The survey builder edits two-group designs (issue 38): a question of each model (CDM, CDMsym, SLD,
UQTunknown) made through the builder's POST is stored as its definition's import stores it, and exported
the same; every bad field is a 422 naming it, with the definition parser's message, at its field; the
planning panel (the page's and /dashboard/plan.json's) gives deniable.estimators.plan_two_group's numbers."""

from __future__ import annotations

import html
import io
import json
import re

import pytest

from deniable.estimators import plan_two_group
from deniable.server.store.surveys import get_survey
from deniable.server.survey.definition import parse_definition
from support.dashboard import builder_form, csrf_token, open_db

TEXT = "Have you ever cheated on an exam?"
# each model's question as the builder's fields, and as a definition file writes it
MODELS = [
    ({"kind": "two_group", "qid": "cdm", "text": TEXT, "group_model": "CDM", "group_p1": "0.3", "group_p2": "0,7",
      "group_share": "0.5"},
     {"id": "cdm", "text": TEXT, "type": "two_group", "model": "CDM", "p": [0.3, 0.7]}),
    ({"kind": "two_group", "qid": "sym", "text": TEXT, "group_model": "CDMsym", "group_p1": "0.2", "group_p2": "0.3",
      "group_p3": "0.3", "group_p4": "0.2", "group_share": "0.4"},
     {"id": "sym", "text": TEXT, "type": "two_group", "model": "CDMsym", "p": [0.2, 0.3, 0.3, 0.2], "group_share": 0.4}),
    ({"kind": "two_group", "qid": "sld", "text": TEXT, "group_model": "SLD", "group_p1": "0.3", "group_p2": "0.8",
      "group_share": "0.5", "known_prevalence": "0", "group_p3": "0.9"},  # a hidden field of another model: unread
     {"id": "sld", "text": TEXT, "type": "two_group", "model": "SLD", "p": [0.3, 0.8], "known_prevalence": 0}),
    ({"kind": "two_group", "qid": "uqt", "text": "Have you ever bought a thesis?", "group_model": "UQTunknown",
      "group_p1": "0.3", "group_p2": "0.8", "group_share": "0.6", "unrelated": "Were you born in the first half of the year?"},
     {"id": "uqt", "text": "Have you ever bought a thesis?", "type": "two_group", "model": "UQTunknown", "p": [0.3, 0.8],
      "group_share": 0.6, "unrelated": "Were you born in the first half of the year?"}),
]
SLOTS = [slot for slot, _ in MODELS]
DEFINITION = {"slug": "imported", "title": "Honesty", "description": "", "questions": [q for _, q in MODELS]}


def builder_data(token, questions, **extra):
    return builder_form(token, {"slug": "honesty", "title": "Honesty", "description": "", "target_n": "1000",
                                "margin": "0.05", "save": "Save draft", **extra}, questions)


def exported_questions(auth_client, slug):
    response = auth_client.get(f"/dashboard/{slug}/definition.json")
    assert response.status_code == 200
    return response.get_json()["questions"]


def test_each_model_is_made_in_the_builder_as_its_import_makes_it(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, SLOTS))
    assert response.status_code == 302, response.get_data(as_text=True)
    upload = (io.BytesIO(json.dumps(DEFINITION).encode()), "imported.json")
    response = auth_client.post("/dashboard/import", data={"csrf_token": token, "definition": upload, "target_n": "1000"},
                                content_type="multipart/form-data")
    assert response.status_code == 302
    built, imported = get_survey(open_db(app), "honesty").survey, get_survey(open_db(app), "imported").survey
    assert built.questions == imported.questions
    assert exported_questions(auth_client, "honesty") == exported_questions(auth_client, "imported")
    assert parse_definition({**DEFINITION, "questions": exported_questions(auth_client, "honesty")}).questions \
        == parse_definition(DEFINITION).questions
    sym = built.questions[1]
    assert sym.protected and sym.mechanism.model == "CDMsym"  # CDMsym's ε is its realized one, no ε entered


def test_a_saved_two_group_question_is_shown_in_its_fields_and_saved_again_unchanged(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    assert auth_client.post("/dashboard/new", data=builder_data(token, SLOTS)).status_code == 302
    before = exported_questions(auth_client, "honesty")
    page = html.unescape(auth_client.get("/dashboard/honesty/edit").get_data(as_text=True))
    assert "cannot edit" not in page
    assert re.findall(r'<option selected value="(\w+)">', page)[:4] == ["CDM", "CDMsym", "SLD", "UQTunknown"]
    assert 'name="questions-1-group_p4" type="text" value="0.2"' in page
    assert 'value="Were you born in the first half of the year?"' in page
    assert 'name="questions-2-known_prevalence" type="text" value="0"' in page
    # save the page as it shows them (every field as the form holds it): nothing changes
    fields = dict(re.findall(r'<input [^>]*name="(questions-\d+-(?:qid|group_\w+|unrelated|known_prevalence))"'
                             r'[^>]*value="([^"]*)"', page))
    models = {f"questions-{i}-group_model": m for i, m in enumerate(["CDM", "CDMsym", "SLD", "UQTunknown"])}
    texts = {f"questions-{i}-text": s["text"] for i, s in enumerate(SLOTS)}
    kinds = {f"questions-{i}-kind": "two_group" for i in range(4)}
    data = {"csrf_token": token, "title": "Honesty", "description": "", "target_n": "1000", "save": "Save draft",
            **fields, **models, **texts, **kinds, **{f"questions-{i}-required": "y" for i in range(4)}}
    response = auth_client.post("/dashboard/honesty/edit", data=data)
    assert response.status_code == 302, response.get_data(as_text=True)
    assert exported_questions(auth_client, "honesty") == before


CDM = MODELS[0][0]
SYM = MODELS[1][0]
UQT = MODELS[3][0]
BAD = [
    (CDM, {"group_p1": ""}, "questions-0-group_p1", "Question 1, p₁: enter a probability such as 0.3"),
    (CDM, {"group_p2": "most"}, "questions-0-group_p2", "Question 1, p₂: enter a number such as 0.3, not 'most'"),
    (CDM, {"group_p2": "1.5"}, "questions-0-group_p2", "Question 1, p₂: must be a probability from 0 to 1, got 1.5"),
    (CDM, {"group_p2": "0.3"}, "questions-0-group_p1", "Question 1, p₁: the two groups answer alike with p = [0.3, 0.3]"),
    (SYM, {"group_p4": "0.8"}, "questions-0-group_p4",
     "Question 1, p₄: group 2's yes and no probabilities must sum to at most 1, got 0.3 + 0.8"),
    (SYM, {"group_p3": ""}, "questions-0-group_p3", "Question 1, p₃: enter a probability"),
    (CDM, {"group_share": "1"}, "questions-0-group_share",
     "Question 1, group 1 share: must be above 0 and below 1 (both groups need respondents), got 1"),
    (CDM, {"group_model": "RRT"}, "questions-0-group_model",
     "Question 1, model: must be one of CDM, CDMsym, SLD, UQTunknown, got \"RRT\""),
    (UQT, {"unrelated": " "}, "questions-0-unrelated", "Question 1, unrelated question: must not be empty"),
    (CDM, {"known_prevalence": "2"}, "questions-0-known_prevalence",
     "Question 1, known prevalence (known-answer item): must be a prevalence from 0 to 1, got 2"),
]


@pytest.mark.parametrize("question, change, field, message", BAD)
def test_a_bad_field_is_named_at_its_field_with_the_imports_message(app, auth_client, question, change, field,
                                                                    message):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, [{**question, **change}]))
    assert response.status_code == 422
    page = html.unescape(response.get_data(as_text=True))
    assert f'<a href="#{field}">{message}' in page  # the summary names the field and links to it
    assert f'id="{field}-errors"' in page and f'aria-describedby="{field}-hint {field}-errors"' in page
    assert page.count('aria-invalid="true"') == 1  # the one field, nowhere else
    assert get_survey(open_db(app), "honesty") is None


def test_the_import_refuses_the_same_definitions_with_the_same_words(app, auth_client):
    """The builder's messages are the definition parser's: the import of the same question says the same."""
    token = csrf_token(auth_client, "/dashboard/")
    bad = {**DEFINITION, "questions": [{**MODELS[1][1], "p": [0.2, 0.3, 0.3, 0.8]}]}
    upload = (io.BytesIO(json.dumps(bad).encode()), "bad.json")
    response = auth_client.post("/dashboard/import", data={"csrf_token": token, "definition": upload, "target_n": "100"},
                                content_type="multipart/form-data")
    assert "group 2's yes and no probabilities must sum to at most 1, got 0.3 + 0.8" in html.unescape(
        response.get_data(as_text=True))


@pytest.mark.parametrize("slot, definition", MODELS, ids=[m for m in ("CDM", "CDMsym", "SLD", "UQTunknown")])
def test_the_planning_panel_gives_plan_two_groups_numbers(app, auth_client, slot, definition):
    query = {"type": "two_group", "model": definition["model"], "target": "800", "margin": "0.04",
             **{f"p{i + 1}": str(v) for i, v in enumerate(definition["p"])}}
    response = auth_client.get("/dashboard/plan.json", query_string=query)
    assert response.status_code == 200, response.get_json()
    plan = response.get_json()
    for interval in ("exact", "wald"):
        expected = plan_two_group(definition["model"], definition["p"], 0.04, interval=interval)
        assert plan[interval]["n"] == expected.n and plan[interval]["n_groups"] == list(expected.n_groups)
        assert plan[interval]["share"] == pytest.approx(expected.share)
        assert f"{round(100 * expected.share)} % in group 1 minimizes n" in plan["html"]
        assert f"{expected.n:,}" in plan["html"]
    assert plan["needed"] == plan["exact"]["n"]
    assert plan["protected"] == (definition["model"] == "CDMsym")
    words = {"CDM": "not ε-LDP: an honest carrier always answers Yes", "CDMsym": "ε = ",
             "SLD": "not ε-LDP: a carrier always answers Yes", "UQTunknown": "deniability rests on the unrelated question"}
    assert words[definition["model"]] in plan["privacy"] and words[definition["model"]] in html.unescape(plan["html"])


def test_the_page_panels_are_the_same_numbers(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    assert auth_client.post("/dashboard/new", data=builder_data(token, SLOTS)).status_code == 302
    page = html.unescape(auth_client.get("/dashboard/honesty/edit").get_data(as_text=True))
    for i, (_, definition) in enumerate(MODELS):
        panel = page.split(f'id="plan-{i}"')[1].split("</aside>")[0]
        for interval in ("exact", "wald"):
            expected = plan_two_group(definition["model"], definition["p"], 0.05, interval=interval)
            assert f"{expected.n:,}" in panel and f"{round(100 * expected.share)} % in group 1 minimizes n" in panel
    # the total ε counts CDMsym's realized ε only (the others are not ε-LDP)
    sym = get_survey(open_db(app), "honesty").survey.questions[1]
    assert f'<span id="total-epsilon-value">{sym.epsilon:.3f}</span>' in page


@pytest.mark.parametrize("query, field", [
    ({"model": "CDM", "p1": "0.3"}, "p2"), ({"model": "CDM", "p1": "0.3", "p2": "2"}, "p2"),
    ({"model": "CDMsym", "p1": "0.2", "p2": "0.3", "p3": "0.3"}, "p4"), ({"model": "CDM", "p1": "0.3", "p2": "0.3"}, "p"),
    ({"model": "X", "p1": "0.3", "p2": "0.7"}, "model"),
    ({"model": "CDM", "p1": "0.3", "p2": "0.7", "group_share": "1"}, "group_share"),
])
def test_plan_json_refuses_bad_two_group_parameters_naming_them(auth_client, query, field):
    response = auth_client.get("/dashboard/plan.json", query_string={"type": "two_group", **query})
    assert response.status_code == 400 and response.get_json()["field"] == field, response.get_json()
