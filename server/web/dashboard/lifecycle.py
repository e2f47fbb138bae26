"""A survey's lifecycle, with care: confirmations that say what becomes frozen, open, close and
reopen, duplicate, delete a draft, fix the wording of a launched survey, preview as a respondent.

Opening freezes the design (options' number and order, ε: invariant 4, also enforced by the
database); after that only the words may change, each fix kept as a text version
(:mod:`deniable.server.store.wording`) and shown as a change log; a translation's texts are fixed the
same way, one form per language (:func:`translation_forms`, the ``/<slug>/wording/<language>`` route), and a
launched survey gains a language with "Add a language" (:func:`add_language_form`, the ``/<slug>/translations``
route).
The page of a survey's design (:func:`survey_page_extras`, :func:`render_launched`) is drawn here too, for
:mod:`.views`.
"""

from __future__ import annotations

import re

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for

from deniable.server.store import access, invitations
from deniable.server.store.surveys import LifecycleError, delete_draft, duplicate_survey, set_status
from deniable.server.store.wording import (WordingError, add_translation, fix_translation, fix_wording,
                                           wording_changes, wording_history)
from deniable.server.survey.translations import NAMES, PAGE_TEXTS, original_language

from ..connections import get_db, get_readonly_db
from ..i18n import choose_language, set_survey_language
from ..respondent.forms import build_form
from ..respondent.pages import render_survey
from .auth import current_researcher
from .builder import total_warning
from .forms import ActionForm, InvitationForm, ShareForm, StatusForm
from .permissions import survey_for
from .share import share_info

bp = Blueprint("lifecycle", __name__, url_prefix="/dashboard")

CONFIRMATIONS = {
    # action: (the role it needs, the statuses it applies to, the status it sets or None)
    "open": ("editor", {"draft"}, "open"),
    "close": ("editor", {"open"}, "closed"),
    "reopen": ("editor", {"closed"}, "open"),
    "delete": ("owner", {"draft"}, None),
}


@bp.route("/<slug>/confirm")
def confirm(slug: str):
    """Say what an action does (and what becomes frozen) before it is done."""
    survey_for(slug)  # a 404 for whoever may not see it, whatever the parameters
    action = request.args.get("to", "")
    if action not in CONFIRMATIONS:
        abort(400, description="to: must be one of open, close, reopen, delete")
    needs, statuses, new_status = CONFIRMATIONS[action]
    stored, _ = survey_for(slug, needs)
    if stored.status not in statuses:
        flash(f"Survey {slug!r} is {stored.status}: it cannot be {'deleted' if action == 'delete' else action + 'ed'}.",
              "error")
        return redirect(url_for("dashboard.views.edit", slug=slug))
    from deniable.server.web.security import public_url

    return render_template("dashboard/confirm.html", stored=stored, action=action, new_status=new_status,
                           url=public_url("respond.survey", slug=slug), status_form=StatusForm(),
                           action_form=ActionForm(), total_warning=total_warning(stored.survey.total_epsilon))


@bp.route("/<slug>/status", methods=["POST"])
def change_status(slug: str):
    survey_for(slug, "editor")
    form = StatusForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        before = set_status(get_db(), slug, form.status.data)
    except LifecycleError as exc:
        flash(str(exc), "error")
        return redirect(url_for("dashboard.views.edit", slug=slug)), 409
    if form.status.data == "open":
        flash(f"Survey {slug!r} is open: respondents can answer at the address below. Its design is frozen; "
              "you can still fix typos in its wording.", "info")
        return redirect(url_for("dashboard.views.edit", slug=slug, _anchor="share-title"))
    flash(f"Survey {slug!r} is closed: it accepts no more answers. You can reopen it.", "info")
    return redirect(url_for("dashboard.views.results", slug=before.slug))


