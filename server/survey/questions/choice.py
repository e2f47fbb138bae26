"""Single choice: one answer among 2–64 labelled options (k-ary randomized response).

Definition: ``"options"`` (2–64 labels), optional ``"epsilon"`` — or, instead of ε, a ``"design"``:
one of the randomized-response designs of :mod:`deniable.client.designs` (forced response, the
unrelated question, Warner, Kuk, crosswise, a custom matrix), whose ε is its realized one
(:class:`DesignedChoice`).  Report: the option index on
the wire, the option's label in a text cell, the option index as code.  Sufficient statistics:
the option counts (an array).  Estimates: :func:`deniable.estimators.estimate` (or
:func:`~deniable.estimators.monitor` for confidence sequences); the headline of each option is
the **consistent** estimate (the constrained maximum-likelihood estimate on the simplex,
:mod:`deniable.estimators.marginal`) whenever the unbiased one leaves [0, 1] — the unbiased
estimate stays in the record's ``estimate``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re

import numpy as np

from deniable.client import designs
from deniable.client.mechanism import MAX_EPSILON, TWO_32, check_option, resolve
from deniable.errors import FieldError

from .. import strict_json
from ..definition import DefinitionError, parse_epsilon, MAX_OPTIONS, labels_field
from .base import AuditSampler, Capabilities, NotAvailable, QuestionType, headline, json_number, lines, pct, typed_number
from .audit import Audit
from .builder import Builder
from .exports import Files
from .monitoring import Monitoring
from .presentation import Presentation
from .statistics import Statistics
from .wire import Wire
from .registry import DEFAULT, register

# The builder's "Randomization" of a protected single choice: k-ary randomized response at ε (``rr``),
# or one of the designs, each with its fields (every design of client/designs.py: a custom matrix as rows of numbers).
RANDOMIZATIONS = {"rr": "k-ary randomized response at ε",
                  "forced": "forced response (truth with p, else option i with p_i)",
                  "warner": "Warner's mirrored design (two options)",
                  "unrelated": "unrelated question with known prevalence (two options)",
                  "kuk": "Kuk's two decks (two options)",
                  "crosswise": "crosswise model, randomized by the device (two options)",
                  "respondent_crosswise": ("crosswise model, combined by the respondent with a private fact "
                                           "(two options)"),
                  "custom": "a custom matrix (one row per report, one column per option)"}
# A design parameter → the builder slot's field that holds it (a list parameter: one value per line).
DESIGN_SLOTS = {"p": "design_p", "forced": "design_forced", "prevalence": "design_prevalence",
                "theta_1": "design_theta_1", "theta_2": "design_theta_2", "fact": "design_fact",
                "prevalence_range": "design_range", "matrix": "design_matrix"}
LIST_PARAMETERS = {"forced": ("enter the forced shares p_i, one per option and line, such as 0.1",
                              "a probability such as 0.1"),
                   "prevalence_range": ("enter the lowest and the highest plausible prevalence of the private fact, "
                                        "one per line, such as 0.22 and 0.28", "a probability such as 0.22")}


MATRIX_EMPTY = ("enter the matrix: one line per report (the reports are the options, in their order), on each line "
                "one probability per option separated by spaces, such as “0.7 0.15 0” (each column adds up to 1)")


def cells(line: str) -> list[str]:
    """One line of a custom matrix as typed: numbers separated by spaces or semicolons (a comma after a number
    is a separator too: ``0.7, 0.2``), or by commas alone when the line has no space (``0.7,0.2``); a comma
    inside a number separated by spaces is its decimal point (``0,7 0,3``), as everywhere in the builder."""
    if re.search(r"[\s;]", line.strip()):
        return [cell.rstrip(",") for cell in re.split(r"[\s;]+", line.strip()) if cell.rstrip(",")]
    return [cell for cell in line.split(",") if cell.strip()]


def builder_design(raw: dict, where: tuple, protected: bool, choices: dict = RANDOMIZATIONS) -> dict | None:
    """The definition's ``"design"`` object of a builder slot whose ``randomization`` names a design (None
    for randomized response at ε, or a question asked directly): numbers read as the builder reads them
    (``0,75`` is 0.75), a list one per line; DefinitionError at the parameter's path, and at the design's
    name for one that is not among the type's ``choices``."""
    name = raw.get("randomization") or "rr"
    if not protected or name == "rr":
        return None
    if name not in choices:
        raise DefinitionError((*where, "design", "name"), f"choose one of: {', '.join(choices.values())}")
    fixed, keys = designs.VARIANTS.get(name, ({"name": name}, designs.PARAMETERS.get(name, ())))
    spec = dict(fixed)
    for key in keys:
        path = (*where, "design", key)
        if key == "fact":  # words, as typed
            spec[key] = (raw.get(DESIGN_SLOTS[key]) or "").strip()
            if not spec[key]:
                raise DefinitionError(path, "enter the private fact's question, such as “Is your mother's birthday "
                                            "in January, February or March?”")
        elif key == "matrix":  # one line per report, its numbers separated by spaces (or commas)
            rows = [cells(line) for line in lines(raw.get(DESIGN_SLOTS[key]))]
            if not rows:
                raise DefinitionError(path, MATRIX_EMPTY)
            spec[key] = [[typed_number(v, (*path, r, c), "a probability such as 0.7") for c, v in enumerate(row)]
                         for r, row in enumerate(rows)]
        elif key in LIST_PARAMETERS:
            values = lines(raw.get(DESIGN_SLOTS[key]))
            empty, what = LIST_PARAMETERS[key]
            if not values:
                raise DefinitionError(path, empty)
            spec[key] = [typed_number(v, (*path, i), what) for i, v in enumerate(values)]
        else:
            spec[key] = typed_number(raw.get(DESIGN_SLOTS[key]), path, "a probability such as 0.25")
    return spec


