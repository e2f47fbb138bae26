"""Visual comparison: every chart kind at the extremes (:func:`support.charts.extreme_charts`), drawn by
chromium at 1280 and 390 px, against the committed screenshots in ``tests/data/visual/``.

The comparison runs in the browser (a canvas reads both PNGs' pixels): a pixel differs when one of
its channels differs by more than :data:`CHANNEL` levels, and a chart passes when at most
:data:`SHARE` of its pixels differ and its size is the same.  On a failure the current screenshot
and a picture of the differing pixels (red) go to ``test-artifacts/visual/``.  After a change that
is meant to change the charts, look at those pictures, then write new baselines::

    DENIABLE_UPDATE_BASELINES=1 .venv/bin/python -m pytest tests/e2e/test_visual.py -p no:xdist

(the test then writes the screenshots it takes as the baselines, and passes).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from support.charts import CHART_PAGE, extreme_charts

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
BASELINES = ROOT / "tests" / "data" / "visual"
ARTIFACTS = ROOT / "test-artifacts" / "visual"
WIDTHS = [1280, 390]
CHANNEL = 40  # levels of 255 a channel may move (antialiasing) before the pixel counts as different
SHARE = 0.002  # of a chart's pixels that may differ

COMPARE = """async ([before, after]) => {
  const load = async (b64) => createImageBitmap(await (await fetch("data:image/png;base64," + b64)).blob());
  const [a, b] = [await load(before), await load(after)];
  if (a.width !== b.width || a.height !== b.height)
    return {size: [a.width, a.height, b.width, b.height], differing: -1, diff: null};
  const canvas = (img) => { const c = new OffscreenCanvas(img.width, img.height);
                            const x = c.getContext("2d"); x.drawImage(img, 0, 0); return [c, x]; };
  const [, ca] = canvas(a), [cb, cx] = canvas(b);
  const pa = ca.getImageData(0, 0, a.width, a.height).data, pb = cx.getImageData(0, 0, b.width, b.height).data;
  const out = cx.createImageData(b.width, b.height);
  let differing = 0;
  for (let i = 0; i < pa.length; i += 4) {
    const far = Math.max(Math.abs(pa[i] - pb[i]), Math.abs(pa[i + 1] - pb[i + 1]), Math.abs(pa[i + 2] - pb[i + 2]),
                         Math.abs(pa[i + 3] - pb[i + 3])) > %d;
    differing += far;
    out.data.set(far ? [255, 0, 0, 255] : [pb[i], pb[i + 1], pb[i + 2], 60], i);
  }
  cx.putImageData(out, 0, 0);
  const blob = await cb.convertToBlob({type: "image/png"});
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let text = ""; for (const byte of bytes) text += String.fromCharCode(byte);
  return {size: [a.width, a.height], differing, diff: btoa(text)};
}""" % CHANNEL


def shots(browser, width: int, body: str) -> dict[str, bytes]:
    """Each chart of ``body`` as a PNG, by its chart id, drawn at ``width``."""
    context = browser.new_context(viewport={"width": width, "height": 900}, device_scale_factor=1)
    try:
        page = context.new_page()
        page.set_content(CHART_PAGE.format(body=body))
        out = {}
        for figure in page.locator("figure.chart").all():
            name = figure.locator("svg title").first.get_attribute("id").removesuffix("-title")
            out[name] = figure.screenshot(animations="disabled")
        return out
    finally:
        context.close()


def compare(browser, before: bytes, after: bytes) -> dict:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto("about:blank")
        return page.evaluate(COMPARE, [base64.b64encode(before).decode(), base64.b64encode(after).decode()])
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_charts_look_as_their_committed_baselines(browser, width):
    current = shots(browser, width, extreme_charts())
    assert len(current) == 8
    if os.environ.get("DENIABLE_UPDATE_BASELINES"):
        BASELINES.mkdir(parents=True, exist_ok=True)
        for name, png in current.items():
            (BASELINES / f"{name}-{width}.png").write_bytes(png)
    problems = []
    for name, png in current.items():
        path = BASELINES / f"{name}-{width}.png"
        if not path.exists():
            problems.append(f"{path.name}: no baseline (see this module's notes to write one)")
            continue
        found = compare(browser, path.read_bytes(), png)
        pixels = found["size"][0] * found["size"][1]
        if found["differing"] < 0 or found["differing"] > SHARE * pixels:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / f"{name}-{width}.png").write_bytes(png)
            if found["diff"]:
                (ARTIFACTS / f"{name}-{width}-diff.png").write_bytes(base64.b64decode(found["diff"]))
            said = ("size " + "×".join(map(str, found["size"])) if found["differing"] < 0
                    else f"{found['differing']:,} of {pixels:,} pixels")
            problems.append(f"{path.name}: {said} differ (test-artifacts/visual/)")
    assert problems == [], "\n".join(problems)


def test_the_comparison_sees_a_moved_bar(browser):
    """The check itself: the same bar chart with one estimate moved from 50 % to 60 % differs, and a
    chart compared with itself does not."""
    from deniable.server.web.dashboard import charts

    def bars(estimate):
        svg = charts.estimate_bars(["Yes", "No"], [estimate, 1 - estimate], [estimate - 0.05, 0.95 - estimate],
                                   [estimate + 0.05, 1.05 - estimate], title="bars", chart_id="bars")
        return f'<figure class="chart">{svg}</figure>'

    first, moved = shots(browser, 1280, bars(0.5))["bars"], shots(browser, 1280, bars(0.6))["bars"]
    assert compare(browser, first, first)["differing"] == 0
    found = compare(browser, first, moved)
    assert found["differing"] > SHARE * found["size"][0] * found["size"][1]
