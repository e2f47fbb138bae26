"""docs/noncompliance.md's table of respondents is what plan_two_group computes, cell by cell."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deniable.estimators import plan_two_group

PAGE = Path(__file__).resolve().parents[2] / "docs" / "noncompliance.md"
NUISANCE = {"CDM": "γ", "CDMsym": "γ", "SLD": "t", "UQTunknown": "π_UQ"}


def _rows():
    rows = []
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in NUISANCE:
            rows.append(cells)
    return rows


def _plan_text(plan) -> str:
    return f"{plan.n:,} ({plan.n_groups[0]:,} + {plan.n_groups[1]:,})"


def test_the_page_has_a_row_per_design():
    assert [row[0] for row in _rows()] == list(NUISANCE)


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row[0])
def test_every_cell_is_recomputed(row):
    model, p_text, worst_exact, worst_wald, given_exact, given_wald = row
    p = [float(v) for v in p_text.split(",")]
    assert worst_exact == _plan_text(plan_two_group(model, p, 0.05))
    assert worst_wald == _plan_text(plan_two_group(model, p, 0.05, interval="wald"))
    name, value, counts = re.fullmatch(r"(\S+) = ([0-9.]+): (.+)", given_exact).groups()
    assert name == NUISANCE[model]
    assert counts == _plan_text(plan_two_group(model, p, 0.05, pi=0.1, nuisance=float(value)))
    assert given_wald == _plan_text(plan_two_group(model, p, 0.05, interval="wald", pi=0.1, nuisance=float(value)))
