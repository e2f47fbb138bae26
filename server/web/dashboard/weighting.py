"""The Weighting page: raking a survey's respondents to population margins of questions asked directly.

The researcher enters, per single-choice question asked directly, the population's share of each
option (a WTForms form, one field per option); the POST rakes the respondents to them and shows the
achieved margins, the weights' range, the Kish effective sample size and the weighted estimates of
every protected single-choice question beside the unweighted ones.  Nothing is stored: the margins
travel in the posted form and the page that answers the POST shows the numbers (no migration, no
table); posting the same form again shows them again.  The numbers are
:func:`deniable.server.survey.sampling.raked_estimates` on the answer patterns
(:func:`deniable.server.store.aggregates.pattern_counts`, kept current on every insert; rows are
never read) — what ``deniable estimate --db FILE SLUG --rake MARGINS.json`` prints.  Bad input
(a share that is not a number, shares that do not add up to 1, an option with a share that nobody
chose, bounds that cannot be kept) is a 400 with the error on its field; a researcher without a
role on the survey gets a 404 (:func:`.permissions.survey_for`).
"""

from __future__ import annotations

from flask import Blueprint, render_template
from flask_wtf import FlaskForm
from wtforms import FloatField, SelectField
from wtforms.validators import NumberRange, Optional

from deniable.estimators.weights import DesignError
from deniable.server.store.aggregates import pattern_counts
from deniable.server.survey import sampling

from ..connections import get_readonly_db
from .permissions import survey_for
from .results import CONFIDENCES

bp = Blueprint("weighting", __name__, url_prefix="/dashboard")


def _name(qi: int, j: int) -> str:
    return f"share_{qi}_{j}"


def margins_form(survey):
    """A form with one share field per option of every question that may weight, the trimming bounds
    and the confidence; ``groups``: per question, its fields."""

    class MarginsForm(FlaskForm):
        trim_low = FloatField("Lowest weight (× the mean)", validators=[Optional(), NumberRange(min=0)])
        trim_high = FloatField("Highest weight (× the mean)", validators=[Optional(), NumberRange(min=0)])
        confidence = SelectField("Confidence", choices=CONFIDENCES, default="0.95")

    questions = [q for q in survey.questions if sampling.rakeable(q)]
    for qi, q in enumerate(questions):
        for j, label in enumerate(q.options):
            setattr(MarginsForm, _name(qi, j), FloatField(label, validators=[Optional()]))
    form = MarginsForm()
    form.groups = [(q, [form[_name(qi, j)] for j in range(q.k)]) for qi, q in enumerate(questions)]
    return form


def _document(form) -> dict:
    """The margins the form gives, as :func:`~deniable.server.survey.sampling.parse_margins` reads them: a
    question with every share blank is left out; a blank share of a question given is 0."""
    out = {}
    for q, fields in form.groups:
        if all(f.data is None for f in fields):
            continue
        out[q.id] = {label: (f.data if f.data is not None else 0.0) for label, f in zip(q.options, fields)}
    return out


def _place(form, error: DesignError) -> None:
    """Put the error on the field its path names (``margins.QUESTION.OPTION``), or on the question's first
    field (``margins.QUESTION``); ``trim`` on the bounds."""
    if error.field == "trim":
        form.trim_low.errors = [*form.trim_low.errors, str(error)]
        return
    parts = (error.field or "").split(".", 2)
    for q, fields in form.groups:
        if len(parts) >= 2 and parts[1] == q.id:
            index = q.options.index(parts[2]) if len(parts) == 3 and parts[2] in q.options else 0
            fields[index].errors = [*fields[index].errors, str(error)]
            return


@bp.route("/<slug>/weighting", methods=["GET", "POST"])
def weighting(slug: str):
    stored, role = survey_for(slug)
    survey = stored.survey
    form = margins_form(survey)
    view = {"error": None, "document": None, "estimates": []}
    status = 200
    if form.is_submitted():
        if not form.validate():
            view["error"] = "Correct the fields marked below."
            return render_template("dashboard/weighting.html", stored=stored, role=role, form=form, view=view), 400
        trim = None
        if form.trim_low.data is not None or form.trim_high.data is not None:
            low, high = form.trim_low.data, form.trim_high.data
            if low is None or high is None or not low < high:
                form.trim_low.errors = ["trim: give both bounds, the lowest below the highest (such as 0.3 and 3)"]
                view["error"] = "Correct the fields marked below."
                return render_template("dashboard/weighting.html", stored=stored, role=role, form=form,
                                       view=view), 400
            trim = (low, high)
        document = _document(form)
        if not document:
            view["error"] = "Enter the population's shares of the options of at least one question."
            return render_template("dashboard/weighting.html", stored=stored, role=role, form=form, view=view), 400
        try:
            margins = sampling.parse_margins(document, survey)
            dataset = pattern_counts(get_readonly_db(), stored).dataset()
            raked = sampling.raked_estimates(dataset, margins, trim=trim, confidence=float(form.confidence.data),
                                             survey=survey)
        except DesignError as exc:
            view["error"] = str(exc)
            _place(form, exc)
            status = 400
        else:
            document = sampling.raked_document(raked)
            view["document"] = document
            view["estimates"] = [(survey.question(record["id"]), record) for record in document["questions"]
                                 if survey.question(record["id"]).protected and "options" in record]
    return render_template("dashboard/weighting.html", stored=stored, role=role, form=form, view=view), status
