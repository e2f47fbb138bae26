"""The two-group non-compliance designs in chromium (issue 38): each card shows one instruction drawn by the
device, the respondent clicks Yes or No, and the request carries only ``GROUP:ANSWER`` per question (never
the instruction); nothing about the instruction is left in localStorage or sessionStorage, nor on the page
once the answer is sent."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from e2e.test_accessibility import axe_violations
from support.browser import record_requests, stored_reports

from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

pytestmark = pytest.mark.browser

SLUG = "nc"
UNRELATED = "Do you prefer tea to coffee?"
SURVEY = parse_definition({"slug": SLUG, "title": "Non-compliance", "questions": [
    {"id": "cdm", "text": "Have you ever cheated on an exam?", "type": "two_group", "model": "CDM", "p": [0.3, 0.7]},
    {"id": "sym", "text": "Have you ever copied homework?", "type": "two_group", "model": "CDMsym",
     "p": [0.2, 0.3, 0.3, 0.2], "group_share": 0.4},
    {"id": "sld", "text": "Have you ever plagiarized?", "type": "two_group", "model": "SLD", "p": [0.3, 0.8]},
    {"id": "uqt", "text": "Have you ever bought a thesis?", "type": "two_group", "model": "UQTunknown",
     "p": [0.3, 0.8], "unrelated": UNRELATED},
]})
IDS = [q.id for q in SURVEY.questions]
WORDS = {"yes": "Please answer Yes, whatever the true answer.", "no": "Please answer No, whatever the true answer.",
         "truthful": "Please answer the question above truthfully.",
         "sensitive": "Please answer the question above truthfully.",
         "unrelated": f"Please do not answer the question above. Answer this question truthfully instead: {UNRELATED}"}


@pytest.fixture
def open_survey(app):
    db = connect(app.config["DATABASE"])
    try:
        return insert_survey(db, SURVEY, status="open")
    finally:
        db.conn.close()


def open_page(page, live_server):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server}/s/{SLUG}")
    page.wait_for_selector("#submit-answers:not([disabled])")
    return errors


def shown_instruction(page, qid) -> str:
    return " ".join(page.locator(f"#{qid}-instruction").inner_text().split())


def storage(page) -> dict:
    return page.evaluate("""() => ({local: Object.fromEntries(Object.entries(localStorage)),
                                     session: Object.fromEntries(Object.entries(sessionStorage))})""")


def leaks(text: str) -> list[str]:
    return [word for word in ("instruction", "truthful", "unrelated", "sensitive", "Please", UNRELATED, "whatever")
            if word in text]


def test_the_instruction_shows_and_only_group_and_answer_are_sent(page, live_server, open_survey, db_path):
    requests = record_requests(page)
    errors = open_page(page, live_server)
    groups = {}
    for q in SURVEY.questions:
        shown = shown_instruction(page, q.id)
        assert shown in {WORDS[name] for name in q.mechanism.instructions}, (q.id, shown)
        group = page.evaluate(f"() => localStorage.getItem('deniable:arm:{SLUG}:{q.id}')")
        assert group in ("1", "2")
        groups[q.id] = group
    assert axe_violations(page) == []
    answers = {"cdm": 0, "sym": 1, "sld": 0, "uqt": 1}
    for qid, answer in answers.items():
        page.check(f"#{qid}-answer-{answer}")
    with page.expect_navigation(url=f"**/s/{SLUG}/thanks"):
        page.click("#submit-answers")
    body = [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"][0]
    assert set(body) == {"csrf_token", *IDS}
    assert {qid: body[qid] for qid in IDS} == {qid: [f"{groups[qid]}:{answers[qid]}"] for qid in IDS}
    assert not leaks(requests[-1].post_data or "") and all(not leaks(r.post_data or "") for r in requests)
    assert stored_reports(db_path) == [{qid: {"group": int(groups[qid]), "answer": answers[qid]} for qid in IDS}]
    # the device keeps the groups (not sensitive, sent anyway) and that it answered: nothing of the instructions
    kept = storage(page)
    assert kept["local"] == {**{f"deniable:arm:{SLUG}:{qid}": groups[qid] for qid in IDS}, f"deniable:sent:{SLUG}": "1"}
    assert not leaks(repr(kept))
    page.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
    shown = page.locator("#sent-table").inner_text()
    assert "never the instruction" in shown and not any(WORDS[name] in shown for name in WORDS)
    assert errors == []


def test_the_instruction_leaves_the_page_once_the_answer_is_sent(page, live_server, open_survey):
    errors = open_page(page, live_server)
    for qid in IDS:
        assert shown_instruction(page, qid)
        page.check(f"#{qid}-answer-0")
    # survey.js prepares the reports on submit; stop the navigation after it to look at the page
    page.evaluate("() => document.getElementById('survey-form').addEventListener('submit', (e) => e.preventDefault())")
    page.click("#submit-answers")
    for qid in IDS:
        assert page.locator(f"#{qid}-instruction").inner_text() == "" and not page.locator(f"#{qid}-instruction").is_visible()
        assert page.locator(f"#{qid}-report").input_value() in ("1:0", "2:0")
    card_html = page.evaluate("() => Array.from(document.querySelectorAll('fieldset.question'), (f) => "
                              "f.outerHTML.replace(/<template[\\s\\S]*?<\\/template>/g, '')).join('')")
    assert not any(WORDS[name] in card_html for name in WORDS)  # only the inert templates, the same for everyone
    assert not leaks(repr(storage(page)))
    assert errors == []


def test_a_reload_keeps_the_group_and_draws_the_instruction_again_in_memory_only(page, live_server, open_survey):
    open_page(page, live_server)
    before = storage(page)["local"]
    page.reload()
    page.wait_for_selector("#submit-answers:not([disabled])")
    assert storage(page)["local"] == before
    for q in SURVEY.questions:
        assert shown_instruction(page, q.id) in {WORDS[name] for name in q.mechanism.instructions}


def test_the_browser_sampler_and_its_python_twin_agree_on_explicit_draws(page, live_server, open_survey):
    """drawGroup / drawInstruction (two_group.js) against group_one / instruction_one (client/two_group.py)
    on the draws at and around every threshold, for every model."""
    from deniable.client.two_group import group_one, instruction_one

    open_page(page, live_server)
    for q in SURVEY.questions:
        mech = q.mechanism
        draws = sorted({0, 1, 2**32 - 1, mech.group_threshold - 1, mech.group_threshold,
                        *(c + d for g in (1, 2) for c in mech.cumulative(g)[:-1] for d in (-1, 0))})
        got = page.evaluate("""async ([draws, threshold, columns]) => {
            const tg = await import('/static/types/two_group.js');
            return draws.map((u) => [tg.drawGroup(threshold, () => u),
                                     tg.drawInstruction(columns[0], () => u), tg.drawInstruction(columns[1], () => u)]);
        }""", [draws, mech.group_threshold, [mech.cumulative(1), mech.cumulative(2)]])
        expected = [[group_one(mech, [u]), *(mech.instructions.index(instruction_one(mech, g, [u])) for g in (1, 2))]
                    for u in draws]
        assert got == expected, q.id
        refused = page.evaluate("""async (threshold) => {
            const tg = await import('/static/types/two_group.js');
            const out = [];
            for (const u of [-1, 4294967296, 0.5]) {
              try { tg.drawGroup(threshold, () => u); out.push('accepted'); } catch (e) { out.push('refused'); }
            }
            return out;
        }""", mech.group_threshold)
        assert refused == ["refused"] * 3
