"""The embeddable randomizer inside a real oTree app, in chromium (docs/embedding.md, "oTree").

oTree 6.0.15 runs in a virtual environment of its own, ``.venv-otree/`` (scripts/otree_env.sh: its
pins of WTForms, itsdangerous and MarkupSafe clash with Flask 3).  The test copies the recipe
(examples/otree/) to a temporary folder, writes the embed and the design document into it with
``deniable embed build`` and ``deniable embed design`` as the recipe says, and runs ``otree
prodserver`` there (its SQLite database in that folder) on a free loopback port.  Chromium goes
through the app as three participants (a form error, oTree's back button, a required question left
unanswered); a fourth never starts.  Then oTree's own wide CSV export (``/api/export_wide``) must
hold only reports, and ``deniable estimate --from otree`` must read it to the estimates of the same
reports submitted to deniable's own JSON API.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from click.testing import CliRunner
from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import load_definition

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "examples" / "otree"
OTREE = ROOT / ".venv-otree" / "bin" / "otree"
SLUG = "habits-otree"
QIDS = ("drugs", "cheated")
STARTUP_SECONDS = 60

# every draw of the randomizer, counted across the tab's pages (sessionStorage lives as long as the tab)
COUNT_DRAWS = """
const realDraw = crypto.getRandomValues.bind(crypto);
crypto.getRandomValues = (array) => {
  sessionStorage.setItem("test:draws", String(Number(sessionStorage.getItem("test:draws") || 0) + 1));
  return realDraw(array);
};
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http(url: str, body: dict | None = None) -> bytes:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


def otree_env() -> dict:
    """The environment oTree runs in: its venv's commands first on PATH, none of the shell's OTREE_ settings."""
    if not OTREE.exists():
        pytest.fail(f"{OTREE} not found: run scripts/otree_env.sh (oTree in a virtual environment of its own)")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OTREE_", "DATABASE_URL"))}
    env["PATH"] = f"{OTREE.parent}{os.pathsep}{env.get('PATH', '')}"  # prodserver starts `otree timeoutsubprocess`
    return env


@pytest.fixture
def project(tmp_path) -> Path:
    """A copy of the recipe, set up as docs/embedding.md says: the embed and the design document in _static/deniable."""
    project = tmp_path / "otree"
    shutil.copytree(RECIPE, project, ignore=shutil.ignore_patterns("db.sqlite3", "__pycache__", "deniable"))
    runner = CliRunner()
    built = runner.invoke(cli, ["embed", "build", "-o", str(project / "_static" / "deniable")])
    assert built.exit_code == 0, built.output
    design = runner.invoke(cli, ["embed", "design", str(project / "survey.json")])
    assert design.exit_code == 0, design.output
    (project / "_static" / "deniable" / "design.json").write_text(design.output)
    return project


@pytest.fixture
def otree(project, tmp_path):
    """``otree prodserver`` serving the recipe on a free loopback port, its SQLite file in the project; yields
    its URL."""
    env, port = otree_env(), free_port()
    log = (tmp_path / "otree.log").open("wb")
    server = subprocess.Popen([str(OTREE), "prodserver", f"127.0.0.1:{port}"], cwd=project, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                http(f"{base}/api/otree_version")
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"otree prodserver did not start: {(tmp_path / 'otree.log').read_text()[-2000:]}")
                time.sleep(0.2)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and the timeout worker it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=20)
        log.close()


def assert_same_as_deniables_own(app, project: Path, reports: list[dict], export: Path) -> None:
    """``deniable estimate --from otree`` of ``export`` prints what ``deniable estimate --db`` prints once
    ``reports`` (one {qid: report} per respondent) went through deniable's own JSON API."""
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, load_definition(project / "survey.json"), status="open")
    finally:
        db.conn.close()
    client = app.test_client()
    design = json.loads((project / "_static" / "deniable" / "design.json").read_text())
    assert client.get(f"/api/v1/surveys/{SLUG}").get_json()["design_fingerprint"] == design["design_fingerprint"]
    for one in reports:
        response = client.post(f"/api/v1/surveys/{SLUG}/responses", json={"reports": one})
        assert response.status_code == 201, response.get_data(as_text=True)
    runner = CliRunner()
    for fmt in ("json", "csv", "table"):
        ours = runner.invoke(cli, ["estimate", "--db", app.config["DATABASE"], SLUG, "--format", fmt])
        theirs = runner.invoke(cli, ["estimate", str(project / "survey.json"), str(export), "--from", "otree",
                                     "--format", fmt])
        assert ours.exit_code == theirs.exit_code == 0, (ours.output, theirs.output)
        assert theirs.output == ours.output
        if fmt == "json":
            assert json.loads(theirs.output)["n_responses"] == len(reports)


