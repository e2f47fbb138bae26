"""``GET /dashboard/plan.json``: the builder's planning numbers for one question, as it is typed.

A numeric, check-all-that-apply or list-experiment question (``type=numeric|multi|list``) is
checked by the definition parser, as the builder's save would check it, and planned by
:func:`deniable.server.survey.type_planning.typed_plan`; its answer carries the panel's body as
``html``, rendered by the same Jinja macro as the page, so the page and the live panel agree.

The planner is exact (:mod:`deniable.estimators.planning` sums the Feldman–Cousins intervals over
the binomial distribution), which a browser module could not reproduce without porting the
exact belt; so ``builder.js`` asks this endpoint instead, and shows exactly what ``deniable
plan`` computes.  Login required; every parameter is checked and a bad one is a 400 naming it.
"""

from __future__ import annotations

import math
import re

from flask import get_template_attribute, jsonify, request

from deniable.client.mechanism import MAX_EPSILON
from deniable.server.survey.definition import MAX_OPTIONS, DefinitionError, parse_question
from deniable.server.survey.planning import question_plan
from deniable.server.survey.type_planning import PLANNERS, typed_plan

from ..errors import api_error
from .charts import dp_region
from .forms import MAX_TARGET
from .slots import typed_number
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


def _typed_question(kind: str):
    """The question the parameters describe (labels stand in for the options and items: only their number counts)."""
    args = request.args
    data = {"id": "q", "text": "q", "type": kind}
    if args.get("epsilon", "") != "":
        data["epsilon"] = _number("epsilon", float, 1e-9, MAX_EPSILON)
    if kind == "multi":
        data["options"] = [str(j) for j in range(_number("k", int, 2, 20))]
    elif kind == "list":
        data.update(items=[str(j) for j in range(_number("items", int, 1, 10))], sensitive="sensitive")
    else:
        for key in ("min", "max", "step"):
            if args.get(key, "") != "" or key != "step":
                data[key] = typed_number(args.get(key, "")[:40], (key,), f"{key}, such as 1")
        if "epsilon" in data and args.get("mechanism", "auto") != "auto":
            data["mechanism"] = args["mechanism"][:20]
            if data["mechanism"] == "grid" and args.get("grid", "") != "":
                data["grid"] = _number("grid", int, 1, 10**6)
    return parse_question(data)


def _typed_plan_json(kind: str, target: int, margin: float):
    try:
        question = _typed_question(kind)
    except DefinitionError as exc:
        field = exc.path[-1] if exc.path else "type"
        return api_error(400, f"{field}: {exc.problem}", field)
    except ValueError as exc:
        return api_error(400, str(exc), str(exc).split(":")[0])
    plan = typed_plan(question, target, margin)
    body = get_template_attribute("dashboard/_typed_plan.html", "typed_plan_body")(plan)
    return jsonify({**plan, "html": str(body)})


@bp.route("/plan.json")
def plan_json():
    """One question's planning numbers: ``?k=2&epsilon=1&target=1000&margin=0.05`` (no ε: asked directly);
    ``?type=numeric&min=0&max=40&epsilon=1``, ``?type=multi&k=4&epsilon=2``, ``?type=list&items=3&epsilon=1``."""
    kind = request.args.get("type", "choice")
    if kind != "choice":
        if kind not in PLANNERS:
            return api_error(400, f"type: must be one of choice, {', '.join(PLANNERS)}", "type")
        try:
            target = _number("target", int, 1, MAX_TARGET, 1000)
            margin = _number("margin", float, 0.001, 0.499, 0.05)
        except ValueError as exc:
            return api_error(400, str(exc), str(exc).split(":")[0])
        return _typed_plan_json(kind, target, margin)
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
