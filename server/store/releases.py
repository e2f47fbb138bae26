"""Public releases and the central privacy budget ledger of each survey.

The owner sets a survey's **release budget** (a total ε for everything released about direct
answers); it is fixed once something has been released.  A **release** draws its noisy values
once (:func:`deniable.server.survey.release.draw_release`) and is stored with one **ledger** row
per item (mechanism, ε, realized ε, sensitivity, what) in one ``BEGIN IMMEDIATE`` transaction
that first checks the budget — so two owners' tabs releasing at once cannot overspend (a release
of the protected questions' estimates alone has no ledger row: it spends nothing) — and
the schema's triggers refuse it as well (:func:`~.migrations.m08_release_ledger`).  The public page
shows the latest release of a survey whose release is **public**; reading it spends nothing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import sqlite_utils

from deniable.errors import FieldError

from .db import write_transaction
from .surveys import StoredSurvey, today


class BudgetError(FieldError):
    """A budget that cannot be set, or a release that would exceed it; the message says which."""


@dataclass(frozen=True)
class Budget:
    epsilon: float | None  # None: not set yet
    spent: float
    public: bool
    releases: int

    @property
    def remaining(self) -> float:
        return max((self.epsilon or 0.0) - self.spent, 0.0)


def budget(db: sqlite_utils.Database, survey_id: int) -> Budget:
    """The survey's release budget, what its ledger has spent, and whether its release is public."""
    row = db.execute("SELECT epsilon, public FROM release_budgets WHERE survey_id = ?", [survey_id]).fetchone()
    spent = db.execute("SELECT ifnull(sum(epsilon), 0) FROM release_ledger WHERE survey_id = ?",
                       [survey_id]).fetchone()[0]
    count = db.execute("SELECT count(*) FROM releases WHERE survey_id = ?", [survey_id]).fetchone()[0]
    return Budget(epsilon=row[0] if row else None, spent=float(spent), public=bool(row and row[1]), releases=count)


def set_budget(db: sqlite_utils.Database, stored: StoredSurvey, epsilon: float) -> None:
    """Set the release budget; refused once anything has been spent (the budget is then fixed)."""
    if not (isinstance(epsilon, float) and math.isfinite(epsilon) and 0 < epsilon <= 100):
        raise BudgetError(f"budget: must be a number of ε in (0, 100], got {epsilon!r}", "budget")
    with write_transaction(db):
        if db.execute("SELECT 1 FROM release_ledger WHERE survey_id = ?", [stored.id]).fetchone():
            raise BudgetError("budget: it is fixed once something has been released", "budget")
        db.execute("INSERT INTO release_budgets (survey_id, epsilon) VALUES (?, ?) "
                   "ON CONFLICT (survey_id) DO UPDATE SET epsilon = excluded.epsilon", [stored.id, epsilon])


def record_release(db: sqlite_utils.Database, stored: StoredSurvey, document: dict, entries: list[dict]) -> int:
    """Store a drawn release and its ledger rows, and make it public; return its id.

    Raises BudgetError, storing nothing, when no budget is set or the release would exceed it.  A
    release that spends nothing (the protected questions' estimates alone) needs no budget: without
    one it stores a budget of 0, which the owner can still raise until something is spent.
    """
    cost = math.fsum(entry["epsilon"] for entry in entries)
    with write_transaction(db):
        row = db.execute("SELECT epsilon FROM release_budgets WHERE survey_id = ?", [stored.id]).fetchone()
        if row is None and not entries:
            db.execute("INSERT INTO release_budgets (survey_id, epsilon) VALUES (?, 0)", [stored.id])
            row = (0.0,)
        if row is None:
            raise BudgetError("set a release budget first", "budget")
        spent = db.execute("SELECT ifnull(sum(epsilon), 0) FROM release_ledger WHERE survey_id = ?",
                           [stored.id]).fetchone()[0]
        if spent + cost > row[0] * (1 + 1e-12):
            raise BudgetError(f"this release costs ε = {cost:g}, but only {max(row[0] - spent, 0):g} of the "
                              f"budget of {row[0]:g} is left ({spent:g} spent): refused, nothing was released")
        release_id = db.execute("INSERT INTO releases (survey_id, released_on, document) VALUES (?, ?, ?)",
                                [stored.id, document.get("released_on") or today(),
                                 json.dumps(document, separators=(",", ":"))]).lastrowid
        db.conn.executemany(
            "INSERT INTO release_ledger (survey_id, release_id, mechanism, epsilon, realized_epsilon, sensitivity, "
            "what) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(stored.id, release_id, e["mechanism"], e["epsilon"], e["realized_epsilon"], e["sensitivity"],
              e["what"]) for e in entries])
        db.execute("UPDATE release_budgets SET public = 1 WHERE survey_id = ?", [stored.id])
    return release_id


def set_public(db: sqlite_utils.Database, stored: StoredSurvey, public: bool) -> None:
    """Show or withdraw the public page (nothing is drawn or spent either way)."""
    with write_transaction(db):
        if not db.execute("SELECT 1 FROM releases WHERE survey_id = ?", [stored.id]).fetchone():
            raise BudgetError("nothing has been released yet", "public")
        db.execute("UPDATE release_budgets SET public = ? WHERE survey_id = ?", [int(bool(public)), stored.id])


def all_releases(db: sqlite_utils.Database, survey_id: int) -> list[dict]:
    """Every release document of a survey (public or not), oldest first.

    ``id`` is the stored id, numbered across every survey, which pages do not show; ``number`` is
    the release's place among this survey's own releases (1, 2, …), which they do.
    """
    rows = db.execute("SELECT id, released_on, document FROM releases WHERE survey_id = ? ORDER BY id",
                      [survey_id]).fetchall()
    out = []
    for number, (release_id, released_on, text) in enumerate(rows, start=1):
        document = json.loads(text)
        out.append({**document, "id": release_id, "released_on": released_on, "number": number})
    return out


def latest_release(db: sqlite_utils.Database, survey_id: int) -> dict | None:
    """The latest of :func:`all_releases`, or None."""
    every = all_releases(db, survey_id)
    return every[-1] if every else None


def public_release(db: sqlite_utils.Database, survey_id: int) -> dict | None:
    """The latest release if the survey's release is public, else None (the public page shows nothing)."""
    if not budget(db, survey_id).public:
        return None
    return latest_release(db, survey_id)


def ledger(db: sqlite_utils.Database, survey_id: int) -> list[dict]:
    """Every ledger row of a survey, oldest first, with the day of its release.

    ``release`` is the release's number among this survey's releases (1, 2, …: what pages show;
    a number across all surveys would tell the public how many releases other surveys made),
    ``release_id`` its stored id.
    """
    rows = db.execute(
        "SELECT (SELECT count(*) FROM releases n WHERE n.survey_id = l.survey_id AND n.id <= l.release_id), "
        "r.released_on, l.mechanism, l.epsilon, l.realized_epsilon, l.sensitivity, l.what, l.release_id "
        "FROM release_ledger l JOIN releases r ON r.id = l.release_id WHERE l.survey_id = ? ORDER BY l.id",
        [survey_id]).fetchall()
    keys = ("release", "released_on", "mechanism", "epsilon", "realized_epsilon", "sensitivity", "what", "release_id")
    return [dict(zip(keys, row)) for row in rows]
