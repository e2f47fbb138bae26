"""The survey builder in chromium: a failed save shows its summary in the first screen, questions
are added, moved and deleted from the keyboard, names follow the words, and the live planning
panel shows exactly the numbers of ``deniable plan`` before anything is saved."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.surveys import get_survey
from support.browser import builder_page
from support.dashboard import make_survey, open_db

pytestmark = pytest.mark.browser


@pytest.fixture
def builder(page, live_server, researcher):
    with builder_page(page, live_server) as logged_in:
        yield logged_in


def fill_question(page, i, text, options, epsilon):
    page.fill(f"#questions-{i}-text", text)
    page.fill(f"#questions-{i}-options", options)
    page.fill(f"#questions-{i}-epsilon", epsilon)


def test_a_failed_save_shows_the_summary_in_the_first_screen_and_links_to_the_field(builder, live_server):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Habits")
    fill_question(page, 0, "Used drugs?", "Yes\nNo", "one")
    with page.expect_navigation():
        page.click("#save")
    summary = page.locator("#error-summary")
    box = summary.bounding_box()
    assert box["y"] + box["height"] <= 900  # in the first screen, without scrolling
    assert page.evaluate("() => document.activeElement.id") == "error-summary"  # read out first
    link = summary.get_by_role("link", name="Question 1, ε: enter a number such as 1, not 'one'")
    link.click()
    assert page.evaluate("() => location.hash") == "#questions-0-epsilon"
    field = page.locator("#questions-0-epsilon")
    assert field.get_attribute("aria-invalid") == "true" and field.input_value() == "one"  # nothing lost


def test_add_move_and_delete_questions_from_the_keyboard(builder, live_server, app):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Order")
    fill_question(page, 0, "First question?", "Yes\nNo", "1")
    page.focus("#add_question")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "questions-1-text"  # the new question
    page.keyboard.type("Second question?")
    page.fill("#questions-1-options", "A\nB\nC")
    page.fill("#questions-1-epsilon", "2")
    page.focus("#questions-1-up")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.input_value("#questions-0-text") == "Second question?"
    assert page.evaluate("() => document.activeElement.id") == "questions-0-up"  # the same button, moved
    assert page.get_attribute("#questions-0-up", "aria-disabled") == "true"
    page.keyboard.press("Space")  # already first: the button says so and does nothing
    assert page.input_value("#questions-0-text") == "Second question?" and page.url.endswith("/dashboard/new")
    page.focus("#questions-1-duplicate")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert [page.input_value(f"#questions-{i}-text") for i in range(3)] == [
        "Second question?", "First question?", "First question?"]
    page.focus("#questions-2-delete")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator("article.question-card").count() == 2
    with page.expect_navigation():
        page.click("#save")
    assert page.url.endswith("/dashboard/order/edit")
    stored = get_survey(open_db(app), "order").survey
    assert [(q.text, q.k, q.epsilon) for q in stored.questions] == [("Second question?", 3, 2.0),
                                                                    ("First question?", 2, 1.0)]


def test_names_follow_the_words_until_edited(builder, live_server):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.type("#title", "Santé des étudiants 2025")
    assert page.input_value("#slug") == "sante-des-etudiants-2025"
    page.fill("#slug", "my-own")
    page.type("#title", "!")
    assert page.input_value("#slug") == "my-own"  # edited by hand: no longer follows
    page.type("#questions-0-text", "How often have you cheated on an exam?")
    assert page.input_value("#questions-0-qid") == "how_often_cheated_exam"


@pytest.mark.parametrize("k, epsilon, margin, target", [(2, "1", "0.05", "1000"), (4, "2", "0.04", "500"),
                                                      (3, "0.5", "0.1", "300")])
def test_the_live_planning_panel_shows_the_numbers_of_deniable_plan(builder, live_server, app, k, epsilon, margin,
                                                                    target):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#target_n", target)
    page.fill("#margin", margin)
    fill_question(page, 0, "A question?", "\n".join(f"Option {i}" for i in range(k)), epsilon)
    panel = page.locator("#plan-0")
    page.wait_for_function(
        "([k, e]) => { const p = document.getElementById('plan-0'); return p.dataset.ready && "
        "!p.classList.contains('is-loading') && p.textContent.includes(`k = ${k},`) && "
        "Math.abs(Number(p.dataset.epsilon) - Number(e)) < 1e-6; }", arg=[k, epsilon])
    result = CliRunner().invoke(cli, ["plan", "--k", str(k), "--margin", margin, "--epsilon", epsilon,
                                      "--format", "json"])
    [row] = json.loads(result.output)["plans"]
    assert int(panel.get_attribute("data-needed")) == row["n"]
    assert int(panel.get_attribute("data-baseline-needed")) == row["n_without_privacy"]
    assert f"{row['n']:,}" in panel.locator(".needed").inner_text()
    assert f"Respondents needed for ± {100 * float(margin):.1f} points" in panel.inner_text()
    assert f"Margin of error at {int(target):,} respondents" in panel.inner_text()
    assert open_db(app).execute("SELECT count(*) FROM surveys").fetchone()[0] == 0  # computed before saving


def test_a_high_epsilon_warns_live_and_the_total_follows(builder, live_server):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    fill_question(page, 0, "A question?", "Yes\nNo", "1")
    page.wait_for_function("() => document.getElementById('plan-0').dataset.ready")
    assert page.locator("#plan-0 .plan-warning").count() == 0
    page.fill("#questions-0-epsilon", "9")
    page.wait_for_selector("#plan-0 .plan-warning")
    assert "practically exposed" in page.inner_text("#plan-0 .plan-warning")
    assert page.inner_text("#total-epsilon-value").startswith("9.000") or \
        page.inner_text("#total-epsilon-value").startswith("8.99")
    page.check("#questions-0-protection-1")  # asked directly: no ε, not protected
    page.wait_for_function("() => document.getElementById('total-epsilon-value').textContent === '0.000'")
    assert "not protected" in page.inner_text("#plan-0")
    assert not page.locator("#questions-0-epsilon").is_visible()


def test_preview_as_respondent_sends_nothing(builder, live_server, app):
    make_survey(app)
    page = builder
    page.goto(f"{live_server}/dashboard/habits/edit")
    with page.expect_navigation():
        page.click("text=Preview as respondent >> nth=0")
    assert "/dashboard/habits/preview" in page.url and page.locator("#preview-banner").is_visible()
    requests = []
    page.on("request", lambda r: requests.append(r.url) if r.method == "POST" else None)
    page.check("#drugs-option-0")
    page.check("#cheat-option-1")
    page.check("#age-option-0")
    page.click("#submit-answers")
    page.wait_for_selector("#js-status:not([hidden])")
    assert "Preview: nothing was sent." in page.inner_text("#js-status")
    assert requests == [] and page.evaluate("() => localStorage.length") == 0