@bp.route("/<slug>/duplicate", methods=["POST"])
def duplicate(slug: str):
    """Copy any survey one may see as a new draft of one's own (design and wording, no responses)."""
    survey_for(slug)
    if not ActionForm().validate_on_submit():
        abort(400, description="csrf_token: the form's security token was not accepted")
    copy = duplicate_survey(get_db(), slug, owner_id=current_researcher()["id"])
    flash(f"Copied as the draft {copy.slug!r}: change its design, then open it.", "info")
    return redirect(url_for("dashboard.views.edit", slug=copy.slug))


@bp.route("/<slug>/delete", methods=["POST"])
def delete(slug: str):
    survey_for(slug, "owner")
    if not ActionForm().validate_on_submit():
        abort(400, description="csrf_token: the form's security token was not accepted")
    try:
        delete_draft(get_db(), slug)
    except LifecycleError as exc:
        flash(str(exc), "error")
        return redirect(url_for("dashboard.views.edit", slug=slug)), 409
    flash(f"Draft {slug!r} deleted.", "info")
    return redirect(url_for("dashboard.views.index"))


def wording_from_form(stored, form) -> dict:
    """The wording fix as posted: page texts, and per question the texts its type lets a launched survey
    reword (:meth:`QuestionType.wording <deniable.server.survey.questions.base.QuestionType.wording>`).

    A list of labels is read as posted (``wording-questions-<i>-<key>-<j>``, in the order of ``j``), so
    that a post with another number of labels is refused by name instead of being padded or cut."""
    wording = {name: form.get(f"wording-{name}", getattr(stored.survey, name))
               for name in ("title", "description", "information", "contact")}
    wording["questions"] = {}
    for i, q in enumerate(stored.survey.questions):
        words = {}
        for key, current in q.qtype.wording(q).items():
            name = f"wording-questions-{i}-{key}"
            if isinstance(current, str):
                words[key] = form.get(name, current)
                continue
            words[key] = _posted_labels(form, name) or list(current)
        wording["questions"][q.id] = words
    return wording


def wording_inputs(stored, wording=None) -> list[dict]:
    """The wording form's questions: per question its id and blocks of inputs ``{id, label, value, textarea}``
    (a block with ``group``: a list of labels),
    from its type (what may be reworded and what it is called), with ``wording``'s values when posted."""
    out = []
    for i, q in enumerate(stored.survey.questions):
        names = q.qtype.wording_labels(q)
        out.append({"qid": q.id, "blocks": _input_blocks(
            f"wording-questions-{i}", q.qtype.wording(q), (wording or {}).get("questions", {}).get(q.id, {}),
            lambda key: names.get(key, (key, key))[0])})
    return out


def _input_blocks(prefix: str, current: dict, posted: dict, label_of, *, originals: bool = False) -> list[dict]:
    """The form's blocks of one question's texts ``current`` (key → a text, or a list of labels), each
    input ``PREFIX-KEY`` (a list's ``PREFIX-KEY-J``) with ``posted``'s value where there is one, labelled
    by ``label_of(key)``.  ``originals``: ``current`` are the original words, said in each label
    ("Option 1: Yes") and not filled in (a new translation's inputs start empty)."""
    blocks = []
    for key, was in current.items():
        label = label_of(key)
        value = posted.get(key, ("" if isinstance(was, str) else [""] * len(was)) if originals else was)
        if isinstance(was, str):
            said = label[:1].upper() + label[1:]
            blocks.append({"group": False, "inputs": [{"id": f"{prefix}-{key}", "value": value,
                                                       "label": _with_original(said, was) if originals else said,
                                                       "textarea": key == "text"}]})
        else:
            blocks.append({"group": True, "inputs": [
                {"id": f"{prefix}-{key}-{j}", "value": v, "textarea": False,
                 "label": _with_original(f"{label.capitalize()} {j + 1}", was[j]) if originals and j < len(was)
                 else f"{label.capitalize()} {j + 1}"} for j, v in enumerate(value)]})
    return blocks


