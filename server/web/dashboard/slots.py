"""One question slot of the builder, as a definition's question and back, for every question type.

A slot holds the fields of every type (``kind`` says which it is): the text and id, the type's own
fields (:attr:`QuestionType.slot_fields <deniable.server.survey.questions.base.QuestionType.slot_fields>`:
a choice's ``options``, a list experiment's ``items`` and ``sensitive``, a number's ``minimum``,
``maximum``, ``step``, ``mechanism`` and ``grid``), and ``protection`` with ``epsilon``.
:func:`question_dict` reads only the fields of the slot's type, through the type
(:meth:`~deniable.server.survey.questions.base.QuestionType.builder_dict`: in the builder's words, a
number typed as ``1,5`` is 1.5), and raises :class:`DefinitionError` at the field's path, like a
definition file; the definition parser does the rest.  :func:`question_entry` is the inverse
(:meth:`~deniable.server.survey.questions.base.QuestionType.builder_entry`).
"""

from __future__ import annotations

from deniable.client.mechanism import MAX_EPSILON
from deniable.server.survey import questions
from deniable.server.survey.definition import DefinitionError, Question, parse_question
from deniable.server.survey.parsing import parsed
from deniable.server.survey.questions.base import lines as split_lines
from deniable.server.survey.questions.base import typed_number

EPSILON_HINT = f"above 0 and at most {MAX_EPSILON:g}; smaller protects more"
# A definition path's last key → the slot's field that holds it.
FIELDS = {"id": "qid", "text": "text", "options": "options", "epsilon": "epsilon", "required": "required",
          "type": "kind", "min": "minimum", "max": "maximum", "step": "step", "mechanism": "mechanism",
          "grid": "grid", "items": "items", "sensitive": "sensitive", "shuffle": "shuffle",
          "show_if": "show_if_question", "show_if_options": "show_if_options", "page_break": "page_break"}

__all__ = ["EPSILON_HINT", "FIELDS", "kinds", "mechanisms", "question_dict", "question_entry", "slot_question",
           "slot_type", "split_lines", "typed_number"]


def kinds() -> dict[str, str]:
    """Every registered type's name → its label, for the builder's "Question type" choice."""
    return {t.name: t.label[:1].upper() + t.label[1:] for t in questions.all_types()}


def mechanisms() -> dict[str, str]:
    """The choices of the slot's ``mechanism`` field, in words (from the types that have one)."""
    out = {}
    for t in questions.all_types():
        out.update(getattr(t, "mechanism_choices", {}))
    return out


def slot_type(sub):
    """The slot's question type (the default type when ``kind`` names none)."""
    kind = sub.kind.data if sub.kind.data in questions.names() else questions.DEFAULT
    return questions.get(kind)


def question_dict(sub, where: tuple) -> dict:
    """The definition's question for a slot (``sub``, a QuestionForm); ``where`` is its path."""
    qtype = slot_type(sub)
    data = {"id": (sub.qid.data or "").strip(), "text": sub.text.data or "", "required": bool(sub.required.data)}
    protected = sub.protection.data != "direct"
    if qtype.name != questions.DEFAULT:
        data["type"] = qtype.name
    data.update(qtype.builder_dict({name: sub[name].data for name in qtype.slot_fields}, where, protected))
    if sub.shuffle.data and qtype.shuffles:  # a box ticked under another type is not this one's
        data["shuffle"] = True
    condition = (sub.show_if_question.data or "").strip()
    if condition:  # display logic: the definition parser checks the question and the options
        data["show_if"] = {"question": condition, "in": split_lines(sub.show_if_options.data or "")}
    if sub.page_break.data:
        data["page_break"] = True
    # a design's ε is its own, computed from its matrix (a single choice's "design", a two-group question's model)
    if protected and "design" not in data and not getattr(qtype, "epsilon_from_design", False):
        raw = (sub.epsilon.data or "").strip()
        if not raw:
            raise DefinitionError((*where, "epsilon"), f"a protected question needs ε: enter a number such as 1, "
                                  f"or choose “{qtype.direct_choice}”")
        data["epsilon"] = parsed(float, raw.replace(",", "."), lambda exc: DefinitionError(
            (*where, "epsilon"), f"enter a number such as 1, not {raw!r} ({EPSILON_HINT})"))
    return data


def slot_question(sub) -> Question | None:
    """The slot's question if it is complete and valid (for its planning panel), else None."""
    try:
        data = question_dict(sub, ("questions", 0))
        data.update(id="q", text="q")  # the panel needs neither (both may still be blank)
        return parse_question(data, ("questions", 0))
    except DefinitionError:
        return None


def question_entry(q: Question) -> dict:
    """A stored question as the data of one question slot."""
    return {"qid": q.id, "text": q.text, "kind": q.type, "protection": "protected" if q.protected else "direct",
            "epsilon": f"{q.epsilon:g}" if q.protected else "", "required": q.required, "shuffle": q.shuffle,
            "show_if_question": q.show_if.question if q.show_if else "",
            "show_if_options": "\n".join(q.show_if.options) if q.show_if else "", "page_break": q.page_break,
            **q.qtype.builder_entry(q)}
