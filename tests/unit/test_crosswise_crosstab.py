"""A cross-tab of a question randomized by the crosswise model at a prevalence below ½, whose each
report is likelier under the *other* answer: its two reports are swapped (``joint.own_reports``),
which changes no estimate of the answers.  So it is the cross-tab of the swapped counts under the
crosswise model at 1 − prevalence, whose reports are each likelier under their own answer (the form
the exact intervals need, checked by their own tests) — every field, to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

from deniable.client import designs
from deniable.estimators.joint import crosstab, crosstabs, option_channels, own_reports


def fields(result) -> dict:
    names = ("joint_estimate", "joint_consistent", "joint_std_error", "joint_ci_low", "joint_ci_high",
             "conditional_estimate", "conditional_std_error", "conditional_ci_low", "conditional_ci_high",
             "row_estimable")
    return {name: np.asarray(getattr(result, name)) for name in names}


def assert_same(a, b) -> None:
    for name, value in fields(a).items():
        np.testing.assert_allclose(value, fields(b)[name], rtol=1e-12, atol=1e-15, err_msg=name)


def test_own_reports_swaps_only_a_design_whose_reports_point_the_other_way():
    low, high = designs.crosswise(0.25), designs.crosswise(0.75)
    with pytest.raises(ValueError):
        option_channels(low)
    swapped, flag = own_reports(low)
    assert flag and swapped.weights == high.weights and swapped.reports == tuple(reversed(low.reports))
    for design in (high, designs.warner(0.7), designs.forced(0.6, [0.25, 0.15]), None):
        assert own_reports(design) == (design, False)


@pytest.mark.parametrize("table", [[[120, 380], [260, 240]], [[5, 40], [30, 925]], [[0, 10], [10, 0]]])
def test_a_crosswise_row_below_one_half_is_the_swapped_table_at_one_minus_it(table):
    counts = np.array(table)
    for col in (None, designs.warner(0.8)):
        found = crosstab(counts, None, 2.0 if col is None else None, row_design=designs.crosswise(0.25),
                         col_design=col)
        expected = crosstab(counts[::-1], None, 2.0 if col is None else None, row_design=designs.crosswise(0.75),
                            col_design=col)
        assert_same(found, expected)
    both = crosstab(counts, None, None, row_design=designs.crosswise(0.3), col_design=designs.crosswise(0.2))
    assert_same(both, crosstab(counts[::-1, ::-1], None, None, row_design=designs.crosswise(0.7),
                               col_design=designs.crosswise(0.8)))


def test_the_stacked_cross_tabs_swap_alike():
    tables = np.array([[[120, 380], [260, 240]], [[300, 200], [100, 400]]])
    for found, table in zip(crosstabs(tables, None, None, row_design=designs.crosswise(0.25),
                                      col_design=designs.crosswise(0.25)), tables):
        assert_same(found, crosstab(table[::-1, ::-1], None, None, row_design=designs.crosswise(0.75),
                                    col_design=designs.crosswise(0.75)))