class Participant:
    """One participant, started by their own link in ``context`` (a browser), every draw and every POST recorded."""

    def __init__(self, context, base: str, code: str):
        self.context, self.code = context, code
        self.page = context.new_page()
        self.page.set_default_timeout(20_000)
        self.page.add_init_script(COUNT_DRAWS)
        self.posts: list[dict] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.posts.append(parse_qs(r.post_data or "", keep_blank_values=True))
                     if r.method == "POST" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(f"{base}/InitializeParticipant/{code}")
        self.page.wait_for_selector(f"#deniable-{SLUG}-drugs-0")

    def answer(self, age: str, drugs: int | None = None, cheated: int | None = None) -> None:
        self.page.fill("#id_age", age)
        for qid, option in (("drugs", drugs), ("cheated", cheated)):
            if option is not None:
                self.page.check(f"#deniable-{SLUG}-{qid}-{option}")

    def next(self) -> None:
        with self.page.expect_navigation():
            self.page.click(".otree-btn-next")

    def draws(self) -> int:
        return int(self.page.evaluate("() => sessionStorage.getItem('test:draws') || '0'"))

    def stored(self) -> dict:
        """This participant's stored reports (the browser's localStorage keys that end in their code)."""
        return {key: value for key, value in
                self.page.evaluate("() => Object.fromEntries(Object.entries(localStorage))").items()
                if key.endswith(f":{self.code}")}

    def reports(self) -> list[dict]:
        """What each POST of the questions' page sent for the protected fields, parsed."""
        return [{qid: json.loads(post[qid][0]) for qid in QIDS} for post in self.posts if "drugs" in post]


