"""Helpers for the chromium tests: what a page sends, what the server stored, what went wrong."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

from support.dashboard import EMAIL, PASSWORD

AXE = Path(__file__).resolve().parent / "axe" / "axe.min.js"  # vendored axe-core (tests/e2e/test_accessibility.py)
SERIOUS = """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
  .filter(v => v.impact === "serious" || v.impact === "critical").map(v => `${v.id}: ${v.help}`)"""

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline")));
"""


def serious_axe_violations(page) -> list[str]:
    """axe-core's serious and critical violations on the page (``id: help``), axe injected through the
    DevTools protocol, so the page's CSP stays as it is."""
    page.evaluate(AXE.read_text(encoding="utf-8"))
    return page.evaluate(SERIOUS)


def stored_reports(db_path) -> list[dict]:
    """The reports column of every stored response."""
    conn = sqlite3.connect(db_path)
    try:
        return [json.loads(r) for (r,) in conn.execute("SELECT reports FROM responses ORDER BY id")]
    finally:
        conn.close()


def record_requests(page) -> list:
    """Every request the page makes from now on (the list fills as it goes)."""
    requests = []
    page.on("request", lambda request: requests.append(request))
    return requests


def watched_page(browser):
    """A fresh context that records CSP violations, console errors and failed loads:
    ``(context, page, problems)``."""
    context = browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("response", lambda r: problems.append(f"{r.status} for {r.url}")
            if r.status >= 400 and r.request.resource_type != "document" else None)
    return context, page, problems


@contextlib.contextmanager
def researcher_context(browser, live_server):
    """A 1280 × 900 context whose first page is logged in as the test researcher: ``(context, page)``.
    Fails afterwards on a page error in any page of the context (a respondent's opened in it too)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors = []
    context.on("page", lambda opened: opened.on("pageerror", lambda e: errors.append(str(e))))
    try:
        page = context.new_page()
        log_in(page, live_server)
        yield context, page
    finally:
        context.close()
    assert errors == []


def open_for_the_embed(app, live_server, page, definition: dict) -> dict:
    """Make ``definition`` an open survey and return its design document, with ``page`` left on a page
    of the app's origin (the embed's script), where a test imports the embed's module as a host would."""
    from deniable.client.embed import current
    from support.dashboard import make_survey

    make_survey(app, definition, status="open")
    design = json.loads(page.request.get(f"{live_server}/api/v1/surveys/{definition['slug']}").text())
    page.goto(f"{live_server}/embed/{current().version}/deniable-embed.js")
    return design


def log_in(page, base: str) -> None:
    """Log the test researcher in on ``page`` (the server at ``base``)."""
    page.goto(f"{base}/auth/login")
    page.fill("#email", EMAIL)
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("#submit")


@contextlib.contextmanager
def builder_page(page, live_server):
    """``page`` logged in as the test researcher at 1280 × 900; fails afterwards on any page error or
    console error (but the 422 chromium logs for a refused save: that is the builder working)."""
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "status of 422" not in m.text
            else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, live_server)
    yield page
    assert errors == []
