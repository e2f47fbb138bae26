"""Storing one response directly, for tests that need responses in a database without a server.

The server stores submissions through :func:`deniable.server.web.respondent.group_commit.submit`
(validated, then batched into one write transaction per group); this is the same store path for
one response at a time.
"""

from __future__ import annotations

from collections.abc import Mapping

from deniable.server.store import slots
from deniable.server.store.db import write_transaction
from deniable.server.store.responses import check_open, insert_validated, validate_reports
from deniable.server.store.scrub import scrub_before_answering
from deniable.server.store.surveys import fixed_today, today


def next_day():
    """The next day for the store (:func:`~deniable.server.store.surveys.fixed_today`), for a block: a wording
    fixed today is recorded from then on (a response records the wording its day began with)."""
    import datetime

    return fixed_today((datetime.date.fromisoformat(today()) + datetime.timedelta(days=1)).isoformat())


def store_response(db, stored, reports: Mapping, invitation: str | None = None, *, scrub_now: bool = True) -> str:
    """Validate and store one response in one ``BEGIN IMMEDIATE`` transaction; return its random id.

    The survey's status is checked again inside the transaction; for an invitation-only survey the
    ``invitation`` token is consumed in the same transaction, and the WAL is scrubbed before
    returning (:func:`deniable.server.store.scrub.scrub_before_answering`) as the server does before
    acknowledging.  ``scrub_now=False`` leaves it to the scrubber (for the test that shows the
    attack it stops).  As the server does after answering, a growth pass of the slots that the
    response made due runs to its end, one short transaction per step (:func:`.slots.grow_step`).
    """
    check_open(stored)
    clean = validate_reports(stored, reports)
    with write_transaction(db):
        response_id, invited = insert_validated(db, stored, clean, invitation, today())
        due = slots.growth_due(db.conn, stored.id)
    if invited and scrub_now:
        scrub_before_answering(db)
    while due:
        with write_transaction(db):
            due = slots.grow_step(db.conn, stored.id)
    return response_id
