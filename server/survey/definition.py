"""Survey definitions (docs/design.md, "Formats"): parse, validate, and serialize.

A definition is ``{"slug", "title", "description", "questions": [...]}``; a question is
``{"id", "text", "type", "epsilon", "required", ...}`` with, by ``type``:

- ``"choice"`` (the default): ``"options"``, one answer among 2–64 labels (k-ary randomized
  response);
- ``"numeric"``: ``"min"``, ``"max"``, ``"step"`` (default 1; ``(max − min)/step`` a whole number of
  1–1000 steps), ``"mechanism"`` (``"grid"`` or ``"laplace"``) and, for the grid, ``"grid"`` (G, a
  divisor of the steps).  Without a mechanism the planner's choice is written in
  (:func:`deniable.estimators.plan_numeric`: grid randomized response with G = 1, the least
  worst-case variance of the mean);
- ``"multi"``: ``"options"`` (2–20), any subset ticked (each tick randomized at ε/K);
- ``"list"``: ``"items"`` (1–10 control items) and ``"sensitive"``; without ε it is a plain list
  experiment, "not protected by ε".

A question without ``epsilon`` (or with ``null``) is asked directly and is not protected.
``required`` defaults to true.  ``"shuffle": true`` on a question whose type allows it (a choice or a
check-all question, :attr:`QuestionType.shuffles <.questions.base.QuestionType.shuffles>`) shows its
options in a new random order to each respondent (drawn in the browser, sent and stored nowhere: the
report is still the option's place in ``options``).  ``"show_if": {"question": QID, "in": [labels]}`` shows a
question only to respondents whose answer to the earlier question QID, asked directly (a single choice, or
a check-all question: "any of" the labels ticked), is one of the labels (display and skip logic,
:mod:`.logic`); a hidden question is not asked, not sent and not required.  ``"page_break": true``
starts a new page of the survey page at the question.  Optional keys for the respondents' page: ``information`` (what
the study is, shown before the questions), ``contact`` (who to ask), ``consent`` (true:
respondents tick "I agree to take part" before sending), ``language`` (``en``, ``es`` or
``fr``; default: the respondent's browser's) and ``translations``: the texts in other languages
(:mod:`.translations`).

A codebook (:mod:`.codebook`) is a definition with what the export was made under: each
question's ``randomization`` and the survey's ``design_fingerprint``; when present they are
checked against the questions, so an edited ε is refused instead of silently giving wrong
estimates.

Every problem raises :class:`DefinitionError`, which carries the field it is about as a path
(``("questions", 1, "epsilon")``) and reads ``questions[1].epsilon: …``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import weakref
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path

from deniable.client.mechanism import MechanismError, mechanism

from deniable.errors import FieldError, sent

from . import strict_json
from .questions import registry
from .spreadsheet import spreadsheet_safe

# Matched whole (fullmatch): "$" would accept a trailing newline.
SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
QUESTION_ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
MAX_QUESTIONS = 100
MAX_OPTIONS = 64
MAX_TEXT = 2000
MAX_LABEL = 200
MAX_CONTACT = 500
LANGUAGES = ("en", "es", "fr")
SURVEY_KEYS = {"slug", "title", "description", "questions", "information", "contact", "consent", "language",
               "translations",  # the texts in other languages (.translations)
               # written into codebooks (.codebook) and checked on the way back in
               "design_fingerprint", "text_versions", "text_versions_note", "sampling"}
CODEBOOK_KEYS = {"randomization", "asked_of", "not_asked"}  # a codebook's question: what its reports were made under
QUESTION_KEYS = {"id", "text", "epsilon", "required", "shuffle", "show_if", "page_break"} | CODEBOOK_KEYS  # every type's; each type adds its own
# Names the survey page's form uses for itself; a question with such an id would shadow them.
RESERVED_IDS = {"csrf_token", "invitation"}


def field_name(path: tuple) -> str:
    """Render a field path: ``("questions", 1, "epsilon") → "questions[1].epsilon"``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class DefinitionError(FieldError):
    """A survey definition is malformed.

    ``path`` is the field as a tuple (``("questions", 1, "epsilon")``; empty for the whole
    text), ``problem`` what is wrong with it, ``source`` the file it came from (if any);
    ``str()`` is one line ``[source: ]field: problem``.
    """

    def __init__(self, path: tuple, problem: str, *, source: str | None = None):
        self.path, self.problem, self.source = tuple(path), problem, source
        parts = [p for p in (source, field_name(self.path), problem) if p]
        super().__init__(": ".join(parts))

    @property
    def field(self) -> str:
        return field_name(self.path)

    def from_source(self, source: str) -> DefinitionError:
        """The same error, said of the file ``source``."""
        return DefinitionError(self.path, self.problem, source=source)


