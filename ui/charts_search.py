"""The design search's frontier as a plotly chart: each point a design, its hover the design, its customdata the
point's index in the search result's frontier (the page opens that design when it is clicked)."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from planner.fmt import num, pct
from planner.search import Point, SearchResult
from ui.charts import figure, hline

__all__ = ["FRONTIER_AXES", "frontier_chart"]

# What the vertical axis can show: its label -> the Point field it plots
FRONTIER_AXES: dict[str, str] = {
    "p95 TTFT (ms)": "ttft_p95_ms",
    "p95 ITL (ms)": "itl_p95_ms",
    "output tokens/s per GPU": "output_tokens_per_s_per_gpu",
}
_MEETS = "#2E7D32"
_MISSES = "#C0392B"


def _hover(p: Point) -> str:
    sim = p.simulated
    simulated = (
        f"simulated: p95 TTFT {num(sim.ttft_p95_ms, 'ms')}, p95 ITL {num(sim.itl_p95_ms, 'ms')}, SLO {'met' if sim.meets_slo else 'missed'}"
        if sim is not None
        else p.simulation_note or "not simulated"
    )
    verdict = "meets the SLO" + (" with N+1" if p.availability_ok else ", no N+1") if p.meets_slo else "misses the SLO"
    lines = [
        p.label,
        f"${num(p.usd_per_million_output_tokens)} per M output tokens, ${p.usd_per_hour:,.0f}/hour, {p.gpus} GPUs",
        f"p95 TTFT {num(p.ttft_p95_ms, 'ms')}, p95 ITL {num(p.itl_p95_ms, 'ms')}, utilization {pct(p.utilization)}",
        f"{verdict}; {simulated}",
        "click to open this design",
    ]
    return "<br>".join(line.replace("<", "&lt;") for line in lines)


def frontier_chart(result: SearchResult, y_label: str, targets: dict[str, float]) -> go.Figure:
    """$/M output tokens against the chosen figure, points that meet the SLO with N+1 in green, the best as a star."""
    key = FRONTIER_AXES[y_label]
    data: list[dict[str, Any]] = []
    groups = {
        "meets the SLO with N+1": [i for i, p in enumerate(result.frontier) if p.meets_slo and p.availability_ok],
        "misses the SLO or N+1": [i for i, p in enumerate(result.frontier) if not (p.meets_slo and p.availability_ok)],
    }
    for name, indices in groups.items():
        points = [result.frontier[i] for i in indices]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": [p.usd_per_million_output_tokens for p in points],
                "y": [getattr(p, key) for p in points],
                "customdata": indices,
                "hovertext": [_hover(p) for p in points],
                "hoverinfo": "text",
                "marker": {"color": _MEETS if name.startswith("meets") else _MISSES, "size": 10},
            }
        )
    if result.best is not None:
        best = result.best
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "best (cheapest meeting the SLO with N+1)",
                "x": [best.usd_per_million_output_tokens],
                "y": [getattr(best, key)],
                "hovertext": [_hover(best)],
                "hoverinfo": "text",
                "marker": {"symbol": "star", "size": 18, "color": "#F1C40F", "line": {"color": "black", "width": 1}},
            }
        )
    target = targets.get(key)
    marks = [hline(target, "target", "#555555")] if target is not None and math.isfinite(target) else []
    layout = {
        "title": {"text": f"The frontier: $ per M output tokens against {y_label}"},
        "xaxis": {"title": {"text": "$ per million output tokens"}},
        "yaxis": {"title": {"text": y_label}},
        "height": 420,
        "hovermode": "closest",
    }
    return figure(data, layout, marks)
