"""The Qualtrics, LimeSurvey and REDCap recipes, pasted as printed, in chromium (docs/embedding.md).

The real platforms cannot run here, so each host page is a STAND-IN written for this test: the
markup and the few functions of the platform that the recipe touches (Qualtrics' question
JavaScript API; LimeSurvey's form, its hidden short-text question and what its Expression Manager
does to ``{CODE.sgqa}``; REDCap's form, its ``@HIDDEN`` field and ``dataEntrySubmit``), each labelled
as a stand-in.  They are served from another origin than the live deniable, which serves the embed
that the snippet pins by its integrity hash.  What the "platform" records is what its page sends:
the form's named fields (LimeSurvey, REDCap), or the embedded data (Qualtrics).

Checked: only the report reaches the platform's field (the embed's inputs hold the answer and have
no name), a required question left unanswered does not move on, and a second visit (a reload, the
back button, a resumed session) sends the stored report again, with no new draw, although the
answer was changed.  The recorded value is then read back by ``deniable estimate --from``.
"""

from __future__ import annotations

import contextlib
import csv
import json
import re
import threading
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from click.testing import CliRunner
from deniable.server.cli import cli
from werkzeug.serving import make_server

pytestmark = pytest.mark.browser

SURVEY = Path(__file__).resolve().parents[1] / "data" / "platforms" / "survey.json"
FINGERPRINT = "sha256:bf0cf393b4c72148"
SGQA = "123456X1X2"  # the hidden question's SGQA in the LimeSurvey stand-in

COUNT_DRAWS = """
const realDraw = crypto.getRandomValues.bind(crypto);
window.draws = 0;
crypto.getRandomValues = (array) => { window.draws += 1; return realDraw(array); };
"""

# ---- Qualtrics: a STAND-IN for its survey engine (not Qualtrics' code): the question JavaScript API
# the recipe uses (addOnload, addOnPageSubmit, setEmbeddedData, getQuestionContainer,
# disableNextButton, enableNextButton), a page with a question of the host's own, and Next, which
# runs the page-submit handlers and records the page's named fields and the embedded data.
QUALTRICS_STANDIN = """
window.Qualtrics = (function () {
  var onload = [], onsubmit = [], embedded = {};
  var next = function () { return document.getElementById("NextButton"); };
  var question = {
    getQuestionContainer: function () { return document.getElementById("QID1"); },
    disableNextButton: function () { next().disabled = true; },
    enableNextButton: function () { next().disabled = false; },
  };
  document.addEventListener("DOMContentLoaded", function () {
    onload.forEach(function (f) { f.call(question); });
    next().addEventListener("click", function () {
      onsubmit.forEach(function (f) { f("next"); });
      var posted = Object.fromEntries(new FormData(document.getElementById("Page")));
      fetch("/record", { method: "POST", body: JSON.stringify({ posted: posted, embedded: embedded }) })
        .then(function () { location.href = "/done"; });
    });
  });
  return { SurveyEngine: {
    addOnload: function (f) { onload.push(f); },
    addOnPageSubmit: function (f) { onsubmit.push(f); },
    setEmbeddedData: function (name, value) { embedded[name] = String(value); },
  } };
})();
"""


