"""``deniable audit``: sample the shipped randomizers and lower-bound the ε they really give.

The browser side is the real thing: the app is served on a loopback port and headless
chromium imports ``/static/rr.js`` from it (or, with ``--script``, another file served at that
same address, which is how a broken randomizer is shown to fail).  The Python side is
:func:`deniable.client.randomize` drawing from the OS CSPRNG.  The settings audited are a grid of
(k, ε) and, with ``--db``, the mechanisms of the protected questions stored in a database.  The
statistics are in :mod:`deniable.estimators.audit`.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sqlite3
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from typing import TYPE_CHECKING

import click

from .common import database, db_option

if TYPE_CHECKING:  # numpy and the randomizer are imported by the command when it runs
    from deniable.client.mechanism import Mechanism

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]
BATCH = 200_000  # draws per page.evaluate call

SAMPLE_JS = """
async ([value, k, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(k).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomize(value, k, threshold)] += 1;
  return counts;
}
"""


def install_hint() -> str:
    """How to install Playwright into the Python this deniable runs on (a checkout's .venv or any other)."""
    return (f"deniable audit needs Playwright, which is not installed for {sys.executable}: install it with "
            f"`{shlex.quote(sys.executable)} -m pip install 'playwright>=1.45,<2'` (the project's "
            "'audit' extra; scripts/test.sh installs it too)")


@contextmanager
def browser_page(script: Path | None, chromium: str):
    """A chromium page on the origin of a running deniable app (temporary database)."""
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise click.ClickException(install_hint()) from None
    if not shutil.which(chromium):
        raise click.ClickException(f"{chromium}: chromium not found (on Debian: apt-get install chromium)")
    from werkzeug.serving import WSGIRequestHandler, make_server

    from deniable.server.web.app import create_app

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args, **kwargs):
            pass

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"DATABASE": str(Path(tmp) / "audit.db"), "SECRET_KEY": "audit"})
        server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Quiet)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page()
                    if script is not None:
                        page.route("**/static/rr.js", lambda route: route.fulfill(
                            path=str(script), content_type="text/javascript"))
                    page.goto(f"http://127.0.0.1:{server.server_port}/auth/login")
                    yield page
                except PlaywrightError as exc:
                    raise click.ClickException(f"chromium: {str(exc).splitlines()[0]}") from None
                finally:
                    browser.close()
        finally:
            server.shutdown()
            thread.join()
            server.server_close()


def browser_counts(page, k: int, threshold: int, samples: int, advance):
    import numpy as np

    counts = np.zeros((k, k), dtype=np.int64)
    for value in range(k):
        done = 0
        while done < samples:
            batch = min(BATCH, samples - done)
            counts[value] += page.evaluate(SAMPLE_JS, [value, k, threshold, batch])
            done += batch
            advance(batch)
    return counts


def stored_mechanisms(db_path: str) -> list[tuple[Mechanism, list[str]]]:
    """The distinct mechanisms of the protected questions stored in a database (opened read-only).

    Read through :func:`deniable.server.store.surveys.list_surveys`, the code the survey page renders from, so
    each is the (k, threshold) the page hands to ``rr.js``; each comes with the ``slug/qid`` of
    the questions asked under it.
    """
    from deniable.client.mechanism import MechanismError
    from deniable.server.store.surveys import list_surveys

    found: dict[Mechanism, list[str]] = {}
    with database(db_path, readonly=True) as db:
        try:
            for stored in list_surveys(db):
                for q in stored.survey.questions:
                    if q.protected and q.is_choice:  # the other types' samplers: tests/e2e/test_rr_js.py
                        found.setdefault(q.mechanism, []).append(f"{stored.survey.slug}/{q.id}")
        except (sqlite3.Error, MechanismError) as exc:
            raise click.ClickException(f"{db_path}: cannot read the surveys: {exc}") from None
    if not found:
        raise click.ClickException(f"{db_path}: no protected questions to audit")
    return sorted(found.items(), key=lambda item: (item[0].k, item[0].declared_epsilon))


def python_counts(k: int, epsilon: float, samples: int, advance):
    import numpy as np

    from deniable.client import randomize

    counts = np.zeros((k, k), dtype=np.int64)
    for value in range(k):
        reports = randomize(np.full(samples, value), k, epsilon)
        counts[value] = np.bincount(reports, minlength=k)
        advance(samples)
    return counts


