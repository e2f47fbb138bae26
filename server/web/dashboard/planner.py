"""``GET /dashboard/plan.json``: the builder's planning numbers for one question, as it is typed.

The planner is exact (:mod:`deniable.estimators.planning` sums the Feldman–Cousins intervals over
the binomial distribution), which a browser module could not reproduce without porting the
exact belt; so ``builder.js`` asks this endpoint instead, and shows exactly what ``deniable
plan`` computes.  Login required; every parameter is checked and a bad one is a 400 naming it.
"""

from __future__ import annotations

import math
import re

from flask import jsonify, request

from deniable.client.mechanism import MAX_EPSILON
from deniable.server.survey.definition import MAX_OPTIONS
from deniable.server.survey.planning import question_plan

from ..errors import api_error
from .charts import dp_region
from .forms import MAX_TARGET
from .views import bp


def _number(name: str, kind, low, high, default=None):
    raw = request.args.get(name, "")
    if raw == "" and default is not None:
        return default
    try:
        value = kind(raw.replace(",", "."))
    except ValueError:
        raise ValueError(f"{name}: must be a number, got {raw[:20]!r}") from None
    if not (math.isfinite(value) and low <= value <= high):
        raise ValueError(f"{name}: must be between {low:g} and {high:g}, got {raw[:20]!r}")
    return value


@bp.route("/plan.json")
def plan_json():
    """One question's planning numbers: ``?k=2&epsilon=1&target=1000&margin=0.05`` (no ε: asked directly)."""
    try:
        k = _number("k", int, 2, MAX_OPTIONS)
        epsilon = None if request.args.get("epsilon", "") == "" else _number("epsilon", float, 1e-9, MAX_EPSILON)
        target = _number("target", int, 1, MAX_TARGET, 1000)
        margin = _number("margin", float, 0.001, 0.499, 0.05)
    except ValueError as exc:
        field = str(exc).split(":")[0]
        return api_error(400, str(exc), field)
    plan = question_plan(epsilon, k, target, margin)
    if epsilon is not None:
        chart = request.args.get("chart", "")
        chart_id = chart if re.fullmatch(r"[a-z][a-z0-9-]{0,40}", chart) else "live-region"
        plan["region"] = str(dp_region(plan["epsilon"], chart_id=chart_id))
    return jsonify(plan)
