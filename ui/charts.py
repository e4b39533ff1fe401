"""Plotly figures for the pages. Each draws numbers the planner computed; none computes one.

Figures are built as one dict and validated once (`go.Figure(spec)`): plotly's add_hline/add_vline
helpers cost tens of milliseconds each, which a live slider cannot afford.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from planner.breakdowns import Stack
from planner.fmt import num
from planner.slo import TradeoffPoint
from planner.sweeps import TrafficPoint
from planner.variations import FigureDiff

__all__ = ["diff_chart", "stacked_bars", "tradeoff_chart", "utilization_vs_traffic_chart", "waterfall_chart"]

COLORS = {
    "weights": "#4C78A8",
    "reserve": "#9D9D9D",
    "KV cache": "#F58518",
    "not used by the engine": "#E5E5E5",
    "prefill": "#E45756",
    "decode": "#4C78A8",
    "headroom": "#D9EAD3",
}
_MARGIN = {"l": 10, "r": 10, "t": 40, "b": 10}
_LEGEND = {"orientation": "h", "y": -0.25, "traceorder": "normal"}


def hline(
    y: float, text: str, color: str, dash: str = "dash", yref: str = "y", side: str = "right"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A horizontal line across the plot at y, with its label at one end."""
    line = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": yref, "y0": y, "y1": y, "line": {"color": color, "dash": dash}}
    x = 1 if side == "right" else 0
    label = {"xref": "paper", "x": x, "xanchor": side, "yref": yref, "y": y, "yanchor": "bottom", "text": text, "showarrow": False}
    return line, label


def vline(x: float, text: str, color: str = "gray", dash: str = "dot", label_y: float = 1.0) -> tuple[dict[str, Any], dict[str, Any]]:
    """A vertical line at x, its label above the plot (or at `label_y` of its height, to keep close labels apart)."""
    line = {"type": "line", "yref": "paper", "y0": 0, "y1": 1, "xref": "x", "x0": x, "x1": x, "line": {"color": color, "dash": dash}}
    label = {"yref": "paper", "y": label_y, "yanchor": "bottom", "xref": "x", "x": x, "text": text, "showarrow": False}
    if label_y < 1:
        label.update({"xanchor": "left", "bgcolor": "rgba(255,255,255,0.8)"})
    return line, label


def figure(data: list[dict[str, Any]], layout: dict[str, Any], marks: Sequence[tuple[dict[str, Any], dict[str, Any]]] = ()) -> go.Figure:
    layout = {"margin": _MARGIN, "legend": _LEGEND, **layout}
    layout["shapes"] = [line for line, _ in marks]
    layout["annotations"] = [label for _, label in marks]
    return go.Figure({"data": data, "layout": layout})


def stacked_bars(stacks: Sequence[Stack], title: str, *, percent: bool = False, height: int = 220) -> go.Figure:
    """Horizontal stacked bars, one per Stack, parts in order; fractions shown as percentages."""
    names = list(dict.fromkeys(p.name for s in stacks for p in s.parts))
    scale = 100.0 if percent else 1.0
    unit = "%" if percent else stacks[0].unit
    data = []
    for name in names:
        values = [next((p.value for p in s.parts if p.name == name), 0.0) * scale for s in stacks]
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": name,
                "y": [s.label for s in stacks],
                "x": values,
                "marker": {"color": COLORS.get(name)},
                "text": [num(v) for v in values],
                "textposition": "inside",
                "hovertemplate": f"{name}: %{{x:.1f}} {unit}<extra></extra>",
            }
        )
    marks = [vline(100, "100%", color="black", dash="dash")] if percent else []
    return figure(data, {"barmode": "stack", "title": {"text": f"{title} ({unit})"}, "height": height}, marks)


def utilization_vs_traffic_chart(points: Sequence[TrafficPoint]) -> go.Figure:
    x = [p.multiplier for p in points]
    data = [
        {"type": "scatter", "mode": "lines+markers", "name": "with prefix caching", "x": x, "y": [p.utilization * 100 for p in points]},
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "without prefix caching",
            "x": x,
            "y": [p.utilization_no_prefix_cache * 100 for p in points],
        },
    ]
    layout = {
        "title": {"text": "Utilization against a traffic multiplier"},
        "xaxis": {"title": {"text": "peak traffic, x the brief's"}},
        "yaxis": {"title": {"text": "utilization (%)"}},
        "height": 340,
    }
    return figure(data, layout, [hline(100, "100%", "black"), vline(1.0, "the brief's peak")])