def qualtrics_page(snippet: str) -> dict:
    header = re.search(r"<script src=.*?</script>", snippet).group(0)  # Look & Feel > General > Header
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Qualtrics stand-in</title>
{header}
<script src="/standin.js"></script></head>
<body><form id="Page"><div class="QuestionOuter" id="QID1"><div class="QuestionText">A protected question</div></div>
<div class="QuestionOuter" id="QID2"><input name="QR~QID2" aria-label="Your age"></div>
<button type="button" id="NextButton">Next</button></form>
<script src="/question.js"></script></body></html>"""
    return {"/host.html": ("text/html", html), "/standin.js": ("text/javascript", QUALTRICS_STANDIN),
            "/question.js": ("text/javascript", snippet)}  # the question's JavaScript, as printed


# ---- LimeSurvey: a STAND-IN page (not LimeSurvey's code): the form #limesurvey, a "Text display"
# question holding the snippet, the hidden short-text question answer{SGQA}, a question of the host's
# own, and Previous / Next submit buttons (name "move").  Its Expression Manager is stood in for by
# replacing {CODE.sgqa} with the hidden question's SGQA, as it would when the page is made.
def limesurvey_page(snippet: str, column: str) -> dict:
    shown = snippet.replace(f"{{{column}.sgqa}}", SGQA)
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>LimeSurvey stand-in</title></head>
<body><form id="limesurvey" method="post" action="/record">
<div class="question-container">{shown}</div>
<div class="question-container ls-hidden" hidden><input type="text" id="answer{SGQA}" name="{SGQA}" value=""></div>
<div class="question-container"><input type="text" id="answer123456X1X3" name="123456X1X3" aria-label="Your age"></div>
<button type="submit" id="ls-button-previous" name="move" value="moveprev">Previous</button>
<button type="submit" id="ls-button-submit" name="move" value="movenext">Next</button>
</form></body></html>"""
    return {"/host.html": ("text/html", html)}


# ---- REDCap: a STAND-IN survey page (not REDCap's code): the form, the @HIDDEN text field, the
# descriptive field whose label holds the snippet, a field of the host's own, and the Submit button
# whose onclick calls dataEntrySubmit, which here (as REDCap's does) submits the form from script.
REDCAP_STANDIN = """
function dataEntrySubmit(button) { document.getElementById("form").submit(); }
document.addEventListener("DOMContentLoaded", function () {
  document.getElementById("submit-btn-saverecord").addEventListener("click", function (event) {
    event.preventDefault();
    dataEntrySubmit(this);
  });
});
"""


def redcap_page(snippet: str, column: str) -> dict:
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>REDCap stand-in</title>
<script src="/standin.js"></script></head>
<body><form id="form" name="form" method="post" action="/record"><table>
<tr id="{column}-tr" hidden><td><input type="text" name="{column}" value=""></td></tr>
<tr id="describe-tr"><td>{snippet}</td></tr>
<tr id="age-tr"><td><input type="text" name="age" aria-label="Your age"></td></tr>
</table><input type="hidden" name="redcap_csrf_token" value="standin">
<button class="jqbutton" id="submit-btn-saverecord" name="submit-btn-saverecord">Submit</button></form></body></html>"""
    return {"/host.html": ("text/html", html), "/standin.js": ("text/javascript", REDCAP_STANDIN)}


@contextlib.contextmanager
def platform(files: dict):
    """Serve the stand-in on a free 127.0.0.1 port (another origin); POST /record is what it records."""
    records: list[dict] = []

    def wsgi(environ, start_response):
        path = environ["PATH_INFO"]
        if environ["REQUEST_METHOD"] == "POST" and path == "/record":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)).decode()
            kind = environ.get("CONTENT_TYPE", "")
            records.append({k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
                           if kind.startswith("application/x-www-form-urlencoded") else json.loads(body))
            path = "/done"
        kind, text = files.get(path, ("text/html", "<!doctype html><title>Thank you</title><p id=done>Recorded</p>"))
        start_response("200 OK", [("Content-Type", kind)])
        return [text.encode()]

    server = make_server("127.0.0.1", 0, wsgi, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", records
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def recipe_snippet(name: str, src: str) -> tuple[str, str]:
    """The snippet ``deniable embed recipe`` prints for question drugs, and the column it names."""
    result = CliRunner().invoke(cli, ["embed", "recipe", name, str(SURVEY), "--src", src, "--question", "drugs"])
    assert result.exit_code == 0, result.output
    match = re.search(r"^==== question drugs: its report lands in the column (\w+)\n(.*?)\n\n====", result.output,
                      re.M | re.S)
    return match.group(2), match.group(1)


def pages(name: str, snippet: str, column: str) -> dict:
    if name == "qualtrics":
        return qualtrics_page(snippet)
    return limesurvey_page(snippet, column) if name == "limesurvey" else redcap_page(snippet, column)


NEXT = {"qualtrics": "#NextButton", "limesurvey": "#ls-button-submit", "redcap": "#submit-btn-saverecord"}
AGE = {"qualtrics": "QR~QID2", "limesurvey": "123456X1X3", "redcap": "age"}


def recorded(name: str, record: dict, column: str) -> str:
    """The report's field as the platform recorded it; nothing else of the embed's is there."""
    if name == "qualtrics":
        assert set(record["posted"]) == {AGE[name]} and set(record["embedded"]) == {column}
        return record["embedded"][column]
    field = SGQA if name == "limesurvey" else column
    others = {"limesurvey": {"move"}, "redcap": {"redcap_csrf_token"}}[name]
    assert set(record) == {field, AGE[name]} | others, record
    return record[field]


def export(name: str, column: str, value: str, path: Path) -> None:
    """The platform's CSV export of that response, written here in its documented layout (see the fixtures)."""
    columns = [{"qualtrics": "ResponseId", "limesurvey": "id", "redcap": "record_id"}[name], column,
               *(column.replace("drugs", qid) for qid in ("cheated", "stolen", "did"))]  # the same naming
    rows = [columns]
    if name == "qualtrics":  # its three header rows
        rows += [columns, [json.dumps({"ImportId": c}, separators=(",", ":")) for c in columns]]
    rows.append(["1", value, "", "", ""])
    with path.open("w", newline="") as file:
        csv.writer(file).writerows(rows)


