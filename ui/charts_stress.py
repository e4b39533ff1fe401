"""Charts of the Failure modes and Cost pages (same dict-built figures as ui.charts)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from planner.failures import FailureMode
from planner.fleet import FleetPoint
from planner.fmt import pct
from ui.charts import figure, hline, vline

__all__ = ["cost_vs_fleet_chart", "failure_chart"]


def failure_chart(failures: Sequence[FailureMode], binding: str) -> go.Figure:
    """Utilization per failure scenario, with and without prefix caching; the binding scenario outlined."""
    titles = [f.title for f in failures]
    outline = [3 if f.scenario == binding else 0 for f in failures]
    data = [
        {
            "type": "bar",
            "name": "utilization",
            "x": titles,
            "y": [f.utilization * 100 for f in failures],
            "marker": {"color": ["#E45756" if not f.ok else "#4C78A8" for f in failures], "line": {"width": outline, "color": "black"}},
            "text": [pct(f.utilization) for f in failures],
            "textposition": "outside",
        },
        {
            "type": "bar",
            "name": "without prefix caching",
            "x": titles,
            "y": [f.utilization_no_prefix_cache * 100 for f in failures],
            "marker": {"color": "#BBBBBB"},
        },
    ]
    layout = {
        "title": {"text": "Utilization under each failure (red: SLO missed; outlined: binds)"},
        "barmode": "group",
        "height": 380,
        "yaxis": {"title": {"text": "%"}},
    }
    return figure(data, layout, [hline(100, "100%", "black")])


def cost_vs_fleet_chart(points: Sequence[FleetPoint], current_nodes: int) -> go.Figure:
    over = [p for p in points if not p.carries_peak]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "$ per M output tokens",
            "x": [p.nodes for p in points],
            "y": [p.usd_per_million_output_tokens for p in points],
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": "cannot carry the peak",
            "x": [p.nodes for p in over],
            "y": [p.usd_per_million_output_tokens for p in over],
            "marker": {"color": "#E45756", "size": 12, "symbol": "x"},
        },
    ]
    layout = {
        "title": {"text": "$ per million output tokens against fleet size"},
        "xaxis": {"title": {"text": "nodes"}},
        "yaxis": {"title": {"text": "$ per M"}},
        "height": 340,
    }
    return figure(data, layout, [vline(current_nodes, "the brief")])
