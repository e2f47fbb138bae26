"""Exports that cannot be misread: the codebook, and the design line the responses CSV repeats.

The **codebook** is the survey definition (so ``deniable estimate CODEBOOK.json RESPONSES.csv``
reads it) plus what the reports were made under: each question's ``randomization`` (``k``,
``threshold``, declared and realized ε, ``p``, ``q``), the survey's ``design_fingerprint``
(:func:`~.definition.design_fingerprint`) and, once the wording of a launched survey has been
fixed, ``text_versions``: each wording, the day it was shown from, the day responses record it from
and how many do (the responses CSV says which, per row, in its ``text-version`` column; a response
records the wording its day began with, :data:`TEXT_VERSIONS_NOTE`); the
definition's ``translations`` (:mod:`.translations`: the texts respondents could read in other languages,
not part of the fingerprint); and ``sampling``: the responses file's sampling design — which column holds the weights, the strata,
the clusters, the finite-population correction — or, for a database's export (which has none),
that estimates from it are unweighted (:func:`sampling_section`).  A question with display logic
(``show_if``) adds ``asked_of`` and ``not_asked``: how each export writes a respondent who was not
asked it, apart from one who left it blank (:func:`not_asked_section`).
:func:`~.definition.parse_definition` checks the randomization and the fingerprint on the way back
in, so a codebook whose ε was edited is refused, naming the question and both values.

The **design line** is the responses CSV's first line, a comment::

    # deniable responses | survey=habits | design=sha256:… | drugs: k=2 epsilon=1.0 threshold=3148263749 | age: k=2 direct

(a question with a randomized-response design: ``cheated: design=forced k=2 epsilon=1.609…``, or
``not-ldp`` after its k when the design is not ε-LDP; its weights are in the fingerprint; a check-all
question with a design on each tick: ``used: type=multi design=forced k=3 epsilon=…``, the codebook's
matrix then each tick's, with ``per_tick`` true).

:func:`check_design` compares it with a codebook question by question.
"""

from __future__ import annotations

import json

from deniable.client.mechanism import Mechanism
from deniable.errors import FieldError

from . import logic
from .definition import Survey, design_fingerprint
from .parsing import number

DESIGN_PREFIX = "# deniable responses"
SEPARATOR = " | "


class DesignMismatch(FieldError):
    """The responses were made under another design than the codebook's; the message says how."""


def question_randomization(question) -> dict:
    """What one question's reports were made under, as the codebook states it (a numeric
    question's mechanism and grid are in its definition already).  A type that states its own
    (``codebook_randomization``: the two-group designs) does."""
    own = getattr(question.qtype, "codebook_randomization", None)
    if own is not None:
        return own(question)
    mech = question.mechanism
    design = getattr(mech, "design", None)
    if design is not None:
        # a randomized-response design: its matrix (reports × answers) and the integer weights it is
        # realized on, so that any package taking a misclassification matrix (RRreg's custom model)
        # can analyse the export; ε is the realized one, None when the design is not ε-LDP
        epsilon = mech.epsilon if design.ldp else None
        out = {"k": question.k, "threshold": None, "declared_epsilon": question.epsilon,
               "realized_epsilon": epsilon, "p": None, "q": None, "design": design.name, "ldp": design.ldp,
               "matrix": design.matrix.tolist(), "weights": [list(row) for row in design.weights]}
        if getattr(mech, "per_tick", False):
            # a check-all question: the matrix is each tick's (answers ticked, not ticked; report 0 sent as a
            # tick), applied to every option on its own; ε is the sum over the ticks
            out.update(per_tick=True, tick_epsilon=design.epsilon if design.ldp else None)
        if design.respondent_side:
            # the respondent-side crosswise model: the matrix is at the private fact's stated prevalence; ε holds
            # only against an observer who does not know the fact, as a range over its plausible prevalence,
            # and realized_epsilon (what the survey's total counts) is the range's high end
            params = dict(design.params)
            out.update(side="respondent", fact=params["fact"], prevalence_range=[float(v) for v in params["prevalence_range"]],
                       epsilon_range=list(design.epsilon_range), privacy=design.privacy)
        return out
    if not question.protected:
        return {"k": question.k, "threshold": None, "declared_epsilon": None, "realized_epsilon": None,
                "p": 1.0, "q": 0.0}
    rr = getattr(mech, "rr", mech)  # a numeric grid's or a list's k-ary randomized response
    p, q = getattr(rr, "p", None), getattr(rr, "q", None)
    out = {"k": question.k, "threshold": mech.threshold, "declared_epsilon": question.epsilon,
           "realized_epsilon": mech.epsilon, "p": p, "q": q}
    if isinstance(mech, Mechanism):  # a single choice's k-ary randomized response
        # as a design's matrix too (p on the diagonal, q elsewhere), so one recipe reads every single
        # choice's randomization (the README's R snippet)
        out["matrix"] = [[p if r == t else q for t in range(mech.k)] for r in range(mech.k)]
    return out