@click.command("audit")
@click.option("--k", "ks", type=click.IntRange(2, 16), multiple=True, help="Options (repeatable; default 2 and 4).")
@click.option("--epsilon", "epsilons", type=float, multiple=True,
              help="Declared ε (repeatable; default 0.5, 1 and 2).")
@click.option("--samples", type=click.IntRange(1000, 10**9), default=1_000_000, show_default=True,
              help="Runs of each randomizer per true value.")
@click.option("--confidence", type=click.FloatRange(0.5, 1, max_open=True), default=0.95, show_default=True,
              help="Confidence of the lower bounds (all of them together).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--script", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Audit this file served as /static/rr.js instead of the shipped one.")
@db_option(None, "Audit the mechanism of every protected question stored in this database "
                 "(read-only), instead of the default grid.")
@click.option("--chromium", default=CHROMIUM, show_default=True, help="The chromium executable.")
def audit(ks, epsilons, samples, confidence, fmt, script, db_path, chromium) -> None:
    """Check that the randomizers give no more than the declared ε.

    Runs the browser randomizer (/static/rr.js in headless chromium) and the Python one
    SAMPLES times for every true value and reports a lower bound on the ε they really give
    (Clopper–Pearson, Bonferroni over all bounds of all rows), beside the declared and
    realized ε.  Exit status 1 if a lower bound exceeds the declared ε.  With --db the
    settings are those of the protected questions stored in FILE, plus any --k/--epsilon grid
    asked for.

    \b
    Example:
        deniable audit --k 2 --k 5 --epsilon 1 --samples 1000000
        deniable audit --db deniable.db
    """
    from deniable.client.mechanism import MechanismError, mechanism
    from deniable.estimators.audit import epsilon_lower_bound  # scipy: only here

    configs: list[tuple[Mechanism, list[str]]] = stored_mechanisms(db_path) if db_path else []
    if not db_path or ks or epsilons:
        for k in ks or (2, 4):
            for eps in epsilons or (0.5, 1.0, 2.0):
                try:
                    configs.append((mechanism(k, eps), []))
                except MechanismError as exc:
                    raise click.BadParameter(str(exc), param_hint="--epsilon") from None
    # Bonferroni across the table too: every bound of every row holds together with `confidence`,
    # so a correct pair of randomizers fails the command with probability at most 1 − confidence.
    each = 1 - (1 - confidence) / (2 * len(configs))
    rows = []
    total = 2 * samples * sum(mech.k for mech, _ in configs)
    with browser_page(script, chromium) as page, click.progressbar(
            length=total, label="sampling the randomizers", file=sys.stderr) as bar:
        for mech, questions in configs:
            k, eps = mech.k, mech.declared_epsilon
            found = {
                "browser": epsilon_lower_bound(browser_counts(page, k, mech.threshold, samples, bar.update), each),
                "python": epsilon_lower_bound(python_counts(k, eps, samples, bar.update), each),
            }
            rows.append({
                "k": k, "declared_epsilon": eps, "threshold": mech.threshold, "realized_epsilon": mech.epsilon,
                **{f"{side}_lower_bound": b.lower_bound for side, b in found.items()},
                **{f"{side}_point": b.point for side, b in found.items()},
                "ok": all(b.lower_bound <= eps for b in found.values()),
                "questions": questions,
            })
    if fmt == "json":
        click.echo(json.dumps({"samples": samples, "confidence": confidence, "confidence_each": each,
                               "script": str(script) if script else "/static/rr.js", "results": rows}, indent=2))
    else:
        click.echo(f"{samples:,} runs per true value; all {2 * len(rows)} lower bounds (ε ≥) hold together "
                   f"with confidence {confidence}")
        click.echo(f"{'k':>3} {'declared ε':>11} {'realized ε':>11} {'browser ≥':>10} {'python ≥':>9} "
                   f"{'browser obs.':>13} {'python obs.':>12}  verdict"
                   f"{'  questions' if any(r['questions'] for r in rows) else ''}")
        for r in rows:
            click.echo(f"{r['k']:>3} {r['declared_epsilon']:>11.4f} {r['realized_epsilon']:>11.4f} "
                       f"{r['browser_lower_bound']:>10.4f} {r['python_lower_bound']:>9.4f} "
                       f"{r['browser_point']:>13.4f} {r['python_point']:>12.4f}  "
                       f"{'ok' if r['ok'] else 'VIOLATION: more than the declared ε'}"
                       f"{'  ' + ', '.join(r['questions']) if r['questions'] else ''}")
    if not all(r["ok"] for r in rows):
        sys.exit(1)
