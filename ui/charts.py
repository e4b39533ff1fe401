"""Plotly figures for the pages. Each draws numbers the planner computed; none computes one.

Figures are built as one dict and validated once (`go.Figure(spec)`): plotly's add_hline/add_vline
helpers cost tens of milliseconds each, which a live slider cannot afford. One colour scheme (PALETTE) for
every chart; titles short and legends below, so a chart reads at 390 px. Marks that must sit at a data value
(the brief's engine limit) are drawn as traces, which every axis type places at their data value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from planner.breakdowns import LatencyPath, Stack
from planner.fmt import num
from planner.slo import TradeoffPoint, WaterfallStep
from planner.speculative import SpecPoint
from planner.sweeps import TrafficPoint
from planner.uncertainty import Uncertainty

__all__ = [
    "BAR_TEXT",
    "HALO",
    "OUTSIDE_TEXT",
    "PALETTE",
    "itl_waterfall_chart",
    "stacked_bars",
    "tradeoff_chart",
    "ttft_waterfall_chart",
    "utilization_vs_traffic_chart",
]

PALETTE = {
    "primary": "#4C78A8",  # the design's own figure: with prefix caching, TTFT, the mean path
    "secondary": "#F58518",  # its companion: ITL, the p95 path, KV
    "target": "#C0392B",  # targets and limits, and what misses them
    "ok": "#54A24B",
    "muted": "#9D9D9D",  # references: without prefix caching, the fixed path
    "light": "#D9EAD3",
    "text": "#31333F",
}
COLORS = {
    "weights": PALETTE["primary"],
    "reserve": PALETTE["muted"],
    "KV cache": PALETTE["secondary"],
    "not used by the engine": "#E5E5E5",
    "prefill": PALETTE["target"],
    "decode": PALETTE["primary"],
    "idle (sizing)": PALETTE["light"],
}
# legends sit between the title and the plot, where a narrow screen still shows them whole
_LEGEND = {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "xanchor": "left", "traceorder": "normal"}
_TITLE = {"x": 0, "xanchor": "left", "y": 0.99, "yanchor": "top"}
_FONT = {"size": 13}


def hline(
    y: float, text: str, color: str, dash: str = "dash", yref: str = "y", side: str = "right"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A horizontal line across the plot at y, with its label at one end."""
    line = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": yref, "y0": y, "y1": y, "line": {"color": color, "dash": dash}}
    x = 1 if side == "right" else 0
    label = {"xref": "paper", "x": x, "xanchor": side, "yref": yref, "y": y, "yanchor": "bottom", "text": text, "showarrow": False}
    label["font"] = {"color": color}
    return line, label


