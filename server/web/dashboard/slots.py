"""One question slot of the builder, as a definition's question and back, for every question type.

A slot holds the fields of every type (``kind`` says which it is): the text and id, ``options``
(a choice's labels, a check-all-that-apply question's options), ``items`` and ``sensitive`` (a list
experiment's control items and sensitive item), ``minimum``, ``maximum``, ``step``, ``mechanism``
and ``grid`` (a numeric question), and ``protection`` with ``epsilon``.  :func:`question_dict`
reads only the fields of the slot's type, in the builder's words (a number typed as ``1,5``
is 1.5), and raises :class:`DefinitionError` at the field's path, like a definition file; the
definition parser does the rest.  A numeric question's ``mechanism`` "auto" leaves the choice to
the planner (:func:`deniable.estimators.plan_numeric`), as a definition without one does.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from deniable.client.mechanism import MAX_EPSILON
from deniable.estimators.numeric import plan_numeric
from deniable.server.survey.questions.base import decimal_text
from deniable.server.survey.definition import DefinitionError, Question, parse_question

KINDS = {"choice": "Single choice", "numeric": "Number", "multi": "Check all that apply", "list": "List experiment"}
MECHANISMS = {"auto": "the planner's choice", "grid": "grid randomized response", "laplace": "discrete Laplace"}
EPSILON_HINT = f"above 0 and at most {MAX_EPSILON:g}; smaller protects more"
# A definition path's last key → the slot's field that holds it.
FIELDS = {"id": "qid", "text": "text", "options": "options", "epsilon": "epsilon", "required": "required",
          "type": "kind", "min": "minimum", "max": "maximum", "step": "step", "mechanism": "mechanism",
          "grid": "grid", "items": "items", "sensitive": "sensitive"}


def split_lines(text: str | None) -> list[str]:
    """One option per line; surrounding blank lines dropped, inner blank lines kept (and refused)."""
    lines = [line.strip() for line in (text or "").replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def typed_number(raw: str | None, path: tuple, what: str) -> int | float:
    """A number typed in the builder (``1,5`` is 1.5) as the definition's int or float."""
    text = (raw or "").strip().replace(",", ".")
    if not text:
        raise DefinitionError(path, f"enter {what}")
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite() or abs(value) > Decimal(10) ** 12:
        raise DefinitionError(path, f"enter a number such as {what.split()[-1]}, not {text[:40]!r}")
    return int(value) if value == value.to_integral_value() else float(value)


def _numeric(sub, where: tuple, protected: bool) -> dict:
    data = {"min": typed_number(sub.minimum.data, (*where, "min"), "the smallest possible answer, such as 0"),
            "max": typed_number(sub.maximum.data, (*where, "max"), "the largest possible answer, such as 40")}
    if (sub.step.data or "").strip():
        data["step"] = typed_number(sub.step.data, (*where, "step"), "the step between answers, such as 1")
    method = sub.mechanism.data or "auto"
    if protected and method != "auto":
        data["mechanism"] = method
        raw = (sub.grid.data or "").strip()
        if method == "grid" and raw:
            if not raw.isdigit() or len(raw) > 6:
                raise DefinitionError((*where, "grid"), f"enter a whole number such as 1, not {raw[:20]!r} "
                                      "(G must divide the number of steps from min to max)")
            data["grid"] = int(raw)
    return data


def question_dict(sub, where: tuple) -> dict:
    """The definition's question for a slot (``sub``, a QuestionForm); ``where`` is its path."""
    kind = sub.kind.data if sub.kind.data in KINDS else "choice"
    data = {"id": (sub.qid.data or "").strip(), "text": sub.text.data or "", "required": bool(sub.required.data)}
    protected = sub.protection.data != "direct"
    if kind != "choice":
        data["type"] = kind
    if kind in ("choice", "multi"):
        data["options"] = split_lines(sub.options.data)
    elif kind == "list":
        data.update(items=split_lines(sub.items.data), sensitive=sub.sensitive.data or "")
    else:
        data.update(_numeric(sub, where, protected))
    if protected:
        raw = (sub.epsilon.data or "").strip()
        if not raw:
            other = "plain (not protected by ε)" if kind == "list" else "directly (not protected)"
            raise DefinitionError((*where, "epsilon"), f"a protected question needs ε: enter a number such as 1, "
                                  f"or choose “{other}”")
        try:
            data["epsilon"] = float(raw.replace(",", "."))
        except ValueError:
            raise DefinitionError((*where, "epsilon"), f"enter a number such as 1, not {raw!r} ({EPSILON_HINT})") from None
    return data


def slot_question(sub) -> Question | None:
    """The slot's question if it is complete and valid (for its planning panel), else None."""
    try:
        data = question_dict(sub, ("questions", 0))
        data.update(id="q", text="q")  # the panel needs neither (both may still be blank)
        return parse_question(data, ("questions", 0))
    except DefinitionError:
        return None


def _mechanism_shown(q: Question) -> tuple[str, str]:
    """A stored numeric question's mechanism as the builder shows it: "auto" when it is the planner's choice."""
    if not q.protected:
        return "auto", ""
    best = plan_numeric(q.steps, q.epsilon, 1000)[0]
    if (best.mechanism, best.grid if best.mechanism == "grid" else None) == (q.method, q.grid):
        return "auto", ""
    return q.method, str(q.grid) if q.method == "grid" else ""


def question_entry(q: Question) -> dict:
    """A stored question as the data of one question slot."""
    entry = {"qid": q.id, "text": q.text, "kind": q.type, "protection": "protected" if q.protected else "direct",
             "epsilon": f"{q.epsilon:g}" if q.protected else "", "required": q.required}
    if q.type == "list":
        entry.update(items="\n".join(q.options), sensitive=q.sensitive)
    elif q.type == "numeric":
        mechanism, grid = _mechanism_shown(q)
        entry.update(minimum=decimal_text(q.minimum), maximum=decimal_text(q.maximum), step=decimal_text(q.step),
                     mechanism=mechanism, grid=grid)
    else:
        entry["options"] = "\n".join(q.options)
    return entry
