"""The short privacy sentence beside every protected question (server/survey/explain.py): at most 25
words, and every number in it equal to an independent computation from what the browser is given
(the integer thresholds and weights of the survey page's ``data-`` attributes), rounded up to 0.1
point with exact fractions — for every type and design, k in {2, 3, 5} and several ε, in English,
Spanish and French.

The bounds computed here (each the largest posterior after a 50/50 prior between two answers,
``R / (1 + R)`` for the largest likelihood ratio ``R`` of one report between two answers):

- k-ary randomized response, keep probability ``p = threshold / 2^32``: the sentence says ``p`` twice
  (the posterior of the report from a uniform prior over the k answers is ``p``);
- check all that apply, each tick kept with ``p``: ``R = (p / (1 − p))^K`` (two answers that differ in
  every tick);
- a numeric grid: random rounding to the grid (to the upper point with probability ``r / d``), then
  (G + 1)-ary randomized response: ``R`` from the whole answer × report matrix;
- discrete Laplace with ``t = threshold / 2^32`` on ``0..m``: ``R = t^−m``;
- a list experiment's count through (J + 2)-ary randomized response: ``R = p / q``;
- a design: ``R`` = the largest ratio within one report's row of its integer weights (per tick, to the
  power K, for a check-all question).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest
from babel.support import Translations

from deniable.server.survey.definition import parse_question
from deniable.server.survey.explain import explain_question

TWO_32 = 2**32
CATALOGS = Path(__file__).resolve().parents[2] / "server" / "translations"
EPSILONS = [0.1, 0.5, 1.0, math.log(3), 2.0, 4.0, 8.0, 12.0]
KS = [2, 3, 5]
ENGLISH_WORDS = re.compile(r"\b(your|answer|sure|device|sent|guess|more than|at most|barely)\b")


def labels(k):
    return [f"Option {i}" for i in range(k)]


def cases():
    """``(id, definition of one protected question)`` for every type, design, k and ε."""
    out = []
    for k in KS:
        for eps in EPSILONS:
            e = f"k{k}-eps{eps:.3g}"
            out += [(f"choice-{e}", {"options": labels(k), "epsilon": eps}),
                    (f"multi-{e}", {"type": "multi", "options": labels(k), "epsilon": eps}),
                    (f"list-{e}", {"type": "list", "items": labels(k), "sensitive": "S", "epsilon": eps}),
                    (f"grid-{e}", {"type": "numeric", "min": 0, "max": 12, "epsilon": eps, "mechanism": "grid",
                                   "grid": k - 1}),
                    (f"laplace-{e}", {"type": "numeric", "min": 0, "max": 2 * k, "epsilon": eps,
                                      "mechanism": "laplace"})]
        for p in (0.25, 0.5, 0.875):  # dyadic shares, so that they add up to 1 exactly in floating point
            shares = [(1 - p) / 2 ** (j + 1) for j in range(k - 1)] + [(1 - p) / 2 ** (k - 1)]
            out.append((f"forced-k{k}-p{p}", {"options": labels(k), "design": {"name": "forced", "p": p,
                                                                              "forced": shares}}))
            off = (1 - p) / (k - 1)
            matrix = [[p if i == j else off for j in range(k)] for i in range(k)]
            if p != 1 / k:  # a matrix with equal rows is refused (singular)
                out.append((f"custom-k{k}-p{p}", {"options": labels(k), "design": {"name": "custom", "matrix": matrix}}))
            out.append((f"multi-forced-k{k}-p{p}", {"type": "multi", "options": labels(k),
                                                    "design": {"name": "forced", "p": p,
                                                               "forced": [(1 - p) * 0.75, (1 - p) * 0.25]}}))
    for design in ({"name": "warner", "p": 0.7}, {"name": "warner", "p": 0.95}, {"name": "crosswise", "prevalence": 0.25},
                   {"name": "unrelated", "p": 0.7, "prevalence": 0.3}, {"name": "kuk", "theta_1": 0.8, "theta_2": 0.3}):
        out.append((f"{design['name']}-{design.get('p', '')}", {"options": ["Yes", "No"], "design": design}))
    return out


CASES = cases()


def question(definition):
    return parse_question({"id": "q", "text": "Question?", **definition}, ("questions", 0))


def columns(attrs, k):
    """Per true answer T, the report weights of ``data-column-T`` (cumulative on the page)."""
    out = []
    for t in range(k):
        cumulative = [int(c) for c in attrs[f"data-column-{t}"].split()]
        out.append([b - a for a, b in zip([0, *cumulative], cumulative)])
    return out


def largest_ratio(matrix):
    """``max over reports r, answers a, b of P(r | a) / P(r | b)``; None when some P(r | b) is 0 and
    P(r | a) is not (not ε-LDP).  ``matrix[a][r]`` is P(r | a)."""
    best = Fraction(1)
    for r in range(len(matrix[0])):
        row = [Fraction(matrix[a][r]) for a in range(len(matrix))]
        if max(row) == 0:
            continue
        if min(row) == 0:
            return None
        best = max(best, max(row) / min(row))
    return best


def rr_matrix(k, threshold):
    p = Fraction(threshold, TWO_32)
    q = (1 - p) / (k - 1)
    return [[p if a == r else q for r in range(k)] for a in range(k)]


def expected_numbers(q):
    """The numbers the short sentence must say, as ``Fraction``s, from the page's integer parameters."""
    spec = q.qtype.page_data(q)
    if spec is None:  # k-ary randomized response: data-k, data-threshold on the survey page
        p = Fraction(q.mechanism.threshold, TWO_32)
        assert abs(q.mechanism.threshold - math.floor(math.exp(q.epsilon) / (math.exp(q.epsilon) + q.k - 1)
                                                      * TWO_32)) <= 1
        return [p, p] if p <= Fraction(999, 1000) else [p]
    attrs = spec["attrs"]
    kind = attrs["data-type"]
    if "data-column-0" in attrs:  # a design: its integer weights, one column per true answer
        ticks = kind == "multi"
        matrix = columns(attrs, 2 if ticks else q.k)
        ratio = largest_ratio(matrix)
        if ratio is None:
            return None
        if not ticks and q.k > 2:  # worded as a 1-in-k guess: Bayes from a uniform prior over the k answers
            sent = [[Fraction(matrix[a][r]) for a in range(q.k)] for r in range(len(matrix[0]))]
            return [max(max(row) / sum(row) for row in sent if sum(row))]
        ratio = ratio ** q.k if ticks else ratio
    elif kind == "multi":
        p = Fraction(attrs["data-threshold"], TWO_32)
        ratio = (p / (1 - p)) ** q.k
    elif kind == "list":
        ratio = largest_ratio(rr_matrix(attrs["data-items"] + 2, attrs["data-threshold"]))
    elif attrs.get("data-mechanism") == "laplace":
        t = Fraction(attrs["data-threshold"], TWO_32)
        ratio = 1 / t ** attrs["data-m"]
    else:  # the numeric grid: random rounding, then (G + 1)-ary randomized response
        m, g = attrs["data-m"], attrs["data-grid"]
        d = m // g
        rr = rr_matrix(g + 1, attrs["data-threshold"])
        matrix = []
        for i in range(m + 1):
            j, r = divmod(i, d)
            up = Fraction(r, d)
            matrix.append([(1 - up) * rr[j][c] + (up * rr[j + 1][c] if up else 0) for c in range(g + 1)])
        ratio = largest_ratio(matrix)
    return [ratio / (1 + ratio)]


