"""Numeric: an answer from min to max in steps of step, by grid randomized response or discrete Laplace.

Definition: ``"min"``, ``"max"``, ``"step"`` (default 1; ``(max − min)/step`` a whole number of
1–1000 steps), ``"mechanism"`` (``"grid"`` or ``"laplace"``) and, for the grid, ``"grid"`` (G, a
divisor of the steps).  Without a mechanism the planner's choice is written in
(:func:`deniable.estimators.plan_numeric`).  A question asked directly is the grid with G = m.

==================  ============================  ==================================  ======
mechanism           JSON report                   text cell                           code
==================  ============================  ==================================  ======
grid (or direct)    grid index j (0..G)           the grid point's value ``12.5``     j
discrete Laplace    steps y from min (−L..m + L)  the reported value ``min + y·step``  y + L
==================  ============================  ==================================  ======

Sufficient statistics: ``{"counts"}`` per grid point, or ``{"values", "counts"}`` per reported
Laplace value (in steps from min).  Estimates: the mean (headline kept inside [min, max]), and
for the grid the distribution, CDF and median (:mod:`deniable.estimators.numeric`).  Exports: the
reported value as a number, no value labels.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import numpy as np

from deniable.client.mechanism import TWO_32, MechanismError, check_option
from deniable.client.numeric import (MAX_STEPS, LaplaceMechanism, check_grid, check_laplace_report, direct_grid,
                                     grid_mechanism, laplace)
from deniable.errors import sent

from ..definition import parse_epsilon, DefinitionError, Question, number
from .base import AuditSampler, Capabilities, QuestionType, decimal_field, decimal_text, fmt, headline, pct, placed_after
from .audit import Audit
from .builder import Builder
from .exports import Files
from .monitoring import Monitoring
from .presentation import Presentation
from .statistics import Statistics
from .wire import Wire
from .registry import register

MECHANISMS = ("grid", "laplace")
NUMBER_RE = re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,12})?")


def grid_of(q: Question) -> int:
    """G of a numeric question on the grid (m when asked directly)."""
    return q.grid if q.protected else q.steps


def grid_points(q) -> list[str]:
    """The grid's values as the respondent reads them (a protected grid question rounds to these)."""
    g = grid_of(q)
    return [decimal_text(q.value(j * (q.steps // g))) for j in range(g + 1)]


def is_laplace(q: Question) -> bool:
    return q.method == "laplace"


class Numeric(Wire, Files, Statistics, Monitoring, Presentation, Builder, Audit, QuestionType):
    name = "numeric"
    label = "number"
    keys = frozenset({"type", "min", "max", "step", "mechanism", "grid"})
    needed = ("min", "max")
    capabilities = Capabilities(
        crosstab="a cross-tab needs two single-choice questions; a number has no categories to cross",
        covariate=None)  # a number asked directly (age in years) enters a regression as its value

    # ------------------------------------------------------------ definition

    def parse(self, data, where, epsilon):
        if epsilon is not None:
            epsilon = parse_epsilon(epsilon, 2, (*where, "epsilon"))
        low, high = decimal_field(data["min"], (*where, "min")), decimal_field(data["max"], (*where, "max"))
        step = decimal_field(data.get("step", 1), (*where, "step"))
        if step <= 0:
            raise DefinitionError((*where, "step"), "must be positive")
        if high <= low:
            raise DefinitionError((*where, "max"), f"must be greater than min ({number(low)})")
        steps = (high - low) / step
        if steps != steps.to_integral_value():
            raise DefinitionError((*where, "step"), f"max − min ({number(high - low)}) must be a whole number of "
                                  f"steps of {number(step)}")
        if not 1 <= steps <= MAX_STEPS:
            raise DefinitionError((*where, "step"), f"a numeric question has at most {MAX_STEPS + 1} possible "
                                  f"answers (min to max in steps of step), got {int(steps) + 1}")
        m = int(steps)
        fields = {"epsilon": epsilon, "minimum": low, "maximum": high, "step": step, "method": None, "grid": None}
        method, grid = data.get("mechanism"), data.get("grid")
        if epsilon is None:
            for key in ("mechanism", "grid"):
                if data.get(key) is not None:
                    raise DefinitionError((*where, key), "only a protected question (with epsilon) has a mechanism")
            return fields
        if method is None:
            from deniable.estimators.numeric import plan_numeric

            best = plan_numeric(m, epsilon, 1000)[0]
            method = best.mechanism
            grid = best.grid if grid is None and method == "grid" else grid
        if method not in MECHANISMS:
            raise DefinitionError((*where, "mechanism"), f"must be one of {', '.join(MECHANISMS)}, "
                                  f"got {sent(method)}"[:120])
        try:
            if method == "laplace":
                if grid is not None:
                    raise DefinitionError((*where, "grid"), "only the grid mechanism has a grid")
                laplace(m, epsilon)
            else:
                grid = check_grid(m, 1 if grid is None else grid)
                grid_mechanism(m, grid, epsilon)
        except MechanismError as exc:
            raise DefinitionError((*where, "grid" if "grid" in str(exc) else "epsilon"), str(exc)) from None
        return {**fields, "method": method, "grid": grid}

    def to_dict(self, q):
        data = {"type": self.name, "min": number(q.minimum), "max": number(q.maximum)}
        if q.step != 1:
            data["step"] = number(q.step)
        if q.protected:
            data.update(epsilon=q.epsilon, mechanism=q.method)
            if q.method == "grid":
                data["grid"] = q.grid
        return data

    def k(self, q):
        return q.steps + 1

    def mechanism(self, q):
        if not q.protected:
            return direct_grid(q.steps)
        if is_laplace(q):
            return laplace(q.steps, q.epsilon)
        return grid_mechanism(q.steps, q.grid, q.epsilon)

    def spec(self, q):
        spec = {"min": number(q.minimum), "max": number(q.maximum), "step": number(q.step)}
        if q.protected:
            spec["mechanism"] = q.method
            if q.method == "grid":
                spec["grid"] = q.grid
        return spec

    def from_spec(self, spec):
        fields = {"minimum": Decimal(repr(spec["min"])), "maximum": Decimal(repr(spec["max"])),
                  "step": Decimal(repr(spec["step"])), "method": spec.get("mechanism"), "grid": spec.get("grid")}
        return {k: (v.normalize() if isinstance(v, Decimal) and v != 0 else v) for k, v in fields.items()}

    def stored_design(self, q):
        threshold = q.mechanism.threshold if q.protected else None
        if is_laplace(q):
            return ["laplace", q.steps, threshold, q.mechanism.tail]
        return ["grid", q.steps, grid_of(q), threshold]

    def report_offset(self, q):
        return q.mechanism.low if is_laplace(q) else 0

    def design(self, q):
        return (self.name, q.method, q.grid)

    def wording(self, q):
        return {"text": q.text}

    def reworded(self, q, texts):
        return {"text": texts["text"]}

    # ------------------------------------------------------------ reports

    def n_cells(self, q):
        if is_laplace(q):
            mech = q.mechanism
            return mech.high - mech.low + 1
        return grid_of(q) + 1

    def in_patterns(self, q):
        return not is_laplace(q) and super().in_patterns(q)

    def check_report(self, q, value):
        if is_laplace(q):
            mech: LaplaceMechanism = q.mechanism
            return check_laplace_report(value, mech) - mech.low
        return check_option(value, grid_of(q) + 1)

    def report_of(self, q, code):
        return int(code) + q.mechanism.low if is_laplace(q) else int(code)

    def steps_of(self, q, code) -> int:
        """The reported value of a code, in steps from min."""
        return int(code) + q.mechanism.low if is_laplace(q) else int(code) * (q.steps // grid_of(q))

    def text_of(self, q, code):
        return decimal_text(q.value(self.steps_of(q, code)))

    def code_of(self, q, text):
        if not NUMBER_RE.fullmatch(text):
            return None
        try:
            steps = (Decimal(text) - q.minimum) / q.step
        except InvalidOperation:
            return None
        if steps != steps.to_integral_value():
            return None
        steps = int(steps)
        if is_laplace(q):
            mech = q.mechanism
            return steps - mech.low if mech.low <= steps <= mech.high else None
        d = q.steps // grid_of(q)
        if steps % d or not 0 <= steps // d <= grid_of(q):
            return None
        return steps // d

    def expected(self, q):
        if is_laplace(q):
            mech = q.mechanism
            return (f"a value from {self.text_of(q, 0)} to {self.text_of(q, mech.high - mech.low)} "
                    f"in steps of {decimal_text(q.step)}")
        points = [self.text_of(q, j) for j in range(grid_of(q) + 1)]
        return f"a grid value ({', '.join(points[:8]) + (', …' if len(points) > 8 else '')})"

    def stats(self, q, codes, counts):
        if is_laplace(q):
            codes, counts = np.asarray(codes, dtype=np.int64), np.asarray(counts, dtype=np.int64)
            order = np.argsort(codes)
            return {"values": codes[order] + q.mechanism.low, "counts": counts[order]}
        return {"counts": self.dense(q, codes, counts)}

    def cell_rows(self, q, stats):
        if is_laplace(q):
            low = q.mechanism.low
            return [("cell", int(v) - low, int(c)) for v, c in zip(stats["values"], stats["counts"]) if c]
        return super().cell_rows(q, stats)

    # ------------------------------------------------------------ estimates

    def estimate(self, q, stats, *, method, confidence, simultaneous, monitoring=False, tuned_for=10_000):
        from deniable.estimators.numeric import estimate_grid, estimate_laplace

        if is_laplace(q):
            return estimate_laplace(stats["values"], stats["counts"], q.steps, q.epsilon, confidence=confidence)
        return estimate_grid(stats["counts"], q.steps, grid_of(q), q.epsilon, confidence=confidence, method=method)

    def record(self, q, r):
        data = {"id": q.id, "text": q.text, "type": self.name,
                **placed_after(r.to_dict(scale=float(q.step), offset=float(q.minimum)), "grid",
                               min=number(q.minimum), max=number(q.maximum), step=number(q.step))}
        data["mean"]["headline"] = headline(data["mean"], lower=float(q.minimum), upper=float(q.maximum))
        for point in data.get("distribution", []):
            point["headline"] = headline(point)
        return data

    def csv_rows(self, q, result):
        data = self.record(q, result)
        yield {"option": "mean", "label": "mean", **data["mean"]}
        for j, point in enumerate(data.get("distribution", [])):
            yield {"option": j, "label": decimal_text(q.value(int(result.support[j]))), **point,
                   "method": data.get("method")}
        if "median" in data:
            yield {"option": "median", "label": "median", **data["median"]}
        for i, bar in enumerate(data.get("histogram", [])):
            yield {"option": f"histogram:{i}", "label": decimal_text(q.value(i)), **bar,
                   "method": "deconvolution (EM)"}

    def table(self, q, result, grid):
        data = self.record(q, result)
        level = f"{100 * data['confidence']:g}%"
        eps = f"ε = {data['epsilon']:.4f} (declared {q.epsilon:g})" if q.protected else "asked directly (not randomized)"
        mechanism = {"grid": f"grid randomized response, G = {data['grid']}", "laplace": "discrete Laplace",
                     "direct": "asked directly"}[data["mechanism"]]
        m = data["mean"]
        lines = [f"  n = {data['n']:,} · {eps} · {mechanism}",
                 f"  mean {fmt(m['estimate'])} ± std.err {fmt(m['std_error'])}, {level} interval "
                 f"[{fmt(m['ci_low'])}, {fmt(m['ci_high'])}] ({m['method']}; {fmt(m['width_ratio'], 2)}× the "
                 f"known-variance interval's width)"]
        if "median" in data:
            md = data["median"]
            lines.append(f"  median {fmt(md['estimate'], 2)}, {level} interval [{fmt(md['ci_low'], 2)}, "
                         f"{fmt(md['ci_high'], 2)}]")
            rows = [[decimal_text(q.value(int(result.support[j]))), f"{p['noisy_count']:,}", pct(p["estimate"]),
                     pct(p["consistent"]), f"[{pct(p['ci_low'])}, {pct(p['ci_high'])}]", pct(p["cdf"]),
                     f"[{pct(p['cdf_low'])}, {pct(p['cdf_high'])}]"] for j, p in enumerate(data["distribution"])]
            lines += grid(["grid point", "reported", "estimate", "consistent", "interval", "CDF", "CDF interval"], rows)
        if "histogram" in data:
            shown = [f"{decimal_text(q.value(i))}: {pct(b['estimate'])}" for i, b in enumerate(data["histogram"])
                     if (b["estimate"] or 0) >= 0.005]
            converged = "converged" if data["histogram_converged"] else "stopped"
            lines.append(f"  deconvolved histogram ({data['histogram_iterations']} EM steps, {converged}; ≥ 0.5% "
                         f"shown): " + ", ".join(shown))
        return lines

    def headlines(self, q, record):
        out = [(record["mean"]["headline"], record["mean"]["ci_low"], record["mean"]["ci_high"])]
        out += [(p["headline"], p["ci_low"], p["ci_high"]) for p in record.get("distribution", [])]
        return out

    def chart(self, q, record):
        points = record.get("distribution")
        if not points:
            return None
        return {"labels": [decimal_text(Decimal(repr(p["value"]))) for p in points],
                "estimate": [p["headline"] for p in points], "ci_low": [p["ci_low"] for p in points],
                "ci_high": [p["ci_high"] for p in points]}

    def examples(self):
        truth = {"values": [0, 2, 5, 10, 20], "probabilities": [0.3, 0.3, 0.2, 0.15, 0.05]}
        return [({"text": "Drinks in the last 7 days?", "type": self.name, "min": 0, "max": 40, "epsilon": 1.0,
                  "mechanism": "grid", "grid": 1}, truth),
                ({"text": "Hours of unreported work last week?", "type": self.name, "min": 0, "max": 20,
                  "step": 0.5, "epsilon": 2.0, "mechanism": "laplace"},
                 {"values": [0, 2.5, 8], "probabilities": [0.6, 0.3, 0.1]}),
                ({"text": "Your age?", "type": self.name, "min": 18, "max": 30},
                 {"values": [18, 20, 25], "probabilities": [0.5, 0.3, 0.2]})]

    # ------------------------------------------------------------ exports

    def values_of(self, q, codes) -> np.ndarray:
        """The reported values of codes as float64, NaN = not answered."""
        codes = np.asarray(codes, dtype=np.int64)
        values = np.full(codes.shape, np.nan)
        answered = codes >= 0
        if answered.any():
            lookup = np.array([float(q.value(self.steps_of(q, c))) for c in range(self.n_cells(q))])
            values[answered] = lookup[codes[answered]]
        return values

    def linear_scores(self, q, codes):
        """A discrete Laplace report is its value (the noise has mean 0).  A grid report R of the grid
        values v_0..v_G has ``E v(R) = q Σ v_j + (p − q) E v(J)`` and ``E v(J) = E X`` (stochastic
        rounding), so it scores ``(v(R) − q Σ v_j)/(p − q)`` (asked directly: p = 1, q = 0)."""
        values = self.values_of(q, codes)
        if is_laplace(q):
            return values
        rr = q.mechanism.rr
        total = float(self.values_of(q, np.arange(self.n_cells(q))).sum())
        return (values - rr.q * total) / (rr.p - rr.q)

    # ------------------------------------------------------------ regression covariates

    def covariate_values(self, q, codes):
        """The answer itself, in the question's units (``min + step · index``)."""
        return self.values_of(q, codes)

    def stat_columns(self, q, codes):
        return [("", self.values_of(q, codes), None, q.text)]

    def parquet_array(self, q, codes):
        """The reported value as a float64 number (null = not answered), not a text cell."""
        import pyarrow as pa

        values = self.values_of(q, codes)
        return pa.array(values, pa.float64(), mask=np.isnan(values))

    def number_codes(self, q, values):
        """Each distinct number's code: the report whose value, as float64, is exactly that number.

        The steps from min are ``round((v − min) / step)``; the number is a report only when the
        value of those steps converts to the same float64 (so 12.5000001 is refused), and the steps
        are a report of the mechanism (:meth:`code_of`)."""
        out = np.full(len(values), -2, dtype=np.int64)
        low, step = float(q.minimum), float(q.step)
        for i, v in enumerate(values):
            if v is None:
                out[i] = -1
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)) or not np.isfinite(float(v)):
                continue
            steps = round((float(v) - low) / step)
            if float(q.value(steps)) == float(v):
                code = self.code_of(q, decimal_text(q.value(steps)))
                out[i] = -2 if code is None else code
        return out

    # ------------------------------------------------------------ monitoring, releases and the public page

    def group_columns(self, q):
        """One column per grid point of a protected number on the grid (its report's index)."""
        from .base import NotAvailable

        if is_laplace(q):
            raise NotAvailable("its reports (a number plus discrete Laplace noise) take too many values for a "
                               "released table within groups; its overall mean is published at no cost")
        cells = self.n_cells(q)
        return [self.text_of(q, j) for j in range(cells)], np.eye(cells, dtype=np.int64)

    def group_estimates(self, q, counts, noisy, beta, confidence):
        """The mean within the group, in the question's units.  The grid index's shares are k-ary
        randomized response; ``E X = Σ_j g_j π_j`` over the grid points g_j (stochastic rounding is
        unbiased, :mod:`deniable.estimators.numeric`), so the shares' simultaneous intervals
        (:func:`deniable.estimators.release.simultaneous_group_intervals`, coverage ≥ ``confidence``
        together) bound the mean by its smallest and largest value over them
        (:func:`deniable.estimators.release.mean_range`): conservative, never below ``confidence``."""
        from deniable.estimators.release import group_shares, mean_range

        mech = q.mechanism.rr
        values = self.values_of(q, np.arange(self.n_cells(q)))
        estimate, low, high = group_shares(counts, noisy, mech.p, mech.q, beta, confidence, together=True)
        ci_low, ci_high = mean_range(values, low, high)
        return [{"label": "mean", "estimate": None if estimate is None else float(estimate @ values),
                 "ci_low": ci_low, "ci_high": ci_high, "lower": float(q.minimum), "upper": float(q.maximum)}]

    def release_labels(self, q):
        from ..definition import MAX_OPTIONS
        from .base import NotAvailable

        if q.protected:
            raise NotAvailable("a protected number is published through its estimates (no cost), not as counts")
        if q.steps + 1 > MAX_OPTIONS:
            raise NotAvailable(f"it has {q.steps + 1} possible answers; a released histogram, most common answer "
                               f"or grouping is offered for at most {MAX_OPTIONS}")
        return [self.text_of(q, j) for j in range(q.steps + 1)]

    def summary(self, q, record):
        """The mean (in the question's units, kept inside [min, max]) and, on the grid, the median."""
        low, high = float(q.minimum), float(q.maximum)
        if not record:
            return []
        mean = record["mean"]
        out = [{"label": "mean", "headline": mean["headline"], "ci_low": mean["ci_low"], "ci_high": mean["ci_high"],
                "lower": low, "upper": high}]
        if "median" in record:
            median = record["median"]
            out.append({"label": "median", "headline": headline(median, lower=low, upper=high),
                        "ci_low": median["ci_low"], "ci_high": median["ci_high"], "lower": low, "upper": high})
        return out

    # ------------------------------------------------------------ the survey page

    def page_data(self, q):
        """Minimum and step as whole numbers of ``10^−scale`` units, so that ``types.js`` turns a typed
        answer like ``12.5`` into its answer index with integer (BigInt) arithmetic, never a float."""
        mech = q.mechanism
        scale = max(_places(q.minimum), _places(q.step))
        unit = Decimal(10) ** scale
        attrs = {"data-type": self.name, "data-m": q.steps, "data-scale": scale, "data-rule": number_rule(q),
                 "data-min-units": int(q.minimum * unit), "data-step-units": int(q.step * unit),
                 "data-mechanism": "laplace" if is_laplace(q) else ("grid" if q.protected else "direct")}
        if is_laplace(q):
            attrs.update({"data-threshold": mech.threshold, "data-tail": mech.tail})
        else:
            attrs.update({"data-grid": grid_of(q), "data-threshold": mech.threshold if q.protected else TWO_32})
        return {"attrs": attrs, "min": decimal_text(q.minimum), "max": decimal_text(q.maximum),
                "step": decimal_text(q.step)}

    card = "cards/numeric.html"
    script = "types/numeric.js"

    def coin(self, q, *, gettext, locale):
        """The discrete Laplace mechanism keeps the number with probability (1 − t)/(1 + t) and moves it
        d steps with probability ∝ t^|d| (t = e^(−ε/Δ), Ghosh, Roughgarden & Sundararajan 2012); the grid
        mechanism rounds at random to the two nearest grid values (unbiased), then applies (G+1)-ary
        randomized response to the grid index."""
        from ..explain import percent, times

        _ = gettext
        mech = q.mechanism

        def pct(x, up=True):
            return percent(x, locale, up=up, gettext=_)

        if is_laplace(q):
            t = mech.t
            return _("Your device adds random noise to your number before sending it: %(same)s of the time it sends "
                     "your number itself, otherwise a number further away, each step further %(factor)s times less "
                     "likely, in either direction.") % {"same": pct((1 - t) / (1 + t)), "factor": times(1 / t, locale)}
        g = grid_of(q)
        points = grid_points(q)
        if g == 1:
            return _("Your device first rounds your number at random to %(low)s or %(high)s (the nearer one is the "
                     "likelier), then sends that %(kept)s of the time and otherwise the other one."
                     ) % {"low": points[0], "high": points[1], "kept": pct(mech.rr.p)}
        shown = ", ".join(points[:6]) + (", …" if len(points) > 6 else "")
        return _("Your device first rounds your number at random to one of the two nearest of the values "
                 "%(values)s, then sends that value %(kept)s of the time and otherwise one of the other "
                 "%(others)s values (%(each)s each).") % {"values": shown, "kept": pct(mech.rr.p), "others": g,
                                                         "each": pct(mech.rr.q, up=False)}

    def explanation(self, q, *, gettext, locale):
        """The bounds and the coin (:meth:`Presentation.explanation`), and ``sent``: the thank-you page's one
        sentence on why the number sent is not the one typed (a grid value, or a noisy number)."""
        info = super().explanation(q, gettext=gettext, locale=locale)
        if not q.protected:
            return info
        _ = gettext
        if is_laplace(q):
            sent = _("randomized on your device: your number with random noise added, so it may differ from "
                     "the number you typed")
        else:
            points = grid_points(q)
            shown = ", ".join(points[:6]) + (", …" if len(points) > 6 else "")
            sent = _("randomized on your device: your number was first rounded at random to one of %(values)s, "
                     "then that value was sent or replaced by another of them, so it may differ from the number "
                     "you typed") % {"values": shown}
        return {**info, "sent": sent}

    def api_design(self, q):
        """``type``, ``min``, ``max``, ``step``, ``steps`` (m) and ``mechanism``: ``direct``, or ``grid`` with
        ``grid``, ``threshold``, ``p``, ``q`` (grid randomized response), or ``laplace`` with ``threshold``,
        ``tail`` and ``t`` (discrete Laplace: reports are steps from min in ``−tail..m + tail``)."""
        item = {"type": self.name, "min": number(q.minimum), "max": number(q.maximum), "step": number(q.step),
                "steps": q.steps}
        if not q.protected:
            item["mechanism"] = "direct"
            return item
        mech = q.mechanism
        item.update(epsilon=q.epsilon, mechanism=q.method, threshold=mech.threshold, realized_epsilon=mech.epsilon)
        if is_laplace(q):
            item.update(tail=mech.tail, t=mech.t)
        else:
            item.update(grid=q.grid, p=mech.rr.p, q=mech.rr.q)
        return item

    # ------------------------------------------------------------ simulation

    def truth(self, q, value, where):
        from ..simulate import TruthError, probabilities, sums_to_one

        if not isinstance(value, dict) or set(value) != {"values", "probabilities"}:
            raise TruthError(f'{where}: must be {{"values": [...], "probabilities": [...]}}')
        answers = value["values"]
        if not isinstance(answers, list) or not answers:
            raise TruthError(f"{where}: values must be a non-empty list of answers")
        probs = probabilities(value["probabilities"], where, len(answers), "one per value")
        sums_to_one(value["probabilities"], where)
        indices = []
        for answer in answers:
            index = answer_index(q, answer)
            if index is None:
                raise TruthError(f"{where}: value {answer!r} is not an answer of the question "
                                 f"({rule_words(q)})")
            indices.append(index)
        return {"indices": np.asarray(indices, dtype=np.int64), "probabilities": probs}

    def simulate(self, q, truth, n, rng):
        from deniable.client.numeric import randomize_grid, randomize_laplace

        p = truth["probabilities"] / truth["probabilities"].sum()
        true = truth["indices"][rng.choice(truth["indices"].size, size=n, p=p)]
        mech = q.mechanism
        if is_laplace(q):
            return randomize_laplace(true, mech, rng) - mech.low
        return randomize_grid(true, mech, rng)

    # ------------------------------------------------------------ audit and the codebook

    def audit_samplers(self):
        return (GRID_AUDIT, LAPLACE_AUDIT)

    def audit_sampler(self, q):
        if not q.protected:
            return None
        return LAPLACE_AUDIT if is_laplace(q) else GRID_AUDIT

    def design_fields(self, q):
        fields = {"type": self.name, "mechanism": q.method, "grid": q.grid}
        return {key: value for key, value in fields.items() if value}

    # ------------------------------------------------------------ builder and wording

    def wording_labels(self, q):
        return {"text": ("question text", "text")}

    slot_fields = ("minimum", "maximum", "step", "mechanism", "grid")
    # the builder's mechanism choice ("auto": the planner's, :func:`deniable.estimators.plan_numeric`)
    mechanism_choices = {"auto": "the planner's choice", "grid": "grid randomized response",
                         "laplace": "discrete Laplace"}

    def builder_dict(self, raw, where, protected):
        from .base import typed_number

        data = {"type": self.name,
                "min": typed_number(raw.get("minimum"), (*where, "min"), "the smallest possible answer, such as 0"),
                "max": typed_number(raw.get("maximum"), (*where, "max"), "the largest possible answer, such as 40")}
        if (raw.get("step") or "").strip():
            data["step"] = typed_number(raw["step"], (*where, "step"), "the step between answers, such as 1")
        method = raw.get("mechanism") or "auto"
        if protected and method != "auto":
            data["mechanism"] = method
            grid = (raw.get("grid") or "").strip()
            if method == MECHANISMS[0] and grid:
                if not grid.isdigit() or len(grid) > 6:
                    raise DefinitionError((*where, "grid"), f"enter a whole number such as 1, not {grid[:20]!r} "
                                          "(G must divide the number of steps from min to max)")
                data["grid"] = int(grid)
        return data

    def builder_entry(self, q):
        """"auto" (the planner's choice) when the stored mechanism is the one the planner picks."""
        from deniable.estimators.numeric import plan_numeric

        method, grid = "auto", ""
        if q.protected:
            best = plan_numeric(q.steps, q.epsilon, 1000)[0]
            if (best.mechanism, best.grid if best.mechanism == "grid" else None) != (q.method, q.grid):
                method, grid = q.method, str(q.grid) if q.method == "grid" else ""
        return {"minimum": decimal_text(q.minimum), "maximum": decimal_text(q.maximum), "step": decimal_text(q.step),
                "mechanism": method, "grid": grid}

    # ------------------------------------------------------------ planning

    plan_template = "dashboard/plan/numeric.html"
    plan_needs = "min max"
    plan_missing = "Enter the smallest and the largest possible answer to see how precise the mean will be."
    plan_option = "--numeric"

    def plan(self, q, target_n, margin, confidence=0.95):
        from ..type_planning import numeric_plan

        return {**numeric_plan(q, target_n, margin, confidence), "type": self.name, "template": self.plan_template}

    def plan_query(self, args, number):
        from .base import typed_number

        data = {"type": self.name}
        for key in ("min", "max", "step"):
            if args.get(key, "") != "" or key != "step":
                data[key] = typed_number(args.get(key, "")[:40], (key,), f"{key}, such as 1")
        if args.get("epsilon", "") != "" and args.get("mechanism", "auto") != "auto":
            data["mechanism"] = args["mechanism"][:20]
            if data["mechanism"] == MECHANISMS[0] and args.get("grid", "") != "":
                data["grid"] = number("grid", int, 1, 10**6)
        return data

    def plan_cli(self, value, step, margin, epsilons, confidence):
        """``deniable plan --numeric MIN MAX [--step S]``: a :class:`..type_planning.NumericPlan`."""
        from .. import type_planning as tp
        from ..definition import parse_question

        minimum, maximum = value
        data = {"id": "planned", "text": "planned", "type": self.name, "min": minimum, "max": maximum}
        if step is not None:
            data["step"] = step
        try:
            question = parse_question(data)
        except DefinitionError as exc:
            option = "--step" if exc.path[-1] == "step" and step is not None else self.plan_option
            raise tp.PlanInputError(option, exc.problem if option == "--step" else f"{exc.field}: {exc.problem}") from None
        rows = tp.numeric_plan_rows(question, margin, epsilons, confidence)
        return tp.NumericPlan(type=self.name, question=question, margin=margin, confidence=confidence, rows=rows)


def _places(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent if value != 0 else 0
    return max(0, -exponent)


def number_rule(q: Question) -> str:
    """Which rule a typed answer follows, so that an error names it: ``"whole"`` (step 1 from a whole
    minimum), ``"multiple"`` (the minimum is a multiple of the step: every answer is one), or
    ``"steps"`` (a number from min in steps of step).  The survey page's card carries it as
    ``data-rule``; ``types/numeric.js`` picks the form's message of the same rule.

    >>> from decimal import Decimal as D
    >>> [number_rule(Question("x", "?", (), minimum=D(a), maximum=D(30), step=D(s)))
    ...  for a, s in (("0", "1"), ("0", "0.5"), ("10", "5"), ("0.25", "0.5"), ("0.5", "1"))]
    ['whole', 'multiple', 'multiple', 'steps', 'steps']
    """
    if q.step == 1 and q.minimum == q.minimum.to_integral_value():
        return "whole"
    ratio = q.minimum / q.step
    return "multiple" if ratio == ratio.to_integral_value() else "steps"


def rule_words(q: Question) -> str:
    """The rule of :func:`number_rule` in words: ``'a whole number from 0 to 30'``."""
    low, high, step = decimal_text(q.minimum), decimal_text(q.maximum), decimal_text(q.step)
    return {"whole": f"a whole number from {low} to {high}",
            "multiple": f"a multiple of {step} from {low} to {high}",
            "steps": f"a number from {low} to {high} in steps of {step}"}[number_rule(q)]


def answer_index(q: Question, answer) -> int | None:
    """The answer index of a number of ``q`` (None when it is not one of its answers)."""
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return None
    try:
        steps = (Decimal(repr(answer)) - q.minimum) / q.step
    except InvalidOperation:
        return None
    if steps != steps.to_integral_value() or not 0 <= steps <= q.steps:
        return None
    return int(steps)



class GridAudit(AuditSampler):
    """Grid randomized response: the two ends (where the ratio is tight) and the middle (rounded at
    random between two grid points); the events are the two end reports and everything between."""

    name = "grid"
    js = """async ([value, m, grid, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(grid + 1).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomizeGrid(value, m, grid, threshold)] += 1;
  return counts;
}"""

    def label(self, mech):
        return f"m={mech.m} G={mech.grid}"

    def inputs(self, mech):
        return sorted({0, mech.m // 2, mech.m})

    def js_args(self, mech, value):
        return [value, mech.m, mech.grid, mech.threshold]

    def python_row(self, mech, value, samples, rng):
        from deniable.client.numeric import randomize_grid

        return np.bincount(randomize_grid(np.full(samples, value), mech, rng), minlength=mech.grid + 1)

    def cells(self, mech, counts):
        from deniable.estimators import audit

        return audit.end_cells(counts)

    def defaults(self, ks, epsilons):
        """A question on 0..10 with G = 1 and G = 10."""
        return [grid_mechanism(10, g, eps) for eps in epsilons for g in (1, 10)]


class LaplaceAudit(AuditSampler):
    """Discrete Laplace: the ends 0 and m as inputs, the two tails beyond them as events."""

    name = "laplace"
    js = """async ([value, m, threshold, tail, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(m + 2 * tail + 1).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomizeLaplace(value, m, threshold, tail) + tail] += 1;
  return counts;
}"""

    def label(self, mech):
        return f"m={mech.m}"

    def inputs(self, mech):
        return [0, mech.m]

    def js_args(self, mech, value):
        return [value, mech.m, mech.threshold, mech.tail]

    def python_row(self, mech, value, samples, rng):
        from deniable.client.numeric import randomize_laplace

        return np.bincount(randomize_laplace(np.full(samples, value), mech, rng) - mech.low,
                           minlength=mech.high - mech.low + 1)

    def cells(self, mech, counts):
        from deniable.estimators import audit

        return audit.tail_cells(counts, mech.low, mech.m)

    def defaults(self, ks, epsilons):
        """A question on 0..10."""
        return [laplace(10, eps) for eps in epsilons]


GRID_AUDIT, LAPLACE_AUDIT = GridAudit(), LaplaceAudit()

NUMERIC = register(Numeric())
