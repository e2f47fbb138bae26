"""The researchers' dashboard: design, launch, watch and export surveys (login required).

Reads go through the read-only connection.  No page reads the responses: the results page
reads the per-option ``counts``, cross-tabs and subgroups the answer patterns
(:mod:`deniable.server.store.aggregates`), both kept current on every insert, so every page
stays fast at any size.  Only the responses exports read the rows.
"""

from __future__ import annotations

import io
from pathlib import Path

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for

from deniable.server.store import access, invitations
from deniable.server.store.access import visible_surveys
from deniable.server.store.responses import load_db_dataset
from deniable.server.store.surveys import LifecycleError, insert_survey, option_counts, replace_design, set_status
from deniable.server.survey import estimates as report
from deniable.server.survey.definition import DefinitionError, dumps_definition, loads_definition
from deniable.server.survey.files import write_responses_parquet
from deniable.server.survey.responses_csv import dumps_responses_csv

from ..connections import get_db, get_readonly_db
from ..security import public_url
from .api import estimates_json
from .auth import current_researcher, require_login
from .forms import (DesignForm, ImportForm, InvitationForm, PlanningForm, ShareForm, StatusForm, fill_from_survey,
                    validated_survey)
from .permissions import survey_for
from .results import (ResultsForm, crosstab_view, planning, question_results, respondents_from_counts,
                      subgroup_view)

# The dashboard's own stylesheet is served by this blueprint (/dashboard/static/dashboard.css).
bp = Blueprint("dashboard", __name__, url_prefix="/dashboard", static_folder="static")


@bp.before_request
def _login():
    # Every dashboard page, present and future, needs a logged-in researcher (not its stylesheet,
    # which the login page uses too).
    if request.endpoint == "dashboard.static":
        return None
    return require_login()


def _index(import_form, status: int = 200):
    db = get_readonly_db()
    surveys = [(s, role, respondents_from_counts(db, s, option_counts(db, s.id)))
               for s, role in visible_surveys(db, current_researcher())]
    return render_template("dashboard/index.html", surveys=surveys, import_form=import_form), status


@bp.route("/")
def index():
    return _index(ImportForm())


@bp.route("/new", methods=["GET", "POST"])
def create():
    form = DesignForm()
    if request.method == "GET":
        return render_template("dashboard/edit.html", form=form, stored=None, plan=None)
    if form.add_question.data:
        form.questions.append_entry()
        return render_template("dashboard/edit.html", form=form, stored=None, plan=None)
    survey = validated_survey(form)
    if survey is not None:
        try:
            insert_survey(get_db(), survey, target_n=form.target_n.data, owner_id=current_researcher()["id"])
        except DefinitionError as exc:
            form.slug.errors.append(exc.problem)
        else:
            flash(f"Draft {survey.slug!r} saved.", "info")
            return redirect(url_for("dashboard.edit", slug=survey.slug))
    return render_template("dashboard/edit.html", form=form, stored=None, plan=None), 422


@bp.route("/import", methods=["POST"])
def import_definition():
    form = ImportForm()
    if form.validate_on_submit():
        upload = form.definition.data
        name = Path(upload.filename or "definition.json").name
        try:
            survey = loads_definition(upload.read().decode("utf-8"), name)
            insert_survey(get_db(), survey, target_n=form.target_n.data, owner_id=current_researcher()["id"])
        except UnicodeDecodeError:
            form.definition.errors.append(f"{name}: not UTF-8 text")
        except DefinitionError as exc:
            form.definition.errors.append(str(exc))
        else:
            flash(f"Imported {survey.slug!r} as a draft.", "info")
            return redirect(url_for("dashboard.edit", slug=survey.slug))
    return _index(form, 422)


@bp.route("/<slug>/edit", methods=["GET", "POST"])
def edit(slug: str):
    stored, role = survey_for(slug, "editor")
    plan_form = PlanningForm(request.args)
    margin = plan_form.margin.data if plan_form.validate() and plan_form.margin.data else 0.05
    form = DesignForm()
    status = 200
    if request.method == "POST":
        form.slug.data = slug  # the slug names the survey; it does not change
        if stored.status != "draft":
            # The server refuses, whatever the page showed (docs/design.md, invariant 4).
            form.form_errors.append(
                f"Survey {slug!r} is {stored.status}: its questions, options and ε are frozen. "
                "Import its definition under a new slug to change the design.")
            status = 409
        elif form.add_question.data:
            form.questions.append_entry()
        else:
            survey = validated_survey(form)
            if survey is not None:
                try:
                    replace_design(get_db(), slug, survey, target_n=form.target_n.data)
                except LifecycleError as exc:
                    form.form_errors.append(str(exc))
                    status = 409
                else:
                    flash("Draft saved.", "info")
                    return redirect(url_for("dashboard.edit", slug=slug))
            else:
                status = 422
    else:
        fill_from_survey(form, stored.survey, stored.target_n)
    return render_template(
        "dashboard/edit.html", form=form, stored=stored, status_form=StatusForm(),
        plan=planning(stored.survey, stored.target_n, margin), plan_form=plan_form,
        invitation_form=InvitationForm(), role=role, share_form=ShareForm(),
        shares=access.shares(get_readonly_db(), stored.id),
        unused_invitations=invitations.unused(get_readonly_db(), stored.id),
    ), status


