"""The embed fits its host at 320, 390 and 1,280 px, inside SurveyJS 2.5.38, in chromium (issue 39, docs/embedding.md).

A question of every type the embed mounts (a single choice, a design, the respondent-side crosswise
model, check all that apply, a number, a list experiment), with long words and labels, on one SurveyJS
page (the vendored survey-core and survey-js-ui, tests/support/surveyjs/): at each width neither the
document nor any embed's root (its ``<fieldset>``) scrolls sideways, and no embed is wider than its
SurveyJS question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deniable.client.embed import current, integrity
from support.browser import open_for_the_embed
from support.other_origin import serving

pytestmark = pytest.mark.browser

LONG = ("Have you, at any time during the last twelve months, including at work, at school, at home or "
        "anywhere else, done any of the following things that some people would consider dishonest?")
DEFINITION = {
    "slug": "fit", "title": "Fit",
    "questions": [
        {"id": "choice", "text": LONG, "epsilon": 1.0,
         "options": ["Yes, more than once, and I would do it again without thinking about it twice",
                     "No, never, not even once in all of the twelve months before this survey", "Rather not say"]},
        {"id": "forced", "text": LONG, "options": ["Yes", "No"],
         "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}},
        {"id": "crosswise", "text": LONG, "options": ["Yes", "No"],
         "design": {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "prevalence_range": [0.23, 0.27],
                    "fact": "Is your mother's birthday in January, February or March?"}},
        {"id": "multi", "type": "multi", "text": LONG, "epsilon": 2.0,
         "options": ["Skipped work without telling anybody at all about it", "Lied to a doctor",
                     "Supercalifragilisticexpialidociously-long-unbroken-label-with-no-spaces-at-all"]},
        {"id": "numeric", "type": "numeric", "text": LONG, "min": 0, "max": 20, "step": 0.5, "epsilon": 2.0,
         "mechanism": "laplace"},
        {"id": "list", "type": "list", "text": LONG, "epsilon": 1.0,
         "items": ["I have travelled abroad for more than three weeks in a row this year", "I own a bicycle",
                   "I read a book last month"], "sensitive": "I have taken something from a shop without paying"},
    ],
}
SURVEYJS = Path(__file__).resolve().parents[1] / "support" / "surveyjs"
QIDS = [q["id"] for q in DEFINITION["questions"]]

HOST_JS = """
const design = JSON.parse(document.getElementById("design").textContent);
DeniableEmbed.registerSurveyJS(Survey, { design });
const survey = new Survey.Model({ pages: [{ name: "all", elements: QIDS.map((name) => (
  { type: "deniable", name, titleLocation: "hidden" })) }] });
survey.render(document.getElementById("surveyElement"));
window.survey = survey;
"""

MEASURE = """(qids) => {
  const root = document.scrollingElement;
  const out = {document: [root.scrollWidth, root.clientWidth], embeds: {}};
  for (const qid of qids) {
    const fieldset = document.querySelector(`fieldset[data-deniable-qid="${qid}"]`);
    const card = fieldset.closest('.sd-question') || fieldset.parentElement;
    out.embeds[qid] = {scroll: fieldset.scrollWidth, client: fieldset.clientWidth,
                       width: fieldset.getBoundingClientRect().width, card: card.getBoundingClientRect().width,
                       right: fieldset.getBoundingClientRect().right, cardRight: card.getBoundingClientRect().right};
  }
  return out;
}"""


@pytest.fixture
def host(app, live_server, page):
    design = open_for_the_embed(app, live_server, page, DEFINITION)
    embed = current()
    src = f"{live_server}/embed/{embed.version}/deniable-embed.js"
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Host</title>
<link rel="stylesheet" href="/survey-core.min.css">
<script src="/survey.core.min.js"></script><script src="/survey-js-ui.min.js"></script>
<script src="{src}" integrity="{integrity(embed.script)}" crossorigin="anonymous"></script>
<script type="application/json" id="design">{json.dumps(design)}</script></head>
<body><div id="surveyElement"></div><script src="/host.js"></script></body></html>"""
    files = {"/host.html": ("text/html", html.encode()),
             "/host.js": ("text/javascript", f"const QIDS = {json.dumps(QIDS)};\n{HOST_JS}".encode()),
             "/survey.core.min.js": ("text/javascript", (SURVEYJS / "survey.core.min.js").read_bytes()),
             "/survey-js-ui.min.js": ("text/javascript", (SURVEYJS / "survey-js-ui.min.js").read_bytes())}
    files["/survey-core.min.css"] = ("text/css", (SURVEYJS / "survey-core.fontless.min.css").read_bytes())
    with serving(files) as origin:
        yield origin


@pytest.mark.parametrize("width", [320, 390, 1280])
def test_every_embed_type_fits_the_surveyjs_card(page, host, width):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{host}/host.html")
    for qid in QIDS:
        page.wait_for_selector(f'fieldset[data-deniable-qid="{qid}"]')
    seen = page.evaluate(MEASURE, QIDS)
    assert not errors
    scroll, client = seen["document"]
    assert scroll <= client, f"the page scrolls sideways at {width} px: {seen}"
    for qid, box in seen["embeds"].items():
        assert box["scroll"] <= box["client"], f"{qid} overflows its own root at {width} px: {box}"
        assert box["right"] <= box["cardRight"] + 0.5, f"{qid} is wider than its SurveyJS card at {width} px: {box}"
        assert box["width"] <= width

