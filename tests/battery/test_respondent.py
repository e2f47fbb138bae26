"""Battery: the respondent's survey page draws every registered question type.

Every card says "Question N of M" and has its type's browser module; a protected card's visible
inputs carry no name (only the hidden report is sent); in chromium every card counts in the
progress line once answered, and the answers of every type are sent and stored.
"""

from __future__ import annotations

import re

import pytest

from support.battery import GROUP, SLUG, battery_survey, question_ids


def _fieldsets(html: str) -> dict[str, str]:
    """Each question's fieldset (its HTML), by question id, in page order."""
    return {m.group(1): m.group(0) for m in re.finditer(r'<fieldset[^>]*\bid="q-([^"]+)".*?</fieldset>', html, re.S)}


def test_every_card_is_numbered_and_sends_only_its_report(client, battery):
    html = client.get(f"/s/{SLUG}").get_data(as_text=True)
    cards = _fieldsets(html)
    ids = [GROUP, *question_ids()]
    by_id = {q.id: q for q in battery.survey.questions}
    assert "<noscript>" in html  # without JavaScript the page says why nothing can be sent
    assert list(cards) == ids
    for n, qid in enumerate(ids, start=1):
        card = cards[qid]
        assert f'<span class="question-number">{n}.</span>' in card, qid
        q = by_id[qid]
        # one name per card: a protected card's (or a typed card's) visible inputs carry none, only its
        # hidden report does; a direct choice's named radio group is its answer itself
        assert set(re.findall(r'\bname="([^"]+)"', card)) == {qid}, qid
        if q.protected or q.qtype.page_data(q) is not None:
            hidden = [tag for tag in re.findall(r"<input[^>]*>", card) if f'name="{qid}"' in tag]
            assert hidden and all('type="hidden"' in tag for tag in hidden), qid
        data = q.qtype.page_data(q)
        if data is not None:
            assert f'data-type="{data["attrs"]["data-type"]}"' in card, qid
            assert f'src="/static/{q.qtype.script}"' in html, qid


def test_every_type_drawn_by_its_own_card_names_its_template_and_its_browser_module(battery):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for q in battery.survey.questions:
        if q.qtype.page_data(q) is None:
            continue  # radio buttons (survey.html, survey.js)
        assert (root / "templates" / q.qtype.card).is_file(), q.id
        assert (root / "client" / "static" / q.qtype.script).is_file(), q.id
        assert f'registerType("{q.qtype.page_data(q)["attrs"]["data-type"]}"' in \
            (root / "client" / "static" / q.qtype.script).read_text(encoding="utf-8"), q.id


def test_the_design_api_and_the_thank_you_page_cover_every_question(client, battery):
    design = client.get(f"/api/v1/surveys/{SLUG}").get_json()
    assert [q["id"] for q in design["questions"]] == [GROUP, *question_ids()]
    assert all("not_available" not in q for q in design["questions"])
    html = client.get(f"/s/{SLUG}/thanks").get_data(as_text=True)
    for q in battery.survey.questions:
        assert f'data-qid="{q.id}"' in html, q.id
        row = html.split(f'data-qid="{q.id}"')[1].split("</tr>")[0]
        plain = None if q.protected else q.qtype.plain_explanation(q, gettext=str)
        if plain is not None:  # how it was sent, in the type's words
            assert plain["sent"] in row, q.id


def _answer(page, q):
    """Answer ``q`` on the page, whatever its type, as a respondent would."""
    card = page.locator(f"#q-{q.id}")
    if card.locator("input[type=number]").count():
        box = card.locator("input[type=number]")
        box.fill(box.get_attribute("min"))
    elif card.locator("input[data-tick]").count():
        card.locator("input[data-tick]").first.check()
    else:  # radio buttons: an option, or a count
        card.locator("input[type=radio]:visible").first.check()


@pytest.mark.browser
def test_every_card_counts_in_the_progress_line_and_is_sent(browser, live_server, db_path, owner_id):
    from support.browser import stored_reports, watched_page

    stored = battery_survey(db_path, n=0, owner_id=owner_id)
    qs = stored.survey.questions
    context, page, problems = watched_page(browser)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server}/s/{SLUG}")
    page.wait_for_selector("#submit-answers:not([disabled])")
    progress = page.locator("#answer-progress-text")
    assert progress.text_content() == f"0 of {len(qs)} answered"
    assert page.locator("#answer-progress").is_visible()  # the battery is longer than a phone's screen
    numbers = page.locator("fieldset.question .question-number").all_text_contents()
    assert numbers == [f"{n}." for n in range(1, len(qs) + 1)]
    for n, q in enumerate(qs, start=1):
        _answer(page, q)
        assert progress.text_content() == f"{n} of {len(qs)} answered", q.id
    # nothing is wider than the phone's screen
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    # a check-all card: "None of these" is an answer too (it clears the ticks and still counts)
    card = page.locator("fieldset.question:has(input[data-none])").first
    card.locator("input[data-none]").check()
    assert card.locator("input[data-tick]:checked").count() == 0
    assert progress.text_content() == f"{len(qs)} of {len(qs)} answered"
    with page.expect_navigation(url=f"**/s/{SLUG}/thanks"):
        page.click("#submit-answers")
    (reports,) = stored_reports(db_path)
    assert set(reports) == {q.id for q in qs}
    page.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
    assert page.locator("#sent-table tr[data-qid]:not([hidden])").count() == len(qs)
    assert problems == []  # no CSP violation, page error or failed load (each card's module included)
    context.close()