def _with_original(label: str, original: str, longest: int = 120) -> str:
    """An input's label with the original words it translates: ``Option 1: Yes`` (a long text cut, with …)."""
    return f"{label}: {original if len(original) <= longest else original[:longest].rstrip() + '…'}"


PAGE_LABELS = {"title": "Title", "description": "Description", "information": "Information for respondents",
               "contact": "Contact"}
LONG_TEXTS = ("description", "information")  # the page texts a textarea holds


def _posted_labels(form, name: str) -> list | None:
    """A list of labels as posted (``NAME-<j>``, in the order of ``j``), None when none was."""
    posted = sorted((int(m.group(1)), form.get(field)) for field in form
                    if (m := re.fullmatch(re.escape(name) + r"-([0-9]{1,4})", field)))
    return [value for _, value in posted] if posted else None


def translation_from_form(stored, language: str, form) -> dict:
    """A translation's fix as posted (``translation-<language>-title``, ``…-questions-<i>-<key>[-<j>]``,
    keys as the definition writes them): the texts the translation holds, each as posted or as it was;
    ``{}`` for a language the survey has no translation into (the store then refuses it by name)."""
    current = stored.survey.translations.get(language)
    if not current:
        return {}
    texts = {key: form.get(f"translation-{language}-{key}", current[key]) for key in PAGE_TEXTS if key in current}
    questions = {}
    for i, q in enumerate(stored.survey.questions):
        held = current.get("questions", {}).get(q.id)
        if not held:
            continue
        words = {}
        for key, was in held.items():
            name = f"translation-{language}-questions-{i}-{key}"
            words[key] = form.get(name, was) if isinstance(was, str) else (_posted_labels(form, name) or list(was))
        questions[q.id] = words
    if questions:
        texts["questions"] = questions
    return texts


def translation_forms(stored, posted: dict | None = None) -> list[dict]:
    """One form per translation: ``{code, name, page, questions}``, ``page`` the inputs of the page texts it
    holds and ``questions`` per question it holds ``{number, qid, original, blocks}`` (as
    :func:`wording_inputs`), with ``posted`` (language → texts) values where a post was refused."""
    out = []
    for language, current in stored.survey.translations.items():
        given = (posted or {}).get(language) or {}
        page = [{"group": False, "inputs": [{"id": f"translation-{language}-{key}", "label": PAGE_LABELS[key],
                                             "value": given.get(key, current[key]), "textarea": key in LONG_TEXTS}]}
                for key in PAGE_TEXTS if key in current]
        questions = []
        for i, q in enumerate(stored.survey.questions):
            held = current.get("questions", {}).get(q.id)
            if not held:
                continue
            names = {written: name for name, written in q.qtype.wording_labels(q).values()}
            blocks = _input_blocks(f"translation-{language}-questions-{i}", held,
                                   given.get("questions", {}).get(q.id, {}), lambda key: names.get(key, key))
            questions.append({"number": i + 1, "qid": q.id, "original": q.text, "blocks": blocks})
        out.append({"code": language, "name": NAMES[language], "page": page, "questions": questions})
    return out


ADD = "translation-new"  # the ids of "Add a language"'s inputs: ADD-title, ADD-questions-<i>-<key>[-<j>]


def _originals(q) -> dict:
    """``q``'s translatable texts under the keys a definition's translation writes them (a list experiment's
    ``items``, a crosswise question's ``fact``), in the order of its type's wording."""
    labels = q.qtype.wording_labels(q)
    return {labels[key][1]: was for key, was in q.qtype.wording(q).items()}


