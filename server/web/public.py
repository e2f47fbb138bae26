"""The public results page ``/r/<slug>``: a survey's latest release, for anyone, without login.

It shows only what the owner released and what was stored at that moment
(:mod:`deniable.server.store.releases`): reading it draws nothing and spends nothing.  A survey
that is unknown, unpublished or withdrawn gets the same 404, so the page says nothing about it.
Protected questions show the dashboard's estimates (exact 95% intervals) from their report counts
at the time of the release; counts that depend on direct answers show the noisy released values.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template

from deniable import estimators
from deniable.server.store import releases
from deniable.server.store.surveys import get_survey
from deniable.server.survey.estimates import question_json

from .connections import get_readonly_db
from .dashboard import charts

bp = Blueprint("public", __name__)


def protected_items(stored, document: dict) -> list[dict]:
    """Each protected question's estimates from the release's report counts, with a chart."""
    items = []
    for position, q in enumerate(q for q in stored.survey.questions if q.protected):
        counts = document["protected"].get(q.id)
        if counts is None or sum(counts) == 0:
            items.append({"question": q, "result": None})
            continue
        result = estimators.estimate(counts, q.epsilon, confidence=document["confidence"])
        rows = question_json(q, result)["options"]
        items.append({"question": q, "result": result, "rows": rows, "chart": charts.estimate_bars(
            q.options, [r["estimate"] for r in rows], [r["ci_low"] for r in rows], [r["ci_high"] for r in rows],
            chart_id=f"p{position}", title=f"{q.text} — estimates with {result.confidence:.0%} {result.method} "
                                           f"intervals, n = {result.n}")})
    return items


@bp.route("/r/<slug>")
def results(slug: str):
    db = get_readonly_db()
    stored = get_survey(db, slug)
    document = releases.public_release(db, stored.id) if stored is not None else None
    if document is None:  # the same answer for unknown, unpublished and withdrawn surveys
        abort(404, description=f"There is no survey {slug!r} (or its results are not published).")
    return render_template("public/results.html", stored=stored, release=document,
                           budget=releases.budget(db, stored.id), ledger=releases.ledger(db, stored.id),
                           protected=protected_items(stored, document))
