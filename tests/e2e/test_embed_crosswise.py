"""The respondent-side crosswise model in the built embed, in chromium (docs/embedding.md): mounted from the
survey's design document, the card shows the question, the private fact and the two choices, "same" and
"different" (never Yes/No), in the survey page's words; the report is the choice as is — no draw
(``crypto.getRandomValues`` is never called), the same report on every commit — and nothing in the page's
state holds a true answer: the inputs are the two choices, nameless, and storage holds no answer.  A
document without the card's words is refused rather than mounted as a Yes/No question.  What the host
receives is what ``deniable estimate --from surveyjs`` reads, with the estimates of the same choices
submitted to deniable itself."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from deniable.client.embed import current
from deniable.client.submit import fetch_mechanisms, make_reports, post_reports
from deniable.server.cli import cli
from support.browser import open_for_the_embed

pytestmark = pytest.mark.browser

FACT = "Is your mother's birthday in January, February or March?"
DEFINITION = {
    "slug": "taxes", "title": "Taxes",
    "questions": [{"id": "tax", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"],
                   "design": {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT,
                              "prevalence_range": [0.23, 0.27]}}],
}

# Mount question tax, pick each choice in turn (one mount per choice, as one respondent each), commit it
# `repeat` times; count the calls to crypto.getRandomValues; snapshot the card and the page's storage.
MOUNT = """async ({version, design, choices, repeat}) => {
  const m = await import(`/embed/${version}/deniable-embed.mjs`);
  localStorage.clear();
  sessionStorage.clear();
  const real = crypto.getRandomValues.bind(crypto);
  let draws = 0;
  Object.defineProperty(crypto, 'getRandomValues', {configurable: true, value: (array) => { draws += 1; return real(array); }});
  try {
    const runs = [];
    for (const choice of choices) {
      const host = document.createElement('div');
      document.body.append(host);
      const seen = [];
      const handle = m.mount(host, {design, question: 'tax', onReport: (r) => seen.push(r)});
      const card = {
        text: host.innerText,
        legend: host.querySelector('legend').textContent,
        fact: host.querySelector('.deniable-crosswise-fact').textContent,
        inputs: Array.from(host.querySelectorAll('input')).map((input) =>
          [input.type, input.name, input.labels[0].textContent, input.value, input.checked]),
        note: host.querySelector('.deniable-note').textContent,
      };
      const label = Array.from(host.querySelectorAll('label')).find((l) => l.textContent === choice);
      label.click();
      const reports = [];
      for (let i = 0; i < repeat; i += 1) reports.push(handle.commit());
      const storage = Object.fromEntries(Object.keys(localStorage).map((k) => [k, localStorage.getItem(k)]));
      const session = Object.keys(sessionStorage);
      const inputs = Array.from(host.querySelectorAll('input')).map((input) => [input.name, input.value, input.checked]);
      runs.push({card, reports, seen, storage, session, inputs, handleKeys: Object.keys(handle)});
      handle.unmount();
      host.remove();
    }
    return {runs, draws};
  } finally {
    delete crypto.getRandomValues;
  }
}"""


@pytest.fixture
def taxes(app, live_server, page):
    return open_for_the_embed(app, live_server, page, DEFINITION)


def test_the_embed_shows_the_fact_and_same_or_different_and_sends_the_choice_as_is(page, taxes):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    out = page.evaluate(MOUNT, {"version": current().version, "design": taxes,
                                "choices": ["different", "same", "different"], "repeat": 4})
    assert errors == []
    tax = taxes["questions"][0]
    expected = {"design": taxes["design_fingerprint"], "epsilon": tax["realized_epsilon"]}
    for run, report in zip(out["runs"], (1, 0, 1)):
        card = run["card"]
        assert card["legend"] == "Have you ever evaded a tax?"
        assert card["fact"] == f"Second question, just for you: {FACT}"
        assert "Are your answers to both questions the same (both yes or both no) or different?" in card["text"]
        # the only inputs are the two choices, nameless and unchecked on mounting: no Yes, no No
        assert card["inputs"] == [["radio", "", "same", "on", False], ["radio", "", "different", "on", False]]
        assert not re.search(r"\b(Yes|No)\b", card["text"])
        assert card["note"] == ("Protected. Your device never sees your answer: you only say whether your answers to "
                                "two questions are the same or different.")
        # the report is the choice, as is, on every commit (no draw to repeat), and the host gets only it
        assert run["reports"] == [{"report": report, **expected}] * 4
        assert run["seen"] == run["reports"]
        # nothing in the page's state holds a true answer: storage holds nothing, the inputs only the choice
        assert run["storage"] == {} and run["session"] == []
        assert sorted(name for name, _, _ in run["inputs"]) == ["", ""]
    assert out["draws"] == 0  # crypto.getRandomValues never called: the device draws nothing


def test_a_document_without_the_cards_words_is_refused_not_mounted_as_yes_or_no(page, taxes):
    old = json.loads(json.dumps(taxes))
    del old["questions"][0]["crosswise"]  # a design document made before the embed mounted this design
    message = page.evaluate("""async ({version, design}) => {
      const m = await import(`/embed/${version}/deniable-embed.mjs`);
      const host = document.createElement('div');
      try { m.mount(host, {design, question: 'tax'}); return null; } catch (error) { return error.message; }
    }""", {"version": current().version, "design": old})
    assert message is not None and "question tax" in message and "same" in message


def test_what_the_host_receives_estimates_as_the_same_choices_submitted_to_deniable(page, taxes, live_server,
                                                                                        db_path, tmp_path):
    choices = ["different", "same", "different", "different", "same", "different", "same", "different"]
    out = page.evaluate(MOUNT, {"version": current().version, "design": taxes, "choices": choices, "repeat": 1})
    hosted = [{"tax": run["reports"][0]} for run in out["runs"]]
    mechanisms = fetch_mechanisms(live_server, "taxes")
    for choice in choices:
        post_reports(live_server, "taxes", make_reports({"tax": ["same", "different"].index(choice)}, mechanisms))
    definition, results = tmp_path / "survey.json", tmp_path / "results.json"
    definition.write_text(json.dumps(DEFINITION))
    results.write_text(json.dumps(hosted))
    runner = CliRunner()
    ours = runner.invoke(cli, ["estimate", "--db", db_path, "taxes", "--format", "json"])
    theirs = runner.invoke(cli, ["estimate", str(definition), str(results), "--from", "surveyjs", "--format", "json"])
    assert ours.exit_code == theirs.exit_code == 0, (ours.output, theirs.output)
    assert theirs.output == ours.output
    counts = [option["noisy_count"] for option in json.loads(ours.output)["questions"][0]["options"]]
    assert counts == [choices.count("same"), choices.count("different")]