def add_language_form(stored, posted=None) -> dict | None:
    """"Add a language" on a launched survey's page: ``{choices, language, page, questions}``, ``choices``
    the ``(code, name)`` of the languages the app knows that the survey has not (neither its own nor a
    translation), ``page`` and ``questions`` the input blocks of :func:`translation_forms`, each labelled
    with the original words and empty, or ``posted``'s values (the refused post's form); None for a draft
    or a survey that has every language."""
    survey = stored.survey
    choices = [(code, name) for code, name in NAMES.items()
               if code != original_language(survey) and code not in survey.translations]
    if stored.status == "draft" or not choices:
        return None
    posted = posted or {}
    page = [{"group": False, "inputs": [{"id": f"{ADD}-{key}", "value": "", "textarea": key in LONG_TEXTS,
                                         "label": _with_original(PAGE_LABELS[key], getattr(survey, key))}]}
            for key in PAGE_TEXTS if getattr(survey, key)]
    questions = []
    for i, q in enumerate(survey.questions):
        names = {written: name for name, written in q.qtype.wording_labels(q).values()}
        blocks = _input_blocks(f"{ADD}-questions-{i}", _originals(q), {}, lambda key: names.get(key, key),
                               originals=True)
        questions.append({"number": i + 1, "qid": q.id, "original": q.text, "blocks": blocks})
    for block in [*page, *(b for question in questions for b in question["blocks"])]:
        for field in block["inputs"]:
            field["value"] = str(posted.get(field["id"], ""))
    return {"choices": choices, "language": posted.get("language"), "page": page, "questions": questions}


def added_from_form(stored, form) -> tuple[str, dict]:
    """"Add a language" as posted: the language and its texts in the shape of a definition's translation.
    A text left empty is left out (shown in the original words); so is a list of labels left empty, and an
    empty label among given ones stays in the original words (a list of another length is kept as posted,
    for the store to refuse it by name)."""
    survey = stored.survey
    texts = {key: form.get(f"{ADD}-{key}", "") for key in PAGE_TEXTS if getattr(survey, key)}
    texts = {key: value for key, value in texts.items() if value.strip()}
    questions = {}
    for i, q in enumerate(survey.questions):
        words = {}
        for key, was in _originals(q).items():
            name = f"{ADD}-questions-{i}-{key}"
            if isinstance(was, str):
                if form.get(name, "").strip():
                    words[key] = form.get(name)
                continue
            labels = _posted_labels(form, name)
            if labels and any(label.strip() for label in labels):
                words[key] = [label if label.strip() or j >= len(was) else was[j] for j, label in enumerate(labels)]
        if words:
            questions[q.id] = words
    if questions:
        texts["questions"] = questions
    return form.get("language", ""), texts


def field_id(field: str) -> str:
    """The input of a wording error: ``questions[0].options[1]`` → ``wording-questions-0-options-1``; a
    translation's, ``translations.fr.questions[0].options[1]`` → ``translation-fr-questions-0-options-1``."""
    prefix = "wording-"
    if field.startswith("translations."):
        prefix, field = "translation-", field[len("translations."):]
    return prefix + field.replace("[", "-").replace("].", "-").replace("]", "").replace(".", "-")


def survey_page_extras(stored, role) -> dict:
    """What the design page shows beside the form: sharing, invitations, the wording's history."""
    db = get_readonly_db()
    return dict(role=role, share=share_info(stored), invitation_form=InvitationForm(), share_form=ShareForm(),
                action_form=ActionForm(), shares=access.shares(db, stored.id),
                unused_invitations=invitations.unused(db, stored.id),
                changes=wording_changes(wording_history(db, stored.id), stored.survey))


def render_launched(stored, extras, *, errors=None, status: int = 200, wording=None, translations=None, added=None):
    """The page of an open or closed survey: sharing, lifecycle, the frozen design, wording fixes (of the
    original and of each translation: ``translations`` are the refused post's, language → texts), and "Add a
    language" (``added``: the refused post's form).

    ``errors`` are ``(field id, message)`` pairs, listed at the top and linked to their field."""
    return render_template("dashboard/launched.html", stored=stored, errors=errors or [],
                           wording=wording, wording_inputs=wording_inputs(stored, wording),
                           translation_forms=translation_forms(stored, translations),
                           add_form=add_language_form(stored, added), **extras), status


