"""Check all that apply: any subset of 2–20 options, each tick randomized at ε/K.

Definition: ``"type": "multi"``, ``"options"`` (2–20 labels), optional ``"epsilon"`` (the whole
report's; each tick gets ε/K, :mod:`deniable.client.multi`).  Report: ticks ``[1, 0, 1]`` on the
wire, ``YNY`` (one letter per option) in a text cell, the bit mask as code (option j = bit j).
Sufficient statistics: n, ticks per option, pairwise co-occurrence and the distribution of the
number ticked (never the bit vectors: with 20 options there are a million of them).

Headlines: each option's share inside its interval and [0, 1] (:func:`.base.headline`); each
pair's "both ticked" share additionally inside the Fréchet bounds of its two options' headline
shares, ``max(0, a + b − 1) ≤ P(both) ≤ min(a, b)``.  Exports: one 0/1 column per option
(``ID_1``, …), labelled with the option.

Instead of ε, a ``"design"``: a binary randomized-response design of :mod:`deniable.client.designs`
(forced response with two shares, the unrelated question, Warner, Kuk, crosswise, a 2 × 2 custom
matrix) applied to each tick on its own (:class:`DesignedMulti`): answer 0 of the design is
"ticked", and its report 0 is sent as a tick.  The question's ε is K times the design's realized
ε (the ticks compose as they do at ε/K each); a design with a zero cell is not ε-LDP, and is
labelled so.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re

import numpy as np

from deniable.client import designs
from deniable.client.mechanism import MAX_EPSILON, TWO_32, MechanismError
from deniable.client.multi import MAX_MULTI, check_ticks, direct_multi, from_mask, multi_mechanism, to_mask
from deniable.errors import FieldError

from ..definition import DefinitionError, labels_field
from .base import AuditSampler, Capabilities, NotAvailable, QuestionType, fmt, headline, json_number, lines, pct
from .choice import DESIGN_SLOTS, RANDOMIZATIONS, _path as design_path, builder_design, canonical, design_explanation
from .audit import Audit
from .builder import Builder
from .exports import Files
from .monitoring import Monitoring
from .presentation import Presentation
from .statistics import Statistics
from .wire import Wire
from .registry import register

TICKS_RE = re.compile(r"[YN]{1,20}")
PATTERN_MULTI_MAX = 7  # a multi question's bit vector is in the answer patterns up to this many options
NO_YES = {0: "No", 1: "Yes"}


def stats_from_masks(k: int, masks: np.ndarray, weights: np.ndarray) -> dict:
    """n, ticks per option, pairwise co-occurrence and the number-ticked histogram of bit masks."""
    masks = np.asarray(masks, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(k)) & 1).astype(np.int64)  # rows × k
    weighted = bits * weights[:, None]
    ticks = weighted.sum(axis=0)
    pairs = np.triu(weighted.T @ bits, 1)
    ticked = np.bincount(bits.sum(axis=1), weights=weights, minlength=k + 1).round().astype(np.int64)
    return {"n": int(weights.sum()), "ticks": ticks, "pairs": pairs, "ticked": ticked}


def frechet_headline(pair: dict, a, b):
    """A pair's headline inside its interval, [0, 1] and the Fréchet bounds of shares ``a`` and ``b``."""
    low, high = 0.0, 1.0
    if a is not None and b is not None:
        low, high = max(0.0, a + b - 1), min(a, b)
    ci_low, ci_high = json_number(pair.get("ci_low")), json_number(pair.get("ci_high"))
    lo = low if ci_low is None else max(low, ci_low)
    hi = high if ci_high is None else min(high, ci_high)
    value = headline(pair)
    if value is None:
        return None
    if lo > hi:  # the interval misses the bounds: its end nearest to them
        return ci_low if ci_low is not None and ci_low > high else ci_high
    return min(max(value, lo), hi)