SAMPLING_ROLES = {
    "weights": "sampling weights: each respondent stands for this many people of the population "
               "(deniable estimate --weights COLUMN)",
    "strata": "the stratum each respondent was sampled in (--strata COLUMN)",
    "cluster": "the cluster (primary sampling unit) each respondent was sampled in, within its stratum "
               "(--cluster COLUMN)",
    "fpc": "the number of clusters in the population of the respondent's stratum: the finite-population "
           "correction (--fpc COLUMN)",
}
UNWEIGHTED = ("The responses have no sampling weights, strata or clusters: estimates from this file (as on the "
              "dashboard and from deniable estimate without --weights) treat the respondents as a simple random "
              "sample, unweighted.  To weight them, add the design's columns to the responses file and name them "
              "(deniable estimate --weights COLUMN, with --strata, --cluster, --fpc), or rake the respondents to "
              "population margins (--rake MARGINS.json).")


def sampling_section(columns=None) -> dict:
    """The codebook's ``sampling``: which columns of the responses file are its sampling design
    (``columns``: a :class:`~.dataset.DesignColumns`), each with its role in words and the option that
    reads it; without any (a database's export: it has no weights), ``weighted`` false and a note
    that estimates from the file are unweighted."""
    named = columns.named() if columns is not None else {}
    if not named:
        return {"weighted": False, "columns": {}, "note": UNWEIGHTED}
    return {"weighted": "weights" in named,
            "columns": {name: {"role": role, "meaning": SAMPLING_ROLES[role]} for role, name in named.items()},
            "note": "Estimate with the design: deniable estimate CODEBOOK.json RESPONSES "
                    + " ".join(f"--{role} {name}" for role, name in named.items())}


def not_asked_section(question) -> dict:
    """How each export writes that a respondent was not asked ``question`` (its ``show_if`` did not hold
    for their answers), distinct from an answer left blank where the format can say so."""
    from .statfiles import not_asked_value  # statfiles imports this module

    return {"csv": "NA", "parquet": None, "sav": not_asked_value(question), "dta": ".a", "note": NOT_ASKED_NOTE}


NOT_ASKED_NOTE = ("How each export writes that a respondent was not asked this question (asked_of does not hold for "
                  "their answers): the cell NA (CSV); null (Parquet, as not answered: it has one null); this "
                  "user-missing value, labelled \"Not asked\" where the variable has value labels (SPSS); .a (Stata). "
                  "Not answered (asked, left blank) is an empty cell, null, system missing and . (Stata). pandas and R "
                  "read both as missing; neither is a response or counts in n.")


TEXT_VERSIONS_NOTE = ("A response records the wording its day began with: a fix was shown to respondents from the "
                      "moment it was made (since) and is recorded from the next day (recorded_from; null for a "
                      "wording fixed again the same day, which no response records), so that no version divides a "
                      "day's responses by the time they came. Responses of a day on which the wording was fixed "
                      "may have read any wording shown that day.")


def codebook_dict(survey: Survey, text_versions: list[dict] | None = None, sampling=None) -> dict:
    """The codebook of ``survey``: its definition with every question's randomization and the design
    fingerprint; ``text_versions`` (``{version, since, responses, wording}``) when the wording changed;
    and ``sampling`` (:func:`sampling_section`): the responses file's design columns (``sampling``, a
    :class:`~.dataset.DesignColumns`), or that there are none and its estimates are unweighted."""
    data = survey.to_dict()
    for entry, question in zip(data["questions"], survey.questions):
        entry["randomization"] = question_randomization(question)
        if question.show_if is not None:  # its answers come from a subgroup (display logic)
            entry["asked_of"] = logic.asked_of(question)
            entry["not_asked"] = not_asked_section(question)
    data["design_fingerprint"] = design_fingerprint(survey)
    if text_versions:
        data["text_versions"] = text_versions
        data["text_versions_note"] = TEXT_VERSIONS_NOTE
    data["sampling"] = sampling_section(sampling)
    return data


def dumps_codebook(survey: Survey, text_versions: list[dict] | None = None, sampling=None) -> str:
    return json.dumps(codebook_dict(survey, text_versions, sampling), indent=2, ensure_ascii=False) + "\n"


