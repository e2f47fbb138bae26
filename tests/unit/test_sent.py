"""Errors name what a client sent in JSON's words (``deniable.errors.sent``), never Python's type names."""

from __future__ import annotations

import numpy as np
import pytest

from deniable.client.listexp import check_list_report, list_mechanism
from deniable.client.mechanism import MechanismError, check_option
from deniable.client.multi import check_ticks
from deniable.client.two_group import check_two_group_report
from deniable.errors import sent


@pytest.mark.parametrize("value, shown", [
    (None, "null"), (True, "true"), (False, "false"), (1.5, "1.5"), (float("nan"), "NaN"), ("1", '"1"'),
    ([1, 0], "[1, 0]"), ({"x": 1}, '{"x": 1}'), ("é", '"é"'), ("a" * 100, '"' + "a" * 38 + "…"), (np.int64(3), "3"), ((0.5, 0.5), "[0.5, 0.5]"),
    (np.array([1, 2]), "array([1, 2])"),
])
def test_sent_spells_the_value_as_json(value, shown):
    assert sent(value) == shown


@pytest.mark.parametrize("check, message", [
    (lambda: check_option(None, 3), "must be an integer option index 0..2, got null"),
    (lambda: check_ticks([1, None, 0], 3), "every tick must be 0 or 1, got null"),
    (lambda: check_ticks("101", 3), 'must be a list of 3 ticks (0 or 1, one per option), got "101"'),
    (lambda: check_two_group_report({"group": "1", "answer": 0}), 'group must be 1 or 2, got "1"'),
    (lambda: check_two_group_report({"group": 1, "answer": True}), "answer must be 0 (Yes) or 1 (No), got true"),
    (lambda: check_list_report({"arm": None, "count": 1}, list_mechanism(3, 1.0)),
     "arm must be 0 (control) or 1 (treatment), got null"),
    (lambda: check_list_report({"arm": 0, "count": 2.5}, list_mechanism(3, 1.0)),
     "count must be an integer 0..4 in the control arm, got 2.5"),
])
def test_a_report_refused_says_what_was_sent_in_json(check, message):
    with pytest.raises(MechanismError) as info:
        check()
    assert str(info.value) == message
    assert not any(name in str(info.value) for name in ("NoneType", "'", "True", "None"))
