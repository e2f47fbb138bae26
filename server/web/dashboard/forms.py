"""WTForms for the survey builder; validation goes through :mod:`deniable.server.survey.definition`.

The form is turned into a definition dict and checked by the same functions as a definition
file; each error is put back, in plain words, on the field its path names
(:attr:`DefinitionError.path`), and :func:`error_summary` lists them all at the top of the page,
each linking to its field ("Question 1, ε: enter a number such as 1").  Question slots left
entirely blank are ignored, which is how "add a question" works without JavaScript; the other
question actions (move, duplicate, delete) are :func:`apply_action`.  A blank address or
question id is derived from the title or the question text (:mod:`.naming`).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import (BooleanField, FieldList, FloatField, Form, FormField, HiddenField,
                     RadioField, SelectField, StringField, SubmitField, TextAreaField)
from wtforms.validators import AnyOf, InputRequired, Length, NumberRange, Optional

from deniable.client.mechanism import MAX_EPSILON
from deniable.server.survey import questions as question_types
from deniable.server.survey.definition import (MAX_CONTACT, MAX_LABEL, MAX_TEXT, DefinitionError, Survey,
                                               field_name, parse_definition, parse_question, text_field)
from deniable.server.survey.translations import parse_translations

from ..fields import BoundedIntegerField
from .naming import question_id, slugify
from .slots import FIELDS, kinds, mechanisms, question_dict, question_entry, slot_type, split_lines

MAX_TARGET = 100_000_000
ACTIONS = ("up", "down", "duplicate", "delete")
MAX_TITLE = 200  # the definition's limit on a title
# Every length limit of the definition, stated next to its field and checked live by builder.js.
LIMITS = {"title": MAX_TITLE, "text": MAX_TEXT, "label": MAX_LABEL, "contact": MAX_CONTACT,
          "information": 10 * MAX_TEXT}
TARGET_MESSAGE = "enter a whole number of respondents between 1 and 100,000,000, such as 1000"
MARGIN_MESSAGE = "enter a margin between 0.001 and 0.499, such as 0.05 (± 5 points)"


class QuestionForm(Form):
    """One question slot (a subform: the outer FlaskForm carries the CSRF token), with the fields of
    every question type (:mod:`.slots`)."""

    # every registered type (a callable: a type registered later is offered too)
    kind = RadioField("Question type", choices=lambda: list(kinds()), default=question_types.DEFAULT)
    text = TextAreaField("Question text")
    qid = StringField("Question id")
    options = TextAreaField("Options")
    items = TextAreaField("Control items")
    sensitive = StringField("Sensitive item")
    minimum = StringField("Smallest answer (min)")
    maximum = StringField("Largest answer (max)")
    step = StringField("Step between answers", default="1")
    mechanism = RadioField("Mechanism", choices=lambda: list(mechanisms()), default="auto")
    grid = StringField("Grid intervals G")
    # Plain string choices: tuples are deprecated in WTForms 3.3, SelectChoice is missing before it.
    protection = RadioField("Asked", choices=["protected", "direct"], default="protected")
    epsilon = StringField("ε (privacy parameter)")
    # a protected single choice: k-ary randomized response at ε, or a randomized-response design and its parameters
    randomization = RadioField("Randomization", choices=lambda: list(randomizations()), default="rr")
    design_p = StringField("p")
    design_forced = TextAreaField("Forced shares p_i")
    design_prevalence = StringField("Known prevalence")
    design_theta_1 = StringField("θ₁ (red share, first option's deck)")
    design_theta_2 = StringField("θ₂ (red share, second option's deck)")
    design_fact = StringField("Private fact (a yes/no question only the respondent knows the answer to)")
    design_range = TextAreaField("Plausible prevalence of the fact (lowest and highest)")
    design_matrix = TextAreaField("Matrix (one line per report)")
    # a two-group design (questions/two_group.py: the labels of the p fields follow the model, edit.html)
    group_model = SelectField("Model", choices=lambda: model_choices(), default="CDM",
                              validate_choice=False)  # another model: the definition parser's message
    group_p1 = StringField("p₁")
    group_p2 = StringField("p₂")
    group_p3 = StringField("p₃")
    group_p4 = StringField("p₄")
    group_share = StringField("Share of respondents in group 1", default="0.5")
    unrelated = StringField("Unrelated question")
    known_prevalence = StringField("Known prevalence (a known-answer item; optional)")
    required = BooleanField("Answer required", default=True)
    shuffle = BooleanField("Show the options in a random order")
    # display logic (the definition's show_if) and pages (page_break); reach is not stored: the panel plans on it
    show_if_question = StringField("Show this question only to respondents whose answer to")
    show_if_options = TextAreaField("was one of")
    reach = StringField("Share of respondents expected to reach it (%)", default="100")
    page_break = BooleanField("Start a new page with this question")

    def is_blank(self) -> bool:
        return not any((field.data or "").strip() for field in (self.qid, self.text, self.options, self.items,
                                                                self.sensitive, self.minimum, self.maximum,
                                                                self.group_p1, self.group_p2, self.unrelated))


def model_choices() -> list[tuple[str, str]]:
    """The choices of the slot's ``group_model`` field, each with its line in words (from the types that have
    models: a two-group design's ``model_choices``)."""
    return [(m, words) for t in question_types.all_types() for m, words in getattr(t, "model_choices", {}).items()]


