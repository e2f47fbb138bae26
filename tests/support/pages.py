"""Every page of the app in a realistic state, for the browser tests that walk them all
(accessibility, phone layout) and for ``scripts/screenshots.py``.

:func:`populate` stores surveys in every stage of the lifecycle (with responses, a wording fix,
consent and contact texts) through the store's own functions; :data:`RESPONDENT_PAGES` and
:data:`DASHBOARD_PAGES` list what to visit.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from deniable.server.store.db import connect
from deniable.server.store.demo import ensure_demo
from deniable.server.store.invitations import set_invitation_only
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey, insert_survey, set_status
from deniable.server.store.wording import fix_wording
from deniable.server.survey.definition import parse_definition

from .dashboard import EMAIL, ensure_researcher

STUDY = {
    "slug": "campus-health", "title": "Campus health 2025",
    "description": "Five minutes on habits that are hard to talk about.",
    "information": ("This survey is run by the Department of Public Health to estimate how common some habits "
                    "are among students.\n\nYour answers to protected questions are randomized on your device "
                    "before they are sent, and nothing identifies you."),
    "contact": "Dr Ada Lovelace, ada@example.org", "consent": True,
    "questions": [
        {"id": "drugs", "text": "In the past 12 months, have you used an illegal drug?", "options": ["Yes", "No"],
         "epsilon": 1.0},
        {"id": "cheat", "text": "How often have you cheated on a test or an exam since you started your studies?",
         "options": ["Never", "Once", "A few times", "Often"], "epsilon": 2.0},
        {"id": "drink", "text": "In a typical week, on how many days do you drink alcohol?",
         "options": ["None", "1 or 2", "3 or 4", "5 or more"], "epsilon": 1.5, "required": False},
        {"id": "sleep", "text": "Have you taken sleeping pills without a prescription this year?",
         "options": ["Yes", "No"], "epsilon": 1.0, "required": False},
        {"id": "year", "text": "Which year of your studies are you in?",
         "options": ["First year", "Second year", "Third year", "Fourth year or later"], "required": False},
    ],
}
DRAFT = {**STUDY, "slug": "draft-survey", "title": "Next term's survey (draft)", "consent": False, "information": ""}
OLD = {**STUDY, "slug": "old-survey", "title": "Campus health 2024", "consent": False}
# An open study whose question asked directly ("year") everyone answered: raking needs every answer.
PANEL = {**STUDY, "slug": "panel-study", "title": "Campus health panel", "consent": False,
         "questions": [*STUDY["questions"][:-1], {**STUDY["questions"][-1], "required": True}]}
# A draft with a question of every type beyond single choice (the builder edits them all).
TYPED = {**json.loads((Path(__file__).parents[2] / "examples" / "habits.json").read_text(encoding="utf-8")),
         "slug": "typed-draft"}

# (label, path, the browser's language)
RESPONDENT_PAGES = [
    ("survey page", "/s/demo", "en-US"),
    ("survey page, French", "/s/demo", "fr-FR"),
    ("survey page, Spanish", "/s/campus-health", "es-ES"),
    ("survey with information and consent", "/s/campus-health", "en-US"),
    ("thank-you page", "/s/demo/thanks", "en-US"),
    ("closed survey", "/s/old-survey", "en-US"),
    ("unknown survey", "/s/no-such-survey", "en-US"),
    ("invitation-only survey opened without a link", "/s/panel-study", "en-US"),
]
DASHBOARD_PAGES = [
    ("login", "/auth/login"),
    ("surveys", "/dashboard/"),
    ("new survey", "/dashboard/new"),
    ("builder, draft", "/dashboard/draft-survey/edit"),
    ("builder, draft with every question type", "/dashboard/typed-draft/edit"),
    ("preview, every question type", "/dashboard/typed-draft/preview"),
    ("preview as respondent", "/dashboard/draft-survey/preview"),
    ("confirm opening", "/dashboard/draft-survey/confirm?to=open"),
    ("confirm deleting", "/dashboard/draft-survey/confirm?to=delete"),
    ("open survey, design", "/dashboard/campus-health/edit"),
    ("confirm closing", "/dashboard/campus-health/confirm?to=close"),
    ("results", "/dashboard/campus-health/results"),
    ("results, options", "/dashboard/campus-health/results?method=wilson&confidence=0.99&simultaneous=y&fake=25"),
    ("cross-tab", "/dashboard/campus-health/crosstab?row=drugs&col=cheat"),
    ("subgroups", "/dashboard/campus-health/subgroups?question=cheat&by=year"),
    ("closed survey, design and change log", "/dashboard/old-survey/edit"),
    ("confirm reopening", "/dashboard/old-survey/confirm?to=reopen"),
    ("closed survey, results", "/dashboard/old-survey/results"),
]

# The Weighting page of the panel study (its one question asked directly, "year", has four options):
# the empty form, the form posted with the population's margins, and posted with a refused share.
WEIGHTING_PAGE = ("weighting", "/dashboard/panel-study/weighting")
WEIGHTING_MARGINS = {"share_0_0": "0.3", "share_0_1": "0.25", "share_0_2": "0.25", "share_0_3": "0.2"}
WEIGHTING_REFUSED = {**WEIGHTING_MARGINS, "share_0_0": "1.5"}  # above 1
# Pages reached through a redirect that leaves a flash message: (label, path, what the flash says).
FLASH_PAGES = [
    ("flash: an open survey cannot be opened", "/dashboard/campus-health/confirm?to=open", "cannot be opened"),
]


def _columns(survey, n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    columns = {}
    for q in survey.questions:
        column = rng.integers(0, q.k, n)
        if not q.required:
            column[rng.random(n) < 0.15] = -1  # some skip the optional questions
        columns[q.id] = column
    return columns


def populate(db_path: str, n: int = 1800) -> None:
    """Store the demo, an open study with responses (and an invitation-only panel study, for weighting), a draft,
    a draft of every question type and a closed survey whose wording was
    fixed, all owned by the test researcher (support.dashboard.EMAIL)."""
    from deniable.server.web.app import create_app

    app = create_app({"TESTING": True, "DATABASE": db_path, "SECRET_KEY": "pages"})
    owner = ensure_researcher(app, EMAIL)
    db = connect(db_path)
    try:
        ensure_demo(db, owner_id=owner)
        study = insert_survey(db, parse_definition(STUDY), status="open", target_n=2000, owner_id=owner)
        insert_many(db, study, _columns(study.survey, n, 1))
        insert_survey(db, parse_definition(DRAFT), target_n=1500, owner_id=owner)
        panel = insert_survey(db, parse_definition(PANEL), status="open", target_n=600, owner_id=owner)
        insert_many(db, panel, _columns(panel.survey, 600, 3))
        set_invitation_only(db, panel.id, True)  # its page says so on arrival
        insert_survey(db, parse_definition(TYPED), target_n=1000, owner_id=owner)
        old = insert_survey(db, parse_definition(OLD), status="open", target_n=800, owner_id=owner)
        insert_many(db, old, _columns(old.survey, n // 2, 2))
        fix_wording(db, "old-survey", {"questions": {"cheat": {"text": "How often have you cheated on a test "
                                                               "or exam since you began studying?"}}},
                    changed_by=EMAIL)
        set_status(db, "old-survey", "closed")
        assert get_survey(db, "old-survey").status == "closed"
    finally:
        db.conn.close()


def no_sideways_scroll(page) -> int:
    """How many pixels the page scrolls sideways (0 is right)."""
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


SMALLEST_CHART_TEXT = """() => {
  let smallest = Infinity, where = null;
  for (const svg of document.querySelectorAll("svg[viewBox]")) {
    const box = svg.viewBox.baseVal;
    if (!box || !box.width || !svg.getBoundingClientRect().width) continue;  // not shown (a chart's other width)
    const scale = svg.getBoundingClientRect().width / box.width;
    for (const text of svg.querySelectorAll("text")) {
      const size = parseFloat(getComputedStyle(text).fontSize) * scale;
      if (size < smallest) { smallest = size; where = text.textContent; }
    }
  }
  return [smallest, where];
}"""
