"""The dashboard: access control on every URL, designing (with the definition's messages on the
fields), import/export of definitions, and the draft → open → closed lifecycle enforced by the server."""

from __future__ import annotations

import html
import io
import json
import re

import pytest

from deniable.server.survey.definition import DefinitionError, parse_definition
from deniable.server.store.surveys import get_survey
from support.dashboard import DEFINITION, builder_form, csrf_token, make_survey, open_db
from support.plan_cache import assert_decided

# Every dashboard URL and the results API, with the methods each accepts.
URLS = [
    ("GET", "/dashboard/"),
    ("GET", "/dashboard/new"),
    ("POST", "/dashboard/new"),
    ("POST", "/dashboard/import"),
    ("GET", "/dashboard/habits/edit"),
    ("POST", "/dashboard/habits/edit"),
    ("POST", "/dashboard/habits/status"),
    ("POST", "/dashboard/habits/invitations"),
    ("POST", "/dashboard/habits/shares"),
    ("GET", "/dashboard/habits/definition.json"),
    ("GET", "/dashboard/habits/results"),
    ("GET", "/dashboard/habits/report"),
    ("GET", "/dashboard/habits/crosstab"),
    ("GET", "/dashboard/habits/subgroups"),
    ("GET", "/dashboard/habits/results/chart/q0.svg"),
    ("GET", "/dashboard/habits/crosstab/chart/joint.svg?row=drugs&col=cheat"),
    ("GET", "/dashboard/habits/subgroups/chart.svg"),
    ("GET", "/dashboard/habits/regression/chart/effect0.svg"),
    ("GET", "/dashboard/habits/monitoring/chart/band0.svg"),
    ("GET", "/dashboard/habits/export/responses.csv"),
    ("GET", "/dashboard/habits/export/codebook.json"),
    ("GET", "/dashboard/habits/export/estimates.json"),
    ("GET", "/dashboard/habits/export/estimates.csv"),
    ("GET", "/dashboard/habits/export/responses.sav"),
    ("GET", "/dashboard/habits/export/responses.dta"),
    ("GET", "/dashboard/habits/confirm?to=open"),
    ("POST", "/dashboard/habits/duplicate"),
    ("POST", "/dashboard/habits/delete"),
    ("POST", "/dashboard/habits/wording"),
    ("POST", "/dashboard/habits/wording/fr"),
    ("POST", "/dashboard/habits/translations"),
    ("GET", "/dashboard/habits/preview"),
    ("GET", "/dashboard/plan.json?k=2&epsilon=1"),
    ("GET", "/dashboard/types.css"),
    ("GET", "/dashboard/habits/regression"),
    ("GET", "/dashboard/habits/monitoring"),
    ("GET", "/dashboard/habits/weighting"),
    ("GET", "/dashboard/habits/embed"),
    ("POST", "/dashboard/habits/weighting"),
    ("GET", "/dashboard/habits/publish"),
    ("POST", "/dashboard/habits/publish/budget"),
    ("POST", "/dashboard/habits/publish/release"),
    ("POST", "/dashboard/habits/publish/visibility"),
    ("GET", "/api/v1/surveys/habits/estimates"),
]
# The admins' pages: a researcher who is not an admin gets 404 there (tests/web/test_colleagues.py).
ADMIN_URLS = [
    ("GET", "/dashboard/colleagues/"),
    ("POST", "/dashboard/colleagues/invite"),
    ("POST", "/dashboard/colleagues/revoke"),
]


def test_the_access_table_covers_every_route(app):
    """A new dashboard route must be added to URLS (and so to the access-control test)."""
    covered = set()
    for method, url in URLS + ADMIN_URLS:
        adapter = app.url_map.bind("localhost")
        endpoint, _ = adapter.match(url.split("?")[0], method=method)
        covered.add((endpoint, method))
    routes = {(rule.endpoint, method) for rule in app.url_map.iter_rules()
              if rule.endpoint.split(".")[0] == "dashboard"
              for method in rule.methods - {"HEAD", "OPTIONS"}}
    public = {("dashboard.static", "GET")}  # the stylesheet, which the login page uses too
    assert routes - public <= covered, sorted(routes - public - covered)


