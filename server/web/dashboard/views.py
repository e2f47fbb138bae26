"""The researchers' dashboard: design, watch and export surveys (login required).

Reads go through the read-only connection.  No page reads the responses: the results page
reads the per-option ``counts``, cross-tabs and subgroups the answer patterns
(:mod:`deniable.server.store.aggregates`), both kept current on every insert, so every page
stays fast at any size.  The responses exports are written from the answer patterns too (the rows
are read only for a survey the patterns do not cover: :mod:`deniable.server.store.exports`).
The lifecycle (open, close, reopen, duplicate, delete, wording fixes, preview) is
:mod:`.lifecycle`; the builder's page :mod:`.builder`, its live planning numbers :mod:`.planner`.
The login check is the dashboard's one hook (:mod:`deniable.server.web.dashboard`).
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for

from deniable.server.store import access, invitations
from deniable.server.store.access import visible_surveys
from deniable.server.store.exports import codebook_text, load_export
from deniable.server.store.surveys import (LifecycleError, insert_survey, option_counts, replace_design,
                                            survey_stats)
from deniable.server.survey.estimates import Estimates
from deniable.server.survey import filenames
from deniable.server.survey.analysis import marginal_estimates
from deniable.server.survey.definition import DefinitionError, dumps_definition, loads_definition
from deniable.server.survey.translations import carry_over

from ..connections import get_db, get_readonly_db
from ..security import public_url
from .api import estimates_json
from .auth import current_researcher
from .builder import render_builder
from .forms import (ActionForm, DesignForm, ImportForm, InvitationForm, PlanningForm, ShareForm,
                    apply_action, fill_from_survey, validated_survey)
from .lifecycle import render_launched, survey_page_extras
from .permissions import survey_for
from .report import render_report
from .results import ResultsForm, crosstab_view, question_results, respondents_from_counts, subgroup_view
from .share import share_info
from . import weighting as page_weights

bp = Blueprint("views", __name__, url_prefix="/dashboard")


def _index(import_form, status: int = 200):
    db = get_readonly_db()
    surveys = [(s, role, respondents_from_counts(db, s, option_counts(db, s.id)))
               for s, role in visible_surveys(db, current_researcher())]
    return render_template("dashboard/index.html", surveys=surveys, import_form=import_form,
                           action_form=ActionForm()), status


@bp.route("/")
def index():
    return _index(ImportForm())


def _question_action(form: DesignForm, stored=None, **extra):
    """Add, move, duplicate or delete a question slot: the page again, nothing saved yet."""
    if form.add_question.data:
        form.questions.append_entry()
        focus = f"questions-{len(form.questions.entries) - 1}-text"
    else:
        focus = apply_action(form)
    return render_builder(form, stored, focus=focus, **extra)


@bp.route("/new", methods=["GET", "POST"])
def create():
    form = DesignForm()
    if request.method == "GET":
        return render_builder(form)
    if form.add_question.data or form.action.data:
        return _question_action(form)
    survey = validated_survey(form)
    if survey is not None:
        try:
            insert_survey(get_db(), survey, target_n=form.target_n.data, owner_id=current_researcher()["id"])
        except DefinitionError as exc:
            form.slug.errors.append(exc.problem)
        else:
            flash(f"Draft {survey.slug!r} saved. Preview it as a respondent, then open it when it is ready.", "info")
            return redirect(_edit_url(survey.slug, form))
    return render_builder(form, status=422)


def _edit_url(slug: str, form: DesignForm) -> str:
    """The draft's page again, keeping the margin the panels plan for."""
    margin = form.margin.data
    extra = {"margin": f"{margin:g}"} if margin and margin != 0.05 else {}
    return url_for("dashboard.views.edit", slug=slug, **extra)


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
            return redirect(url_for("dashboard.views.edit", slug=survey.slug))
    return _index(form, 422)