def said(x: Fraction, decimal=".") -> str:
    """A probability as the sentence must say it: rounded up to 0.1 point; above 99.9% "more than 99.9%"."""
    if x > Fraction(999, 1000):
        return f"more than 99{decimal}9%"
    tenths = math.ceil(x * 1000)
    return f"{tenths // 10}%" if tenths % 10 == 0 else f"{tenths // 10}{decimal}{tenths % 10}%"


def words(sentence: str) -> list[str]:
    """The words of a sentence: split at spaces, a number and its % sign (joined by a no-break space) one
    word, punctuation on its own (French " : ") none."""
    return [w for w in sentence.split(" ") if re.search(r"\w", w)]


@pytest.mark.parametrize("definition", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_each_short_sentence_is_short_and_says_the_realized_numbers_rounded_up(definition):
    q = question(definition)
    info = explain_question(q)
    numbers = expected_numbers(q)
    if numbers is None:  # a design with a zero cell is not ε-LDP: labelled "not protected by ε", no sentence
        assert info["protected"] is False and "short" not in info
        return
    short = info["short"]
    assert len(words(short)) <= 25, short
    assert re.findall(r"(?:more than )?\d+(?:\.\d)?%", short) == [said(x) for x in numbers], short
    if "1-in-" in short:
        assert re.search(r"1-in-(\d+)", short).group(1) == str(q.k)
    if numbers[-1] > Fraction(999, 1000):
        assert "barely protected" in short
    # the longer sentences are there too, for the disclosure under it
    assert info["coin"] and info["posterior"] and info["odds"]


@pytest.mark.parametrize("lang", ["es", "fr"])
@pytest.mark.parametrize("definition", [c[1] for c in CASES[::3]], ids=[c[0] for c in CASES[::3]])
def test_the_short_sentence_in_spanish_and_french(lang, definition):
    q = question(definition)
    english = explain_question(q)
    if "short" not in english:
        return
    gettext = Translations.load(str(CATALOGS), [lang]).gettext
    short = explain_question(q, gettext=gettext, locale=lang)["short"]
    assert not ENGLISH_WORDS.search(short) and "%(" not in short, short
    assert len(words(short)) <= 25, short
    numbers = re.findall(r"\d+(?:,\d)?\u00a0%", short)
    assert [n.replace(",", ".").replace("\u00a0", "") for n in numbers] == \
        re.findall(r"\d+(?:\.\d)?%", english["short"]), short


def test_the_rounding_is_up_never_to_100_percent():
    assert said(Fraction(3, 4)) == "75%" and said(Fraction(8801, 10000)) == "88.1%"
    assert said(Fraction(99901, 100000)) == "more than 99.9%"
    # ε = ln 3, k = 2: p = 3/4 exactly (threshold 3 · 2^30)
    assert explain_question(question({"options": ["Yes", "No"], "epsilon": math.log(3)}))["short"] == (
        "Your true answer is sent only 75% of the time, so a 50/50 guess about it becomes at most 75% sure.")
