"""The lifecycle and the exports in chromium: confirmations, reopen, duplicate, delete, a typo fixed
after opening with its change log, downloads read back (CSV with a codebook whose ε was edited is
refused; SPSS and Stata with value labels), and what a respondent sees around it."""

from __future__ import annotations

import json

import pyreadstat
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.surveys import get_survey, set_status
from support.browser import log_in
from support.dashboard import make_survey, open_db, sample_columns, store_reports

pytestmark = pytest.mark.browser


@pytest.fixture
def dashboard(browser, live_server, researcher):
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
    page = context.new_page()
    log_in(page, live_server)
    yield page
    context.close()


def click_and_wait(page, selector):
    with page.expect_navigation():
        page.click(selector)


def test_open_close_reopen_duplicate_and_delete_with_confirmations(app, dashboard, live_server):
    make_survey(app)
    page = dashboard
    page.goto(f"{live_server}/dashboard/habits/edit")
    click_and_wait(page, "#open-survey")
    text = page.inner_text("main")
    assert "Open the survey?" in text and "What becomes frozen" in text and "each ε" in text
    click_and_wait(page, "#cancel-action")  # changed one's mind: nothing happened
    assert get_survey(open_db(app), "habits").status == "draft"
    click_and_wait(page, "#open-survey")
    click_and_wait(page, "#confirm-action")
    assert get_survey(open_db(app), "habits").status == "open"
    # the address, copied with one click
    page.click("#copy-url")
    page.wait_for_function("() => document.getElementById('copy-status').textContent.length > 0")
    assert page.evaluate("() => navigator.clipboard.readText()") == f"{live_server}/s/habits"
    click_and_wait(page, "#close-survey")
    assert "Respondents can no longer answer" in page.inner_text("main")
    click_and_wait(page, "#confirm-action")
    assert get_survey(open_db(app), "habits").status == "closed"
    page.goto(f"{live_server}/dashboard/habits/edit")
    click_and_wait(page, "#reopen-survey")
    assert "The design stays" in page.inner_text("main")
    click_and_wait(page, "#confirm-action")
    assert get_survey(open_db(app), "habits").status == "open"
    page.goto(f"{live_server}/dashboard/habits/edit")
    click_and_wait(page, "#duplicate-survey")
    assert page.url.endswith("/dashboard/habits-copy/edit") and "draft" in page.inner_text(".lifecycle-bar")
    click_and_wait(page, "#delete-survey")
    assert "cannot be undone" in page.inner_text("main")
    click_and_wait(page, "#confirm-action")
    assert page.url.endswith("/dashboard/") and get_survey(open_db(app), "habits-copy") is None
    assert get_survey(open_db(app), "habits").status == "open"


def test_a_typo_fixed_after_opening_is_logged_and_respondents_see_it(app, dashboard, live_server, browser):
    make_survey(app, status="open")
    page = dashboard
    page.goto(f"{live_server}/dashboard/habits/edit")
    page.fill("#wording-questions-1-text", "Have you cheated on an exam?")
    page.fill("#wording-questions-1-options-2", "Often (three times or more)")
    click_and_wait(page, "#fix-wording")
    log = page.inner_text("#change-log")
    assert "Question 2 (cheat), text" in log and "Cheated on an exam?" in log and "Have you cheated on an exam?" in log
    assert "Question 2 (cheat), option 3" in log and "Often (three times or more)" in log
    respondent = browser.new_page()
    try:
        respondent.goto(f"{live_server}/s/habits")
        assert "Have you cheated on an exam?" in respondent.inner_text("#q-cheat legend")
        assert respondent.is_visible("text=Often (three times or more)")
    finally:
        respondent.close()
    # moving a label to another option is refused, with the summary pointing at the field
    page.fill("#wording-questions-0-options-0", "No")
    click_and_wait(page, "#fix-wording")
    assert page.evaluate("() => document.activeElement.id") == "error-summary"
    assert "Question 1, option 1: 'No' is option 2's label" in page.inner_text("#error-summary")


def download(page, link_text, folder):
    with page.expect_download() as info:
        page.click(f"text={link_text}")
    path = folder / info.value.suggested_filename
    info.value.save_as(path)
    return path


