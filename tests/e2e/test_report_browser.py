"""The methods report in chromium: it opens under its own Content-Security-Policy with nothing blocked and
nothing requested but itself, prints to at most one page per question plus two (the front matter and the
references), has no horizontal scroll on a phone or a desktop, and axe finds no serious or critical
violation.  The file ``deniable report`` writes opens from disk the same way."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.browser import RECORD_VIOLATIONS, log_in, serious_axe_violations
from support.dashboard import EMAIL, ensure_researcher, own

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
DENIABLE = Path(sys.executable).parent / "deniable"
SURVEYS = {"student-life": ("survey.json", "truth.json"), "habits": ("habits.json", "habits-truth.json"),
           "everything": ("everything.json", "everything-truth.json")}  # the example survey of every type


def run(*args) -> str:
    result = subprocess.run([str(DENIABLE), *map(str, args)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def fill(app, slug: str) -> int:
    """The example survey ``slug``, open, with simulated responses, owned by the test researcher; its questions."""
    survey, truth = (ROOT / "examples" / name for name in SURVEYS[slug])
    db = app.config["DATABASE"]
    run("import", survey, "--db", db, "--open")
    run("simulate", survey, "--n", 300, "--truth", truth, "--seed", 9, "--db", db)
    ensure_researcher(app)
    own(app, slug, EMAIL)
    return len(re.findall(r'"id"\s*:', survey.read_text(encoding="utf-8")))


def pdf_pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def horizontal_overflow(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("slug", ["student-life", "habits", "everything"])
def test_the_report_opens_prints_and_fits(browser, live_server, app, slug):
    questions = fill(app, slug)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORD_VIOLATIONS)
    try:
        log_in(context.new_page(), live_server)
        page = context.new_page()  # the report alone in its page: what the login page loads is not counted
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        response = page.goto(f"{live_server}/dashboard/{slug}/report")
        assert response.status == 200
        assert page.locator("h1").inner_text()
        assert page.locator("section.question").count() == questions
        assert requests == [f"{live_server}/dashboard/{slug}/report"]  # nothing else is loaded
        assert page.evaluate("() => window.__cspViolations") == []
        # the stylesheet applied (a blocked one would leave the browser's default margins)
        assert page.evaluate("() => getComputedStyle(document.querySelector('main')).maxWidth") != "none"
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            assert horizontal_overflow(page) <= 0, f"horizontal scroll at {width} px"
            assert serious_axe_violations(page) == [], f"at {width} px"
        pages = pdf_pages(page.pdf(format="A4"))
        assert 1 <= pages <= questions + 2, f"{pages} printed pages for {questions} questions"
    finally:
        context.close()


def test_the_written_file_opens_from_disk(browser, app, tmp_path):
    questions = fill(app, "student-life")
    path = Path(run("report", "student-life", "--db", app.config["DATABASE"], "-o", tmp_path / "r.html").strip())
    context = browser.new_context(viewport={"width": 390, "height": 800})
    context.add_init_script(RECORD_VIOLATIONS)
    try:
        page = context.new_page()
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(path.as_uri())
        assert requests == [path.as_uri()]
        assert page.evaluate("() => window.__cspViolations") == []
        assert page.locator("section.question").count() == questions
        assert horizontal_overflow(page) <= 0
        assert pdf_pages(page.pdf(format="A4")) <= questions + 2
    finally:
        context.close()
