"""``deniable embed recipe surveyjs``, pasted unchanged into a real SurveyJS page, with numeric and list questions.

The host page (another origin) loads the vendored survey-core and survey-js-ui 2.5.38
(tests/support/surveyjs/), then the recipe's page snippet exactly as printed (the embed from the live
server by its integrity hash, the design, the question type registered), and builds its survey from
the recipe's elements.  The respondent types numbers (one off the step first: SurveyJS stays on the
page and the card says why), picks a count in the list experiment, and completes: the completion holds
only reports, and ``deniable estimate --from surveyjs`` reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition
from support.other_origin import serving

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SURVEYJS = ROOT / "tests" / "support" / "surveyjs"
HABITS = json.loads((ROOT / "examples" / "habits.json").read_text())

HOST_JS = """
const elements = JSON.parse(document.getElementById("elements").textContent);
const survey = new Survey.Model({ pages: [
  { name: "numbers", elements: elements.filter((e) => ["drinks", "hours"].includes(e.name)) },
  { name: "others", elements: elements.filter((e) => !["drinks", "hours"].includes(e.name)) },
] });
survey.onComplete.add((sender) => { window.completion = JSON.stringify(sender.data); });
survey.render(document.getElementById("surveyElement"));
window.survey = survey;
"""


def sections(recipe: str) -> dict[str, list[str]]:
    """The recipe's sections: each ``==== title`` line and the lines under it (to the next one)."""
    out: dict[str, list[str]] = {}
    title = None
    for line in recipe.splitlines():
        if line.startswith("==== "):
            title = line
            out[title] = []
        elif title is not None:
            out[title].append(line)
    return out


def test_the_printed_surveyjs_recipe_runs_numeric_and_list_questions(page, live_server, app, tmp_path):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, parse_definition(HABITS), status="open")
    finally:
        db.conn.close()
    definition = tmp_path / "habits.json"
    definition.write_text(json.dumps(HABITS))
    printed = CliRunner().invoke(cli, ["embed", "recipe", "surveyjs", str(definition), "--src", live_server])
    assert printed.exit_code == 0, printed.output
    parts = sections(printed.output)
    snippet = "\n".join(next(lines for title, lines in parts.items() if title.startswith("==== the page:")))
    elements = [json.loads(line) for line in
                next(lines for title, lines in parts.items() if title.startswith("==== the survey's JSON"))
                if line.strip()]
    assert [e["name"] for e in elements] == ["drinks", "hours", "used", "shoplifting"]
    host = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host survey</title>
<script src="/survey.core.min.js"></script><script src="/survey-js-ui.min.js"></script>
{snippet}
<script type="application/json" id="elements">{json.dumps(elements)}</script></head>
<body><main><div id="surveyElement"></div></main><script src="/host.js"></script></body></html>"""
    files = {"/host.html": ("text/html", host.encode()), "/host.js": ("text/javascript", HOST_JS.encode()),
             "/survey.core.min.js": ("text/javascript", (SURVEYJS / "survey.core.min.js").read_bytes()),
             "/survey-js-ui.min.js": ("text/javascript", (SURVEYJS / "survey-js-ui.min.js").read_bytes())}
    logged = []
    page.on("pageerror", lambda error: logged.append(str(error)))
    with serving(files) as origin:
        page.goto(f"{origin}/host.html")
        page.wait_for_selector("#deniable-habits-drinks-value")
        page.fill("#deniable-habits-drinks-value", "7")
        page.fill("#deniable-habits-hours-value", "3.25")  # not a step of 0.5
        page.locator("input[type=button][value='Next'], button:has-text('Next')").first.click()
        alert = page.locator("[data-deniable-qid=hours] .deniable-error")
        assert alert.inner_text() == "Please give a multiple of 0.5 from 0 to 20."  # the survey page's words
        assert page.evaluate("() => localStorage.getItem('deniable:report:habits:hours')") is None
        page.fill("#deniable-habits-hours-value", "3.5")
        page.locator("input[type=button][value='Next'], button:has-text('Next')").first.click()
        page.wait_for_selector("#deniable-habits-shoplifting-count-1")
        arm = int(page.evaluate("() => localStorage.getItem('deniable:arm:habits:shoplifting')"))
        page.check("#deniable-habits-shoplifting-count-1")
        page.locator("input[type=button][value='Complete'], button:has-text('Complete')").first.click()
        page.wait_for_function("() => window.completion !== undefined", timeout=10_000)
        completion = json.loads(page.evaluate("() => window.completion"))
        names = page.evaluate("() => Array.from(document.querySelectorAll('.deniable-question input'), (i) => i.name)")
    assert logged == []
    assert set(completion) == {"drinks", "hours", "used", "shoplifting"}
    for qid, value in completion.items():
        assert set(value) == {"report", "design", "epsilon"}, qid
    assert completion["shoplifting"]["report"]["arm"] == arm
    assert isinstance(completion["hours"]["report"], int) and completion["drinks"]["report"] in (0, 1)
    assert set(names) <= {""}
    results = tmp_path / "results.json"
    results.write_text(json.dumps([completion]))
    out = CliRunner().invoke(cli, ["estimate", str(definition), str(results), "--from", "surveyjs", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["n_responses"] == 1
