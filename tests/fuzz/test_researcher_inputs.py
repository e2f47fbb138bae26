"""Hostile researcher input, property-based (hypothesis): regression formulas, raking margins,
sampling weights and imported definitions, through the real Flask test client (logged in, CSRF on)
and the real ``deniable`` command line.

For every input: never a 500 (the app propagates an exception into the test) and never a
traceback; a refused input is a 400 page (a 422 for the dashboard's import, as everywhere there)
whose message names the field — the formula's part, ``margins.QUESTION.OPTION``, ``rake``,
``trim``, the weights' column, the definition's path — or one ``Error: …`` line naming it and a
non-zero exit; and a refused input stores nothing (every table as it was).  Each example
listed in the issue ("Nothing lost", item 7) is an ``@example``: a formula of 470 unary minus
signs (RecursionError) or with a 400-digit number (OverflowError), a raking share of 1e-320 (a 500
on the weighting page, then on results and subgroups) or of 4,000 digits (a 500 on results,
cross-tab, subgroups and regression), weights of 1e308 (TypeError in ``deniable estimate``), and
a definition holding a lone surrogate ``"\\ud800"`` (UnicodeEncodeError in ``deniable import``).

Run with more examples: ``DENIABLE_FUZZ_PROFILE=fuzz-thorough .venv/bin/python -m pytest
tests/fuzz/test_researcher_inputs.py``.
"""

from __future__ import annotations

import copy
import csv
import functools
import html
import io
import json
import re
import sqlite3
from urllib.parse import urlencode

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from deniable.server.cli import cli
from deniable.server.store.accounts import set_researcher
from deniable.server.store.db import connect, init_db
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition
from deniable.server.web.app import create_app
from support.fuzz import FUZZ, json_values, near_valid_definition, table_snapshot

pytestmark = pytest.mark.slow  # with the other fuzz tests: the full suite runs them, the fast lane does not

EMAIL, PASSWORD = "ada@example.org", "correct horse battery"
# The names: outcome y (protected), covariate x (asked directly); age and x may weight.
LAB = {"slug": "lab", "title": "Lab", "questions": [
    {"id": "y", "text": "Used cannabis this year?", "options": ["Yes", "No"], "epsilon": 1},
    {"id": "x", "text": "Year of study", "options": ["1", "2", "3"]},
    {"id": "age", "text": "Age group", "options": ["<30", "30+"]},
    {"id": "cheat", "text": "Cheated?", "options": ["Never", "Once", "Often"], "epsilon": 2},
]}
QIDS = [q["id"] for q in LAB["questions"]]
RAKEABLE = [q for q in LAB["questions"] if "epsilon" not in q]  # the weighting form's share_<qi>_<j>, in order
CSRF_RE = re.compile(r'name="csrf_token" type="hidden" value="([^"]+)"')
ALERT_RE = re.compile(r'class="errors" role="alert">\s*(.*?)</p>|class="error-message">\s*(.*?)</', re.S)

MINUSES = "y ~ " + "-" * 470 + "x"  # the formula: RecursionError
DIGITS_400 = "9" * 400  # a 400-digit literal: OverflowError
SHARE_4000 = int("1" + "0" * 3999)  # a 4,000-digit share
SURROGATE_TITLE = ('{"slug": "sur", "title": "T\\ud800", "questions": '  # the JSON escape, as a file holds it
                   '[{"id": "q", "text": "Q?", "options": ["a", "b"], "epsilon": 1}]}')


