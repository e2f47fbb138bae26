"""Protected questions in oTree: deniable's embed randomizes in the browser, oTree stores only the report.

Set up once (docs/embedding.md, "oTree"), from this project's folder::

    deniable embed build -o _static/deniable
    deniable embed design survey.json > _static/deniable/design.json

Each protected question is a ``StringField`` named by the deniable question's id and set by the page's
script to ``{"report": …, "design": "sha256:…", "epsilon": …}``: a hidden input, the only input of the
question that has a ``name``.  The inputs holding the true answer are the embed's own and have none, so
the browser never posts them and oTree never stores them.  ``FIELD_error_message`` refuses a value that
is not such a report (a true answer typed into the field by hand, a report under another design).
"""

import base64
import hashlib
import json
from pathlib import Path

from otree.api import BaseConstants, BaseGroup, BasePlayer, BaseSubsession, Page, models

doc = "Two protected questions (deniable's embed) and one of oTree's own."

DENIABLE = Path(__file__).resolve().parents[1] / "_static" / "deniable"


def load_design() -> dict:
    """The design document ``deniable embed design survey.json`` wrote."""
    return json.loads((DENIABLE / "design.json").read_text(encoding="utf-8"))


def embed_script() -> tuple:
    """The classic-script build ``deniable embed build`` wrote (its path under _static) and its integrity hash."""
    scripts = sorted(DENIABLE.glob("deniable-embed-*.js"))
    if len(scripts) != 1:
        raise RuntimeError(f"{DENIABLE}: expected one deniable-embed-VERSION.js (deniable embed build -o "
                           f"_static/deniable), found {len(scripts)}")
    [script] = scripts
    digest = hashlib.sha384(script.read_bytes()).digest()
    return f"deniable/{script.name}", "sha384-" + base64.b64encode(digest).decode("ascii")


class C(BaseConstants):
    NAME_IN_URL = "protected"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 1
    PROTECTED = ("drugs", "cheated")  # the deniable questions' ids: the fields below


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    age = models.IntegerField(label="Your age")  # one of oTree's own fields
    # the reports of the protected questions, set by the page's script (never the true answers)
    drugs = models.StringField()
    cheated = models.StringField()


def report_error(qid: str, value: str):
    """Why ``value`` is not a report of deniable's embed for question ``qid`` of this survey's design, or None."""
    design = load_design()
    try:
        report = json.loads(value)
    except ValueError:
        report = None
    if not isinstance(report, dict) or set(report) != {"report", "design", "epsilon"}:
        return "Not a report of deniable's embed: was this question answered outside it?"
    if report["design"] != design["design_fingerprint"]:
        return "A report under another design than this survey's."
    [question] = [q for q in design["questions"] if q["id"] == qid]
    k, drawn = len(question["options"]), report["report"]
    if question.get("type") == "multi":  # one 0/1 per option
        fits = isinstance(drawn, list) and len(drawn) == k and all(tick in (0, 1) for tick in drawn)
    else:  # an option's index
        fits = type(drawn) is int and 0 <= drawn < k
    return None if fits else "Not a report this question could have made."


def age_error_message(player, value):  # checked by the server: a page with an error comes back, as it was
    if not 16 <= value <= 120:
        return "Please give an age between 16 and 120."


def drugs_error_message(player, value):
    return report_error("drugs", value)


def cheated_error_message(player, value):
    return report_error("cheated", value)


# PAGES
class Protected(Page):
    form_model = "player"
    form_fields = ["age", *C.PROTECTED]  # noqa: RUF012 (oTree's API: a class attribute)

    @staticmethod
    def vars_for_template(player):
        path, integrity = embed_script()
        return {"embed_path": path, "embed_integrity": integrity}

    @staticmethod
    def js_vars(player):
        # the participant's code keeps one browser's reports apart per participant (a lab's shared machines)
        return {"design": load_design(), "questions": list(C.PROTECTED), "participant": player.participant.code}


class Confirm(Page):
    allow_back_button = True  # back to the questions: the embed re-sends the same reports


page_sequence = [Protected, Confirm]
