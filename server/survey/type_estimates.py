"""Estimates of numeric, check-all-that-apply and list-experiment questions, for people and files.

The counterpart of :mod:`.estimates` (which dispatches here) for the types other than choice:
sufficient statistics (:mod:`.cells`) → the estimators → one JSON record per question
(docs/design.md, "Formats"), terminal tables and CSV rows.  A numeric question's estimates are
turned from answer indices into the question's units here: ``min + step · index``.
"""

from __future__ import annotations

import math

import numpy as np

from typing import TYPE_CHECKING

from . import cells
from .definition import Question, number

if TYPE_CHECKING:  # the estimators (scipy) are imported when a survey has a question of these types
    from deniable.estimators.listexp import ListResult
    from deniable.estimators.multi import MultiResult
    from deniable.estimators.numeric import MeanResult, NumericResult


def json_number(value):
    """A JSON-safe number: a Python float or int, or None when not finite (or None)."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None


def estimate_question(q: Question, stats, *, method: str, confidence: float, simultaneous: bool):
    """The estimator's result for a question that is not a choice."""
    from deniable.estimators.listexp import estimate_list
    from deniable.estimators.multi import estimate_multi
    from deniable.estimators.numeric import estimate_grid, estimate_laplace

    what = cells.kind(q)
    if what == "grid":
        return estimate_grid(stats["counts"], q.steps, cells.grid_of(q), q.epsilon, confidence=confidence,
                             method=method)
    if what == "laplace":
        return estimate_laplace(stats["values"], stats["counts"], q.steps, q.epsilon, confidence=confidence)
    if what == "multi":
        return estimate_multi(stats["n"], stats["ticks"], stats["pairs"], stats["ticked"], q.epsilon,
                              confidence=confidence, method=method, simultaneous=simultaneous)
    return estimate_list(stats["control"], stats["treatment"], len(q.options), q.epsilon, confidence=confidence)


def _value(q: Question, index) -> float | None:
    """A numeric question's value for an answer index (NaN stays None)."""
    index = json_number(index)
    return None if index is None else float(q.minimum) + float(q.step) * index


def _mean_json(mean: MeanResult, scale: float = 1.0, offset: float = 0.0) -> dict:
    def units(x):
        x = json_number(x)
        return None if x is None else offset + scale * x

    return {"n": mean.n, "estimate": units(mean.estimate), "std_error": json_number(mean.std_error * scale),
            "ci_low": units(mean.ci_low), "ci_high": units(mean.ci_high), "method": mean.method,
            "confidence": mean.confidence, "clt_half_width": json_number(mean.clt_half_width * scale),
            "width_ratio": json_number(mean.width_ratio)}


def numeric_json(q: Question, r: NumericResult) -> dict:
    step, low = float(q.step), float(q.minimum)
    data = {"id": q.id, "text": q.text, "type": "numeric", "n": r.n, "mechanism": r.mechanism, "grid": r.grid,
            "min": number(q.minimum), "max": number(q.maximum), "step": number(q.step),
            "epsilon": json_number(r.epsilon) if q.protected else None,
            "declared_epsilon": q.epsilon, "confidence": r.confidence, "note": r.note or None,
            "mean": _mean_json(r.mean, step, low)}
    if r.distribution is not None:
        d = r.distribution
        data["p"], data["q"], data["method"] = d.p, d.q, d.method
        data["distribution"] = [
            {"value": _value(q, int(r.support[j])), "noisy_count": int(d.noisy_counts[j]),
             "estimate": json_number(d.estimate[j]), "consistent": json_number(d.consistent[j]),
             "std_error": json_number(d.std_error[j]), "ci_low": json_number(d.ci_low[j]), "ci_high": json_number(d.ci_high[j]),
             "cdf": json_number(r.cdf[j]), "cdf_low": json_number(r.cdf_low[j]), "cdf_high": json_number(r.cdf_high[j])}
            for j in range(len(r.support))]
        data["median"] = {"estimate": _value(q, r.median), "ci_low": _value(q, r.median_low),
                          "ci_high": _value(q, r.median_high), "method": "grid CDF test inversion (Clopper–Pearson)"}
    if r.histogram is not None:
        data["histogram"] = [{"value": _value(q, i), "estimate": json_number(v)} for i, v in enumerate(r.histogram)]
        data["histogram_iterations"] = r.histogram_iterations
        data["histogram_converged"] = r.histogram_converged
    return data


