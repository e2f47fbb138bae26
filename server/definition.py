"""Survey definitions (DESIGN.md, "Formats"): parse, validate, and serialize.

A definition is ``{"slug", "title", "description", "questions": [{"id", "text", "options",
"epsilon", "required"}]}``.  A question without ``epsilon`` (or with ``null``) is asked
directly and is not protected.  ``required`` defaults to true.  Every problem raises
:class:`DefinitionError` whose message names the field, e.g. ``questions[1].epsilon: …``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from client.mechanism import Mechanism, MechanismError, mechanism

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
QUESTION_ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
MAX_QUESTIONS = 100
MAX_OPTIONS = 64
MAX_TEXT = 2000
MAX_LABEL = 200
SURVEY_KEYS = {"slug", "title", "description", "questions"}
QUESTION_KEYS = {"id", "text", "options", "epsilon", "required"}
# Names the survey page's form uses for itself; a question with such an id would shadow them.
RESERVED_IDS = {"csrf_token", "invitation"}


class DefinitionError(ValueError):
    """A survey definition is malformed; the message names the field and the problem."""


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    options: tuple[str, ...]
    epsilon: float | None = None
    required: bool = True

    @property
    def k(self) -> int:
        return len(self.options)

    @property
    def protected(self) -> bool:
        return self.epsilon is not None

    @property
    def mechanism(self) -> Mechanism | None:
        """The realized randomized-response parameters, or None for a direct question."""
        return mechanism(self.k, self.epsilon) if self.protected else None

    def to_dict(self) -> dict:
        data = {"id": self.id, "text": self.text, "options": list(self.options)}
        if self.protected:
            data["epsilon"] = self.epsilon
        if not self.required:
            data["required"] = False
        return data


@dataclass(frozen=True)
class Survey:
    slug: str
    title: str
    description: str
    questions: tuple[Question, ...]

    @property
    def total_epsilon(self) -> float:
        """Privacy cost per respondent by basic composition: the sum of the protected questions' ε."""
        return sum(q.epsilon for q in self.questions if q.protected)

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(question_id)

    def to_dict(self) -> dict:
        return {
            "slug": self.slug,
            "title": self.title,
            "description": self.description,
            "questions": [q.to_dict() for q in self.questions],
        }


def _text(value, field: str, *, max_len: int, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise DefinitionError(f"{field}: must be a string, got {type(value).__name__}")
    value = value.strip()
    if not value and not allow_empty:
        raise DefinitionError(f"{field}: must not be empty")
    if len(value) > max_len:
        raise DefinitionError(f"{field}: must be at most {max_len} characters")
    return value


def _unknown_keys(data: dict, allowed: set[str], field: str) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        raise DefinitionError(f"{field}: unknown key {extra[0]!r} (allowed: {', '.join(sorted(allowed))})")


def parse_question(data, field: str) -> Question:
    """Validate one question object; ``field`` prefixes error messages (e.g. ``questions[0]``)."""
    if not isinstance(data, dict):
        raise DefinitionError(f"{field}: must be an object")
    _unknown_keys(data, QUESTION_KEYS, field)
    for key in ("id", "text", "options"):
        if key not in data:
            raise DefinitionError(f"{field}.{key}: is required")
    qid = data["id"]
    if not isinstance(qid, str) or not QUESTION_ID_RE.match(qid):
        raise DefinitionError(
            f"{field}.id: must be a letter or _ followed by letters, digits or _ (at most 63), got {qid!r}"
        )
    if qid in RESERVED_IDS:
        raise DefinitionError(f"{field}.id: {qid!r} is reserved for the survey form; choose another id")
    text = _text(data["text"], f"{field}.text", max_len=MAX_TEXT)
    options = data["options"]
    if not isinstance(options, list):
        raise DefinitionError(f"{field}.options: must be a list of option labels")
    if not 2 <= len(options) <= MAX_OPTIONS:
        raise DefinitionError(f"{field}.options: needs between 2 and {MAX_OPTIONS} options, got {len(options)}")
    labels = tuple(_text(o, f"{field}.options[{i}]", max_len=MAX_LABEL) for i, o in enumerate(options))
    seen = set()
    for i, label in enumerate(labels):
        if label in seen:
            raise DefinitionError(f"{field}.options[{i}]: duplicate label {label!r}")
        seen.add(label)
    epsilon = data.get("epsilon")
    if epsilon is not None:
        try:
            epsilon = mechanism(len(labels), epsilon).declared_epsilon
        except MechanismError as exc:
            raise DefinitionError(f"{field}.epsilon: {exc}") from None
    required = data.get("required", True)
    if not isinstance(required, bool):
        raise DefinitionError(f"{field}.required: must be true or false")
    return Question(id=qid, text=text, options=labels, epsilon=epsilon, required=required)


def parse_definition(data) -> Survey:
    """Validate a decoded survey definition and return a :class:`Survey`."""
    if not isinstance(data, dict):
        raise DefinitionError("definition: must be a JSON object")
    _unknown_keys(data, SURVEY_KEYS, "definition")
    for key in ("slug", "title", "questions"):
        if key not in data:
            raise DefinitionError(f"{key}: is required")
    slug = data["slug"]
    if not isinstance(slug, str) or not SLUG_RE.match(slug):
        raise DefinitionError(f"slug: must be lowercase letters, digits and '-' (at most 63), got {slug!r}")
    title = _text(data["title"], "title", max_len=200)
    description = _text(data.get("description", ""), "description", max_len=MAX_TEXT, allow_empty=True)
    questions = data["questions"]
    if not isinstance(questions, list) or not questions:
        raise DefinitionError("questions: must be a non-empty list")
    if len(questions) > MAX_QUESTIONS:
        raise DefinitionError(f"questions: at most {MAX_QUESTIONS} questions, got {len(questions)}")
    parsed = tuple(parse_question(q, f"questions[{i}]") for i, q in enumerate(questions))
    ids = set()
    for i, q in enumerate(parsed):
        if q.id in ids:
            raise DefinitionError(f"questions[{i}].id: duplicate question id {q.id!r}")
        ids.add(q.id)
    return Survey(slug=slug, title=title, description=description, questions=parsed)


def loads_definition(text: str, source: str = "definition") -> Survey:
    """Parse JSON text; errors are prefixed with ``source`` (a file name) and carry the JSON line."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DefinitionError(f"{source}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4300 digits
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0][:100]
        raise DefinitionError(f"{source}: not valid JSON: {why}") from None
    try:
        return parse_definition(data)
    except DefinitionError as exc:
        raise DefinitionError(f"{source}: {exc}") from None


def load_definition(path) -> Survey:
    """Read and validate a survey definition file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DefinitionError(f"{path}: cannot read: {exc}") from None
    return loads_definition(text, str(path))


def dumps_definition(survey: Survey) -> str:
    return json.dumps(survey.to_dict(), indent=2, ensure_ascii=False) + "\n"
