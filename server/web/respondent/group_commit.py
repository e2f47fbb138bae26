"""Group commit: the submissions that wait for SQLite's write lock together share one transaction.

SQLite lets one connection write at a time.  Every submission used to take the write lock for
itself (``BEGIN IMMEDIATE``, four statements, ``COMMIT``), and under load the workers spent about
a third of their CPU beginning, waiting and committing: the wait was inside SQLite's C busy
handler, which stalls every connection of a gevent worker, so the worker's other submissions,
validated and ready, could not even queue (docs/benchmarks.md).

Both submission paths, the survey form (:mod:`.pages`) and the JSON API (:mod:`.submit_route`),
call :func:`submit`.  A submission, once validated, joins its process's queue.  If no submission
of the process is storing, it becomes the *leader*.  It takes the write lock
(:func:`deniable.server.store.db.begin_immediate`, waiting cooperatively), then takes the whole
queue: itself and every submission that arrived while it waited.  It inserts each one
(:func:`deniable.server.store.responses.insert_validated`) in that one transaction, commits,
scrubs if a response consumed an invitation (or an earlier such batch's scrub did not succeed within
its second: readers held the WAL), and only then wakes the others with their ids.
Nothing is acknowledged before the commit that holds it, so a killed server loses no
acknowledged response.  A response refused inside the transaction (the survey closed meanwhile,
an invitation missing or used) writes nothing and gets its own error.  Any other failure rolls
the whole transaction back, and every submission in it gets the error: a 500 that says nothing
was stored, which is true.  When it is done, the leader hands the queue, if anything arrived
meanwhile, to the first submission in it.

Under gunicorn's gevent workers the waits are cooperative (``threading`` is patched); under
threads they are ordinary locks and events.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time

from deniable.server.store import slots
from deniable.server.store.db import write_transaction
from deniable.server.store.invitations import InvitationError
from deniable.server.store.responses import STATUS, ReportError, check_open, insert_validated, validate_reports
from deniable.server.store.scrub import scrub_before_answering
from deniable.server.store.surveys import StoredSurvey, today

from ..connections import pooled


class _Pending:
    __slots__ = ("stored", "clean", "invitation", "done", "outcome")

    def __init__(self, stored: StoredSurvey, clean: dict[str, int], invitation):
        self.stored, self.clean, self.invitation = stored, clean, invitation
        self.done = threading.Event()
        self.outcome: str | BaseException | None = None  # None once done: this one leads next


class GroupCommit:
    """One process's queue of validated submissions for one database file."""

    def __init__(self):
        self.guard = threading.Lock()  # held only to touch the queue, never across a wait
        self.queue: list[_Pending] = []
        self.leading = False
        self.growing: set[int] = set()  # surveys whose slots a thread of this process is growing
        self.unscrubbed = False  # a batch that spent an invitation was answered before its scrub succeeded

    def store(self, app, stored: StoredSurvey, clean: dict[str, int], invitation) -> str:
        """Store one validated response; its id, or the exception that refused it."""
        mine = _Pending(stored, clean, invitation)
        with self.guard:
            self.queue.append(mine)
            follow, self.leading = self.leading, True
        if follow:
            mine.done.wait()
        if mine.outcome is None:
            self._lead(app)
        if isinstance(mine.outcome, BaseException):
            raise mine.outcome
        return mine.outcome

    def _take(self) -> list[_Pending]:
        with self.guard:
            batch, self.queue = self.queue, []
        return batch

    def _lead(self, app) -> None:
        batch: list[_Pending] | None = None
        due: set[int] = set()
        try:
            time.sleep(0)  # first let the worker's other submissions that are ready join the queue
            with pooled(app) as db:
                with self.guard:
                    waiting = {p.stored.id for p in self.queue}
                for survey_id in waiting:  # the free slots' keys read now, if due: not under the write lock
                    slots.read_free_slots(db.conn, survey_id)
                with write_transaction(db, cooperative=True):
                    batch, invited, day, status = self._take(), False, today(), {}
                    for pending in batch:
                        sid = pending.stored.id
                        if sid not in status:  # read once a transaction: nothing changes it before the commit
                            status[sid] = db.conn.execute(STATUS, [sid]).fetchone()
                        try:
                            pending.outcome, consumed = insert_validated(
                                db, pending.stored, pending.clean, pending.invitation, day, status[sid])
                            invited |= consumed
                        except (ReportError, InvitationError) as exc:
                            pending.outcome = exc
                    due = {sid for sid in {p.stored.id for p in batch} - self.growing if slots.growth_due(db.conn, sid)}
                if invited or self.unscrubbed:  # until a scrub succeeds, every batch tries again
                    self.unscrubbed = not scrub_before_answering(db)
        except BaseException as exc:  # rolled back: nothing of the batch is stored
            if batch is None:  # the write lock never came
                batch = self._take()
            failure = exc if isinstance(exc, Exception) else RuntimeError("the storing request was interrupted")
            for pending in batch:
                pending.outcome = failure
            if failure is not exc:
                raise
        finally:
            with self.guard:
                if self.queue:
                    self.queue[0].done.set()  # outcome None: it leads the next transaction
                else:
                    self.leading = False
            for pending in batch or ():
                pending.done.set()
        for survey_id in due:  # after the batch is answered: the growth never delays it
            self.growing.add(survey_id)
            threading.Thread(target=self._grow, args=(app, survey_id), daemon=True,
                             name=f"deniable-grow {survey_id}").start()

    def _grow(self, app, survey_id: int) -> None:
        """Grow the survey's slots (:func:`deniable.server.store.slots.grow_step`), one short write
        transaction per step, while submissions go on between the steps."""
        try:
            more = True
            while more:
                with pooled(app) as db, write_transaction(db, cooperative=True):
                    more = slots.grow_step(db.conn, survey_id)
                time.sleep(0)  # let the submissions that wait for the lock have it
        except sqlite3.Error:  # busy past the deadline, or the file gone: the next batch goes on with it
            return
        finally:
            self.growing.discard(survey_id)


_queues: dict[tuple[int, str], GroupCommit] = {}


def group_commit(app) -> GroupCommit:
    """This process's :class:`GroupCommit` for ``app``'s database (a forked worker gets its own)."""
    key = (os.getpid(), app.config["DATABASE"])
    queue = _queues.get(key)
    if queue is None:
        queue = _queues[key] = GroupCommit()
    return queue


def submit(app, stored: StoredSurvey, reports, invitation) -> str:
    """Validate ``reports`` as :func:`deniable.server.store.responses.validate_reports` does, then store
    them through this process's group commit; the response's id, or the error that refused it."""
    check_open(stored)
    return group_commit(app).store(app, stored, validate_reports(stored, reports), invitation)
