"""The embeddable randomizer inside a real SurveyJS survey, in chromium (docs/embedding.md).

The host page is another origin (a second HTTP server on 127.0.0.1, on its own port) that loads the vendored survey-core and survey-js-ui 2.5.38 (tests/support/surveyjs/)
and the classic-script build of the embed from the live server, pinned by its integrity hash (so
the CORS header of ``/embed/…`` is needed for real).  The host saves its partial data in
localStorage, as a "save and resume" survey does, and completes to ``window.completion``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from deniable.client.embed import current, integrity
from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import design_fingerprint, parse_definition
from support.other_origin import serving

pytestmark = pytest.mark.browser

SURVEYJS = Path(__file__).resolve().parents[1] / "support" / "surveyjs"
DEFINITION = {"slug": "habits-js", "title": "Habits", "questions": [
    {"id": "drugs", "text": "Have you used an illegal drug in the last 12 months?", "options": ["Yes", "No"],
     "epsilon": 1.0},
    {"id": "cheated", "text": "Have you ever cheated in an exam?", "options": ["Yes", "No"],
     "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}}]}

HOST_JS = """
const design = JSON.parse(document.getElementById("design").textContent);
DeniableEmbed.registerSurveyJS(Survey, { design });
const survey = new Survey.Model({
  pages: [
    { name: "first", elements: [{ type: "text", name: "age", title: "Your age" },
                                { type: "deniable", name: "drugs", titleLocation: "hidden" }] },
    { name: "second", elements: [{ type: "deniable", name: "cheated", titleLocation: "hidden" }] },
  ],
});
const saved = localStorage.getItem("host:partial");  // save and resume, as hosts do
if (saved) survey.data = JSON.parse(saved);
survey.onValueChanged.add((sender) => localStorage.setItem("host:partial", JSON.stringify(sender.data)));
survey.onCurrentPageChanged.add((sender) => localStorage.setItem("host:partial", JSON.stringify(sender.data)));
survey.onComplete.add((sender) => { window.completion = JSON.stringify(sender.data); });
survey.render(document.getElementById("surveyElement"));
window.survey = survey;
"""


def host_page(base: str, design: dict) -> str:
    embed = current()
    src = f"{base}/embed/{embed.version}/deniable-embed.js"
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host survey</title>
<script src="/survey.core.min.js"></script><script src="/survey-js-ui.min.js"></script>
<script src="{src}" integrity="{integrity(embed.script)}" crossorigin="anonymous"></script>
<script type="application/json" id="design">{json.dumps(design)}</script></head>
<body><main><div id="surveyElement"></div></main><script src="/host.js"></script></body></html>"""


@pytest.fixture
def host(page, live_server, app):
    """The SurveyJS host page, on its own origin, with the survey open on the live server."""
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, parse_definition(DEFINITION), status="open")
    finally:
        db.conn.close()
    design = app.test_client().get("/api/v1/surveys/habits-js").get_json()
    files = {"/host.html": ("text/html", host_page(live_server, design).encode()),
             "/host.js": ("text/javascript", HOST_JS.encode()),
             "/survey.core.min.js": ("text/javascript", (SURVEYJS / "survey.core.min.js").read_bytes()),
             "/survey-js-ui.min.js": ("text/javascript", (SURVEYJS / "survey-js-ui.min.js").read_bytes())}

    with serving(files) as origin:
        yield open_host(page, origin), design


COUNT_DRAWS = """
const realDraw = crypto.getRandomValues.bind(crypto);
window.draws = 0;
crypto.getRandomValues = (array) => { window.draws += 1; return realDraw(array); };
"""


def open_host(page, origin):
    page.add_init_script(COUNT_DRAWS)  # every draw of the randomizer, counted
    logged = []
    page.on("console", lambda message: logged.append(message.text))
    page.on("pageerror", lambda error: logged.append(f"page error: {error}"))
    page.goto(f"{origin}/host.html")
    page.wait_for_selector("#deniable-habits-js-drugs-0")
    return page, logged


def data(page) -> dict:
    return page.evaluate("() => JSON.parse(JSON.stringify(window.survey.data))")


