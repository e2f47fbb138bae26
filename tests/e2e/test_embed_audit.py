"""``deniable audit --embed DIR``: the built embed's samplers, sampled in chromium beside their Python twins.

The audit serves the built ES module (``deniable embed build``) in place of ``/static/rr.js`` and
``/static/designs.js``: an honest build passes, and a build whose k-ary sampler keeps the answer 5%
more often than its threshold says (ε ≈ 1.19 instead of 1 at k = 2) is caught — which also shows
that the file sampled is the built one, since the shipped ``rr.js`` would pass.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from click.testing import CliRunner
from deniable.client.embed import build, integrity
from deniable.server.cli import cli

pytestmark = pytest.mark.browser

KEEP = "if (draw(nextUint32) < threshold) {"


def built(folder):
    folder.mkdir()
    for name, data in build().files().items():
        (folder / name).write_bytes(data)
    return next(folder.glob("*.mjs"))


def test_the_built_embed_passes_the_audit_and_the_output_names_its_hash(tmp_path):
    module = built(tmp_path / "site")
    result = CliRunner().invoke(cli, ["audit", "--embed", str(tmp_path / "site"), "--type", "choice", "--type", "list",
                                      "--k", "2", "--epsilon", "1", "--samples", "50000", "--confidence", "0.999",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output[result.output.index("{"):])
    assert out["script"] == str(module) and out["integrity"] == integrity(module.read_bytes())
    rows = {(r["type"], r["setting"]): r for r in out["results"]}
    assert set(rows) == {("choice", "k=2"), ("list", "J=3"), ("list", "J=3 plain")}
    assert rows[("choice", "k=2")]["ok"] and rows[("list", "J=3")]["ok"]
    assert rows[("list", "J=3 plain")]["ok"] is None  # a plain list experiment: not ε-LDP, shown as such


def test_a_broken_build_is_caught(tmp_path):
    """At k = 2, ε = 1 a 5% higher threshold is ε ≈ 1.19 (tests/cli/test_audit.py reasons the margins)."""
    module = built(tmp_path / "site")
    text = module.read_text()
    assert text.count(KEEP) == 1
    module.write_text(text.replace(KEEP, "if (draw(nextUint32) < Math.min(threshold * 1.05, 4294967296)) {"))
    result = CliRunner().invoke(cli, ["audit", "--embed", str(module), "--type", "choice", "--k", "2", "--epsilon", "1",
                                      "--samples", "200000", "--confidence", "0.999"])
    assert result.exit_code == 1, result.output
    assert f"the built embed: {module}  {integrity(module.read_bytes())}" in result.output
    line = next(line for line in result.output.splitlines() if re.match(r"\s+choice\s+k=2\s", line))
    assert "VIOLATION" in line
    browser_bound, python_bound = float(line.split()[4]), float(line.split()[5])
    assert browser_bound > 1.0 and math.isclose(browser_bound, 1.19, abs_tol=0.05) and python_bound <= 1.0
