"""Hostile input outside HTTP: survey-definition files and the ``deniable`` command line.

Property-based (hypothesis).  A definition is either a valid :class:`Survey` (which then
round-trips) or a :class:`DefinitionError` whose message starts with the field it names;
never another exception.  Every ``deniable`` command given random files and option values
exits 0, or exits non-zero through ``SystemExit`` with exactly one ``Error: …`` line on stderr
and no traceback; a refused ``deniable import`` leaves the database as it was.

Run with more examples: ``DENIABLE_FUZZ_PROFILE=fuzz-thorough .venv/bin/python -m pytest
tests/test_fuzz_inputs.py`` (profiles are registered in ``fuzz_strategies``).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3

import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from deniable import estimators
from support.fuzz import FUZZ, json_values, near_valid_definition, table_snapshot
from deniable.server.cli import cli
from deniable.server.store.db import init_db
from deniable.server.survey.definition import (DefinitionError, Survey, dumps_definition, load_definition,
                               loads_definition, parse_definition)

pytestmark = pytest.mark.slow  # about a minute together: the full suite runs them, the fast lane does not

# A message names its field first: ``questions[1].options[0]: …`` (docs/design.md, STYLE.md).
FIELD_MESSAGE = re.compile(
    r"^(definition|slug|title|description|questions)(\[\d+\])?"
    r"(\.(id|text|options|epsilon|required)(\[\d+\])?)?: \S"
)

SURVEY = {
    "slug": "fuzz",
    "title": "Fuzz",
    "questions": [
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "Cheated?", "options": ["Never", "x, y", 'said "hi"'], "epsilon": 2.0},
        {"id": "age", "text": "Age", "options": ["<30", "30+"], "required": False},
    ],
}
QIDS = [q["id"] for q in SURVEY["questions"]]
LABELS = [o for q in SURVEY["questions"] for o in q["options"]]


def check_definition(data) -> Survey | None:
    """The property: a valid Survey that round-trips, or a DefinitionError naming the field."""
    try:
        survey = parse_definition(data)
    except DefinitionError as exc:
        assert FIELD_MESSAGE.match(str(exc)), str(exc)
        return None
    assert isinstance(survey, Survey)
    assert parse_definition(survey.to_dict()) == survey
    assert loads_definition(dumps_definition(survey)) == survey
    return survey


# ---------------------------------------------------------------- definitions


@FUZZ
@given(data=json_values)
def test_any_json_value_is_a_survey_or_a_definition_error(data):
    check_definition(data)


@FUZZ
@given(data=near_valid_definition())
@example(data={**SURVEY, "questions": [{**SURVEY["questions"][0], "epsilon": 10**400}]})  # bug: OverflowError
@example(data={**SURVEY, "questions": [{**SURVEY["questions"][0], "epsilon": -(10**400)}]})
def test_near_valid_definitions_are_a_survey_or_name_the_field(data):
    check_definition(data)


@FUZZ
@given(text=st.one_of(st.text(), near_valid_definition().map(json.dumps),
                      st.integers(1, 200_000).map(lambda n: "[" * n + "]" * n)))
@example(text="[" * 100_000 + "]" * 100_000)  # bug: RecursionError
@example(text="1" * 5000)  # bug: ValueError (Python's 4300-digit limit)
@example(text='{"slug": "a", "title": "t", "questions": [{"id": "q", "text": "t", "options": ["a", "b"], '
              '"epsilon": 1' + "0" * 400 + "}]}")
def test_any_text_is_a_survey_or_a_definition_error(text):
    try:
        survey = loads_definition(text, "upload.json")
    except DefinitionError as exc:
        message = str(exc)
        assert message.startswith("upload.json: ")
        assert FIELD_MESSAGE.match(message.removeprefix("upload.json: ")) or " not valid JSON" in message, message
        assert "\n" not in message
    else:
        assert isinstance(survey, Survey)


def test_deeply_nested_definition_is_a_definition_error():
    """Regression: ``json.loads`` raised RecursionError straight through ``loads_definition``."""
    with pytest.raises(DefinitionError, match=r"^f\.json: .*nested"):
        loads_definition("[" * 100_000 + "]" * 100_000, "f.json")


def test_integer_beyond_python_digit_limit_is_a_definition_error():
    """Regression: a 5000-digit integer made ``json.loads`` raise a plain ValueError."""
    text = '{"slug": "a", "title": "t", "questions": [], "x": 1' + "0" * 5000 + "}"
    with pytest.raises(DefinitionError, match=r"^f\.json: not valid JSON: Exceeds the limit"):
        loads_definition(text, "f.json")


def test_huge_integer_epsilon_is_a_definition_error():
    """Regression: an integer ε too large for a float raised OverflowError from the mechanism."""
    data = {**SURVEY, "questions": [{**SURVEY["questions"][0], "epsilon": 10**400}]}
    with pytest.raises(DefinitionError, match=r"^questions\[0\]\.epsilon: .*finite number"):
        parse_definition(data)


@FUZZ
@given(raw=st.one_of(st.binary(max_size=300), near_valid_definition().map(lambda d: json.dumps(d).encode()),
                     st.text().map(lambda t: t.encode("utf-16"))))
def test_any_file_is_a_survey_or_a_definition_error(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("def") / "survey.json"
    path.write_bytes(raw)
    try:
        load_definition(path)
    except DefinitionError as exc:
        assert str(exc).startswith(f"{path}: "), str(exc)


# ---------------------------------------------------------------- the command line


def assert_clean_exit(result):
    """Exit 0, or a non-zero SystemExit with one ``Error: …`` line on stderr and no traceback."""
    assert "Traceback" not in result.output and "Exception ignored" not in result.output
    if result.exit_code == 0:
        assert result.exception is None
        return
    assert isinstance(result.exception, SystemExit), (result.exception, result.output)
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and len(errors[0]) > len("Error: "), result.stderr


def invoke(args, **kwargs):
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)


@st.composite
def csv_bytes(draw):
    """A responses CSV: usually well-formed rows of (mostly) real labels, sometimes raw bytes."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.binary(max_size=200))
    header = draw(st.one_of(st.permutations(QIDS),
                            st.lists(st.sampled_from([*QIDS, "junk", "", " drugs"]), max_size=4)))
    cell = st.one_of(st.sampled_from([*LABELS, "", "NA", "null", " Yes", "yes"]), st.text(max_size=4))
    rows = draw(st.lists(st.lists(cell, max_size=4), max_size=12))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=draw(st.sampled_from(["\n", "\r\n", "\r"])))
    writer.writerow(header)
    writer.writerows(rows)
    text = draw(st.sampled_from(["", "\ufeff"])) + buffer.getvalue()
    data = text.encode("utf-8", errors="surrogatepass")
    if draw(st.booleans()):  # a stray byte somewhere
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=3)) + data[at:]
    return data