@bp.route("/<slug>/invitations", methods=["POST"])
def manage_invitations(slug: str):
    """Generate N single-use links (a CSV of token and URL) or switch invitation-only on/off."""
    stored, _ = survey_for(slug, "editor")
    form = InvitationForm()
    if not form.validate_on_submit():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        abort(400, description=problems or "invitations: nothing to do")
    if stored.status == "closed":
        abort(409, description=f"survey {slug!r} is closed: invitations no longer matter")
    if form.generate.data:
        if form.count.data is None:
            abort(400, description="count: how many links? (1 to 100,000)")
        tokens = invitations.generate(get_db(), stored.id, form.count.data)
        body = invitations.links_csv(tokens, public_url("respond.survey", slug=slug))
        return _attachment(body, "text/csv", f"{slug}-invitations.csv")
    if form.set_mode.data:
        if form.mode.data not in ("invited", "anyone"):
            abort(400, description="mode: must be 'invited' or 'anyone'")
        invitations.set_invitation_only(get_db(), stored.id, form.mode.data == "invited")
        flash("Only people with an invitation link can respond now." if form.mode.data == "invited"
              else "Anyone with the survey address can respond now.", "info")
        return redirect(url_for("dashboard.edit", slug=slug))
    abort(400, description="invitations: choose Generate or Save")


@bp.route("/<slug>/status", methods=["POST"])
def change_status(slug: str):
    survey_for(slug, "editor")
    form = StatusForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        set_status(get_db(), slug, form.status.data)
    except LifecycleError as exc:
        flash(str(exc), "error")
        return redirect(url_for("dashboard.edit", slug=slug)), 409
    flash(f"Survey {slug!r} is now {form.status.data}.", "info")
    return redirect(url_for("dashboard.results" if form.status.data != "draft" else "dashboard.edit", slug=slug))


@bp.route("/<slug>/shares", methods=["POST"])
def manage_shares(slug: str):
    """Share the survey with a researcher as viewer or editor, or stop sharing (owner only)."""
    stored, _ = survey_for(slug, "owner")
    form = ShareForm()
    if not form.validate_on_submit():
        field, problems = next(iter(form.errors.items()), ("share", ["nothing to do"]))
        abort(400, description=f"{field}: {' '.join(problems)}")
    if form.remove.data:
        if form.researcher_id.data is None:
            abort(400, description="researcher_id: whom to stop sharing with?")
        access.unshare(get_db(), stored, form.researcher_id.data)
        flash("No longer shared with that researcher.", "info")
    else:
        try:
            access.share(get_db(), stored, form.email.data or "", form.role.data)
        except access.AccessError as exc:
            flash(str(exc), "error")
            return redirect(url_for("dashboard.edit", slug=slug), 303)
        flash(f"Shared with {form.email.data.strip()} as {form.role.data}.", "info")
    return redirect(url_for("dashboard.edit", slug=slug), 303)


def _attachment(body: str | bytes, mimetype: str, filename: str) -> Response:
    """A download: ``body`` saved as ``filename`` by the browser."""
    return Response(body, mimetype=mimetype, headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@bp.route("/<slug>/definition.json")
def export_definition(slug: str):
    stored, _ = survey_for(slug)
    return _attachment(dumps_definition(stored.survey), "application/json", f"{slug}.json")


def _results_form():
    form = ResultsForm(request.args)
    if not form.validate():
        abort(400, description="; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    return form


@bp.route("/<slug>/results")
def results(slug: str):
    db = get_readonly_db()
    stored, role = survey_for(slug)
    form = _results_form()
    counts = option_counts(db, stored.id)
    respondents = respondents_from_counts(db, stored, counts)
    items = question_results(stored.survey, counts, method=form.method.data,
                             confidence=form.confidence_value, simultaneous=form.simultaneous.data,
                             fake=form.fake.data, monitoring=form.monitoring.data, tuned_for=max(stored.target_n, 1))
    return render_template("dashboard/results.html", stored=stored, form=form, items=items, role=role,
                           respondents=respondents, status_form=StatusForm())


@bp.route("/<slug>/crosstab")
def crosstab(slug: str):
    db = get_readonly_db()
    stored, _ = survey_for(slug)
    view = crosstab_view(db, stored, request.args)
    return render_template("dashboard/crosstab.html", stored=stored, view=view)


@bp.route("/<slug>/subgroups")
def subgroups(slug: str):
    db = get_readonly_db()
    stored, _ = survey_for(slug)
    view = subgroup_view(db, stored, request.args)
    return render_template("dashboard/subgroups.html", stored=stored, view=view)


@bp.route("/<slug>/export/<any('responses.csv', 'responses.parquet', 'codebook.json'):name>")
def export_responses(slug: str, name: str):
    stored, _ = survey_for(slug)
    if name == "responses.csv":
        body, mimetype = dumps_responses_csv(load_db_dataset(get_readonly_db(), slug)), "text/csv"
    elif name == "responses.parquet":
        buffer = io.BytesIO()
        write_responses_parquet(buffer, load_db_dataset(get_readonly_db(), slug))
        body, mimetype = buffer.getvalue(), "application/vnd.apache.parquet"
    else:
        body, mimetype = dumps_definition(stored.survey), "application/json"
    return _attachment(body, mimetype, f"{slug}-{name}")


@bp.route("/<slug>/export/<any('estimates.json', 'estimates.csv'):name>")
def export_estimates(slug: str, name: str):
    db = get_readonly_db()
    stored, _ = survey_for(slug)
    form = _results_form()
    counts = option_counts(db, stored.id)
    results = report.survey_estimates(stored.survey, counts, method=form.method.data,
                                      confidence=form.confidence_value, simultaneous=form.simultaneous.data,
                                      monitoring=form.monitoring.data, tuned_for=max(stored.target_n, 1))
    if name.endswith(".json"):
        body = estimates_json(stored, results, respondents_from_counts(db, stored, counts))
        mimetype = "application/json"
    else:
        body, mimetype = report.to_csv(results), "text/csv"
    return _attachment(body, mimetype, f"{slug}-{name}")
