"""The two-group non-compliance designs (RRreg's CDM, CDMsym, SLD, UQTunknown): π and the share who did not comply.

Definition: ``"type": "two_group"``, ``"model"`` (``CDM``, ``CDMsym``, ``SLD`` or ``UQTunknown``),
``"p"`` (RRreg's vector: two probabilities, four for CDMsym), ``"group_share"`` (the share of group 1,
default 0.5), for UQTunknown ``"unrelated"`` (the unrelated question's text) and, for a known-answer
item (Höglinger & Diekmann 2017), ``"known_prevalence"`` (the prevalence known to be true, 0 for "Have you
ever visited [a place that does not exist]?": the estimates then report the false positives,
:meth:`TwoGroup.validation_words`; never shown to respondents); no ``epsilon``: a
CDMsym's ε is its realized one, the other models are not ε-LDP (:mod:`deniable.client.two_group`).
The respondent's device draws the group and an instruction, shows the instruction, and the
respondent clicks Yes or No: only the group and the answer are sent.  Report: ``{"group": 1, "answer": 0}``
on the wire (answer 0 Yes, 1 No; the survey page's hidden field ``1:0``), ``1:Yes`` in a text cell,
``(group − 1) · 2 + answer`` as code.  Sufficient statistics: counts per (group, answer).  Estimate:
:func:`deniable.estimators.two_group.estimate_two_group` on the realized p (constrained ML, exact
intervals).  Exports: two columns, ``ID_group`` (1, 2) and ``ID_answer`` (1 Yes, 0 No: RRreg's response),
labelled.
"""

from __future__ import annotations

import functools
import json
import math
import re

import numpy as np

from deniable.client.mechanism import MAX_EPSILON, TWO_32, MechanismError
from deniable.client.two_group import (ANSWERS, GROUPS, INSTRUCTIONS, MODELS, P_LENGTH, check_two_group_report,
                                       two_group_mechanism)
from deniable.errors import FieldError, sent

from ..definition import MAX_TEXT, DefinitionError, number, text_field
from .audit import Audit
from .base import AuditSampler, Capabilities, NotAvailable, QuestionType, decimal_field, headline, json_number, pct
from .builder import Builder
from .exports import Files
from .monitoring import Monitoring
from .presentation import Presentation
from .registry import register
from .statistics import Statistics
from .wire import Wire

NUISANCE_WORDS = {"gamma": "did not follow the instructions (γ)", "t": "carriers answering truthfully (t)",
                  "piUQ": "yes to the unrelated question (π_UQ)", "beta": "honest non-carriers (β)",
                  "pi": "prevalence (π)"}
PRIVACY = {
    "CDM": "not ε-LDP: an honest carrier always answers Yes, so a No rules the attribute out",
    "SLD": "not ε-LDP: a carrier always answers Yes (truthfully or as told), so a No rules the attribute out",
    "UQTunknown": "not ε-LDP; deniability rests on the unrelated question, whose answer the device does not randomize",
}


def params(q) -> dict:
    """The question's design as the definition writes it, ``{"model", "p", "group_share"}`` and
    ``"known_prevalence"`` when the question has one: a two-group question
    keeps it as canonical JSON (:func:`canonical`) in ``Question.method`` (a numeric question's field; a
    question has no other place for a type's parameters), so questions compare and hash as before."""
    return json.loads(q.method)


@functools.lru_cache(maxsize=1024)
def _mechanism(spec: str):
    data = json.loads(spec)
    return two_group_mechanism(data["model"], data["p"], data["group_share"])


def canonical(model: str, p, group_share, known=None) -> str:
    """The design as canonical JSON; ``known_prevalence`` only when there is one, so a question without it
    keeps the string (and the equality, the hash) it had before the key existed."""
    data = {"model": model, "p": list(p), "group_share": group_share}
    if known is not None:
        data["known_prevalence"] = known
    return json.dumps(data, separators=(",", ":"))


def known_prevalence(q):
    """The question's known prevalence (a known-answer item), or None."""
    return params(q).get("known_prevalence")


VALIDATION_TOLERANCE = 1e-9  # an interval end this close to the known prevalence does not exclude it


ROUNDING = {"nearest": lambda x: math.floor(x + 0.5), "down": lambda x: math.floor(x + 1e-9),
            "up": lambda x: math.ceil(x - 1e-9)}  # as the statement's (deniable.estimators.two_group)


def _rounded(x: float, how: str, digits: int) -> float:
    """A share in percent, rounded ``how`` (nearest, down, up) to ``digits`` decimals (−0 is 0)."""
    scale = 10 ** digits
    return ROUNDING[how](100 * x * scale) / scale + 0.0


def _share_text(x: float, how: str, digits: int) -> str:
    value = _rounded(x, how, digits)
    return f"{value:.{digits}f} %" if digits else f"{int(value)} %"


def privacy_words(mech) -> str:
    if mech.model == "CDMsym":
        if mech.protected:
            e1, e2 = mech.group_epsilons
            return f"ε = {mech.epsilon:.4f} (group 1: {e1:.4f}, group 2: {e2:.4f})"
        return "not ε-LDP: a group is never told to say Yes (or never No), so one answer can rule the attribute out"
    return PRIVACY[mech.model]