def multi_json(q: Question, r: MultiResult) -> dict:
    options = [{"label": label, "noisy_count": int(r.noisy_counts[j]), "estimate": json_number(r.estimate[j]),
                "consistent": json_number(r.consistent[j]), "std_error": json_number(r.std_error[j]),
                "ci_low": json_number(r.ci_low[j]), "ci_high": json_number(r.ci_high[j])}
               for j, label in enumerate(q.options)]
    pairs = []
    for (j, l), ct in r.pairs.items():
        pairs.append({"labels": [q.options[j], q.options[l]], "noisy_count": int(r.pair_counts[j, l]),
                      "estimate": json_number(ct.joint_estimate[0, 0]), "consistent": json_number(ct.joint_consistent[0, 0]),
                      "std_error": json_number(ct.joint_std_error[0, 0]), "ci_low": json_number(ct.joint_ci_low[0, 0]),
                      "ci_high": json_number(ct.joint_ci_high[0, 0]),
                      "conditional_estimate": json_number(ct.conditional_estimate[0, 0]),
                      "conditional_ci_low": json_number(ct.conditional_ci_low[0, 0]),
                      "conditional_ci_high": json_number(ct.conditional_ci_high[0, 0])})
    return {"id": q.id, "text": q.text, "type": "multi", "n": r.n,
            "epsilon": json_number(r.epsilon) if q.protected else None, "declared_epsilon": q.epsilon,
            "bit_epsilon": json_number(r.epsilon / r.k) if q.protected else None, "p": r.p, "q": r.q,
            "method": r.method, "confidence": r.confidence, "simultaneous": r.simultaneous, "note": r.note or None,
            "options": options, "ticked": _mean_json(r.ticked), "pairs": pairs}


def list_json(q: Question, r: ListResult) -> dict:
    return {"id": q.id, "text": q.text, "type": "list", "items": list(q.options), "sensitive": q.sensitive,
            "protected": q.protected, "epsilon": json_number(r.epsilon), "declared_epsilon": q.epsilon,
            "method": "difference in means", "confidence": r.confidence,
            "n": r.n_control + r.n_treatment, "n_control": r.n_control, "n_treatment": r.n_treatment,
            "estimate": json_number(r.estimate), "std_error": json_number(r.std_error), "ci_low": json_number(r.ci_low),
            "ci_high": json_number(r.ci_high), "df": json_number(r.df), "note": r.note or None,
            "control": _mean_json(r.control), "treatment": _mean_json(r.treatment),
            "noisy_control": [int(c) for c in r.noisy_control], "noisy_treatment": [int(c) for c in r.noisy_treatment]}


def question_json(q: Question, result) -> dict:
    """The estimates record of a question that is not a choice."""
    if q.type == "numeric":
        return numeric_json(q, result)
    if q.type == "multi":
        return multi_json(q, result)
    return list_json(q, result)


def n_of(result) -> int:
    if hasattr(result, "n_control"):  # a list experiment's two arms
        return result.n_control + result.n_treatment
    return int(result.n)


# ---------------------------------------------------------------- CSV rows and terminal tables


def csv_rows(q: Question, result, columns: tuple[str, ...]):
    """Rows of the estimates CSV (:data:`.estimates.CSV_COLUMNS`) for a question that is not a choice:
    ``option`` names what a row is (``mean``, ``median``, a grid index, ``ticked``, ``pair:j:l``, …)."""
    data = question_json(q, result)
    base = {"question": q.id, "n": data["n"], "epsilon": data.get("epsilon"),
            "declared_epsilon": data.get("declared_epsilon"), "p": data.get("p"), "q": data.get("q"),
            "confidence": data.get("confidence"), "simultaneous": data.get("simultaneous", False)}

    def row(option, label, record, method=None):
        out = {**base, "option": option, "label": label, "method": method or data.get("method"),
               **{k: record.get(k) for k in ("noisy_count", "estimate", "consistent", "std_error", "ci_low", "ci_high")}}
        return ["" if out.get(c) is None else out[c] for c in columns]

    if data["type"] == "numeric":
        yield row("mean", "mean", data["mean"], data["mean"]["method"])
        for j, point in enumerate(data.get("distribution", [])):
            yield row(j, cells.decimal_text(q.value(int(result.support[j]))), point)
        if "median" in data:
            yield row("median", "median", data["median"], data["median"]["method"])
        for i, bar in enumerate(data.get("histogram", [])):
            yield row(f"histogram:{i}", cells.decimal_text(q.value(i)), bar, "deconvolution (EM)")
    elif data["type"] == "multi":
        for j, option in enumerate(data["options"]):
            yield row(j, option["label"], option)
        yield row("ticked", "number ticked", data["ticked"], data["ticked"]["method"])
        for (j, l), pair in zip(result.pairs, data["pairs"]):
            yield row(f"pair:{j}:{l}", " & ".join(pair["labels"]), pair, "exact (cross-tab)")
    else:
        yield row("prevalence", q.sensitive, data)
        yield row("control", "control mean count", data["control"], data["control"]["method"])
        yield row("treatment", "treatment mean count", data["treatment"], data["treatment"]["method"])


