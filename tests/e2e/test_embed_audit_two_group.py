"""``deniable audit --embed DIR --type two_group``: the built embed's own two-group sampler (embed/types/two_group.js:
drawGroup, drawInstruction, comply), sampled in chromium beside its Python twin (docs/embedding.md, "Auditing the
built file").

The audit serves the built ES module in place of ``/static/rr.js``; the two-group audit then samples the module's
own sampler, not the survey page's ``/static/types/two_group.js``: an honest build passes at CDMsym's realized ε
(and CDM is said to be not ε-LDP), and a build whose instruction draw gives "answer truthfully" a quarter of the
draws that should say Yes or No is caught — which also shows that the sampler audited is the built file's.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from deniable.client.embed import build, integrity
from deniable.server.cli import cli

pytestmark = pytest.mark.browser

DRAW = "while (u >= cumulative[r]) r += 1;"


def built(folder):
    folder.mkdir()
    for name, data in build().files().items():
        (folder / name).write_bytes(data)
    return next(folder.glob("*.mjs"))


def audited(target, samples):
    result = CliRunner().invoke(cli, ["audit", "--embed", str(target), "--type", "two_group", "--epsilon", "1",
                                      "--samples", str(samples), "--confidence", "0.999", "--format", "json"])
    out = json.loads(result.output[result.output.index("{"):]) if "{" in result.output else None
    return result, out


def test_the_built_embeds_two_group_sampler_passes_the_audit(tmp_path):
    module = built(tmp_path / "site")
    assert "export function drawGroup" not in module.read_text()  # joined: the module exports it at the end
    result, out = audited(tmp_path / "site", 50_000)
    assert result.exit_code == 0, result.output
    assert out["script"] == str(module) and out["integrity"] == integrity(module.read_bytes())
    rows = {r["setting"].split(" ")[0]: r for r in out["results"]}
    assert set(rows) == {"CDMsym", "CDM"}
    assert rows["CDMsym"]["ok"] and rows["CDMsym"]["browser_lower_bound"] <= 1.0
    assert rows["CDM"]["ok"] is None  # not ε-LDP, shown as such


def test_a_broken_two_group_sampler_in_the_build_is_caught(tmp_path):
    """A quarter of the "say Yes" and "say No" draws turned into "answer truthfully": CDMsym's group 1 (yes = no =
    1/(1 + e)) then gives a truthful answer 1 − 0.75 · 2/(1 + e) of the time, ε ≈ ln((1 − 0.75/(1 + e)) / (0.75/(1 + e)))
    ≈ 1.35 instead of 1."""
    module = built(tmp_path / "site")
    text = module.read_text()
    assert text.count(DRAW) == 1  # the embed's own drawInstruction (the survey page's is not in the build)
    module.write_text(text.replace(DRAW, DRAW + " if (r < cumulative.length - 1 && u % 4 === 0) r = cumulative.length - 1;"))
    result, out = audited(module, 200_000)
    assert result.exit_code == 1, result.output
    row = next(r for r in out["results"] if r["setting"].startswith("CDMsym"))
    assert row["ok"] is False and row["browser_lower_bound"] > 1.1 and row["python_lower_bound"] <= 1.0