def test_the_dashboard_stylesheet_needs_no_login(client):
    response = client.get("/dashboard/static/dashboard.css")
    assert response.status_code == 200 and response.mimetype == "text/css"
    response.close()


@pytest.mark.parametrize("method, url", URLS + ADMIN_URLS)
def test_logged_out_is_sent_to_login_or_gets_401(app, client, method, url):
    make_survey(app, status="open")
    token = csrf_token(client)  # a valid CSRF token, so the login check itself is what refuses
    response = client.open(url, method=method, data={"csrf_token": token} if method == "POST" else None)
    if url.startswith("/api/"):
        assert response.status_code == 401
        assert response.get_json() == {"error": "login required", "field": None}
    else:
        assert response.status_code == 302
        assert response.headers["Location"].startswith("/auth/login?next=")
    db = open_db(app)
    assert get_survey(db, "habits").status == "open"  # nothing changed
    assert db.execute("SELECT count(*) FROM surveys").fetchone()[0] == 1
    db.conn.close()


@pytest.mark.parametrize("method, url", URLS)
def test_logged_in_reaches_every_url(app, auth_client, method, url):
    make_survey(app, status="draft")
    token = csrf_token(auth_client, "/dashboard/")
    response = auth_client.open(url, method=method, data={"csrf_token": token} if method == "POST" else None)
    assert response.status_code not in (302, 401, 403, 404, 500) or (
        response.status_code == 302 and not response.headers["Location"].startswith("/auth/")), response.status_code


# ---------------------------------------------------------------- designing


def form_data(token, *, slug="habits", title="Habits", target_n="500", questions=None, **extra):
    return builder_form(token, {"slug": slug, "title": title, "description": "About habits", "target_n": target_n,
                                "save": "Save draft", **extra}, questions if questions is not None else [
        {"qid": "drugs", "text": "Used drugs?", "options": "Yes\nNo", "protection": "protected", "epsilon": "1"},
        {"qid": "age", "text": "Age group", "options": "<30\n30+", "protection": "direct", "epsilon": ""}])


def field_errors(page: str, field_id: str) -> str:
    match = re.search(rf'<ul class="errors" id="{re.escape(field_id)}-errors">(.*?)</ul>', page, re.S)
    return html.unescape(match.group(1)) if match else ""


def test_create_a_draft_in_the_browser_form(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=form_data(token))
    assert response.status_code == 302 and response.headers["Location"] == "/dashboard/habits/edit"
    stored = get_survey(open_db(app), "habits")
    assert stored.status == "draft" and stored.target_n == 500
    drugs, age = stored.survey.questions
    assert (drugs.id, drugs.options, drugs.epsilon, drugs.required) == ("drugs", ("Yes", "No"), 1.0, True)
    assert (age.id, age.options, age.protected) == ("age", ("<30", "30+"), False)
    page = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert "Draft &#39;habits&#39; saved." in page


