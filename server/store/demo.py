"""The demo (``deniable serve --demo``): a survey with two protected questions and one direct
one, and a researcher to log in with."""

from __future__ import annotations

import math
import os
import secrets
from pathlib import Path

import sqlite_utils

from deniable.server.survey.definition import parse_definition

from .accounts import authenticate, set_researcher
from .surveys import StoredSurvey, get_survey, insert_survey

DEMO_SLUG = "demo"
DEMO_EMAIL = "demo@deniable.invalid"

DEMO_DEFINITION = {
    "slug": DEMO_SLUG,
    "title": "A short survey on sensitive habits (demo)",
    "description": ("Your device randomizes each protected answer before it is sent, so what is "
                    "stored never proves what you answered."),
    "questions": [
        {"id": "drug_use", "text": "In the past 12 months, have you used an illegal drug?",
         "options": ["No", "Yes"], "epsilon": math.log(3)},
        {"id": "cheating", "text": "How often have you cheated on a test or exam?",
         "options": ["Never", "Once", "A few times", "Often"], "epsilon": 2.0},
        {"id": "age_group", "text": "What is your age group?",
         "options": ["Under 30", "30 to 44", "45 to 64", "65 or older"], "required": False},
    ],
}


def demo_survey():
    return parse_definition(DEMO_DEFINITION)


def ensure_demo(db: sqlite_utils.Database, owner_id: int | None = None) -> StoredSurvey:
    """Create the demo survey, open and owned by ``owner_id``, unless a survey called ``demo`` exists."""
    stored = get_survey(db, DEMO_SLUG)
    if stored is None:
        stored = insert_survey(db, demo_survey(), status="open", owner_id=owner_id)
    return stored


def ensure_demo_researcher(db: sqlite_utils.Database, known_password: str | None = None) -> tuple[str, str, int, bool]:
    """The demo researcher, created if absent; return ``(email, password, id, new)``.

    ``known_password`` is the password printed last time (``deniable serve`` keeps it in a file
    beside the database): while it still logs in, it is kept, and so are the sessions made with
    it.  Otherwise — first start, or a reset asked for (``known_password=None``) — a fresh random
    password is set, which ends every session made with the old one.
    """
    if known_password:
        account = authenticate(db, DEMO_EMAIL, known_password)
        if account is not None:
            return DEMO_EMAIL, known_password, account["id"], False
    password = secrets.token_urlsafe(12)
    return DEMO_EMAIL, password, set_researcher(db, DEMO_EMAIL, password), True


def demo_login(db: sqlite_utils.Database, db_path: str, reset: bool = False) -> tuple[str, str, int]:
    """``(email, password, id)`` of the demo login: the password of the last start (kept in
    ``DB.demo-password``, readable by the owner only) unless ``reset`` is asked for or it no longer
    logs in; a new one is kept there for the next start, and ends every session of the old one."""
    kept = Path(f"{db_path}.demo-password")
    known = None
    if not reset and kept.is_file():
        known = kept.read_text(encoding="utf-8").strip() or None
    email, password, researcher_id, new = ensure_demo_researcher(db, known)
    if new:
        kept.unlink(missing_ok=True)
        fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(password + "\n")
    return email, password, researcher_id