@functools.lru_cache(maxsize=256)
def _plan(model, p, margin, confidence, interval):
    """:func:`deniable.estimators.plan_two_group`, kept: the builder asks again at every keystroke."""
    from deniable.estimators import plan_two_group

    return plan_two_group(model, list(p), margin, confidence=confidence, interval=interval)


class TooFew:
    """The result while a group has fewer than two reports: nothing to estimate yet."""

    def __init__(self, model, p, yes, n, confidence):
        self.model, self.p, self.yes, self.n, self.confidence = model, p, np.asarray(yes), np.asarray(n), confidence
        self.note = "each group needs at least 2 respondents before π and the non-compliance can be estimated"


class TwoGroup(Wire, Files, Statistics, Monitoring, Presentation, Builder, Audit, QuestionType):
    name = "two_group"
    label = "two-group non-compliance design"
    keys = frozenset({"type", "model", "p", "group_share", "unrelated", "known_prevalence"})
    needed = ("model", "p")
    capabilities = Capabilities(
        crosstab="a cross-tab needs two single-choice questions; a two-group design's answer depends on its group",
        regression=None,  # fitted its own way: regression_fit (deniable.estimators.group_logit)
        covariate="its answers are not the true answers (they follow the instruction the device drew)")

    # ------------------------------------------------------------ the definition

    def parse(self, data, where, epsilon):
        if epsilon is not None:
            raise DefinitionError((*where, "epsilon"), "leave epsilon out of a two-group design: its ε is the "
                                  "design's own (CDMsym), or it has none")
        model = data["model"]
        if model not in MODELS:
            raise DefinitionError((*where, "model"), f"must be one of {', '.join(MODELS)}, got {sent(model)}"[:120])
        raw = data["p"]
        if not isinstance(raw, list) or len(raw) != P_LENGTH[model]:
            what = "(yes₁, no₁, yes₂, no₂)" if model == "CDMsym" else "(p₁, p₂), one per group"
            raise DefinitionError((*where, "p"), f"must be a list of {P_LENGTH[model]} probabilities {what} for {model}")
        p = []
        for i, value in enumerate(raw):
            d = decimal_field(value, (*where, "p", i))
            if not 0 <= d <= 1:
                raise DefinitionError((*where, "p", i), f"must be a probability from 0 to 1, got {sent(value)}")
            p.append(d)
        if model == "CDMsym":
            for g in range(2):
                if p[2 * g] + p[2 * g + 1] > 1:
                    raise DefinitionError((*where, "p", 2 * g + 1), f"group {g + 1}'s yes and no probabilities "
                                          f"must sum to at most 1, got {sent(raw[2 * g])} + {sent(raw[2 * g + 1])}")
        share = decimal_field(data.get("group_share", 0.5), (*where, "group_share"))
        if not 0 < share < 1:
            raise DefinitionError((*where, "group_share"), f"must be above 0 and below 1 (both groups need "
                                  f"respondents), got {sent(data.get('group_share'))}")
        unrelated = None
        if model == "UQTunknown":
            if "unrelated" not in data:
                raise DefinitionError((*where, "unrelated"), "is required for UQTunknown: the unrelated question's text")
            unrelated = text_field(data["unrelated"], (*where, "unrelated"), max_len=MAX_TEXT)
        elif "unrelated" in data:
            raise DefinitionError((*where, "unrelated"), f"only UQTunknown has an unrelated question, not {model}")
        known = None
        if "known_prevalence" in data:
            d = decimal_field(data["known_prevalence"], (*where, "known_prevalence"))
            if not 0 <= d <= 1:
                raise DefinitionError((*where, "known_prevalence"), f"must be a prevalence from 0 to 1, got "
                                      f"{data['known_prevalence']!r}"[:120])
            known = number(d)
        spec = canonical(model, [number(d) for d in p], number(share), known)
        try:
            mech = _mechanism(spec)
        except MechanismError as exc:
            raise DefinitionError((*where, "p"), str(exc)) from None
        from deniable.estimators.two_group import MODELS as ESTIMATED, check_p

        try:
            check_p(ESTIMATED[model], mech.p)
        except FieldError:
            raise DefinitionError((*where, "p"), f"the two groups answer alike with p = {raw!r}, so {model} cannot "
                                  "separate π from the non-compliance: the groups need different probabilities") from None
        if mech.protected and mech.epsilon > MAX_EPSILON:
            raise DefinitionError((*where, "p"), f"the design's ε is {mech.epsilon:.4g}, above the largest a question "
                                  f"may have ({MAX_EPSILON:g}): its answers would be practically exposed")
        return {"options": ANSWERS, "epsilon": mech.epsilon if mech.protected else None, "method": spec,
                "sensitive": unrelated}

    def to_dict(self, q):
        data = {"type": self.name, **params(q)}
        if q.sensitive is not None:
            data["unrelated"] = q.sensitive
        return data

    def k(self, q):
        return 2

    def mechanism(self, q):
        return _mechanism(q.method)

    def examples(self):
        text = "Have you ever cheated on an exam?"
        return [({"text": text, "type": self.name, "model": "CDM", "p": [0.3, 0.7]}, 0.3),
                ({"text": text, "type": self.name, "model": "CDMsym", "p": [0.2, 0.3, 0.3, 0.2], "group_share": 0.4},
                 0.3),
                ({"text": text, "type": self.name, "model": "SLD", "p": [0.3, 0.8]}, 0.3),
                ({"text": "Have you ever taken something from a shop without paying?", "type": self.name,
                  "model": "UQTunknown", "p": [0.3, 0.8], "unrelated": "Were you born in the first half of the year?"},
                 {"sensitive": 0.3, "unrelated": 0.5})]

    # ------------------------------------------------------------ wire

    def spec(self, q):
        """The design, and UQTunknown's unrelated question under ``sensitive``: the words-only field of a spec
        that a launched survey may fix (the store's frozen-design trigger lets it change, nothing else)."""
        out = dict(params(q))
        if q.sensitive is not None:
            out["sensitive"] = q.sensitive
        return out

    def from_spec(self, spec):
        return {"method": canonical(spec["model"], spec["p"], spec["group_share"], spec.get("known_prevalence")),
                "sensitive": spec.get("sensitive")}

    structured_report = True

    def design(self, q):
        mech = q.mechanism
        return (self.name, mech.model, [mech.group_threshold, [list(c) for c in mech.columns]])

    def stored_design(self, q):
        mech = q.mechanism
        return [self.name, mech.model, mech.group_threshold, *(w for c in mech.columns for w in c)]

    def n_cells(self, q):
        return 4

    def check_report(self, q, value):
        group, answer = check_two_group_report(value)
        return (group - 1) * 2 + answer

    def report_of(self, q, code):
        group, answer = divmod(int(code), 2)
        return {"group": group + 1, "answer": answer}

    def parse_form(self, q, text):
        match = re.fullmatch(r"([12]):([01])", text)
        if not match:
            raise MechanismError(f"must be GROUP:ANSWER (group 1 or 2, answer 0 Yes or 1 No), got {text[:30]!r}")
        return {"group": int(match.group(1)), "answer": int(match.group(2))}

    def text_of(self, q, code):
        group, answer = divmod(int(code), 2)
        return f"{group + 1}:{ANSWERS[answer]}"

    def code_of(self, q, text):
        group, _, answer = text.partition(":")
        if group not in ("1", "2") or answer not in ANSWERS:
            return None
        return (int(group) - 1) * 2 + ANSWERS.index(answer)

    def expected(self, q):
        return "1:Yes, 1:No, 2:Yes or 2:No (group:answer)"

    def api_design(self, q):
        """``model``, ``p`` (realized) and ``p_declared``, ``group_share`` (realized), ``group_threshold`` (group 1
        iff a uint32 draw is below it), ``instructions`` and their integer ``weights`` per group (summing to
        2^32), ``unrelated`` (UQTunknown), ``realized_epsilon``/``epsilon`` (None when not ε-LDP), ``ldp``,
        ``privacy``; reports ``{"group": 1|2, "answer": 0 (Yes)|1 (No)}``."""
        mech = q.mechanism
        data = params(q)
        return {"type": self.name, "model": mech.model, "p": list(mech.p), "p_declared": data["p"],
                "group_share": mech.group_share, "group_share_declared": data["group_share"],
                "group_threshold": mech.group_threshold, "instructions": list(mech.instructions),
                "weights": [list(c) for c in mech.columns], "answers": list(ANSWERS),
                **({"unrelated": q.sensitive} if q.sensitive is not None else {}),
                "realized_epsilon": mech.epsilon if mech.protected else None,
                "epsilon": mech.epsilon if mech.protected else None, "ldp": mech.protected,
                "privacy": privacy_words(mech)}

    # ------------------------------------------------------------ files

    def stat_columns(self, q, codes):
        codes = np.asarray(codes, dtype=np.int64)
        answered = codes >= 0
        group = np.where(answered, codes // 2 + 1, np.nan).astype(float)
        answer = np.where(answered, 1 - codes % 2, np.nan).astype(float)  # RRreg's response: 1 yes, 0 no
        return [("_group", group, {1: "group 1", 2: "group 2"}, f"{q.text}: group (drawn by the device)"),
                ("_answer", answer, {1: "Yes", 0: "No"}, f"{q.text}: answer given")]

    def design_fields(self, q):
        mech = q.mechanism
        return {"type": self.name, "design": mech.model, "p": ",".join(repr(v) for v in mech.p),
                "group_share": repr(mech.group_share)}

    def codebook_randomization(self, q) -> dict:
        """What the codebook states of the reports (:func:`..codebook.question_randomization`): the design
        (RRreg's model), ``p`` and the group share **as realized**, the integer thresholds they are realized
        on, the instructions, ε (CDMsym's per group and the worse one; None when not ε-LDP) and the privacy
        in words; reports are ``(group − 1) · 2 + answer`` (answer 0 Yes, 1 No)."""
        mech = q.mechanism
        return {"k": q.k, "threshold": None, "declared_epsilon": q.epsilon,
                "realized_epsilon": mech.epsilon if mech.protected else None, "design": mech.model,
                "ldp": mech.protected, "p": list(mech.p), "group_share": mech.group_share,
                "group_threshold": mech.group_threshold, "instructions": list(mech.instructions),
                "weights": [list(c) for c in mech.columns],
                "group_epsilon": list(mech.group_epsilons) if mech.protected else None,
                "privacy": privacy_words(mech),
                "reports": "group 1 or 2 (drawn by the device, not sensitive) and the answer given, Yes or No"}

    # ------------------------------------------------------------ statistics and estimates

    @staticmethod
    def _counts(stats):
        c = np.asarray(stats["counts"], dtype=np.int64)
        return [int(c[0]), int(c[2])], [int(c[0] + c[1]), int(c[2] + c[3])]

    def estimate(self, q, stats, *, method, confidence, simultaneous, monitoring=False, tuned_for=10_000):
        from deniable.estimators.two_group import estimate_two_group

        mech = q.mechanism
        yes, n = self._counts(stats)
        if min(n) < 2:
            return TooFew(mech.model, np.asarray(mech.p), yes, n, confidence)
        return estimate_two_group(mech.model, list(mech.p), yes, n, confidence=confidence)

    def n_of(self, result):
        return int(np.sum(result.n))

    def record(self, q, r):
        from deniable.estimators.two_group import MODELS as ESTIMATED

        mech = q.mechanism
        spec = ESTIMATED[mech.model]
        data = {"id": q.id, "text": q.text, "type": self.name, "model": mech.model, "citation": spec.citation,
                "n": int(np.sum(r.n)), "n_group": [int(v) for v in r.n], "yes": [int(v) for v in r.yes],
                "design_p": list(mech.p), "group_share": mech.group_share,
                "epsilon": mech.epsilon if mech.protected else None, "declared_epsilon": None, "ldp": mech.protected,
                "group_epsilon": list(mech.group_epsilons) if mech.protected else None,
                "privacy": privacy_words(mech), "p": None, "q": None, "method": "exact",
                "confidence": r.confidence, "simultaneous": False, "nuisance": spec.nuisance,
                **({"unrelated": q.sensitive} if q.sensitive is not None else {})}
        parameters = {}
        for name in spec.parameters:
            if isinstance(r, TooFew):
                parameters[name] = {"estimate": None, "ci_low": None, "ci_high": None, "headline": None}
                continue
            row = {"estimate": json_number(r.estimate[name]), "ci_low": json_number(r.lower[name]),
                   "ci_high": json_number(r.upper[name]), "profile_low": json_number(r.profile_lower[name]),
                   "profile_high": json_number(r.profile_upper[name]), "moment": json_number(r.moment[name]),
                   "moment_se": json_number(r.moment_se[name]), "wald_low": json_number(r.wald_lower[name]),
                   "wald_high": json_number(r.wald_upper[name])}
            row["headline"] = headline(row)
            parameters[name] = row
        pi = parameters["pi"]
        data.update(estimate=pi["estimate"], ci_low=pi["ci_low"], ci_high=pi["ci_high"], headline=pi["headline"],
                    parameters=parameters)
        if isinstance(r, TooFew):
            data.update(statement=None, statement_pi=None, outside_model=False, note=r.note)
        else:
            data.update(statement=r.statement(), statement_pi=r.statement("pi"), outside_model=r.outside_model,
                        on_boundary=r.on_boundary, loglik=json_number(r.loglik), note=r.note or None)
        known = known_prevalence(q)
        if known is not None:
            words = self.validation_words(q, r)
            shifted = {key: None if pi[key] is None else pi[key] - known for key in ("estimate", "ci_low", "ci_high")}
            data.update(known_prevalence=known, false_positive={**shifted, **words})
        return data

    def validation_words(self, q, result) -> dict:
        """What a known-answer item's estimate says (Höglinger & Diekmann 2017), the one wording of the
        results page, ``deniable estimate`` and the API: ``statement``, the false positives (π̂ − known) with
        their exact interval (π's shifted; bounds rounded outwards, with decimals where whole percents would
        hide an exclusion), ``warning`` when that interval excludes the known prevalence (None otherwise),
        ``excludes_known`` (None when nothing is estimated or the data fit no parameters) and ``words``,
        the sentence with its warning."""
        known = known_prevalence(q)
        shown_known = f"{round(100 * known, 4):g} %"
        head = f"Known prevalence {shown_known}"
        if isinstance(result, TooFew):
            statement = f"{head}: not estimated yet ({result.note})"
            return {"statement": statement, "warning": None, "excludes_known": None, "words": statement}
        estimate, low, high = result.estimate["pi"], result.lower["pi"], result.upper["pi"]
        above, below = low > known + VALIDATION_TOLERANCE, high < known - VALIDATION_TOLERANCE
        excludes = None if result.outside_model else above or below
        digits = 0  # more decimals while the excluding end would read as the known prevalence
        while excludes and digits < 6 and _rounded(low - known if above else high - known,
                                                   "down" if above else "up", digits) == 0:
            digits += 1

        def span(centre, lo, hi):
            if result.outside_model:
                return _share_text(centre, "nearest", digits)
            return (f"{_share_text(centre, 'nearest', digits)} [{_share_text(lo, 'down', digits)}, "
                    f"{_share_text(hi, 'up', digits)}]")

        falsely = f"an estimated {span(estimate - known, low - known, high - known)} said yes falsely"
        if known == 0:
            statement = f"{head}: {falsely}"
        else:
            statement = f"{head}: estimated {span(estimate, low, high)}; {falsely} (below 0: said no falsely)"
        if result.outside_model:
            statement += f"; no interval: the answers fit no {result.model} parameters"
        warning = None
        if excludes:
            warning = f"the interval excludes the known {shown_known}: " + (
                "respondents are answering yes when they should not — the design's other estimates may be biased upward"
                if above else
                "respondents are answering no when they should not — the design's other estimates may be biased downward")
        words = statement if warning is None else f"{statement}. Warning: {warning}"
        return {"statement": statement, "warning": warning, "excludes_known": excludes, "words": words}

    def csv_rows(self, q, result):
        data = self.record(q, result)
        for name, row in data["parameters"].items():
            label = NUISANCE_WORDS[name]
            if name == "pi":
                label = f"{label}: {data['statement_pi']}" if data["statement_pi"] else label
            elif name == data["nuisance"] and data["statement"]:
                label = f"{label}: {data['statement']}"
            yield {"option": name, "label": label, "method": "exact",
                   **{k: row[k] for k in ("estimate", "ci_low", "ci_high")}}
        if "false_positive" in data:  # a known-answer item: its false positives, in words
            row = data["false_positive"]
            yield {"option": "false_positive", "label": row["words"], "method": "exact",
                   **{k: row[k] for k in ("estimate", "ci_low", "ci_high")}}

    # ------------------------------------------------------------ presentation

    def table(self, q, result, grid):
        data = self.record(q, result)
        n1, n2 = data["n_group"]
        head = (f"  n = {data['n']:,} ({n1:,} group 1, {n2:,} group 2) · {data['model']} ({data['citation']}), "
                f"p = {', '.join(f'{v:.6g}' for v in data['design_p'])} (realized), group 1 share "
                f"{data['group_share']:.6g} · {data['privacy']}")
        if isinstance(result, TooFew):
            return [head, f"  {result.note}", *([f"  {data['false_positive']['words']}."]
                                                 if "false_positive" in data else [])]
        level = f"{100 * data['confidence']:g}%"
        rows = [[name, pct(row["headline"]), f"[{pct(row['ci_low'])}, {pct(row['ci_high'])}]",
                 f"[{pct(row['profile_low'])}, {pct(row['profile_high'])}]", pct(row["moment"]), pct(row["moment_se"])]
                for name, row in data["parameters"].items()]
        lines = [head, f"  {level} exact intervals (constrained maximum likelihood; RRreg's moment estimates beside)",
                 *grid(["parameter", "estimate", "exact interval", "profile interval", "moment", "s.e."], rows),
                 f"  {data['statement'][0].upper()}{data['statement'][1:]}."]
        if data["note"]:
            lines.append(f"  note: {data['note']}")
        if "false_positive" in data:
            lines.append(f"  {data['false_positive']['words']}.")
        return lines

    def headlines(self, q, record):
        return [(row["headline"], row["ci_low"], row["ci_high"]) for row in record["parameters"].values()]

    def shown_rows(self, q, result):
        rows = list(self.csv_rows(q, result))
        for row in rows:  # the false positives (π̂ − known) lie in [−1, 1]
            row["headline"] = headline(row, lower=-1.0) if row["option"] == "false_positive" else headline(row)
        return rows

    def chart(self, q, record):
        names = ["pi", record["nuisance"]]
        rows = [record["parameters"][name] for name in names]
        return {"labels": [NUISANCE_WORDS[name] for name in names], "estimate": [r["headline"] for r in rows],
                "ci_low": [r["ci_low"] for r in rows], "ci_high": [r["ci_high"] for r in rows]}

    def unprotected(self, q):
        return privacy_words(q.mechanism)

    def group_columns(self, q):
        raise NotAvailable("estimates of a two-group design within groups are not released: π needs both of its "
                           "groups' answers and the share who did not follow the instructions, which a released "
                           "table within groups does not estimate")

    def group_estimates(self, q, counts, noisy, beta, confidence):
        raise NotAvailable("estimates of a two-group design within groups are not released")

    def page_data(self, q):
        mech = q.mechanism
        attrs = {"data-type": self.name, "data-threshold": TWO_32, "data-group-threshold": mech.group_threshold,
                 "data-instructions": len(mech.instructions)}
        for g in GROUPS:
            attrs[f"data-column-{g}"] = " ".join(str(c) for c in mech.cumulative(g))
        return {"attrs": attrs, "two_group": {"instructions": mech.instructions, "unrelated": q.sensitive}}

    card = "cards/two_group.html"
    script = "types/two_group.js"

    def coin(self, q, *, gettext, locale):
        _ = gettext
        return _("Your device draws your group and an instruction at random and shows you the instruction: answer "
                 "as it says. Only your group and the answer you click are sent, never the instruction.")

    def explanation(self, q, *, gettext, locale):
        """CDMsym (ε-LDP): the bounds of its realized ε; the other models: not ε-LDP, in words."""
        from ..explain import bounds_sentences

        _ = gettext
        coin = self.coin(q, gettext=gettext, locale=locale)
        sent = _("your group and the answer you clicked, never the instruction")
        mech = q.mechanism
        if mech.protected:
            from ..explain import ALMOST_CERTAIN, barely, percent, two_way_bound

            bound = two_way_bound(mech.epsilon)
            short = barely(bound, gettext=gettext, locale=locale) if bound > ALMOST_CERTAIN else _(
                "Your device tells you at random to say Yes, to say No or to answer truthfully, so a 50/50 guess "
                "between two answers becomes at most %(sure)s sure.") % {"sure": percent(bound, locale, gettext=_)}
            return {**bounds_sentences(mech.epsilon, gettext=gettext, locale=locale), "declared_epsilon": None,
                    "coin": coin, "protected": True, "design": mech.model, "sent": sent, "short": short}
        if mech.model == "UQTunknown":
            why = _("Which question you answer stays on your device, but your answer is your true answer to it: "
                    "your protection rests on nobody knowing your answer to the other question.")
        else:
            why = _("An answer given as the instruction says can still give you away: not protected by ε.")
        return {"epsilon": None, "coin": f"{coin} {why}", "posterior": "", "odds": "",
                "summary": f"Not protected by ε ({privacy_words(mech)}).", "protected": False, "warning": None,
                "design": mech.model, "note": _("Not protected by ε."), "sent": sent}

    def plain_explanation(self, q, *, gettext):
        return self.explanation(q, gettext=gettext, locale="en")

    def report_words(self, q):
        """What a report means, for the codebook a recipe prints (:func:`..recipes.recipe`)."""
        mech = q.mechanism
        return (f'{{"group": 1|2, "answer": 0|1}}: the group the device drew (group 1 with probability '
                f"{mech.group_share:.4g}; {mech.model}, p = {', '.join(f'{v:.4g}' for v in mech.p)}) and the answer "
                "the respondent clicked as the instruction said, 0 = Yes, 1 = No (the instruction is never sent)")

    def card_words(self, q, *, gettext):
        """The words of the survey page's card (``templates/cards/two_group.html``) in ``gettext``'s language,
        for the embed (:func:`..recipes.card_words`): each of the model's ``instructions`` as the card says it
        (``{name: sentence}``; the unrelated question's sentence is followed by the ``unrelated`` question,
        in that language) and the two ``answers``, Yes (report 0) and No (report 1)."""
        _ = gettext
        sentences = {"yes": _("Please answer Yes, whatever the true answer."),
                     "no": _("Please answer No, whatever the true answer."),
                     "unrelated": _("Please do not answer the question above. Answer this question truthfully "
                                    "instead:")}
        truthful = _("Please answer the question above truthfully.")
        words = {"instructions": {name: sentences.get(name, truthful) for name in q.mechanism.instructions},
                 "answers": [_("Yes"), _("No")]}
        if q.sensitive is not None:
            words["unrelated"] = q.sensitive
        return words

    # ------------------------------------------------------------ regression

    def regression_fit(self, q, design, *, reference, confidence, profile):
        """The logit of the carriers' share (the true Yes) on the covariates, from each pattern's (group, answer)
        (:func:`deniable.estimators.group_logit`, RRreg's RRlog): the question's model on its realized p (as the
        estimates), the nuisance parameter estimated beside the coefficients (CDM's and CDMsym's γ too, which
        RRlog leaves out), each answer pattern weighted by its count (the fit of one row per response), Wald
        intervals from the observed information (no profile-likelihood ones: ``profile`` is not used).
        ``reference`` 0 (Yes) turns the coefficients' signs: the log-odds of No.  Empty cells and collinear
        covariates are refused as for any outcome; a group without two responses is a RegressionError."""
        from deniable.estimators.group_logit import GroupRegressionResult, group_logit
        from deniable.estimators.regression import RegressionError, _check_design
        from deniable.estimators.two_group import MODELS as ESTIMATED

        codes = np.asarray(design.reports, dtype=np.int64)
        weights = np.asarray(design.weights, dtype=float)
        group, response = codes // 2 + 1, 1 - codes % 2  # response: RRreg's 1 Yes, 0 No
        for g in GROUPS:
            if weights[group == g].sum() < 2:
                raise RegressionError("empty cell", f"group {g} of {q.id!r} has fewer than 2 responses with "
                                      "every covariate answered: a two-group design needs both groups")
        _check_design(design.covariates, weights, design.names, design.terms)
        mech = q.mechanism
        X = np.column_stack([np.ones(codes.size), design.covariates])
        fit = group_logit(mech.model, list(mech.p), response, group, X, ("Intercept", *design.names),
                          weights=weights, confidence=confidence)
        nuisance = ESTIMATED[mech.model].nuisance
        note = ("" if np.isfinite(fit.se[:X.shape[1]]).all() else
                "no finite maximum: a fitted share runs to 0 or 1 (too few respondents, or answers the design "
                "cannot produce)")
        return GroupRegressionResult.of(fit, outcome=q.id, options=q.options, reference=1 if reference is None
                                        else reference, nuisance_words=NUISANCE_WORDS[nuisance],
                                        patterns=int(codes.size), note=note)

    # ------------------------------------------------------------ builder and wording

    def wording(self, q):
        """The text and, for UQTunknown, the unrelated question (under ``sensitive``, as the store's spec keeps
        it; the definition writes it ``unrelated``): words the respondent reads, which a launched survey may fix."""
        words = {"text": q.text}
        if q.sensitive is not None:
            words["sensitive"] = q.sensitive
        return words

    def reworded(self, q, texts):
        fields = {"text": texts["text"]}
        if "sensitive" in texts and q.sensitive is not None:
            fields["sensitive"] = texts["sensitive"]
        return fields

    def wording_labels(self, q):
        labels = {"text": ("question text", "text")}
        if q.sensitive is not None:
            labels["sensitive"] = ("unrelated question", "unrelated")
        return labels

    slot_fields = ("group_model", "group_p1", "group_p2", "group_p3", "group_p4", "group_share", "unrelated",
                   "known_prevalence")
    direct_words = "a two-group design (never asked directly)"
    direct_choice = "another question type (a two-group design is never asked directly)"
    epsilon_from_design = True  # no ε field: CDMsym's ε is its realized one, the other models have none
    # the builder's model choice: each model in one line, what it detects beside π (docs/question-types.md)
    model_choices = {
        "CDM": "CDM (Clark & Desharnais 1998): detects who say No whatever they are told (γ); not ε-LDP",
        "CDMsym": "CDMsym (Ostapczuk et al. 2009): detects who say No whatever they are told (γ); ε-LDP",
        "SLD": "SLD, the stochastic lie detector (Moshagen et al. 2012): detects carriers who lie (t, the share "
               "who tell the truth); not ε-LDP",
        "UQTunknown": "UQTunknown, the unrelated question (Greenberg et al. 1969): estimates the unrelated "
                      "question's prevalence too (π_UQ); not ε-LDP"}
    # each p field's label per model (the definition's p, in RRreg's order)
    p_labels = {
        "CDM": ("group 1: told to say Yes", "group 2: told to say Yes"),
        "CDMsym": ("group 1: told to say Yes", "group 1: told to say No", "group 2: told to say Yes",
                   "group 2: told to say No"),
        "SLD": ("group 1: told to answer truthfully", "group 2: told to answer truthfully"),
        "UQTunknown": ("group 1: asked the sensitive question", "group 2: asked the sensitive question")}
    field_slots = {"model": "group_model", "group_share": "group_share", "unrelated": "unrelated",
                   "known_prevalence": "known_prevalence"}

    def slot_of(self, path):
        """The builder slot's field an error at ``path`` (after the question's index) is about: the model,
        a p (``("p", 2)``: the third p field; the whole p: the first), the group share, the unrelated question,
        the known prevalence; None for the fields every slot has."""
        if path[:1] == ("p",):
            return f"group_p{path[1] + 1 if len(path) > 1 and isinstance(path[1], int) else 1}"
        return self.field_slots.get(path[0]) if path else None

    def builder_dict(self, raw, where, protected):
        """The model, as many p fields as it has (two, four for CDMsym), the group share (blank: 0.5), the
        unrelated question (UQTunknown only) and the known prevalence (blank: none), numbers read as the builder
        reads them (``0,3`` is 0.3); the definition parser checks them, with its messages.  No ε: whether the
        slot says protected or not, the design's privacy is its own."""
        from .base import typed_number

        model = (raw.get("group_model") or "").strip()
        data = {"type": self.name, "model": model,
                "p": [typed_number(raw.get(f"group_p{i + 1}"), (*where, "p", i), "a probability such as 0.3")
                      for i in range(P_LENGTH.get(model, 2))]}
        if (raw.get("group_share") or "").strip():
            data["group_share"] = typed_number(raw["group_share"], (*where, "group_share"),
                                               "the share of group 1, such as 0.5")
        if model == "UQTunknown":
            data["unrelated"] = raw.get("unrelated") or ""
        if (raw.get("known_prevalence") or "").strip():
            data["known_prevalence"] = typed_number(raw["known_prevalence"], (*where, "known_prevalence"),
                                                    "a prevalence from 0 to 1, such as 0")
        return data

    def builder_entry(self, q):
        """The slot of a stored two-group question (the inverse of :meth:`builder_dict`)."""
        data = params(q)
        text = [json.dumps(v) for v in data["p"]] + [""] * (4 - len(data["p"]))
        known = data.get("known_prevalence")
        return {"protection": "protected", "epsilon": "", "group_model": data["model"],
                **{f"group_p{i + 1}": value for i, value in enumerate(text)},
                "group_share": json.dumps(data["group_share"]), "unrelated": q.sensitive or "",
                "known_prevalence": "" if known is None else json.dumps(known)}

    # ------------------------------------------------------------ planning

    plan_template = "dashboard/plan/two_group.html"
    plan_needs = "p1 p2"
    plan_missing = "Enter the model's probabilities p to see how many respondents the design needs."

    def plan(self, q, target_n, margin, confidence=0.95):
        """The respondents for ±``margin`` on π (the worst case over π and the second parameter) and the split
        between the groups that minimizes them (:func:`deniable.estimators.plan_two_group`), for the exact
        interval (the estimates' own) and the Wald interval, on the definition's p; the design's privacy."""
        data, mech = params(q), q.mechanism
        out = {"type": self.name, "template": self.plan_template, "model": mech.model, "p": list(data["p"]),
               "group_share": data["group_share"], "target_n": target_n, "margin": margin,
               "confidence": confidence, "protected": mech.protected, "privacy": privacy_words(mech),
               "ldp": mech.protected, "unrelated": q.sensitive}
        if mech.protected:
            out["epsilon"] = mech.epsilon
        for interval in ("exact", "wald"):
            plan = _plan(mech.model, tuple(data["p"]), margin, confidence, interval)
            out[interval] = {"n": plan.n, "n_groups": list(plan.n_groups), "share": plan.share,
                             "share_percent": round(100 * plan.share), "n_equal": plan.n_equal, "at": plan.at}
        out["needed"] = out["exact"]["n"]
        return out

    def plan_query(self, args, number):
        """``model``, ``p1`` … (two, four for CDMsym), optional ``group_share``: the design to plan."""
        model = args.get("model", "")[:20]
        data = {"type": self.name, "model": model,
                "p": [number(f"p{i + 1}", float, 0, 1) for i in range(P_LENGTH.get(model, 2))]}
        if args.get("group_share", "") != "":
            data["group_share"] = number("group_share", float, 0, 1)
        if model == "UQTunknown":
            data["unrelated"] = "unrelated"
        return data

    # ------------------------------------------------------------ audit and simulation

    def audit_samplers(self):
        return (TWO_GROUP_AUDIT,)

    def audit_sampler(self, q):
        return TWO_GROUP_AUDIT  # the ones that are not ε-LDP too: the audit shows it

    def truth(self, q, value, where):
        """A simulation's truth: the prevalence (a share); for UQTunknown ``{"sensitive", "unrelated"}``; and, to
        simulate respondents who do not follow the instructions, CDM's and CDMsym's ``{"prevalence", "cheaters"}``
        (a share who say No whatever they are told, carriers or not, as RRreg's RRgen simulates them) or SLD's
        ``{"prevalence", "truthful"}`` (the carriers' share who follow the instructions; the others say No)."""
        from ..simulate import TruthError

        def share(x, what):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x <= 1:
                raise TruthError(f"{where}: {what} must be a share between 0 and 1")
            return float(x)

        model = q.mechanism.model
        keys = {"UQTunknown": ("sensitive", "unrelated"), "SLD": ("prevalence", "truthful")}.get(
            model, ("prevalence", "cheaters"))
        if model == "UQTunknown" or isinstance(value, dict):
            if not isinstance(value, dict) or set(value) != set(keys):
                raise TruthError(f"{where}: must be " + ("a share or " if model != "UQTunknown" else "")
                                 + "{" + ", ".join(f'"{key}": share' for key in keys) + "}")
            first, second = (share(value[key], key) for key in keys)
        else:
            first, second = share(value, "the prevalence"), None
        return {"sensitive": first, "unrelated": second if model == "UQTunknown" else None,
                "cheaters": second if keys[1] == "cheaters" and second is not None else 0.0,
                "truthful": second if keys[1] == "truthful" and second is not None else 1.0}

    def simulate(self, q, truth, n, rng):
        """Reports through the Python twin of the browser's sampler, of respondents who follow the instructions
        but for the truth's cheaters (CDM, CDMsym) or untruthful carriers (SLD), who say No."""
        from deniable.client.two_group import simulate_reports

        carriers = (rng.random(n) < truth["sensitive"]).astype(np.int64)
        unrelated = None if truth["unrelated"] is None else (rng.random(n) < truth["unrelated"]).astype(np.int64)
        codes = simulate_reports(q.mechanism, carriers, rng, unrelated)
        says_no = (rng.random(n) < truth.get("cheaters", 0.0)) | ((carriers == 1) & (rng.random(n) >= truth.get("truthful", 1.0)))
        return np.where(says_no, codes // 2 * 2 + 1, codes)


class TwoGroupAudit(AuditSampler):
    """The device's (group, instruction) sampler with a respondent who follows the instruction: the true
    answer (and for UQTunknown the unrelated question's, input ``truth + 2 · unrelated``) as input, every
    (group, answer) as an event.  The models that are not ε-LDP are audited to show it."""

    name = "two_group"
    not_protected = "a two-group design whose compliant answers can rule the attribute out"
    js = """async ([value, model, groupThreshold, columns, names, n]) => {
  // the built embed, served as /static/rr.js by `deniable audit --embed`, has its own sampler: audit that one
  const rr = await import('/static/rr.js');
  const tg = typeof rr.drawGroup === 'function' ? rr : await import('/static/types/two_group.js');
  const counts = [0, 0, 0, 0];
  const truth = value % 2, unrelated = Math.floor(value / 2);
  for (let i = 0; i < n; i++) {
    const group = tg.drawGroup(groupThreshold);
    const instruction = names[tg.drawInstruction(columns[group - 1])];
    counts[(group - 1) * 2 + tg.comply(instruction, truth, unrelated)] += 1;
  }
  return counts;
}"""

    def label(self, mech):
        return f"{mech.model} p={','.join(f'{v:.4g}' for v in mech.p)}"

    def inputs(self, mech):
        return [0, 1, 2, 3] if mech.model == "UQTunknown" else [0, 1]

    def js_args(self, mech, value):
        return [value, mech.model, mech.group_threshold, [mech.cumulative(g) for g in GROUPS], list(mech.instructions)]

    def python_row(self, mech, value, samples, rng):
        from deniable.client.two_group import comply, draw

        groups, instructions = draw(mech, samples, rng)
        truth, unrelated = value % 2, value // 2
        answers = comply(mech, instructions, np.full(samples, truth), np.full(samples, unrelated))
        return np.bincount((groups - 1) * 2 + answers, minlength=4)

    def protected(self, mech):
        return mech.protected

    def defaults(self, ks, epsilons):
        """One CDMsym at each ε (group 1 told "say Yes" and "say No" each with 1/(1 + e^ε), so its ε is about ε;
        group 2 at ε/2) and a CDM, which is not ε-LDP."""
        out = []
        for eps in epsilons:
            one, two = (round(1 / (1 + math.exp(e)), 6) for e in (eps, eps / 2))
            out.append(two_group_mechanism("CDMsym", [one, one, two, two], 0.5))
        out.append(two_group_mechanism("CDM", [0.3, 0.7], 0.5))
        return out

    def cells(self, mech, counts):
        return counts


TWO_GROUP_AUDIT = TwoGroupAudit()

TWO_GROUP = register(TwoGroup())

__all__ = ["TWO_GROUP", "TWO_GROUP_AUDIT", "TwoGroup", "TwoGroupAudit", "canonical", "params", "privacy_words"]
