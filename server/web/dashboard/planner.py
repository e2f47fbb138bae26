"""``GET /dashboard/plan.json``: the builder's planning numbers for one question, as it is typed.

Every question type (``type=…``, the default type without it) is checked by the definition parser,
as the builder's save would check it, and planned by its type (:meth:`QuestionType.plan
<deniable.server.survey.questions.base.QuestionType.plan>`); a type with its own panel partial
sends the panel's body as ``html``, rendered by the same Jinja macro as the page, so the page and
the live panel agree.

The planner is exact (:mod:`deniable.estimators.planning` sums the Feldman–Cousins intervals over
the binomial distribution), which a browser module could not reproduce without porting the
exact belt; so ``builder.js`` asks this endpoint instead, and shows exactly what ``deniable
plan`` computes.  Login required; every parameter is checked and a bad one is a 400 naming it.
"""

from __future__ import annotations

import math
import re

from flask import Blueprint, Response, get_template_attribute, jsonify, render_template, request

from deniable.client.mechanism import MAX_EPSILON
from deniable.errors import FieldError
from deniable.server.survey import questions
from deniable.server.survey.definition import DefinitionError, parse_question
from deniable.server.survey.parsing import number
from deniable.server.survey.questions.base import NotAvailable

from ..errors import api_error
from .charts import dp_region
from .forms import MAX_TARGET, randomizations

bp = Blueprint("planner", __name__, url_prefix="/dashboard")


def _number(name: str, kind, low, high, default=None):
    raw = request.args.get(name, "")
    if raw == "" and default is not None:
        return default
    value = number(raw.replace(",", "."), name, kind, f"{name}: must be a number, got {raw[:20]!r}")
    if not (math.isfinite(value) and low <= value <= high):
        raise FieldError(f"{name}: must be between {low:g} and {high:g}, got {raw[:20]!r}", name)
    return value


def _question(qtype):
    """The question the parameters describe, through its type (:meth:`QuestionType.plan_query
    <deniable.server.survey.questions.base.QuestionType.plan_query>`: labels stand in for the options
    and items, only their number counts); ε when given (none: asked directly)."""
    data = {"id": "q", "text": "q", "type": qtype.name, **qtype.plan_query(request.args, _number)}
    if request.args.get("epsilon", "") != "":
        data["epsilon"] = _number("epsilon", float, 1e-9, MAX_EPSILON)
    return parse_question(data)


def _field(path: tuple) -> str:
    """The parameter an error is about: the path's last key, or inside ``design`` the design's parameter
    (``design.p``, ``design.forced[1]``)."""
    if "design" in path:
        rest = path[path.index("design") + 1:]
        return "design" + "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in rest)
    return str(path[-1]) if path else "type"


@bp.route("/plan.json")
def plan_json():
    """One question's planning numbers: ``?k=2&epsilon=1&target=1000&margin=0.05`` (no ε: asked directly);
    ``?type=numeric&min=0&max=40&epsilon=1``, ``?type=multi&k=4&epsilon=2``, ``?type=list&items=3&epsilon=1``;
    a single choice randomized by a design: ``?k=2&design={"name":"warner","p":0.75}`` (no ε: the design's
    realized ε and its planning numbers come from :meth:`DesignedChoice.plan
    <deniable.server.survey.questions.choice.DesignedChoice.plan>`, as ``deniable plan --design`` computes them).

    A type whose panel is its own partial (``plan_template``) sends it rendered as ``html``; a type with
    ``plan_region`` sends the ε-DP region chart (``region``, an SVG) when protected."""
    kind = request.args.get("type", questions.DEFAULT)
    if kind not in questions.names():
        return api_error(400, f"type: must be one of {', '.join(questions.names())}", "type")
    qtype = questions.get(kind)
    try:
        target = _number("target", int, 1, MAX_TARGET, 1000)
        margin = _number("margin", float, 0.001, 0.499, 0.05)
        question = _question(qtype)
        qtype = question.qtype  # a single choice with a design is planned by its designed variant
        plan = qtype.plan(question, target, margin)
    except NotAvailable as exc:
        return api_error(400, f"type: {exc}", "type")
    except DefinitionError as exc:
        field = _field(exc.path)
        return api_error(400, f"{field}: {exc.problem}", field)
    except FieldError as exc:  # a parameter (_number, a type's plan_query) or the estimator refusing it
        return api_error(400, str(exc), str(exc).split(":")[0])
    if qtype.plan_template:
        plan["html"] = str(get_template_attribute("dashboard/_typed_plan.html", "typed_plan_body")(plan))
    if qtype.plan_region and plan.get("protected"):
        chart = request.args.get("chart", "")
        chart_id = chart if re.fullmatch(r"[a-z][a-z0-9-]{0,40}", chart) else "live-region"
        plan["region"] = str(dp_region(plan["epsilon"], chart_id=chart_id))
    return jsonify(plan)


@bp.route("/types.css")
def types_css():
    """The builder's per-type rules: a question slot shows the fields of its chosen type only (each
    type's ``slot_fields``, marked in edit.html), for every registered type."""
    css = render_template("dashboard/types.css", types=questions.all_types(), default_kind=questions.DEFAULT,
                          designs=[name for name in randomizations() if name != "rr"])
    return Response(css, mimetype="text/css", headers={"Cache-Control": "private, max-age=300"})