class Lab:
    """An app on a fresh database holding LAB (open, 300 reports), the same survey as ``few`` (5 reports),
    and their researcher, logged in."""

    def __init__(self, tmp_path):
        self.db_path = str(tmp_path / "lab.db")
        self.folder = tmp_path
        self.app = create_app({"TESTING": True, "DATABASE": self.db_path, "SECRET_KEY": "lab-secret",
                               "WTF_CSRF_ENABLED": True, "RATELIMIT_ENABLED": False})
        db = connect(self.db_path)
        try:
            owner = set_researcher(db, EMAIL, PASSWORD)
            stored = insert_survey(db, parse_definition(LAB), status="open", owner_id=owner)
            rng = np.random.default_rng(5)
            insert_many(db, stored, {"y": rng.integers(0, 2, 300), "x": rng.integers(0, 3, 300),
                                     "age": rng.integers(0, 2, 300), "cheat": rng.integers(0, 3, 300)})
            # a few respondents: weights far from 1, categories of one respondent
            few = insert_survey(db, parse_definition({**LAB, "slug": "few"}), status="open", owner_id=owner)
            insert_many(db, few, {"y": np.array([0, 1, 1, 0, 1]), "x": np.array([0, 1, 2, 2, 2]),
                                  "age": np.array([0, 1, 1, 1, 1]), "cheat": np.array([0, 0, 1, 2, 2])})
        finally:
            db.conn.close()
        (tmp_path / "lab.json").write_text(json.dumps(LAB))
        self.client = self.app.test_client()
        token = self.token("/auth/login")
        assert self.client.post("/auth/login", data={"csrf_token": token, "email": EMAIL,
                                                     "password": PASSWORD}).status_code == 302

    def token(self, url: str = "/dashboard/") -> str:
        return CSRF_RE.search(self.client.get(url).get_data(as_text=True)).group(1)

    def snapshot(self) -> dict:
        conn = sqlite3.connect(self.db_path)
        try:
            return table_snapshot(conn)
        finally:
            conn.close()


def page_check(response, before: dict, lab: Lab, field: re.Pattern) -> str | None:
    """No 500 and no traceback; a 400 says why, naming the field; nothing stored.  The message, if any."""
    assert response.status_code in (200, 400), response.status_code
    text = html.unescape(response.get_data(as_text=True))
    assert "Traceback" not in text
    assert lab.snapshot() == before
    if response.status_code == 200:
        return None
    messages = [a or b for a, b in ALERT_RE.findall(text)]
    assert messages, text[:3000]
    assert any(field.search(m) for m in messages), messages
    return messages[0]


def cli_check(result, field: re.Pattern) -> None:
    """Exit 0, or 1 with one ``Error: …`` line naming the field; never a traceback."""
    assert "Traceback" not in result.output and "Exception ignored" not in result.output
    if result.exit_code == 0:
        assert result.exception is None
        return
    assert isinstance(result.exception, SystemExit) and result.exit_code in (1, 2), (result.exception, result.output)
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and field.search(errors[0]), result.stderr


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


# ---------------------------------------------------------------- formulas

FORMULA_FIELD = re.compile(r"\bformula\b|\boutcome\b|\bcovariates?\b")
# what the data cannot support names the question (regress): "empty cell: no response has x = '2'"
DATA_PROBLEM = re.compile(r"'[xy]'|\b[xy] = ")
TOKENS = ["y", "x", "age", "cheat", "nope", "~", " ~ ", "+", ":", "-", "*", "/", "^", "(", ")", "I(", "num(",
          "1", "0.5", "1e308", "1e999", DIGITS_400, " "]
FORMULAS = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=14).map("".join),
    st.lists(st.sampled_from(TOKENS), max_size=14).map(lambda parts: "y ~ " + "".join(parts)),
    st.builds(lambda signs, tail: f"y ~ I({signs}{tail}", st.text("-+(", max_size=600), st.sampled_from(["x)", "x"])),
    st.text(max_size=30),
)


