"""Charts of the Failure modes and Cost pages (same dict-built figures and colours as ui.charts).

Failure modes are charted by the figure that fails: each scenario's p95 TTFT and p95 ITL (or TPOT, the figure the brief's
ITL target judges) as a share of its target
(100% is the target: a bar past it misses), and beside them how busy it leaves the pools against their limits. An offline
job or a rollout batch has no latency target: its scenarios are charted by their time to finish as a share of the
deadline (100% is the deadline), the value written in the deadline's unit. An unbounded figure is drawn to the edge of
the chart, hatched, and labelled with the word.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from planner.failures import FailureMode
from planner.fleet import FleetPoint
from planner.fmt import UNBOUNDED, num, pct, usd
from planner.uncertainty import Uncertainty
from ui.charts import HALO, OUTSIDE_TEXT, PALETTE, figure, vline

__all__ = ["cost_vs_fleet_chart", "failure_deadline_chart", "failure_latency_chart", "failure_utilization_chart", "scenario_labels"]

_WHISKER = "rgba(49, 51, 63, 0.55)"  # the text colour, light enough that a bar's value stays legible across its range
_EDGE_PCT = 250.0  # how far the latency chart reaches at most (% of the target); beyond it, and unbounded, bars stop there
_TEXT_ROOM = 1.3  # the axis runs this far past the bars' reach: the values written after the longest bar and whisker
_GROUP = 0.8  # of a scenario's row, the height its bars take together
_ROW_PX = 44  # a scenario's row at least: its two-line label


def scenario_labels(failures: Sequence[FailureMode], binding: str, judge: str = "the SLO") -> list[str]:
    """Each scenario's name with its verdict on a second line (`judge`: what judges it, the SLO or the deadline); the
    binding one says so."""
    return [f"{f.title}<br>{'meets' if f.ok else 'misses'} {judge}{' (binds)' if f.scenario == binding else ''}" for f in failures]


def _judge(failures: Sequence[FailureMode]) -> str:
    """What judges the rows: an offline job's or a rollout's deadline (its rows carry their time against it), else the SLO."""
    return "the SLO" if all(f.objective_share is None for f in failures) else "the deadline"


def failure_deadline_chart(failures: Sequence[FailureMode], binding: str, times: Sequence[str], deadline: str) -> go.Figure:
    """An offline job's or a rollout batch's scenarios by what judges them: each one's time to finish as a share of the
    deadline (100%), one row per scenario, its time written past the bar in the deadline's unit (`times`, as the
    registry writes them; `deadline` likewise). A bar that misses is drawn in the target's colour, the binding one
    outlined; a scenario that cannot finish runs to the chart's edge, hatched."""
    labels = scenario_labels(failures, binding, "the deadline")
    shares = [f.objective_share * 100 if f.objective_share is not None else math.inf for f in failures]
    finite = [s for s in shares if math.isfinite(s)]
    reach = min(max([*finite, 110.0]), _EDGE_PCT)
    edge = reach * _TEXT_ROOM
    ends = [min(s, reach) for s in shares]
    binds = [f.scenario == binding for f in failures]
    data: list[dict[str, Any]] = [
        {
            "type": "bar",
            "orientation": "h",
            "name": "time to finish",
            "y": labels,
            "x": ends,
            "text": list(times),
            "textposition": "none",  # written by the text trace below, past the bar
            "marker": {
                "color": [PALETTE["primary"] if f.ok else PALETTE["target"] for f in failures],
                "line": {"color": PALETTE["text"], "width": [2.5 if b else 0 for b in binds]},
                "pattern": {"shape": ["/" if s > reach else "" for s in shares]},
            },
            "hovertemplate": "%{y}: %{text}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "text",
            "x": ends,
            "y": labels,
            "text": [f" {t} ({pct(s / 100)})" if math.isfinite(s) else f" {t}" for t, s in zip(times, shares, strict=True)],
            "textposition": "middle right",
            "textfont": {"size": 12, "color": PALETTE["text"], "shadow": HALO},
            "cliponaxis": False,
            "showlegend": False,
            "hoverinfo": "skip",
        },
    ]
    layout = {
        "title": {"text": "Time to finish against the deadline"},
        "height": 160 + _ROW_PX * len(failures),
        "xaxis": {"title": {"text": f"% of the {deadline} deadline"}, "range": [0, edge], "ticksuffix": "%"},
        "yaxis": {"autorange": "reversed", "automargin": True},
        "showlegend": False,  # one series: the title and the axis name it; the deadline's label sits above the plot
    }
    return figure(data, layout, [vline(100, f"deadline {deadline}", PALETTE["target"], dash="dash", layer="below")])


