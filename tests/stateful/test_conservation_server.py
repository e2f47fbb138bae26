"""Conservation through a real ``deniable serve`` killed with SIGKILL (the end-to-end variant of
test_conservation.py): nothing acknowledged is lost, nothing unsent appears.

A hypothesis state machine runs ``deniable serve`` (gunicorn, two gevent workers) on a database, with
its day set by ``DENIABLE_TODAY``, and sends it diverse responses from several concurrent connections
(the JSON API, scripts/loadgen.py) and through the survey form (its CSRF token and session cookie),
while ``deniable simulate --db`` writes to the same file; it kills the server's whole process group
in the middle of a load, restarts it (on the same day or a later one), and checks the law of a crash:
the stored responses hold every acknowledged one, and nothing but the acknowledged ones and those in
flight when it died (sent, never answered).  Those in flight that were stored count from then on, and
every surface (read by an app in this process on the same file, and the command line) must agree
with the model exactly, as in the in-process variant.

Marked slow: it runs in the normal suite (``bash scripts/test.sh``), where
``test_sigkill_in_the_middle_of_diverse_submissions`` kills the server twice in a fixed order and the
state machine runs two examples (hypothesis starts from its simplest ones);
``DENIABLE_STATEFUL=long`` gives the machine ten times as many.
"""

from __future__ import annotations

import datetime
import http.cookiejar
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from deniable.server.store.db import init_db
from deniable.server.web import connections
from support.conservation import (App, Model, canonical, draw_codes, eight_yes_no, event, form_text, reports_of,
                                  run_cli, simulated_rows, stored_responses, survey_definitions, truth_of)
from support.dashboard import EMAIL

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from loadgen import ServerProcess, drive  # noqa: E402

LONG = os.environ.get("DENIABLE_STATEFUL", "fast") == "long"
# the slow lane; and a failure's report, not an INTERNALERROR (tests/stateful/test_conservation.py says why)
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"),
              *([pytest.mark.timeout(3 * 3600)] if LONG else [])]
SETTINGS = settings(max_examples=20 if LONG else 2, stateful_step_count=8, deadline=None, derandomize=True,
                    database=None, phases=list(Phase) if LONG else [Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])
FIRST_DAY = datetime.date(2026, 12, 30)  # the clock starts before a year's end
CSRF_RE = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')


class Respondents:
    """Reports drawn for the load, remembered by identity, so that each acknowledged or unanswered body
    the load generator hands back is known by its codes."""

    def __init__(self, survey, seed: int, limit: int):
        self.survey, self.rng, self.left = survey, np.random.default_rng(seed), limit
        self.codes: dict[int, dict] = {}
        self.sent: list[dict] = []  # keeps every body alive, so that no id is reused

    def __call__(self):
        if self.left <= 0:
            return None
        self.left -= 1
        codes = draw_codes(self.survey, self.rng)
        body = reports_of(self.survey, codes)
        self.codes[id(body)] = codes
        self.sent.append(body)
        return body