def vline(
    x: float, text: str, color: str = "gray", dash: str = "dot", label_y: float = 1.0, layer: str = "above"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A vertical line at x on a linear axis, its label above the plot (or at `label_y` of its height); `layer`
    "below" draws it beneath the bars and the values written beside them."""
    line = {"type": "line", "layer": layer, "yref": "paper", "y0": 0, "y1": 1, "xref": "x", "x0": x, "x1": x}
    line["line"] = {"color": color, "dash": dash}
    label = {"yref": "paper", "y": label_y, "yanchor": "bottom", "xref": "x", "x": x, "text": text, "showarrow": False}
    label["font"] = {"color": color}
    if label_y < 1:
        label.update({"xanchor": "left", "bgcolor": "rgba(255,255,255,0.8)"})
    return line, label


def vertical(x: float, categories: Sequence[str], name: str, color: str, dash: str = "dash") -> dict[str, Any]:
    """A vertical mark across a chart's categories as a trace: placed at its data value, named in the legend (where
    its label never collides with the bars)."""
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": [x, x],
        "y": [categories[0], categories[-1]],
        "line": {"color": color, "dash": dash, "width": 2},
        "hoverinfo": "name",
    }


BAR_TEXT = {"textfont": {"size": 12}, "constraintext": "none", "cliponaxis": False}
# A white halo round a value written beside its bar on the white plot: a line that passes under it (a p95, a
# target) stops short of the glyphs instead of running through them.
HALO = "0 0 3px white, 0 0 3px white, 1px 1px 0 white, -1px -1px 0 white, 1px -1px 0 white, -1px 1px 0 white, 2px 0 0 white, -2px 0 0 white"
OUTSIDE_TEXT = {**BAR_TEXT, "textfont": {"size": 12, "shadow": HALO}}
_ROOM = 1.15  # how far an axis runs past the largest value or mark, for the text beside it


# Margins wide enough for what Plotly's auto-margin would push them to (measured in Chromium at 13 px type): an
# axis's labels, its title, a title and a legend row above the plot. Plotly only widens a margin that is too narrow,
# and each widening draws the whole chart again: with the margins right it is drawn once per control change, not two
# or three times (a third less browser time on the Failure modes page's charts).
_NARROW = frozenset("ijlrtf.,:;'|!() ")
_AXIS_TITLE_LEFT_PX = 85  # numeric tick labels and a rotated axis title
_NUMERIC_LEFT_PX = 50
_BOTTOM_PX = {True: 68, False: 38}  # tick labels with and without an axis title under them
_TOP_PX = 80  # the title and one legend row
_RIGHT_PX = 14  # the last tick label's overhang
_BAR_TEXT_PAD_PX = 6  # the gap Plotly leaves between a bar's end and its outside label ('unbounded' lost its last letter)
_LABEL_LINE_PX = 18  # a category label's second line
_LEGEND_ROW_PX = 20
_LEGEND_WIDTH_PX = 440  # a chart in half a wide page; a phone's narrower column may still widen the top margin
_LEGEND_ENTRY_PX = 40  # the symbol and the gaps of one legend entry


def _text_px(text: str) -> float:
    """About how wide a line of 13 px type is: narrow letters, capitals and digits, the rest."""
    return sum(3.6 if c in _NARROW else 8.0 if c.isupper() or c.isdigit() or c in "mwMW%" else 6.4 for c in text)


def _axes(layout: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [value for key, value in layout.items() if key.startswith(prefix) and isinstance(value, dict)]


def _titled(axis: dict[str, Any]) -> bool:
    return bool(axis.get("title", {}).get("text"))


def _writes_right_of_axes(trace: dict[str, Any]) -> bool:
    """A trace whose values are written to the right of where it ends, unclipped: a text trace, or a horizontal bar's
    outside labels."""
    if trace.get("cliponaxis") is not False:
        return False
    return trace.get("mode") == "text" or (trace.get("orientation") == "h" and trace.get("textposition") == "outside")


def _margin(data: list[dict[str, Any]], layout: dict[str, Any]) -> dict[str, float]:
    """The margins the chart's labels, titles and legend need (see _text_px and the figures above)."""
    y_axes, x_axes = _axes(layout, "yaxis"), _axes(layout, "xaxis")
    lines = 1
    if any(axis.get("automargin") for axis in y_axes):  # category labels beside the bars, a <br> between their lines
        ticks = [t for axis in y_axes for t in axis.get("ticktext", ())]  # rows placed by number, named by their ticks
        labels = [str(y).split("<br>") for trace in data for y in trace.get("y", ()) if isinstance(y, str)]
        labels += [str(t).split("<br>") for t in ticks]
        left = 20 + max((_text_px(re.sub(r"<[^>]+>", "", line)) for label in labels for line in label), default=0)
        lines = max((len(label) for label in labels), default=1)
    else:
        left = _AXIS_TITLE_LEFT_PX if any(_titled(axis) for axis in y_axes) else _NUMERIC_LEFT_PX
    names = [trace["name"] for trace in data if trace.get("name") and trace.get("showlegend", True) is not False]
    legend_px = sum(_LEGEND_ENTRY_PX + _text_px(name) for name in names) if layout.get("showlegend", len(names) > 1) else 0
    rows = max(1, math.ceil(legend_px / _LEGEND_WIDTH_PX))
    # values written past their bars (a text trace drawn outside the axes) may run beyond the axis's end on a narrow
    # screen: the right margin holds the longest, so none is cut ("unbounded" at 390 px was)
    outside = [str(t) for trace in data if _writes_right_of_axes(trace) for t in trace.get("text", ())]
    pad = _BAR_TEXT_PAD_PX if any(trace.get("type") == "bar" for trace in data if _writes_right_of_axes(trace)) else 0
    return {
        "l": round(left),
        "r": round(max([_RIGHT_PX, *(_text_px(t) + pad for t in outside)])),
        "t": _TOP_PX + _LEGEND_ROW_PX * (rows - 1),
        "b": _BOTTOM_PX[any(_titled(axis) for axis in x_axes)] + _LABEL_LINE_PX * (lines - 1),  # the last row's lines hang below
    }


