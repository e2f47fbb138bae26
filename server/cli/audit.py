"""``deniable audit``: sample the shipped randomizers and lower-bound the ε they really give.

The browser side is the real thing: the app is served on a loopback port and headless
chromium imports ``/static/rr.js`` from it — the samplers of every question type, which
``survey.js`` and ``types.js`` call — (or, with ``--script``, another file served at that same
address, which is how a broken randomizer is shown to fail).  The Python side is their twins in
:mod:`deniable.client`, drawing from the OS CSPRNG.  The settings audited
(:mod:`deniable.server.survey.audit_settings`) are a grid over ε of every question type and, with
``--db``, the mechanisms of the protected questions (and plain list experiments) stored in a
database.  The statistics are in :mod:`deniable.estimators.audit`.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import click

from deniable.server.survey import audit_settings
from deniable.server.survey.audit_settings import Setting, browser_counts, python_counts

from .common import database, db_option
from .progress import progress


def integrity(data: bytes) -> str:
    """The file's subresource-integrity hash (the one ``deniable embed build`` printed for it)."""
    from deniable.client.embed import integrity as sri

    return sri(data)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]


class KindChoice(click.Choice):
    """``--type``: the kinds of every registered type's samplers, looked up when first needed (the
    type modules import numpy, which the command line loads only when a command runs)."""

    def __init__(self):
        super().__init__(())

    @property
    def choices(self):
        return audit_settings.kinds()

    @choices.setter
    def choices(self, value):
        pass


def install_hint() -> str:
    """How to install Playwright into the Python this deniable runs on (a checkout's .venv or any other)."""
    return (f"deniable audit needs Playwright, which is not installed for {sys.executable}: install it with "
            f"`{shlex.quote(sys.executable)} -m pip install 'playwright>=1.45,<2'` (the project's "
            "'audit' extra; scripts/test.sh installs it too)")


def outside_asyncio(work):
    """``work()``, in a thread of its own when this thread runs an asyncio loop: Playwright's sync API
    refuses to start inside one (a notebook, or a program that already drives a browser with it,
    such as the test session), and the audit's browser needs nothing from this thread."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = work()
        except BaseException as exc:  # re-raised in the caller's thread (ClickException, SystemExit, …)
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="deniable-audit")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def serve(path: Path):
    """A Playwright route handler that answers with the file ``path`` as JavaScript."""
    def handler(route):
        route.fulfill(path=str(path), content_type="text/javascript")
    return handler


@contextmanager
def browser_page(script: Path | None, chromium: str, embed: Path | None = None):
    """A chromium page on the origin of a running deniable app (temporary database): ``script`` served
    as ``/static/rr.js``, or the built embed ``embed`` (an ES module exporting the samplers of both
    ``rr.js`` and ``designs.js``) served as each of them."""
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
                    served = {"rr.js": script} if script is not None else {}
                    if embed is not None:
                        served = {"rr.js": embed, "designs.js": embed}
                    for name, path in served.items():
                        page.route(f"**/static/{name}", serve(path))
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


def embed_module(path: Path) -> Path:
    """The built embed's ES module: ``path`` itself, or the one ``deniable-embed-VERSION.mjs`` in the folder ``path``."""
    from deniable.client.embed import NAME

    if path.is_dir():
        found = sorted(path.glob(f"{NAME}-*.mjs"))
        if len(found) != 1:
            what = "no" if not found else f"{len(found)} ({', '.join(f.name for f in found)}); give the file itself, or"
            raise click.BadParameter(f"{path}: {what} {NAME}-VERSION.mjs (write it with `deniable embed build -o "
                                     f"{path}`)", param_hint="--embed")
        return found[0]
    if not path.name.endswith(".mjs"):
        raise click.BadParameter(f"{path}: not the embed's ES module ({NAME}-VERSION.mjs)", param_hint="--embed")
    return path


