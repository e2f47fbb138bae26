"""oTree's test bots for the recipe (``otree test protected``): the server keeps out what is not a report.

Bots post the form without a browser, so they show what oTree itself accepts: a true answer posted into a
protected field by hand ("1", or an option's label), a report under another design and a report no option
could make are refused (``FIELD_error_message`` in __init__.py); a report of deniable's embed is stored.
The browser side (the embed draws the report, the inputs of the true answer are never posted) is
tests/e2e/test_embed_otree.py.
"""

import json

from otree.api import Bot, SubmissionMustFail, expect

from . import Confirm, Protected, load_design


def report(value: int, design: str) -> str:
    return json.dumps({"report": value, "design": design, "epsilon": 1.0})  # as the page's script sends it


class PlayerBot(Bot):
    def play_round(self):
        design = load_design()["design_fingerprint"]
        good = report(0, design)
        for drugs in ("1", "Yes", report(1, "sha256:0000000000000000"), report(2, design), report(True, design)):
            yield SubmissionMustFail(Protected, {"age": 30, "drugs": drugs, "cheated": good})
        # reports that vary with the bot, so that an export of the bots' data has something to estimate
        drugs, cheated = report(self.player.id_in_group % 2, design), report(self.player.id_in_group // 2 % 2, design)
        yield Protected, {"age": 30, "drugs": drugs, "cheated": cheated}
        expect(self.player.drugs, drugs)
        yield Confirm
