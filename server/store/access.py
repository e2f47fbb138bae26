"""Who may see and change a survey (docs/design.md, invariant 7).

Every survey has an owner (``surveys.owner_id``; None leaves it to the admins). The owner can
share it with another researcher as a **viewer** (results and exports) or an **editor** (also
the design, the lifecycle and invitations). An admin account (``deniable create-researcher
--admin``) has the owner's rights on every survey. Anyone else has no role: the web app answers
404 on every route of that survey, as if it did not exist.
"""

from __future__ import annotations

import sqlite_utils

from deniable.errors import FieldError

from .db import write_transaction
from .surveys import StoredSurvey, get_survey

ROLES = ("viewer", "editor", "owner")  # each includes the rights of those before it
SHARE_ROLES = ("viewer", "editor")


class AccessError(FieldError):
    """A share that cannot be made; the message names the field."""


def role_of(db: sqlite_utils.Database, researcher: dict, stored: StoredSurvey) -> str | None:
    """The researcher's role on the survey: "owner", "editor", "viewer", or None (no access)."""
    if researcher.get("is_admin") or stored.owner_id == researcher["id"]:
        return "owner"
    row = db.execute("SELECT role FROM survey_shares WHERE survey_id = ? AND researcher_id = ?",
                     [stored.id, researcher["id"]]).fetchone()
    return row[0] if row else None


def allows(role: str | None, needed: str) -> bool:
    """Whether ``role`` includes the rights of ``needed``."""
    return role is not None and ROLES.index(role) >= ROLES.index(needed)


def visible_surveys(db: sqlite_utils.Database, researcher: dict) -> list[tuple[StoredSurvey, str]]:
    """The surveys this researcher may see, newest first, each with their role."""
    if researcher.get("is_admin"):
        rows = db.execute("SELECT slug, 'owner' FROM surveys ORDER BY id DESC").fetchall()
    else:
        rows = db.execute(
            "SELECT s.slug, CASE WHEN s.owner_id = :me THEN 'owner' ELSE sh.role END FROM surveys s "
            "LEFT JOIN survey_shares sh ON sh.survey_id = s.id AND sh.researcher_id = :me "
            "WHERE s.owner_id = :me OR sh.role IS NOT NULL ORDER BY s.id DESC", {"me": researcher["id"]}).fetchall()
    return [(get_survey(db, slug), role) for slug, role in rows]


def shares(db: sqlite_utils.Database, survey_id: int) -> list[dict]:
    """The researchers a survey is shared with: ``[{"email", "role", "researcher_id"}]``."""
    rows = db.execute("SELECT r.email, sh.role, r.id FROM survey_shares sh JOIN researchers r "
                      "ON r.id = sh.researcher_id WHERE sh.survey_id = ? ORDER BY r.email", [survey_id])
    return [{"email": email, "role": role, "researcher_id": rid} for email, role, rid in rows]


def share(db: sqlite_utils.Database, stored: StoredSurvey, email: str, role: str) -> None:
    """Share the survey with the researcher ``email`` as ``role`` (or change their role)."""
    from .accounts import find_researcher

    if role not in SHARE_ROLES:
        raise AccessError(f"role: must be one of {', '.join(SHARE_ROLES)}, got {role!r}")
    other = find_researcher(db, email)
    if other is None:
        raise AccessError(f"email: no researcher {email.strip()!r} (accounts are made with "
                          "`deniable create-researcher`)")
    if other["id"] == stored.owner_id:
        raise AccessError(f"email: {other['email']} owns this survey already")
    with write_transaction(db):
        db.execute("INSERT INTO survey_shares (survey_id, researcher_id, role) VALUES (?, ?, ?) "
                   "ON CONFLICT (survey_id, researcher_id) DO UPDATE SET role = excluded.role",
                   [stored.id, other["id"], role])


def unshare(db: sqlite_utils.Database, stored: StoredSurvey, researcher_id: int) -> None:
    db.execute("DELETE FROM survey_shares WHERE survey_id = ? AND researcher_id = ?", [stored.id, researcher_id])
