"""WTForms for the survey editor; validation goes through :mod:`deniable.server.survey.definition`.

The form is turned into a definition dict and checked by the same functions as a definition
file, so a researcher sees the same messages (``questions[1].epsilon: …``) either way; each
error is put back on the field its path names (:attr:`DefinitionError.path`).  Question slots
left entirely blank are ignored, which is how "add question" works without JavaScript.
"""

from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import (BooleanField, FieldList, FloatField, Form, FormField,
                     RadioField, SelectField, StringField, SubmitField, TextAreaField)
from wtforms.validators import AnyOf, InputRequired, Length, NumberRange, Optional

from deniable.server.survey.definition import DefinitionError, Survey, parse_definition, parse_question

from ..fields import BoundedIntegerField

MAX_TARGET = 100_000_000


class QuestionForm(Form):
    """One question slot (a subform: the outer FlaskForm carries the CSRF token)."""

    qid = StringField("Question id")
    text = TextAreaField("Question text")
    options = TextAreaField("Options (one per line)")
    # Plain string choices: tuples are deprecated in WTForms 3.3, SelectChoice is missing before it.
    protection = RadioField("Asked", choices=["protected", "direct"], default="protected")
    epsilon = StringField("ε (privacy parameter)")
    required = BooleanField("Answer required", default=True)

    def is_blank(self) -> bool:
        return not any((field.data or "").strip() for field in (self.qid, self.text, self.options))


class DesignForm(FlaskForm):
    slug = StringField("Slug (the survey's address: /s/<slug>)")
    title = StringField("Title")
    description = TextAreaField("Description")
    target_n = BoundedIntegerField("Target respondents", default=1000,
                            validators=[InputRequired(), NumberRange(min=1, max=MAX_TARGET)])
    questions = FieldList(FormField(QuestionForm), min_entries=1)
    save = SubmitField("Save draft")
    add_question = SubmitField("Add a question")


class ImportForm(FlaskForm):
    definition = FileField("Survey definition (JSON)", validators=[FileRequired()])
    target_n = BoundedIntegerField("Target respondents", default=1000,
                            validators=[InputRequired(), NumberRange(min=1, max=MAX_TARGET)])
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


class PlanningForm(Form):
    """GET parameters of the planning panel (no CSRF: it changes nothing)."""

    margin = FloatField("Wanted margin of error (±)", default=0.05,
                        # estimators.sample_size needs margin < 0.5 (NumberRange is inclusive)
                        validators=[Optional(), NumberRange(min=0.001, max=0.499)])


def split_options(text: str | None) -> list[str]:
    """One option per line; surrounding blank lines dropped, inner blank lines kept (and refused)."""
    lines = [line.strip() for line in (text or "").replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def fill_from_survey(form: DesignForm, survey: Survey, target_n: int) -> None:
    """Put a stored design into an empty form (plus one blank slot for a new question)."""
    form.slug.data = survey.slug
    form.title.data = survey.title
    form.description.data = survey.description
    form.target_n.data = target_n
    while len(form.questions.entries):
        form.questions.pop_entry()
    for q in survey.questions:
        form.questions.append_entry({
            "qid": q.id, "text": q.text, "options": "\n".join(q.options),
            "protection": "protected" if q.protected else "direct",
            "epsilon": f"{q.epsilon:g}" if q.protected else "", "required": q.required,
        })
    form.questions.append_entry()


def _question_dict(sub: QuestionForm, where: tuple) -> dict:
    data = {"id": (sub.qid.data or "").strip(), "text": sub.text.data or "",
            "options": split_options(sub.options.data), "required": bool(sub.required.data)}
    if sub.protection.data != "direct":
        raw = (sub.epsilon.data or "").strip()
        if not raw:
            raise DefinitionError((*where, "epsilon"), "a protected question needs ε (or ask it directly)")
        try:
            data["epsilon"] = float(raw)
        except ValueError:
            raise DefinitionError((*where, "epsilon"), f"must be a number, got {raw!r}") from None
    return data


def _place(form: DesignForm, error: DefinitionError, slots: list[int]) -> None:
    """Attach ``error`` to the field its path names (``slots`` maps definition index → form entry)."""
    path = error.path
    if path[:1] in (("slug",), ("title",), ("description",)):
        getattr(form, path[0]).errors.append(error.problem)
        return
    if len(path) >= 2 and path[0] == "questions" and isinstance(path[1], int):
        entry = form.questions.entries[slots[path[1]]].form
        sub = path[2] if len(path) > 2 else None
        target = {"id": entry.qid, "text": entry.text, "options": entry.options,
                  "epsilon": entry.epsilon, "required": entry.required}.get(sub)
        (target or entry.qid).errors.append(str(error))
        return
    form.form_errors.append(str(error))


def validated_survey(form: DesignForm) -> Survey | None:
    """Check the whole form through the definition parser; errors land on their fields."""
    if not form.validate():
        return None
    slots = [i for i, entry in enumerate(form.questions.entries) if not entry.form.is_blank()]
    questions, ok = [], True
    for n, slot in enumerate(slots):
        where = ("questions", n)
        try:
            data = _question_dict(form.questions.entries[slot].form, where)
            parse_question(data, where)  # every question's first problem, not only the first question's
            questions.append(data)
        except DefinitionError as exc:
            _place(form, exc, slots)
            ok = False
    if not ok:
        return None
    definition = {"slug": (form.slug.data or "").strip(), "title": form.title.data or "",
                  "description": form.description.data or "", "questions": questions}
    try:
        return parse_definition(definition)
    except DefinitionError as exc:
        _place(form, exc, slots)
        return None
