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
"""

from __future__ import annotations

import re

import numpy as np

from deniable.client.mechanism import TWO_32, MechanismError
from deniable.client.multi import MAX_MULTI, check_ticks, direct_multi, from_mask, multi_mechanism, to_mask

from ..definition import DefinitionError, labels_field
from .base import AuditSampler, QuestionType, fmt, headline, json_number, pct
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


class Multi(QuestionType):
    name = "multi"
    label = "check all that apply"
    keys = frozenset({"type", "options"})
    needed = ("options",)
    crosstab = ("a cross-tab needs two single-choice questions; a check-all question shows its own "
                "co-occurrence of every pair of options instead")

    def parse(self, data, where, epsilon):
        labels = labels_field(data["options"], (*where, "options"), 2, MAX_MULTI, "options")
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

    def check_report(self, q, value):
        return to_mask(check_ticks(value, q.k))

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
                 [0.5, 0.6])]

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

    def simulate(self, q, truth, n, rng):
        from deniable.client.multi import randomize_multi

        if "ticks" in truth:
            bits = rng.random((n, q.k)) < truth["ticks"]
            masks = (bits.astype(np.int64) << np.arange(q.k, dtype=np.int64)).sum(axis=1)
        else:
            p = truth["probabilities"] / truth["probabilities"].sum()
            masks = truth["masks"][rng.choice(truth["masks"].size, size=n, p=p)]
        return randomize_multi(masks, q.mechanism, rng)

    # ------------------------------------------------------------ builder and wording

    builder_hint = ("ε covers the whole answer: it is split evenly over the options, each option's tick randomized "
                    "on its own at ε ÷ the number of options.")

    def builder_dict(self, raw, where, protected):
        from .base import lines

        return {"type": self.name, "options": lines(raw.get("options"))}

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
        return {"type": self.name, "options": [str(j) for j in range(number("k", int, 2, MAX_MULTI))]}

    def plan_cli(self, value, step, margin, epsilons, confidence):
        """``deniable plan --multi K``: ``(head, rows, table)``."""
        from .. import type_planning as tp

        rows = tp.multi_plan_rows(value, margin, epsilons, confidence)
        return {"type": self.name, "options": value}, rows, tp.multi_plan_table(value, margin, confidence, rows)

    # ------------------------------------------------------------ audit and the codebook

    def audit_samplers(self):
        return (MULTI_AUDIT,)


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

MULTI = register(Multi())