def number(value: Decimal) -> int | float:
    """A definition's number for JSON: an int when whole, else the float of its shortest decimal."""
    return int(value) if value == value.to_integral_value() else float(value)


@dataclass(frozen=True)
class Condition:
    """A question's ``show_if``: it is asked only of respondents whose direct answer to ``question`` is
    one of ``options`` (labels; a check-all question: any of them ticked)."""

    question: str
    options: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"question": self.question, "in": list(self.options)}


@dataclass(frozen=True)
class Question:
    """One question.  ``options`` are a choice's labels, a multi's options or a list's control items;
    what the other fields mean, and everything type-specific, is the question's type's
    (``qtype``, :mod:`.questions`)."""

    id: str
    text: str
    options: tuple[str, ...] = ()
    epsilon: float | None = None
    required: bool = True
    type: str = registry.DEFAULT
    minimum: Decimal | None = None  # numeric
    maximum: Decimal | None = None
    step: Decimal | None = None
    method: str | None = None  # numeric: "grid" or "laplace" (None when asked directly); two_group: its design
    # (model, p, group share) as canonical JSON (questions/two_group.py)
    grid: int | None = None  # numeric grid: G
    sensitive: str | None = None  # list: the sensitive item; two_group (UQTunknown): the unrelated question
    design: str | None = None  # choice: a randomized-response design, as canonical JSON (its type reads it)
    shuffle: bool = False  # the options shown in a random order per respondent (the page only)
    show_if: Condition | None = None  # asked only of respondents whose earlier direct answer fits
    page_break: bool = False  # the survey page starts a new page at this question

    @property
    def qtype(self):
        """The question's type (:class:`.questions.base.QuestionType`): what every surface asks (a
        question with a ``design``, its type's variant for designs)."""
        qtype = registry.get(self.type)
        return qtype if self.design is None else qtype.designed

    @functools.cached_property
    def k(self) -> int:
        """Options of a choice or multi question, answers of a numeric one, counts 0..J + 1 of a list."""
        return self.qtype.k(self)

    @property
    def steps(self) -> int:
        """A numeric question's m = (max − min)/step."""
        return int((self.maximum - self.minimum) / self.step)

    @property
    def protected(self) -> bool:
        return self.epsilon is not None

    @functools.cached_property
    def mechanism(self):
        """The realized parameters (for a direct question, ``p = 1``), computed once per question."""
        return self.qtype.mechanism(self)

    def value(self, index) -> Decimal:
        """A numeric question's answer for an answer index (``min + index · step``)."""
        return self.minimum + self.step * index

    def to_dict(self) -> dict:
        data = {"id": self.id, "text": self.text, **self.qtype.to_dict(self)}
        if not self.required:
            data["required"] = False
        if self.shuffle:
            data["shuffle"] = True
        if self.show_if is not None:
            data["show_if"] = self.show_if.to_dict()
        if self.page_break:
            data["page_break"] = True
        return data