def test_add_question_without_javascript(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    data = form_data(token, add_question="Add a question")
    del data["save"]
    response = auth_client.post("/dashboard/new", data=data)
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert 'name="questions-2-qid"' in page and 'name="questions-3-qid"' not in page
    assert get_survey(open_db(app), "habits") is None  # nothing saved yet


def test_blank_question_slots_are_ignored(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    questions = [{"qid": "", "text": "", "options": "", "protection": "protected", "epsilon": "1"},
                 {"qid": "drugs", "text": "Used drugs?", "options": "\nYes\nNo\n\n", "protection": "protected",
                  "epsilon": "0.5"}]
    response = auth_client.post("/dashboard/new", data=form_data(token, questions=questions))
    assert response.status_code == 302
    [q] = get_survey(open_db(app), "habits").survey.questions
    assert q.options == ("Yes", "No") and q.epsilon == 0.5


Q = {"qid": "drugs", "text": "Used drugs?", "options": "Yes\nNo", "protection": "protected", "epsilon": "1"}
D = {"id": "drugs", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0}

# (form overrides, the field whose errors list shows it, its message in plain words, the line of the error
#  summary at the top of the page, the equivalent definition and its message in a definition file, or None)
INVALID = [
    ({"slug": "Bad Slug"}, "slug", "must be lowercase letters, digits and '-'", "Address: must be lowercase",
     ({"slug": "Bad Slug"}, "slug: must be lowercase letters, digits and '-'")),
    ({"title": "  "}, "title", "must not be empty", "Title: must not be empty", ({"title": "  "}, "title: must not be empty")),
    ({"questions": [{**Q, "options": "Yes"}]}, "questions-0-options", "needs between 2 and 64 options, got 1",
     "Question 1, options: needs between 2 and 64 options, got 1",
     ({"questions": [{**D, "options": ["Yes"]}]}, "questions[0].options: needs between 2 and 64 options, got 1")),
    ({"questions": [{**Q, "options": "Yes\nYes"}]}, "questions-0-options", "option 2: duplicate label 'Yes'",
     "Question 1, options: option 2: duplicate label 'Yes'",
     ({"questions": [{**D, "options": ["Yes", "Yes"]}]}, "questions[0].options[1]: duplicate label 'Yes'")),
    ({"questions": [{**Q, "options": "Yes\n\nNo"}]}, "questions-0-options", "option 2: must not be empty",
     "Question 1, options: option 2: must not be empty",
     ({"questions": [{**D, "options": ["Yes", "", "No"]}]}, "questions[0].options[1]: must not be empty")),
    ({"questions": [{**Q, "epsilon": "25"}]}, "questions-0-epsilon", "enter a number above 0 and at most 20, such as 1 (got 25)",
     "Question 1, ε: enter a number above 0 and at most 20, such as 1",
     ({"questions": [{**D, "epsilon": 25.0}]}, "questions[0].epsilon: epsilon must be a finite number in (0, 20], got 25.0")),
    ({"questions": [{**Q, "epsilon": "0"}]}, "questions-0-epsilon", "enter a number above 0 and at most 20, such as 1 (got 0)",
     "Question 1, ε: enter a number above 0", None),
    ({"questions": [{**Q, "epsilon": "one"}]}, "questions-0-epsilon", "enter a number such as 1, not 'one'",
     "Question 1, ε: enter a number such as 1", None),
    ({"questions": [{**Q, "epsilon": ""}]}, "questions-0-epsilon", "a protected question needs ε: enter a number such as 1",
     "Question 1, ε: a protected question needs ε", None),
    ({"questions": [{**Q, "qid": "1st"}]}, "questions-0-qid", "must be a letter or _", "Question 1, id: must be a letter",
     ({"questions": [{**D, "id": "1st"}]}, "questions[0].id: must be a letter or _")),
    ({"questions": [Q, {**Q, "text": "Again?"}]}, "questions-1-qid", "duplicate question id 'drugs'",
     "Question 2, id: duplicate question id 'drugs'",
     ({"questions": [D, {**D, "text": "Again?"}]}, "questions[1].id: duplicate question id 'drugs'")),
    ({"questions": [{**Q, "text": ""}]}, "questions-0-text", "must not be empty", "Question 1, text: must not be empty",
     ({"questions": [{**D, "text": ""}]}, "questions[0].text: must not be empty")),
    ({"target_n": "lots"}, "target_n", "enter a whole number of respondents", "Target respondents: enter a whole number", None),
]


def summary_links(page: str) -> list[tuple[str, str]]:
    """The error summary's (target, text) links."""
    match = re.search(r'<div class="error-summary".*?</div>', page, re.S)
    assert match, "no error summary on the page"
    return [(target, html.unescape(text)) for target, text in re.findall(r'<a href="#([^"]+)">(.*?)</a>', match.group(0))]


@pytest.mark.parametrize("overrides, field_id, message, summary, definition", INVALID)
def test_invalid_designs_are_summarised_at_the_top_and_shown_on_the_field(app, auth_client, overrides, field_id,
                                                                          message, summary, definition):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=form_data(token, **overrides))
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert message in html.unescape(field_errors(page, field_id)), field_errors(page, field_id) or page[-3000:]
    # The summary comes before the form, in plain words, each line a link to its field.
    assert page.index('class="error-summary"') < page.index('id="design-form"')
    links = summary_links(page)
    assert any(target == field_id and text.startswith(summary) for target, text in links), links
    assert f'id="{field_id}"' in page
    assert not any("questions[" in text for _, text in links)  # no paths, the card's own words
    assert get_survey(open_db(app), overrides.get("slug", "habits")) is None
    if definition is not None:  # a definition file keeps its own message, with the field's path
        changes, file_message = definition
        with pytest.raises(DefinitionError) as exc:
            parse_definition({"slug": "habits", "title": "Habits", "questions": [D], **changes})
        assert file_message in str(exc.value)


def test_both_bad_questions_are_reported_at_once(auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    questions = [{**Q, "options": "Yes"}, {**Q, "qid": "other", "epsilon": "99"}]
    page = auth_client.post("/dashboard/new", data=form_data(token, questions=questions)).get_data(as_text=True)
    assert "needs between 2 and 64 options" in field_errors(page, "questions-0-options")
    assert "at most 20" in field_errors(page, "questions-1-epsilon")
    assert [target for target, _ in summary_links(page)] == ["questions-0-options", "questions-1-epsilon"]


def test_no_questions_at_all(auth_client):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=form_data(token, questions=[]))
    assert response.status_code == 422
    assert ("design-form", "Survey: add at least one question (fill in its text and options)") in \
        summary_links(response.get_data(as_text=True))


def test_an_existing_slug_is_refused(app, auth_client):
    make_survey(app)
    token = csrf_token(auth_client, "/dashboard/new")
    page = auth_client.post("/dashboard/new", data=form_data(token)).get_data(as_text=True)
    assert "a survey 'habits' already exists" in field_errors(page, "slug")


def test_form_without_csrf_token_is_refused(app, auth_client):
    data = form_data("")
    del data["csrf_token"]
    assert auth_client.post("/dashboard/new", data=data).status_code == 400
    assert get_survey(open_db(app), "habits") is None


def test_editing_a_draft_replaces_its_design(app, auth_client):
    make_survey(app)
    page = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert "Yes\nNo" in page or "Yes&#10;No" in page or "Yes\r\nNo" in page
    token = csrf_token(auth_client, "/dashboard/habits/edit")
    questions = [{**Q, "options": "Yes\nNo\nRather not say", "epsilon": "1.5"}]
    response = auth_client.post("/dashboard/habits/edit", data=form_data(token, slug="ignored", title="Renamed",
                                                                           questions=questions))
    assert response.status_code == 302
    stored = get_survey(open_db(app), "habits")
    assert stored.survey.title == "Renamed"
    assert stored.survey.questions[0].options == ("Yes", "No", "Rather not say")
    assert stored.survey.questions[0].epsilon == 1.5
    assert get_survey(open_db(app), "ignored") is None


def test_the_planning_panel_shows_p_explain_margins_and_the_region(app, auth_client):
    from deniable import estimators
    from deniable.server.survey.explain import explain
    from deniable.server.survey.planning import plan

    make_survey(app, target_n=800)
    response = auth_client.get("/dashboard/habits/edit?margin=0.04")
    assert response.status_code == 200
    page = html.unescape(response.get_data(as_text=True))
    q = get_survey(open_db(app), "habits").survey.question("cheat")
    panel = re.search(r'<aside class="plan-panel" id="plan-1".*?</aside>', page, re.S).group(0)
    assert f"Keeps the true answer {100 * q.mechanism.p:.1f}% of the time" in re.sub(r"</?strong>", "", panel)
    assert f"p = {q.mechanism.p:.4f}" in panel and f"realized ε = {q.mechanism.epsilon:.4f}" in panel
    assert explain(q.epsilon, q.k)["coin"] in panel
    assert f"± {100 * estimators.margin_of_error(q.epsilon, q.k, 800):.1f} points" in panel
    assert f"(± {100 * estimators.margin_of_error(None, q.k, 800):.1f} without privacy)" in panel
    assert "Respondents needed for ± 4.0 points" in panel
    # the decided search (issue 40): the margin met exactly, within 1 % above the exhaustive n
    needed, baseline = plan(q.epsilon, q.k, 0.04).n, plan(None, q.k, 0.04).n
    assert_decided(needed, q.epsilon, q.k, 0.04, exhaustive=estimators.sample_size(q.epsilon, q.k, 0.04))
    assert_decided(baseline, None, q.k, 0.04, exhaustive=estimators.sample_size(None, q.k, 0.04))
    assert f'data-needed="{needed}"' in panel
    assert "{:,}".format(needed) in panel
    assert "{:,}".format(baseline) in panel
    assert re.search(r"Total ε per respondent: <span id=\"total-epsilon-value\">(3\.000|2\.99\d)</span>", page)
    assert page.count('class="dp-region"') == 2  # one per protected question
    assert 'id="margin"' in page and 'value="0.04"' in page  # the margin asked for fills the form


# ---------------------------------------------------------------- lifecycle


def change_status(client, status):
    token = csrf_token(client, "/dashboard/")
    return client.post("/dashboard/habits/status", data={"csrf_token": token, "status": status})


def test_lifecycle_draft_open_closed(app, auth_client):
    make_survey(app)
    assert change_status(auth_client, "open").status_code == 302
    assert get_survey(open_db(app), "habits").status == "open"
    change_status(auth_client, "open")  # again: refused, with the reason
    assert "is open: it cannot become &#39;open&#39;" in auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert change_status(auth_client, "closed").status_code == 302
    assert get_survey(open_db(app), "habits").status == "closed"
    change_status(auth_client, "open")  # reopening: the design stays frozen
    assert get_survey(open_db(app), "habits").status == "open"
    assert change_status(auth_client, "draft").status_code == 400  # not a choice at all


@pytest.mark.parametrize("status", ["open", "closed"])
def test_the_server_refuses_to_change_a_launched_design(app, auth_client, status):
    make_survey(app, status="open")
    if status == "closed":
        change_status(auth_client, "closed")
    page = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert f"This survey is <strong>{status}</strong>" in page and 'name="questions-0-options"' not in page
    before = get_survey(open_db(app), "habits")
    token = csrf_token(auth_client, "/dashboard/")
    # A hand-made POST (the page offers no form): other options and another ε.
    questions = [{**Q, "options": "Yes\nNo\nMaybe", "epsilon": "5"}]
    response = auth_client.post("/dashboard/habits/edit", data=form_data(token, questions=questions))
    assert response.status_code == 409
    assert f"Survey &#39;habits&#39; is {status}: its questions, options and ε are frozen" in response.get_data(as_text=True)
    assert get_survey(open_db(app), "habits") == before


def test_responses_only_while_open(app, auth_client):
    make_survey(app)
    body = {"reports": {"drugs": 1, "cheat": 0, "age": 1}}
    api = "/api/v1/surveys/habits/responses"
    assert auth_client.post(api, json=body).status_code == 404  # a draft is not published
    change_status(auth_client, "open")
    assert auth_client.post(api, json=body).status_code == 201
    change_status(auth_client, "closed")
    assert auth_client.post(api, json=body).status_code in (403, 409, 410)
    db = open_db(app)
    assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 1


# ---------------------------------------------------------------- import / export of definitions


def test_import_a_definition_file_and_export_it_again(app, auth_client):
    token = csrf_token(auth_client, "/dashboard/")
    upload = (io.BytesIO(json.dumps(DEFINITION).encode()), "habits.json")
    response = auth_client.post("/dashboard/import", data={"csrf_token": token, "definition": upload, "target_n": "250"},
                                content_type="multipart/form-data")
    assert response.status_code == 302
    stored = get_survey(open_db(app), "habits")
    assert stored.status == "draft" and stored.target_n == 250
    exported = auth_client.get("/dashboard/habits/definition.json")
    assert exported.headers["Content-Disposition"] == 'attachment; filename="habits-definition.json"'
    assert parse_definition(exported.get_json()) == parse_definition(DEFINITION)


@pytest.mark.parametrize("content, message", [
    (b"{not json", "bad.json: line 1: not valid JSON"),
    (json.dumps({**DEFINITION, "questions": [{**DEFINITION["questions"][0], "epsilon": 50}]}).encode(),
     "bad.json: questions[0].epsilon: epsilon must be a finite number in (0, 20]"),
    (b"\xff\xfe", "bad.json: not UTF-8 text"),
])
def test_import_errors_name_the_file_and_field(app, auth_client, content, message):
    token = csrf_token(auth_client, "/dashboard/")
    response = auth_client.post("/dashboard/import", data={"csrf_token": token, "target_n": "100",
                                                            "definition": (io.BytesIO(content), "bad.json")},
                                content_type="multipart/form-data")
    assert response.status_code == 422
    assert message in html.unescape(response.get_data(as_text=True))
    assert open_db(app).execute("SELECT count(*) FROM surveys").fetchone()[0] == 0
