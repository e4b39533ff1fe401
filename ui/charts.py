"""Plotly figures for the pages. Each draws numbers the planner computed; none computes one."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from planner.breakdowns import Stack
from planner.sweeps import TrafficPoint

__all__ = ["stacked_bars", "utilization_vs_traffic_chart"]

COLORS = {
    "weights": "#4C78A8",
    "reserve": "#9D9D9D",
    "KV cache": "#F58518",
    "not used by the engine": "#E5E5E5",
    "prefill": "#E45756",
    "decode": "#4C78A8",
    "headroom": "#D9EAD3",
}
_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "legend": {"orientation": "h", "y": -0.25}}


def stacked_bars(stacks: Sequence[Stack], title: str, *, percent: bool = False, height: int = 220) -> go.Figure:
    """Horizontal stacked bars, one per Stack, parts in order; fractions shown as percentages."""
    fig = go.Figure()
    names = list(dict.fromkeys(p.name for s in stacks for p in s.parts))
    scale = 100.0 if percent else 1.0
    unit = "%" if percent else stacks[0].unit
    for name in names:
        values = [next((p.value for p in s.parts if p.name == name), 0.0) * scale for s in stacks]
        fig.add_bar(
            y=[s.label for s in stacks],
            x=values,
            name=name,
            orientation="h",
            marker_color=COLORS.get(name),
            text=[f"{v:.1f}" for v in values],
            textposition="inside",
            hovertemplate=f"{name}: %{{x:.1f}} {unit}<extra></extra>",
        )
    fig.update_layout(barmode="stack", title=title, height=height, xaxis_title=unit, **_LAYOUT)
    if percent:
        fig.add_vline(x=100, line_dash="dash", line_color="black", annotation_text="100%")
    return fig


def utilization_vs_traffic_chart(points: Sequence[TrafficPoint]) -> go.Figure:
    fig = go.Figure()
    x = [p.multiplier for p in points]
    fig.add_scatter(x=x, y=[p.utilization * 100 for p in points], mode="lines+markers", name="with prefix caching")
    fig.add_scatter(x=x, y=[p.utilization_no_prefix_cache * 100 for p in points], mode="lines+markers", name="without prefix caching")
    fig.add_hline(y=100, line_dash="dash", line_color="black", annotation_text="100%")
    fig.add_vline(x=1.0, line_dash="dot", line_color="gray", annotation_text="the brief's peak")
    fig.update_layout(
        title="Utilization against a traffic multiplier",
        xaxis_title="peak traffic, x the brief's",
        yaxis_title="utilization (%)",
        height=340,
        **_LAYOUT,
    )
    return fig