@bp.route("/<slug>/edit", methods=["GET", "POST"])
def edit(slug: str):
    stored, role = survey_for(slug, "editor")
    extras = survey_page_extras(stored, role)
    if stored.status != "draft":
        if request.method == "POST":
            # The server refuses, whatever the page showed (docs/design.md, invariant 4).
            message = (f"Survey {slug!r} is {stored.status}: its questions, options and ε are frozen. "
                       "Fix the wording below, or duplicate it as a new draft to change the design.")
            return render_launched(stored, extras, errors=[("frozen", message)], status=409)
        return render_launched(stored, extras)
    form = DesignForm()
    # a question the builder cannot show whole (a randomized-response design) would be saved without it
    unbuildable = [f"question {q.id!r}: {q.qtype.refuses_builder(q)}" for q in stored.survey.questions
                   if q.qtype.refuses_builder(q)]
    if request.method == "POST" and unbuildable:
        fill_from_survey(form, stored.survey, stored.target_n)
        form.form_errors.extend(unbuildable)
        return render_builder(form, stored, status=409, **extras)
    if request.method == "POST":
        form.slug.data = slug  # the slug names the survey; it does not change
        if form.add_question.data or form.action.data:
            return _question_action(form, stored, **extras)
        survey = validated_survey(form, stored.survey.translations)
        if survey is not None:
            # the translations the page posted (checked by validated_survey when edited), else the draft's: what still
            # fits the questions is kept
            kept = stored.survey.translations if form.posted_translations is None else form.posted_translations
            survey, dropped = carry_over(survey, kept)
            try:
                replace_design(get_db(), slug, survey, target_n=form.target_n.data)
            except LifecycleError as exc:
                form.form_errors.append(str(exc))
                return render_builder(form, stored, status=409, **extras)
            flash("Draft saved.", "info")
            if dropped:
                flash(f"Translations that no longer fit the questions were left out: {', '.join(dropped)}.", "info")
            return redirect(_edit_url(slug, form))
        return render_builder(form, stored, status=422, **extras)
    fill_from_survey(form, stored.survey, stored.target_n)
    plan_form = PlanningForm(request.args)
    if plan_form.validate():
        form.margin.data = plan_form.margin.data or 0.05
    else:  # the panels plan for ±0.05; the field shows what was asked and says why
        form.margin.errors = list(plan_form.margin.errors)
        form.margin.raw_data = [request.args.get("margin", "")[:40]]
    form.form_errors.extend(unbuildable)
    return render_builder(form, stored, **extras)


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
        return _attachment(body, "text/csv", filenames.invitations(slug))
    if form.set_mode.data:
        if form.mode.data not in ("invited", "anyone"):
            abort(400, description="mode: must be 'invited' or 'anyone'")
        invitations.set_invitation_only(get_db(), stored.id, form.mode.data == "invited")
        flash("Only people with an invitation link can respond now." if form.mode.data == "invited"
              else "Anyone with the survey address can respond now.", "info")
        return redirect(url_for("dashboard.views.edit", slug=slug))
    abort(400, description="invitations: choose Generate or Save")


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
            return redirect(url_for("dashboard.views.edit", slug=slug), 303)
        flash(f"Shared with {form.email.data.strip()} as {form.role.data}.", "info")
    return redirect(url_for("dashboard.views.edit", slug=slug), 303)