@pytest.mark.parametrize("name", ["qualtrics", "limesurvey", "redcap"])
def test_the_recipe_sends_only_the_report_and_a_second_visit_sends_the_same(name, page, live_server, tmp_path):
    snippet, column = recipe_snippet(name, live_server)  # the embed, pinned, from the live deniable
    logged = []
    page.on("pageerror", lambda error: logged.append(str(error)))
    page.add_init_script(COUNT_DRAWS)
    with platform(pages(name, snippet, column)) as (origin, records):
        page.goto(f"{origin}/host.html")
        page.wait_for_selector("#deniable-habits-drugs-0")
        assert page.evaluate("() => Array.from(document.querySelectorAll('.deniable-question input'))"
                             ".map((i) => i.getAttribute('name'))") == [None, None]
        # a required question left unanswered does not move on
        if name == "qualtrics":
            assert page.is_disabled(NEXT[name])
        else:
            page.click(NEXT[name])
            assert page.locator(".deniable-error").inner_text() == "Please answer this question."
            assert records == [] and page.evaluate("() => window.draws") == 0
        page.fill(f"[name='{AGE[name]}']", "21")
        page.check("#deniable-habits-drugs-0")  # "Yes"
        page.click(NEXT[name])
        page.wait_for_selector("#done")
        assert len(records) == 1
        first = recorded(name, records[0], column)
        value = json.loads(first)
        assert set(value) == {"report", "design", "epsilon"} and value["design"] == FINGERPRINT
        assert value["report"] in (0, 1) and value["epsilon"] == pytest.approx(1.0)

        # the respondent comes back (a reload, the back button, a resumed session) and answers otherwise
        page.goto(f"{origin}/host.html")
        page.wait_for_selector("#deniable-habits-drugs-1")
        assert page.evaluate("() => localStorage.getItem('deniable:report:habits:drugs')") == str(value["report"])
        page.fill(f"[name='{AGE[name]}']", "21")
        page.check("#deniable-habits-drugs-1")  # "No" this time
        page.click(NEXT[name])
        page.wait_for_selector("#done")
        assert len(records) == 2
        assert recorded(name, records[1], column) == first  # randomized once: the same report
        assert page.evaluate("() => window.draws") == 0  # and no draw on this visit
    assert logged == []

    # the platform's export of that field, read back with the definition as the codebook
    path = tmp_path / f"{name}.csv"
    export(name, column, first, path)
    result = CliRunner().invoke(cli, ["estimate", str(SURVEY), str(path), "--from", name, "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["n_responses"] == 1