def test_formulas(tmp_path):
    lab = Lab(tmp_path)
    before = lab.snapshot()

    @FUZZ
    @given(formula=FORMULAS)
    @example(formula=MINUSES)  # bug: RecursionError
    @example(formula="y ~ I(" + "-" * 470 + "x)")  # bug: RecursionError
    @example(formula=f"y ~ I(x * {DIGITS_400})")  # bug: OverflowError
    @example(formula=f"y ~ I({DIGITS_400}.5 * x)")
    @example(formula=f"y ~ {DIGITS_400}")
    @example(formula="y ~ x")  # a model that fits
    def run(formula):
        response = lab.client.get("/dashboard/lab/regression", query_string={"formula": formula})
        page_check(response, before, lab, FORMULA_FIELD)
        cli_check(invoke("regress", "--db", lab.db_path, "--no-profile", "--", "lab", formula), FORMULA_FIELD)
        assert lab.snapshot() == before

    run()


# ---------------------------------------------------------------- raking margins

MARGIN_FIELD = re.compile(r"^(margins(\.|: )|rake: |trim: )")
CLI_MARGIN_FIELD = re.compile(r"^Error: (margins(\.|: )|--rake: |--trim: |rake: |trim: )")
SHARE = st.one_of(st.floats(), st.floats(0, 1), st.integers(-2, 2), st.integers(),
                  st.sampled_from([1e-320, 5e-324, 1e-9, 1e-10, 1e308, SHARE_4000, -SHARE_4000]),
                  st.text(max_size=4), st.none(), st.booleans())
OPTION_KEYS = st.sampled_from(["<30", "30+", "1", "2", "3", "0", "Yes", ""])
MARGINS = st.one_of(
    st.dictionaries(st.sampled_from([*QIDS, "nope"]),
                    st.one_of(st.dictionaries(OPTION_KEYS, SHARE, max_size=4), json_values), max_size=3),
    json_values,
)
PAGES = ["/dashboard/{slug}/results", "/dashboard/{slug}/crosstab?row=age&col=y",
         "/dashboard/{slug}/subgroups?question=y&by=age", "/dashboard/{slug}/regression?formula=y+~+x",
         "/api/v1/surveys/{slug}/estimates"]


def _rake_text(margins) -> str:
    try:
        return json.dumps(margins)
    except ValueError:  # an integer beyond json.dumps' 4300 digits: send its repr instead
        return repr(margins)


def _form_fields(margins) -> dict:
    """The weighting form's fields for ``margins`` (its shares as a person would type them)."""
    fields = {}
    if isinstance(margins, dict):
        for qi, q in enumerate(RAKEABLE):
            shares = margins.get(q["id"])
            if isinstance(shares, dict):
                for j, label in enumerate(q["options"]):
                    if label in shares:
                        value = shares[label]
                        fields[f"share_{qi}_{j}"] = value if isinstance(value, str) else repr(value)
    return fields


