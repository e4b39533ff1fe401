"""Plotly figures for the pages. Each draws numbers the planner computed; none computes one."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from planner.breakdowns import Stack
from planner.slo import TradeoffPoint
from planner.sweeps import TrafficPoint

__all__ = ["stacked_bars", "tradeoff_chart", "utilization_vs_traffic_chart", "waterfall_chart"]

COLORS = {
    "weights": "#4C78A8",
    "reserve": "#9D9D9D",
    "KV cache": "#F58518",
    "not used by the engine": "#E5E5E5",
    "prefill": "#E45756",
    "decode": "#4C78A8",
    "headroom": "#D9EAD3",
}
_LAYOUT = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "legend": {"orientation": "h", "y": -0.25, "traceorder": "normal"}}


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
    fig.update_layout(barmode="stack", title=f"{title} ({unit})", height=height, **_LAYOUT)
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


def waterfall_chart(title: str, steps: Sequence[tuple[str, float]], target_ms: float, p50_ms: float, p95_ms: float) -> go.Figure:
    """A latency budget: each component stacked on the previous (plotly sums them), the target and percentiles as lines."""
    fig = go.Figure(
        go.Waterfall(
            x=[name for name, _ in steps],
            y=[ms for _, ms in steps],
            measure=["relative"] * len(steps),
            text=[f"{ms:.1f}" for _, ms in steps],
            textposition="outside",
            connector={"line": {"color": "#BBBBBB"}},
            increasing={"marker": {"color": "#4C78A8"}},
            hovertemplate="%{x}: %{y:.1f} ms<extra></extra>",
        )
    )
    fig.add_hline(y=target_ms, line_dash="dash", line_color="#C0392B", annotation_text=f"target {target_ms:g} ms")
    fig.add_hline(
        y=p95_ms, line_dash="dot", line_color="#E67E22", annotation_text=f"p95 {p95_ms:.0f} ms", annotation_position="bottom right"
    )
    fig.add_hline(
        y=p50_ms, line_dash="dot", line_color="#27AE60", annotation_text=f"p50 {p50_ms:.0f} ms", annotation_position="bottom left"
    )
    fig.update_layout(title=title, yaxis_title="ms", height=380, showlegend=False, **_LAYOUT)
    return fig


def tradeoff_chart(
    title: str, x_title: str, points: Sequence[TradeoffPoint], current: float, ttft_target_ms: float, itl_target_ms: float
) -> go.Figure:
    """p95 TTFT and ITL against one engine limit, each with its target; the brief's value marked."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    x = [p.x for p in points]
    fig.add_scatter(x=x, y=[p.ttft_p95_ms for p in points], mode="lines+markers", name="p95 TTFT (ms)", secondary_y=False)
    fig.add_scatter(x=x, y=[p.itl_p95_ms for p in points], mode="lines+markers", name="p95 ITL (ms)", secondary_y=True)
    fig.add_hline(y=ttft_target_ms, line_dash="dash", line_color="#1F77B4", annotation_text="TTFT target", secondary_y=False)
    fig.add_hline(y=itl_target_ms, line_dash="dash", line_color="#FF7F0E", annotation_text="ITL target", secondary_y=True)
    fig.add_vline(x=current, line_dash="dot", line_color="gray", annotation_text="the brief")
    fig.update_layout(title=title, height=360, **_LAYOUT)
    fig.update_xaxes(title_text=x_title, type="log")
    fig.update_yaxes(title_text="p95 TTFT (ms)", secondary_y=False)
    fig.update_yaxes(title_text="p95 ITL (ms)", secondary_y=True)
    return fig