def figure(data: list[dict[str, Any]], layout: dict[str, Any], marks: Sequence[tuple[dict[str, Any], dict[str, Any]]] = ()) -> go.Figure:
    layout = {"margin": _margin(data, layout), "legend": _LEGEND, "font": _FONT, **layout}
    if "title" in layout:
        layout["title"] = {**_TITLE, **layout["title"]}
    layout["shapes"] = [*layout.get("shapes", []), *(line for line, _ in marks)]
    layout["annotations"] = [*layout.get("annotations", []), *(label for _, label in marks)]
    return go.Figure({"data": data, "layout": layout})


def _finite(values: Sequence[float]) -> list[float | None]:
    """Values a chart can place: an infinite one (no steady state) becomes a gap, never a point at 0."""
    return [v if math.isfinite(v) else None for v in values]


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
                "x": _finite(values),
                "marker": {"color": COLORS.get(name)},
                "text": [num(v) for v in values],
                "textposition": "inside",
                "hovertemplate": f"{name}: %{{x:.1f}} {unit}<extra></extra>",
            }
        )
    marks = [vline(100, "100%", color="black", dash="dash")] if percent else []
    layout = {"barmode": "stack", "title": {"text": f"{title} ({unit})"}, "height": height, "yaxis": {"automargin": True}}
    return figure(data, layout, marks)


def utilization_vs_traffic_chart(points: Sequence[TrafficPoint], headroom_multiple: float, long_context_pool: bool) -> go.Figure:
    """Each limit of the verdict as traffic grows (planner.headroom): the first to cross 100% is the headroom."""
    x = [p.multiplier for p in points]

    def line(name: str, values: list[float], color: str, dash: str = "solid") -> dict[str, Any]:
        return {
            "type": "scatter",
            "mode": "lines+markers",
            "name": name,
            "x": x,
            "y": _finite([v * 100 for v in values]),
            "line": {"color": color, "dash": dash},
        }

    data = [line("general pool: load / capacity under the SLO", [p.general_load_vs_capacity for p in points], PALETTE["primary"])]
    if long_context_pool:
        data.append(line("long-context pool: GPU time", [p.long_context_utilization for p in points], PALETTE["secondary"]))
    data.append(line("sizing arithmetic (the worked design's utilization)", [p.utilization for p in points], PALETTE["muted"], "dot"))
    layout = {
        "title": {"text": "Each limit as traffic grows"},
        "xaxis": {"title": {"text": "peak traffic, x the brief's"}},
        "yaxis": {"title": {"text": "% of the limit"}, "ticksuffix": "%"},
        "height": 340,
    }
    # the brief's label inside the plot at its foot: above the plot it met the legend on a phone's narrow width
    marks = [hline(100, "100%", "black"), vline(1.0, "the brief", label_y=0.005)]
    if 0 < headroom_multiple <= max(x, default=0.0) and abs(headroom_multiple - 1.0) > 0.05:
        marks.append(vline(headroom_multiple, f"headroom x{num(headroom_multiple)}", color=PALETTE["target"], label_y=0.8))
    return figure(data, layout, marks)


# --- the SLO page ----------------------------------------------------------------------------------


def ttft_waterfall_chart(paths: Sequence[LatencyPath], target_ms: float | None, band: tuple[float, float, str] | None = None) -> go.Figure:
    """TTFT as a waterfall, one bar per part in the order a request meets them and a total bar, for the p95 path
    and the mean path side by side: each path's bars add up to its total (the p95 and the mean TTFT). The target
    is a vertical line (none when no target judges the design: an offline job's or a rollout's deadline does); `band` (low, high, label), where the plan gives one, a range on a row of its own under the
    total (where the real p95 falls, planner.uncertainty). Every value must be finite (the page says 'unbounded' instead of drawing a chart)."""
    colors = (PALETTE["secondary"], PALETTE["primary"])
    data = []
    for path, color in zip(paths, colors, strict=False):
        names = [p.name for p in path.parts] + ["TTFT"]
        values = [p.value for p in path.parts] + [path.total_ms]
        data.append(
            {
                "type": "waterfall",
                "orientation": "h",
                "name": f"{path.label}: {num(path.total_ms, 'ms')}",
                "offsetgroup": path.label,
                "y": names,
                "x": values,
                "measure": ["relative"] * len(path.parts) + ["total"],
                "text": [num(v) for v in values],
                "textposition": "outside",
                **OUTSIDE_TEXT,
                "connector": {"visible": False},
                "increasing": {"marker": {"color": color}},
                "totals": {"marker": {"color": color, "line": {"color": PALETTE["text"], "width": 1}}},
                "hovertemplate": f"{path.label}, %{{y}}: %{{x:.1f}} ms<extra></extra>",
            }
        )
    names = [p.name for p in paths[0].parts] + ["TTFT"] if paths else ["TTFT"]
    if target_ms is not None:
        data.append(vertical(target_ms, names, f"target {num(target_ms, 'ms')}", PALETTE["target"]))
    if band is not None:
        data.append(_range_on_row(band, TTFT_RANGE_ROW))
    rows = len(names) + (band is not None)
    targets = () if target_ms is None else (target_ms,)
    right = max([*targets, *(p.total_ms for p in paths), *((band[1],) if band is not None else ())]) * _ROOM
    layout = {
        "title": {"text": "Time to first token (ms)"},
        "waterfallmode": "group",
        "waterfallgroupgap": 0.15,
        "xaxis": {"title": {"text": "ms"}, "range": [0, right]},
        "yaxis": {"autorange": "reversed", "automargin": True},
        "height": 150 + 34 * rows,
        "showlegend": True,
    }
    return figure(data, layout)