def waterfall_chart(title: str, steps: Sequence[tuple[str, float]], target_ms: float, p50_ms: float, p95_ms: float) -> go.Figure:
    """A latency budget, one bar per component from the top, each starting where the previous ended (plotly sums
    them); the target and the percentiles as vertical lines."""
    data = [
        {
            "type": "waterfall",
            "orientation": "h",
            "y": [name for name, _ in steps],
            "x": [ms for _, ms in steps],
            "measure": ["relative"] * len(steps),
            "text": [num(ms, "ms") for _, ms in steps],
            "textposition": "outside",
            "connector": {"line": {"color": "#BBBBBB"}},
            "increasing": {"marker": {"color": "#4C78A8"}},
            "hovertemplate": "%{y}: %{x:.1f} ms<extra></extra>",
        }
    ]
    marks = [vline(target_ms, f"target {target_ms:g}", "#C0392B", dash="dash")]
    marks += [vline(p95_ms, f"p95 {p95_ms:.0f}", "#E67E22")] if math.isfinite(p95_ms) else []  # unbounded: no line
    marks += [vline(p50_ms, f"p50 {p50_ms:.0f}", "#27AE60", label_y=0.02)] if math.isfinite(p50_ms) else []
    layout = {
        "title": {"text": title},
        "xaxis": {"title": {"text": "ms"}},
        "yaxis": {"autorange": "reversed", "automargin": True},
        "height": 120 + 38 * len(steps),
        "showlegend": False,
    }
    return figure(data, layout, marks)


def tradeoff_chart(
    title: str, x_title: str, points: Sequence[TradeoffPoint], current: float, ttft_target_ms: float, itl_target_ms: float
) -> go.Figure:
    """p95 TTFT (left axis) and ITL (right axis) against one engine limit, each with its target; the brief's value marked."""
    x = [p.x for p in points]
    data = [
        {"type": "scatter", "mode": "lines+markers", "name": "p95 TTFT (ms)", "x": x, "y": [p.ttft_p95_ms for p in points], "yaxis": "y"},
        {"type": "scatter", "mode": "lines+markers", "name": "p95 ITL (ms)", "x": x, "y": [p.itl_p95_ms for p in points], "yaxis": "y2"},
    ]
    layout = {
        "title": {"text": title},
        "height": 360,
        "xaxis": {"title": {"text": x_title}, "type": "log"},
        "yaxis": {"title": {"text": "p95 TTFT (ms)"}},
        "yaxis2": {"title": {"text": "p95 ITL (ms)"}, "overlaying": "y", "side": "right"},
    }
    marks = [
        hline(ttft_target_ms, "TTFT target", "#1F77B4", side="left"),
        hline(itl_target_ms, "ITL target", "#FF7F0E", yref="y2"),
        vline(math.log10(current), "the brief"),  # shapes on a log axis take the exponent
    ]
    return figure(data, layout, marks)


def diff_chart(diffs: Sequence[FigureDiff]) -> go.Figure:
    """Each figure's change against the baseline, in percent (the planner's change_pct)."""
    shown = [d for d in diffs if math.isfinite(d.change_pct)]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": [d.figure for d in shown],
            "x": [d.change_pct for d in shown],
            "marker": {"color": ["#E45756" if d.change_pct > 0 else "#4C78A8" for d in shown]},
            "text": [f"{d.change_pct:+.0f}%" for d in shown],
            "textposition": "outside",
            "hovertemplate": "%{y}: %{x:+.1f}%<extra></extra>",
        }
    ]
    layout = {
        "title": {"text": "Change against the baseline (%)"},
        "yaxis": {"autorange": "reversed", "automargin": True},
        "height": 120 + 26 * len(shown),
        "showlegend": False,
    }
    return figure(data, layout, [vline(0, "", "black", dash="solid")])
