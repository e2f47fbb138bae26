"""Publishing a survey's results (owner only): the release budget, releases, and the ledger.

Every route needs the **owner** role (:func:`.permissions.survey_for` with ``"owner"``: 404
without a role, 403 for a viewer or editor).  A release draws its noisy values once, on the
server, from the OS CSPRNG, and is stored with its ledger rows (:mod:`deniable.server.store.releases`);
the public page (:mod:`deniable.server.web.public`) only reads what was stored.
"""

from __future__ import annotations

import math

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for

from deniable.server.store import releases
from deniable.server.store.aggregates import pattern_counts
from deniable.server.store.surveys import survey_stats, today
from deniable.server.survey.parsing import number_or_none
from deniable.server.survey.release import (PROTECTED_ONLY, ReleaseError, candidates, draw_release, ledger_entries,
                                            parse_items, unavailable)

from ..connections import get_db, get_readonly_db
from .permissions import survey_for

bp = Blueprint("publish", __name__, url_prefix="/dashboard")


def _page(stored, *, error: str | None = None, status: int = 200, values: dict | None = None):
    db = get_readonly_db()
    return render_template(
        "dashboard/publish.html", stored=stored, role="owner", error=error, values=values or {},
        budget=releases.budget(db, stored.id), ledger=releases.ledger(db, stored.id),
        latest=releases.latest_release(db, stored.id), candidates=candidates(stored.survey),
        unavailable=unavailable(stored.survey), protected_only=PROTECTED_ONLY,
        has_protected=any(q.protected for q in stored.survey.questions),
    ), status


@bp.route("/<slug>/publish")
def publish(slug: str):
    stored, _ = survey_for(slug, "owner")
    return _page(stored)


@bp.route("/<slug>/publish/budget", methods=["POST"])
def set_budget(slug: str):
    stored, _ = survey_for(slug, "owner")
    text = (request.form.get("budget") or "").strip()
    value = number_or_none(text)
    if value is None or not 0 < value <= 100:  # 1e309 is inf to float(): said as typed, not as "inf" or "nan"
        return _page(stored, error=f"budget: must be a number of ε in (0, 100], got {text[:20]!r}", status=400)
    if stored.status == "draft":
        return _page(stored, error=f"survey {slug!r} is a draft: open it before publishing", status=409)
    try:
        releases.set_budget(get_db(), stored, value)
    except releases.BudgetError as exc:
        return _page(stored, error=str(exc), status=409 if "fixed" in str(exc) else 400)
    flash(f"Release budget set to ε = {value:g}.", "info")
    return redirect(url_for("dashboard.publish.publish", slug=slug), 303)


@bp.route("/<slug>/publish/release", methods=["POST"])
def release(slug: str):
    """Draw and store a release: refused (409, nothing drawn or spent) beyond the budget."""
    stored, _ = survey_for(slug, "owner")
    values = {key: value for key, value in request.form.items() if key != "csrf_token"}
    if stored.status == "draft":
        return _page(stored, error=f"survey {slug!r} is a draft: open it before publishing", status=409)
    try:
        items = parse_items(stored.survey, request.form)
    except ReleaseError as exc:
        return _page(stored, error=str(exc), status=400, values=values)
    current = releases.budget(get_readonly_db(), stored.id)
    cost = math.fsum(item.epsilon for item in items)
    if current.epsilon is None and items:  # the protected estimates alone spend nothing: no budget needed
        return _page(stored, error="set a release budget first", status=409, values=values)
    if current.spent + cost > (current.epsilon or 0.0) * (1 + 1e-12):
        return _page(stored, status=409, values=values,
                     error=f"this release costs ε = {cost:g}, but only {current.remaining:g} of the budget of "
                           f"{current.epsilon:g} is left: refused, nothing was released")
    db = get_readonly_db()
    try:  # RELEASE_DRAW: a uint32 source other than the OS CSPRNG (tests: a broken one is refused)
        document = draw_release(pattern_counts(db, stored), items, current_app.config.get("RELEASE_DRAW"),
                                day=today(), survey=stored.survey, stats=survey_stats(db, stored))
    except ReleaseError as exc:  # the noise could not be drawn within its bound: nothing stored or spent
        return _page(stored, error=str(exc), status=400, values=values)
    try:
        releases.record_release(get_db(), stored, document, ledger_entries(document))
    except releases.BudgetError as exc:  # another release got there first
        return _page(stored, error=str(exc), status=409, values=values)
    what = "" if items else " (the protected questions' estimates alone)"
    flash(f"Released{what}: ε = {cost:g} spent. The public page shows it until you withdraw it.", "info")
    return redirect(url_for("dashboard.publish.publish", slug=slug), 303)


@bp.route("/<slug>/publish/visibility", methods=["POST"])
def visibility(slug: str):
    """Withdraw the public page, or show the latest release again (nothing is drawn or spent)."""
    stored, _ = survey_for(slug, "owner")
    choice = request.form.get("public")
    if choice not in ("0", "1"):
        return _page(stored, error="public: choose 1 (show) or 0 (withdraw)", status=400)
    try:
        releases.set_public(get_db(), stored, choice == "1")
    except releases.BudgetError as exc:
        return _page(stored, error=str(exc), status=409)
    flash("The public page shows the latest release." if choice == "1" else "The public page is withdrawn.", "info")
    return redirect(url_for("dashboard.publish.publish", slug=slug), 303)