def randomizations() -> dict[str, str]:
    """The choices of the slot's ``randomization`` field, in words (from the types that have one)."""
    out = {}
    for t in question_types.all_types():
        out.update(getattr(t, "randomization_choices", {}))
    return out


# Plain string choices (see above); the template names them (LANGUAGE_NAMES).
LANGUAGE_NAMES = {"": "The respondent's browser decides", "en": "English", "es": "Español", "fr": "Français"}


class DesignForm(FlaskForm):
    title = StringField("Title")
    slug = StringField("Address (slug)")
    description = TextAreaField("Description")
    information = TextAreaField("Information for respondents (optional)")
    contact = StringField("Contact for questions (optional)")
    consent = BooleanField("Respondents must agree to the information before answering")
    language = SelectField("Language of the survey page", choices=list(LANGUAGE_NAMES), default="")
    target_n = BoundedIntegerField("Target respondents", default=1000,
                                   validators=[InputRequired(TARGET_MESSAGE),
                                               NumberRange(min=1, max=MAX_TARGET, message=TARGET_MESSAGE)])
    # Not stored: the margin the planning panels compute the respondents needed for.
    margin = FloatField("Margin of error to plan for (±)", default=0.05,
                        # estimators.sample_size needs margin < 0.5 (NumberRange is inclusive)
                        validators=[Optional(), NumberRange(min=0.001, max=0.499, message=MARGIN_MESSAGE)])
    # the survey's texts in other languages, as the definition's "translations" object (JSON), checked by
    # translations.parse_translations; a page without the field (a POST that leaves it out) keeps the draft's
    translations = TextAreaField("Translations (JSON)")
    questions = FieldList(FormField(QuestionForm), min_entries=1)
    action = HiddenField()  # set by the question buttons (name="action"), e.g. "up-2"
    save = SubmitField("Save draft")
    add_question = SubmitField("Add a question")


class ImportForm(FlaskForm):
    definition = FileField("Survey definition (JSON)", validators=[FileRequired()])
    target_n = BoundedIntegerField("Target respondents", default=1000,
                                   validators=[InputRequired(TARGET_MESSAGE),
                                               NumberRange(min=1, max=MAX_TARGET, message=TARGET_MESSAGE)])
    submit = SubmitField("Import as a draft")


class InvitationForm(FlaskForm):
    """Invitation links: generate a batch (a CSV download) or switch invitation-only on or off."""

    count = BoundedIntegerField("Number of links", default=100,
                                validators=[Optional(), NumberRange(min=1, max=100_000)])
    generate = SubmitField("Generate links (CSV)")
    mode = StringField("Who may respond", validators=[Optional(), AnyOf(["invited", "anyone"])])
    set_mode = SubmitField("Switch")


class ShareForm(FlaskForm):
    """Share a survey with a researcher (by email) as viewer or editor, or stop sharing."""

    email = StringField("Researcher's email", validators=[Optional(), Length(max=254)])
    role = SelectField("Role", choices=["viewer", "editor"], default="viewer")
    researcher_id = BoundedIntegerField("Researcher", validators=[Optional()])
    share = SubmitField("Share")
    remove = SubmitField("Stop sharing")


