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
    assert "a 50/50 guess between two answers becomes at most" in page.locator("#cheated-note").inner_text()
    more = page.locator("#cheated-more").text_content()  # behind "What does this mean?"
    assert "otherwise it sends, whatever your answer: Yes (25% of the time), No (15% of the time)" in more
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


# ---------------------------------------------------------------- a design on each tick of a check-all question

TICKED = parse_definition({"slug": "ticked", "title": "Ticked", "questions": [
    {"id": "used", "text": "Which of these have you used?", "type": "multi", "options": ["Cannabis", "Cocaine", "Ecstasy"],
     "design": FORCED},
    {"id": "tri", "text": "Which of these have you stolen?", "type": "multi", "options": ["Pens", "Paper"],
     "design": {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}}]})  # not ε-LDP: still randomized


def test_reproduces_the_shared_tick_vectors(js_page):
    """``sampleTicks`` gives the reports of ``client/designs.py``'s ``sample_ticks`` on every tick case."""
    cases = VECTORS["tick_cases"]
    results = js_page.evaluate(
        """async (cases) => {
            const d = await import('/static/designs.js');
            return cases.map((c) => {
                const cumulative = d.cumulativeOf(c.weights);
                return c.masks.map((mask, i) => {
                    const ticks = Array.from({length: c.k}, (_, j) => (mask >> j) & 1);
                    let next = 0;
                    const reported = d.sampleTicks(ticks, cumulative, () => c.draws[i][next++]);
                    if (next !== c.k) throw new Error(`used ${next} draws for ${c.k} ticks`);
                    return reported.reduce((m, bit, j) => m | (bit << j), 0);
                });
            });
        }""", [{"weights": c["weights"], "k": c["k"], "masks": c["masks"], "draws": c["draws"]} for c in cases])
    for case, reports in zip(cases, results):
        assert reports == case["reports"], case["design"]