def form_post(base: str, slug: str, reports: dict) -> int:
    """Send one response through the survey form over HTTP (its page first, for the CSRF token and the
    session cookie); the status of the POST, not following the redirect."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect)
    with opener.open(f"{base}/s/{slug}", timeout=30) as page:
        token = CSRF_RE.search(page.read().decode()).group(1)
    body = urllib.parse.urlencode({"csrf_token": token, **{qid: form_text(r) for qid, r in reports.items()}})
    try:
        request = urllib.request.Request(f"{base}/s/{slug}", data=body.encode(), method="POST")
        with opener.open(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


class KilledServer(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.work = Path(tempfile.mkdtemp(prefix="conservation-server-"))
        self.db_path = str(self.work / "deniable.db")
        init_db(self.db_path).conn.close()
        self.day = FIRST_DAY
        self.model = Model()
        self.reader = App(self.db_path, self.work)  # the surfaces, read in this process from the same file
        self.server = None
        self.start()

    def start(self) -> None:
        self.server = ServerProcess(Path(self.db_path), workers=2, env={"DENIABLE_TODAY": self.day.isoformat()},
                                    log=self.work / "server.log")
        self.server.start("/auth/login")

    def record(self, which: int):
        slugs = sorted(self.model.records)
        return self.model.records[slugs[which % len(slugs)]]

    @initialize()
    def first_survey(self):
        """Eight yes/no questions: 256 answer patterns, many a day."""
        self.create(eight_yes_no("live1"))

    @precondition(lambda self: len(self.model.records) < 2)
    @rule(data=st.data())
    def create_survey(self, data):
        """Another survey, of any types and designs, while the server runs."""
        self.create(data.draw(survey_definitions(f"live{len(self.model.records) + 1}", 6)))

    def create(self, definition: dict) -> None:
        slug = definition["slug"]
        path = self.work / f"{slug}.json"
        path.write_text(json.dumps(definition), encoding="utf-8")
        code, output = run_cli("import", path, "--db", self.db_path, "--open", "--owner", EMAIL)
        assert code == 0, output
        self.model.add_survey(definition)

    @rule(which=st.integers(0, 1), seed=st.integers(0, 2**32 - 1), clients=st.integers(1, 8),
          kill=st.booleans(), forms=st.integers(0, 6), wait=st.floats(0.1, 0.8))
    def load(self, which, seed, clients, kill, forms, wait):
        """Concurrent JSON API submissions for a moment (and a few through the form); with ``kill``, the
        server's process group gets SIGKILL in the middle of it, and starts again."""
        record = self.record(which)
        slug = record.survey.slug
        bodies = Respondents(record.survey, seed, limit=300)
        result = {}
        worker = threading.Thread(target=lambda: result.update(tally=drive(
            self.server.port, slug, bodies, clients=clients, seconds=1.0)[0]))
        worker.start()
        rng = np.random.default_rng(seed + 1)
        for _ in range(forms):
            codes = draw_codes(record.survey, rng)
            status = form_post(self.server.base_url, slug, reports_of(record.survey, codes))
            assert status == 303, status
            record.responses.append((self.day.isoformat(), codes))
        if kill:
            time.sleep(wait)
            self.server.kill()
        worker.join()
        tally = result["tally"]
        assert not tally.statuses, f"refusals: {tally.statuses}"
        record.responses += [(self.day.isoformat(), bodies.codes[id(body)]) for body in tally.acked]
        record.in_flight += [(self.day.isoformat(), bodies.codes[id(body)]) for body in tally.unanswered]
        event(f"load{', killed' if kill else ''}")
        if kill:
            self.settle(record)
            self.start()
        else:
            assert not tally.unanswered, f"{len(tally.unanswered)} submissions unanswered by a running server"

    def settle(self, record) -> None:
        """After a kill: stored ⊇ acknowledged and stored ⊆ acknowledged ∪ in flight; the stored ones of
        those in flight count from now on."""
        stored, acked = stored_responses(self.db_path, record.survey.slug), record.as_stored()
        lost = acked - stored
        assert not lost, f"{sum(lost.values())} acknowledged responses lost by the kill, such as {next(iter(lost))}"
        flying = {}
        for day, codes in record.in_flight:
            flying.setdefault((day, canonical(reports_of(record.survey, codes))), []).append(codes)
        extra = stored - acked
        unsent = {key: n for key, n in extra.items() if n > len(flying.get(key, []))}
        assert not unsent, f"stored responses nobody sent (or sent once and stored twice): {unsent}"
        for key, n in extra.items():
            record.responses += [(key[0], codes) for codes in flying[key][:n]]
        event(f"killed: {'some' if extra else 'none'} of the {'many' if len(record.in_flight) > 50 else 'few'} "
              "in flight stored")
        record.in_flight = []

    @rule(which=st.integers(0, 1), n=st.integers(1, 300), seed=st.integers(0, 2**32 - 1))
    def simulate(self, which, n, seed):
        """``deniable simulate --db`` beside the running server (its own day: the clock of this process)."""
        from deniable.server.store.surveys import fixed_today

        record = self.record(which)
        slug = record.survey.slug
        survey_path, truth_path = self.work / f"{slug}-now.json", self.work / f"{slug}-truth.json"
        survey_path.write_text(json.dumps(record.definition), encoding="utf-8")
        truth_path.write_text(json.dumps(truth_of(record.survey)), encoding="utf-8")
        with fixed_today(self.day.isoformat()):
            code, output = run_cli("simulate", survey_path, "--n", n, "--truth", truth_path, "--seed", seed,
                                   "--db", self.db_path)
        assert code == 0, output
        rows = simulated_rows(record.survey, str(truth_path), n, seed)
        record.responses += [(self.day.isoformat(), codes) for codes in rows]

    @rule(days=st.integers(0, 2))
    def restart(self, days):
        """Stop the server gracefully and start it again, ``days`` later."""
        self.server.stop()
        self.day += datetime.timedelta(days=days)
        self.start()

    @rule()
    def every_surface_agrees(self):
        self.reader.surfaces.check(self.model)

    def teardown(self):
        for reason in self.reader.surfaces.skipped:
            event(f"surface left out: {reason}")
        try:
            if self.server is not None:
                self.server.kill()
            if sys.exc_info()[0] is None:
                self.reader.surfaces.check(self.model)
        finally:
            connections._process_pool().close_idle()  # the reader's connections to a file about to go
            shutil.rmtree(self.work, ignore_errors=True)


TestKilledServer = KilledServer.TestCase
TestKilledServer.settings = SETTINGS


def test_sigkill_in_the_middle_of_diverse_submissions():
    """The law of a crash, in a fixed order: load, SIGKILL in the middle of a load (twice, the second time
    on the next day), ``deniable simulate --db`` beside the server, every surface checked."""
    machine = KilledServer()
    try:
        machine.first_survey()
        machine.load(0, seed=1, clients=4, kill=False, forms=3, wait=0)
        machine.load(0, seed=2, clients=8, kill=True, forms=2, wait=0.4)
        machine.restart(1)
        machine.simulate(0, n=200, seed=3)
        machine.load(0, seed=4, clients=8, kill=True, forms=0, wait=0.3)
        machine.every_surface_agrees()
    finally:
        machine.teardown()