class StatusForm(FlaskForm):
    status = SelectField("Status", choices=["open", "closed"])
    submit = SubmitField("Change")


class ActionForm(FlaskForm):
    """A POST with nothing but its CSRF token (duplicate, delete)."""


class PlanningForm(Form):
    """The planning panel's GET parameters (no CSRF: it changes nothing)."""

    margin = FloatField("Margin of error to plan for (±)", default=0.05,
                        validators=[Optional(), NumberRange(min=0.001, max=0.499, message=MARGIN_MESSAGE)])


def split_options(text: str | None) -> list[str]:
    """One option per line (:func:`.slots.split_lines`)."""
    return split_lines(text)


def fill_from_survey(form: DesignForm, survey: Survey, target_n: int) -> None:
    """Put a stored design into an empty form."""
    form.slug.data = survey.slug
    form.title.data = survey.title
    form.description.data = survey.description
    form.information.data = survey.information
    form.contact.data = survey.contact
    form.consent.data = survey.consent
    form.language.data = survey.language or ""
    form.target_n.data = target_n
    form.translations.data = shown_translations(survey.translations)
    _replace_entries(form, [question_entry(q) for q in survey.questions])


def shown_translations(translations: dict) -> str:
    """A survey's translations as the builder's field shows them: indented JSON, or nothing."""
    return json.dumps(translations, indent=2, ensure_ascii=False) if translations else ""


def posted_translations(form: DesignForm) -> dict | None:
    """The translations the page posted (``{}`` when the field was emptied), or None when the POST has no such
    field (the draft's are kept) or its text is not JSON (the error is on the field)."""
    if not form.translations.raw_data:
        return None
    text = (form.translations.data or "").strip()
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
        form.translations.errors.append(f"not valid JSON{where}: {getattr(exc, 'msg', str(exc))}; write an object such as "
                                        '{"es": {"title": "…", "questions": {"drugs": {"text": "…"}}}}')
        return None
    if not isinstance(data, dict):
        form.translations.errors.append('must be a JSON object: a language code (es, fr, en) → that language\'s texts, '
                                        'such as {"es": {"title": "…"}}')
        return None
    return data


def _replace_entries(form: DesignForm, entries: list[dict]) -> None:
    while len(form.questions.entries):
        form.questions.pop_entry()
    for data in entries or [{}]:
        form.questions.append_entry(data)


def apply_action(form: DesignForm) -> str | None:
    """Move, duplicate or delete the question the pressed button names (``action`` = ``up-2``);
    return the id of the button or field to focus on the re-rendered page, or None."""
    name, _, index = (form.action.data or "").partition("-")
    if name not in ACTIONS or not index.isdigit() or int(index) >= len(form.questions.entries):
        return None
    i = int(index)
    entries = [dict(entry.form.data) for entry in form.questions.entries]
    focus = i
    if name == "up" and i > 0:
        entries[i - 1], entries[i] = entries[i], entries[i - 1]
        focus = i - 1
    elif name == "down" and i < len(entries) - 1:
        entries[i + 1], entries[i] = entries[i], entries[i + 1]
        focus = i + 1
    elif name == "duplicate":
        copy = dict(entries[i])
        taken = {e["qid"] for e in entries}
        copy["qid"] = question_id(f"{copy['qid'] or copy['text']} copy", taken) if copy["qid"] or copy["text"] else ""
        entries.insert(i + 1, copy)
        focus = i + 1
    elif name == "delete":
        entries.pop(i)
        focus = min(i, len(entries) - 1)
        _replace_entries(form, entries)
        return f"questions-{max(focus, 0)}-text"
    _replace_entries(form, entries)
    return f"questions-{focus}-{name}" if name in ("up", "down") else f"questions-{focus}-text"


def derive_names(form: DesignForm) -> None:
    """Fill a blank address from the title and blank question ids from their text."""
    if not (form.slug.data or "").strip() and (form.title.data or "").strip():
        form.slug.data = slugify(form.title.data)
    taken = {(entry.form.qid.data or "").strip() for entry in form.questions.entries}
    for entry in form.questions.entries:
        sub = entry.form
        if not (sub.qid.data or "").strip() and (sub.text.data or "").strip():
            sub.qid.data = question_id(sub.text.data, taken)
            taken.add(sub.qid.data)