def _line_below(x: float, color: str, dash: str, rows: tuple[float, float]) -> dict[str, Any]:
    """A vertical line over the category rows from `rows[0]` to `rows[1]` (their serial numbers: a category axis takes
    them for shapes), drawn beneath the bars: over a total's rows only, it never runs through the parts' values."""
    line = {"color": color, "dash": dash, "width": 2}
    y0, y1 = rows[0] - 0.5, rows[1] + 0.5
    return {"type": "line", "layer": "below", "xref": "x", "x0": x, "x1": x, "yref": "y", "y0": y0, "y1": y1, "line": line}


def _legend_line(name: str, color: str, dash: str) -> dict[str, Any]:
    """The legend's entry for a line drawn as a shape (_line_below)."""
    return {"type": "scatter", "x": [None], "y": [None], "mode": "lines", "name": name, "line": {"color": color, "dash": dash, "width": 2}}


TTFT_RANGE_ROW = "p95 range"  # the waterfalls' ranges sit on rows of their own: on the total's row they ran through its value
ITL_RANGE_ROW = "mean-gap range"


def _range_on_row(band: tuple[float, float, str], row: str) -> dict[str, Any]:
    """A horizontal range (low to high) on a waterfall's row of its own, under the total: where the real figure falls
    (planner.uncertainty)."""
    low, high, label = band
    return {
        "type": "scatter",
        "x": [low, high],
        "y": [row, row],
        "mode": "lines+markers",
        "name": label,
        "line": {"color": PALETTE["text"], "width": 3},
        "marker": {"symbol": "line-ns-open", "size": 14, "color": PALETTE["text"]},
        "hovertemplate": f"{label}: {num(low)} to {num(high, 'ms')}<extra></extra>",
    }


_ITL_SHORT = ("decode step", "prefill interference", "scheduler")  # the planner's three ITL components, as a chart labels them


def _itl_label(i: int, step: WaterfallStep) -> str:
    """A component's short label: the planner's three by position; a speculative step says so."""
    if step.component.startswith("speculative"):
        return "speculative step / tokens"
    return _ITL_SHORT[i] if i < len(_ITL_SHORT) else step.component