def stored_settings(db_path: str, types, not_audited: list | None = None) -> list[Setting]:
    """The mechanisms of the questions stored in a database (opened read-only).

    Read through :func:`deniable.server.store.surveys.list_surveys`, the code the survey page renders from, so
    each is the mechanism the page hands to ``rr.js``; each comes with the ``slug/qid`` of the
    questions asked under it.
    """
    import sqlite3  # here: a command without a database starts without it

    from deniable.client.mechanism import MechanismError
    from deniable.server.store.surveys import list_surveys

    with database(db_path, readonly=True) as db:
        try:
            found = audit_settings.stored_settings(list_surveys(db), types, not_audited)
        except (sqlite3.Error, MechanismError) as exc:
            raise click.ClickException(f"{db_path}: cannot read the surveys: {exc}") from None
    if not found:
        why = "".join(f"; {qid}: {reason}" for qid, reason in (not_audited or [])[:3])
        raise click.ClickException(f"{db_path}: no protected questions to audit{why}")
    return found


def verdict(row: dict) -> str:
    if row["ok"] is None:
        what = audit_settings.samplers()[row["type"]].not_protected or "a mechanism without ε"
        return (f"NOT ε-LDP: {what} (the samples show ε ≥ {row['browser_lower_bound']:.1f} "
                "and growing with the samples)")
    return "ok" if row["ok"] else "VIOLATION: more than the declared ε"


