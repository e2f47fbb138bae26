"""Answer patterns from a dataset's rows keep every row's codes, for every question type.

``from_dataset`` packed each row into one integer key with radix k + 1 per question, but a check-all
question's codes run to 2^k − 1, a list experiment's to 2k − 1, a numeric one's over its grid and a
two-group one's to 3: such codes spilled into the previous question's digit (found by the two-group
regression: ``year`` 0 read back as 1).  The radix is now each type's number of report codes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.patterns import collapse, from_dataset

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SURVEYS = [parse_definition(json.loads((EXAMPLES / name).read_text())) for name in ("habits.json", "honesty.json",
                                                                                   "survey.json", "everything.json")]


@st.composite
def datasets(draw):
    survey = draw(st.sampled_from(SURVEYS))
    n = draw(st.integers(1, 60))
    columns = {q.id: np.array(draw(st.lists(st.integers(-1, q.qtype.n_cells(q) - 1), min_size=n, max_size=n)),
                              dtype=np.int64) for q in survey.questions}
    return Dataset(survey, columns)


def rows_of(columns: dict, ids: list[str], counts=None) -> Counter:
    matrix = np.column_stack([columns[qid] for qid in ids])
    weights = np.ones(len(matrix), dtype=np.int64) if counts is None else counts
    out = Counter()
    for row, count in zip(map(tuple, matrix.tolist()), weights.tolist()):
        out[row] += count
    return out


@settings(max_examples=200, deadline=None)
@given(datasets())
def test_every_row_comes_back_with_its_codes(dataset):
    ids = [q.id for q in dataset.survey.questions]
    patterns = from_dataset(dataset)
    assert rows_of(patterns.columns, ids, patterns.counts) == rows_of(dataset.columns, ids)
    pair = ids[:2]
    rows, counts = collapse(patterns, pair)
    assert rows_of(dict(zip(pair, rows.T)), pair, counts) == rows_of(dataset.columns, pair)
