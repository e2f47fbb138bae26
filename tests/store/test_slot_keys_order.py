"""No submission order in the keys of the response slots (issue 41, item 2).

The attack, as an independent red team ran it: read only the keys of ``response_slots`` (every
slot, filled or free, as the live file and the file ``deniable backup`` writes hold them), give each
filled slot the gap of keys before it, and guess "larger gap = later".  When a free slot was "the
first at or after a random key", its chance was that gap (size-biased), and a growth pass erased the
bias of the slots filled before it but not after: the guess ordered 0.54-0.56 of pairs correctly.
Here three fresh surveys get 1,000 sequential single submissions each (answers from a fixed seed),
stored as the server stores them (one transaction each, growth passes run as the server runs them),
and the pooled concordance of the gap with the order must be 0.5 ± 0.03 — in the live file and in
the backup — and so must that of the key itself (a draw that favoured a range of keys for a while,
say the slots a growth pass had not reached yet, would show there).  (At 3,000 responses the standard error of the pooled concordance is about 0.006: the
old draw's 0.54-0.56 is far outside, chance is far inside.)
"""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest

from deniable.server.store import slots
from deniable.server.store.backup import backup
from deniable.server.store.demo import demo_survey
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition
from support.store import store_response


SURVEYS, RESPONSES, TOLERANCE = 3, 1000, 0.03
_DIGIT = {char: value for value, char in enumerate(slots.KEY_CHARS)}


def key_number(key: str) -> int:
    """A slot's key as the number whose order is SQLite's order of the keys."""
    number = 0
    for char in key:
        number = number * 64 + _DIGIT[char]
    return number


def gaps_of_filled(path, survey_id: int) -> dict[str, int]:
    """Per filled slot of the survey, read from the file: the gap of keys before it (from the previous
    slot, filled or free; the first slot's from 0)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT id, filled FROM response_slots WHERE survey_id = ? ORDER BY id",
                            [survey_id]).fetchall()
    finally:
        conn.close()
    gaps, before = {}, 0
    for key, filled in rows:
        number = key_number(key)
        if filled:
            gaps[key] = number - before
        before = number
    return gaps


def concordant_pairs(gaps_in_order: list[int]) -> tuple[int, int]:
    """``(pairs where the later response has the larger gap, pairs without a tie)``."""
    values = np.array(gaps_in_order, dtype=float)
    later_larger = np.triu(values[None, :] > values[:, None], k=1).sum()
    later_smaller = np.triu(values[None, :] < values[:, None], k=1).sum()
    return int(later_larger), int(later_larger + later_smaller)


def test_the_key_gaps_say_nothing_of_the_order(db, db_path, tmp_path):
    rng = random.Random(41)
    survey = demo_survey()
    orders = {}
    for number in range(SURVEYS):
        stored = insert_survey(db, parse_definition({**survey.to_dict(), "slug": f"order-{number}"}), status="open")
        orders[stored.id] = [store_response(db, stored, {q.id: rng.randrange(q.k) for q in stored.survey.questions
                                                          if q.qtype.categorical})
                             for _ in range(RESPONSES)]
    copy = tmp_path / "backup.db"
    backup(db_path, copy)
    for where in (db_path, copy):
        by_gap = by_key = [0, 0]
        for survey_id, order in orders.items():
            gaps = gaps_of_filled(where, survey_id)
            assert sorted(gaps) == sorted(order)
            by_gap = [a + b for a, b in zip(by_gap, concordant_pairs([gaps[key] for key in order]))]
            by_key = [a + b for a, b in zip(by_key, concordant_pairs([key_number(key) for key in order]))]
        assert abs(by_gap[0] / by_gap[1] - 0.5) <= TOLERANCE, ("larger gap = later", where, by_gap[0] / by_gap[1])
        assert abs(by_key[0] / by_key[1] - 0.5) <= TOLERANCE, ("larger key = later", where, by_key[0] / by_key[1])