@bp.route("/<slug>/wording", methods=["POST"])
def wording(slug: str):
    stored, role = survey_for(slug, "editor")
    if not ActionForm().validate_on_submit():
        abort(400, description="csrf_token: the form's security token was not accepted")
    posted = wording_from_form(stored, request.form)
    try:
        fix_wording(get_db(), slug, posted, changed_by=current_researcher()["email"])
    except WordingError as exc:
        target = field_id(exc.field)
        ids = {i["id"] for question in wording_inputs(stored, posted) for block in question["blocks"]
               for i in block["inputs"]}
        if target not in ids and f"{target}-0" in ids:  # the number of a list of labels: its first one
            target = f"{target}-0"
        return render_launched(stored, survey_page_extras(stored, role), status=422, wording=posted,
                               errors=[(target, f"{_where(exc.field, stored)}: {exc.message}")])
    except LifecycleError as exc:
        return render_launched(stored, survey_page_extras(stored, role), status=409, wording=posted,
                               errors=[("wording-form", str(exc))])
    flash("Wording fixed. Respondents see the new text now; the change log below keeps the old one, and the "
          "codebook says which wording each response was answered under.", "info")
    return redirect(url_for("dashboard.views.edit", slug=slug, _anchor="changes-title"))


@bp.route("/<slug>/wording/<language>", methods=["POST"])
def translation(slug: str, language: str):
    """Fix the texts of one of the survey's translations: the same rules, history and errors as the wording."""
    stored, role = survey_for(slug, "editor")
    if not ActionForm().validate_on_submit():
        abort(400, description="csrf_token: the form's security token was not accepted")
    posted = translation_from_form(stored, language, request.form)
    known = language in stored.survey.translations
    try:
        fix_translation(get_db(), slug, language, posted, changed_by=current_researcher()["email"])
    except WordingError as exc:
        forms = translation_forms(stored, {language: posted} if known else None)
        ids = {i["id"] for form in forms for block in [*form["page"], *(b for q in form["questions"] for b in q["blocks"])]
               for i in block["inputs"]}
        target = field_id(exc.field)
        if target not in ids and f"{target}-0" in ids:  # the number of a list of labels: its first one
            target = f"{target}-0"
        if target not in ids:
            target = f"translation-{language}-form" if known else ("translations-heading" if forms else "wording-heading")
        return render_launched(stored, survey_page_extras(stored, role), status=422,
                               translations={language: posted} if known else None,
                               errors=[(target, _where_translation(exc, stored, language))])
    except LifecycleError as exc:  # a draft, nothing changed, or a fix made meanwhile
        if not known:
            return render_launched(stored, survey_page_extras(stored, role), status=409,
                                   errors=[("wording-heading", f"Language {language[:20]!r}: {exc}")])
        return render_launched(stored, survey_page_extras(stored, role), status=409, translations={language: posted},
                               errors=[(f"translation-{language}-form", f"{NAMES[language]}: {exc}")])
    flash(f"{NAMES[language]} text fixed. Respondents reading the survey in {NAMES[language]} see the new text now; the "
          "change log below keeps the old one, and the codebook says which wording each response was answered under.",
          "info")
    return redirect(url_for("dashboard.views.edit", slug=slug, _anchor="changes-title"))