# What to write when a field the definition needs is left blank, by the path's last key.
BLANK = {"title": f"must not be empty: enter a title, such as “Campus health 2025” (at most {MAX_TITLE} "
                  "characters); the address is made from it",
         "text": "must not be empty: enter the question's text, as respondents will read it (at most "
                 f"{MAX_TEXT:,} characters)"}


def _plain(error: DefinitionError, raw_epsilon: str | None = None) -> str:
    """The problem in the builder's words (the definition file keeps its own, with the path)."""
    if error.path[-1:] == ("epsilon",) and error.problem.startswith("epsilon must be"):
        return f"enter a number above 0 and at most {MAX_EPSILON:g}, such as 1 (got {raw_epsilon})"
    if error.path == ("questions",):
        return "add at least one question (fill in its text and options)"
    if error.problem == "must not be empty" and error.path and error.path[-1] in BLANK:
        return BLANK[error.path[-1]]
    if error.problem.startswith("duplicate label"):
        return f"{error.problem}: each line must differ from the others"
    return error.problem


def _blank_id_of_blank_text(sub) -> bool:
    """The slot has neither text nor id: the id is made from the text, so only the text is reported."""
    return not (sub.text.data or "").strip() and not (sub.qid.data or "").strip()


def _place(form: DesignForm, error: DefinitionError, slots: list[int]) -> None:
    """Attach ``error`` to the field its path names (``slots`` maps definition index → form entry)."""
    path = error.path
    if path[:1] in (("slug",), ("title",), ("description",), ("information",), ("contact",), ("consent",),
                    ("language",)):
        getattr(form, path[0]).errors.append(_plain(error))
        return
    if len(path) >= 2 and path[0] == "questions" and isinstance(path[1], int):
        entry = form.questions.entries[slots[path[1]]].form
        sub = path[2] if len(path) > 2 else None
        if sub == "design":  # a design's parameter on its field, anything else on the randomization
            key = path[3] if len(path) > 3 else None
            slots_of = getattr(slot_type(entry), "design_slots", {})
            problem = _plain(error)
            if len(path) > 4 and isinstance(path[4], int) and key == "forced":
                problem = f"share {path[4] + 1} (option {path[4] + 1}): {problem}"
            if key == "matrix":  # the parser counts columns from 0 beside the answer from 1: the builder counts from 1
                problem = re.sub(r"^column \d+ \(answer (\d+)\)", r"column \1 (option \1)", problem)
            if len(path) > 5 and isinstance(path[4], int) and isinstance(path[5], int) and key == "matrix":
                problem = f"row {path[4] + 1} (report {path[4] + 1}), number {path[5] + 1} (option {path[5] + 1}): {problem}"
            entry[slots_of[key] if key in slots_of else "randomization"].errors.append(problem)
            return
        if sub == "show_if" and len(path) > 3 and path[3] == "in":  # a condition's options, on their own field
            sub = "show_if_options"
        slot_of = getattr(slot_type(entry), "slot_of", None)  # a type's own fields (a two-group design's)
        if slot_of and slot_of(path[2:]):
            entry[slot_of(path[2:])].errors.append(_plain(error))
            return
        target = entry[FIELDS[sub]] if sub in FIELDS else None
        problem = _plain(error, (entry.epsilon.data or "").strip())
        if sub in ("options", "items", "show_if_options") and len(path) > 3 and isinstance(path[-1], int):
            problem = f"{'item' if sub == 'items' else 'option'} {path[-1] + 1}: {problem}"
        (target or entry.text).errors.append(problem)
        return
    form.form_errors.append(_plain(error))