def itl_waterfall_chart(
    steps: Sequence[WaterfallStep],
    p95_ms: float,
    target_ms: float | None,
    metric: str,
    band: tuple[float, float, str] | None = None,
) -> go.Figure:
    """A reply's mean gap as a waterfall of its parts (decode step, prefill interference, scheduler) with a total bar,
    and the p95 of the judged metric (ITL or TPOT) and its target (none when no target judges the design) as vertical
    lines; `band` (low, high, label), where
    the plan gives one, a range on a row of its own under the total (where the real mean gap falls, planner.uncertainty)."""
    names = [_itl_label(i, s) for i, s in enumerate(steps)] + ["mean gap"]
    values = [s.ms for s in steps]
    total = sum(values)
    data = [
        {
            "type": "waterfall",
            "orientation": "h",
            "name": "a reply's mean gap",
            "y": names,
            "x": [*values, total],
            "measure": ["relative"] * len(steps) + ["total"],
            "text": [num(v) for v in [*values, total]],
            "textposition": "outside",
            **OUTSIDE_TEXT,
            "connector": {"visible": False},
            "increasing": {"marker": {"color": PALETTE["primary"]}},
            "totals": {"marker": {"color": PALETTE["primary"], "line": {"color": PALETTE["text"], "width": 1}}},
            "hovertemplate": "%{y}: %{x:.2f} ms<extra></extra>",
        }
    ]
    # the p95 and the target are compared with the total (and its range): their lines run over those rows only
    totals = (len(names) - 1, len(names) if band is not None else len(names) - 1)
    lines = [] if target_ms is None else [(target_ms, f"target {num(target_ms, 'ms')}", PALETTE["target"], "dash")]
    if math.isfinite(p95_ms):
        lines.insert(0, (p95_ms, f"p95 {metric}: {num(p95_ms, 'ms')}", PALETTE["secondary"], "dot"))
    data += [_legend_line(name, color, dash) for _, name, color, dash in lines]
    if band is not None:
        data.append(_range_on_row(band, ITL_RANGE_ROW))
    right = (
        max(v for v in (*(x for x, _, _, _ in lines), total, p95_ms, *(band[:2] if band is not None else ())) if math.isfinite(v)) * _ROOM
    )
    layout = {
        "title": {"text": f"Inter-token latency ({metric}, ms)"},
        "shapes": [_line_below(x, color, dash, totals) for x, _, color, dash in lines],
        "xaxis": {"title": {"text": "ms"}, "range": [0, right]},
        "yaxis": {"autorange": "reversed", "automargin": True},
        "height": 170 + 34 * (len(names) + (band is not None)),
        "showlegend": True,
    }
    return figure(data, layout)


def _round_ticks(values: Sequence[float]) -> tuple[list[float], list[str]]:
    """Tick positions at the swept values themselves (all of them round numbers), written as the planner writes them."""
    ticks = sorted(set(values))
    return ticks, [num(v) for v in ticks]


def tradeoff_chart(
    title: str,
    x_title: str,
    points: Sequence[TradeoffPoint],
    current: float,
    ttft_target_ms: float | None,
    itl_target_ms: float | None,
    *,
    log_x: bool = False,
    metric: str = "ITL",
    uncertainty: Uncertainty | None = None,
) -> go.Figure:
    """p95 TTFT (top) and the p95 the ITL target judges (bottom: ITL, or TPOT when `metric` is "TPOT") against one
    engine limit, each with its target (none when no target judges the design); the brief's value drawn as a trace at its own x (any axis type places a
    trace at its data value), with the brief's point on each curve. A value whose replica has no steady state has
    no point; an 'x' at the top of its panel says so. With the plan's `uncertainty`, a shaded range around each curve
    says where the real engine's p95 falls (the verdict bar's basis and coverage)."""
    x = [p.x for p in points]
    judged = [p.tpot_p95_ms if metric == "TPOT" else p.itl_p95_ms for p in points]
    panels = (
        ("y", "p95 TTFT", [p.ttft_p95_ms for p in points], ttft_target_ms, PALETTE["primary"], "ttft"),
        ("y2", f"p95 {metric}", judged, itl_target_ms, PALETTE["secondary"], "itl"),
    )
    data: list[dict[str, Any]] = []
    marks = []
    for axis, name, ys, target, color, kind in panels:
        finite = [v for v in ys if math.isfinite(v)]
        top = max([*finite, *(() if target is None else (target,))], default=0.0) * 1.1 or 1.0
        if uncertainty is not None and finite:
            data.append(_shaded_range(x, ys, uncertainty, kind, axis, color))
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{name} (ms)",
                "x": x,
                "y": _finite(ys),
                "yaxis": axis,
                "line": {"color": color},
                "hovertemplate": f"{x_title} %{{x:,}}: {name} %{{y:.1f}} ms<extra></extra>",
            }
        )
        unbounded = [xi for xi, v in zip(x, ys, strict=True) if not math.isfinite(v)]
        if unbounded:
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": "unbounded (the queue grows)",
                    "x": unbounded,
                    "y": [top] * len(unbounded),
                    "yaxis": axis,
                    "marker": {"symbol": "x", "size": 11, "color": PALETTE["target"]},
                    "showlegend": axis == "y",
                    "hovertemplate": f"{x_title} %{{x:,}}: {name} unbounded<extra></extra>",
                }
            )
        at_brief = [v for xi, v in zip(x, ys, strict=True) if xi == current and math.isfinite(v)]
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"the brief: {num(current)}",
                "x": [current, current],
                "y": [0, top],
                "yaxis": axis,
                "line": {"color": PALETTE["text"], "dash": "dot", "width": 1.5},
                "showlegend": axis == "y",
                "legendgroup": "brief",
                "hoverinfo": "skip",
            }
        )
        if at_brief:
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": f"the brief: {num(current)}",
                    "x": [current],
                    "y": at_brief,
                    "yaxis": axis,
                    "marker": {"symbol": "diamond", "size": 12, "color": color, "line": {"color": PALETTE["text"], "width": 1.5}},
                    "showlegend": False,
                    "legendgroup": "brief",
                    "hovertemplate": f"the brief: {name} %{{y:.1f}} ms<extra></extra>",
                }
            )
        if target is not None:
            marks.append(hline(target, f"target {num(target, 'ms')}", PALETTE["target"], yref=axis, side="left"))
    tickvals, ticktext = _round_ticks([*x, current])
    xaxis: dict[str, Any] = {"title": {"text": x_title}, "anchor": "y2"}
    if log_x:
        xaxis |= {"type": "log", "tickvals": tickvals, "ticktext": ticktext}
    else:
        xaxis |= {"tickformat": ",d", "rangemode": "tozero"}
    layout = {
        "title": {"text": title},
        "height": 460,
        "xaxis": xaxis,
        "yaxis": {"title": {"text": "p95 TTFT (ms)"}, "domain": [0.56, 1.0], "rangemode": "tozero"},
        "yaxis2": {"title": {"text": f"p95 {metric} (ms)"}, "domain": [0.0, 0.44], "rangemode": "tozero"},
    }
    return figure(data, layout, marks)


