"""Every chart kind at the extremes, on a bare page: what the chart layout and visual tests draw."""

from __future__ import annotations

from deniable.server.web.dashboard import analysis_charts, charts

LONG = "Once or twice, but only when the exam was not worth much at all"[:60]
assert len(LONG) == 60

CHART_PAGE = ('<!doctype html><html><head><style>body{{font-family:system-ui,sans-serif;margin:8px}}'
              'svg{{max-width:100%;height:auto;display:block}}</style></head><body>{body}</body></html>')


def extreme_charts() -> str:
    """Every chart kind at the extremes: 0 %, 100 %, a negative estimate and interval, long labels."""
    labels = ["Yes", LONG, "No", "Prefer not to say"]
    estimates, low, high = [1.0, 0.0, -0.031, 0.5], [0.93, 0.0, -0.25, 0.45], [1.0, 0.07, 0.04, 0.55]
    group = {"estimate": estimates, "ci_low": low, "ci_high": high}
    parts = [
        charts.estimate_bars(labels, estimates, low, high, title="bars", chart_id="bars"),
        charts.estimate_bars(["a", "b"], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], title="zeros", chart_id="zeros"),
        charts.estimate_bars(["a", "b"], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], title="ones", chart_id="ones"),
        charts.estimate_bars(["a", "b"], [-1.0, 2.0], [-1.0, 1.0], [0.0, 2.0], title="wide", chart_id="wide"),
        charts.grouped_bars(labels, [{"label": LONG, "n": 1234, **group}, {"label": "<30", "n": 99, **group},
                                     {"label": "not answered", "n": 0, **group}], title="groups", chart_id="g"),
        charts.heatmap([LONG, "No", "Yes"], [LONG, "Never", "Once", "Often"],
                       [[1.0, 0.0, -0.02, 0.5]] * 3, [[0.9, 0.0, -0.1, 0.4]] * 3, [[1.0, 0.1, 0.05, 0.6]] * 3,
                       title="heat", chart_id="heat"),
        analysis_charts.sequence_band(["2026-03-01", "2026-03-02", "2026-03-03"], [10, 1000, 100000],
                                      [1.0, 0.0, -0.02], [0.5, -0.3, -0.1], [1.0, 0.4, 0.05], [0.8, -0.1, -0.05],
                                      [1.0, 0.2, 0.01], title="band", chart_id="band"),
        analysis_charts.sequence_band(["2026-03-01"], [3], [12345.678], [-2345.5], [99999.25], None, None,
                                      title="mean", chart_id="mean", lower=-5000.0, upper=100000.0),
    ]
    return "".join(f'<figure class="chart">{p}</figure>' for p in parts)
