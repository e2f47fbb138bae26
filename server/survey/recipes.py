"""Copy-paste recipes for SurveyJS, oTree, Qualtrics, LimeSurvey and REDCap: what ``deniable embed recipe``
prints and the dashboard's "Use in another survey tool" page shows; and the design document they embed.

SurveyJS and oTree get one recipe for the page (``_surveyjs_page``, ``_otree_page``: the
script that loads the embed and mounts every question, the survey's elements or the app's fields).

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
from decimal import Decimal
from functools import cache
from pathlib import Path

from deniable.client.embed import STATIC

from .definition import Survey, design_fingerprint
from .platform_exports import PLATFORMS, PlatformExportError, columns
from .questions.base import NotAvailable

TEMPLATES = Path(STATIC) / "embed" / "recipes"
TRANSLATIONS = Path(__file__).resolve().parents[1] / "translations"  # the respondents' catalogs (web/i18n.py)
FILES = {"qualtrics": "qualtrics.js", "limesurvey": "limesurvey.html", "redcap": "redcap.html"}
_ESCAPED = "{}[]<>&"
_MARK = "\x00"  # json.dumps writes it as \\u0000: a marker no string of the document can contain


def question_design(q) -> dict:
    """A question as the API publishes it: what a client needs to randomize and report.

    ``id``, ``text``, ``required``, ``protected`` and what its type publishes
    (:meth:`~deniable.server.survey.questions.base.QuestionType.api_design`: a choice ``options``, ``k``
    and, when protected, ``epsilon``, ``threshold``, ``p``, ``q``, ``realized_epsilon``; the other types
    add ``type`` and their mechanism's integers), and ``show_if`` / ``page_break`` when the question has
    them (display logic: the server refuses an answer to a question the respondent was not asked).  A
    type that publishes no design says why in ``not_available`` instead of failing.
    """
    item = {"id": q.id, "text": q.text, "required": q.required, "protected": q.protected}
    try:
        item.update(q.qtype.api_design(q))
    except NotAvailable as exc:
        item.update(type=q.qtype.name, not_available=str(exc))
    if q.show_if is not None:  # asked only of some respondents: a client must not send it to the others
        item["show_if"] = {"question": q.show_if.question, "in": list(q.show_if.options)}
    if q.page_break:
        item["page_break"] = True
    return item


def design_document(survey: Survey) -> dict:
    """The design document of ``survey``, as ``GET /api/v1/surveys/SLUG`` publishes it (bar its ``status``):
    what the embed mounts a question from (``deniable embed design``, the builder's panel), with the
    survey's language and its translations (words only: the design is the same in every language).  A
    respondent-side crosswise question also carries the words its card shows (:func:`crosswise_words`); in a
    survey with a language other than English (its own or a translation), ``embed_words`` carries the
    embed's own sentences per language, and each other question its protection ``notes`` per language
    (:func:`embed_words`, :func:`question_notes`); a question whose type words a card of its own (a
    two-group design's instructions) carries those words per language in ``card_words`` (:func:`card_words`)."""
    readings = _readings(survey)
    questions = [question_design(q) for q in survey.questions]
    for item, q in zip(questions, survey.questions):
        if isinstance(item.get("design"), dict) and item["design"].get("side") == "respondent":
            item["crosswise"] = crosswise_words(readings, q.id)  # its card's note, in its words
        elif notes := question_notes(readings, q.id):
            item["notes"] = notes
        if words := card_words(readings, q.id):
            item["card_words"] = words  # a card of the type's own (its instructions, its answers), per language
    document = {"slug": survey.slug, "title": survey.title, "description": survey.description,
                "design_fingerprint": design_fingerprint(survey), "questions": questions,
                "language": survey.language, "translations": survey.translations}
    if words := embed_words(readings):
        document["embed_words"] = words
    return document


@cache
def _gettext(language: str):
    """The respondents' catalog of ``language`` (``server/translations``, as the survey page reads it): its
    ``gettext``; the words as written for English."""
    from babel.support import Translations

    return Translations.load(str(TRANSLATIONS), [language]).gettext


def _readings(survey: Survey) -> dict:
    """The survey as read in each of its languages, ``{language: survey}``: its own first (``survey``
    itself), then each it is translated into (:func:`.translations.translated`), each read once."""
    from .translations import original_language, translated

    return {original_language(survey): survey, **{language: translated(survey, language)
                                                     for language in survey.translations or {}}}


def _question(read: Survey, qid: str):
    return next(item for item in read.questions if item.id == qid)


def _protected_note(q, _, language: str) -> str | None:
    """The survey page's protection note beside the protected question ``q``: "Protected." and the short
    sentence of its explanation (the bound that follows from its realized ε), in ``_``'s language; None
    when its type has no such sentence."""
    info = q.qtype.explanation(q, gettext=_, locale=language)
    return f'{_("Protected.")} {info["short"]}' if info and info.get("short") else None


def crosswise_words(readings: dict, qid: str) -> dict:
    """What the survey page's crosswise card (``templates/cards/crosswise.html``) shows for the
    respondent-side crosswise question ``qid``, in the survey's own language: the private ``fact`` with its
    ``fact_label``, the ``instruction``, the two ``choices`` (report 0 "same", report 1 "different", sent as
    chosen) and the ``note`` (the page's privacy sentence beside the question); and under ``translations`` the same in
    each language the survey is translated into (the fact as the translation words it).  ``readings``:
    :func:`_readings`."""

    def words(read, language: str) -> dict:
        _ = _gettext(language)
        asked = _question(read, qid)
        return {"fact": asked.qtype.wording(asked)["fact"], "fact_label": _("Second question, just for you:"),
                "instruction": _("Are your answers to both questions the same (both yes or both no) or different?"),
                "choices": [_("same"), _("different")], "note": _protected_note(asked, _, language)}

    (own, survey), *others = readings.items()
    out = words(survey, own)
    if others:
        out["translations"] = {language: words(read, language) for language, read in others}
    return out


def question_notes(readings: dict, qid: str) -> dict:
    """The protection note beside question ``qid`` per language of the survey, English included
    (``readings``: :func:`_readings`): ``protected``, the page's "Protected." and its short sentence (for a
    protected question whose type has one: "Your true answer is sent only 73% of the time, …", plain words
    and no ε, as the survey page shows respondents), and ``direct``, "Not protected — sent as you answer."
    (what the embed shows when it sends the answer as given); for a question that is not protected but whose
    type says more of it on the survey page (its :meth:`plain_explanation`: a design that is not ε-LDP),
    ``plain``, the page's note beside it, its words in bold and the sentence after them ("Not protected by
    ε. Your device draws your group …")."""
    out = {}
    for language, read in readings.items():
        _ = _gettext(language)
        q = _question(read, qid)
        note = _protected_note(q, _, language) if q.protected else None
        info = None if q.protected else q.qtype.plain_explanation(q, gettext=_)
        plain = f"{info['note']} {info['coin']}" if info and info.get("note") and info.get("coin") else None
        out[language] = {**({"protected": note} if note else {}), **({"plain": plain} if plain else {}),
                         "direct": _("Not protected — sent as you answer.")}
    return out


def card_words(readings: dict, qid: str) -> dict | None:
    """The words of question ``qid``'s own card on the survey page per language of the survey, English
    included (``{language: words}``; ``readings``: :func:`_readings`), as its type gives them
    (``card_words(q, gettext=…)``: a two-group design's instructions and its Yes and No), each language's from
    the question as read in it and the respondents' catalog; None for a type without such words."""
    out = {}
    for language, read in readings.items():
        q = _question(read, qid)
        words = q.qtype.card_words(q, gettext=_gettext(language))
        if words is None:
            return None
        out[language] = words
    return out


def embed_words(readings: dict) -> dict:
    """The embed's own sentences as the survey page words them, per language other than English
    (``{language: words}``; ``readings``: :func:`_readings`), from the respondents' catalogs
    (:func:`_gettext`), so that a question mounted in a language reads as the survey page does in it:
    ``list_prompt`` (a list experiment's question), ``number_label`` and ``number_label_steps`` (a number's
    box, with ``%(min)s``, ``%(max)s``, ``%(step)s``), ``rule_whole``, ``rule_multiple`` and ``rule_steps``
    (a number's refusal, with ``{min}``, ``{max}``, ``{step}``) and ``required`` (a required question left
    unanswered).  English is left out: the embed's built-in English sentences are its own."""
    out = {}
    for language in readings:
        if language == "en":
            continue
        _ = _gettext(language)
        out[language] = {"list_prompt": _("How many of these apply to you? Do not say which ones."),
                         "number_label": _("Your answer, from %(min)s to %(max)s:"),
                         "number_label_steps": _("Your answer, from %(min)s to %(max)s in steps of %(step)s:"),
                         "rule_whole": _("Please give a whole number from {min} to {max}."),
                         "rule_multiple": _("Please give a multiple of {step} from {min} to {max}."),
                         "rule_steps": _("Please give a number from {min} to {max} in steps of {step}."),
                         "required": _("Please answer this question: it is required.")}
    return out


def embed_src(src: str, version: str) -> str:
    """Where a page loads the embed's classic script: ``src`` itself when it names a ``.js`` file, else a
    deniable's address, which serves it at ``/embed/VERSION/deniable-embed.js``; refused (naming ``--src``)
    when a page could not load it from there."""
    if not src.endswith(".js"):
        src = f"{src.rstrip('/')}/embed/{version}/deniable-embed.js"
    if not src.startswith(("https://", "http://", "/")):
        raise PlatformExportError(f"--src: {src!r} is not a URL the page can load the embed from", "src")
    return src


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


def _drawn(q: dict) -> bool:
    # protected, or a card of its type's own whose instruction the device draws (a two-group design that is
    # not ε-LDP: never asked directly, so never the host's own question)
    return bool(q.get("protected") or q.get("card_words"))


def embeddable(design: dict, qid: str | None = None) -> list[dict]:
    """The protected questions of ``design`` the embed can mount (and those whose card the device draws
    though they are not ε-LDP: a two-group design's), or question ``qid`` (refused if it cannot be)."""
    types = embed_types()
    if qid is None:
        return [q for q in design["questions"] if _drawn(q) and _mountable(q, types)]
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


def _reports(question, q: dict) -> str:
    """What a report of ``question`` (``q``: its design document entry) means, in words."""
    words = question.qtype.report_words(question)
    if words is not None:  # a type that says it itself (a two-group design: the group and the answer)
        return words
    sample = question.qtype.report_of(question, 0)
    if isinstance(sample, dict):  # a list experiment: the arm and the count
        return (f'{{"arm": 0|1, "count": c}}: arm 1 was shown the sensitive item as well as the '
                f"{len(q['items'])} others; c is the (randomized) count of items that apply")
    if "steps" in q:  # a number: steps from its minimum
        step = Decimal(str(q["step"]))
        if q["mechanism"] == "laplace":
            return (f"r, from {-q['tail']} to {q['steps'] + q['tail']} (discrete Laplace noise added): "
                    f"{q['min']} + r × {step}")
        if q["mechanism"] == "grid":
            spacing = step * (q["steps"] // q["grid"])
            return f"j, a grid point from 0 to {q['grid']}: {q['min']} + j × {spacing.normalize():f}"
        return f"r, from 0 to {q['steps']} (as given): {q['min']} + r × {step}"
    if "crosswise" in q:  # the respondent-side crosswise model: the respondent's choice, sent as is
        return (f"0 = same, 1 = different: whether the answers to the question and to the private fact "
                f"({q['crosswise']['fact']!r}) are the same (both yes or both no), as the respondent chose "
                "(nothing drawn on the device)")
    options = question.options
    if isinstance(sample, list):  # one 0/1 per option (check all that apply)
        return "one 0/1 per option: [" + ", ".join(options) + "]"
    return ", ".join(f"{j} = {label}" for j, label in enumerate(options))


RECIPE_PLATFORMS = ("surveyjs", "otree", *PLATFORMS)  # what ``deniable embed recipe`` and the builder's panel offer


def _surveyjs_page(design: dict, chosen: list[dict], src: str, integrity: str) -> list[str]:
    """The SurveyJS page: the embed by its hash, the question type registered, one element per question."""
    return [("==== the page: after SurveyJS's own scripts (survey-core and survey-js-ui of one version; tested "
             "with 2.5.38), load the embed by its hash and register the question type once"),
            f'<script src="{src}" integrity="{integrity}" crossorigin="anonymous"></script>',
            "<script>",
            f"  var design = {design_json(design)};",
            "  DeniableEmbed.registerSurveyJS(Survey, { design: design });",
            "</script>", "",
            "==== the survey's JSON: one element per protected question (its value in survey.data is only the report)",
            *(f'{{ "type": "deniable", "name": "{q["id"]}", "titleLocation": "hidden" }}' for q in chosen), ""]


def _otree_page(design: dict, chosen: list[dict], src: str, integrity: str) -> list[str]:
    """The oTree app: a player field per question, its page's inputs and the page's script (examples/otree/)."""
    ids = ", ".join(f'"{q["id"]}"' for q in chosen)
    return ["==== __init__.py: a text field per protected question in class Player, listed in the page's form_fields",
            *(f"    {q['id']} = models.StringField(blank={not q['required']})" for q in chosen), "",
            "==== the page's template: for each question, the embed's card and the one named input, hidden",
            *(line for q in chosen for line in (f'<div id="deniable-{q["id"]}"></div>',
                                                f'<input type="hidden" name="{q["id"]}" id="id_{q["id"]}">',
                                                f"{{{{ formfield_errors '{q['id']}' }}}}")),
            "", "==== the page's template, below the questions: the embed by its hash, mounted once per participant",
            f'<script src="{src}" integrity="{integrity}" crossorigin="anonymous"></script>',
            "<script>",
            f"  const design = {design_json(design)};",
            "  const suffix = \":\" + js_vars.participant;  // js_vars: {participant: player.participant.code}",
            "  const storage = { getItem: (key) => localStorage.getItem(key + suffix),",
            "                    setItem: (key, value) => localStorage.setItem(key + suffix, value) };",
            f"  const handles = [{ids}].map((qid) => [qid, DeniableEmbed.mount(",
            "    document.getElementById(\"deniable-\" + qid), { design, question: qid, storage })]);",
            "  document.addEventListener(\"submit\", (event) => {  // before oTree's own handler",
            "    if (event.target.id !== \"form\") return;",
            "    let complete = true;",
            "    for (const [qid, handle] of handles) {",
            "      try {",
            "        const result = handle.commit();",
            "        document.getElementById(\"id_\" + qid).value = result === null ? \"\" : JSON.stringify(result);",
            "      } catch (error) { complete = false; }  // the card says what is missing",
            "    }",
            "    if (!complete) { event.preventDefault(); event.stopImmediatePropagation(); }",
            "  }, true);",
            "</script>", ""]


PAGE_RECIPES = {"surveyjs": _surveyjs_page, "otree": _otree_page}
WHERE = {"surveyjs": "the question's value in survey.data (its name)", "otree": "the player field"}
ESTIMATE = {"surveyjs": "RESULTS.json --from surveyjs", "otree": "all_apps_wide.csv --from otree"}


def recipe(platform: str, survey: Survey, design: dict, *, src: str, integrity: str, version: str,
           qid: str | None = None) -> str:
    """Everything ``deniable embed recipe`` prints: each question's snippet (SurveyJS, oTree: the page's), then the codebook."""
    if platform not in RECIPE_PLATFORMS:
        raise PlatformExportError(f"unknown platform {platform!r}: one of {', '.join(RECIPE_PLATFORMS)}", "platform")
    named = {q.id: q.id for q in survey.questions} if platform in PAGE_RECIPES else columns(platform, survey)
    chosen = embeddable(design, qid)
    if not chosen:
        raise PlatformExportError(f"survey {design['slug']!r} has no question the embed can mount yet", "question")
    out = [f"==== deniable embed recipe {platform}: survey {design['slug']}, design {design['design_fingerprint']}",
           f"==== the embed: {src}",
           f"==== integrity: {integrity}", ""]
    if platform in PAGE_RECIPES:
        out += PAGE_RECIPES[platform](design, chosen, src, integrity)
    for q in chosen if platform not in PAGE_RECIPES else ():
        out += [f"==== question {q['id']}: its report lands in the column {named[q['id']]}",
                snippet(platform, design, q["id"], src=src, integrity=integrity, version=version,
                        column=named[q["id"]]).rstrip("\n"), ""]
    where = WHERE.get(platform, "each cell")
    out.append(f"==== codebook: {where} holds the JSON {{\"report\": …, \"design\": \"sha256:…\", \"epsilon\": …}}")
    for q in chosen:
        epsilon = q.get("realized_epsilon")
        strength = "ε not defined (not ε-LDP)" if epsilon is None else f"ε = {epsilon:.4g}"
        if "epsilon_range" in q:  # the respondent-side crosswise model: the report's ε is the range's high end
            low, high = q["epsilon_range"]
            strength = (f"ε = {epsilon:.4g}, the high end of ε between {low:.4g} and {high:.4g} against an observer "
                        "who does not know the private fact; not ε-LDP against one who knows it")
        out.append(f"{named[q['id']]}: question {q['id']} ({strength}); report {_reports(survey.question(q['id']), q)}")
    others = [q["id"] for q in design["questions"] if q not in chosen]
    if others and qid is None:
        out.append(f"not here (asked directly: use the platform's own question; or not embeddable yet): "
                   f"{', '.join(others)}")
    out.append(f"estimate: deniable estimate SURVEY.json {ESTIMATE.get(platform, f'EXPORT.csv --from {platform}')}")
    return "\n".join(out) + "\n"
