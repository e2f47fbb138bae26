"""The responses CSV (pyarrow reader and writer) and the Dataset it produces."""

from __future__ import annotations

import io

import csv

import numpy as np
import pytest

from deniable.server.survey import responses_csv as csvio
from deniable.server.survey.responses_csv import CSVError, read_responses_csv, write_responses_csv
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition

SURVEY = parse_definition({
    "slug": "t", "title": "T",
    "questions": [
        {"id": "a", "text": "A", "options": ["Yes", "No"], "epsilon": 1},
        {"id": "b", "text": "B", "options": ["NA", "Yes, often", 'Say "no"', "null"], "epsilon": 2,
         "required": False},
        {"id": "g", "text": "G", "options": ["x", "y", "z"], "required": False},
    ],
})


def dataset(a, b, g):
    return Dataset(SURVEY, {"a": np.array(a), "b": np.array(b), "g": np.array(g)})


def write(tmp_path, text: str, name="r.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_labels_a_spreadsheet_would_run_are_neutralized_and_read_back_exactly(tmp_path):
    survey = parse_definition({"slug": "f", "title": "F", "questions": [
        {"id": "q", "text": "Q", "options": ['=HYPERLINK("http://evil.example","x")', "+1", "-1", "@SUM(1)", "ok"],
         "epsilon": 1, "required": False}]})
    ds = Dataset(survey, {"q": np.array([0, 1, 2, 3, 4, -1])})
    path = tmp_path / "f.csv"
    write_responses_csv(path, ds)
    cells = [row[0] if row else "" for row in csv.reader(path.read_text().splitlines()[2:])]
    assert cells == ["'=HYPERLINK(\"http://evil.example\",\"x\")", "'+1", "'-1", "'@SUM(1)", "ok", ""]
    assert read_responses_csv(path, survey).columns["q"].tolist() == [0, 1, 2, 3, 4, -1]
    (tmp_path / "plain.csv").write_text('q\n"=HYPERLINK(""http://evil.example"",""x"")"\n+1\n')
    assert read_responses_csv(tmp_path / "plain.csv", survey).columns["q"].tolist() == [0, 1]  # either form


def test_round_trip_with_awkward_labels(tmp_path):
    ds = dataset([0, 1, 1, 0], [0, 1, 2, -1], [3 - 3, -1, 2, 1])
    path = tmp_path / "r.csv"
    write_responses_csv(path, ds)
    text = path.read_text()
    assert text.splitlines()[0].startswith("# deniable responses | survey=t | design=sha256:")
    assert text.splitlines()[1] == "a,b,g"
    assert '"Yes, often"' in text and '"Say ""no"""' in text
    back = read_responses_csv(path, SURVEY)
    for qid in ("a", "b", "g"):
        assert back.columns[qid].tolist() == ds.columns[qid].tolist()
    buffer = io.BytesIO()
    write_responses_csv(buffer, ds)
    assert buffer.getvalue().decode("utf-8") == text


def test_labels_na_and_null_stay_labels_and_empty_is_not_answered(tmp_path):
    path = write(tmp_path, "g,a,b\nx,Yes,NA\n,No,null\ny,No,\n")
    ds = read_responses_csv(path, SURVEY)
    assert ds.columns["b"].tolist() == [0, 3, -1]
    assert ds.columns["g"].tolist() == [0, -1, 1]
    assert ds.n_rows == 3


def test_bom_crlf_and_header_only(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b,g\r\nYes,NA,x\r\n")
    assert read_responses_csv(path, SURVEY).columns["a"].tolist() == [0]
    empty = read_responses_csv(write(tmp_path, "a,b,g\n"), SURVEY)
    assert empty.n_rows == 0 and empty.counts("a").tolist() == [0, 0]


def test_line_numbers_count_physical_lines(tmp_path):
    # A quoted label spanning two lines pushes later rows down one line.
    survey = parse_definition({"slug": "t", "title": "T", "questions": [
        {"id": "a", "text": "A", "options": ["one\ntwo", "three"]}]})
    path = write(tmp_path, 'a\n"one\ntwo"\nthree\nfour\n')
    with pytest.raises(CSVError, match=r"r\.csv:5: column 'a': unknown option label 'four'"):
        read_responses_csv(path, survey)


def test_errors_in_a_later_block(tmp_path, monkeypatch):
    monkeypatch.setattr(csvio, "BLOCK_SIZE", 64)  # many blocks, each with its own dictionary
    lines = ["a,b,g"] + ["Yes,NA,x", "No,,y"] * 50 + ["No,Maybe,z"]
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(CSVError) as info:
        read_responses_csv(path, SURVEY)
    assert str(info.value) == (f"{path}:102: column 'b': unknown option label 'Maybe' "
                               "(expected one of: NA, Yes, often, Say \"no\", null)")
    good = write(tmp_path, "\n".join(lines[:-1]) + "\n", "good.csv")
    seen = []
    ds = read_responses_csv(good, SURVEY, progress=seen.append)
    assert ds.counts("a").tolist() == [50, 50] and ds.counts("b").tolist() == [50, 0, 0, 0]
    assert sum(seen) == good.stat().st_size and len(seen) > 1


@pytest.mark.parametrize(
    "text,message",
    [
        ("a,b,g\nYes,NA,x\nYes,NA\n", "r.csv:3: expected 3 fields (one per question), found 2"),
        ("a,b,g\nYes,NA,x,x\n", "r.csv:2: expected 3 fields (one per question), found 4"),
        ("a,b\n", "r.csv:1: missing column 'g'"),
        ("a,b,g,h\n", "r.csv:1: unknown column 'h'"),
        ("a,b,a\n", "r.csv:1: duplicate column 'a'"),
        ("\n", "r.csv:1: no header"),
        ("a,b,g\nyes,NA,x\n", "r.csv:2: column 'a': unknown option label 'yes' (expected one of: Yes, No)"),
        ("a,b,g\nYes ,NA,x\n", "r.csv:2: column 'a': unknown option label 'Yes '"),
        ("a,b,g\nYes,NA,x\n,NA,x\n", "r.csv:3: column 'a': empty, but the question is required"),
        # An unterminated quote swallows the rest of the file into one field.
        ('a,b,g\nYes,"NA,x\n', "r.csv:2: expected 3 fields (one per question), found 2"),
    ],
)
def test_errors_name_file_and_line(tmp_path, text, message):
    with pytest.raises(CSVError) as info:
        read_responses_csv(write(tmp_path, text), SURVEY)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_not_utf8_and_unreadable(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"a,b,g\nYes,NA,x\nNo,NA,\xff\n")
    with pytest.raises(CSVError, match=r"r\.csv:3: not UTF-8 text"):
        read_responses_csv(path, SURVEY)
    with pytest.raises(CSVError, match=r"missing\.csv: cannot read"):
        read_responses_csv(tmp_path / "missing.csv", SURVEY)


def test_dataset_counts():
    ds = dataset([0, 1, 1, 0, 1], [0, 1, 3, -1, 3], [2, -1, 2, 1, 0])
    assert ds.n_rows == 5
    assert ds.counts("a").tolist() == [2, 3]
    assert ds.counts("b").tolist() == [1, 1, 0, 2]
    assert {k: v.tolist() for k, v in ds.all_counts().items()} == {"a": [2, 3], "b": [1, 1, 0, 2], "g": [1, 1, 2]}
    joint = ds.joint_counts("a", "b")  # rows where both were answered
    assert joint.shape == (2, 4) and joint.sum() == 4
    assert joint.tolist() == [[1, 0, 0, 0], [0, 1, 0, 2]]
    by = ds.counts_by("a", "g")  # g is asked directly
    assert by.tolist() == [[0, 1], [1, 0], [1, 1]]
    # Many options: the bincount path gives the same answer as counting one by one.
    survey = parse_definition({"slug": "t", "title": "T", "questions": [
        {"id": "big", "text": "B", "options": [str(i) for i in range(40)], "required": False}]})
    column = np.random.default_rng(0).integers(-1, 40, 10_000).astype(np.int16)
    big = Dataset(survey, {"big": column})
    assert big.counts("big").tolist() == [int((column == i).sum()) for i in range(40)]


@pytest.mark.parametrize(
    "columns,message",
    [
        ({"a": [0], "b": [0]}, "missing: \\['g'\\]"),
        ({"a": [0], "b": [0], "g": [0], "h": [0]}, "unknown: \\['h'\\]"),
        ({"a": [0, 1], "b": [0], "g": [0]}, "different lengths"),
        ({"a": [0.5], "b": [0], "g": [0]}, "column 'a': must be a 1-D integer array"),
        ({"a": [2], "b": [0], "g": [0]}, "column 'a': must be option indices -1..1"),
        ({"a": [-2], "b": [0], "g": [0]}, "column 'a': must be option indices -1..1"),
    ],
)
def test_dataset_rejects_bad_columns(columns, message):
    with pytest.raises(ValueError, match=message):
        Dataset(SURVEY, {k: np.array(v) for k, v in columns.items()})


def test_dataset_refuses_bad_groupings():
    ds = dataset([0], [0], [0])
    with pytest.raises(ValueError, match="'a' is protected"):
        ds.counts_by("g", "a")
    with pytest.raises(ValueError, match="two different questions"):
        ds.joint_counts("a", "a")
