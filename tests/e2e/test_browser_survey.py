"""The demo survey answered in chromium against a live server (docs/design.md, invariants 1 and 3).

Every request the page makes is recorded: the POST body may hold only the hidden randomized
fields, the direct question's field and the CSRF token.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest
from support.browser import record_requests, stored_reports

pytestmark = pytest.mark.browser

PROTECTED = ("drug_use", "cheating")


def answer_and_submit(page, live_server, *, drug="Yes", cheating="Once", age="30 to 44"):
    page.goto(f"{live_server}/s/demo")
    page.wait_for_selector("#submit-answers:not([disabled])")
    page.get_by_label(drug, exact=True).check()
    page.get_by_label(cheating, exact=True).check()
    if age:
        page.get_by_label(age, exact=True).check()
    with page.expect_navigation(url="**/s/demo/thanks"):
        page.click("#submit-answers")


def posted(requests) -> list[dict]:
    return [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"]


def test_submit_sends_only_the_randomized_reports(page, live_server, open_demo, db_path):
    requests = record_requests(page)
    answer_and_submit(page, live_server)
    assert all(r.url.startswith(live_server) for r in requests)  # nothing leaves for elsewhere
    bodies = posted(requests)
    assert len(bodies) == 1
    body = bodies[0]
    assert set(body) == {"csrf_token", "drug_use", "cheating", "age_group"}
    assert all(len(values) == 1 for values in body.values())
    assert body["age_group"] == ["1"]  # direct: sent as answered
    sent = {qid: int(body[qid][0]) for qid in PROTECTED}
    assert sent["drug_use"] in (0, 1) and sent["cheating"] in range(4)
    # The server stored exactly what the browser sent.
    assert stored_reports(db_path) == [{**sent, "age_group": 1}]
    # The device memoized the reports (never the choices) and that it has answered; nothing else.
    storage = page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
    assert storage == {**{f"deniable:report:demo:{qid}": str(sent[qid]) for qid in PROTECTED},
                       "deniable:sent:demo": "1"}
    # This tab alone keeps what was sent (for the thank-you page): exactly the request body.
    last = json.loads(page.evaluate("() => sessionStorage.getItem('deniable:last:demo')"))
    assert last == {qid: int(values[0]) for qid, values in body.items() if qid != "csrf_token"}
    # No cookie holds the answers: the session is the CSRF token only.
    assert all("reports" not in c["value"] for c in page.context.cookies())
    # The thank-you page shows exactly what was sent, by label.
    page.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
    shown = page.locator("tr[data-qid]:not([hidden]) td.sent-label").all_inner_texts()
    assert shown == [["No", "Yes"][sent["drug_use"]], ["Never", "Once", "A few times", "Often"][sent["cheating"]],
                     "30 to 44"]
    assert "may differ from what you chose" in page.content()


def send_refused(page, live_server):
    """Answer Yes / Often and send with a stale CSRF token: the server refuses, nothing is stored."""
    page.goto(f"{live_server}/s/demo")
    page.wait_for_selector("#submit-answers:not([disabled])")
    page.evaluate("() => { document.querySelector('input[name=csrf_token]').value = 'stale'; }")
    page.get_by_label("Yes", exact=True).check()
    page.get_by_label("Often", exact=True).check()
    with page.expect_navigation():
        page.click("#submit-answers")
    assert "security token was not accepted" in page.locator("#form-error").inner_text()


def test_a_reload_before_sending_resends_the_memoized_report(page, live_server, open_demo, db_path):
    """A refused send, a reload, other choices: the reports drawn the first time are what is sent."""
    requests = record_requests(page)
    send_refused(page, live_server)
    answer_and_submit(page, live_server, drug="No", cheating="Never", age=None)  # the page opened again
    refused, accepted = posted(requests)
    assert {qid: refused[qid] for qid in PROTECTED} == {qid: accepted[qid] for qid in PROTECTED}
    assert len(stored_reports(db_path)) == 1


def test_a_shared_device_asks_before_the_next_person_answers(page, live_server, open_demo, db_path):
    """Person A answers; person B opens the survey on the same browser: it says answers were sent
    from this device, and only "I am a different person" forgets A's reports and lets B answer,
    with fresh draws.  B's thank-you page shows B's reports only."""
    requests = record_requests(page)
    answer_and_submit(page, live_server)
    first = posted(requests)[0]
    page.goto(f"{live_server}/s/demo")
    page.wait_for_selector("#already-sent:not([hidden])")
    assert page.locator("#survey-form").is_hidden()
    memo = page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('deniable:report:demo:'))")
    assert len(memo) == 2  # A's reports are still there until B says who they are
    page.click("#different-person")
    assert page.locator("#survey-form").is_visible() and page.locator("#already-sent").is_hidden()
    storage = page.evaluate("() => Object.keys(localStorage).filter(k => k.includes(':demo'))")
    assert storage == [] and page.evaluate("() => sessionStorage.getItem('deniable:last:demo')") is None
    page.wait_for_selector("#submit-answers:not([disabled])")
    page.get_by_label("No", exact=True).check()
    page.get_by_label("Never", exact=True).check()
    with page.expect_navigation(url="**/s/demo/thanks"):
        page.click("#submit-answers")
    second = posted(requests)[1]
    page.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
    shown = page.locator("tr[data-qid]:not([hidden]) td.sent-label").all_inner_texts()
    assert shown == [["No", "Yes"][int(second["drug_use"][0])],
                     ["Never", "Once", "A few times", "Often"][int(second["cheating"][0])]]  # no age: B skipped it
    assert len(stored_reports(db_path)) == 2 and "age_group" in first and "age_group" not in second


def test_retry_after_a_refused_submission_resends_the_same_report(page, live_server, open_demo, db_path):
    requests = record_requests(page)
    send_refused(page, live_server)
    assert stored_reports(db_path) == []
    page.wait_for_selector("#submit-answers:not([disabled])")
    page.get_by_label("Yes", exact=True).check()
    page.get_by_label("Often", exact=True).check()
    with page.expect_navigation(url="**/s/demo/thanks"):
        page.click("#submit-answers")
    refused, accepted = posted(requests)
    assert {qid: refused[qid] for qid in PROTECTED} == {qid: accepted[qid] for qid in PROTECTED}
    assert stored_reports(db_path) == [{qid: int(accepted[qid][0]) for qid in PROTECTED}]


def test_required_questions_must_be_answered(page, live_server, open_demo, db_path):
    requests = record_requests(page)
    page.goto(f"{live_server}/s/demo")
    page.wait_for_selector("#submit-answers:not([disabled])")
    page.get_by_label("Yes", exact=True).check()
    page.click("#submit-answers")
    message = page.locator("#cheating-error")
    message.wait_for(state="visible")
    assert "required" in message.inner_text()
    assert page.locator("#drug_use-error").is_hidden()
    assert posted(requests) == [] and stored_reports(db_path) == []
    assert page.evaluate("() => localStorage.length") == 0  # nothing randomized before a valid submit


def test_protected_radios_behave_as_one_group_from_the_keyboard(page, live_server, open_demo):
    page.goto(f"{live_server}/s/demo")
    page.wait_for_selector("#submit-answers:not([disabled])")
    page.focus("#cheating-option-0")
    page.keyboard.press("Space")
    assert page.is_checked("#cheating-option-0")
    page.keyboard.press("ArrowDown")
    assert page.is_checked("#cheating-option-1") and not page.is_checked("#cheating-option-0")
    page.get_by_label("A few times", exact=True).check()
    checked = page.evaluate("() => [...document.querySelectorAll('#q-cheating input[type=radio]')]"
                            ".map((r) => r.checked)")
    assert checked == [False, False, True, False]


def test_without_javascript_the_form_cannot_submit(browser, live_server, open_demo, db_path):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        requests = record_requests(page)
        page.goto(f"{live_server}/s/demo")
        assert page.locator("#submit-answers").is_disabled()
        assert "This survey needs JavaScript" in page.locator("noscript").inner_text() or \
            page.get_by_text("This survey needs JavaScript").is_visible()
        page.get_by_label("Yes", exact=True).check()
        page.get_by_label("30 to 44", exact=True).focus()
        page.keyboard.press("Enter")  # implicit submission: refused while the default button is disabled
        page.wait_for_timeout(300)
        assert posted(requests) == []
        assert stored_reports(db_path) == []
    finally:
        context.close()


def test_phone_viewport_has_no_horizontal_scroll(browser, live_server, open_demo):
    context = browser.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.goto(f"{live_server}/s/demo")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    finally:
        context.close()