def _shaded_range(x: Sequence[float], ys: Sequence[float], u: Uncertainty, kind: str, axis: str, color: str) -> dict[str, Any]:
    """A shaded band from each finite point's low to its high (planner.uncertainty's range of a `kind` figure), drawn
    as one closed shape: along the highs, back along the lows."""
    points = [(xi, *u.range_of(v, kind)) for xi, v in zip(x, ys, strict=True) if math.isfinite(v)]
    return {
        "type": "scatter",
        "mode": "lines",
        "name": u.legend,
        "x": [p[0] for p in points] + [p[0] for p in reversed(points)],
        "y": [p[2] for p in points] + [p[1] for p in reversed(points)],
        "yaxis": axis,
        "fill": "toself",
        "fillcolor": _translucent(color),
        "line": {"width": 0},
        "showlegend": axis == "y",
        "legendgroup": "range",
        "hoverinfo": "skip",
    }


def _translucent(hex_color: str, alpha: float = 0.18) -> str:
    r, g, b = (int(hex_color.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha})"


def speculative_gain_chart(points: Sequence[SpecPoint], operating_batch: float, crossover_batch: float) -> go.Figure:
    """Speculation's gain in time per token against the batch: above 1 it pays, below it costs; the running batch and
    the crossover as vertical lines. The batch axis is drawn as log10 on a linear axis, labelled in sequences."""
    batches = [p.batch for p in points]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "gain: time a token without / with",
            "x": [math.log10(b) for b in batches],
            "y": [p.gain for p in points],
            "customdata": batches,
            "line": {"color": PALETTE["primary"], "width": 2},
            "hovertemplate": "batch %{customdata}: x%{y:.2f}<extra></extra>",
        }
    ]
    marks = [
        hline(1.0, "no gain", color=PALETTE["target"]),
        vline(math.log10(max(operating_batch, 1.0)), f"running batch {num(operating_batch)}"),
    ]
    right = max(batches)
    if math.isfinite(crossover_batch) and crossover_batch >= 1:
        marks.append(
            vline(math.log10(crossover_batch), f"off above {num(crossover_batch)}", color=PALETTE["target"], dash="dash", label_y=0.8)
        )
        right = max(right, crossover_batch)
    ticks = [b for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096) if b <= right * 1.5]
    layout = {
        "title": {"text": "Speculative decoding: gain by batch"},
        "xaxis": {
            "title": {"text": "running batch (sequences)"},
            "tickvals": [math.log10(b) for b in ticks],
            "ticktext": [str(b) for b in ticks],
            "range": [-0.1, math.log10(right) * 1.08 + 0.05],
        },
        "yaxis": {"title": {"text": "x time a token"}, "rangemode": "tozero"},
        "height": 320,
        "showlegend": False,
    }
    return figure(data, layout, marks)
