"""A fifth question type that only the tests know: a rating scale.

It exists to prove the question-type protocol: registering it (:func:`registered`) is all it
takes for the battery (tests/battery) to run it through every surface — definitions, the builder,
the survey page, submissions, estimates, exports, monitoring, publishing, audit, simulation —
with no edit anywhere else.

A rating question is a single choice among ordered points of a scale (``"options"``, 3–7 labels,
worst to best), randomized like a choice (k-ary randomized response), so it inherits the choice's
reports, statistics and estimates; what it adds is the mean scale position (1..k) of its
consistent shares in the estimates record.
"""

from __future__ import annotations

import contextlib

from deniable.server.survey.definition import DefinitionError
from deniable.server.survey.questions import choice, registry

NAME = "rating"


class Rating(choice.Choice):
    name = NAME
    label = "rating scale"

    def parse(self, data, where, epsilon):
        fields = super().parse(data, where, epsilon)
        if not 3 <= len(fields["options"]) <= 7:
            raise DefinitionError((*where, "options"), f"a rating scale has 3 to 7 points, got {len(fields['options'])}")
        return fields

    def to_dict(self, q):
        return {"type": self.name, **super().to_dict(q)}

    def design(self, q):
        return (self.name, None, None)

    def record(self, q, result):
        data = super().record(q, result)
        shares = [o["consistent"] for o in data["options"]]
        data["type"] = self.name
        data["mean_position"] = (sum((i + 1) * s for i, s in enumerate(shares)) / sum(shares)
                                 if None not in shares and sum(shares) > 0 else None)
        return data

    def examples(self):
        scale = ["Very unsafe", "Unsafe", "Neutral", "Safe", "Very safe"]
        return [({"text": "How safe do you feel on campus at night?", "type": self.name, "options": scale,
                  "epsilon": 1.5}, [0.1, 0.2, 0.3, 0.3, 0.1])]


RATING = Rating()


@contextlib.contextmanager
def registered():
    """The rating type registered for the duration of a ``with`` block."""
    known = NAME in registry.names()
    registry.register(RATING)
    try:
        yield RATING
    finally:
        if not known:
            registry.unregister(NAME)