def design_line(survey: Survey) -> str:
    """The responses CSV's first line (without its newline): the survey, the fingerprint, each question's design."""
    parts = [DESIGN_PREFIX, f"survey={survey.slug}", f"design={design_fingerprint(survey)}"]
    for q in survey.questions:
        kind = "".join(f"{key}={value} " for key, value in _fields(q).items())
        if q.protected and q.mechanism.threshold is None:  # a design: its weights are in the fingerprint
            parts.append(f"{q.id}: {kind}k={q.k} epsilon={q.epsilon!r}")
        elif q.protected:
            parts.append(f"{q.id}: {kind}k={q.k} epsilon={q.epsilon!r} threshold={q.mechanism.threshold}")
        else:
            randomized = getattr(q.mechanism, "design", None) is not None or getattr(q.mechanism, "ldp", None) is False
            said = "not-ldp" if randomized else "direct"
            parts.append(f"{q.id}: {kind}k={q.k} {said}")
    return SEPARATOR.join(parts)


CORE = ("k", "epsilon", "threshold")


def _fields(q) -> dict:
    """What the question's type states beyond k, ε and the threshold (a single choice: nothing, as
    before there were types; a number: its type, mechanism and grid), None values left out."""
    return {key: value for key, value in q.qtype.design_fields(q).items() if value is not None}


def _design(q) -> dict:
    """One question's design as a design line states it."""
    return {"k": q.k, "epsilon": q.epsilon, "threshold": q.mechanism.threshold if q.protected else None,
            **{key: _field_value(str(value)) for key, value in _fields(q).items()}}


def _field_value(text: str):
    """A type's design field as read back from a line: a whole number as int, else the text."""
    return number(text, None, int) if text.lstrip("-").isdigit() else text  # FieldError for "²", a digit


def parse_design_line(line: str) -> dict | None:
    """``{"survey", "design", "questions": {qid: {"k", "epsilon", "threshold"}}}`` from a design
    line, or None when ``line`` is not one (a CSV from elsewhere: nothing to compare)."""
    if not line.startswith(DESIGN_PREFIX):
        return None
    info: dict = {"survey": None, "design": None, "questions": {}}
    for part in line.split(SEPARATOR)[1:]:
        part = part.strip()
        if part.startswith(("survey=", "design=")):
            key, value = part.split("=", 1)
            info[key] = value
        elif ": " in part:
            qid, spec = part.split(": ", 1)
            fields = dict(item.split("=", 1) for item in spec.split() if "=" in item)
            try:
                design = {
                    "k": number(fields["k"], "k", int),
                    "epsilon": number(fields["epsilon"], "epsilon") if "epsilon" in fields else None,
                    "threshold": number(fields["threshold"], "threshold", int) if "threshold" in fields else None,
                }
                design.update({key: _field_value(value) for key, value in fields.items() if key not in CORE})
            except (KeyError, FieldError):
                design = {"k": None, "epsilon": None, "threshold": None}
            info["questions"][qid] = design
    return info


def _said(spec: dict) -> str:
    kind = "".join(f"{value}, " if key == "type" else f"{key} {value}, " for key, value in spec.items()
                   if key not in CORE)
    if spec["epsilon"] is None and "design" in spec:
        return f"not ε-LDP ({kind}k = {spec['k']})"
    if spec["epsilon"] is None:
        return f"asked directly ({kind}k = {spec['k']})"
    if spec["threshold"] is None:
        return f"ε = {spec['epsilon']:g} ({kind}k = {spec['k']})"
    return f"ε = {spec['epsilon']:g} ({kind}k = {spec['k']}, threshold {spec['threshold']})"


def check_design(survey: Survey, design: dict | None, *, responses: str, codebook: str) -> None:
    """Raise DesignMismatch if the responses' design line disagrees with the codebook ``survey``.

    The message names the first question that differs and both designs, e.g. ``responses.csv:
    question 'drugs': the responses were collected with ε = 1 (…), but survey.json says ε = 2 (…)``.
    """
    if design is None:
        return
    for q in survey.questions:
        mine = _design(q)
        theirs = design["questions"].get(q.id)
        if theirs is None:
            raise DesignMismatch(f"{responses}: question {q.id!r} of {codebook} is not in the responses' "
                                 "design line: these responses belong to another survey")
        if theirs != mine:
            raise DesignMismatch(f"{responses}: question {q.id!r}: the responses were collected with "
                                 f"{_said(theirs)}, but {codebook} says {_said(mine)}; use the codebook "
                                 "exported with these responses")
    extra = sorted(set(design["questions"]) - {q.id for q in survey.questions})
    if extra:
        raise DesignMismatch(f"{responses}: question {extra[0]!r} of the responses is not in {codebook}")
    if design["design"] and design["design"] != design_fingerprint(survey):
        raise DesignMismatch(f"{responses}: design {design['design']} but {codebook} gives "
                             f"{design_fingerprint(survey)} (the order or the required flags differ)")