OPTION_VALUE = st.one_of(st.text(max_size=8).filter(lambda s: "\x00" not in s),
                         st.floats().map(repr), st.integers(-10**20, 10**20).map(str))
ESTIMATE_OPTIONS = st.lists(st.one_of(
    st.tuples(st.just("--method"), st.one_of(st.sampled_from(list(estimators.METHODS)), OPTION_VALUE)),
    st.tuples(st.just("--confidence"), st.one_of(st.sampled_from(["0.9", "0.95", "1", "0", "nan"]), OPTION_VALUE)),
    st.tuples(st.just("--format"), st.sampled_from(["table", "json", "csv", "xml"])),
    st.tuples(st.just("--crosstab"), st.sampled_from(QIDS + ["nope"]), st.sampled_from(QIDS + ["nope"])),
    st.tuples(st.just("--by"), st.sampled_from(QIDS + ["nope"])),
    st.tuples(st.just("--simultaneous")),
), max_size=3).map(lambda groups: [part for group in groups for part in group])


@FUZZ
@given(raw=csv_bytes(), options=ESTIMATE_OPTIONS)
def test_estimate_with_random_csv_and_options_exits_cleanly(tmp_path_factory, raw, options):
    folder = tmp_path_factory.mktemp("est")
    (folder / "survey.json").write_text(json.dumps(SURVEY))
    (folder / "responses.csv").write_bytes(raw)
    result = invoke(["estimate", folder / "survey.json", folder / "responses.csv", *options])
    assert_clean_exit(result)


@pytest.mark.parametrize("raw, expected", [
    # Regression: a header ended by a bare CR (old Mac line ends) raised csv.Error.
    (b"drugs,cheat,age\rYes,Never,\rNo,Never,<30\r", None),
    # Regression: a cell beyond the csv module's field limit raised csv.Error (while finding the line).
    (b"drugs,cheat,age\nYes,Never,\n\"" + b"x" * 200_000 + b"\",Never,\n", ":3: cannot parse as CSV: field larger"),
    # Regression: a row of the wrong width that is not UTF-8 made pyarrow's invalid-row callback
    # print an "Exception ignored … UnicodeDecodeError" traceback, and the line was not named.
    (b"drugs,cheat,age\nYes,Never,\nN\x9do,Never,<30,x\n", ":3: expected 3 fields (one per question), found 4"),
])
def test_estimate_regressions(tmp_path, raw, expected):
    (tmp_path / "survey.json").write_text(json.dumps(SURVEY))
    (tmp_path / "responses.csv").write_bytes(raw)
    result = invoke(["estimate", tmp_path / "survey.json", tmp_path / "responses.csv", "--format", "json"])
    assert_clean_exit(result)
    if expected is None:
        assert result.exit_code == 0
        assert json.loads(result.stdout)["n_responses"] == 2
    else:
        assert result.exit_code == 1 and expected in result.stderr


