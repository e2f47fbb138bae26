"""SurveyJS's own ``isRequired: true`` on an embedded question, in chromium with SurveyJS 2.5.38 (issue 39).

SurveyJS checks a required question by its value; the embed gives the question its value (the
report) only when the respondent leaves the page, so an answered required question used to show
"Response required" and keep the respondent on the page for good.  Now the embed tells SurveyJS the
question is answered as soon as it is — without giving SurveyJS, or the host, anything of the
answer: until the page is left ``survey.data`` holds nothing for it, and then only the report.
Answered, the survey goes on and completes; unanswered, SurveyJS's own "Response required" stops it.
The deniable definition leaves the questions optional, so only SurveyJS's check is at work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deniable.client.embed import current, integrity
from support.browser import open_for_the_embed
from support.other_origin import serving

pytestmark = pytest.mark.browser

SURVEYJS = Path(__file__).resolve().parents[1] / "support" / "surveyjs"
DEFINITION = {"slug": "required-js", "title": "Required", "questions": [
    {"id": "drugs", "text": "Have you used an illegal drug in the last 12 months?", "options": ["Yes", "No"],
     "epsilon": 1.0, "required": False},
    {"id": "days", "type": "numeric", "text": "On how many days did you drink last month?", "min": 0, "max": 30,
     "epsilon": 1.0, "required": False}]}

HOST_JS = """
const design = JSON.parse(document.getElementById("design").textContent);
DeniableEmbed.registerSurveyJS(Survey, { design });
const survey = new Survey.Model({ pages: [
  { name: "first", elements: [{ type: "deniable", name: "drugs", isRequired: true, titleLocation: "hidden" }] },
  { name: "second", elements: [{ type: "deniable", name: "days", isRequired: true, titleLocation: "hidden" }] },
] });
survey.onComplete.add((sender) => { window.completion = JSON.stringify(sender.data); });
survey.render(document.getElementById("surveyElement"));
window.survey = survey;
"""


@pytest.fixture
def host(app, live_server, page):
    design = open_for_the_embed(app, live_server, page, DEFINITION)
    embed = current()
    src = f"{live_server}/embed/{embed.version}/deniable-embed.js"
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title>
<script src="/survey.core.min.js"></script><script src="/survey-js-ui.min.js"></script>
<script src="{src}" integrity="{integrity(embed.script)}" crossorigin="anonymous"></script>
<script type="application/json" id="design">{json.dumps(design)}</script></head>
<body><div id="surveyElement"></div><script src="/host.js"></script></body></html>"""
    files = {"/host.html": ("text/html", html.encode()), "/host.js": ("text/javascript", HOST_JS.encode()),
             "/survey.core.min.js": ("text/javascript", (SURVEYJS / "survey.core.min.js").read_bytes()),
             "/survey-js-ui.min.js": ("text/javascript", (SURVEYJS / "survey-js-ui.min.js").read_bytes())}
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    with serving(files) as origin:
        page.goto(f"{origin}/host.html")
        page.wait_for_selector("#deniable-required-js-drugs-0")
        yield page, design
    assert not errors


def click(page, name: str) -> None:
    page.locator(f"input[type=button][value='{name}'], button:has-text('{name}')").first.click()


def data(page) -> dict:
    return page.evaluate("() => JSON.parse(JSON.stringify(window.survey.data))")


def page_name(page) -> str:
    return page.evaluate("() => window.survey.currentPage.name")


def test_a_required_embedded_question_blocks_unanswered_and_goes_on_answered(host):
    page, design = host
    click(page, "Next")  # unanswered: SurveyJS's own check stops it
    assert page_name(page) == "first"
    assert "Response required" in page.locator("#surveyElement").inner_text()
    assert page.evaluate("() => window.survey.currentPage.hasErrors(false)") is True

    page.check("#deniable-required-js-drugs-0")
    assert data(page) == {}  # the answer is nowhere the host can read: no value before the page is left
    assert page.evaluate("() => window.survey.currentPage.hasErrors(false)") is False
    click(page, "Next")
    page.wait_for_selector("#deniable-required-js-days-value")
    assert page_name(page) == "second"
    drugs = data(page)["drugs"]
    assert set(drugs) == {"report", "design", "epsilon"} and drugs["report"] in (0, 1)

    click(page, "Complete")  # the number, required and left empty
    assert page.evaluate("() => window.completion") is None
    assert "Response required" in page.locator("#surveyElement").inner_text()
    page.fill("#deniable-required-js-days-value", "31")  # not an answer: the embed's refusal, not SurveyJS's
    click(page, "Complete")
    assert page.evaluate("() => window.completion") is None
    assert page.locator(".deniable-error").inner_text() == "Please give a whole number from 0 to 30."
    page.fill("#deniable-required-js-days-value", "4")
    click(page, "Complete")
    page.wait_for_function("() => window.completion !== undefined")
    completion = json.loads(page.evaluate("() => window.completion"))
    assert set(completion) == {"drugs", "days"} and completion["drugs"] == drugs
    assert set(completion["days"]) == {"report", "design", "epsilon"}
    assert completion["days"]["design"] == design["design_fingerprint"]