def _attachment(body: str | bytes, mimetype: str, filename: str) -> Response:
    """A download: ``body`` saved as ``filename`` by the browser."""
    return Response(body, mimetype=mimetype, headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@bp.route("/<slug>/definition.json")
def export_definition(slug: str):
    stored, _ = survey_for(slug)
    return _attachment(dumps_definition(stored.survey), "application/json", filenames.definition(slug))


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
    stats = survey_stats(db, stored)
    respondents = respondents_from_counts(db, stored, stats)
    items = question_results(stored.survey, stats, method=form.method.data,
                             confidence=form.confidence_value, simultaneous=form.simultaneous.data,
                             fake=form.fake.data, monitoring=form.monitoring.data, tuned_for=max(stored.target_n, 1))
    names = {ext: filenames.estimates(slug, form.method.data, form.confidence_value, form.simultaneous.data, ext)
             for ext in ("json", "csv")}
    weighting, status = page_weights.weighting_of(request.args, stored, "dashboard.views.results")
    raked = None
    if weighting and weighting.on and not weighting.error:
        raked = page_weights.weighted_results(db, stored, weighting, form.confidence_value)
        status = 400 if raked is None else status
    return render_template("dashboard/results.html", stored=stored, form=form, items=items, role=role,
                           respondents=respondents, share=share_info(stored), estimate_names=names,
                           weighting=weighting, raked=raked), status


@bp.route("/<slug>/report")
def report(slug: str):
    """The methods report: the file ``deniable report`` writes, under its own policy (its inline stylesheet)."""
    stored, _ = survey_for(slug)
    html, policy = render_report(get_readonly_db(), stored)
    return Response(html, mimetype="text/html", headers={"Content-Security-Policy": policy})


@bp.route("/<slug>/crosstab")
def crosstab(slug: str):
    db = get_readonly_db()
    stored, role = survey_for(slug)
    view, status = crosstab_view(db, stored, request.args)
    weighting, weighting_status = page_weights.weighting_of(request.args, stored, "dashboard.views.crosstab")
    if weighting and weighting.on and not weighting.error and view.get("q_row") and view.get("q_col"):
        view["raked"] = page_weights.weighted_crosstab(db, stored, weighting, view["q_row"].id, view["q_col"].id,
                                                       float(view["confidence"]))
        weighting_status = 400 if view["raked"] is None else weighting_status
    return render_template("dashboard/crosstab.html", stored=stored, view=view, role=role,
                           weighting=weighting), max(status, weighting_status)


@bp.route("/<slug>/subgroups")
def subgroups(slug: str):
    db = get_readonly_db()
    stored, role = survey_for(slug)
    view, status = subgroup_view(db, stored, request.args)
    weighting, weighting_status = page_weights.weighting_of(request.args, stored, "dashboard.views.subgroups")
    if weighting and weighting.on and not weighting.error and view.get("q") and view.get("q_by"):
        view["raked"] = page_weights.weighted_subgroups(db, stored, weighting, view["q"].id, view["q_by"].id,
                                                        view["form"].confidence_value)
        weighting_status = 400 if view["raked"] is None else weighting_status
    return render_template("dashboard/subgroups.html", stored=stored, view=view, role=role,
                           weighting=weighting), max(status, weighting_status)


MIMETYPES = {"csv": "text/csv", "json": "application/json", "parquet": "application/vnd.apache.parquet",
             "sav": "application/x-spss-sav", "dta": "application/x-stata-dta"}


@bp.route("/<slug>/export/<any('responses.csv', 'responses.parquet', 'responses.sav', 'responses.dta', "
          "'codebook.json'):name>")
def export_responses(slug: str, name: str):
    """The responses (CSV, Parquet, SPSS, Stata) and their codebook, named as ``deniable export`` names them."""
    survey_for(slug)
    kind, ext = name.split(".")
    if kind == "codebook":  # no row is read for it
        return _attachment(codebook_text(get_readonly_db(), slug), MIMETYPES[ext], filenames.codebook(slug))
    export = load_export(get_readonly_db(), slug)
    return _attachment(export.responses(ext), MIMETYPES[ext], filenames.responses(slug, ext))


@bp.route("/<slug>/export/<any('estimates.json', 'estimates.csv'):name>")
def export_estimates(slug: str, name: str):
    db = get_readonly_db()
    stored, _ = survey_for(slug)
    form = _results_form()
    stats = survey_stats(db, stored)
    results = marginal_estimates(stored.survey, stats, method=form.method.data,
                                 confidence=form.confidence_value, simultaneous=form.simultaneous.data,
                                 monitoring=form.monitoring.data, tuned_for=max(stored.target_n, 1))
    estimates = Estimates(stored.survey, respondents_from_counts(db, stored, stats), results)
    if name.endswith(".json"):
        body, mimetype = estimates_json(estimates), "application/json"
    else:
        body, mimetype = estimates.to_csv(), "text/csv"
    return _attachment(body, mimetype, filenames.estimates(slug, form.method.data, form.confidence_value,
                                                            form.simultaneous.data, name.rsplit(".", 1)[1]))
