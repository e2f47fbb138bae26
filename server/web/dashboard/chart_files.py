"""Every chart of the result pages as an SVG file: the chart the page draws for the same question
and options, saved by the browser (``Content-Disposition: attachment``), behind the dashboard's
login like the page.  The PNG is made in the browser from this file (``static/chart-download.js``),
so both downloads are the chart as drawn.

- ``/dashboard/<slug>/results/chart/q<i>.svg?method=…&confidence=…`` — question ``i``'s chart;
- ``/dashboard/<slug>/crosstab/chart/joint.svg?row=…&col=…`` (or ``conditional.svg``);
- ``/dashboard/<slug>/subgroups/chart.svg?question=…&by=…``.

A question the survey does not have is a 404, a choice the page refuses a 400 in its words, and a
chart the page does not draw (no answers yet) a 409 saying why.
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, request, url_for

from deniable.server.store.surveys import survey_stats

from ..connections import get_readonly_db
from .charts import standalone
from .permissions import survey_for
from .results import ResultsForm, crosstab_view, question_results, subgroup_view

bp = Blueprint("chart_files", __name__, url_prefix="/dashboard")


@bp.app_template_global()
def chart_url(endpoint: str, **values) -> str:
    """The URL of a chart file with the page's own query (its method, confidence, questions …).

    The route's values win over a query parameter of the same name, and parameters that would
    steer ``url_for`` itself (``_external``, ``_anchor`` …) are left out: ``?slug=x`` on a page must
    not break its links (the fuzz tests found that 500)."""
    query = {k: v for k, v in request.args.items() if k not in values and not k.startswith("_")}
    return url_for(endpoint, **values, **query)


def svg_file(markup, filename: str, why: str = "") -> Response:
    """``markup`` as a standalone SVG download named ``filename``; a 409 saying why when the page
    draws no chart for these choices (no answers yet, none to both questions)."""
    if markup is None:
        abort(409, description=f"There is no chart {filename!r} for these choices{': ' + why if why else ''}.")
    return Response(standalone(markup), mimetype="image/svg+xml",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@bp.route("/<slug>/results/chart/q<int:position>.svg")
def results_chart(slug: str, position: int):
    stored, _ = survey_for(slug)
    form = ResultsForm(request.args)
    if not form.validate():
        abort(400, description="; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    items = question_results(stored.survey, survey_stats(get_readonly_db(), stored), method=form.method.data,
                             confidence=form.confidence_value, simultaneous=form.simultaneous.data,
                             monitoring=form.monitoring.data, tuned_for=max(stored.target_n, 1))
    if position >= len(items):
        abort(404, description=f"position: the survey {slug!r} has {len(items)} questions, numbered from 0.")
    item = items[position]
    return svg_file(item["chart"], f"{slug}-{item['question'].id}.svg", "" if item["n"] else "no answers yet")


@bp.route("/<slug>/crosstab/chart/<any('joint', 'conditional'):name>.svg")
def crosstab_chart(slug: str, name: str):
    stored, _ = survey_for(slug)
    view, status = crosstab_view(get_readonly_db(), stored, request.args)
    if status == 400:  # a refused choice: the page's own words
        abort(400, description=view["error"])
    ids = f"{view['q_row'].id}-by-{view['q_col'].id}" if view.get("q_row") is not None else "crosstab"
    return svg_file(view.get(f"{name}_chart") if view.get("result") is not None else None,
                    f"{slug}-{ids}-{name}.svg", view.get("error") or "")


@bp.route("/<slug>/subgroups/chart.svg")
def subgroups_chart(slug: str):
    stored, _ = survey_for(slug)
    view, status = subgroup_view(get_readonly_db(), stored, request.args)
    if status == 400:  # a refused choice: the page's own words
        abort(400, description=view["error"])
    ids = f"{view['q'].id}-by-{view['q_by'].id}" if view.get("q") is not None else "subgroups"
    return svg_file(view.get("chart"), f"{slug}-{ids}.svg", view.get("error") or "")