def test_simulate_too_many_respondents_is_one_error_line(tmp_path):
    """Regression: ``--n 10940165828`` ended in a MemoryError traceback."""
    (tmp_path / "survey.json").write_text(json.dumps(SURVEY))
    (tmp_path / "truth.json").write_text(json.dumps({"drugs": [0.3, 0.7], "cheat": [1, 0, 0], "age": [1, 0]}))
    result = invoke(["simulate", tmp_path / "survey.json", "--n", 10**15, "--truth", tmp_path / "truth.json"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"Error: --n {10**15}: not enough memory to simulate that many "
                                          "respondents at once"]


@FUZZ
@given(raw=st.one_of(st.binary(max_size=200), near_valid_definition().map(lambda d: json.dumps(d).encode())))
def test_estimate_with_random_definition_exits_cleanly(tmp_path_factory, raw):
    folder = tmp_path_factory.mktemp("estdef")
    (folder / "survey.json").write_bytes(raw)
    (folder / "responses.csv").write_text("drugs,cheat,age\nYes,Never,\n")
    assert_clean_exit(invoke(["estimate", folder / "survey.json", folder / "responses.csv"]))


@FUZZ
@given(options=st.lists(st.one_of(
    st.tuples(st.just("--k"), st.one_of(st.integers(-3, 70).map(str), OPTION_VALUE)),
    st.tuples(st.just("--margin"), st.one_of(st.floats().map(repr), OPTION_VALUE)),
    st.tuples(st.just("--epsilon"), st.one_of(st.floats().map(repr), st.sampled_from(["1e308", "1e-308", "20", "21"]),
                                             OPTION_VALUE)),
    st.tuples(st.just("--confidence"), st.one_of(st.floats().map(repr), OPTION_VALUE)),
    st.tuples(st.just("--format"), st.sampled_from(["table", "json", "yaml"])),
), max_size=6).map(lambda groups: [part for group in groups for part in group]))
@example(options=["--k", "2", "--margin", "1e-300"])
@example(options=["--k", "1000000000", "--margin", "0.05"])
def test_plan_with_random_options_exits_cleanly(options):
    assert_clean_exit(invoke(["plan", *options]))


@st.composite
def truth_json(draw):
    if draw(st.booleans()):
        return draw(json_values)
    probabilities = st.lists(st.one_of(st.floats(), st.integers(-2, 2), json_values), max_size=4)
    return draw(st.dictionaries(st.sampled_from([*QIDS, "junk"]), probabilities))


@FUZZ
@given(truth=st.one_of(truth_json(), st.just({"drugs": [0.3, 0.7], "cheat": [0.5, 0.25, 0.25], "age": [1, 0]})),
       # Never a size that would really allocate gigabytes: small, or far beyond any memory.
       n=st.one_of(st.integers(-5, 200).map(str), st.integers(10**15, 10**30).map(str),
                   st.text(max_size=6).filter(lambda s: not s.strip().lstrip("+").isdigit() and "\x00" not in s)),
       seed=st.one_of(st.none(), st.integers(-(2**70), 2**70).map(str), OPTION_VALUE),
       to_db=st.booleans())
def test_simulate_with_random_truth_and_options_exits_cleanly(tmp_path_factory, truth, n, seed, to_db):
    folder = tmp_path_factory.mktemp("sim")
    (folder / "survey.json").write_text(json.dumps(SURVEY))
    try:
        (folder / "truth.json").write_text(json.dumps(truth))
    except ValueError:  # a JSON value too large for ``json.dumps``: send the repr instead
        (folder / "truth.json").write_text(repr(truth))
    args = ["simulate", folder / "survey.json", "--n", n, "--truth", folder / "truth.json",
            "-o", folder / "out.csv"]
    if seed is not None:
        args += ["--seed", seed]
    if to_db:
        args += ["--db", folder / "fuzz.db"]
    assert_clean_exit(invoke(args))


@FUZZ
@given(raw=st.one_of(st.binary(max_size=200), near_valid_definition().map(lambda d: json.dumps(d).encode())),
       open_now=st.booleans())
def test_import_with_random_files_exits_cleanly_and_stores_nothing_on_error(tmp_path_factory, raw, open_now):
    folder = tmp_path_factory.mktemp("imp")
    db_path = folder / "fuzz.db"
    db = init_db(db_path)
    try:
        before = table_snapshot(db.conn)
    finally:
        db.conn.close()
    (folder / "survey.json").write_bytes(raw)
    result = invoke(["import", folder / "survey.json", "--db", db_path, *(["--open"] if open_now else [])])
    assert_clean_exit(result)
    with sqlite3.connect(db_path) as conn:
        after = table_snapshot(conn)
    conn.close()
    if result.exit_code == 0:
        assert len(after["surveys"]) == len(before["surveys"]) + 1
    else:
        assert after == before


def test_import_twice_is_one_error_line(tmp_path):
    survey = tmp_path / "s.json"
    survey.write_text(json.dumps(SURVEY))
    db = tmp_path / "x.db"
    assert invoke(["import", survey, "--db", db]).exit_code == 0
    result = invoke(["import", survey, "--db", db])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [f"Error: {db}: slug: a survey 'fuzz' already exists"]

