"""The built embed (``deniable embed build``, :mod:`deniable.client.embed`), served and run in chromium.

Both builds — the ES module and the classic script's global ``DeniableEmbed`` — reproduce the same
shared test vectors as the survey page's ``rr.js`` and ``designs.js`` draw for draw
(``tests/rr_vectors.json``, ``tests/type_vectors.json``, ``tests/data/design_vectors.json``: made by
the Python reference), and ``mount`` gives the host only reports.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deniable.client.embed import current

pytestmark = pytest.mark.browser

TESTS = Path(__file__).resolve().parents[1]
VECTORS = {"rr": json.loads((TESTS / "rr_vectors.json").read_text())["cases"],
           "types": json.loads((TESTS / "type_vectors.json").read_text()),
           "designs": json.loads((TESTS / "data" / "design_vectors.json").read_text())["cases"]}

RUN_VECTORS = """(m, v) => {
  const run = (c, each) => {
    let used = 0;
    const next = () => { if (used >= c.draws.length) throw new Error('out of draws'); return c.draws[used++]; };
    return {reports: c.values.map((value) => each(value, next)), used};
  };
  return {
    rr: v.rr.map((c) => run(c, (value, next) => m.randomize(value, c.k, c.threshold, next))),
    laplace: v.types.laplace.map((c) => run(c, (x, next) => m.randomizeLaplace(x, c.m, c.threshold, c.tail, next))),
    grid: v.types.grid.map((c) => run(c, (x, next) => m.randomizeGrid(x, c.m, c.grid, c.threshold, next))),
    multi: v.types.multi.map((c) => run(c, (x, next) => m.randomizeTicks(x, c.threshold, next))),
    list: v.types.list.map((c) => run(c, (x, next) => {
      const arm = m.assignArm(next);
      return [arm, m.randomizeCount(x, c.items, arm, c.threshold, next)];
    })),
    designs: v.designs.map((c) => {
      const cumulative = m.cumulativeOf(c.weights);
      return c.values.map((x, i) => m.sampleDesign(x, cumulative, () => c.draws[i]));
    }),
  };
}"""


@pytest.fixture
def embed_page(page, live_server, open_demo):
    """A page on the live server's origin (the demo survey), and the embed's version."""
    page.goto(f"{live_server}/s/demo")
    return page, current().version


def check_vectors(results):
    for case, result in zip(VECTORS["rr"], results["rr"]):
        assert result == {"reports": case["reports"], "used": len(case["draws"])}, case
    for kind in ("laplace", "grid", "multi", "list"):
        assert len(results[kind]) == len(VECTORS["types"][kind]) >= 4
        for case, result in zip(VECTORS["types"][kind], results[kind]):
            assert result == {"reports": case["reports"], "used": len(case["draws"])}, (kind, case)
    assert [r for r in results["designs"]] == [c["reports"] for c in VECTORS["designs"]]


def test_the_module_build_reproduces_the_shared_vectors(embed_page):
    page, version = embed_page
    results = page.evaluate(
        f"""async (v) => {{ const m = await import('/embed/{version}/deniable-embed.mjs'); return ({RUN_VECTORS})(m, v); }}""",
        VECTORS)
    check_vectors(results)


def test_the_classic_script_build_reproduces_the_shared_vectors(embed_page):
    page, version = embed_page
    page.add_script_tag(url=f"/embed/{version}/deniable-embed.js")
    assert page.evaluate("() => Object.isFrozen(DeniableEmbed) && typeof DeniableEmbed.mount") == "function"
    check_vectors(page.evaluate(f"(v) => ({RUN_VECTORS})(DeniableEmbed, v)", VECTORS))


def test_mount_hands_the_host_only_the_report(embed_page, app):
    """A check-all question mounted by hand: unnamed boxes, one report of K ticks, memoized once."""
    from deniable.server.survey.definition import parse_definition

    page, version = embed_page
    definition = parse_definition({"slug": "ticks", "title": "Ticks", "questions": [
        {"id": "did", "type": "multi", "text": "Which of these have you done?", "options": ["A", "B", "C"],
         "epsilon": 2.0}]})
    from deniable.server.survey.definition import design_fingerprint
    from deniable.server.survey.recipes import question_design

    design = {"slug": "ticks", "design_fingerprint": design_fingerprint(definition),
              "questions": [question_design(q) for q in definition.questions]}
    out = page.evaluate(
        f"""async (design) => {{
            const m = await import('/embed/{version}/deniable-embed.mjs');
            const host = document.createElement('div');
            document.body.append(host);
            const seen = [];
            const handle = m.mount(host, {{design, question: 'did', onReport: (r) => seen.push(r)}});
            host.querySelector('[data-option="1"]').click();
            const first = handle.commit();
            host.querySelector('[data-option="2"]').click();
            const again = handle.commit();
            return {{first, again, seen, names: Array.from(host.querySelectorAll('input'), (i) => i.name),
                     stored: localStorage.getItem('deniable:report:ticks:did')}};
        }}""", design)
    first = out["first"]
    assert set(first) == {"report", "design", "epsilon"} and first["design"] == design["design_fingerprint"]
    assert len(first["report"]) == 3 and set(first["report"]) <= {0, 1}
    assert out["again"] == first and out["seen"] == [first, first]  # randomized once
    assert out["stored"] == "".join(map(str, first["report"]))
    assert out["names"] == ["", "", ""]