def test_a_check_all_question_with_a_design_sends_only_its_report(page, live_server, app, db_path):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, TICKED, status="open")
    finally:
        db.conn.close()
    requests = record_requests(page)
    page.goto(f"{live_server}/s/ticked")
    page.wait_for_selector("#submit-answers:not([disabled])")
    assert "For each option on its own" in page.locator("#used-more").text_content()  # "What does this mean?"
    assert "Not protected by ε." in page.locator("#tri-note").inner_text()
    page.check("#used-option-0")
    page.check("#used-option-2")
    page.check("#tri-none")
    with page.expect_navigation(url="**/s/ticked/thanks"):
        page.click("#submit-answers")
    body = [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"][0]
    assert set(body) == {"csrf_token", "used", "tri"}
    used, tri = body["used"][0], body["tri"][0]
    assert len(used) == 3 and set(used) <= {"0", "1"} and len(tri) == 2 and set(tri) <= {"0", "1"}
    storage = page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
    assert storage == {"deniable:report:ticked:used": used, "deniable:report:ticked:tri": tri,
                       "deniable:sent:ticked": "1"}


def test_the_tick_sampler_follows_the_design_with_crypto_random_values(js_page):
    """Every tick of the full and of the empty set is reported ticked with the design's probability."""
    from deniable.client.designs import tick_design

    design = tick_design({"name": "kuk", "theta_1": 0.8, "theta_2": 0.3})
    n = 20_000
    tallies = js_page.evaluate(
        """async ([weights, n]) => {
            const d = await import('/static/designs.js');
            const cumulative = d.cumulativeOf(weights);
            return [[1, 1, 1], [0, 0, 0]].map((ticks) => {
                const counts = [0, 0, 0];
                for (let i = 0; i < n; i++) d.sampleTicks(ticks, cumulative).forEach((bit, j) => { counts[j] += bit; });
                return counts;
            });
        }""", [[list(r) for r in design.weights], n])
    for answer, counts in enumerate(tallies):
        for ticked in counts:
            assert stats.binomtest(ticked, n, design.matrix[0, answer]).pvalue > ALPHA, (answer, counts)


def test_the_audit_samples_a_design_on_the_ticks_in_chromium_and_python(tmp_path):
    """``deniable audit --db --type multi-design``: K times the design's ε passes in both samplers; a zero
    cell on the ticks is said to be not ε-LDP."""
    from click.testing import CliRunner

    from deniable.server.cli import cli

    definition = tmp_path / "ticks.json"
    definition.write_text(json.dumps(TICKED.to_dict()))
    db = tmp_path / "ticks.db"
    made = CliRunner().invoke(cli, ["import", str(definition), "--db", str(db), "--open"])
    assert made.exit_code == 0, made.output
    result = CliRunner().invoke(cli, ["audit", "--db", str(db), "--type", "multi-design", "--samples", "100000",
                                      "--confidence", "0.999", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output[result.output.index("{"):])["results"]
    assert sorted((r["setting"], r["questions"][0]) for r in rows) == [("custom K=2", "ticked/tri"),
                                                                       ("forced K=3", "ticked/used")]
    forced = next(r for r in rows if r["setting"] == "forced K=3")
    tri = next(r for r in rows if r["setting"] == "custom K=2")
    assert forced["ok"] and forced["browser_lower_bound"] <= forced["declared_epsilon"] == pytest.approx(3 * np.log(5))
    assert tri["ok"] is None and not tri["protected"] and tri["verdict"].startswith("NOT ε-LDP")


def test_the_builder_offers_a_check_all_question_a_design_on_its_ticks(page, live_server, app, researcher):
    """In the builder a check-all question has the single choice's Randomization: with forced response
    chosen, ε hides, the live panel shows the whole answer's realized ε (3 ticks × ln 5) and the binary
    design's numbers (the server's plan), and the saved draft keeps the design."""
    from support.browser import log_in
    from support.dashboard import open_db

    from deniable.server.store.surveys import get_survey
    from deniable.server.survey.definition import parse_question

    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, live_server)
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Ticks live")
    page.check("#questions-0-kind-2")
    page.fill("#questions-0-text", "Which of these have you used?")
    page.fill("#questions-0-qid", "used")
    page.fill("#questions-0-options", "Cannabis\nCocaine\nEcstasy")
    page.check("#questions-0-randomization-1")
    assert not page.locator("#questions-0-epsilon").is_visible()
    page.fill("#questions-0-design_p", "0.6")
    page.fill("#questions-0-design_forced", "0.25\n0.15")
    design = {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}
    q = parse_question({"id": "q", "text": "q", "type": "multi", "options": ["a", "b", "c"], "design": design})
    page.wait_for_function("(text) => document.getElementById('plan-0').textContent.includes(text)",
                           arg=f"ε = {3 * np.log(5):.4f}")
    panel = page.inner_text("#plan-0")
    assert "on each of the 3 ticks" in panel and f"{q.qtype.plan(q, 1000, 0.05)['needed']:,}" in panel
    page.wait_for_function("() => document.getElementById('total-epsilon-value').textContent === '4.828'")
    with page.expect_navigation():
        page.click("#save")
    question = get_survey(open_db(app), "ticks-live").survey.questions[0]
    assert json.loads(question.design) == design and question.type == "multi"
    assert page.locator("#questions-0-randomization-1").is_checked()
    assert errors == []


def test_the_embed_randomizes_a_check_all_question_with_a_design_even_when_not_ldp(js_page):
    """The embeddable randomizer (client/embed.py's build) mounts a designed check-all question from the
    design document: a report of K ticks drawn by ``sampleTicks`` — also for a design that is not
    ε-LDP, whose ticks must never be sent as given (a tick that is never reported as ticked when not
    ticked shows it: 'Pens' ticked is reported ticked at most 60 % of the time)."""
    from deniable.client.embed import current
    from deniable.server.survey.definition import design_fingerprint
    from deniable.server.survey.recipes import question_design

    design = {"slug": "ticked", "design_fingerprint": design_fingerprint(TICKED),
              "questions": [question_design(q) for q in TICKED.questions]}
    out = js_page.evaluate(
        f"""async (design) => {{
            const m = await import('/embed/{current().version}/deniable-embed.mjs');
            const reports = [];
            for (let i = 0; i < 400; i++) {{
                localStorage.clear();
                const host = document.createElement('div');
                document.body.append(host);
                const handle = m.mount(host, {{design, question: 'tri'}});
                host.querySelector('[data-option="0"]').click();
                reports.push(handle.commit().report);
                host.remove();
            }}
            return reports;
        }}""", design)
    assert all(len(r) == 2 for r in out)
    pens = sum(r[0] for r in out)
    assert stats.binomtest(pens, 400, 0.6).pvalue > ALPHA and sum(r[1] for r in out) == 0  # "Paper": never
