"""The public results page ``/r/<slug>``: a survey's latest release, and the tables of every earlier one, for
anyone, without login.

It shows only what the owner released and what was stored at that moment
(:mod:`deniable.server.store.releases`): reading it draws nothing and spends nothing.  A survey
that is unknown, unpublished or withdrawn gets the same 404, so the page says nothing about it.
Protected questions show the dashboard's estimates (95% intervals) from their sufficient statistics
at the time of the release, each headline inside its own interval; counts that depend on direct
answers show the noisy released values.
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, render_template

from deniable.errors import DeniableError
from deniable.server.store import releases
from deniable.server.store.surveys import get_survey
from deniable.server.survey.questions.base import NotAvailable, headline

from .connections import get_readonly_db
from .dashboard import charts

bp = Blueprint("public", __name__)


def protected_items(stored, document: dict) -> list[dict]:
    """Each protected question's estimates from the release's statistics, with a chart.

    The statistics are read in the JSON form of the question's type
    (:meth:`~deniable.server.survey.questions.base.QuestionType.stats_from_json`; a choice's, the
    option counts that releases have always held), estimated with the type's fixed-n method
    (:meth:`~deniable.server.survey.questions.base.QuestionType.estimate`, exact where the type has it)
    and shown as the type's headlines (:meth:`~deniable.server.survey.questions.base.QuestionType.summary`),
    each inside its own interval (:func:`deniable.server.survey.questions.base.headline`).
    """
    items = []
    for position, q in enumerate(q for q in stored.survey.questions if q.protected):
        data = document.get("protected", {}).get(q.id)
        item = {"question": q, "record": None, "rows": [], "chart": None, "unavailable": None}
        items.append(item)
        if data is None:
            item["unavailable"] = "not part of this release"
            continue
        stats = q.qtype.stats_from_json(q, data)
        if q.qtype.n_of_stats(q, stats) == 0:
            continue
        confidence = document["confidence"]
        try:
            record = q.qtype.record(q, q.qtype.estimate(q, stats, method="exact", confidence=confidence,
                                                        simultaneous=False))
            item["rows"] = q.qtype.summary(q, record)
        except NotAvailable as exc:
            item["unavailable"] = str(exc)
            continue
        except (DeniableError, ArithmeticError) as exc:  # too few reports for this type's estimator
            item["unavailable"] = f"cannot be estimated from these reports ({exc})"
            continue
        item["record"] = record
        bars = q.qtype.chart(q, record)
        if charts.is_scale_record(record):
            item["chart"] = charts.scale_chart(
                record, chart_id=f"p{position}",
                title=f"{q.text} — mean and distribution with {confidence:.0%} intervals, n = {record.get('n')}")
        elif charts.drawable(bars):
            item["chart"] = charts.estimate_bars(
                bars["labels"], bars["estimate"], bars["ci_low"], bars["ci_high"], chart_id=f"p{position}",
                title=f"{q.text} — estimates with {confidence:.0%} intervals, n = {record.get('n')}")
    return items


def _release(slug: str):
    """The survey ``slug`` and its public release document; 404, the same for every reason, without one."""
    db = get_readonly_db()
    stored = get_survey(db, slug)
    document = releases.public_release(db, stored.id) if stored is not None else None
    if document is None:  # the same answer for unknown, unpublished and withdrawn surveys
        abort(404, description=f"There is no survey {slug!r} (or its results are not published).")
    return db, stored, document


@bp.route("/r/<slug>/chart/<qid>.svg")
def chart(slug: str, qid: str):
    """A protected question's chart of the public page, as an SVG file (no login, like the page)."""
    _, stored, document = _release(slug)
    item = next((i for i in protected_items(stored, document) if i["question"].id == qid), None)
    if item is None or item["chart"] is None:
        abort(404, description=f"There is no released chart of {qid!r}.")
    return Response(charts.standalone(item["chart"]), mimetype="image/svg+xml",
                    headers={"Content-Disposition": f'attachment; filename="{slug}-{qid}.svg"'})


def group_headlines(document: dict) -> dict:
    """Each released group estimate's headline: the estimate while inside its interval and its range
    (the item's ``lower``/``upper``; [0, 1] for the shares of releases made before they were stored),
    else the nearest end (:func:`~deniable.server.survey.questions.base.headline`)."""
    for item in document.get("items", []):
        size = len(item.get("labels", []))
        lower, upper = item.get("lower", [0.0] * size), item.get("upper", [1.0] * size)
        for group in item.get("groups", []):
            group["headline"] = [headline({"estimate": e, "ci_low": low, "ci_high": high}, lower=lo, upper=hi)
                                 for e, low, high, lo, hi in zip(group["estimate"], group["ci_low"],
                                                                 group["ci_high"], lower, upper)]
    return document


@bp.route("/r/<slug>")
def results(slug: str):
    db, stored, document = _release(slug)
    earlier = [group_headlines(r) for r in releases.all_releases(db, stored.id)[:-1]]  # their ε stays spent: shown
    return render_template("public/results.html", stored=stored, release=group_headlines(document), earlier=earlier,
                           budget=releases.budget(db, stored.id), ledger=releases.ledger(db, stored.id),
                           protected=protected_items(stored, document))