def test_raking_margins(tmp_path):
    lab = Lab(tmp_path)
    before = lab.snapshot()
    token = lab.token()

    @FUZZ
    @given(margins=MARGINS, trim=st.one_of(st.none(), st.sampled_from(["0.3,3", "3,0.3", "1e-320,1e308", "x"])),
           slug=st.sampled_from(["lab", "lab", "few"]))
    @example(margins={"age": {"<30": 1e-320, "30+": 1}}, trim=None, slug="lab")  # bug: 500 on weighting, results, …
    @example(margins={"age": {"<30": 1e-320, "30+": 1 - 1e-320}}, trim=None, slug="lab")
    @example(margins={"age": {"<30": SHARE_4000, "30+": 0}}, trim=None, slug="lab")  # bug: 500 on results, …
    @example(margins={"age": {"<30": 0.4, "30+": 0.6}}, trim=None, slug="lab")  # margins that weight
    @example(margins={"age": {"<30": 0.4, "30+": 0.6}, "x": {"1": 0.2, "2": 0.3, "3": 0.5}}, trim="0.3,3", slug="lab")
    @example(margins={"age": {"<30": 0.9, "30+": 0.1}, "x": {"1": 0.1, "2": 0.1, "3": 0.8}}, trim=None, slug="few")
    @example(margins={"age": {"<30": 1e-9, "30+": 1 - 1e-9}}, trim=None, slug="few")
    def run(margins, trim, slug):
        text = _rake_text(margins)
        query = {"rake": text, **({"trim": trim} if trim else {})}
        for page in PAGES:
            page = page.format(slug=slug)
            response = lab.client.get(f"{page}{'&' if '?' in page else '?'}{urlencode(query)}")
            if page.startswith("/api/"):  # JSON: {"error", "field"} naming the field
                assert response.status_code in (200, 400)
                if response.status_code == 400:
                    body = response.get_json()
                    assert MARGIN_FIELD.match(body["error"]) and body["field"], body
                assert lab.snapshot() == before
            else:
                page_check(response, before, lab, MARGIN_FIELD)
        form = {"csrf_token": token, **_form_fields(margins)}
        if trim:
            form["trim_low"], _, form["trim_high"] = trim.partition(",")
        response = lab.client.post(f"/dashboard/{slug}/weighting", data=form)
        assert response.status_code in (200, 400)
        if response.status_code == 400:  # on the field: its error list, or the form's message naming it
            text = html.unescape(response.get_data(as_text=True))
            assert (re.search(r'<ul class="errors" id="(share_\d+_\d+|trim_low|trim_high|confidence)-errors">', text)
                    or "Enter the population's shares" in text
                    or any(MARGIN_FIELD.search(a or b) for a, b in ALERT_RE.findall(text))), text[:3000]
        assert "Traceback" not in response.get_data(as_text=True) and lab.snapshot() == before
        path = lab.folder / "margins.json"
        path.write_text(text)
        trim_args = ["--trim", trim] if trim else []
        cli_check(invoke("estimate", "--db", lab.db_path, slug, "--rake", path, *trim_args), CLI_MARGIN_FIELD)
        cli_check(invoke("regress", "--db", lab.db_path, slug, "y ~ x", "--rake", path, "--no-profile",
                         *trim_args), re.compile(f"{CLI_MARGIN_FIELD.pattern}|{DATA_PROBLEM.pattern}"))
        assert lab.snapshot() == before

    run()


# ---------------------------------------------------------------- sampling weights

WEIGHTS_FIELD = re.compile(r"^Error: .*(weights|'w'|responses\.csv:\d+)|^Error: (strata|clusters): ")
REGRESS_WEIGHTS_FIELD = re.compile(f"{WEIGHTS_FIELD.pattern}|{FORMULA_FIELD.pattern}|{DATA_PROBLEM.pattern}")
WEIGHT = st.one_of(st.floats(), st.floats(0.01, 100), st.sampled_from([1e308, 1e-320, 1e154, 1e-170, 0.0]),
                   st.integers(-1, 10**30), st.sampled_from(["", "NA", "1" + "0" * 400, "x"]))


@st.composite
def weighted_csv(draw) -> str:
    rows = draw(st.lists(st.tuples(st.sampled_from(["Yes", "No"]), st.sampled_from(["1", "2", "3"]),
                                   st.sampled_from(["<30", "30+"]), st.sampled_from(["Never", "Once", "Often"]),
                                   WEIGHT), min_size=1, max_size=20))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*QIDS, "w"])
    writer.writerows([[*row[:4], row[4] if isinstance(row[4], str) else repr(row[4])] for row in rows])
    return out.getvalue()