def test_exports_cannot_be_misread_and_open_in_spss_and_stata(app, dashboard, live_server, tmp_path):
    make_survey(app, status="open")
    store_reports(app, "habits", sample_columns(300))
    page = dashboard
    page.goto(f"{live_server}/dashboard/habits/results")
    responses = download(page, "habits-responses.csv", tmp_path)
    codebook = download(page, "habits-codebook.json", tmp_path)
    assert (responses.name, codebook.name) == ("habits-responses.csv", "habits-codebook.json")
    ok = CliRunner().invoke(cli, ["estimate", str(codebook), str(responses)])
    assert ok.exit_code == 0 and "300 responses" in ok.output
    # an edited ε: refused, naming the question and both values, exit status 1
    edited = json.loads(codebook.read_text())
    edited["questions"][0]["epsilon"] = 2.0
    for q in edited["questions"]:
        q.pop("randomization")
    edited.pop("design_fingerprint")
    wrong = tmp_path / "edited.json"
    wrong.write_text(json.dumps(edited))
    refused = CliRunner().invoke(cli, ["estimate", str(wrong), str(responses)])
    assert refused.exit_code == 1
    assert "question 'drugs': the responses were collected with ε = 1 (k = 2, threshold" in refused.output
    assert "but " + str(wrong) + " says ε = 2" in refused.output
    # the estimates file says how they were computed
    page.select_option("#method", "wilson")
    page.select_option("#confidence", "0.99")
    click_and_wait(page, "form.selectors button")
    assert download(page, "habits-estimates-wilson-99.csv", tmp_path).exists()
    for ext, reader in (("sav", pyreadstat.read_sav), ("dta", pyreadstat.read_dta)):
        path = download(page, f"habits-responses.{ext}", tmp_path)
        frame, meta = reader(str(path), apply_value_formats=True)
        assert len(frame) == 300 and set(frame["drugs"]) <= {"Yes", "No"}
        assert meta.variable_value_labels["cheat"] == {1: "Never", 2: "Once", 3: "Often"}


def test_a_page_left_open_when_the_survey_closes_gets_the_friendly_message(app, page, live_server):
    make_survey(app, status="open")
    page.goto(f"{live_server}/s/habits")
    page.check("#drugs-option-0")
    page.check("#cheat-option-0")
    page.check("#age-option-0")
    page.locator("#submit-answers:not([disabled])").wait_for()
    db = open_db(app)
    set_status(db, "habits", "closed")
    db.conn.close()
    with page.expect_navigation():
        page.click("#submit-answers")
    assert page.inner_text("h1") == "This survey is closed"
    assert "“Habits” no longer accepts answers. Thank you for your interest." in page.inner_text("main")
    assert "Error" not in page.inner_text("main") and "409" not in page.inner_text("main")


LONG = {
    "slug": "long", "title": "A long survey", "description": "",
    "information": "We study habits.", "contact": "Ada, ada@example.org", "consent": True,
    "questions": [{"id": f"q{i}", "text": f"Question number {i}, with a text long enough to wrap on a phone?",
                   "options": ["Yes", "No", "Rather not say"], "epsilon": 1.0} for i in range(8)],
}


def test_consent_is_asked_and_a_long_survey_shows_how_far_one_is(app, browser, live_server):
    make_survey(app, LONG, status="open")
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(f"{live_server}/s/long")
        page.locator("#submit-answers:not([disabled])").wait_for()
        assert page.is_visible("#answer-progress") and page.inner_text("#answer-progress-text") == "0 of 8 answered"
        for i in range(8):
            page.check(f"#q{i}-option-0")
        assert page.inner_text("#answer-progress-text") == "8 of 8 answered"
        page.click("#submit-answers")
        assert page.inner_text("#consent-error") == "Please tick the box to say that you agree to take part."
        assert page.url.endswith("/s/long")
        page.check("#consent-agree")
        with page.expect_navigation():
            page.click("#submit-answers")
        assert "/s/long/thanks" in page.url and "Ada, ada@example.org" in page.inner_text("main")
    finally:
        context.close()
    db = open_db(app)
    assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 1
