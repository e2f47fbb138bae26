"""The lifecycle in the dashboard: confirmations that say what becomes frozen, the public address
and QR code after opening, reopen, duplicate, delete a draft, wording fixes with their change log,
the preview, and the closed survey's friendly message at every entry point."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest

from deniable.server.store.surveys import get_survey
from support.dashboard import EMAIL, csrf_token, ensure_researcher, login, make_survey, open_db, share_survey


def post(client, url, **data):
    return client.post(url, data={"csrf_token": csrf_token(client, "/dashboard/"), **data})


def text(response) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))


def test_opening_is_confirmed_with_what_becomes_frozen(app, auth_client):
    make_survey(app)
    edit = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert 'href="/dashboard/habits/confirm?to=open"' in edit  # the button leads to a confirmation
    page = auth_client.get("/dashboard/habits/confirm?to=open")
    assert page.status_code == 200
    words = " ".join(text(page).split())
    assert "Open the survey?" in words and "http://localhost/s/habits" in words
    for frozen in ("none can be added, removed or moved", "their number and their order", "each ε",
                   "whether each question is required", "fix typos"):
        assert frozen in words
    assert get_survey(open_db(app), "habits").status == "draft"  # nothing happened yet
    response = post(auth_client, "/dashboard/habits/status", status="open")
    assert response.status_code == 302 and response.headers["Location"] == "/dashboard/habits/edit#share-title"


def test_after_opening_the_full_address_a_copy_button_and_a_qr_code(app, auth_client):
    app.config["BASE_URL"] = "https://survey.example.org"
    make_survey(app, status="open")
    page = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert 'value="https://survey.example.org/s/habits" readonly' in page and 'id="copy-url"' in page
    svg = re.search(r'<svg role="img".*?</svg>', page, re.S).group(0)
    root = ET.fromstring(svg)
    assert root.find("title").text == "QR code of https://survey.example.org/s/habits"
    assert "style=" not in svg and "<script" not in svg
    assert 'value="https://survey.example.org/s/habits"' in auth_client.get("/dashboard/habits/results").get_data(
        as_text=True)


@pytest.mark.parametrize("status, action, says", [
    ("open", "close", "Respondents can no longer answer"),
    ("closed", "reopen", "Respondents can answer again"),
])
def test_close_and_reopen_are_confirmed(app, auth_client, status, action, says):
    make_survey(app, status=status)
    page = auth_client.get(f"/dashboard/habits/confirm?to={action}")
    assert page.status_code == 200 and says in text(page)
    post(auth_client, "/dashboard/habits/status", status="open" if action == "reopen" else "closed")
    assert get_survey(open_db(app), "habits").status == ("open" if action == "reopen" else "closed")


def test_a_confirmation_that_does_not_apply_goes_back_with_a_message(app, auth_client):
    make_survey(app, status="open")
    response = auth_client.get("/dashboard/habits/confirm?to=delete")
    assert response.status_code == 302
    assert "cannot be deleted" in html.unescape(auth_client.get("/dashboard/habits/edit").get_data(as_text=True))
    assert auth_client.get("/dashboard/habits/confirm?to=explode").status_code == 400


def test_duplicate_any_survey_as_a_draft_of_ones_own(app, auth_client):
    make_survey(app, status="closed", owner="someone@example.org")
    share_survey(app, "habits", EMAIL, "viewer")
    response = post(auth_client, "/dashboard/habits/duplicate")
    assert response.status_code == 302 and response.headers["Location"] == "/dashboard/habits-copy/edit"
    copy = get_survey(open_db(app), "habits-copy")
    assert copy.status == "draft" and copy.owner_id == ensure_researcher(app)
    assert auth_client.get("/dashboard/habits-copy/edit").status_code == 200  # the viewer owns the copy


def test_delete_a_draft_but_never_a_launched_survey(app, auth_client):
    make_survey(app)
    page = auth_client.get("/dashboard/habits/confirm?to=delete")
    assert "cannot be undone" in text(page)
    assert post(auth_client, "/dashboard/habits/delete").status_code == 302
    assert get_survey(open_db(app), "habits") is None
    make_survey(app, status="open")
    assert post(auth_client, "/dashboard/habits/delete").status_code == 409
    assert get_survey(open_db(app), "habits") is not None


def test_only_the_owner_deletes(app):
    make_survey(app)
    bob = "bob@example.org"
    share_survey(app, "habits", bob, "editor")
    client = app.test_client()
    login(client, email=bob)
    assert post(client, "/dashboard/habits/delete").status_code == 403
    assert get_survey(open_db(app), "habits") is not None


def wording_form(stored, **changes):
    data = {"wording-title": stored.survey.title, "wording-description": stored.survey.description,
            "wording-contact": stored.survey.contact}
    for i, q in enumerate(stored.survey.questions):
        data[f"wording-questions-{i}-text"] = q.text
        for j, label in enumerate(q.options):
            data[f"wording-questions-{i}-options-{j}"] = label
    data.update(changes)
    return data


def test_fix_a_typo_after_opening_with_a_change_log_and_the_codebook_saying_so(app, auth_client):
    stored = make_survey(app, status="open")
    response = post(auth_client, "/dashboard/habits/wording", **wording_form(
        stored, **{"wording-questions-1-text": "Have you cheated on an exam?", "wording-questions-1-options-2": "Often (3+)"}))
    assert response.status_code == 302
    fixed = get_survey(open_db(app), "habits").survey
    assert fixed.question("cheat").text == "Have you cheated on an exam?"
    assert fixed.question("cheat").options == ("Never", "Once", "Often (3+)")
    assert fixed.question("cheat").epsilon == 2.0
    page = auth_client.get("/dashboard/habits/edit")
    log = re.search(r'<table class="change-log".*?</table>', page.get_data(as_text=True), re.S).group(0)
    rows = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split())
            for row in re.findall(r"<tr>(.*?)</tr>", log, re.S)[1:]]
    assert any("Question 2 (cheat), text Cheated on an exam? Have you cheated on an exam? ada@example.org" in r
               for r in rows), rows
    assert any("Question 2 (cheat), option 3 Often Often (3+)" in r for r in rows), rows
    codebook = auth_client.get("/dashboard/habits/export/codebook.json").get_json()
    assert [v["version"] for v in codebook["text_versions"]] == [1, 2]
    assert codebook["text_versions"][0]["wording"]["questions"]["cheat"]["options"][2] == "Often"
    assert codebook["questions"][1]["options"][2] == "Often (3+)"


def test_a_fix_that_moves_an_option_is_refused_and_summarised(app, auth_client):
    stored = make_survey(app, status="open")
    response = post(auth_client, "/dashboard/habits/wording", **wording_form(
        stored, **{"wording-questions-1-options-0": "Often"}))
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert '<a href="#wording-questions-1-options-0">Question 2, option 1: &#39;Often&#39; is option 3&#39;s label' in page
    assert 'id="wording-questions-1-options-0"' in page
    assert get_survey(open_db(app), "habits") == stored


def test_preview_shows_the_page_respondents_will_see_and_sends_nothing(app, auth_client, client):
    make_survey(app)
    response = auth_client.get("/dashboard/habits/preview")
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and 'id="preview-banner"' in page and 'data-preview="true"' in page
    assert 'action=""' in page and "Used drugs this year?" in page
    assert client.get("/s/habits").status_code == 404  # respondents cannot see a draft


def test_a_closed_survey_answers_every_entry_point_in_friendly_words(app, client):
    make_survey(app, status="closed")
    response = client.post("/api/v1/surveys/habits/responses", json={"reports": {"drugs": 0, "cheat": 0, "age": 0}})
    assert response.status_code == 409
    assert response.get_json() == {"error": "This survey is closed: “Habits” no longer accepts answers. "
                                            "Thank you for your interest.", "field": "slug"}
    page = client.get("/s/habits")
    assert page.status_code == 410 and "no longer accepts answers" in page.get_data(as_text=True)


def test_the_dashboard_links_to_a_favicon_and_it_is_served(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert b"<svg" in response.data
    response.close()
    assert 'rel="icon"' in client.get("/auth/login").get_data(as_text=True)


def test_estimates_files_are_named_with_method_and_confidence(app, auth_client):
    make_survey(app, status="open")
    response = auth_client.get("/dashboard/habits/export/estimates.csv?method=wilson&confidence=0.99&simultaneous=y")
    assert response.headers["Content-Disposition"] == \
        'attachment; filename="habits-estimates-wilson-99-simultaneous.csv"'
    response = auth_client.get("/dashboard/habits/export/estimates.json")
    assert response.headers["Content-Disposition"] == 'attachment; filename="habits-estimates-exact-95.json"'
    for name in ("responses.csv", "codebook.json", "responses.sav", "responses.dta"):
        response = auth_client.get(f"/dashboard/habits/export/{name}")
        assert response.headers["Content-Disposition"] == f'attachment; filename="habits-{name}"'
    results = auth_client.get("/dashboard/habits/results?method=wilson&confidence=0.99").get_data(as_text=True)
    assert "habits-estimates-wilson-99.csv" in results


def test_fixes_seconds_apart_through_the_form_leave_one_version_per_day(app, auth_client, client):
    """Issue 41, item 1, as the red team ran it: five fixes through the wording form with submissions
    through the JSON API between them.  The pages show each fix at once; the responses, the export's
    ``text-version`` and the codebook's counts put every response of the day under one version."""
    import time

    stored = make_survey(app, status="open")
    for fix in range(5):
        for i in range(16):
            answer = client.post("/api/v1/surveys/habits/responses",
                                 json={"reports": {"drugs": i % 2, "cheat": i % 3, "age": i % 2}})
            assert answer.status_code == 201
        title = f"Habits, take {fix}"
        assert post(auth_client, "/dashboard/habits/wording", **wording_form(
            get_survey(open_db(app), "habits"), **{"wording-title": title})).status_code == 302
        assert f"<h1>{title}</h1>" in client.get("/s/habits").get_data(as_text=True)  # shown at once
        time.sleep(0.05)
    rows = auth_client.get("/dashboard/habits/export/responses.csv").get_data(as_text=True).splitlines()[1:]
    assert rows[0].endswith(",text-version") and len(rows) == 81
    assert {row.rsplit(",", 1)[1] for row in rows[1:]} == {"1"}
    codebook = auth_client.get("/dashboard/habits/export/codebook.json").get_json()
    assert [(v["version"], v["responses"]) for v in codebook["text_versions"]] == [(1, 80)] + [(v, 0) for v in range(2, 7)]
    assert stored.text_version == 1 and get_survey(open_db(app), "habits").text_version == 6