@bp.route("/<slug>/translations", methods=["POST"])
def add_language(slug: str):
    """Give a launched survey a language it has not: the checks of an import, a new text version."""
    stored, role = survey_for(slug, "editor")
    if not ActionForm().validate_on_submit():
        abort(400, description="csrf_token: the form's security token was not accepted")
    language, texts = added_from_form(stored, request.form)
    try:
        add_translation(get_db(), slug, language, texts, changed_by=current_researcher()["email"])
    except WordingError as exc:
        form = add_language_form(stored, request.form)
        ids = {i["id"] for block in [*form["page"], *(b for q in form["questions"] for b in q["blocks"])]
               for i in block["inputs"]} if form else set()
        if exc.field == "language":
            target, message = f"{ADD}-language", f"Language: {exc.message}"
        else:
            target = ADD + field_id(exc.field)[len(f"translation-{language}"):]
            message = _where_translation(exc, stored, language, texts)
        if target not in ids and f"{target}-0" in ids:  # the number of a list of labels: its first one
            target = f"{target}-0"
        if target not in ids and target != f"{ADD}-language":
            target = f"{ADD}-form"
        if not form:
            target = "wording-heading"
        return render_launched(stored, survey_page_extras(stored, role), status=422, added=request.form,
                               errors=[(target, message)])
    except LifecycleError as exc:  # a draft, or a fix made meanwhile
        target = f"{ADD}-form" if add_language_form(stored) else "wording-heading"
        return render_launched(stored, survey_page_extras(stored, role), status=409, added=request.form,
                               errors=[(target, f"Add a language: {exc}")])
    flash(f"{NAMES[language]} added. Respondents can choose {NAMES[language]} on the survey page now; its texts can "
          "be fixed under \"Fix the translations\", and the change log below keeps the addition.", "info")
    return redirect(url_for("dashboard.views.edit", slug=slug, _anchor=f"translation-{language}-heading"))


def _where_translation(exc: WordingError, stored, language: str, held: dict | None = None) -> str:
    """A translation's error in words, the language first: ``French, Question 2, option 1: …``;
    a language the survey has no translation into: ``Language 'de': …``.  ``held``: the language's texts
    (those of the survey's translation, else a language being added)."""
    if held is None:
        if language not in stored.survey.translations:
            return f"Language {language[:20]!r}: {exc.message}"
        held = stored.survey.translations[language]
    rest = exc.field[len(f"translations.{language}"):].lstrip(".")
    if not rest:
        return f"{NAMES.get(language, language[:20])}: {exc.message}"
    match = re.fullmatch(r"questions\[(\d+)\](?:\.(\w+))?(?:\[(\d+)\])?", rest)
    if match and int(match.group(1)) < len(stored.survey.questions):
        number, key, option = match.groups()
        q = stored.survey.questions[int(number)]
        names = {written: name for name, written in q.qtype.wording_labels(q).values()}
        where = f"Question {int(number) + 1}"
        if key:
            label = "text" if key == "text" else names.get(key, key)
            is_list = isinstance(held.get("questions", {}).get(q.id, {}).get(key), list)
            where += f", {label} {int(option) + 1}" if option is not None else f", {label}s" if is_list else f", {label}"
    else:
        where = PAGE_LABELS.get(rest, rest or "its texts")
    return f"{NAMES[language]}, {where}: {exc.message}"


def _where(field: str, stored=None) -> str:
    """``questions[1].options[0]`` → ``Question 2, option 1`` (in the words of the question's type:
    ``Question 3, item 1`` for a list experiment's control item)."""
    match = re.fullmatch(r"questions\[(\d+)\](?:\.(\w+))?(?:\[(\d+)\])?", field)
    if not match:
        return field.capitalize()
    number, part, option = match.groups()
    where = f"Question {int(number) + 1}"
    if part and stored is not None and int(number) < len(stored.survey.questions):
        q = stored.survey.questions[int(number)]
        label = q.qtype.wording_labels(q).get(part, (part, part))[0]
        part = label + "s" if option is None and not isinstance(q.qtype.wording(q).get(part, ""), str) else label
    elif part and option is not None:
        part = part[:-1] if part.endswith("s") else part
    if option is not None:
        return f"{where}, {part or 'option'} {int(option) + 1}"
    return f"{where}, {part}" if part else where


@bp.route("/<slug>/preview")
def preview(slug: str):
    """The survey page as respondents see it (a draft too); nothing can be sent from it."""
    stored, _ = survey_for(slug)
    set_survey_language(choose_language(stored.survey), preview=True)  # ?lang= switches the preview's too
    return render_survey(stored, build_form(stored.survey), preview=True)

