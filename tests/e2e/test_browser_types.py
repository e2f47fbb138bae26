"""Numeric, check-all-that-apply and list-experiment questions answered in chromium against a live
server (docs/design.md, invariants 1 and 3, for every question type).

Every request the page makes is recorded: the POST body may hold only the hidden report fields
and the CSRF token, never the typed number, the ticks or the count; what the server stores is
exactly what was sent, and what the thank-you page shows.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import pytest
from support.browser import record_requests, stored_reports

from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import load_definition

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
HABITS = load_definition(ROOT / "examples" / "habits.json")
TYPED = ("drinks", "hours", "used", "shoplifting")


@pytest.fixture
def open_habits(app):
    db = connect(app.config["DATABASE"])
    try:
        return insert_survey(db, HABITS, status="open")
    finally:
        db.conn.close()


def posted(requests) -> list[dict]:
    return [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"]


def arm_of(page) -> int:
    return int(page.evaluate("() => localStorage.getItem('deniable:arm:habits:shoplifting')"))


def fill(page, *, drinks="13", hours="2.5", ticks=("Cannabis", "Ecstasy"), count="2"):
    page.fill("#drinks-value", drinks)
    page.fill("#hours-value", hours)
    for label in ticks:
        page.get_by_label(label, exact=True).check()
    page.check(f"#shoplifting-count-{count}")


def open_page(page, live_server):
    page.goto(f"{live_server}/s/habits")
    page.wait_for_selector("#submit-answers:not([disabled])")


def test_only_reports_are_sent_stored_and_shown(page, live_server, open_habits, db_path):
    requests = record_requests(page)
    open_page(page, live_server)
    arm = arm_of(page)
    # the arm decides what the respondent sees: J items, or J + 1 with the sensitive one
    assert page.locator("#q-shoplifting li[data-sensitive]").is_visible() == (arm == 1)
    assert page.locator("#shoplifting-count-4").is_visible() == (arm == 1)
    fill(page)
    with page.expect_navigation(url="**/s/habits/thanks"):
        page.click("#submit-answers")
    body = posted(requests)[0]
    assert set(body) == {"csrf_token", *TYPED}  # year not answered: its radios had no value
    sent = {qid: body[qid][0] for qid in TYPED}
    # the formats of the hidden fields, and nothing of the true answers beyond them
    assert sent["drinks"] in ("0", "1")  # grid with G = 1: the grid index
    assert -555 <= int(sent["hours"]) <= 595
    assert len(sent["used"]) == 4 and set(sent["used"]) <= {"0", "1"}
    assert sent["shoplifting"].startswith(f"{arm}:")
    assert all("-value" not in (request.post_data or "") for request in requests)  # no visible input's id
    # the server stored exactly the reports sent
    expected = {q.id: q.qtype.parse_form(q, sent[q.id]) for q in HABITS.questions if q.id in sent}
    assert stored_reports(db_path) == [expected]
    # the device keeps the randomized reports, the arm and that it answered: never the answers
    storage = page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
    assert storage == {**{f"deniable:report:habits:{qid}": sent[qid] for qid in TYPED},
                       "deniable:arm:habits:shoplifting": str(arm), "deniable:sent:habits": "1"}
    # the thank-you page shows what was sent, in the question's words
    page.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
    shown = dict(zip(page.locator("tr[data-qid]:not([hidden]) th").all_inner_texts(),
                     page.locator("tr[data-qid]:not([hidden]) td.sent-label").all_inner_texts()))
    by_text = {q.text: q for q in HABITS.questions}
    drinks = by_text["How many alcoholic drinks did you have in the last 7 days?"]
    assert shown[drinks.text] == ("0" if sent["drinks"] == "0" else "40")
    hours = by_text["How many hours of unreported paid work did you do last week?"]
    assert shown[hours.text] == hours.qtype.text_of(hours, int(sent["hours"]) - hours.mechanism.low)
    used = by_text["Which of these have you used in the last 12 months?"]
    ticked = [label for label, bit in zip(used.options, sent["used"]) if bit == "1"]
    assert shown[used.text] == (", ".join(ticked) if ticked else "none ticked")
    count = int(sent["shoplifting"].split(":")[1])
    assert shown["How many of the following apply to you?"] == f"{count} (of the {3 + arm} items shown)"


def test_a_retry_resends_the_memoized_reports_and_arm(page, live_server, open_habits, db_path):
    requests = record_requests(page)
    open_page(page, live_server)
    arm = arm_of(page)
    page.evaluate("() => { document.querySelector('input[name=csrf_token]').value = 'stale'; }")
    fill(page)
    with page.expect_navigation():
        page.click("#submit-answers")
    assert stored_reports(db_path) == []
    page.wait_for_selector("#submit-answers:not([disabled])")
    assert arm_of(page) == arm  # the same arm after the reload
    fill(page, drinks="0", hours="0", ticks=("Cocaine",), count="0")  # other answers: the memo wins
    with page.expect_navigation(url="**/s/habits/thanks"):
        page.click("#submit-answers")
    refused, accepted = posted(requests)
    assert {qid: refused[qid] for qid in TYPED} == {qid: accepted[qid] for qid in TYPED}
    assert len(stored_reports(db_path)) == 1


def test_bad_numbers_are_refused_on_the_page(page, live_server, open_habits, db_path):
    requests = record_requests(page)
    open_page(page, live_server)
    fill(page, hours="2.25")  # not on the half-hour steps
    page.click("#submit-answers")
    message = page.locator("#hours-error")
    message.wait_for(state="visible")
    assert "a multiple of 0.5 from 0 to 20" in message.inner_text()  # the rule: range and step
    assert posted(requests) == [] and stored_reports(db_path) == []
    assert page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('deniable:report'))") == []


def test_a_different_person_gets_a_new_arm_draw(page, live_server, open_habits):
    open_page(page, live_server)
    fill(page)
    with page.expect_navigation(url="**/s/habits/thanks"):
        page.click("#submit-answers")
    page.goto(f"{live_server}/s/habits")
    page.wait_for_selector("#already-sent:not([hidden])")
    # the fair coin: over a few new persons both arms show up (each draw is independent)
    arms = set()
    for _ in range(40):
        page.evaluate("() => localStorage.setItem('deniable:sent:habits', '1')")
        page.goto(f"{live_server}/s/habits")
        page.wait_for_selector("#already-sent:not([hidden])")
        page.click("#different-person")
        assert page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('deniable:report'))") == []
        arms.add(arm_of(page))
        if arms == {0, 1}:
            break
    assert arms == {0, 1}  # fails only with probability 2^-39 for a fair coin
