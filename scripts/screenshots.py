"""Screenshots of the builder, results, subgroups and cross-tab pages (and the survey page) at 1280 and
390 px, for anyone to look at; they are not committed.

    .venv/bin/python scripts/screenshots.py [-o screenshots/]

Fills a temporary database with the pages' test data (tests/support/pages.py), serves the real app
on a loopback port and drives Debian's chromium through Playwright.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from werkzeug.serving import make_server  # noqa: E402

from deniable.server.web.app import create_app  # noqa: E402
from support.dashboard import EMAIL, PASSWORD  # noqa: E402
from support.pages import populate  # noqa: E402

SHOTS = [
    ("builder", "/dashboard/draft-survey/edit"),
    ("results", "/dashboard/campus-health/results"),
    ("subgroups", "/dashboard/campus-health/subgroups?question=cheat&by=year"),
    ("crosstab", "/dashboard/campus-health/crosstab?row=drugs&col=cheat"),
    ("open-survey", "/dashboard/campus-health/edit"),
    ("closed-survey-log", "/dashboard/old-survey/edit"),
    ("confirm-open", "/dashboard/draft-survey/confirm?to=open"),
    ("surveys", "/dashboard/"),
]
RESPONDENT = [("survey-page", "/s/campus-health"), ("survey-page-demo", "/s/demo")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", default="screenshots", help="folder for the PNG files")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        db_path = str(Path(folder) / "shots.db")
        populate(db_path)
        app = create_app({"DATABASE": db_path, "SECRET_KEY": "screenshots", "RATELIMIT_ENABLED": False})
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_port}"
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--headless"])
            for width, height in ((1280, 900), (390, 844)):
                context = browser.new_context(viewport={"width": width, "height": height})
                page = context.new_page()
                for name, path in RESPONDENT:
                    page.goto(base + path)
                    page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
                page.goto(f"{base}/auth/login")
                page.fill("#email", EMAIL)
                page.fill("#password", PASSWORD)
                with page.expect_navigation():
                    page.click("#submit")
                for name, path in SHOTS:
                    page.goto(base + path)
                    page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
                # a failed save: the error summary in the first screen
                page.goto(f"{base}/dashboard/new")
                page.fill("#title", "A survey")
                page.fill("#questions-0-text", "Have you ever cheated?")
                page.fill("#questions-0-options", "Yes\nNo")
                page.fill("#questions-0-epsilon", "one")
                with page.expect_navigation():
                    page.click("#save")
                page.screenshot(path=str(out / f"builder-failed-save-{width}.png"))
                context.close()
            browser.close()
        server.shutdown()
    print(f"wrote {len(list(out.glob('*.png')))} screenshots to {out}/")


if __name__ == "__main__":
    main()
