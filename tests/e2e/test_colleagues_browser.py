"""Inviting a colleague, in chromium: the admin makes a link on the Colleagues page, withdraws another,
and the colleague, on a phone, sets a password at the link and lands logged in on the dashboard.
Every state is checked with axe-core (no serious or critical violation) and at 390 px for sideways
scrolling."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from e2e.test_accessibility import axe_violations
from support.browser import log_in
from support.dashboard import ensure_researcher
from support.pages import no_sideways_scroll

pytestmark = pytest.mark.browser

NEW = "grace@example.org"
GOOD = "plum kayak thunder orbit"


def check(page, label: str, problems: list) -> None:
    """axe on the page as it is, and (at 390 px) no sideways scroll."""
    problems += [f"{label}: {v}" for v in axe_violations(page)]
    if page.viewport_size["width"] <= 390 and no_sideways_scroll(page) > 0:
        problems.append(f"{label}: scrolls sideways by {no_sideways_scroll(page)} px at 390 px")


@pytest.mark.parametrize("width", [1280, 390])
def test_an_admin_invites_a_colleague_who_joins_from_a_phone(browser, live_server, app, width):
    ensure_researcher(app, admin=True)
    problems: list[str] = []
    admin = browser.new_context(viewport={"width": width, "height": 900})
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = admin.new_page()
        log_in(page, live_server)
        page.click("nav.dash-nav >> text=Colleagues")
        page.wait_for_url("**/dashboard/colleagues/")
        check(page, "colleagues", problems)

        page.fill("#email", "not an email")
        with page.expect_navigation():
            page.click("#send")
        assert "not an email address" in page.inner_text("#email-errors")
        check(page, "invitation refused", problems)

        for email in ("leaving@example.org", NEW):
            page.fill("#email", email)
            with page.expect_navigation():
                page.click("#send")
        link = page.input_value("#invite-url")
        assert urlsplit(link).path.startswith("/auth/join/")
        assert NEW in page.inner_text("#invite-link-title")
        check(page, "the link, shown once", problems)
        with page.expect_navigation():
            page.click("button[aria-label='Withdraw the invitation of leaving@example.org']")
        assert "withdrawn" in page.inner_text(".flashes")
        assert page.locator("tr[data-email='leaving@example.org']").count() == 0
        assert page.locator(f"table.invites tr[data-email='{NEW}']").count() == 1
        check(page, "withdrawn (flash)", problems)

        colleague = phone.new_page()
        response = colleague.goto(link)
        assert response.status == 200 and response.headers["referrer-policy"] == "no-referrer"
        assert colleague.inner_text(".invited-email") == NEW
        check(colleague, "join", problems)
        colleague.fill("#password", "password1234")
        colleague.fill("#confirm", "password1234")
        with colleague.expect_navigation():
            colleague.click("#create")
        assert "too easy to guess" in colleague.inner_text("#password-errors")
        check(colleague, "join: password refused", problems)
        colleague.fill("#password", GOOD)
        colleague.fill("#confirm", GOOD)
        with colleague.expect_navigation():
            colleague.click("#create")
        assert urlsplit(colleague.url).path == "/dashboard/"
        assert "you are logged in" in colleague.inner_text(".flashes")
        assert colleague.inner_text(".who") == NEW
        check(colleague, "joined: the dashboard", problems)

        response = colleague.goto(link)  # used up
        assert response.status == 404
        assert "does not work" in colleague.inner_text("h1")
        check(colleague, "a used link", problems)

        page.goto(f"{live_server}/dashboard/colleagues/")
        assert page.locator("table.invites").count() == 0
        assert page.locator(f"table.researchers tr[data-email='{NEW}']").count() == 1
        check(page, "colleagues, after", problems)
    finally:
        phone.close()
        admin.close()
    assert problems == []
