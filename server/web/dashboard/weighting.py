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

**The other pages, weighted.**  The page that answers the POST links to the results, cross-tab
and subgroups pages with the margins in their address (:func:`rake_query`: ``?rake=`` the JSON of
``MARGINS.json``, ``&trim=LOW,HIGH``) — still nothing stored, no migration: a bookmark or a shared
link shows the same weighted page.  Those pages read them (:func:`page_weighting`), show a
"Weighted by raking to … / Unweighted" switch (``&weighted=0``: the unweighted page, the margins
kept for the way back) with Kish's effective sample size, and the raked numbers:
:func:`weighted_results` (``deniable estimate --rake``'s document), :func:`weighted_subgroups` and
:func:`weighted_crosstab`.  Margins in an address that cannot be used are a 400 naming the field
(``rake``, ``trim``, ``margins.QUESTION.OPTION``) above the unweighted numbers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from flask import Blueprint, render_template, url_for
from flask_wtf import FlaskForm
from wtforms import FloatField, SelectField
from wtforms.validators import NumberRange, Optional

from deniable.estimators.weights import SamplingDesignError
from deniable.server.store.aggregates import pattern_counts
from deniable.server.store.responses import raking_sources
from deniable.server.survey import sampling
from deniable.server.survey.parsing import number_or_none
from deniable.server.survey.strict_json import JSONError, loads

from ..connections import get_db, get_readonly_db
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


def _place(form, error: SamplingDesignError) -> None:
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
    view = {"error": None, "document": None, "estimates": [], "query": None}
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
        except SamplingDesignError as exc:
            view["error"] = str(exc)
            _place(form, exc)
            status = 400
        else:
            view["query"] = rake_query(document, trim)  # the other pages, weighted by the same margins
            document = raked.to_dict()
            view["document"] = document
            view["estimates"] = [(survey.question(record["id"]), record) for record in document["questions"]
                                 if survey.question(record["id"]).protected and "options" in record]
    return render_template("dashboard/weighting.html", stored=stored, role=role, form=form, view=view), status


# ---------------------------------------------------------------- the other pages, weighted

RAKE_ARG_LIMIT = 20_000  # characters of the margins in a URL


@dataclass
class PageWeighting:
    """The margins a results, cross-tab or subgroups page was asked to weight by (its URL's ``rake``,
    ``trim`` and ``weighted``), and the switch between the weighted and the unweighted page."""

    text: str  # the margins' JSON, as in the URL (MARGINS.json of ``deniable estimate --rake``)
    margins: dict  # question id → population shares (parse_margins)
    trim: tuple | None
    trim_text: str | None
    on: bool  # show the weighted numbers (False: the unweighted page, with the switch back)
    weighted_url: str = ""
    unweighted_url: str = ""
    raking: dict | None = None  # sampling.raking_json of the raking, once done
    error: str | None = None
    error_field: str | None = None  # what the error is about (the JSON API names it)

    @property
    def hidden(self) -> dict:
        """The arguments a GET form of the page repeats to stay weighted."""
        return {"rake": self.text, **({"trim": self.trim_text} if self.trim_text else {}),
                **({} if self.on else {"weighted": "0"})}


def rake_query(document: dict, trim: tuple | None) -> dict:
    """The URL arguments that weight a page by ``document`` (``{question: {option: share}}``)."""
    query = {"rake": json.dumps(document, separators=(",", ":"), ensure_ascii=False)}
    if trim is not None:
        query["trim"] = f"{trim[0]:g},{trim[1]:g}"
    return query


def page_weighting(args, survey, endpoint: str, slug: str) -> PageWeighting | None:
    """The page's weighting from its URL (None: no ``rake``); SamplingDesignError naming ``rake``, ``trim`` or
    the margin's field (``margins.QUESTION.OPTION``) for margins the Weighting page would refuse."""
    text = args.get("rake")
    if text is None:
        return None
    if len(text) > RAKE_ARG_LIMIT:
        raise SamplingDesignError(f"rake: the margins are longer than {RAKE_ARG_LIMIT:,} characters", "rake")
    try:
        document = loads(text)
    except JSONError as exc:
        raise SamplingDesignError(f"rake: the margins are not valid JSON ({str(exc)[:120]})", "rake") from None
    margins = sampling.parse_margins(document, survey)
    trim, trim_text = None, args.get("trim") or None
    if trim_text is not None:
        bounds = [number_or_none(x) for x in trim_text.split(",")]
        if len(bounds) != 2 or None in bounds:
            raise SamplingDesignError("trim: give two numbers LOW,HIGH (such as 0.3,3)", "trim")
        low, high = bounds
        if not (math.isfinite(low) and math.isfinite(high) and 0 <= low < high):
            raise SamplingDesignError("trim: the bounds must be 0 ≤ LOW < HIGH (times the mean weight)", "trim")
        trim = (low, high)
    on = args.get("weighted", "1") != "0"
    kept = {k: v for k, v in args.items()  # the page's other selectors (never url_for's own keywords)
            if k not in ("rake", "trim", "weighted", "slug") and not k.startswith("_")}
    weighting = PageWeighting(text=text, margins=margins, trim=trim, trim_text=trim_text, on=on)
    base = {**kept, "rake": text, **({"trim": trim_text} if trim_text else {})}
    weighting.weighted_url = url_for(endpoint, slug=slug, **base)
    weighting.unweighted_url = url_for(endpoint, slug=slug, **base, weighted="0")
    return weighting


def weighting_of(args, stored, endpoint: str) -> tuple[PageWeighting | None, int]:
    """:func:`page_weighting`, its error kept on it (status 400; the page then shows the unweighted numbers)."""
    try:
        return page_weighting(args, stored.survey, endpoint, stored.slug), 200
    except SamplingDesignError as exc:
        empty = PageWeighting(text=args.get("rake", "")[:RAKE_ARG_LIMIT], margins={}, trim=None, trim_text=None,
                              on=False, error=str(exc))
        return empty, 400


def _patterns(db, stored):
    return pattern_counts(db, stored).dataset()


def _with_outside(db, stored) -> tuple:
    """The answer patterns, and what the questions they leave out are raked from: their raking cells
    (:func:`~deniable.server.store.responses.raking_sources`; a survey from before those were kept
    gets them once, through a write connection)."""
    patterns = _patterns(db, stored)
    return patterns, raking_sources(db, stored, patterns, writer=get_db)


def weighted_results(db, stored, weighting: PageWeighting, confidence: float, simultaneous: bool = False) -> dict | None:
    """The results page's raked estimates (``deniable estimate --db FILE SLUG --rake MARGINS.json``'s
    document, :meth:`~deniable.server.survey.raking.Raked.to_dict`), or None with the error on ``weighting``."""
    try:
        patterns, outside = _with_outside(db, stored)
        raked = sampling.raked_estimates(patterns, weighting.margins, trim=weighting.trim, confidence=confidence,
                                         survey=stored.survey, outside=outside, simultaneous=simultaneous)
    except SamplingDesignError as exc:
        weighting.error, weighting.error_field = str(exc), exc.field
        return None
    document = raked.to_dict()
    weighting.raking = document["raking"]
    return document


def weighted_subgroups(db, stored, weighting: PageWeighting, qid: str, by: str, confidence: float) -> dict | None:
    """The subgroups page's raked domain estimates (:func:`~deniable.server.survey.sampling.raked_subgroups`):
    per group its record (:func:`~deniable.server.survey.sampling.question_json`), or None with the error."""
    survey = stored.survey
    try:
        patterns, outside = _with_outside(db, stored)
        sg = sampling.raked_subgroups(patterns, weighting.margins, survey.question(qid), survey.question(by),
                                      trim=weighting.trim, confidence=confidence, survey=survey, outside=outside)
    except SamplingDesignError as exc:
        weighting.error, weighting.error_field = str(exc), exc.field
        return None
    weighting.raking = _raking_summary(sg.raking, sg.n)
    return {"groups": [{"label": label, "not_answered": not_answered, "n": n,
                        "record": sampling.question_json(sg.question, n, result) if result is not None else None}
                       for label, not_answered, n, result in sg.groups]}


def weighted_crosstab(db, stored, weighting: PageWeighting, row: str, col: str, confidence: float) -> dict | None:
    """The cross-tab page's raked joint and conditional shares
    (:func:`~deniable.server.survey.sampling.raked_crosstab_of`), or None with the error."""
    survey = stored.survey
    try:
        ct = sampling.raked_crosstab_of(_patterns(db, stored), weighting.margins, survey.question(row),
                                        survey.question(col), trim=weighting.trim, confidence=confidence,
                                        survey=survey)
    except SamplingDesignError as exc:
        weighting.error, weighting.error_field = str(exc), exc.field
        return None
    weighting.raking = _raking_summary(ct.raking, ct.n)
    r = ct.result
    return {"n": r.n, "method": r.method, "confidence": r.confidence, "effective_n": r.effective_n,
            "cells": sampling.crosstab_cells(ct.row, ct.col, r), "row": ct.row, "col": ct.col, "note": r.note}


def _raking_summary(result, n: int) -> dict:
    return {"n": n, "weights": {"smallest": result.smallest, "largest": result.largest,
                                "effective_n": result.effective_n}}
