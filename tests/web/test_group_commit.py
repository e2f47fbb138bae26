"""Group commit (server/web/respondent/group_commit.py), against a real server over HTTP and the
real SQLite file: submissions that wait for the write lock together are stored in one
transaction, whether they come from the survey form or the JSON API; each keeps its own answer
(a used invitation is refused, its neighbours are stored); a fault stores none of them; and the
next submission is stored normally afterwards.

The write lock is held by another connection, as another worker would hold it, until every
submission is queued."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from deniable.server.store.db import connect
from deniable.server.store.invitations import generate
from deniable.server.store.scrub import needs_scrub, scrub_page
from deniable.server.web.app import create_app
from deniable.server.web.respondent.group_commit import group_commit

REPORTS = {"drug_use": 1, "cheating": 0, "age_group": 2}


@pytest.fixture
def app(db_path):
    """Not in testing mode, so that a failure is answered 500 as in production; no scrubber, so
    that the WAL keeps the frames of every commit."""
    return create_app({"DATABASE": db_path, "SECRET_KEY": "k", "RATELIMIT_ENABLED": False, "SCRUB_SECONDS": 0})


def submit(base: str, body: dict) -> int:
    request = urllib.request.Request(f"{base}/api/v1/surveys/demo/responses", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def submit_form(base: str, reports: dict):
    """A function that posts the survey form as a browser would (the page, its cookie and CSRF token
    fetched now); it returns the status, 303 once stored."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
                                         NoRedirect)
    page = opener.open(f"{base}/s/demo", timeout=30).read().decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    data = urllib.parse.urlencode({"csrf_token": token, **{k: str(v) for k, v in reports.items()}}).encode()

    def post() -> int:
        try:
            with opener.open(urllib.request.Request(f"{base}/s/demo", data=data, method="POST"), timeout=30) as answer:
                return answer.status
        except urllib.error.HTTPError as exc:
            return exc.code

    return post


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def submit_while_locked(app, base: str, bodies: list, while_locked=None) -> list[int]:
    """Post ``bodies`` (JSON bodies, or functions that post) at once while another connection holds
    the write lock; release it (after ``while_locked(db)`` ran in that transaction) once all of them
    wait in the queue."""
    holder = connect(app.config["DATABASE"])
    holder.conn.execute("BEGIN IMMEDIATE")
    statuses = [None] * len(bodies)

    def one(i):
        statuses[i] = bodies[i]() if callable(bodies[i]) else submit(base, bodies[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 20
        while len(group_commit(app).queue) < len(bodies):
            assert time.monotonic() < deadline, "the submissions never all queued"
            time.sleep(0.01)
        if while_locked is not None:
            while_locked(holder)
        holder.conn.execute("COMMIT")
    finally:
        for thread in threads:
            thread.join(30)
        holder.conn.close()
    return statuses


def wal_frames(app, page_size: int) -> int:
    """Frames in the WAL (its 32-byte header, then frames of a 24-byte header and a page each)."""
    path = app.config["DATABASE"] + "-wal"
    return max(0, os.path.getsize(path) - 32) // (page_size + 24) if os.path.exists(path) else 0


def stored(app) -> tuple[int, int, int]:
    db = connect(app.config["DATABASE"])
    try:
        return (db.execute("SELECT count(*) FROM responses").fetchone()[0],
                db.execute("SELECT count(*) FROM invitations").fetchone()[0],
                db.execute("SELECT sum(count) FROM counts WHERE qid = 'drug_use'").fetchone()[0])
    finally:
        db.conn.close()


def test_waiting_submissions_share_one_commit(app, live_server, open_demo):
    keep = connect(app.config["DATABASE"])  # open throughout: no last close checkpoints the WAL away
    page_size = keep.execute("PRAGMA page_size").fetchone()[0]
    before = wal_frames(app, page_size)
    assert submit(live_server, {"reports": REPORTS}) == 201
    one_commit = wal_frames(app, page_size) - before  # the pages one response touches
    assert one_commit >= 3

    before = wal_frames(app, page_size)
    statuses = submit_while_locked(app, live_server, [{"reports": REPORTS}] * 8)

    assert statuses == [201] * 8
    # eight commits would append about 8 × one_commit frames; one commit of eight appends one_commit
    assert wal_frames(app, page_size) - before < 2 * one_commit
    keep.conn.close()
    assert stored(app)[0] == 9 and stored(app)[2] == 9
    assert group_commit(app).queue == [] and not group_commit(app).leading


def test_the_survey_form_and_the_api_share_the_commit(app, live_server, open_demo):
    forms = [submit_form(live_server, REPORTS) for _ in range(2)]

    statuses = submit_while_locked(app, live_server, [*forms, {"reports": REPORTS}])

    assert statuses == [303, 303, 201]
    assert stored(app) == (3, 0, 3)


def test_each_submission_keeps_its_own_answer(app, live_server, open_demo):
    """In one transaction: two fresh invitations are stored, a token used twice and an unknown
    token are refused (403), and a refusal leaves nothing of its own behind."""
    db = connect(app.config["DATABASE"])
    try:
        db.execute("UPDATE surveys SET invitation_only = 1 WHERE id = ?", [open_demo.id])
        first, second = generate(db, open_demo.id, 2)
    finally:
        db.conn.close()

    statuses = submit_while_locked(app, live_server, [
        {"reports": REPORTS, "invitation": first},
        {"reports": REPORTS, "invitation": first},
        {"reports": REPORTS, "invitation": "not-a-token"},
        {"reports": REPORTS, "invitation": second},
    ])

    assert sorted(statuses) == [201, 201, 403, 403]
    assert statuses[2] == 403 and statuses[3] == 201
    assert stored(app) == (2, 0, 2)


def test_a_fault_stores_nothing_of_the_batch_and_the_next_submission_is_stored(app, live_server, open_demo):
    def break_the_file(holder):  # as another process might, while the submissions wait
        holder.conn.execute("ALTER TABLE counts RENAME TO counts_elsewhere")

    statuses = submit_while_locked(app, live_server, [{"reports": REPORTS}] * 3, break_the_file)

    assert statuses == [500] * 3
    db = connect(app.config["DATABASE"])
    try:
        assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 0
        db.conn.execute("ALTER TABLE counts_elsewhere RENAME TO counts")
    finally:
        db.conn.close()
    assert submit(live_server, {"reports": REPORTS}) == 201
    assert stored(app) == (1, 0, 1)


def test_the_slots_grow_after_the_batch_in_steps_of_their_own(app, live_server, open_demo):
    """When fewer than half the slots are free, the batch that notices it starts a growth pass
    (server/store/slots.py) that a thread runs after the batch is answered, in transactions of its
    own: the free slots keep their keys (the full rebuild inside the batch, as before, drew them
    all again)."""
    from deniable.server.store import slots

    db = connect(app.config["DATABASE"])
    try:
        assert submit(live_server, {"reports": REPORTS}) == 201
        survey_id = db.execute("SELECT id FROM surveys WHERE slug = 'demo'").fetchone()[0]
        total = slots.sizes(db.conn, survey_id)[0]
        for _ in range(total // 2 - 1):
            assert submit(live_server, {"reports": REPORTS}) == 201
        free = {rid for (rid,) in db.execute("SELECT id FROM response_slots WHERE filled = 0")}
        assert slots.sizes(db.conn, survey_id)[:2] == (total, total // 2)  # not due yet
        assert submit(live_server, {"reports": REPORTS}) == 201  # more than half filled: a pass is due
        deadline = time.monotonic() + 20
        while slots.sizes(db.conn, survey_id)[0] < 2 * total or survey_id in group_commit(app).growing:
            assert time.monotonic() < deadline, "the slots never grew"
            time.sleep(0.01)
        kept = {rid for (rid,) in db.execute("SELECT id FROM response_slots")}
        assert len(free - kept) == 0  # the free slots are still there (one of them now filled)
        assert slots.sizes(db.conn, survey_id)[:2] == (2 * total, total // 2 + 1)
        assert not slots.growth_due(db.conn, survey_id)
    finally:
        db.conn.close()
    assert stored(app)[0] == total // 2 + 1


def test_a_scrub_that_readers_held_off_is_done_by_the_next_batch(app, live_server, open_demo):
    """A batch that spent an invitation is answered after a second even when a reader's snapshot
    keeps the WAL from being scrubbed; the next batch, plain or not, scrubs then (no scrubber runs
    in this app), so the token's link does not wait for the scrubber's next tick."""
    db = connect(app.config["DATABASE"])
    try:
        db.execute("UPDATE surveys SET invitation_only = 1 WHERE id = ?", [open_demo.id])
        (token,) = generate(db, open_demo.id, 1)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = scrub_page(db)
        reader = connect(app.config["DATABASE"])
        reader.conn.execute("BEGIN")
        reader.execute("SELECT count(*) FROM responses").fetchone()  # a snapshot from before the submission
        try:
            assert submit(live_server, {"reports": REPORTS, "invitation": token}) == 201
            assert needs_scrub(app.config["DATABASE"], page)  # the scrub gave up
        finally:
            reader.conn.execute("COMMIT")
            reader.conn.close()
        db.execute("UPDATE surveys SET invitation_only = 0 WHERE id = ?", [open_demo.id])
    finally:
        db.conn.close()
    assert submit(live_server, {"reports": REPORTS}) == 201
    assert not needs_scrub(app.config["DATABASE"], page)
    assert not group_commit(app).unscrubbed
