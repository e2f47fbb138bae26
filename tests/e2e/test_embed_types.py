"""Numeric questions and list experiments in the built embed, in chromium (docs/embedding.md).

The mounted question draws with the survey page's own samplers (rr.js): with the browser's
``crypto.getRandomValues`` fed a case of the shared test vectors (``tests/type_vectors.json``, made
by the Python reference), a mounted numeric question (grid and discrete Laplace) and a mounted list
experiment (the arm drawn on mounting, then the count) report exactly the case's first report.  A
survey's numeric and list questions, mounted from its design document, hand the host only reports
that their types' own checks take, drawn once, and ``deniable estimate --from surveyjs`` and
``--from qualtrics`` read them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from deniable.client.embed import current
from deniable.server.cli import cli
from deniable.server.survey.definition import load_definition, parse_definition
from deniable.server.survey.questions.numeric import rule_words
from deniable.server.survey.platform_exports import read_qualtrics
from deniable.server.survey.recipes import design_document
from deniable.server.survey.surveyjs import read_surveyjs

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
HABITS = ROOT / "examples" / "habits.json"
VECTORS = json.loads((ROOT / "tests" / "type_vectors.json").read_text())
TWO_32 = 2 ** 32

def mount_with_draws(page, version, design, qid, draws, *, typed=None, count=None):
    return page.evaluate(
        """async ({version, design, qid, draws, typed, count}) => {
          const m = await import(`/embed/${version}/deniable-embed.mjs`);
          const real = Object.getOwnPropertyDescriptor(Crypto.prototype, 'getRandomValues');
          let used = 0;
          Object.defineProperty(crypto, 'getRandomValues', {configurable: true, value: (array) => {
            if (used >= draws.length) throw new Error('out of draws');
            array[0] = draws[used++];
            return array;
          }});
          try {
            const memory = new Map();
            const storage = {getItem: (k) => (memory.has(k) ? memory.get(k) : null),
                             setItem: (k, v) => memory.set(k, String(v))};
            const host = document.createElement('div');
            document.body.append(host);
            const handle = m.mount(host, {design, question: qid, storage});
            if (typed !== null) host.querySelector('input').value = typed;
            else host.querySelector(`[data-count="${count}"]`).click();
            const result = handle.commit();
            host.remove();
            return {report: result.report, used, arm: memory.get(`deniable:arm:${design.slug}:${qid}`) ?? null};
          } finally {
            delete crypto.getRandomValues;
            if (crypto.getRandomValues !== real.value) throw new Error('could not restore getRandomValues');
          }
        }""",
        {"version": version, "design": design, "qid": qid, "draws": draws, "typed": typed, "count": count})


@pytest.fixture
def embed_page(page, live_server, open_demo):
    page.goto(f"{live_server}/s/demo")
    return page, current().version


def _numeric_design(case, mechanism):
    q = {"id": "x", "text": "How many?", "required": True, "protected": True, "type": "numeric", "min": 0,
         "max": case["m"], "step": 1, "steps": case["m"], "mechanism": mechanism, "threshold": case["threshold"],
         "realized_epsilon": case.get("epsilon")}
    q.update({"tail": case["tail"]} if mechanism == "laplace" else {"grid": case["grid"]})
    return {"slug": "vectors", "design_fingerprint": "sha256:test", "questions": [q]}


def test_a_mounted_numeric_question_draws_the_shared_vectors(embed_page):
    """Grid randomized response and the discrete Laplace mechanism, as the mounted question draws them."""
    page, version = embed_page
    for mechanism in ("grid", "laplace"):
        cases = VECTORS[mechanism]
        assert len(cases) >= 4
        for case in cases:
            out = mount_with_draws(page, version, _numeric_design(case, mechanism), "x", case["draws"],
                                   typed=str(case["values"][0]))
            assert out["report"] == case["reports"][0], (mechanism, case)


def test_a_mounted_list_experiment_draws_the_shared_vectors(embed_page):
    """The arm on mounting (a fair coin), then the count (randomized, or as given when the threshold is 2^32)."""
    page, version = embed_page
    assert len(VECTORS["list"]) >= 4
    for case in VECTORS["list"]:
        items = [f"item {j}" for j in range(case["items"])]
        design = {"slug": "vectors", "design_fingerprint": "sha256:test", "questions": [
            {"id": "l", "text": "How many?", "required": True, "protected": True, "type": "list", "items": items,
             "sensitive": "S", "k": case["items"] + 2, "threshold": case["threshold"],
             "realized_epsilon": case["epsilon"]}]}
        arm, count = case["reports"][0]
        assert case["values"][0] <= case["items"] + arm
        out = mount_with_draws(page, version, design, "l", case["draws"], count=case["values"][0])
        assert out["arm"] == str(arm)
        assert out["report"] == {"arm": arm, "count": count}, case


def test_numeric_and_list_questions_hand_the_host_only_reports(embed_page, tmp_path):
    """Mounted from a survey's design document: nameless inputs, a number off the step refused in
    words with nothing stored, reports drawn once, and the readers take what the host received."""
    page, version = embed_page
    survey = load_definition(HABITS)
    design = design_document(survey)
    out = page.evaluate(
        """async ({version, design}) => {
          const m = await import(`/embed/${version}/deniable-embed.mjs`);
          localStorage.clear();
          const handles = {};
          for (const qid of ['drinks', 'hours', 'shoplifting', 'used', 'year']) {
            const host = document.createElement('div');
            host.id = `host-${qid}`;
            document.body.append(host);
            handles[qid] = m.mount(host, {design, question: qid});
          }
          const box = (qid) => document.querySelector(`#host-${qid} input`);
          box('drinks').value = '7';
          box('hours').value = '3.25';  // not a step of 0.5
          let refused = null;
          try { handles.hours.commit(); } catch (error) { refused = error.message; }
          const said = document.querySelector('#host-hours [role=alert]').textContent;
          const storedAfterRefusal = localStorage.getItem(`deniable:report:${design.slug}:hours`);
          box('hours').value = '3.5';
          const count = document.querySelectorAll('#host-shoplifting [data-count]').length;
          const arm = localStorage.getItem(`deniable:arm:${design.slug}:shoplifting`);
          const shown = Array.from(document.querySelectorAll('#host-shoplifting li'), (li) => li.textContent);
          document.querySelector('#host-shoplifting [data-count="1"]').click();
          document.querySelector('#host-used [data-option="0"]').click();
          document.querySelector('#host-year [data-option="2"]').click();
          const first = {};
          for (const [qid, handle] of Object.entries(handles)) first[qid] = handle.commit();
          box('drinks').value = '30';
          box('hours').value = '19';
          document.querySelector('#host-shoplifting [data-count="0"]').click();
          const again = {};
          for (const [qid, handle] of Object.entries(handles)) again[qid] = handle.commit();
          const names = Array.from(document.querySelectorAll('[id^=host-] input'), (i) => i.name);
          return {refused, said, storedAfterRefusal, count, arm, shown, first, again, names};
        }""", {"version": version, "design": design})
    assert "hours" in out["refused"] and out["said"] == "Please give a multiple of 0.5 from 0 to 20."
    assert out["storedAfterRefusal"] is None
    arm = int(out["arm"])
    assert out["count"] == 4 + arm  # 0..3, and 4 in the treatment arm
    assert ("I have taken something from a shop without paying" in out["shown"]) == (arm == 1)
    assert set(out["names"]) == {""}
    first = out["first"]
    assert out["again"]["drinks"] == first["drinks"] and out["again"]["hours"] == first["hours"]  # drawn once
    assert out["again"]["shoplifting"] == first["shoplifting"]
    for qid, result in first.items():
        assert set(result) == {"report", "design", "epsilon"} and result["design"] == design["design_fingerprint"]
        question = survey.question(qid)
        question.qtype.check_report(question, result["report"])  # a report the JSON API would take
    assert first["shoplifting"]["report"]["arm"] == arm
    assert isinstance(first["hours"]["report"], int) and first["drinks"]["report"] in (0, 1)  # grid of 1

    # the readers: SurveyJS's results and a Qualtrics export of the same reports
    results = tmp_path / "results.json"
    results.write_text(json.dumps([first, out["again"]]))
    dataset = read_surveyjs(results, survey)
    for qid, result in first.items():
        question = survey.question(qid)
        assert dataset.columns[qid][0] == question.qtype.check_report(question, result["report"])
    run = CliRunner().invoke(cli, ["estimate", str(HABITS), str(results), "--from", "surveyjs", "--format", "json"])
    assert run.exit_code == 0, run.output
    estimates = json.loads(run.output)
    for qid in ("drinks", "hours", "shoplifting"):
        assert f'"{qid}"' in json.dumps(estimates)
    export = tmp_path / "qualtrics.csv"
    columns = [f"deniable_{qid}" for qid in first]
    with export.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ResponseId", *columns])
        writer.writerow(["Response ID", *columns])
        writer.writerow(['{"ImportId":"_recordId"}', *(f'{{"ImportId":"{c}"}}' for c in columns)])
        writer.writerow(["R_1", *(json.dumps(first[qid]) for qid in first)])
    assert read_qualtrics(export, survey).columns["shoplifting"][0] == dataset.columns["shoplifting"][0]


# (min, max, step, a number off the question's answers): each of the survey page's three rules
RULES = [(0, 30, 1, "2.5"), (0, 30, 0.5, "0.3"), (10, 50, 5, "12"), (0.25, 10.25, 0.5, "0.5"), (0.5, 10.5, 1, "1"),
         (-2, 2, 0.5, "0.1"), (0, 0.003, 0.001, "0.0015"), (1, 3, 2, "2")]


def test_a_number_off_the_answers_is_refused_in_the_survey_pages_words(embed_page):
    """The embed names the same rule as the survey page (numeric.rule_words, behind the page's data-rule
    messages): "a multiple of 0.5 from 0 to 30", not "in steps of 0.5", whenever every answer is a multiple."""
    page, version = embed_page
    survey = parse_definition({"slug": "rules", "title": "Rules", "questions": [
        {"id": f"n{i}", "text": "How many?", "type": "numeric", "min": low, "max": high, "step": step}
        for i, (low, high, step, _) in enumerate(RULES)]})
    said = page.evaluate(
        """async ({version, design, typed}) => {
          const m = await import(`/embed/${version}/deniable-embed.mjs`);
          const said = [];
          for (const [i, text] of typed.entries()) {
            const host = document.createElement('div');
            document.body.append(host);
            const handle = m.mount(host, {design, question: `n${i}`, storage: {getItem: () => null, setItem() {}}});
            host.querySelector('input').value = text;
            try { handle.commit(); said.push('taken'); } catch (error) {
              said.push(host.querySelector('[role=alert]').textContent);
            }
            host.remove();
          }
          return said;
        }""", {"version": version, "design": design_document(survey), "typed": [typed for *_, typed in RULES]})
    expected = [f"Please give {rule_words(q)}." for q in survey.questions]
    assert said == expected
    assert [w.split()[3] for w in said] == ["whole", "multiple", "multiple", "number", "number", "multiple", "multiple",
                                            "number"]
