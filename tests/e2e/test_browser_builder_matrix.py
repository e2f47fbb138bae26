"""A custom matrix typed in the builder (issue 39): one line per report, numbers separated by spaces or commas;
the live panel shows its realized ε and the respondents it needs (the server's planner), a bad matrix is said in
the parser's words, the card's line follows, and Save stores the matrix as an import would."""

from __future__ import annotations

import json
import math

import pytest

from deniable.server.survey.definition import parse_question
from support.browser import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def builder(page, live_server, researcher):
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "status of 400" not in m.text
            and "status of 422" not in m.text else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, live_server)
    yield page
    assert errors == []


def panel_says(page, i: int, text: str) -> None:
    page.wait_for_function("([i, text]) => document.getElementById(`plan-${i}`).textContent.includes(text)",
                           arg=[i, text])


def test_a_custom_matrix_is_typed_planned_and_saved(builder, live_server, app):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Matrix live")
    page.fill("#questions-0-text", "Which colour?")
    page.fill("#questions-0-qid", "colour")
    page.fill("#questions-0-options", "Red\nGreen\nBlue")
    page.check("input[name='questions-0-randomization'][value='custom']")
    assert page.locator("#questions-0-design_matrix").is_visible()
    assert not page.locator("#questions-0-epsilon").is_visible()
    page.fill("#questions-0-design_matrix", "0.7, 0.15, 0.05\n0,2 0,7 0,15\n0.1;0.15;0.8")
    matrix = [[0.7, 0.15, 0.05], [0.2, 0.7, 0.15], [0.1, 0.15, 0.8]]
    q = parse_question({"id": "q", "text": "q", "options": ["Red", "Green", "Blue"],
                        "design": {"name": "custom", "matrix": matrix}})
    plan = q.qtype.plan(q, 1000, 0.05)
    panel_says(page, 0, f"{plan['needed']:,}")
    assert f"{q.epsilon:.4f}" in page.inner_text("#plan-0")
    line = page.inner_text("#question-0-line")
    assert "a custom matrix" in line and f"ε = {float(f'{q.epsilon:.3g}'):g}" in line and f"n = {plan['needed']:,}" in line
    # a column that does not add up to 1: the parser's words in the panel
    page.fill("#questions-0-design_matrix", "0.7 0.15 0.05\n0.2 0.7 0.15\n0.1 0.15 0.7")
    panel_says(page, 0, "must add up to 1")
    assert "n = " not in page.inner_text("#question-0-line-plan")
    # saved with the bad matrix: the error on the field, the card open, the summary linking to it
    with page.expect_navigation():
        page.click("#save")
    link = page.locator("#error-summary a[href='#questions-0-design_matrix']")
    assert link.count() == 1 and "Question 1, matrix: column 3 (option 3) must add up to 1" in link.inner_text()
    link.click()
    assert page.evaluate("() => document.activeElement.id") == "questions-0-design_matrix"
    page.fill("#questions-0-design_matrix", "0.7 0.15 0.05\n0.2 0.7 0.15\n0.1 0.15 0.8")
    with page.expect_navigation():
        page.click("#save")
    assert "/dashboard/matrix-live/edit" in page.url
    exported = json.loads(page.evaluate(
        "() => fetch(location.pathname.replace('/edit', '/definition.json')).then((r) => r.text())"))
    assert exported["questions"][0]["design"] == {"name": "custom", "matrix": matrix}
    assert not math.isnan(q.epsilon)
