"""The survey form, built per survey with WTForms.

One :class:`OptionIndexField` per choice question, named by the question id.  For a protected
question it renders as a hidden input that ``survey.js`` fills with the *randomized* option
index; the visible radio buttons are drawn by the template without a ``name``, so the browser
never submits the true answer (docs/design.md, invariant 1).  A direct question's field is the
named radio group itself.  A numeric, check-all-that-apply or list-experiment question is a
:class:`ReportField`: always a hidden input, filled by ``types.js`` with the report (randomized
unless the question is asked directly or is a plain list experiment) in the text form of
:meth:`~deniable.server.survey.questions.base.QuestionType.parse_form`; its visible inputs have no name either.  A ``BaseForm`` (not a declarative class) is used so that a question
id such as ``data`` cannot clash with the form's own attributes; CSRF is checked for every
POST by Flask-WTF's ``CSRFProtect`` and the template adds its ``csrf_token`` field.
"""

from __future__ import annotations

from wtforms.fields import Field
from wtforms.form import BaseForm
from wtforms.widgets import HiddenInput

from deniable.client.mechanism import MechanismError
from deniable.server.store.responses import ReportError
from deniable.server.survey.definition import RESERVED_IDS, Question, Survey

MAX_INDEX_DIGITS = 6


class OptionIndexField(Field):
    """An option index ``0..k−1`` sent as decimal digits; empty means not answered."""

    widget = HiddenInput()

    def __init__(self, label=None, validators=None, *, question: Question, **kwargs):
        super().__init__(label, validators, **kwargs)
        self.question = question

    def process_formdata(self, valuelist):
        self.data = None
        if len(valuelist) > 1:
            raise ValueError(f"{self.question.id}: sent {len(valuelist)} times; send one option index")
        text = valuelist[0] if valuelist else ""
        if text == "":
            return
        k = self.question.k
        if not (text.isascii() and text.isdigit() and len(text) <= MAX_INDEX_DIGITS):
            raise ValueError(f"{self.question.id}: must be an option index 0..{k - 1}, got {text[:20]!r}")
        self.data = int(text)

    def _value(self):
        return "" if self.data is None else str(self.data)


class ReportField(Field):
    """The hidden report of a numeric, multi or list question (its JSON report once parsed)."""

    widget = HiddenInput()

    def __init__(self, label=None, validators=None, *, question: Question, **kwargs):
        super().__init__(label, validators, **kwargs)
        self.question = question
        self.text = ""

    def process_formdata(self, valuelist):
        self.data = None
        if len(valuelist) > 1:
            raise ValueError(f"{self.question.id}: sent {len(valuelist)} times; send one report")
        self.text = valuelist[0] if valuelist else ""
        if self.text == "":
            return
        try:
            self.data = self.question.qtype.parse_form(self.question, self.text)
        except MechanismError as exc:
            raise ValueError(f"{self.question.id}: {exc}") from None

    def _value(self):
        return self.text if self.data is not None else ""


def build_form(survey: Survey, formdata=None) -> BaseForm:
    """Return the survey's form, bound to ``formdata`` (``request.form``) when given."""
    form = BaseForm([(q.id, (OptionIndexField if q.qtype.categorical else ReportField)(q.text, question=q))
                     for q in survey.questions])
    form.process(formdata)
    return form


def unknown_fields(survey: Survey, formdata) -> list[str]:
    """Submitted field names that are neither a question id nor one of the form's own (RESERVED_IDS)."""
    known = {q.id for q in survey.questions} | RESERVED_IDS
    return [name for name in formdata.keys() if name not in known]


def form_reports(survey: Survey, form: BaseForm) -> dict[str, object]:
    """The answered reports ``{qid: option index or JSON report}`` of a processed form; a field that
    did not parse raises :class:`ReportError` naming its question."""
    reports = {}
    for q in survey.questions:
        field = form[q.id]
        if field.process_errors:
            raise ReportError(field.process_errors[0], q.id)
        if field.data is not None:
            reports[q.id] = field.data
    return reports