def click_button(page, name: str) -> None:
    page.locator(f"input[type=button][value='{name}'], button:has-text('{name}')").first.click()


def test_surveyjs_holds_only_reports_and_a_reload_keeps_them(host, tmp_path):
    (page, logged), design = host
    fingerprint = design["design_fingerprint"]
    assert fingerprint == design_fingerprint(parse_definition(DEFINITION))
    # the embed's inputs are its own: none has a name, so no form or serializer picks them up
    assert page.evaluate("() => Array.from(document.querySelectorAll('.deniable-question input'))"
                         ".map((i) => i.getAttribute('name'))") == [None, None]
    note = page.locator(".deniable-note").inner_text()
    assert "ε" not in note and "of the time" in note  # the survey page's plain words (issue 39)
    page.fill("input[aria-label='Your age'], .sd-text", "21")
    page.check("#deniable-habits-js-drugs-0")  # "Yes"
    assert "drugs" not in data(page)  # nothing reaches the host's data before the page is left
    click_button(page, "Next")
    page.wait_for_selector("#deniable-habits-js-cheated-0")
    first = data(page)["drugs"]
    assert page.evaluate("() => window.draws") >= 1
    assert set(first) == {"report", "design", "epsilon"} and first["design"] == fingerprint
    assert first["report"] in (0, 1) and first["epsilon"] == pytest.approx(1.0)
    stored = page.evaluate("() => localStorage.getItem('deniable:report:habits-js:drugs')")
    assert stored == str(first["report"])

    # a reload before completion: the host resumes its saved data; the other answer, the same report
    page.reload()
    page.wait_for_selector("#deniable-habits-js-drugs-0")
    page.check("#deniable-habits-js-drugs-1")  # "No" this time
    click_button(page, "Next")
    page.wait_for_selector("#deniable-habits-js-cheated-0")
    assert data(page)["drugs"] == first  # randomized once: no second draw
    assert page.evaluate("() => window.draws") == 0

    click_button(page, "Complete")  # required, unanswered: the card says so and the survey waits
    assert page.locator(".deniable-error").inner_text() == "Please answer this question."
    assert page.evaluate("() => window.completion") is None
    page.check("#deniable-habits-js-cheated-1")
    click_button(page, "Complete")
    page.wait_for_function("() => window.completion !== undefined")
    completion = json.loads(page.evaluate("() => window.completion"))
    assert set(completion) == {"age", "drugs", "cheated"} and completion["age"] == "21"
    assert completion["drugs"] == first
    cheated = completion["cheated"]
    assert set(cheated) == {"report", "design", "epsilon"} and cheated["report"] in (0, 1)
    assert cheated["epsilon"] == pytest.approx(design["questions"][1]["realized_epsilon"])
    storage = page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
    assert set(storage) == {"deniable:report:habits-js:drugs", "deniable:report:habits-js:cheated", "host:partial"}
    assert storage["deniable:report:habits-js:cheated"] == str(cheated["report"])
    assert not [line for line in logged if "page error" in line or "drugs" in line or "cheated" in line]

    # the host's export, read back with the definition as the codebook
    definition, results = tmp_path / "survey.json", tmp_path / "results.json"
    definition.write_text(json.dumps(DEFINITION))
    results.write_text(json.dumps([completion]))
    out = CliRunner().invoke(cli, ["estimate", str(definition), str(results), "--from", "surveyjs", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["n_responses"] == 1


def test_the_embed_refuses_to_load_under_a_wrong_integrity_hash(page, live_server):
    """The pin is real: the same file under another hash does not run."""
    embed = current()
    src = f"{live_server}/embed/{embed.version}/deniable-embed.js"
    for pin, loaded in ((integrity(embed.script + b"\n"), "undefined"), (integrity(embed.script), "object")):
        html = (f'<!doctype html><html lang="en"><head><title>t</title><script src="{src}" integrity="{pin}" '
                'crossorigin="anonymous"></script></head><body></body></html>')
        with serving({"/pinned.html": ("text/html", html.encode())}) as origin:
            page.goto(f"{origin}/pinned.html")
            assert page.evaluate("() => typeof window.DeniableEmbed") == loaded
