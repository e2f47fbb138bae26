"""The dashboard's "Use in another survey tool" page (/dashboard/SLUG/embed, docs/dashboard.md).

It shows what ``deniable embed design`` and ``deniable embed recipe PLATFORM`` print for the survey —
the same texts, byte for byte, with the embed's address on this server — the pinned script tag and
the honest guarantee; an unknown platform is a 400 naming the field.  In chromium at 390 px: no
serious axe violation, nothing wider than the screen, the platform picker and the copy buttons work.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from deniable.client.embed import current, integrity
from deniable.server.cli import cli
from support.browser import log_in, serious_axe_violations
from support.dashboard import ensure_researcher, login, make_survey

ROOT = Path(__file__).resolve().parents[2]
HABITS = json.loads((ROOT / "examples" / "habits.json").read_text())
PLATFORMS = ("surveyjs", "otree", "qualtrics", "limesurvey", "redcap")
URL = "/dashboard/habits/embed"


def box(page_html: str, box_id: str) -> str:
    """The text of the copy box ``box_id`` (a textarea) as the browser reads it."""
    match = re.search(rf'<textarea id="{box_id}"[^>]*>(.*?)</textarea>', page_html, re.DOTALL)
    assert match, box_id
    return html.unescape(match.group(1)).removeprefix("\n")  # HTML drops a textarea's first newline


@pytest.fixture
def launched(app):
    make_survey(app, HABITS, status="open")
    return app


def test_the_page_shows_what_deniable_embed_prints(launched, auth_client, tmp_path):
    definition = tmp_path / "habits.json"
    definition.write_text(json.dumps(HABITS))
    printed_design = CliRunner().invoke(cli, ["embed", "design", str(definition)])
    assert printed_design.exit_code == 0
    built = current()
    for platform in PLATFORMS:
        response = auth_client.get(f"{URL}?platform={platform}")
        assert response.status_code == 200, platform
        page = response.get_data(as_text=True)
        printed = CliRunner().invoke(cli, ["embed", "recipe", platform, str(definition), "--src", "http://localhost"])
        assert printed.exit_code == 0, printed.output
        assert box(page, "embed-recipe-text") == printed.output, platform
        assert json.loads(box(page, "embed-design-json")) == json.loads(printed_design.output)
    assert box(page, "embed-tag") == (f'<script src="http://localhost/embed/{built.version}/deniable-embed.js" '
                                      f'integrity="{integrity(built.script)}" crossorigin="anonymous"></script>')
    for data in (built.module, built.script):
        assert integrity(data) in page
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page)))
    assert "Holds: ε-local differential privacy against anyone who sees the reports" in text
    assert "Does not hold: privacy at rest on the respondent's device." in text
    assert "Does not hold: anything about what the other tool records" in text
    assert 'aria-current="page">Use in another survey tool</a>' in page
    assert 'id="draft-note"' not in page


def test_an_unknown_platform_is_a_400_naming_the_field(launched, auth_client):
    response = auth_client.get(f"{URL}?platform=surveymonkey")
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "platform: unknown platform &#39;surveymonkey&#39;: choose one of SurveyJS, oTree, Qualtrics, LimeSurvey, REDCap" \
        in page
    assert 'aria-invalid="true"' in page and 'id="embed-recipe-text"' not in page


def test_a_draft_says_its_design_may_change_and_a_survey_with_nothing_to_embed_says_so(app, auth_client):
    make_survey(app, {"slug": "plain", "title": "Plain", "questions": [
        {"id": "year", "text": "Year?", "options": ["1", "2"]}]})
    page = auth_client.get("/dashboard/plain/embed").get_data(as_text=True)
    assert 'id="draft-note"' in page and 'id="nothing-to-embed"' in page and 'id="embed-recipe-text"' not in page


def test_a_researcher_without_a_role_gets_a_404(app, client):
    make_survey(app, HABITS, status="open", owner="someone@example.org")
    ensure_researcher(app)
    assert login(client).status_code == 302
    assert client.get(URL).status_code == 404


@pytest.mark.browser
def test_the_page_at_390_px(browser, live_server, launched, researcher):
    context = browser.new_context(viewport={"width": 390, "height": 844},
                                  permissions=["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        log_in(page, live_server)
        page.goto(live_server + URL)
        assert serious_axe_violations(page) == []
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        assert "registerSurveyJS" in page.input_value("#embed-recipe-text")
        page.select_option("#platform", "qualtrics")
        with page.expect_navigation():
            page.click("form.platform-picker button[type=submit]")
        recipe = page.input_value("#embed-recipe-text")
        assert recipe.startswith("==== deniable embed recipe qualtrics: survey habits")
        assert "Qualtrics.SurveyEngine" in recipe
        page.click("button[data-copy='#embed-recipe-text']")
        page.wait_for_function("() => document.getElementById('embed-recipe-text-status').textContent !== ''",
                               timeout=10_000)
        assert page.text_content("#embed-recipe-text-status") == "Copied."
        assert page.evaluate("() => navigator.clipboard.readText()") == recipe
        assert errors == []
    finally:
        context.close()