def _shown(value) -> str:
    """A design parameter as the builder shows it, so that reading it back gives the same number (words as
    they are)."""
    if isinstance(value, (list, tuple)):  # a row of a custom matrix: its numbers separated by spaces
        return " ".join(_shown(v) for v in value)
    return value if isinstance(value, str) else str(value) if isinstance(value, int) else repr(float(value))


class Choice(Wire, Files, Statistics, Monitoring, Presentation, Builder, Audit, QuestionType):
    name = "choice"
    label = "single choice"
    keys = frozenset({"type", "options", "design"})
    needed = ("options",)
    capabilities = Capabilities(crosstab=None, regression=None, covariate=None, condition=None, categorical=True,
                                shuffles=True)
    code_dtype = np.int16

    def parse(self, data, where, epsilon):
        labels = labels_field(data["options"], (*where, "options"), 2, MAX_OPTIONS, "options")
        if "design" in data:
            if self.name != DEFAULT:  # a type built on the choice keeps its own mechanism
                raise DefinitionError((*where, "design"), f"a {self.label} question takes no design (only a "
                                      "single-choice question does)")
            return parse_design(data["design"], labels, where, epsilon)
        if epsilon is not None:
            epsilon = parse_epsilon(epsilon, len(labels), (*where, "epsilon"))
        return {"options": labels, "epsilon": epsilon}

    def to_dict(self, q):
        data = {"options": list(q.options)}
        if q.protected:
            data["epsilon"] = q.epsilon
        return data

    def mechanism(self, q):
        return resolve(q.k, q.epsilon)

    def stored_design(self, q):
        return [q.k, q.mechanism.threshold if q.protected else None]

    def from_spec(self, spec):
        return {"design": canonical(spec["design"])} if "design" in spec else {}

    def design(self, q):
        return ()  # a choice's fingerprint is the one from before there were types

    # ------------------------------------------------------------ reports

    def check_report(self, q, value):
        return check_option(value, q.k)

    def answer_in(self, q, code, options):
        return int(code) in options

    def text_of(self, q, code):
        return q.options[int(code)]

    def code_of(self, q, text):
        return q.options.index(text) if text in q.options else None

    def expected(self, q):
        return "one of: " + ", ".join(q.options)

    def stats(self, q, codes, counts):
        return self.dense(q, codes, counts)

    def n_of_stats(self, q, stats):
        return int(np.sum(stats))

    # ------------------------------------------------------------ estimates

    def estimate(self, q, stats, *, method, confidence, simultaneous, monitoring=False, tuned_for=10_000):
        from deniable import estimators

        if monitoring:
            return estimators.monitor(np.asarray(stats), q.epsilon, confidence=confidence,
                                      simultaneous=simultaneous, tuned_for=tuned_for)
        return estimators.estimate(np.asarray(stats), q.epsilon, confidence=confidence, method=method,
                                   simultaneous=simultaneous)

    def record(self, q, result):
        data = {"id": q.id, "text": q.text, **result.as_dict(q.options), "note": result.note or None}
        if not q.protected:
            data.update(epsilon=None, declared_epsilon=None)
        return data

    def csv_rows(self, q, result):
        data = self.record(q, result)
        base = {k: v for k, v in data.items() if k not in ("options", "id", "text")}
        for i, option in enumerate(data["options"]):
            yield {"question": q.id, "option": i, **base, **option}

    def table(self, q, result, grid):
        if q.protected:
            design = (f"n = {int(result.n):,} · ε = {result.epsilon:.4f} (declared {q.epsilon:g}) · "
                      f"p = {result.p:.4f}, q = {result.q:.4f}")
        else:
            design = f"n = {int(result.n):,} · asked directly (not randomized)"
        which = "simultaneous (Bonferroni) " if result.simultaneous else ""
        rows = [[label, f"{int(result.noisy_counts[i]):,}", pct(result.estimate[i]), pct(result.consistent[i]),
                 pct(result.std_error[i]), f"[{pct(result.ci_low[i])}, {pct(result.ci_high[i])}]"]
                for i, label in enumerate(q.options)]
        return [f"  {design}", f"  {100 * result.confidence:g}% {which}intervals, method: {result.method}",
                *grid(["option", "reported", "estimate", "consistent", "std.err", "interval"], rows)]

    def headlines(self, q, record):
        return [(headline(o), o["ci_low"], o["ci_high"]) for o in record["options"]]

    def chart(self, q, record):
        rows = record["options"]
        return {"labels": list(q.options), "estimate": [headline(r) for r in rows],
                "ci_low": [r["ci_low"] for r in rows], "ci_high": [r["ci_high"] for r in rows]}

    def examples(self):
        return [({"text": "Have you ever cheated in an exam?", "options": ["Yes", "No"], "epsilon": 1.0}, [0.3, 0.7]),
                ({"text": "Which drug have you used most?", "options": ["None", "Cannabis", "Other"], "epsilon": 2.0},
                 [0.6, 0.3, 0.1]),
                ({"text": "Which year of study are you in?", "options": ["First", "Second", "Third"],
                  "required": False}, [0.4, 0.35, 0.25]),
                # the randomized-response designs (DesignedChoice): forced response with p_1 ≠ p_0, binary and
                # k-ary; Warner's; the crosswise model combined by the respondent; a custom matrix with a zero
                # cell (report 1 rules answer 3 out: not ε-LDP)
                ({"text": "Have you ever driven after drinking?", "options": ["Yes", "No"],
                  "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}}, [0.2, 0.8]),
                ({"text": "How often have you taken something from a shop without paying?",
                  "options": ["Never", "Once", "More than once"],
                  "design": {"name": "forced", "p": 0.7, "forced": [0.12, 0.1, 0.08]}}, [0.7, 0.2, 0.1]),
                ({"text": "Have you ever lied on a job application?", "options": ["Yes", "No"],
                  "design": {"name": "warner", "p": 0.75}}, [0.25, 0.75]),
                ({"text": "Have you ever evaded a tax?", "options": ["Yes", "No"],
                  "design": {"name": "crosswise", "side": "respondent", "prevalence": 0.25,
                             "fact": "Is your mother's birthday in January, February or March?",
                             "prevalence_range": [0.23, 0.27]}}, [0.15, 0.85]),
                ({"text": "How many times have you called in sick when you were well?",
                  "options": ["Never", "Once or twice", "More often"],
                  "design": {"name": "custom", "matrix": [[0.7, 0.15, 0.0], [0.2, 0.7, 0.2], [0.1, 0.15, 0.8]]}},
                 [0.5, 0.3, 0.2])]

    # ------------------------------------------------------------ exports

    def stat_columns(self, q, codes):
        values = np.where(codes >= 0, codes + 1, np.nan).astype(float)
        return [("", values, {i + 1: label for i, label in enumerate(q.options)}, q.text)]

    def parquet_array(self, q, codes):
        """The labels, dictionary-encoded over every option (unused ones too), null = not answered."""
        import pyarrow as pa

        indices = np.asarray(codes).astype(np.int16)
        return pa.DictionaryArray.from_arrays(pa.array(indices, mask=indices < 0),
                                              pa.array(list(q.options), pa.string()))

    # ------------------------------------------------------------ monitoring, releases and the public page

    anytime = True

    def release_labels(self, q):
        return list(q.options)

    def group_columns(self, q):
        """One column per option: a report counts in its option's."""
        return list(q.options), np.eye(q.k, dtype=np.int64)

    def group_estimates(self, q, counts, noisy, beta, confidence):
        """Each option's share: k-ary randomized response inverted, each interval alone
        (:func:`deniable.estimators.release.group_shares`)."""
        from deniable.estimators.release import group_shares

        mech = q.mechanism
        estimate, low, high = group_shares(counts, noisy, mech.p, mech.q, beta, confidence)
        return [{"label": option, "estimate": None if estimate is None else float(estimate[j]),
                 "ci_low": float(low[j]), "ci_high": float(high[j]), "lower": 0.0, "upper": 1.0}
                for j, option in enumerate(q.options)]

    def monitor_series(self, q, days, cumulative, *, confidence, tuned_for):
        """Confidence sequences per option (:func:`deniable.estimators.monitor_path`: a beta-binomial
        mixture martingale, time-uniform, Howard et al. 2021), beside the fixed-n exact interval."""
        from deniable import estimators

        cumulative = np.vstack([np.asarray(c, dtype=np.int64) for c in cumulative])
        table = np.diff(np.vstack([np.zeros((1, q.k), dtype=np.int64), cumulative]), axis=0)
        path = estimators.monitor_path(table, q.epsilon, labels=days, confidence=confidence, tuned_for=tuned_for)
        return {"anytime": True, "labels": list(path.labels), "n": [int(n) for n in path.n],
                "epsilon": path.epsilon if q.protected else None,
                "series": [{"label": label, "estimate": path.estimate[:, i].tolist(),
                            "ci_low": path.ci_low[:, i].tolist(), "ci_high": path.ci_high[:, i].tolist(),
                            "fixed_low": path.fixed_low[:, i].tolist(), "fixed_high": path.fixed_high[:, i].tolist(),
                            "lower": 0.0, "upper": 1.0} for i, label in enumerate(q.options)]}

    def summary(self, q, record):
        """Each option's share (the headline inside its interval) with its randomized reports."""
        rows = super().summary(q, record)
        for row, option in zip(rows, record["options"]):
            row["noisy_count"] = option["noisy_count"]
        return rows

    def stats_to_json(self, q, stats):
        return [int(c) for c in stats]  # the option counts, as releases have always stored them

    def stats_from_json(self, q, data):
        return np.asarray(data, dtype=np.int64)

    # ------------------------------------------------------------ the survey page
    # (a choice is drawn as radio buttons by survey.html and survey.js: no card, no script)

    def explanation(self, q, *, gettext, locale):
        """k-ary randomized response in words (:func:`..explain.explain`); nothing more for a direct question."""
        from ..explain import explain

        return explain(q.epsilon, q.k, gettext=gettext, locale=locale) if q.protected else None

    def api_design(self, q):
        """``options``, ``k`` and, when protected, ``epsilon``, ``threshold``, ``p``, ``q`` and ``realized_epsilon``
        (no ``type`` for a plain choice: the API's questions had none before there were types; a type
        built on the choice, such as a rating scale, adds its name)."""
        item = {"options": list(q.options), "k": q.k}
        if self.name != DEFAULT:
            item["type"] = self.name
        if q.protected:
            mech = q.mechanism
            item.update(epsilon=q.epsilon, threshold=mech.threshold, p=mech.p, q=mech.q, realized_epsilon=mech.epsilon)
        return item

    # ------------------------------------------------------------ simulation

    def truth(self, q, value, where):
        from ..simulate import TruthError, probabilities, sums_to_one

        if (not isinstance(value, list)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            raise TruthError(f"{where}: must be a list of {q.k} numbers (one per option)")
        if len(value) != q.k:
            raise TruthError(f"{where}: has {len(value)} probabilities, "
                             f"but the question has {q.k} options ({', '.join(q.options)})")
        probs = probabilities(value, where, q.k, "one per option")
        sums_to_one(value, where)
        return probs

    def simulate(self, q, truth, n, rng):
        from deniable.client import randomize

        true = rng.choice(q.k, size=n, p=truth / truth.sum())
        reported = randomize(true, q.k, q.epsilon, rng=rng) if q.protected else true
        return reported.astype(np.int16)

    # ------------------------------------------------------------ builder and wording

    randomization_choices = RANDOMIZATIONS
    design_slots = DESIGN_SLOTS

    @property
    def slot_fields(self):
        """The options and, for a single choice itself (not a type built on it), the randomization and
        the design parameters' fields."""
        return ("options", "randomization", *DESIGN_SLOTS.values()) if self.name == DEFAULT else ("options",)

    def builder_dict(self, raw, where, protected):
        """The options and, when protected with a design chosen (``randomization``), its ``"design"``
        object: numbers read as the builder reads them (``0,75`` is 0.75), a list one per line."""
        data = {"options": lines(raw.get("options"))}
        design = builder_design(raw, where, protected) if self.name == DEFAULT else None
        return data if design is None else {**data, "design": design}

    def builder_entry(self, q):
        entry = {"options": "\n".join(q.options)}
        if self.name == DEFAULT:
            entry.update(randomization="rr", **{slot: "" for slot in DESIGN_SLOTS.values()})
        return entry

    # ------------------------------------------------------------ planning

    plan_region = True  # the panel shows the ε-DP region of a test of one answer
    plan_needs = f"k:2:{MAX_OPTIONS}"
    plan_missing = (f"Enter at least two options (at most {MAX_OPTIONS}) to see how private and how precise this "
                    "question will be.")

    def plan(self, q, target_n, margin, confidence=0.95):
        """Exact: :func:`..planning.question_plan` (Feldman–Cousins intervals summed over the binomial)."""
        from ..planning import question_plan

        return question_plan(q.epsilon, q.k, target_n, margin, confidence)

    def plan_query(self, args, number):
        """``k`` options and, for a single choice, an optional ``design``: the definition's design object as
        JSON (``{"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}``), planned by :class:`DesignedChoice`."""
        data = {"options": [str(j) for j in range(number("k", int, 2, MAX_OPTIONS))]}
        raw = args.get("design", "")
        if raw and self.name == DEFAULT:
            try:
                data["design"] = strict_json.loads(raw[:4000])
            except strict_json.JSONError:
                raise FieldError('design: must be a JSON object such as {"name": "warner", "p": 0.75}',
                                 "design") from None
        return data

    # ------------------------------------------------------------ audit and the codebook

    def audit_samplers(self):
        return (CHOICE_AUDIT, DESIGN_AUDIT)  # k-ary randomized response, and a design (DesignedChoice)

    def design_fields(self, q):
        # a choice's design line is the one from before there were types (like its fingerprint,
        # :meth:`design`); a type built on it that adds to its fingerprint states its name
        return {"type": self.name} if self.design(q) else {}


# ---------------------------------------------------------------- randomized-response designs

NOT_YET = "not available yet for a question with a randomized-response design"


def canonical(spec) -> str:
    """A design object as the question keeps it: JSON with ``name`` first, then its parameters as given."""
    ordered = {"name": spec["name"], **{key: spec[key] for key in designs.keys_of(spec["name"]) if key in spec}}
    if ordered.get("side") == "device":  # the default: the crosswise model randomized by the device
        del ordered["side"]
    return json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)


def _path(field: str) -> tuple:
    """``"forced[1]"`` → ``("forced", 1)``: a design parameter's place inside ``design``."""
    return tuple(int(index) if index else name for name, index in re.findall(r"([A-Za-z_]\w*)|\[(\d+)\]", field))


def parse_design(raw, labels, where, epsilon) -> dict:
    """The :class:`Question` fields of a choice with a ``"design"``: its ε is the design's realized one
    (None when the design is not ε-LDP: a report that rules an answer out), never a declared one."""
    if epsilon is not None:
        raise DefinitionError((*where, "epsilon"), "leave epsilon out of a question with a design: its ε is the "
                              "design's own, computed from its matrix")
    try:
        design = designs.from_definition(raw, labels)
    except designs.DesignError as exc:
        raise DefinitionError((*where, "design", *_path(exc.field)), exc.problem) from None
    if design.ldp and design.epsilon > MAX_EPSILON:
        raise DefinitionError((*where, "design"), f"the design's ε is {design.epsilon:.4g}, above the largest a "
                              f"question may have ({MAX_EPSILON:g}): its answers would be practically exposed")
    return {"options": labels, "epsilon": design.epsilon if design.ldp else None, "design": canonical(raw)}


@functools.lru_cache(maxsize=1024)
def _realized(spec: str, labels: tuple) -> designs.Design:
    return designs.from_definition(json.loads(spec), list(labels))


def design_of(q) -> designs.Design:
    """The realized design of a question with one (:func:`deniable.client.designs.from_definition`)."""
    return _realized(q.design, q.options)


def per_option(design) -> list[tuple[float, float]]:
    """``(p_i, q_i)`` per option: report i's probability under answer i and under every other answer,
    or NotAvailable when the design has no such form (a report whose probability differs between two
    other answers, or is not likelier under its own answer)."""
    from deniable.estimators.joint import option_channels, own_reports  # the cross-tab's test of the same form

    try:
        return option_channels(own_reports(design)[0])
    except FieldError:
        raise NotAvailable(f"estimates within groups are {NOT_YET} unless each report is likelier under its "
                           f"own answer than under any other, equally (the {design.name} design is not)") from None


def design_explanation(design, coin: str, epsilon: float, *, gettext, locale) -> dict:
    """What a designed question's respondent reads: the design's sentence ``coin`` with the bounds of
    ``epsilon`` (the question's realized ε), or, for a design that is not ε-LDP, the sentence and "not
    protected by ε" (like the plain list experiment); a single choice's and a check-all's alike."""
    from ..explain import bounds_sentences

    if design.ldp:
        return {**bounds_sentences(epsilon, gettext=gettext, locale=locale, matrix=design.matrix), "declared_epsilon": None,
                "coin": coin, "protected": True, "design": design.name}
    _ = gettext
    return {"epsilon": None, "coin": coin + " " + _("Something it may send happens only with one of the answers, "
                                                      "so it can give that answer away."),
            "posterior": "", "odds": "", "summary": f"Not ε-LDP (the {design.name} design has a zero cell).",
            "protected": False, "warning": None, "design": design.name,
            "note": _("Not protected by ε."), "sent": _("not protected by ε — randomized by the survey's design")}


class DesignedChoice(Choice):
    """A single choice randomized by a design of :mod:`deniable.client.designs` instead of k-ary
    randomized response: the report of option i is stored as option i's code; ε is the design's
    realized one (a design with a zero cell is not ε-LDP: asked like the plain list experiment,
    labelled so, with no ε); estimates by :func:`deniable.estimators.designs.estimate_design`.
    The surfaces that do not handle designs yet say so (:data:`NOT_YET`)."""

    label = "single choice with a randomized-response design"
    # a cross-tab: the joint matrix is the Kronecker product of the two (estimators/joint.py); an outcome of a
    # regression: the design's matrix is in the likelihood (:mod:`deniable.estimators.rrlogit`)
    capabilities = dataclasses.replace(
        Choice.capabilities, covariate="its reports are randomized by a design, so they are not its true answers",
        # the builder has fields for the designs in RANDOMIZATIONS; for the others it shows the survey, and
        # refuses to save it without the design (:meth:`refuses_builder`)
        builder=("the builder cannot edit a randomized-response design yet: change the survey in its "
                 "definition (definition.json) and import it, or delete the draft and import a new one"))
    anytime = False
    plan_region = False
    plan_template = "dashboard/plan/design.html"

    def refuses_builder(self, q):
        """None for a design the builder shows whole (:data:`RANDOMIZATIONS`), else the ``builder`` capability."""
        return None if designs.variant_of(json.loads(q.design)) in RANDOMIZATIONS else self.capabilities.builder

    def builder_entry(self, q):
        """The slot of a designed question: ``randomization`` names the design, its parameters in their
        fields exactly as stored (a float by its shortest repr, so a save stores the same JSON)."""
        spec = json.loads(q.design)
        entry = {"options": "\n".join(q.options), "randomization": designs.variant_of(spec), "protection": "protected",
                 "epsilon": "", **{slot: "" for slot in DESIGN_SLOTS.values()}}
        for key, slot in DESIGN_SLOTS.items():
            if key in spec:
                value = spec[key]
                entry[slot] = "\n".join(_shown(v) for v in value) if isinstance(value, list) else _shown(value)
        return entry

    def to_dict(self, q):
        return {"options": list(q.options), "design": json.loads(q.design)}

    def mechanism(self, q):
        return designs.DesignMechanism(design_of(q))

    def spec(self, q):
        return {"design": json.loads(q.design)}

    def stored_design(self, q):
        d = design_of(q)
        return [q.k, None, d.name, hashlib.sha256(json.dumps(d.weights).encode()).hexdigest()[:12]]

    def design(self, q):
        d = design_of(q)
        return ("design", d.name, [list(row) for row in d.weights])

    def design_fields(self, q):
        return {"design": design_of(q).name}

    # ------------------------------------------------------------ wording

    def private_fact(self, q) -> str | None:
        """The private fact's question of a respondent-side crosswise design as written, else None."""
        spec = json.loads(q.design)
        return spec.get("fact") if spec.get("side") == "respondent" else None

    def wording(self, q):
        """The text, the option labels and, for the respondent-side crosswise model, its private ``fact``: words
        the respondent reads, not what the reports mean (:meth:`design` and :meth:`stored_design` use the
        design's name and weights only), so a launched survey may fix it and a translation may hold it."""
        words = super().wording(q)
        fact = self.private_fact(q)
        return words if fact is None else {**words, "fact": fact}

    def wording_labels(self, q):
        labels = super().wording_labels(q)
        return labels if self.private_fact(q) is None else {**labels, "fact": ("private fact", "fact")}

    def reworded(self, q, texts):
        """The text and labels, and a new private fact in the design's parameters (nothing else of the design
        changes: its name, prevalence and range stay)."""
        fields = super().reworded(q, texts)
        if "fact" in texts and self.private_fact(q) is not None:
            fields["design"] = canonical({**json.loads(q.design), "fact": texts["fact"]})
        return fields

    # ------------------------------------------------------------ estimates

    def estimate(self, q, stats, *, method, confidence, simultaneous, monitoring=False, tuned_for=10_000):
        from deniable.estimators.designs import estimate_design

        return estimate_design(np.asarray(stats, dtype=np.int64), design_of(q), confidence=confidence, method=method,
                               answers=q.options)

    def record(self, q, result):
        d = design_of(q)
        rows = result.to_dict()["answers"]
        return {"id": q.id, "text": q.text, "n": result.n, "epsilon": json_number(result.epsilon) if d.ldp else None,
                "declared_epsilon": None, "ldp": d.ldp, "design": d.name, "p": None, "q": None,
                "method": result.method, "confidence": result.confidence, "simultaneous": False,
                "note": result.note, "converged": result.converged, "privacy": d.privacy,
                **({"side": "respondent", "epsilon_range": list(d.epsilon_range)} if d.respondent_side else {}),
                "options": [{"label": option, "noisy_count": int(result.counts[i]), "estimate": row["estimate"],
                             "consistent": row["consistent"], "std_error": json_number(result.std_error[i]),
                             "ci_low": row["ci_low"], "ci_high": row["ci_high"]}
                            for i, (option, row) in enumerate(zip(q.options, rows))]}

    def table(self, q, result, grid):
        d = design_of(q)
        side = " (respondent-side)" if d.respondent_side else ""
        head = f"  n = {int(result.n):,} · {d.name} design{side} · {d.privacy}"
        which = (f"  {100 * result.confidence:g}% intervals, method: {result.method}" if result.method
                 else "  no reports yet: no interval" if not result.n
                 else "  no exact interval for this design" + (" with more than two options" if q.k > 2 else ""))
        rows = [[label, f"{int(result.counts[i]):,}", pct(result.estimate[i]), pct(result.consistent[i]),
                 pct(result.std_error[i]),
                 "—" if result.ci_low is None else f"[{pct(result.ci_low[i])}, {pct(result.ci_high[i])}]"]
                for i, label in enumerate(q.options)]
        return [head, which, *grid(["option", "reported", "estimate", "consistent", "std.err", "interval"], rows)]

    def unprotected(self, q):
        return f"not ε-LDP: randomized by the {design_of(q).name} design, one of whose reports can give an answer away"

    # ------------------------------------------------------------ exports

    def stat_columns(self, q, codes):
        """As a choice's (code i + 1 for report i), but labelled as the design's reports mean them where they are
        not the options: the crosswise model's "same"/"different" (either side), Kuk's "red"/"black".  The
        responses CSV and Parquet keep the option label of each report's code, which every reader maps back."""
        ((suffix, values, _, label),) = super().stat_columns(q, codes)
        return [(suffix, values, {i + 1: report for i, report in enumerate(design_of(q).reports)}, label)]

    # ------------------------------------------------------------ surfaces that do not handle designs yet

    def release_labels(self, q):
        raise NotAvailable(f"releases are {NOT_YET}")

    def group_columns(self, q):
        """One column per option, as a k-ary choice's — for a design whose every report i has one
        probability ``p_i`` under answer i and one ``q_i < p_i`` under every other answer (binary designs
        with the report likelier under its own answer, forced response): :meth:`group_estimates`
        needs that form."""
        per_option(design_of(q))
        return super().group_columns(q)

    def group_estimates(self, q, counts, noisy, beta, confidence):
        """Each option's share within a group: report i's count is Binomial(n, ``q_i + (p_i − q_i)π_i``)
        (:func:`per_option`), so :func:`deniable.estimators.release.noisy_group_interval` with option i's
        own ``p_i``, ``q_i`` covers π_i, each interval alone; the estimate is ``(c_i/n − q_i)/(p_i − q_i)``
        (the design's unbiased estimate)."""
        from deniable.estimators.joint import own_reports
        from deniable.estimators.release import noisy_group_interval

        pq = per_option(design_of(q))
        c = np.asarray(counts, dtype=float)
        if own_reports(design_of(q))[1]:  # its two reports swapped, each likelier under its own answer
            c, noisy = c[::-1], np.asarray(noisy)[::-1]
        n = c.sum()
        out = []
        for j, option in enumerate(q.options):
            p_j, q_j = pq[j]
            low, high = noisy_group_interval(noisy, j, p_j, q_j, beta, confidence)
            out.append({"label": option, "estimate": float((c[j] / n - q_j) / (p_j - q_j)) if n > 0 else None,
                        "ci_low": float(low), "ci_high": float(high), "lower": 0.0, "upper": 1.0})
        return out

    def monitor_series(self, q, days, cumulative, *, confidence, tuned_for):
        """Each day's fixed-n design estimate from the reports up to that day (the protocol's default:
        not anytime-valid, and the page says so)."""
        return Monitoring.monitor_series(self, q, days, cumulative, confidence=confidence, tuned_for=tuned_for)

    def plan(self, q, target_n, margin, confidence=0.95):
        """Exact for binary and forced-response designs, else the normal approximation, labelled
        (:func:`..type_planning.design_plan`)."""
        from ..type_planning import design_plan

        d = design_of(q)
        name = designs.variant_of(json.loads(q.design))
        return {**design_plan(q, target_n, margin, confidence), "type": self.name, "template": self.plan_template,
                "design_label": RANDOMIZATIONS.get(name, f"the {d.name} design").split(" (")[0],
                "privacy": d.privacy, "epsilon_range": list(d.epsilon_range) if d.respondent_side else None}

    def audit_sampler(self, q):
        """The design's sampler; NotAvailable for the respondent-side crosswise model, which has no device
        randomness to sample (the respondent combines the answer with a private fact)."""
        d = design_of(q)
        if d.respondent_side:
            raise NotAvailable("the respondent-side crosswise design is not sampled by the device (the respondent "
                               "combines the answer with a private fact, and the device sends that choice as is), "
                               f"so deniable audit cannot check it: {d.privacy}")
        return DESIGN_AUDIT

    def covariate_values(self, q, codes):
        raise NotAvailable(self.covariate)

    # ------------------------------------------------------------ the survey page and the API

    def page_data(self, q):
        """The design's cumulative integer weights, one attribute per true answer (``data-column-T``: the
        report is the first r whose cumulative weight exceeds one uint32 draw); ``data-threshold`` 0 says
        "randomized, not by k-ary randomized response" to types.js (it is never 2^32 here)."""
        d = design_of(q)
        if d.respondent_side:
            # the respondent randomizes: the device sends "same" (0) or "different" (1) as chosen (data-threshold
            # 2^32, as for a question asked directly); the card shows the private fact and the two choices
            return {"attrs": {"data-type": "design", "data-k": q.k, "data-threshold": TWO_32, "data-crosswise": 1},
                    "crosswise": {"fact": dict(d.params)["fact"]}}
        columns = d.cumulative()
        attrs = {"data-type": "design", "data-k": q.k, "data-threshold": 0}
        attrs.update({f"data-column-{t}": " ".join(str(int(c)) for c in columns[t]) for t in range(q.k)})
        return {"attrs": attrs}

    card = "cards/design.html"
    script = "types/design.js"

    def explanation(self, q, *, gettext, locale):
        """The design's sentence (:func:`..explain.design_coin`) with the bounds of its realized ε; for a
        design that is not ε-LDP, the sentence and "not protected by ε" (like the plain list experiment)."""
        from ..explain import design_coin

        d = design_of(q)
        if d.respondent_side:
            from ..explain import respondent_crosswise

            return {**respondent_crosswise(d, gettext=gettext, locale=locale), "declared_epsilon": None,
                    "protected": True, "design": d.name}
        coin = design_coin(d, q.options, gettext=gettext, locale=locale)
        return design_explanation(d, coin, d.epsilon, gettext=gettext, locale=locale)

    def api_design(self, q):
        """``options``, ``k``, the ``design`` (its name and parameters), its integer ``weights``
        (reports × answers, each column summing to 2^32: the browser samples exactly these),
        ``realized_epsilon`` (None when not ε-LDP) and ``ldp``."""
        d = design_of(q)
        return {"options": list(q.options), "k": q.k, "design": json.loads(q.design),
                "weights": [list(row) for row in d.weights], "realized_epsilon": d.epsilon if d.ldp else None,
                "epsilon": d.epsilon if d.ldp else None, "ldp": d.ldp,
                **({"epsilon_range": list(d.epsilon_range)} if d.respondent_side else {})}

    def simulate(self, q, truth, n, rng):
        from deniable.client.randomizer import randomize_design

        true = rng.choice(q.k, size=n, p=truth / truth.sum())
        return randomize_design(true, design_of(q), rng=rng).astype(np.int16)


class ChoiceAudit(AuditSampler):
    """k-ary randomized response: every option is a true input and every report an event."""

    name = "choice"
    js = """async ([value, k, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(k).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomize(value, k, threshold)] += 1;
  return counts;
}"""

    def label(self, mech):
        return f"k={mech.k}"

    def inputs(self, mech):
        return list(range(mech.k))

    def js_args(self, mech, value):
        return [value, mech.k, mech.threshold]

    def python_row(self, mech, value, samples, rng):
        from deniable.client import randomize

        return np.bincount(randomize(np.full(samples, value), mech.k, mech.declared_epsilon, rng), minlength=mech.k)

    def k(self, mech):
        return mech.k

    def defaults(self, ks, epsilons):
        from deniable.client.mechanism import mechanism

        return [mechanism(k, eps) for eps in epsilons for k in ks]


CHOICE_AUDIT = ChoiceAudit()


class DesignAudit(AuditSampler):
    """A randomized-response design (:mod:`deniable.client.designs`): every option is a true input and
    every report an event (ε is the largest log-ratio of one report's probabilities, so these cells
    are the tight ones).  A design with a zero cell is shown not to be ε-LDP."""

    name = "design"
    js = """async ([value, columns, n]) => {
  const d = await import('/static/designs.js');
  const counts = new Array(columns[0].length).fill(0);
  for (let i = 0; i < n; i++) counts[d.sampleDesign(value, columns)] += 1;
  return counts;
}"""
    not_protected = "a randomized-response design with a zero cell (a report that rules an answer out)"

    def label(self, mech):
        return f"{mech.design.name} k={mech.k}"

    def inputs(self, mech):
        return list(range(mech.k))

    def js_args(self, mech, value):
        return [value, [[int(c) for c in column] for column in mech.design.cumulative()]]

    def python_row(self, mech, value, samples, rng):
        from deniable.client.randomizer import randomize_design

        return np.bincount(randomize_design(np.full(samples, value), mech.design, rng), minlength=mech.design.k_reports)

    def protected(self, mech):
        return mech.protected

    def k(self, mech):
        return mech.k

    def defaults(self, ks, epsilons):
        """None: designs are audited as the surveys in ``--db`` state them."""
        return []


DESIGN_AUDIT = DesignAudit()

CHOICE = register(Choice())
Choice.designed = DesignedChoice()  # the variant of a choice with a "design" (Question.qtype)
