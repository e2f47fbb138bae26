"""Randomized-response designs in chromium: the shipped ``client/static/designs.js`` reproduces the
shared vectors (``tests/data/design_vectors.json``, made by the Python reference through
``python scripts/make_design_vectors.py``) draw for draw, follows the design's matrix with
``crypto.getRandomValues``, and a survey page with a designed question sends only the report
(docs/design.md, invariants 1, 3 and 9).

The distribution test is a chi-square goodness-of-fit test at ``ALPHA = 1e-4`` per answer; a
browser's CSPRNG cannot be seeded, so it is the only random test here.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest
from scipy import stats
from support.browser import record_requests, stored_reports
from e2e.test_accessibility import axe_violations

from deniable.client.designs import from_definition, sample
from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests" / "data" / "design_vectors.json").read_text())
ALPHA = 1e-4
FORCED = {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}
SURVEY = parse_definition({"slug": "designed", "title": "Designed", "questions": [
    {"id": "cheated", "text": "Have you ever cheated in an exam?", "options": ["Yes", "No"], "design": FORCED},
    {"id": "level", "text": "How much?", "options": ["None", "Some", "Much"],
     "design": {"name": "forced", "p": 0.7, "forced": [0.1, 0.05, 0.15]}, "required": False},
    {"id": "tri", "text": "Have you ever stolen?", "options": ["Yes", "No"],
     "design": {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}}]})  # not ε-LDP: still randomized


@pytest.fixture
def js_page(page, live_server, open_demo):
    """A page on the live server's origin, so that ``import('/static/designs.js')`` loads the shipped file."""
    page.goto(f"{live_server}/s/demo")
    return page


def test_reproduces_the_shared_vectors(js_page):
    cases = VECTORS["cases"]
    results = js_page.evaluate(
        """async (cases) => {
            const d = await import('/static/designs.js');
            return cases.map((c) => {
                const cumulative = d.cumulativeOf(c.weights);
                return c.values.map((v, i) => d.sampleDesign(v, cumulative, () => c.draws[i]));
            });
        }""", [{"weights": c["weights"], "values": c["values"], "draws": c["draws"]} for c in cases])
    for case, reports in zip(cases, results):
        assert reports == case["reports"], case["design"]
        design = from_definition(case["design"], case["options"])
        assert reports == sample(design, case["values"], case["draws"]).tolist()


def test_bad_inputs_are_refused(js_page):
    errors = js_page.evaluate(
        """async () => {
            const d = await import('/static/designs.js');
            const tries = [() => d.sampleDesign(2, [[1, 4294967296], [2, 4294967296]], () => 0),
                           () => d.sampleDesign(0, [[5, 4294967295], [2, 4294967296]], () => 0),
                           () => d.sampleDesign(0, [[5, 4294967296], [2, 4294967296]], () => 4294967296)];
            return tries.map((f) => { try { f(); return null; } catch (e) { return e.name; } });
        }""")
    assert errors == ["RangeError"] * 3


def test_distribution_with_crypto_random_values(js_page):
    design = from_definition({"name": "forced", "p": 0.7, "forced": [0.1, 0.05, 0.15]}, ["a", "b", "c"])
    n = 30_000
    tallies = js_page.evaluate(
        """async ([weights, n]) => {
            const d = await import('/static/designs.js');
            const cumulative = d.cumulativeOf(weights);
            return [0, 1, 2].map((t) => {
                const counts = [0, 0, 0];
                for (let i = 0; i < n; i++) counts[d.sampleDesign(t, cumulative)] += 1;
                return counts;
            });
        }""", [[list(r) for r in design.weights], n])
    for t, counts in enumerate(tallies):
        assert stats.chisquare(counts, n * design.matrix[:, t]).pvalue > ALPHA, (t, counts)


def test_a_designed_question_sends_only_its_report(page, live_server, app, db_path):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, SURVEY, status="open")
    finally:
        db.conn.close()
    requests = record_requests(page)
    page.goto(f"{live_server}/s/designed")
    page.wait_for_selector("#submit-answers:not([disabled])")
    assert axe_violations(page) == []  # the card, its radio group and "I prefer not to answer"
    note = page.locator("#cheated-note").inner_text()
    assert "otherwise it sends, whatever your answer: Yes (25% of the time), No (15% of the time)" in note
    page.check("#cheated-option-0")
    page.check("#level-skip")  # optional: "I prefer not to answer"
    assert "Not protected by ε." in page.locator("#tri-note").inner_text()
    page.check("#tri-option-0")
    with page.expect_navigation(url="**/s/designed/thanks"):
        page.click("#submit-answers")
    body = [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"][0]
    assert set(body) == {"csrf_token", "cheated", "level", "tri"} and body["level"] == [""]
    report, tri = body["cheated"][0], body["tri"][0]
    assert report in ("0", "1") and tri in ("0", "1")
    assert stored_reports(db_path) == [{"cheated": int(report), "tri": int(tri)}]
    storage = page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
    # both reports were randomized on the device (memoized: only randomized reports are), the answers never kept
    assert storage == {"deniable:report:designed:cheated": report, "deniable:report:designed:tri": tri,
                       "deniable:sent:designed": "1"}
    page.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
    shown = dict(zip(page.locator("tr[data-qid]:not([hidden]) th").all_inner_texts(),
                     page.locator("tr[data-qid]:not([hidden]) td.sent-label").all_inner_texts()))
    assert shown["Have you ever cheated in an exam?"] == ["Yes", "No"][int(report)]


def test_the_audit_samples_a_stored_design_in_chromium_and_python(tmp_path):
    """``deniable audit --db``: a forced-response question passes in the browser and in Python; a design
    with a zero cell is said to be not ε-LDP instead of being certified."""
    from click.testing import CliRunner

    from deniable.server.cli import cli

    definition = tmp_path / "designs.json"
    definition.write_text(json.dumps({"slug": "designs", "title": "Designs", "questions": [
        {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "design": FORCED},
        {"id": "tri", "text": "Tri?", "options": ["Yes", "No"], "design": {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}}]}))
    db = tmp_path / "designs.db"
    made = CliRunner().invoke(cli, ["import", str(definition), "--db", str(db), "--open"])
    assert made.exit_code == 0, made.output
    result = CliRunner().invoke(cli, ["audit", "--db", str(db), "--type", "design", "--samples", "100000",
                                      "--confidence", "0.999", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output[result.output.index("{"):])["results"]
    assert [(r["setting"], r["questions"]) for r in rows] == [("custom k=2", ["designs/tri"]),
                                                              ("forced k=2", ["designs/cheated"])]
    tri, forced = rows
    assert forced["ok"] and forced["browser_lower_bound"] <= forced["declared_epsilon"] == pytest.approx(np.log(5))
    assert forced["browser_point"] == pytest.approx(np.log(5), abs=0.1)
    assert tri["ok"] is None and not tri["protected"] and tri["verdict"].startswith("NOT ε-LDP: a randomized-response design")