@pytest.mark.browser
def test_otree_stores_only_reports_and_deniable_estimates_its_export(otree, project, browser, app, tmp_path):
    base = otree
    session = json.loads(http(f"{base}/api/sessions", {"session_config_name": "protected", "num_participants": 4}))
    codes = [p["code"] for p in json.loads(http(f"{base}/api/get_session/{session['code']}", {}))["participants"]]
    assert len(codes) == 4  # the fourth never starts
    fingerprint = json.loads((project / "_static" / "deniable" / "design.json").read_text())["design_fingerprint"]
    lab, home = browser.new_context(), browser.new_context()
    try:
        # A, at home: a form error of oTree's own (age), then oTree's back button: one draw per question, ever
        a = Participant(home, base, codes[0])
        names = a.page.evaluate("() => Array.from(document.querySelectorAll('.deniable-question input'))"
                                ".map((i) => i.getAttribute('name'))")
        assert names == [None] * 4  # the embed's inputs: never posted
        a.answer("200", drugs=0, cheated=0)
        a.next()
        assert "/Protected/" in a.page.url and a.page.locator(".form-control-errors").count() == 1
        first, drawn = a.stored(), a.draws()
        assert drawn >= 2
        assert set(first) == {f"deniable:report:{SLUG}:{qid}:{a.code}" for qid in QIDS}
        a.answer("30", drugs=1, cheated=1)  # the other answers, this time
        a.next()
        assert "/Confirm/" in a.page.url and a.draws() == drawn
        with a.page.expect_navigation():
            a.page.click(".otree-btn-back")
        a.page.wait_for_selector(f"#deniable-{SLUG}-drugs-0")
        a.answer("31", drugs=0, cheated=1)
        a.next()
        assert "/Confirm/" in a.page.url and a.draws() == drawn and a.stored() == first
        a.next()
        sent = a.reports()
        assert len(sent) == 3 and sent[0] == sent[1] == sent[2]  # the same reports, sent three times
        assert {qid: str(sent[0][qid]["report"]) for qid in QIDS} == \
            {qid: first[f"deniable:report:{SLUG}:{qid}:{a.code}"] for qid in QIDS}

        # B, on a lab machine: a required protected question left unanswered keeps the page, nothing posted
        b = Participant(lab, base, codes[1])
        b.answer("45", drugs=1)
        b.page.click(".otree-btn-next")
        assert b.page.locator(".deniable-error:visible").inner_text() == "Please answer this question."
        assert b.posts == [] and "/Protected/" in b.page.url
        b.page.check(f"#deniable-{SLUG}-cheated-0")
        b.next()
        assert "/Confirm/" in b.page.url and len(b.reports()) == 1  # the page was posted once

        # C, next on the same lab machine: draws their own reports (the keys carry the participant's code)
        c = Participant(lab, base, codes[2])
        c.answer("52", drugs=0, cheated=1)
        c.next()
        assert "/Confirm/" in c.page.url and c.draws() >= 2 and len(c.stored()) == len(b.stored()) == 2

        # every POST of the questions' page held oTree's own field and the reports, nothing else
        for participant in (a, b, c):
            assert not participant.errors
            for post in participant.posts:
                if "drugs" in post:
                    assert set(post) == {"age", *QIDS}
            for reports in participant.reports():
                for report in reports.values():
                    assert set(report) == {"report", "design", "epsilon"} and report["design"] == fingerprint
    finally:
        lab.close()
        home.close()

    # oTree's wide export: the protected fields hold exactly the reports the browsers sent last
    export = tmp_path / "all_apps_wide.csv"
    export.write_bytes(http(f"{base}/api/export_wide"))
    rows = {row["participant.code"]: row for row in csv.DictReader(io.StringIO(export.read_text(encoding="utf-8-sig")))}
    assert list(rows) == codes
    player = {name.removeprefix("protected.1.player.") for name in next(iter(rows.values()))
              if name.startswith("protected.1.player.")}
    assert player == {"id_in_group", "role", "payoff", "age", "drugs", "cheated"}  # no field of a true answer
    for participant in (a, b, c):
        row = rows[participant.code]
        assert {qid: json.loads(row[f"protected.1.player.{qid}"]) for qid in QIDS} == participant.reports()[-1]
    assert all(rows[codes[3]][f"protected.1.player.{qid}"] == "" for qid in QIDS)  # never started

    # the same reports through deniable's own path: the JSON API of a survey with the same definition
    assert_same_as_deniables_own(app, project, [{qid: report["report"] for qid, report in p.reports()[-1].items()}
                                                for p in (a, b, c)], export)


@pytest.mark.slow
def test_otree_bots_refuse_a_true_answer_and_both_exports_read_alike(project, app, tmp_path):
    """oTree's own test bots (examples/otree/protected/tests.py), then its two CSVs of their data."""
    out = tmp_path / "bots"
    ran = subprocess.run([str(OTREE), "test", "protected", "6", "--export", str(out)], cwd=project, env=otree_env(),
                         check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert ran.returncode == 0 and "Bots completed session" in ran.stdout, ran.stdout  # oTree logs to stderr
    assert ran.stdout.count("SubmissionMustFail") == 6 * 5  # each bot's five refused submissions
    wide, app_export = out / "all_apps_wide.csv", out / "protected.csv"
    rows = list(csv.DictReader(io.StringIO(app_export.read_text(encoding="utf-8-sig"))))
    reports = [{qid: json.loads(row[f"player.{qid}"])["report"] for qid in QIDS} for row in rows]
    assert reports == [{"drugs": i % 2, "cheated": i // 2 % 2} for i in range(1, 7)]  # what the bots sent
    runner = CliRunner()
    outputs = [runner.invoke(cli, ["estimate", str(project / "survey.json"), str(path), "--from", "otree",
                                   "--format", "json"]) for path in (wide, app_export)]
    assert outputs[0].exit_code == outputs[1].exit_code == 0 and outputs[0].output == outputs[1].output
    assert_same_as_deniables_own(app, project, reports, app_export)
