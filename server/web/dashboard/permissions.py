"""Which survey the logged-in researcher may see or change (docs/design.md, invariant 7).

Every route that names a survey goes through :func:`survey_for`: a researcher with no role on
it gets a 404, exactly as for a survey that does not exist (so nothing about a survey one cannot
see can be read: not its title, owner, status, questions, responses or releases), and a viewer
asking for an editor's or the owner's action gets a 403 that says so.

What a slug itself tells.  A slug is a survey's public address (``/s/SLUG``, ``/r/SLUG``), unique
on the server, so the slug of an open or closed survey is public by design, and anyone who may
create surveys can learn that a slug is *taken* by trying to claim it (importing a definition,
saving a new draft, or the name a duplicate receives): a taken slug is refused with one answer,
``slug: a survey 'SLUG' already exists``, whether the survey is one's own, shared with one, or
someone else's draft, and the refusal says nothing more about it.  Which slugs exist cannot be
listed, and a draft's slug is never shown to anyone without a role on it.  Pages number a survey's
releases 1, 2, … within the survey, never across the server.
"""

from __future__ import annotations

from flask import abort

from deniable.server.store.access import allows, role_of
from deniable.server.store.surveys import StoredSurvey, get_survey

from ..connections import get_readonly_db
from .auth import current_researcher

WHAT_NEEDS = {"viewer": "see its results", "editor": "change its design, lifecycle or invitations",
              "owner": "share it"}


def survey_for(slug: str, needs: str = "viewer") -> tuple[StoredSurvey, str]:
    """The survey ``slug`` and the researcher's role on it, or abort 404 (no role) / 403 (too small a role)."""
    db = get_readonly_db()
    stored = get_survey(db, slug)
    researcher = current_researcher()
    role = role_of(db, researcher, stored) if stored is not None and researcher is not None else None
    if role is None:  # the same answer as for a slug that does not exist
        abort(404, description=f"There is no survey {slug!r} (or it is not shared with you).")
    if not allows(role, needs):
        abort(403, description=f"You are a {role} of survey {slug!r}: you cannot {WHAT_NEEDS[needs]}. "
                               "Ask its owner for more access.")
    return stored, role