def _number(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def echo_table(rows: list[dict], samples: int, confidence: float) -> None:
    click.echo(f"{samples:,} runs per true value; all {2 * len(rows)} lower bounds (ε ≥) hold together "
               f"with confidence {confidence}")
    table = [[r["type"], r["setting"], _number(r["declared_epsilon"]), _number(r["realized_epsilon"]),
              f"{r['browser_lower_bound']:.4f}", f"{r['python_lower_bound']:.4f}",
              *((_number(r["browser_point"]), _number(r["python_point"])) if r["protected"] else ("∞", "∞"))]
             for r in rows]
    headers = ["type", "setting", "declared ε", "realized ε", "browser ≥", "python ≥", "browser obs.", "python obs."]
    widths = [max(len(c) for c in col) for col in zip(headers, *table)]
    questions = any(r["questions"] for r in rows)
    for cells, r in zip([headers, *table], [None, *rows]):
        line = "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        tail = "verdict" + ("  questions" if questions else "") if r is None else \
            verdict(r) + ("  " + ", ".join(r["questions"]) if r["questions"] else "")
        click.echo(f"  {line}  {tail}")


@click.command("audit")
@click.option("--type", "types", type=KindChoice(), multiple=True,
              help="Question types to audit (repeatable; default all).")
@click.option("--k", "ks", type=click.IntRange(2, 16), multiple=True,
              help="Options of the single-choice settings (repeatable; default 2 and 4).")
@click.option("--epsilon", "epsilons", type=float, multiple=True,
              help="Declared ε (repeatable; default 0.5, 1 and 2).")
@click.option("--samples", type=click.IntRange(1000, 10**9), default=1_000_000, show_default=True,
              help="Runs of each randomizer per true value.")
@click.option("--confidence", type=click.FloatRange(0.5, 1, max_open=True), default=0.95, show_default=True,
              help="Confidence of the lower bounds (all of them together).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--script", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Audit this file served as /static/rr.js instead of the shipped one.")
@click.option("--embed", type=click.Path(exists=True, path_type=Path), metavar="DIR",
              help="Audit the built embed instead: the deniable-embed-VERSION.mjs that `deniable embed build` "
                   "wrote to DIR (or that file itself), its samplers in place of /static/rr.js and designs.js.")
@db_option(None, "Audit the mechanism of every protected question stored in this database "
                 "(read-only), instead of the default grid.")
@click.option("--chromium", default=CHROMIUM, show_default=True, help="The chromium executable.")
def audit(types, ks, epsilons, samples, confidence, fmt, script, embed, db_path, chromium) -> None:
    """Check that the randomizers give no more than the declared ε.

    Runs the browser samplers (/static/rr.js in headless chromium) and their Python twins
    SAMPLES times for every true input and reports a lower bound on the ε they really give
    (Clopper–Pearson, Bonferroni over all bounds of all rows), beside the declared and
    realized ε, for every question type: single choice, numeric (grid randomized response and
    discrete Laplace), check all that apply and the list experiment (a plain one is shown not to
    be ε-LDP).  Exit status 1 if a lower bound exceeds the declared ε.  With --db the settings
    are those of the questions stored in FILE, plus any --k/--epsilon grid asked for.  With
    --embed the browser side is the built embed file (deniable embed build), whose integrity
    hash is printed with the results.

    \b
    Example:
        deniable audit --k 2 --k 5 --epsilon 1 --samples 1000000
        deniable audit --type laplace --type multi --epsilon 1
        deniable audit --db deniable.db
        deniable audit --embed site/js --samples 100000
    """
    from deniable.client.mechanism import MechanismError
    from deniable.estimators.audit import epsilon_lower_bound  # scipy: only here

    if script is not None and embed is not None:
        raise click.BadParameter("give --script or --embed, not both", param_hint="--embed")
    embed_file = embed_module(embed) if embed is not None else None
    types = types or audit_settings.kinds()
    not_audited: list[tuple[str, str]] = []
    configs: list[Setting] = stored_settings(db_path, types, not_audited) if db_path else []
    if not db_path or ks or epsilons:
        try:
            configs += audit_settings.default_settings(types, ks or (2, 4), epsilons or (0.5, 1.0, 2.0))
        except MechanismError as exc:
            raise click.BadParameter(str(exc), param_hint="--epsilon") from None
    # Bonferroni across the table too: every bound of every row holds together with `confidence`,
    # so a correct pair of randomizers fails the command with probability at most 1 − confidence.
    each = 1 - (1 - confidence) / (2 * len(configs))
    total = 2 * samples * sum(len(setting.inputs) for setting in configs)

    def sample() -> list[dict]:
        rows = []
        with browser_page(script, chromium, embed_file) as page, progress(total, "sampling the randomizers", "draws") as bar:
            for setting in configs:
                found = {
                    "browser": epsilon_lower_bound(setting.cells(browser_counts(page, setting, samples, bar.update)),
                                                   each),
                    "python": epsilon_lower_bound(setting.cells(python_counts(setting, samples, bar.update)), each),
                }
                eps = setting.declared_epsilon
                rows.append({
                    "type": setting.kind, "setting": setting.label, "k": setting.k,
                    "declared_epsilon": eps, "threshold": setting.mech.threshold,
                    "realized_epsilon": setting.realized_epsilon, "protected": setting.protected,
                    **{f"{side}_lower_bound": b.lower_bound for side, b in found.items()},
                    # a plain list experiment's observed ratio is infinite (a cell never seen for one input)
                    **{f"{side}_point": b.point if setting.protected else None for side, b in found.items()},
                    "ok": all(b.lower_bound <= eps for b in found.values()) if setting.protected else None,
                    "questions": setting.questions,
                })
        return rows

    rows = outside_asyncio(sample)
    for row in rows:
        row["verdict"] = verdict(row)
    if fmt == "json":
        click.echo(json.dumps({"samples": samples, "confidence": confidence, "confidence_each": each,
                               "script": str(embed_file or script or "/static/rr.js"),
                               **({"integrity": integrity(embed_file.read_bytes())} if embed_file else {}),
                               "results": rows,
                               "not_audited": [{"question": qid, "reason": reason} for qid, reason in not_audited]},
                              indent=2))
    else:
        if embed_file is not None:
            click.echo(f"the built embed: {embed_file}  {integrity(embed_file.read_bytes())}")
        echo_table(rows, samples, confidence)
        for qid, reason in not_audited:
            click.echo(f"  not audited: {qid}: {reason}")
    if any(r["ok"] is False for r in rows):
        sys.exit(1)