def test_weights(tmp_path):
    folder = tmp_path
    (folder / "lab.json").write_text(json.dumps(LAB))
    every = "y,x,age,cheat,w\n" + "".join(f"{y},{x},{a},Never,1e308\n" for y in ("Yes", "No")
                                           for x in ("1", "2", "3") for a in ("<30", "30+"))

    @FUZZ
    @given(text=weighted_csv(), extra=st.sampled_from([[], ["--by", "age"], ["--crosstab", "age", "y"],
                                                       ["--crosstab", "y", "cheat"]]))
    @example(text=every, extra=[])  # bug: TypeError (the Kish effective n of weights whose squares overflow)
    @example(text=every, extra=["--by", "age"])
    @example(text=every.replace("1e308", "1e-320"), extra=[])
    def run(text, extra):
        (folder / "responses.csv").write_text(text)
        result = invoke("estimate", folder / "lab.json", folder / "responses.csv", "--weights", "w", *extra)
        cli_check(result, WEIGHTS_FIELD)
        result = invoke("regress", folder / "lab.json", folder / "responses.csv", "y ~ x", "--weights", "w",
                        "--no-profile")
        cli_check(result, REGRESS_WEIGHTS_FIELD)

    run()


# ---------------------------------------------------------------- imported definitions

DEFINITION_FIELD = re.compile(r"^Error: [^:]+: (definition|slug|title|description|questions|information|contact|"
                              r"consent|language|translations|design_fingerprint|text_versions|sampling)[\[.:]"
                              r"|^Error: [^:]+: (line \d+: )?not valid JSON")


def _texts(node, path=()):
    """The paths of every string in ``node`` (a decoded JSON value)."""
    if isinstance(node, str):
        yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _texts(child, (*path, key))


@st.composite
def with_surrogate(draw):
    """A near-valid definition, mostly with a lone surrogate put into one of its texts or keys."""
    data = draw(near_valid_definition())
    if draw(st.integers(0, 3)) == 0:
        return data
    surrogate = chr(draw(st.integers(0xD800, 0xDFFF)))
    data = copy.deepcopy(data)  # the drawn value stays as drawn
    paths = list(_texts(data))
    if not paths or not isinstance(data, dict) or draw(st.integers(0, 5)) == 0:
        return {**data, f"k{surrogate}": 1} if isinstance(data, dict) else data
    *where, last = draw(st.sampled_from(paths))
    parent = functools.reduce(lambda node, key: node[key], where, data)
    parent[last] = draw(st.text(max_size=3)) + surrogate + draw(st.text(max_size=3))
    return data


def test_imported_definitions(tmp_path_factory):
    lab = Lab(tmp_path_factory.mktemp("lab"))

    @FUZZ
    @given(data=with_surrogate(), open_now=st.booleans())
    @example(data=None, open_now=True)  # the file: bug, UnicodeEncodeError
    @example(data={**LAB, "slug": "other", "title": "Lab \ud800"}, open_now=False)
    @example(data={**LAB, "slug": "other"}, open_now=False)  # one that imports
    def run(data, open_now):
        folder = tmp_path_factory.mktemp("imp")
        text = SURROGATE_TITLE if data is None else json.dumps(data)  # ensure_ascii: "\ud800" as an escape
        (folder / "survey.json").write_text(text)
        db_path = folder / "fuzz.db"
        init_db(db_path).conn.close()
        before = _snapshot(db_path)
        result = invoke("import", folder / "survey.json", "--db", db_path, *(["--open"] if open_now else []))
        cli_check(result, DEFINITION_FIELD)
        after = _snapshot(db_path)
        if result.exit_code == 0:
            assert len(after["surveys"]) == len(before["surveys"]) + 1
        else:
            assert after == before
        # the dashboard's import of the same file: stored as a draft, or a 4xx naming it, nothing stored
        web_before = lab.snapshot()
        response = lab.client.post("/dashboard/import", data={
            "csrf_token": lab.token(), "target_n": "100", "definition": (io.BytesIO(text.encode()), "survey.json")})
        assert response.status_code in (302, 422), response.status_code
        assert "Traceback" not in response.get_data(as_text=True)
        if response.status_code == 422:
            assert lab.snapshot() == web_before
        else:  # the same file the command line refused is refused here too, and vice versa
            assert result.exit_code == 0

    run()


def _snapshot(path) -> dict:
    conn = sqlite3.connect(path)
    try:
        return table_snapshot(conn)
    finally:
        conn.close()