@dataclass(frozen=True)
class Survey:
    slug: str
    title: str
    description: str
    questions: tuple[Question, ...]
    information: str = ""  # shown to respondents before the questions (consent / information sheet)
    contact: str = ""  # who respondents can ask (shown on the survey and thank-you pages)
    consent: bool = False  # respondents tick "I agree to take part" before they can send
    language: str | None = None  # "en", "es" or "fr"; None: the respondent's browser's
    # language → its texts (.translations.parse_translations): words only, never in the design fingerprint
    translations: dict = field(default_factory=dict, hash=False)

    @property
    def total_epsilon(self) -> float:
        """Privacy cost per respondent by basic composition: the sum of the protected questions'
        *realized* ε (never above the declared sum).  A plain list experiment has no ε: it is
        labelled "not protected by ε", like a question asked directly."""
        return sum(q.mechanism.epsilon for q in self.questions if q.protected)

    def only(self, question_ids) -> Survey:
        """The same survey with only these questions (in the survey's order)."""
        keep = set(question_ids)
        return replace(self, questions=tuple(q for q in self.questions if q.id in keep))

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(question_id)

    def to_dict(self) -> dict:
        data = {"slug": self.slug, "title": self.title, "description": self.description}
        for key in ("information", "contact", "consent", "language"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        data["questions"] = [q.to_dict() for q in self.questions]
        if self.translations:
            data["translations"] = json.loads(json.dumps(self.translations))  # a copy the caller may change
        return data


def per_survey(derive):
    """Memoize ``derive(survey)`` by the survey object's identity.

    A :class:`Survey` is frozen, so what is derived from it holds as long as the object lives; the
    submission path derives the same things for every response of a survey, and hashing a frozen
    survey (every question) would cost more than deriving them.  At most 256 surveys are held."""
    held: dict[int, tuple] = {}

    @functools.wraps(derive)
    def derived(survey: Survey):
        found = held.get(id(survey))
        if found is None or found[0]() is not survey:  # a survey since gone may have left its id to another
            if len(held) >= 256:
                held.clear()
            found = held[id(survey)] = (weakref.ref(survey), derive(survey))
        return found[1]

    return derived


def design_fingerprint(survey: Survey) -> str:
    """A short hash of what a survey's reports mean: each question's id, k, ε, threshold and
    whether it is required (and, beyond a choice, its type, numeric mechanism and grid), in order
    — not the wording, which may be fixed after opening.

    The codebook states it and the responses CSV repeats it, so a pair that does not belong
    together is noticed (``deniable estimate``).
    """
    design = [[q.id, q.k, q.epsilon, q.mechanism.threshold if q.protected else None, q.required,
               *q.qtype.design(q)]
              for q in survey.questions]
    digest = hashlib.sha256(json.dumps(design, separators=(",", ":")).encode("utf-8")).hexdigest()
    return f"sha256:{digest[:16]}"


def text_field(value, path: tuple, *, max_len: int, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise DefinitionError(path, f"must be a string, got {sent(value)}")
    value = value.strip()
    if not value and not allow_empty:
        raise DefinitionError(path, "must not be empty")
    if len(value) > max_len:
        raise DefinitionError(path, f"must be at most {max_len} characters")
    return value


def _unknown_keys(data: dict, allowed: set[str], path: tuple) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        raise DefinitionError(path, f"unknown key {extra[0]!r} (allowed: {', '.join(sorted(allowed))})")


def parse_epsilon(value, k: int, path: tuple) -> float:
    """Return a protected question's declared ε, or raise DefinitionError (``path`` is its field)."""
    try:
        return mechanism(k, value).declared_epsilon
    except MechanismError as exc:
        raise DefinitionError(path, str(exc)) from None


def labels_field(values, path: tuple, low: int, high: int, what: str) -> tuple[str, ...]:
    """Validate a list of 2..MAX labels: strings, distinct, not alike once written to CSV."""
    if not isinstance(values, list):
        raise DefinitionError(path, f"must be a list of {what}")
    if not low <= len(values) <= high:
        raise DefinitionError(path, f"needs between {low} and {high} {what}, got {len(values)}")
    labels = tuple(text_field(o, (*path, i), max_len=MAX_LABEL) for i, o in enumerate(values))
    seen = {}
    for i, label in enumerate(labels):
        if label in seen:
            raise DefinitionError((*path, i), f"duplicate label {label!r}")
        seen[label] = i
    for i, label in enumerate(labels):
        safe = spreadsheet_safe(label)
        if safe != label and safe in seen:  # the export writes this label as `safe`: ambiguous
            raise DefinitionError((*path, i), f"label {label!r} is written {safe!r} in CSV "
                                  f"exports (so spreadsheets do not run it), which is another option's label")
    return labels


def parse_question(data, where: tuple = ()) -> Question:
    """Validate one question object; ``where`` is its place (``("questions", 0)``) in error paths."""
    if not isinstance(data, dict):
        raise DefinitionError(where, "must be an object")
    name = data.get("type", registry.DEFAULT)
    if name not in registry.names():
        raise DefinitionError((*where, "type"), f"must be one of {', '.join(registry.names())}, got {sent(name)}"[:120])
    qtype = registry.get(name)
    _unknown_keys(data, QUESTION_KEYS | qtype.keys, where)
    for key in ("id", "text", *qtype.needed):
        if key not in data:
            raise DefinitionError((*where, key), "is required")
    qid = data["id"]
    if not isinstance(qid, str) or not QUESTION_ID_RE.fullmatch(qid):
        raise DefinitionError((*where, "id"),
                              f"must be a letter or _ followed by letters, digits or _ (at most 63), got {sent(qid)}")
    if qid in RESERVED_IDS:
        raise DefinitionError((*where, "id"), f"{qid!r} is reserved for the survey form; choose another id")
    text = text_field(data["text"], (*where, "text"), max_len=MAX_TEXT)
    required = data.get("required", True)
    if not isinstance(required, bool):
        raise DefinitionError((*where, "required"), "must be true or false")
    shuffle = parse_shuffle(data.get("shuffle", False), qtype, qid, (*where, "shuffle"))
    show_if = parse_show_if(data["show_if"], (*where, "show_if")) if "show_if" in data else None
    page_break = data.get("page_break", False)
    if not isinstance(page_break, bool):
        raise DefinitionError((*where, "page_break"), f"question {qid!r}: must be true or false, got {sent(page_break)}"[:160])
    fields = qtype.parse(data, where, data.get("epsilon"))
    question = Question(id=qid, text=text, required=required, type=name, shuffle=shuffle, show_if=show_if,
                        page_break=page_break, **fields)
    if "randomization" in data:
        check_randomization(question, data["randomization"], (*where, "randomization"))
    return question


def parse_shuffle(value, qtype, qid: str, path: tuple) -> bool:
    """A question's ``shuffle``: true or false, and true only where its type shows options to shuffle."""
    if not isinstance(value, bool):
        raise DefinitionError(path, f"question {qid!r}: must be true or false, got {sent(value)}"[:160])
    if value and not qtype.shuffles:
        raise DefinitionError(path, f"question {qid!r}: a {qtype.label} question has no options to shuffle "
                              "(only single-choice and check-all questions do)")
    return value


def parse_show_if(value, path: tuple) -> Condition:
    """A question's ``show_if`` as written: ``{"question": QID, "in": [labels]}`` (what QID may be is
    checked against the other questions by :func:`check_conditions`)."""
    if not isinstance(value, dict):
        raise DefinitionError(path, 'must be an object {"question": "<an earlier question\'s id>", "in": [<its '
                              'option labels>]}')
    _unknown_keys(value, {"question", "in"}, path)
    source = value.get("question")
    if not isinstance(source, str) or not source:
        raise DefinitionError((*path, "question"), "must name an earlier question by its id")
    labels = value.get("in")
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        raise DefinitionError((*path, "in"), "must be a non-empty list of the earlier question's option labels")
    if len(set(labels)) != len(labels):
        raise DefinitionError((*path, "in"), "names an option more than once")
    return Condition(source, tuple(labels))


def check_conditions(questions) -> None:
    """Refuse a ``show_if`` that is not on an earlier question asked directly, or names options it lacks.

    A condition on a randomized (protected) answer would reveal it: whether the question is shown
    depends on the true answer, and so, through what is sent for it, would the report.  Conditions
    point back only, so they cannot form a cycle.  A ``page_break`` on the first question is refused
    (there is no page before it).
    """
    where_of = {q.id: i for i, q in enumerate(questions)}
    if questions and questions[0].page_break:
        raise DefinitionError(("questions", 0, "page_break"), "the first question already starts the first page")
    for i, q in enumerate(questions):
        if q.show_if is None:
            continue
        path = ("questions", i, "show_if")
        source_at = where_of.get(q.show_if.question)
        if source_at is None:
            raise DefinitionError((*path, "question"), f"question {q.id!r}: there is no question "
                                  f"{q.show_if.question[:64]!r}")
        if source_at >= i:
            raise DefinitionError((*path, "question"), f"question {q.id!r}: can depend only on an earlier question, "
                                  f"and {q.show_if.question!r} comes {'at' if source_at == i else 'after'} it")
        source = questions[source_at]
        if source.protected or source.design is not None:
            raise DefinitionError((*path, "question"), f"question {q.id!r}: {source.id!r} is protected: showing a "
                                  "question only after some of its answers would reveal the protected answer "
                                  "(whether the next question appears depends on it); condition on a question "
                                  "asked directly")
        why = source.qtype.condition
        if why is not None:
            raise DefinitionError((*path, "question"), f"question {q.id!r}: {source.id!r} is a {source.qtype.label} "
                                  f"question: {why}")
        for j, label in enumerate(q.show_if.options):
            if label not in source.options:
                raise DefinitionError((*path, "in", j), f"question {q.id!r}: {label[:64]!r} is not an option of "
                                      f"{source.id!r} ({', '.join(source.options)})"[:300])


def check_randomization(question: Question, stated, path: tuple) -> None:
    """Refuse a codebook whose stated randomization (k, threshold, ε) is not the question's own.

    The message names both values, e.g. after ε was edited from 1 to 2 in a codebook.
    """
    if not isinstance(stated, dict):
        raise DefinitionError(path, "must be an object (k, threshold, declared_epsilon, ...)")
    k = stated.get("k")
    if k != question.k:
        raise DefinitionError((*path, "k"), f"the codebook says k = {k!r} but the question has "
                              f"{question.k} possible answers: was the codebook edited?")
    declared = stated.get("declared_epsilon")
    threshold = stated.get("threshold")
    own = question.mechanism.threshold if question.protected else None
    if declared != question.epsilon or threshold != own:
        said = "asked directly" if declared is None else f"ε = {declared!r} (threshold {threshold!r})"
        has = "asked directly" if not question.protected else f"ε = {question.epsilon:g} (threshold {own})"
        raise DefinitionError(path, f"question {question.id!r}: the reports were made with {said}, but the "
                              f"question says {has}: was the codebook edited?")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_characters(data) -> None:
    """Raise DefinitionError at the first text, key or value, holding a lone surrogate (JSON's
    ``"\\ud800"`` without its pair): not a character, so neither SQLite nor a file nor a terminal
    can take it in UTF-8."""
    stack = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str) and (found := _SURROGATE.search(node)):
            raise DefinitionError(path or ("definition",), f"holds a lone surrogate "
                                  f"({found.group().encode('unicode_escape').decode()}), which is not a "
                                  "character: write the character itself (in a JSON escape, both halves of "
                                  "its pair, such as \\ud83d\\ude00)")
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in reversed(list(children)):
            if isinstance(key, str) and (found := _SURROGATE.search(key)):
                raise DefinitionError(path or ("definition",), f"a key holds a lone surrogate "
                                      f"({found.group().encode('unicode_escape').decode()}), which is not a "
                                      "character")
            stack.append(((*path, key), child))


def parse_definition(data) -> Survey:
    """Validate a decoded survey definition and return a :class:`Survey`."""
    if not isinstance(data, dict):
        raise DefinitionError(("definition",), "must be a JSON object")
    _check_characters(data)
    _unknown_keys(data, SURVEY_KEYS, ("definition",))
    for key in ("slug", "title", "questions"):
        if key not in data:
            raise DefinitionError((key,), "is required")
    slug = data["slug"]
    if not isinstance(slug, str) or not SLUG_RE.fullmatch(slug):
        raise DefinitionError(("slug",), f"must be lowercase letters, digits and '-' (at most 63), got {sent(slug)}")
    title = text_field(data["title"], ("title",), max_len=200)
    description = text_field(data.get("description", ""), ("description",), max_len=MAX_TEXT, allow_empty=True)
    questions = data["questions"]
    if not isinstance(questions, list) or not questions:
        raise DefinitionError(("questions",), "must be a non-empty list")
    if len(questions) > MAX_QUESTIONS:
        raise DefinitionError(("questions",), f"at most {MAX_QUESTIONS} questions, got {len(questions)}")
    parsed = tuple(parse_question(q, ("questions", i)) for i, q in enumerate(questions))
    check_unique_ids(parsed)
    check_conditions(parsed)
    information = text_field(data.get("information", ""), ("information",), max_len=10 * MAX_TEXT, allow_empty=True)
    contact = text_field(data.get("contact", ""), ("contact",), max_len=MAX_CONTACT, allow_empty=True)
    consent = data.get("consent", False)
    if not isinstance(consent, bool):
        raise DefinitionError(("consent",), "must be true or false")
    language = data.get("language")
    if language is not None and language not in LANGUAGES:
        raise DefinitionError(("language",), f"must be one of {', '.join(LANGUAGES)} (or left out: the "
                              f"respondent's browser decides), got {sent(language)}")
    if consent and not information:
        raise DefinitionError(("consent",), "asks respondents to agree to the information, but there is "
                              "no information: add an \"information\" text")
    survey = Survey(slug=slug, title=title, description=description, questions=parsed,
                    information=information, contact=contact, consent=consent, language=language)
    if data.get("translations") is not None:
        from .translations import parse_translations  # it builds on this module's parsers

        survey = replace(survey, translations=parse_translations(data["translations"], survey))
    if "design_fingerprint" in data and data["design_fingerprint"] != design_fingerprint(survey):
        raise DefinitionError(("design_fingerprint",), f"the codebook says {data['design_fingerprint']!r}, but "
                              f"its questions give {design_fingerprint(survey)!r}: was the codebook edited?")
    if "text_versions" in data and not isinstance(data["text_versions"], list):
        raise DefinitionError(("text_versions",), "must be a list")
    return survey


def check_unique_ids(questions) -> None:
    """Raise DefinitionError at the first question whose id repeats an earlier one."""
    ids = set()
    for i, q in enumerate(questions):
        if q.id in ids:
            raise DefinitionError(("questions", i, "id"), f"duplicate question id {q.id!r}")
        ids.add(q.id)


def loads_definition(text: str, source: str = "definition") -> Survey:
    """Parse JSON text; errors are said of ``source`` (a file name) and carry the JSON line.

    A key repeated in one object is refused (:mod:`.strict_json`), naming its path and line.
    """
    try:
        data = strict_json.loads(text)
    except strict_json.DuplicateKeyError as exc:  # {"epsilon": 0.5, "epsilon": 5}: which one was meant?
        raise DefinitionError(exc.path, f"line {exc.lineno}: the key {exc.key[:64]!r} appears more than once in "
                              "one object: keep one", source=source) from None
    except strict_json.JSONError as exc:  # with no line: e.g. an integer of more than 4300 digits
        where = "" if exc.lineno is None else f"line {exc.lineno}: "
        raise DefinitionError((), f"{where}not valid JSON: {exc.reason[:100]}", source=source) from None
    try:
        return parse_definition(data)
    except DefinitionError as exc:
        raise exc.from_source(source) from None


def load_definition(path) -> Survey:
    """Read and validate a survey definition file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DefinitionError((), f"cannot read: {exc}", source=str(path)) from None
    return loads_definition(text, str(path))


def dumps_definition(survey: Survey) -> str:
    return json.dumps(survey.to_dict(), indent=2, ensure_ascii=False) + "\n"