def validated_survey(form: DesignForm, kept: dict | None = None) -> Survey | None:
    """Check the whole form through the definition parser; errors land on their fields.

    A blank title is reported on the title (not on the address made from it), and a blank question
    text on the text (not on the id made from it, which stands in as ``q1``, ``q2``…): the
    questions are still checked in the same round trip.
    """
    derive_names(form)
    form.posted_translations = None
    valid = form.validate()  # (resets every field's errors: the translations' are checked after it)
    posted = posted_translations(form)
    if not valid:
        return None
    slots = [i for i, entry in enumerate(form.questions.entries) if not entry.form.is_blank()]
    blank_title = not (form.title.data or "").strip()
    ok = not blank_title
    if blank_title:
        form.title.errors.append(BLANK["title"])
    for name in ("title", "description", "information", "contact"):  # each on its own: the summary lists every error
        try:
            if not (name == "title" and blank_title):
                text_field(getattr(form, name).data or "", (name,), max_len=LIMITS.get(name, MAX_TEXT), allow_empty=True)
        except DefinitionError as exc:
            _place(form, exc, slots)
            ok = False
    questions = []
    for n, slot in enumerate(slots):
        where = ("questions", n)
        sub = form.questions.entries[slot].form
        try:
            data = question_dict(sub, where)
            if _blank_id_of_blank_text(sub):
                data["id"] = f"q{n + 1}"  # a stand-in: the text's error is the one to show
            parse_question(data, where)  # every question's first problem, not only the first question's
            questions.append(data)
        except DefinitionError as exc:
            _place(form, exc, slots)
            ok = False
    if not ok or form.translations.errors:
        return None
    definition = {"slug": (form.slug.data or "").strip(), "title": form.title.data or "",
                  "description": form.description.data or "", "information": form.information.data or "",
                  "contact": form.contact.data or "", "consent": bool(form.consent.data),
                  "questions": questions}
    if form.language.data:
        definition["language"] = form.language.data
    try:
        survey = parse_definition(definition)
    except DefinitionError as exc:
        _place(form, exc, slots)
        return None
    form.posted_translations = posted
    # translations edited on the page (or a new survey's) get the import's checks, each error on the field with its
    # path; the draft's own, unchanged, are carried over by the caller (what no longer fits is left out, and said)
    if posted and posted != (kept or {}):
        try:
            survey = replace(survey, translations=parse_translations(posted, survey))
        except DefinitionError as exc:
            form.translations.errors.append(f"{field_name(exc.path[1:]) or 'translations'}: {exc.problem}")
            return None
    return survey


LABELS = {"translations": "Translations", "slug": "Address", "title": "Title", "description": "Description", "information": "Information",
          "contact": "Contact", "consent": "Agreement", "language": "Language", "target_n": "Target respondents",
          "margin": "Margin to plan for"}
QUESTION_LABELS = {"kind": "type", "text": "text", "options": "options", "items": "control items",
                   "sensitive": "sensitive item", "minimum": "min", "maximum": "max", "step": "step",
                   "mechanism": "mechanism", "grid": "G", "protection": "asked", "epsilon": "ε",
                   "randomization": "randomization", "design_p": "p", "design_forced": "forced shares p_i",
                   "design_prevalence": "known prevalence", "design_theta_1": "θ₁", "design_theta_2": "θ₂",
                   "design_fact": "private fact", "design_range": "plausible prevalence", "design_matrix": "matrix",
                   "group_model": "model", "group_p1": "p₁", "group_p2": "p₂", "group_p3": "p₃", "group_p4": "p₄",
                   "group_share": "group 1 share", "unrelated": "unrelated question",
                   "known_prevalence": "known prevalence (known-answer item)",
                   "qid": "id", "required": "required", "shuffle": "random order",
                   "show_if_question": "shown only if", "show_if_options": "shown only if … was one of",
                   "page_break": "new page"}
WTFORMS_WORDS = {"Not a valid integer value.": TARGET_MESSAGE, "Not a valid float value.": MARGIN_MESSAGE,
                 "This field is required.": "fill this in"}


def error_summary(form: DesignForm) -> list[tuple[str, str]]:
    """Every problem of the form as ``(field id, "Where: what to do")``, in the order of the page."""
    out = [("design-form", f"Survey: {problem}") for problem in form.form_errors]
    for name in ("title", "slug", "description", "information", "contact", "consent", "language", "translations",
                 "target_n", "margin"):
        field = getattr(form, name)
        out += [(field.id, f"{LABELS[name]}: {WTFORMS_WORDS.get(e, e)}") for e in field.errors]
    for number, entry in enumerate(form.questions.entries, start=1):
        for name, label in QUESTION_LABELS.items():
            field = entry.form[name]
            out += [(field.id, f"Question {number}, {label}: {WTFORMS_WORDS.get(e, e)}") for e in field.errors]
    return out