def _share(value_ms: float, target_ms: float) -> float:
    return value_ms / target_ms * 100 if math.isfinite(value_ms) else math.inf


def failure_latency_chart(
    failures: Sequence[FailureMode],
    binding: str,
    ttft_target_ms: float,
    itl_target_ms: float,
    uncertainty: Uncertainty | None = None,
    metric: str = "ITL",
) -> go.Figure:
    """p95 TTFT and the p95 gap figure the ITL target judges (`metric`: ITL, or TPOT when the brief's slo.itl_metric
    says so) of every scenario as a share of its target, one row per scenario; the target at 100%.
    With the plan's `uncertainty`, each bounded bar carries a whisker: where the real engine's p95 falls (the verdict
    bar's basis and coverage); a bar cut at the chart's reach or unbounded has none. Each bar's value is written past
    the end of its bar and its whisker, so no whisker runs through it: the rows are placed by number (scenario i at
    i, its two bars a bar's width either side) and the values are a text trace of their own."""
    labels = scenario_labels(failures, binding)
    judged = [f.tpot_p95_ms if metric == "TPOT" else f.itl_p95_ms for f in failures]
    series = (
        ("p95 TTFT", [f.ttft_p95_ms for f in failures], ttft_target_ms, PALETTE["primary"], "ttft"),
        (f"p95 {metric}", judged, itl_target_ms, PALETTE["secondary"], "itl"),
    )
    highs = [_share(uncertainty.range_of(v, kind)[1], t) if uncertainty else 0.0 for _, vs, t, _, kind in series for v in vs]
    finite = [x for x in [*(_share(v, t) for _, vs, t, _, _ in series for v in vs), *highs] if math.isfinite(x)]
    reach = min(max([*finite, 120.0]), _EDGE_PCT)  # bars, whiskers and values end here; the rest holds the text
    edge = reach * _TEXT_ROOM
    width = _GROUP / len(series)
    data: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    for j, (name, values, target, color, kind) in enumerate(series):
        shares = [_share(v, target) for v in values]
        rows = [i + (j - (len(series) - 1) / 2) * width for i in range(len(values))]
        whiskers = _whiskers(values, target, reach, uncertainty, kind) if uncertainty is not None else None
        text = [num(v, "ms") if math.isfinite(v) else UNBOUNDED for v in values]
        bar: dict[str, Any] = {
            "type": "bar",
            "orientation": "h",
            "name": f"{name} (target {num(target, 'ms')})",
            "y": rows,
            "x": [min(s, reach) for s in shares],
            "width": width,
            "text": text,
            "textposition": "none",  # written by the text trace below, past the whisker
            "customdata": labels,
            "marker": {"color": color, "pattern": {"shape": ["/" if s > reach else "" for s in shares]}},
            "hovertemplate": f"%{{customdata}}: {name} %{{text}}<extra></extra>",
        }
        ends = [min(s, reach) for s in shares]
        if whiskers is not None:
            bar["error_x"] = whiskers
            ends = [e + plus for e, plus in zip(ends, whiskers["array"], strict=True)]
        data.append(bar)
        texts.append(
            {
                "type": "scatter",
                "mode": "text",
                "x": ends,
                "y": rows,
                "text": [f" {t}" for t in text],
                "textposition": "middle right",
                "textfont": {"size": 12, "color": PALETTE["text"], "shadow": HALO},
                "cliponaxis": False,
                "showlegend": False,
                "hoverinfo": "skip",
            }
        )
    data += texts
    if uncertainty is not None:
        data.append(_legend_entry(f"{uncertainty.legend}: the whisker on each bar"))
    layout = {
        "title": {"text": "p95 latency against its target"},
        "barmode": "overlay",
        "height": 160 + 48 * len(failures),
        "xaxis": {"title": {"text": "% of the target"}, "range": [0, edge], "ticksuffix": "%"},
        "yaxis": {
            "automargin": True,
            "tickvals": list(range(len(failures))),
            "ticktext": labels,
            "range": [len(failures) - 0.5, -0.5],  # the first scenario on top
            "zeroline": False,
        },
    }
    return figure(data, layout, [vline(100, "target", PALETTE["target"], dash="dash", label_y=0.005, layer="below")])


def _whiskers(values_ms: Sequence[float], target_ms: float, reach: float, u: Uncertainty, kind: str) -> dict[str, Any]:
    """Plotly's asymmetric error bars for bars drawn as % of the target: from each p95's low to its high
    (planner.uncertainty's range of a `kind` figure), none where the bar is unbounded or cut at the chart's reach."""
    plus, minus = [], []
    for v in values_ms:
        share = _share(v, target_ms)
        low, high = u.range_of(v, kind)
        bounded = math.isfinite(share) and share <= reach
        plus.append(min(_share(high, target_ms), reach) - share if bounded else 0.0)
        minus.append(share - _share(low, target_ms) if bounded else 0.0)
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "color": _WHISKER, "thickness": 1.5, "width": 5}