class Multi(Wire, Files, Statistics, Monitoring, Presentation, Builder, Audit, QuestionType):
    name = "multi"
    label = "check all that apply"
    keys = frozenset({"type", "options", "design"})
    needed = ("options",)
    capabilities = Capabilities(
        crosstab=("a cross-tab needs two single-choice questions; a check-all question shows its own "
                  "co-occurrence of every pair of options instead"),
        condition=None,  # a later question shown when any of some options is ticked
        shuffles=True)

    def parse(self, data, where, epsilon):
        labels = labels_field(data["options"], (*where, "options"), 2, MAX_MULTI, "options")
        if "design" in data:  # a binary design on each tick (DesignedMulti)
            return parse_tick_design(data["design"], labels, where, epsilon)
        if epsilon is not None:
            try:
                epsilon = multi_mechanism(len(labels), epsilon).declared_epsilon
            except MechanismError as exc:
                raise DefinitionError((*where, "epsilon"), str(exc)) from None
        return {"options": labels, "epsilon": epsilon}

    def to_dict(self, q):
        data = {"type": self.name, "options": list(q.options)}
        if q.protected:
            data["epsilon"] = q.epsilon
        return data

    def mechanism(self, q):
        return direct_multi(q.k) if q.epsilon is None else multi_mechanism(q.k, q.epsilon)

    def from_spec(self, spec):
        return {"design": canonical(spec["design"])} if "design" in spec else {}

    structured_report = True

    def stored_design(self, q):
        return ["multi", q.k, q.mechanism.threshold if q.protected else None]

    def design(self, q):
        return (self.name, None, None)

    # ------------------------------------------------------------ reports

    def n_cells(self, q):
        return 1 << q.k

    def in_patterns(self, q):
        return q.k <= PATTERN_MULTI_MAX

    raking_stats = ("tick", "ticked")  # each option's ticks, and how many answered (the sum over ticked)

    def check_report(self, q, value):
        return to_mask(check_ticks(value, q.k))

    def answer_in(self, q, code, options):
        return any((int(code) >> j) & 1 for j in options)

    def report_of(self, q, code):
        return from_mask(int(code), q.k)

    def parse_form(self, q, text):
        if not re.fullmatch(r"[01]{1,20}", text):
            raise MechanismError(f"must be {q.k} ticks written as 0s and 1s, got {text[:30]!r}")
        return [int(c) for c in text]

    def text_of(self, q, code):
        return "".join("Y" if bit else "N" for bit in from_mask(int(code), q.k))

    def code_of(self, q, text):
        if len(text) != q.k or not TICKS_RE.fullmatch(text):
            return None
        return to_mask([c == "Y" for c in text])

    def expected(self, q):
        return f"{q.k} letters Y or N (one per option: {', '.join(q.options)})"

    def stats(self, q, codes, counts):
        return stats_from_masks(q.k, codes, counts)

    def cell_rows(self, q, stats):
        k = q.k
        rows = [("ticked", w, int(c)) for w, c in enumerate(stats["ticked"]) if c]
        rows += [("tick", j, int(c)) for j, c in enumerate(stats["ticks"]) if c]
        rows += [("pair", j * k + l, int(stats["pairs"][j, l])) for j in range(k) for l in range(j + 1, k)
                 if stats["pairs"][j, l]]
        return rows

    def stats_from_cells(self, q, found):
        k = q.k
        ticked = np.zeros(k + 1, dtype=np.int64)
        ticks = np.zeros(k, dtype=np.int64)
        pair_counts = np.zeros((k, k), dtype=np.int64)
        for cell, count in found.get("ticked", []):
            ticked[cell] = count
        for cell, count in found.get("tick", []):
            ticks[cell] = count
        for cell, count in found.get("pair", []):
            pair_counts[cell // k, cell % k] = count
        return {"n": int(ticked.sum()), "ticks": ticks, "pairs": pair_counts, "ticked": ticked}

    def n_of_stats(self, q, stats):
        return int(stats["n"])

    # ------------------------------------------------------------ estimates

    def estimate(self, q, stats, *, method, confidence, simultaneous, monitoring=False, tuned_for=10_000):
        from deniable.estimators.multi import estimate_multi

        return estimate_multi(stats["n"], stats["ticks"], stats["pairs"], stats["ticked"], q.epsilon,
                              confidence=confidence, method=method, simultaneous=simultaneous)

    def record(self, q, r):
        data = {"id": q.id, "text": q.text, "type": self.name, **r.to_dict(q.options)}
        for option in data["options"]:
            option["headline"] = headline(option)
        for (j, l), pair in zip(r.pairs, data["pairs"]):
            pair["headline"] = frechet_headline(pair, data["options"][j]["headline"], data["options"][l]["headline"])
        data["ticked"]["headline"] = headline(data["ticked"], lower=0.0, upper=float(q.k))
        return data

    def csv_rows(self, q, result):
        data = self.record(q, result)
        for j, option in enumerate(data["options"]):
            yield {"option": j, **option}
        yield {"option": "ticked", "label": "number ticked", **data["ticked"]}
        for (j, l), pair in zip(result.pairs, data["pairs"]):
            yield {"option": f"pair:{j}:{l}", **pair, "label": " & ".join(pair["labels"]),
                   "method": "exact (cross-tab)"}

    def table(self, q, result, grid):
        data = self.record(q, result)
        level = f"{100 * data['confidence']:g}%"
        eps = f"ε = {data['epsilon']:.4f} (declared {q.epsilon:g})" if q.protected else "asked directly (not randomized)"
        lines = [f"  n = {data['n']:,} · {eps}, each option's tick at ε/{q.k} · {level} "
                 f"{'simultaneous ' if data['simultaneous'] else ''}intervals, method: {data['method']}"]
        rows = [[o["label"], f"{o['noisy_count']:,}", pct(o["estimate"]), pct(o["consistent"]),
                 pct(o["std_error"]), f"[{pct(o['ci_low'])}, {pct(o['ci_high'])}]"] for o in data["options"]]
        lines += grid(["option", "reported", "estimate", "consistent", "std.err", "interval"], rows)
        t = data["ticked"]
        lines.append(f"  options ticked: mean {fmt(t['estimate'], 2)}, {level} interval "
                     f"[{fmt(t['ci_low'], 2)}, {fmt(t['ci_high'], 2)}]")
        rows = [[" & ".join(p["labels"]), pct(p["headline"]), f"[{pct(p['ci_low'])}, {pct(p['ci_high'])}]",
                 pct(p["conditional_estimate"])] for p in data["pairs"]]
        if rows:
            lines += grid(["both ticked", "estimate", "interval", "2nd | 1st"], rows)
        return lines

    def headlines(self, q, record):
        out = [(o["headline"], o["ci_low"], o["ci_high"]) for o in record["options"]]
        out += [(p["headline"], p["ci_low"], p["ci_high"]) for p in record["pairs"]]
        out.append((record["ticked"]["headline"], record["ticked"]["ci_low"], record["ticked"]["ci_high"]))
        return out

    def chart(self, q, record):
        rows = record["options"]
        return {"labels": list(q.options), "estimate": [r["headline"] for r in rows],
                "ci_low": [r["ci_low"] for r in rows], "ci_high": [r["ci_high"] for r in rows]}

    def examples(self):
        return [({"text": "Which of these have you used?", "type": self.name,
                  "options": ["Cannabis", "Cocaine", "Ecstasy"], "epsilon": 2.0}, [0.3, 0.05, 0.1]),
                ({"text": "Which of these do you own?", "type": self.name, "options": ["Car", "Bike"]},
                 [0.5, 0.6]),
                ({"text": "Which of these have you done at work?", "type": self.name,
                  "options": ["Taken a long lunch", "Called in sick when well", "Taken stationery"],
                  "design": {"name": "forced", "p": 0.4, "forced": [0.35, 0.25]}}, [0.4, 0.2, 0.3])]

    # ------------------------------------------------------------ exports

    def stat_columns(self, q, codes):
        answered = codes >= 0
        out = []
        for j, option in enumerate(q.options):
            values = np.where(answered, (codes >> j) & 1, np.nan).astype(float)
            out.append((f"_{j + 1}", values, NO_YES, f"{q.text}: {option}"))
        return out

    # ------------------------------------------------------------ monitoring, releases and the public page

    def release_labels(self, q):
        """Every subset of the options (code = bit mask) as a category, when there are at most
        :data:`~deniable.server.survey.definition.MAX_OPTIONS` subsets."""
        from ..definition import MAX_OPTIONS
        from .base import NotAvailable

        if q.protected:
            raise NotAvailable("a protected check-all question is published through its estimates (no cost), "
                               "not as counts")
        if (1 << q.k) > MAX_OPTIONS:
            raise NotAvailable(f"its answers are subsets of {q.k} options ({1 << q.k} possible): a released "
                               f"histogram, most common answer or grouping is offered for at most {MAX_OPTIONS}")
        return [", ".join(o for j, o in enumerate(q.options) if code >> j & 1) or "(none ticked)"
                for code in range(1 << q.k)]

    def tick_columns(self, q):
        """Bit j of a code is option j's tick; each tick is binary randomized response at ε/K (a
        design on each tick, whose mechanism has no such bit, is not weighted yet: None)."""
        bit = getattr(q.mechanism, "bit", None)
        if bit is None:
            return None
        codes = np.arange(1 << q.k)[:, None]
        return (codes >> np.arange(q.k)) & 1, bit.declared_epsilon if q.protected else None

    def group_columns(self, q):
        """Two columns per option, "not ticked" and "ticked": a report counts in one of each (w = K)."""
        codes = np.arange(1 << q.k)[:, None]
        bits = (codes >> np.arange(q.k)) & 1  # (codes × options)
        columns = np.zeros((1 << q.k, 2 * q.k), dtype=np.int64)
        columns[:, 0::2] = 1 - bits
        columns[:, 1::2] = bits
        labels = [f"{o}: {tick}" for o in q.options for tick in ("not ticked", "ticked")]
        return labels, columns

    def group_estimates(self, q, counts, noisy, beta, confidence):
        """Each option's share: its tick is binary randomized response (p, q of one bit), inverted
        from the group's two columns of that option, each interval alone
        (:func:`deniable.estimators.release.group_shares`)."""
        from deniable.estimators.release import group_shares

        mech = q.mechanism
        out = []
        for j, option in enumerate(q.options):
            pair = slice(2 * j, 2 * j + 2)
            estimate, low, high = group_shares(counts[pair], noisy[pair], mech.p, mech.q, beta, confidence)
            out.append({"label": option, "estimate": None if estimate is None else float(estimate[1]),
                        "ci_low": float(low[1]), "ci_high": float(high[1]), "lower": 0.0, "upper": 1.0})
        return out

    def summary(self, q, record):
        """Each option's share (in [0, 1]) and the mean number of options ticked (in [0, K])."""
        if not record:
            return []
        out = super().summary(q, record)
        ticked = record["ticked"]
        out.append({"label": "number of options ticked (mean)", "headline": ticked["headline"],
                    "ci_low": ticked["ci_low"], "ci_high": ticked["ci_high"], "lower": 0.0, "upper": float(q.k)})
        return out

    # ------------------------------------------------------------ the survey page

    def page_data(self, q):
        return {"attrs": {"data-type": self.name, "data-k": q.k,
                          "data-threshold": q.mechanism.threshold if q.protected else TWO_32}}

    card = "cards/multi.html"
    script = "types/multi.js"

    def coin(self, q, *, gettext, locale):
        from ..explain import percent

        _ = gettext
        return _("For each option on its own, your device sends your tick (or no tick) as it is %(kept)s of the "
                 "time and otherwise the opposite.") % {"kept": percent(q.mechanism.p, locale, gettext=_)}

    def api_design(self, q):
        """``type``, ``options`` and, when protected, each tick's ``epsilon``, ``threshold``, ``p`` and the
        question's ``realized_epsilon``."""
        item = {"type": self.name, "options": list(q.options), "k": q.k}
        if q.protected:
            mech = q.mechanism
            item.update(epsilon=q.epsilon, threshold=mech.threshold, p=mech.p, q=mech.q,
                        realized_epsilon=mech.epsilon)
        return item

    # ------------------------------------------------------------ simulation

    def truth(self, q, value, where):
        from ..simulate import TruthError, probabilities, sums_to_one

        if isinstance(value, dict):
            if set(value) != {"subsets", "probabilities"} or not isinstance(value["subsets"], list):
                raise TruthError(f'{where}: must be a list of {q.k} tick probabilities or '
                                 f'{{"subsets": [[...], ...], "probabilities": [...]}}')
            probs = probabilities(value["probabilities"], where, len(value["subsets"]), "one per subset")
            sums_to_one(value["probabilities"], where)
            masks = []
            for subset in value["subsets"]:
                if not isinstance(subset, list) or any(o not in q.options for o in subset):
                    raise TruthError(f"{where}: every subset must be a list of option labels "
                                     f"({', '.join(q.options)})")
                masks.append(sum(1 << q.options.index(o) for o in set(subset)))
            return {"masks": np.asarray(masks, dtype=np.int64), "probabilities": probs}
        probs = probabilities(value, where, q.k, f"the probability of ticking each of: {', '.join(q.options)}")
        if (probs > 1).any():
            raise TruthError(f"{where}: a tick probability must be at most 1")
        return {"ticks": probs}

    def true_masks(self, q, truth, n, rng):
        """``n`` true subsets (bit masks) drawn from a parsed ``truth`` (:meth:`truth`)."""
        if "ticks" in truth:
            bits = rng.random((n, q.k)) < truth["ticks"]
            return (bits.astype(np.int64) << np.arange(q.k, dtype=np.int64)).sum(axis=1)
        p = truth["probabilities"] / truth["probabilities"].sum()
        return truth["masks"][rng.choice(truth["masks"].size, size=n, p=p)]

    def simulate(self, q, truth, n, rng):
        from deniable.client.multi import randomize_multi

        return randomize_multi(self.true_masks(q, truth, n, rng), q.mechanism, rng)

    # ------------------------------------------------------------ builder and wording

    builder_hint = ("ε covers the whole answer: it is split evenly over the options, each option's tick randomized "
                    "on its own at ε ÷ the number of options.")

    # the builder's Randomization: randomized response at ε/K per tick, or a binary design on each tick
    # (not those a tick cannot use: the builder offers a check-all question only these)
    randomization_choices = {name: words for name, words in RANDOMIZATIONS.items() if name not in designs.NOT_ON_TICKS}
    design_slots = DESIGN_SLOTS
    slot_fields = ("options", "randomization", *DESIGN_SLOTS.values())

    def builder_dict(self, raw, where, protected):
        data = {"type": self.name, "options": lines(raw.get("options"))}
        design = builder_design(raw, where, protected, self.randomization_choices)
        return data if design is None else {**data, "design": design}

    def builder_entry(self, q):
        return {**super().builder_entry(q), "randomization": "rr", **{slot: "" for slot in DESIGN_SLOTS.values()}}

    # ------------------------------------------------------------ planning

    plan_template = "dashboard/plan/multi.html"
    plan_needs = f"k:2:{MAX_MULTI}"
    plan_missing = (f"Enter at least two options (at most {MAX_MULTI}) to see how private and how precise this "
                    "question will be.")
    plan_option = "--multi"

    def plan(self, q, target_n, margin, confidence=0.95):
        from ..type_planning import multi_plan

        return {**multi_plan(q, target_n, margin, confidence), "type": self.name, "template": self.plan_template}

    def plan_query(self, args, number):
        """``k`` options and an optional ``design`` (the definition's design object as JSON, each tick's)."""
        data = {"type": self.name, "options": [str(j) for j in range(number("k", int, 2, MAX_MULTI))]}
        raw = args.get("design", "")
        if raw:
            try:
                data["design"] = json.loads(raw[:4000])
            except (json.JSONDecodeError, RecursionError):  # 4000 characters: no over-long integer
                raise FieldError('design: must be a JSON object such as {"name": "warner", "p": 0.75}',
                                 "design") from None
        return data

    def plan_cli(self, value, step, margin, epsilons, confidence):
        """``deniable plan --multi K``: a :class:`..type_planning.MultiPlan`."""
        from .. import type_planning as tp

        rows = tp.multi_plan_rows(value, margin, epsilons, confidence)
        return tp.MultiPlan(type=self.name, k=value, margin=margin, confidence=confidence, rows=rows)

    # ------------------------------------------------------------ audit and the codebook

    def audit_samplers(self):
        return (MULTI_AUDIT, TICK_DESIGN_AUDIT)  # randomized response at ε/K, and a design on each tick


class MultiAudit(AuditSampler):
    """Each tick randomized at ε/K: the empty and the full set as inputs, the number of ticks
    reported as events (its ratio between the two is tight: K flips against K keeps)."""

    name = "multi"
    js = """async ([mask, k, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const ticks = Array.from({length: k}, (_, j) => (mask >> j) & 1);
  const counts = new Array(k + 1).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomizeTicks(ticks, threshold).reduce((a, b) => a + b, 0)] += 1;
  return counts;
}"""

    def label(self, mech):
        return f"K={mech.k}"

    def inputs(self, mech):
        return [0, (1 << mech.k) - 1]

    def js_args(self, mech, value):
        return [value, mech.k, mech.threshold]

    def python_row(self, mech, value, samples, rng):
        from deniable.client.multi import randomize_multi
        from deniable.estimators.audit import tick_cells

        return tick_cells(randomize_multi(np.full(samples, value), mech, rng), mech.k)

    def defaults(self, ks, epsilons):
        """K = 3 options."""
        return [multi_mechanism(3, eps) for eps in epsilons]


MULTI_AUDIT = MultiAudit()


# ---------------------------------------------------------------- a randomized-response design on each tick

DESIGN_NOT_YET = "not available yet for a check-all question with a randomized-response design"


def parse_tick_design(raw, labels, where, epsilon) -> dict:
    """The :class:`Question` fields of a check-all question with a ``"design"``: the design is binary (a
    tick's two answers, ticked and not), its errors at ``design.<parameter>``; the question's ε is
    K times the design's realized one (None when the design is not ε-LDP), never a declared one."""
    if epsilon is not None:
        raise DefinitionError((*where, "epsilon"), "leave epsilon out of a question with a design: its ε is the "
                              "design's own on each tick, times the number of options")
    try:
        design = designs.tick_design(raw)
    except designs.DesignError as exc:
        problem = exc.problem.replace("per option (2)", "per answer of a tick (2: ticked, not ticked)")
        raise DefinitionError((*where, "design", *design_path(exc.field)), problem) from None
    total = len(labels) * design.epsilon
    if design.ldp and total > MAX_EPSILON:
        raise DefinitionError((*where, "design"), f"the design's ε on each tick is {design.epsilon:.4g}, so "
                              f"{total:.4g} for the {len(labels)} options together, above the largest a question "
                              f"may have ({MAX_EPSILON:g})")
    return {"options": labels, "epsilon": total if design.ldp else None, "design": canonical(raw)}


def tick_design_of(q) -> designs.Design:
    """The realized design of each tick of a check-all question with one."""
    return _tick_design(q.design)


@functools.lru_cache(maxsize=256)
def _tick_design(spec: str) -> designs.Design:
    return designs.tick_design(json.loads(spec))


class DesignedMulti(Multi):
    """A check-all question whose every tick is randomized by one binary design of
    :mod:`deniable.client.designs` (:class:`~deniable.client.designs.TickDesignMechanism`): ε is K
    times the design's realized one; a design with a zero cell is not ε-LDP (labelled so, with no ε);
    estimates by :func:`deniable.estimators.multi.estimate_multi_design`.  A release of its counts
    says it is not available yet (:data:`DESIGN_NOT_YET`)."""

    label = "check all that apply with a randomized-response design on each tick"
    plan_template = "dashboard/plan/design.html"

    def refuses_builder(self, q):
        """None for a design the builder shows whole, as for a single choice."""
        from .choice import Choice

        return Choice.designed.refuses_builder(q)

    def builder_entry(self, q):
        """The slot: ``randomization`` names the design, its parameters in their fields as stored."""
        from .choice import Choice

        return {**super().builder_entry(q), **Choice.designed.builder_entry(q), "options": "\n".join(q.options)}

    def to_dict(self, q):
        data = super().to_dict(q)
        data.pop("epsilon", None)  # the design's own, computed
        return {**data, "design": json.loads(q.design)}

    def mechanism(self, q):
        return designs.TickDesignMechanism(q.k, tick_design_of(q))

    def spec(self, q):
        return {**(super().spec(q) or {}), "design": json.loads(q.design)}

    def stored_design(self, q):
        d = tick_design_of(q)
        return [self.name, q.k, None, d.name, hashlib.sha256(json.dumps(d.weights).encode()).hexdigest()[:12]]

    def design(self, q):
        d = tick_design_of(q)
        return (self.name, "design", d.name, [list(row) for row in d.weights])

    def design_fields(self, q):
        return {"type": self.name, "design": tick_design_of(q).name}

    # ------------------------------------------------------------ estimates

    def estimate(self, q, stats, *, method, confidence, simultaneous, monitoring=False, tuned_for=10_000):
        from deniable.estimators.multi import estimate_multi_design

        return estimate_multi_design(stats["n"], stats["ticks"], stats["pairs"], stats["ticked"], tick_design_of(q),
                                     confidence=confidence, method=method, simultaneous=simultaneous)

    def table(self, q, result, grid):
        out = super().table(q, result, grid)
        d = tick_design_of(q)
        privacy = (f"ε = {result.epsilon:.4f} ({q.k} ticks × {d.epsilon:.4f})" if d.ldp else "not ε-LDP")
        level = f"{100 * result.confidence:g}%"
        out[0] = (f"  n = {int(result.n):,} · {d.name} design on each tick · {privacy} · {level} "
                  f"{'simultaneous ' if result.simultaneous else ''}intervals, method: {result.method}")
        return out

    def unprotected(self, q):
        return (f"not ε-LDP: each tick randomized by the {tick_design_of(q).name} design, one of whose reports "
                "can give a tick away")

    def release_labels(self, q):
        raise NotAvailable(f"releases are {DESIGN_NOT_YET}")

    def group_estimates(self, q, counts, noisy, beta, confidence):
        """Each option's share within a group (the check-all question's two columns per option): its
        "ticked" column counts reports of probability ``b + (a − b)π_j`` (a, b: a tick's report
        probability when ticked and when not), its "not ticked" column ``(1 − b) + (b − a)π_j``, so
        :func:`deniable.estimators.release.group_shares` with the column whose probability rises with
        π_j (its own p > q) covers π_j, each interval alone."""
        from deniable.estimators.release import group_shares

        a, b = (float(x) for x in tick_design_of(q).matrix[0])
        column, p_col, q_col = (1, a, b) if a > b else (0, 1 - a, 1 - b)
        out = []
        for j, option in enumerate(q.options):
            pair = slice(2 * j, 2 * j + 2)
            estimate, low, high = group_shares(counts[pair], noisy[pair], p_col, q_col, beta, confidence)
            out.append({"label": option, "estimate": None if estimate is None else float(estimate[column]),
                        "ci_low": float(low[column]), "ci_high": float(high[column]), "lower": 0.0, "upper": 1.0})
        return out

    # ------------------------------------------------------------ the survey page and the API

    def page_data(self, q):
        """The design's cumulative integer weights for a tick (``data-column-0``) and for none
        (``data-column-1``); ``data-threshold`` 0: randomized, not at ε/K (multi.js)."""
        columns = tick_design_of(q).cumulative()
        attrs = {"data-type": self.name, "data-k": q.k, "data-threshold": 0}
        attrs.update({f"data-column-{t}": " ".join(str(int(c)) for c in columns[t]) for t in range(2)})
        return {"attrs": attrs}

    def coin(self, q, *, gettext, locale):
        """The design's sentence (:func:`..explain.design_coin`) for one tick, its answers "ticked" and
        "not ticked"."""
        from ..explain import design_coin

        _ = gettext
        return _("For each option on its own:") + " " + design_coin(tick_design_of(q), [_("ticked"), _("not ticked")],
                                                                    gettext=gettext, locale=locale)

    def explanation(self, q, *, gettext, locale):
        """The bounds of the whole answer's realized ε (K times a tick's) and the design's sentence; for a
        design that is not ε-LDP, the sentence and "not protected by ε", as for a single choice."""
        d = tick_design_of(q)
        return design_explanation(d, self.coin(q, gettext=gettext, locale=locale), q.mechanism.epsilon,
                                  gettext=gettext, locale=locale)

    def api_design(self, q):
        """``type``, ``options``, ``k``, the ``design`` object, each tick's integer ``tick_weights`` (reports ×
        answers, answer 0 = ticked, report 0 = sent as a tick; each column sums to 2^32), ``tick_epsilon``,
        ``realized_epsilon`` (K times it; None when not ε-LDP) and ``ldp``."""
        d = tick_design_of(q)
        total = q.mechanism.epsilon if d.ldp else None
        return {"type": self.name, "options": list(q.options), "k": q.k, "design": json.loads(q.design),
                "tick_weights": [list(row) for row in d.weights], "tick_epsilon": d.epsilon if d.ldp else None,
                "realized_epsilon": total, "epsilon": total, "ldp": d.ldp}

    def simulate(self, q, truth, n, rng):
        return designs.randomize_ticks(self.true_masks(q, truth, n, rng), tick_design_of(q), q.k, rng)

    # ------------------------------------------------------------ planning and audit

    def plan(self, q, target_n, margin, confidence=0.95):
        """Each option's share is a binary design's (exact: :func:`deniable.estimators.designs.plan_design`),
        beside a yes/no question asked directly; ε is the whole answer's."""
        from deniable.estimators.designs import design_margin, plan_design

        from ..planning import question_plan

        d = tick_design_of(q)
        planned = plan_design(d, margin, confidence=confidence, decided=True)
        moe, exact = design_margin(d, target_n, confidence=confidence)
        direct = question_plan(None, 2, target_n, margin, confidence)
        name = RANDOMIZATIONS.get(d.name, f"the {d.name} design").split(" (")[0]
        return {"k": q.k, "target_n": target_n, "margin": margin, "confidence": confidence, "protected": d.ldp,
                "design": d.name, "epsilon": q.mechanism.epsilon if d.ldp else None,
                "tick_epsilon": d.epsilon if d.ldp else None, "moe": moe, "moe_exact": exact, "needed": planned.n,
                "needed_exact": planned.exact, "method": planned.method, "baseline_moe": direct["baseline_moe"],
                "baseline_needed": direct["baseline_needed"], "type": self.name, "template": self.plan_template,
                "design_label": f"{name} on each of the {q.k} ticks"}

    def audit_sampler(self, q):
        return TICK_DESIGN_AUDIT


class TickDesignAudit(AuditSampler):
    """A binary design on each tick: the empty and the full set as inputs, the number of reported ticks
    as events — between the two, W = K (or W = 0) has the ratio ``(M[r, 0]/M[r, 1])^K`` of the design's
    tightest report r, so these cells reach ε = K · ε_d.  A design with a zero cell is shown not to be
    ε-LDP."""

    name = "multi-design"
    js = """async ([mask, k, columns, n]) => {
  const d = await import('/static/designs.js');
  const ticks = Array.from({length: k}, (_, j) => (mask >> j) & 1);
  const counts = new Array(k + 1).fill(0);
  for (let i = 0; i < n; i++) counts[d.sampleTicks(ticks, columns).reduce((a, b) => a + b, 0)] += 1;
  return counts;
}"""
    not_protected = "a randomized-response design with a zero cell on each tick (a report that rules an answer out)"

    def label(self, mech):
        return f"{mech.design.name} K={mech.k}"

    def inputs(self, mech):
        return [0, (1 << mech.k) - 1]

    def js_args(self, mech, value):
        return [value, mech.k, [[int(c) for c in column] for column in mech.design.cumulative()]]

    def python_row(self, mech, value, samples, rng):
        from deniable.estimators.audit import tick_cells

        return tick_cells(designs.randomize_ticks(np.full(samples, value), mech.design, mech.k, rng), mech.k)

    def protected(self, mech):
        return mech.protected

    def defaults(self, ks, epsilons):
        """None: designs are audited as the surveys in ``--db`` state them."""
        return []


TICK_DESIGN_AUDIT = TickDesignAudit()

MULTI = register(Multi())
Multi.designed = DesignedMulti()  # the variant of a check-all question with a "design" (Question.qtype)
