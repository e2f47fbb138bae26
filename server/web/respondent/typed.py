"""What the survey page needs to draw a numeric, check-all-that-apply or list-experiment question.

Only integers reach the page's ``data-`` attributes (docs/design.md, invariant 8): the mechanism's
thresholds and, for a numeric question, its minimum and step as whole numbers of ``10^−scale``
units, so that ``types.js`` turns a typed answer like ``12.5`` into its answer index with integer
(BigInt) arithmetic and never a float.
"""

from __future__ import annotations

from decimal import Decimal

from deniable.client.mechanism import TWO_32
from deniable.server.survey import cells
from deniable.server.survey.definition import Question


def _places(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent if value != 0 else 0
    return max(0, -exponent)


def page_data(q: Question) -> dict:
    """The ``data-`` attributes and display strings of a question that is not a choice."""
    mech = q.mechanism
    if q.type == "numeric":
        scale = max(_places(q.minimum), _places(q.step))
        unit = Decimal(10) ** scale
        what = cells.kind(q)
        attrs = {"data-type": "numeric", "data-m": q.steps, "data-scale": scale,
                 "data-min-units": int(q.minimum * unit), "data-step-units": int(q.step * unit),
                 "data-mechanism": "laplace" if what == "laplace" else ("grid" if q.protected else "direct")}
        if what == "laplace":
            attrs.update({"data-threshold": mech.threshold, "data-tail": mech.tail})
        else:
            attrs.update({"data-grid": cells.grid_of(q), "data-threshold": mech.threshold if q.protected else TWO_32})
        return {"attrs": attrs, "min": cells.decimal_text(q.minimum), "max": cells.decimal_text(q.maximum),
                "step": cells.decimal_text(q.step)}
    if q.type == "multi":
        return {"attrs": {"data-type": "multi", "data-k": q.k,
                          "data-threshold": mech.threshold if q.protected else TWO_32}}
    return {"attrs": {"data-type": "list", "data-items": len(q.options),
                      "data-threshold": mech.threshold if q.protected else TWO_32}}


def survey_page_data(survey) -> dict:
    """:func:`page_data` of every question that is not a choice, by id."""
    return {q.id: page_data(q) for q in survey.questions if not q.is_choice}