def _legend_entry(name: str) -> dict[str, Any]:
    """A legend line for something drawn without a trace of its own (error bars)."""
    return {"type": "scatter", "x": [None], "y": [None], "mode": "lines", "name": name, "line": {"color": _WHISKER, "width": 1.5}}


def failure_utilization_chart(
    failures: Sequence[FailureMode], binding: str, long_context_pool: bool, pool_name: str = "general pool"
) -> go.Figure:
    """How busy each scenario leaves the pools, against their limit (100%): a general-pool replica's load against its
    capacity under the SLO, and the long-context pool's busy share (when the design has one); the fleet's sizing
    utilization beside them, grey. An offline job or a rollout batch has no SLO capacity (no latency target): its
    chart holds the pools' busy shares alone."""
    judge = _judge(failures)
    labels = scenario_labels(failures, binding, judge)
    series: list[tuple[str, list[float], str]] = []
    if judge == "the SLO":
        series.append((f"{pool_name}: load / SLO capacity", [f.load_vs_capacity for f in failures], PALETTE["primary"]))
    if long_context_pool:
        series.append(("long-context pool busy", [f.long_context_utilization for f in failures], PALETTE["secondary"]))
    series.append(("fleet utilization (sizing)", [f.utilization for f in failures], PALETTE["muted"]))
    finite = [v * 100 for _, values, _ in series for v in values if math.isfinite(v)]
    edge = min(max([*finite, 110.0]), _EDGE_PCT) * 1.2
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": name,
            "y": labels,
            "x": [min(v * 100, edge) for v in values],
            "text": [pct(v) for v in values],
            "textposition": "outside",
            **OUTSIDE_TEXT,  # a halo where the limit line passes under a value
            "marker": {"color": color, "pattern": {"shape": ["/" if v * 100 > edge else "" for v in values]}},
            "hovertemplate": f"%{{y}}: {name} %{{text}}<extra></extra>",
        }
        for name, values, color in series
    ]
    layout = {
        "title": {"text": "How busy each scenario leaves the pools"},
        "barmode": "group",
        "height": 160 + max(24 * len(series), _ROW_PX) * len(failures),  # a lone series still leaves room for two-line labels
        "xaxis": {"title": {"text": "% of the pool's limit"}, "range": [0, edge], "ticksuffix": "%"},
        "yaxis": {"autorange": "reversed", "automargin": True},
        "showlegend": True,  # a deadline design's lone series is named too
    }
    return figure(data, layout, [vline(100, "limit", PALETTE["target"], dash="dash", label_y=0.005, layer="below")])


def cost_vs_fleet_chart(points: Sequence[FleetPoint], current_nodes: int) -> go.Figure:
    over = [p for p in points if not p.meets_slo]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "cost per M output tokens",
            "x": [p.nodes for p in points],
            "y": [p.usd_per_million_output_tokens for p in points],
            "text": [usd(p.usd_per_million_output_tokens) + _split_hover(p) for p in points],
            "line": {"color": PALETTE["primary"]},
            "hovertemplate": "%{x} nodes: %{text}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": "misses the SLO or N+1",
            "x": [p.nodes for p in over],
            "y": [p.usd_per_million_output_tokens for p in over],
            "marker": {"color": PALETTE["target"], "size": 12, "symbol": "x"},
            "hoverinfo": "skip",
        },
    ]
    layout = {
        "title": {"text": "Cost per M output tokens by fleet size"},
        # whole nodes only: on a short axis Plotly's own ticks fall between them and ",d" prints 1, 2, 2, 3, 4, 4
        "xaxis": {"title": {"text": "nodes"}, "tickformat": ",d", "tickmode": "linear", "dtick": _node_tick([p.nodes for p in points])},
        "yaxis": {"title": {"text": "$ per M output tokens"}, "tickprefix": "$"},
        "height": 340,
    }
    return figure(data, layout, [vline(current_nodes, "the brief", label_y=0.005)])  # inside the plot: clear of the legend


def _split_hover(point: FleetPoint) -> str:
    """A disaggregated design's point: the prefill/decode split it is re-planned with (the one that meets there)."""
    prefill = point.overrides.get("disaggregation.prefill_nodes")
    return f" ({prefill} of them on prefill)" if prefill is not None else ""


def _node_tick(nodes: Sequence[int]) -> int:
    """A whole-node tick step that gives at most about eight ticks over the chart's fleet sizes."""
    span = max(nodes, default=1) - min(nodes, default=1)
    return max(1, math.ceil(span / 8))