def _fmt(x, digits: int = 3) -> str:
    x = json_number(x)
    return "—" if x is None else f"{x:,.{digits}f}"


def _pct(x) -> str:
    x = json_number(x)
    return "—" if x is None else f"{100 * x:.1f}%"


def table(q: Question, result, grid) -> str:
    """A terminal block for a question that is not a choice (``grid`` aligns columns)."""
    data = question_json(q, result)
    level = f"{100 * data['confidence']:g}%"
    eps = (f"ε = {data['epsilon']:.4f} (declared {q.epsilon:g})" if q.protected else
           ("not protected by ε (plain list experiment)" if q.type == "list" else "asked directly (not randomized)"))
    lines = [f"{q.id}: {q.text}"]
    if data["type"] == "numeric":
        mechanism = {"grid": f"grid randomized response, G = {data['grid']}", "laplace": "discrete Laplace",
                     "direct": "asked directly"}[data["mechanism"]]
        m = data["mean"]
        lines += [f"  n = {data['n']:,} · {eps} · {mechanism}",
                  f"  mean {_fmt(m['estimate'])} ± std.err {_fmt(m['std_error'])}, {level} interval "
                  f"[{_fmt(m['ci_low'])}, {_fmt(m['ci_high'])}] ({m['method']}; {_fmt(m['width_ratio'], 2)}× the "
                  f"known-variance interval's width)"]
        if "median" in data:
            md = data["median"]
            lines.append(f"  median {_fmt(md['estimate'], 2)}, {level} interval [{_fmt(md['ci_low'], 2)}, "
                         f"{_fmt(md['ci_high'], 2)}]")
            rows = [[cells.decimal_text(q.value(int(result.support[j]))), f"{p['noisy_count']:,}", _pct(p["estimate"]),
                     _pct(p["consistent"]), f"[{_pct(p['ci_low'])}, {_pct(p['ci_high'])}]", _pct(p["cdf"]),
                     f"[{_pct(p['cdf_low'])}, {_pct(p['cdf_high'])}]"] for j, p in enumerate(data["distribution"])]
            lines += grid(["grid point", "reported", "estimate", "consistent", "interval", "CDF", "CDF interval"], rows)
        if "histogram" in data:
            shown = [f"{cells.decimal_text(q.value(i))}: {_pct(b['estimate'])}" for i, b in enumerate(data["histogram"])
                     if (b["estimate"] or 0) >= 0.005]
            converged = "converged" if data["histogram_converged"] else "stopped"
            lines.append(f"  deconvolved histogram ({data['histogram_iterations']} EM steps, {converged}; ≥ 0.5% "
                         f"shown): " + ", ".join(shown))
    elif data["type"] == "multi":
        lines += [f"  n = {data['n']:,} · {eps}, each option's tick at ε/{q.k} · {level} "
                  f"{'simultaneous ' if data['simultaneous'] else ''}intervals, method: {data['method']}"]
        rows = [[o["label"], f"{o['noisy_count']:,}", _pct(o["estimate"]), _pct(o["consistent"]),
                 _pct(o["std_error"]), f"[{_pct(o['ci_low'])}, {_pct(o['ci_high'])}]"] for o in data["options"]]
        lines += grid(["option", "reported", "estimate", "consistent", "std.err", "interval"], rows)
        t = data["ticked"]
        lines.append(f"  options ticked: mean {_fmt(t['estimate'], 2)}, {level} interval "
                     f"[{_fmt(t['ci_low'], 2)}, {_fmt(t['ci_high'], 2)}]")
        rows = [[" & ".join(p["labels"]), _pct(p["estimate"]), f"[{_pct(p['ci_low'])}, {_pct(p['ci_high'])}]",
                 _pct(p["conditional_estimate"])] for p in data["pairs"]]
        if rows:
            lines += grid(["both ticked", "estimate", "interval", "2nd | 1st"], rows)
    else:
        lines += [f"  n = {data['n']:,} ({data['n_control']:,} control, {data['n_treatment']:,} treatment) · {eps}",
                  f"  {q.sensitive!r}: {_pct(data['estimate'])} ± {_pct(data['std_error'])}, {level} interval "
                  f"[{_pct(data['ci_low'])}, {_pct(data['ci_high'])}] (difference in means, Welch t)",
                  f"  mean count: control {_fmt(data['control']['estimate'], 3)}, "
                  f"treatment {_fmt(data['treatment']['estimate'], 3)}"]
    if data.get("note"):
        lines.append(f"  note: {data['note']}")
    return "\n".join(lines)
