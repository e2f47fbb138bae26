"""Two-group non-compliance designs (CDM, CDMsym, SLD, UQTunknown) in the built embed, in chromium
(docs/embedding.md, "Two-group designs").

Each model mounts from the survey's design document in a plain host page and inside SurveyJS (another
origin, the classic script pinned by its integrity hash): the device draws the group (kept under the
survey page's key ``deniable:arm:SLUG:QID``) and an instruction (memory only), shows the instruction in the
survey page's words, in the mounted language, beside the page's own protection note (no ε); the respondent
clicks Yes or No.  The host receives only ``{report, design, epsilon}`` with the report ``{"group", "answer"}``;
a reload re-sends the same report; no storage holds the instruction.  The group and the instruction follow
the document's integers (fed random numbers).  What the host stores estimates as the same reports sent to
deniable's JSON API, through ``--from surveyjs`` and ``--from qualtrics``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deniable.client.embed import current, integrity
from deniable.client.submit import post_reports
from deniable.server.cli import cli
from deniable.server.survey.definition import parse_definition
from support.browser import open_for_the_embed
from support.other_origin import serving

pytestmark = pytest.mark.browser

SURVEYJS = Path(__file__).resolve().parents[1] / "support" / "surveyjs"
UNRELATED = "Were you born in the first half of the year?"
DEFINITION = {
    "slug": "honest", "title": "Honesty",
    "questions": [
        {"id": "copied", "type": "two_group", "model": "CDM", "p": [0.3, 0.7],
         "text": "Have you ever copied in an exam?"},
        {"id": "pills", "type": "two_group", "model": "CDMsym", "p": [0.2, 0.1, 0.7, 0.15],
         "text": "Have you taken stimulants to study?"},
        {"id": "plagiarism", "type": "two_group", "model": "SLD", "p": [0.25, 0.75], "group_share": 0.4,
         "text": "Have you handed in someone else's work?"},
        {"id": "fabricated", "type": "two_group", "model": "UQTunknown", "p": [0.3, 0.8], "unrelated": UNRELATED,
         "text": "Have you ever made up data?"},
    ],
    "translations": {"fr": {"title": "Honnêteté", "questions": {
        "copied": {"text": "Avez-vous déjà copié à un examen ?"},
        "fabricated": {"text": "Avez-vous déjà inventé des données ?",
                       "unrelated": "Êtes-vous né(e) dans la première moitié de l'année ?"},
    }}},
}
QIDS = [q["id"] for q in DEFINITION["questions"]]
SENTENCES = {"yes": "Please answer Yes, whatever the true answer.", "no": "Please answer No, whatever the true answer.",
             "truthful": "Please answer the question above truthfully.",
             "sensitive": "Please answer the question above truthfully.",
             "unrelated": f"Please do not answer the question above. Answer this question truthfully instead: {UNRELATED}"}

# Mount `qid` (in `language` unless null) into a host div; read the card; click the answer the instruction
# asks of a respondent whose true answers are yes (truth) and no (unrelated question), or `answer` when given;
# commit `repeat` times.  With `feed`, crypto.getRandomValues gives those uint32s (then the real ones).
MOUNT = """async ({version, design, qid, language, answer, repeat, feed}) => {
  const m = await import(`/embed/${version}/deniable-embed.mjs`);
  const real = crypto.getRandomValues.bind(crypto);
  const fed = [...(feed || [])];
  let draws = 0;
  Object.defineProperty(crypto, 'getRandomValues', {configurable: true, value: (array) => {
    draws += 1;
    if (fed.length) { array[0] = fed.shift(); return array; }
    return real(array);
  }});
  try {
    const host = document.createElement('div');
    document.body.append(host);
    const seen = [];
    const handle = m.mount(host, {design, question: qid, language, onReport: (r) => seen.push(r)});
    const shown = host.querySelector('.deniable-two-group-instruction').textContent;
    const card = {legend: host.querySelector('legend').textContent, note: host.querySelector('.deniable-note').textContent,
                  instruction: shown, text: host.innerText,
                  inputs: Array.from(host.querySelectorAll('input')).map((i) => [i.type, i.getAttribute('name'), i.labels[0].textContent]),
                  attributes: Array.from(host.querySelectorAll('*')).flatMap((n) => Array.from(n.attributes, (a) => a.value))};
    const q = design.questions.find((item) => item.id === qid);
    const words = q.card_words[language || 'en'];
    const name = q.instructions.find((n) => shown.startsWith(words.instructions[n]));
    const follow = {yes: 0, no: 1, truthful: 0, sensitive: 0, unrelated: 1}[name];
    host.querySelectorAll('input')[answer === null || answer === undefined ? follow : answer].click();
    const reports = [];
    for (let i = 0; i < repeat; i += 1) reports.push(handle.commit());
    const storage = Object.fromEntries(Object.keys(localStorage).map((k) => [k, localStorage.getItem(k)]));
    handle.unmount();
    host.remove();
    return {card, name, reports, seen, storage, draws, session: Object.keys(sessionStorage)};
  } finally {
    delete crypto.getRandomValues;
  }
}"""


@pytest.fixture
def honest(app, live_server, page):
    return open_for_the_embed(app, live_server, page, DEFINITION)


def mounted(page, design, qid, *, language=None, answer=None, repeat=1, feed=None, clear=True):
    if clear:
        page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
    return page.evaluate(MOUNT, {"version": current().version, "design": design, "qid": qid, "language": language,
                                 "answer": answer, "repeat": repeat, "feed": feed})


def instruction_free(storage: dict, run: dict) -> None:
    """Nothing kept in the browser names or words the instruction drawn."""
    for value in storage.values():
        assert run["name"] not in value and run["card"]["instruction"] not in value
        assert not any(sentence in value for sentence in SENTENCES.values())


def test_each_model_mounts_shows_the_instruction_and_sends_only_group_and_answer(page, honest):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    for item in honest["questions"]:
        qid = item["id"]
        run = mounted(page, honest, qid, repeat=3)
        card = run["card"]
        assert card["legend"] == item["text"]
        assert run["name"] in item["instructions"] and card["instruction"] == SENTENCES[run["name"]]
        # two nameless radio buttons, Yes and No: nothing of the answer is a form's
        assert card["inputs"] == [["radio", None, "Yes"], ["radio", None, "No"]]
        assert not any(run["name"] == value for value in card["attributes"])  # the instruction's name nowhere in the DOM
        # the survey page's note, in plain words: CDMsym's bound, the others "not protected by ε" and why
        notes = item["notes"]["en"]
        assert card["note"] == (notes["protected"] if item["protected"] else notes["plain"])
        assert "ε =" not in card["note"]  # no ε is shown to a respondent
        if item["model"] == "UQTunknown":
            assert "rests on nobody knowing your answer to the other question" in card["note"]
        elif not item["protected"]:
            assert card["note"].startswith("Not protected by ε.") and "can still give you away" in card["note"]
        else:
            assert card["note"].startswith("Protected.") and "sure" in card["note"]
        # the report: the group and the answer followed, the same on every commit, and only that reaches the host
        group = int(run["storage"][f"deniable:arm:honest:{qid}"])
        answer = {"yes": 0, "no": 1, "truthful": 0, "sensitive": 0, "unrelated": 1}[run["name"]]
        expected = {"report": {"group": group, "answer": answer}, "design": honest["design_fingerprint"],
                    "epsilon": item["realized_epsilon"]}
        assert run["reports"] == [expected] * 3 and run["seen"] == run["reports"]
        assert (item["realized_epsilon"] is None) == (item["model"] != "CDMsym")
        # kept: the group (the page's arm key) and the report, as the survey page writes them; never the instruction
        assert run["storage"] == {f"deniable:arm:honest:{qid}": str(group), f"deniable:report:honest:{qid}": f"{group}:{answer}"}
        instruction_free(run["storage"], run)
        assert run["session"] == [] and run["draws"] == 2  # the group, then the instruction
    assert errors == []


def test_a_reload_re_sends_the_same_report_and_keeps_the_group(page, honest, live_server):
    first = mounted(page, honest, "pills")
    page.reload()  # the same origin's storage: the group and the report are kept
    again = mounted(page, honest, "pills", answer=1 - first["reports"][0]["report"]["answer"], clear=False)
    assert again["reports"] == first["reports"]  # the other answer clicked: the report kept is re-sent
    assert again["draws"] == 1  # only a new instruction to show; the group is the one kept, the report not redrawn
    assert again["storage"] == first["storage"]
    instruction_free(again["storage"], again)


@pytest.mark.parametrize("model_index", range(4))
def test_the_group_and_the_instruction_follow_the_documents_integers(page, honest, model_index):
    from deniable.server.survey.definition import parse_definition

    item = honest["questions"][model_index]
    mech = parse_definition(DEFINITION).questions[model_index].mechanism
    threshold = item["group_threshold"]
    assert threshold == mech.group_threshold
    for group, u in ((1, threshold - 1), (2, threshold)):
        cumulative = mech.cumulative(group)
        for index, edge in enumerate(cumulative):
            for v in {edge - 1, cumulative[index - 1] if index else 0}:
                run = mounted(page, honest, item["id"], feed=[u, v])
                assert run["storage"][f"deniable:arm:honest:{item['id']}"] == str(group)
                assert run["name"] == mech.instructions[index], (group, v)


def test_the_card_reads_in_the_mounted_language(page, honest):
    run = mounted(page, honest, "fabricated", language="fr", feed=[0, 4294967295])  # group 1, its last: unrelated
    assert run["name"] == "unrelated"
    assert run["card"]["legend"] == "Avez-vous déjà inventé des données ?"
    assert run["card"]["instruction"] == ("Veuillez ne pas répondre à la question ci-dessus. Répondez plutôt "
                                          "sincèrement à cette question : Êtes-vous né(e) dans la première moitié de l'année ?")
    assert [label for _, _, label in run["card"]["inputs"]] == ["Oui", "Non"]
    assert run["card"]["note"] == honest["questions"][3]["notes"]["fr"]["plain"] and "ε =" not in run["card"]["note"]
    assert run["reports"][0]["report"] == {"group": 1, "answer": 1}  # the same report in every language
    yes = mounted(page, honest, "pills", language="fr", feed=[0, 0])  # group 1, its first: say Yes
    assert yes["card"]["instruction"] == "Veuillez répondre Oui, quelle que soit la vraie réponse."
    assert yes["card"]["note"] == honest["questions"][1]["notes"]["fr"]["protected"]


def test_a_document_without_the_cards_words_is_refused(page, honest):
    old = json.loads(json.dumps(honest))
    del old["questions"][0]["card_words"]
    message = page.evaluate("""async ({version, design}) => {
      const m = await import(`/embed/${version}/deniable-embed.mjs`);
      try { m.mount(document.createElement('div'), {design, question: 'copied'}); return null; }
      catch (error) { return error.message; }
    }""", {"version": current().version, "design": old})
    assert message is not None and "question copied" in message and "two-group card" in message


def qualtrics_csv(rows: list[dict]) -> str:
    header = ["ResponseId", "Q1", *(f"deniable_{qid}" for qid in QIDS)]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerow(["Response ID", "Your age", *QIDS])
    writer.writerow([json.dumps({"ImportId": name}) for name in header])
    for i, row in enumerate(rows):
        writer.writerow([f"R_{i}", "30", *(json.dumps(row[qid]) for qid in QIDS)])
    return out.getvalue()


def test_what_the_host_stores_estimates_as_the_same_reports_sent_to_the_api(page, honest, live_server, db_path,
                                                                             tmp_path):
    hosted = []
    for respondent in range(16):
        row = {}
        for qid in QIDS:
            run = mounted(page, honest, qid, answer=respondent % 3 % 2)  # some Yes, more No, whatever they are told
            row[qid] = run["reports"][0]
        hosted.append(row)
        post_reports(live_server, "honest", {qid: row[qid]["report"] for qid in QIDS})
    definition, results, export = tmp_path / "survey.json", tmp_path / "results.json", tmp_path / "qualtrics.csv"
    definition.write_text(json.dumps(DEFINITION))
    results.write_text(json.dumps(hosted))
    export.write_text(qualtrics_csv(hosted))
    runner = CliRunner()
    for fmt in ("json", "csv", "table"):
        ours = runner.invoke(cli, ["estimate", "--db", db_path, "honest", "--format", fmt])
        surveyjs = runner.invoke(cli, ["estimate", str(definition), str(results), "--from", "surveyjs", "--format", fmt])
        qualtrics = runner.invoke(cli, ["estimate", str(definition), str(export), "--from", "qualtrics", "--format", fmt])
        assert ours.exit_code == surveyjs.exit_code == qualtrics.exit_code == 0, (ours.output, surveyjs.output,
                                                                                  qualtrics.output)
        assert surveyjs.output == ours.output and qualtrics.output == ours.output
    out = json.loads(runner.invoke(cli, ["estimate", "--db", db_path, "honest", "--format", "json"]).output)
    assert out["n_responses"] == 16


# ---------------------------------------------------------------- SurveyJS

HOST_JS = """
const design = JSON.parse(document.getElementById("design").textContent);
DeniableEmbed.registerSurveyJS(Survey, { design });
const survey = new Survey.Model({
  pages: [
    { name: "first", elements: [{ type: "text", name: "age", title: "Your age" },
                                { type: "deniable", name: "copied", titleLocation: "hidden" },
                                { type: "deniable", name: "pills", titleLocation: "hidden" }] },
    { name: "second", elements: [{ type: "deniable", name: "plagiarism", titleLocation: "hidden" },
                                 { type: "deniable", name: "fabricated", titleLocation: "hidden" }] },
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

COUNT_DRAWS = """
const realDraw = crypto.getRandomValues.bind(crypto);
window.draws = 0;
crypto.getRandomValues = (array) => { window.draws += 1; return realDraw(array); };
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
def surveyjs_host(page, live_server, app):
    from support.dashboard import make_survey

    make_survey(app, DEFINITION, status="open")
    design = app.test_client().get("/api/v1/surveys/honest").get_json()
    files = {"/host.html": ("text/html", host_page(live_server, design).encode()),
             "/host.js": ("text/javascript", HOST_JS.encode()),
             "/survey.core.min.js": ("text/javascript", (SURVEYJS / "survey.core.min.js").read_bytes()),
             "/survey-js-ui.min.js": ("text/javascript", (SURVEYJS / "survey-js-ui.min.js").read_bytes())}
    with serving(files) as origin:
        page.add_init_script(COUNT_DRAWS)
        logged = []
        page.on("pageerror", lambda error: logged.append(f"page error: {error}"))
        page.goto(f"{origin}/host.html")
        page.wait_for_selector("#deniable-honest-copied-answer-0")
        yield page, design, logged


def data(page) -> dict:
    return page.evaluate("() => JSON.parse(JSON.stringify(window.survey.data))")


def click_button(page, name: str) -> None:
    page.locator(f"input[type=button][value='{name}'], button:has-text('{name}')").first.click()


def follow(page, qid: str) -> int:
    """Click what the shown instruction asks of a respondent who did it (and was not born in the first half)."""
    shown = page.locator(f"#deniable-honest-{qid}-instruction").inner_text()
    answer = 1 if shown.startswith(("Please answer No", "Please do not answer")) else 0
    page.check(f"#deniable-honest-{qid}-answer-{answer}")
    return answer


def test_surveyjs_holds_only_reports_and_a_reload_re_sends_them(surveyjs_host, tmp_path, live_server, db_path):
    page, design, logged = surveyjs_host
    fingerprint = design["design_fingerprint"]
    assert page.evaluate("() => Array.from(document.querySelectorAll('.deniable-question input'))"
                         ".map((i) => i.getAttribute('name'))") == [None] * 4
    page.fill(".sd-text", "21")
    answers = {qid: follow(page, qid) for qid in ("copied", "pills")}
    assert "copied" not in data(page)  # nothing reaches the host's data before the page is left
    click_button(page, "Next")
    page.wait_for_selector("#deniable-honest-plagiarism-answer-0")
    first = data(page)
    for qid in ("copied", "pills"):
        value = first[qid]
        assert set(value) == {"report", "design", "epsilon"} and value["design"] == fingerprint
        assert set(value["report"]) == {"group", "answer"} and value["report"]["answer"] == answers[qid]
        assert value["report"]["group"] == int(page.evaluate(f"() => localStorage.getItem('deniable:arm:honest:{qid}')"))
    assert first["copied"]["epsilon"] is None and first["pills"]["epsilon"] == pytest.approx(
        design["questions"][1]["realized_epsilon"])

    # a reload before completion: the host resumes its saved data; the other answers clicked, the same reports
    page.reload()
    page.wait_for_selector("#deniable-honest-copied-answer-0")
    for qid in ("copied", "pills"):
        page.check(f"#deniable-honest-{qid}-answer-{1 - answers[qid]}")
    click_button(page, "Next")
    page.wait_for_selector("#deniable-honest-plagiarism-answer-0")
    assert {qid: data(page)[qid] for qid in ("copied", "pills")} == {qid: first[qid] for qid in ("copied", "pills")}
    assert page.evaluate("() => window.draws") == 2 + 2  # after the reload: an instruction per question, no group, no report

    for qid in ("plagiarism", "fabricated"):
        follow(page, qid)
    click_button(page, "Complete")
    page.wait_for_function("() => window.completion !== undefined")
    completion = json.loads(page.evaluate("() => window.completion"))
    assert set(completion) == {"age", *QIDS} and completion["age"] == "21"
    for qid in QIDS:
        assert set(completion[qid]) == {"report", "design", "epsilon"}
        assert set(completion[qid]["report"]) == {"group", "answer"}
    storage = page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
    assert set(storage) == {"host:partial", *(f"deniable:{kind}:honest:{qid}" for kind in ("arm", "report") for qid in QIDS)}
    for value in storage.values():
        assert not any(sentence in value for sentence in SENTENCES.values())
        assert not any(f'"{name}"' in value or value == name for name in ("yes", "no", "truthful", "sensitive", "unrelated"))
    assert logged == []

    # the host's export and the same reports sent to deniable's API: the same estimates
    post_reports(live_server, "honest", {qid: completion[qid]["report"] for qid in QIDS})
    definition, results = tmp_path / "survey.json", tmp_path / "results.json"
    definition.write_text(json.dumps(DEFINITION))
    results.write_text(json.dumps([completion]))
    runner = CliRunner()
    ours = runner.invoke(cli, ["estimate", "--db", db_path, "honest", "--format", "json"])
    theirs = runner.invoke(cli, ["estimate", str(definition), str(results), "--from", "surveyjs", "--format", "json"])
    assert ours.exit_code == theirs.exit_code == 0, (ours.output, theirs.output)
    assert theirs.output == ours.output and json.loads(ours.output)["n_responses"] == 1


def test_parse_definition_keeps_the_models():
    """The definition above is the four models (a guard for the tests above)."""
    assert [q.mechanism.model for q in parse_definition(DEFINITION).questions] == ["CDM", "CDMsym", "SLD", "UQTunknown"]


# ---------------------------------------------------------------- fitting the host's card

LONG = ("Have you, at any time during the last twelve months, including at work, at school, at home or anywhere "
        "else, made up any of the data you reported, Supercalifragilisticexpialidociously-long-unbroken-words?")
FIT = {"slug": "fit2", "title": "Fit", "questions": [
    {"id": "uqt", "type": "two_group", "model": "UQTunknown", "p": [0.3, 0.8], "text": LONG,
     "unrelated": "Were you born in the first half of the year, counting from the first of January-to-the-end-of-June?"},
    {"id": "sym", "type": "two_group", "model": "CDMsym", "p": [0.2, 0.1, 0.7, 0.15], "text": LONG}]}

FIT_JS = """
const design = JSON.parse(document.getElementById("design").textContent);
DeniableEmbed.registerSurveyJS(Survey, { design });
const survey = new Survey.Model({ pages: [{ name: "all", elements: ["uqt", "sym"].map((name) => (
  { type: "deniable", name, titleLocation: "hidden" })) }] });
survey.render(document.getElementById("surveyElement"));
"""


@pytest.mark.parametrize("width", [320, 1280])
def test_the_two_group_card_fits_the_surveyjs_card(page, app, live_server, width):
    design = open_for_the_embed(app, live_server, page, FIT)
    embed = current()
    html = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Host</title>
<link rel="stylesheet" href="/survey-core.min.css">
<script src="/survey.core.min.js"></script><script src="/survey-js-ui.min.js"></script>
<script src="{live_server}/embed/{embed.version}/deniable-embed.js" integrity="{integrity(embed.script)}" crossorigin="anonymous"></script>
<script type="application/json" id="design">{json.dumps(design)}</script></head>
<body><div id="surveyElement"></div><script src="/host.js"></script></body></html>"""
    files = {"/host.html": ("text/html", html.encode()), "/host.js": ("text/javascript", FIT_JS.encode()),
             "/survey.core.min.js": ("text/javascript", (SURVEYJS / "survey.core.min.js").read_bytes()),
             "/survey-js-ui.min.js": ("text/javascript", (SURVEYJS / "survey-js-ui.min.js").read_bytes()),
             "/survey-core.min.css": ("text/css", (SURVEYJS / "survey-core.fontless.min.css").read_bytes())}
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size({"width": width, "height": 900})
    with serving(files) as origin:
        page.goto(f"{origin}/host.html")
        for qid in ("uqt", "sym"):
            page.wait_for_selector(f'fieldset[data-deniable-qid="{qid}"]')
        seen = page.evaluate("""() => {
          const root = document.scrollingElement;
          return {document: [root.scrollWidth, root.clientWidth],
                  embeds: Array.from(document.querySelectorAll('fieldset[data-deniable-qid]'), (f) => {
                    const card = f.closest('.sd-question') || f.parentElement;
                    return [f.scrollWidth, f.clientWidth, f.getBoundingClientRect().right, card.getBoundingClientRect().right];
                  })};
        }""")
    assert not errors
    assert seen["document"][0] <= seen["document"][1], seen
    for scroll, client, right, card_right in seen["embeds"]:
        assert scroll <= client and right <= card_right + 0.5, seen


# ---------------------------------------------------------------- the sampler: the page's, the twin's

def test_the_built_samplers_agree_with_the_survey_pages_and_the_python_twin(page, honest):
    """drawGroup, drawInstruction and comply of the built embed (ES module and classic script) against the survey
    page's types/two_group.js and client/two_group.py, on the draws at and around every threshold."""
    from deniable.client.two_group import group_one, instruction_one

    page.add_script_tag(url=f"/embed/{current().version}/deniable-embed.js")
    for q in parse_definition(DEFINITION).questions:
        mech = q.mechanism
        draws = sorted({0, 1, 2**32 - 1, mech.group_threshold - 1, mech.group_threshold,
                        *(c + d for g in (1, 2) for c in mech.cumulative(g)[:-1] for d in (-1, 0))})
        got = page.evaluate("""async ([version, draws, threshold, columns, names]) => {
            const run = (tg) => draws.map((u) => [tg.drawGroup(threshold, () => u),
              tg.drawInstruction(columns[0], () => u), tg.drawInstruction(columns[1], () => u),
              names.flatMap((name) => [0, 1, 2, 3].map((v) => tg.comply(name, v % 2, Math.floor(v / 2))))]);
            const built = await import(`/embed/${version}/deniable-embed.mjs`);
            const ours = await import('/static/types/two_group.js');
            return [run(built), run(window.DeniableEmbed), run(ours)];
        }""", [current().version, draws, mech.group_threshold, [mech.cumulative(1), mech.cumulative(2)],
               list(mech.instructions)])
        module, script, survey_page = got
        assert module == script == survey_page, q.id
        assert [row[:3] for row in module] == [
            [group_one(mech, [u]), *(mech.instructions.index(instruction_one(mech, g, [u])) for g in (1, 2))]
            for u in draws], q.id
