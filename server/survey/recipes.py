"""Copy-paste recipes for Qualtrics, LimeSurvey and REDCap: what ``deniable embed recipe`` prints.

One template per platform (``client/static/embed/recipes/``) holds the snippet the platform takes —
Qualtrics question JavaScript, the text of a LimeSurvey "Text display" question, the label of a REDCap
descriptive field — with its header comment saying where to paste it, which column the report lands
in and what still holds.  :func:`snippet` fills in one question: the embed's address and integrity
hash, the design document and the report's field (:func:`.platform_exports.column_name`, the same
name the readers look for).

The design document goes in as JSON that each platform leaves alone: inside its strings, ``{``, ``}``,
``[``, ``]``, ``<``, ``>`` and ``&`` are ``\\u`` escapes (LimeSurvey's Expression Manager would run
``{…}``, REDCap would pipe ``[…]``, and ``</script>`` would end the script), and a space follows
every structural ``{`` and ``[`` and precedes every ``}`` (LimeSurvey leaves a brace followed by
white space alone).  It is still the same JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from deniable.client.embed import STATIC

from .definition import Survey
from .platform_exports import PLATFORMS, PlatformExportError, columns

TEMPLATES = Path(STATIC) / "embed" / "recipes"
FILES = {"qualtrics": "qualtrics.js", "limesurvey": "limesurvey.html", "redcap": "redcap.html"}
_ESCAPED = "{}[]<>&"
_MARK = "\x00"  # json.dumps writes it as \\u0000: a marker no string of the document can contain


def design_json(design: dict) -> str:
    """``design`` as JSON that LimeSurvey, REDCap and an HTML ``<script>`` leave unchanged (module docstring)."""
    def marked(value):
        if isinstance(value, str):
            return "".join(f"{_MARK}{_ESCAPED.index(c)}" if c in _ESCAPED else c for c in value)
        if isinstance(value, list):
            return [marked(v) for v in value]
        if isinstance(value, dict):
            return {k: marked(v) for k, v in value.items()}
        return value

    text = json.dumps(marked(design), ensure_ascii=False, allow_nan=False)
    text = text.replace("{", "{ ").replace("}", " }").replace("[", "[ ")
    for i, c in enumerate(_ESCAPED):
        text = text.replace(f"\\u0000{i}", f"\\u{ord(c):04x}")
    return text


def embed_types() -> set[str]:
    """The question types the embed registers (``registerEmbedType("…"`` in its type modules)."""
    return {name for path in sorted((Path(STATIC) / "embed" / "types").glob("*.js"))
            for name in re.findall(r'registerEmbedType\("([\w-]+)"', path.read_text(encoding="utf-8"))}


def _mountable(q: dict, types: set[str]) -> bool:
    # the design document gives a single choice (and a designed one) no type: the embed mounts it
    return not q.get("not_available") and (q.get("type") is None or q["type"] in types)


def embeddable(design: dict, qid: str | None = None) -> list[dict]:
    """The protected questions of ``design`` the embed can mount, or question ``qid`` (refused if it cannot be)."""
    types = embed_types()
    if qid is None:
        return [q for q in design["questions"] if q.get("protected") and _mountable(q, types)]
    chosen = [q for q in design["questions"] if q["id"] == qid]
    if not chosen:
        raise PlatformExportError(f"--question: survey {design['slug']!r} has no question {qid!r}", "question")
    if not _mountable(chosen[0], types):
        raise PlatformExportError(f"--question: {qid}: the embed cannot mount a {chosen[0].get('type')} question yet",
                                  "question")
    return chosen


def snippet(platform: str, design: dict, qid: str, *, src: str, integrity: str, version: str,
            column: str) -> str:
    """The snippet that embeds question ``qid`` of ``design`` on ``platform``, its report going to ``column``."""
    if platform not in FILES:
        raise PlatformExportError(f"unknown platform {platform!r}: one of {', '.join(PLATFORMS)}", "platform")
    text = (TEMPLATES / FILES[platform]).read_text(encoding="utf-8")
    for name, value in (("DESIGN", design_json(design)), ("SRC", src), ("INTEGRITY", integrity),
                        ("VERSION", version), ("SLUG", design["slug"]), ("QID", qid), ("COLUMN", column)):
        text = text.replace(f"%%{name}%%", value)
    return text


def _reports(question) -> str:
    """What a report of ``question`` means, in words: its JSON, option by option."""
    options = question.options
    if isinstance(question.qtype.report_of(question, 0), list):  # one 0/1 per option (check all that apply)
        return "one 0/1 per option: [" + ", ".join(options) + "]"
    return ", ".join(f"{j} = {label}" for j, label in enumerate(options))


def recipe(platform: str, survey: Survey, design: dict, *, src: str, integrity: str, version: str,
           qid: str | None = None) -> str:
    """Everything ``deniable embed recipe`` prints: each question's snippet, then the codebook."""
    named = columns(platform, survey)
    chosen = embeddable(design, qid)
    if not chosen:
        raise PlatformExportError(f"survey {design['slug']!r} has no question the embed can mount yet", "question")
    out = [f"==== deniable embed recipe {platform}: survey {design['slug']}, design {design['design_fingerprint']}",
           f"==== the embed: {src}",
           f"==== integrity: {integrity}", ""]
    for q in chosen:
        out += [f"==== question {q['id']}: its report lands in the column {named[q['id']]}",
                snippet(platform, design, q["id"], src=src, integrity=integrity, version=version,
                        column=named[q["id"]]).rstrip("\n"), ""]
    out.append("==== codebook: each cell holds the JSON {\"report\": …, \"design\": \"sha256:…\", \"epsilon\": …}")
    for q in chosen:
        epsilon = q.get("realized_epsilon")
        strength = "ε not defined (not ε-LDP)" if epsilon is None else f"ε = {epsilon:.4g}"
        out.append(f"{named[q['id']]}: question {q['id']} ({strength}); report {_reports(survey.question(q['id']))}")
    others = [q["id"] for q in design["questions"] if q not in chosen]
    if others and qid is None:
        out.append(f"not here (asked directly: use the platform's own question; or not embeddable yet): "
                   f"{', '.join(others)}")
    out.append(f"estimate: deniable estimate SURVEY.json EXPORT.csv --from {platform}")
    return "\n".join(out) + "\n"
