"""The verdict bar every page opens with: does the design work, what binds, and the one change that fixes a miss.

Issue 16's first item: the answer at a glance on every page (feasible, meets the SLO, availability, p95 TTFT and ITL
against their targets, $/M), everything else below it. It reads only the Design's verdict and the figures the
verdict is judged on, so it can never disagree with the page under it.
"""

from __future__ import annotations

import streamlit as st

from planner import Design
from planner.fmt import num, pct
from ui.show import md

__all__ = ["verdict_bar", "verdict_headline"]


def verdict_headline(design: Design) -> str:
    v = design.verdict
    if not v.feasible:
        return "Not feasible as briefed"
    if not v.meets_slo:
        return "Feasible, misses the SLO"
    if not v.availability_ok:
        return "Meets the SLO, no N+1"
    return "Meets the SLO, with N+1"


def _binding(design: Design) -> str:
    """What limits the design: the first problem when it misses, else how close the general pool runs to its SLO capacity."""
    v, op = design.verdict, design.operating_point
    if v.problems:
        first = v.problems[0]
        return f"{first.problem} ({first.field})"
    return (
        f"the general pool runs at {pct(op.load_vs_capacity)} of its capacity under the SLO"
        f" ({num(op.capacity_rate_per_s, 'req/s')} a replica); the fleet's sizing arithmetic binds on"
        f" {design.capacity.binding_constraint.value} at {pct(design.capacity.utilization)}"
    )


_COLOURS = {"Not feasible as briefed": "red", "Feasible, misses the SLO": "red", "Meets the SLO, no N+1": "orange"}


def verdict_bar(design: Design) -> None:
    """The verdict in one coloured line, four figures, what binds and the change that fixes a miss: above the page."""
    slo, v = design.slo, design.verdict
    metric = slo.itl_metric.value.upper()
    headline = verdict_headline(design)
    with st.container(border=True, key="verdict_bar"):
        st.markdown(f"#### :{_COLOURS.get(headline, 'green')}[{headline}]")
        cols = st.columns(4)
        cols[0].metric(
            "p95 TTFT",
            num(slo.ttft_p95_ms, "ms"),
            f"target {num(slo.ttft_target_ms, 'ms')}: {'met' if slo.ttft_ok else 'missed'}",
            delta_color="normal" if slo.ttft_ok else "inverse",
            delta_arrow="off",
        )
        cols[1].metric(
            f"p95 {metric}",
            num(slo.judged_itl_p95_ms, "ms"),
            f"target {num(slo.itl_target_ms, 'ms')}: {'met' if slo.itl_ok else 'missed'}",
            delta_color="normal" if slo.itl_ok else "inverse",
            delta_arrow="off",
        )
        cols[2].metric(
            "Availability",
            "N+1 holds" if v.availability_ok else "no N+1",
            f"target {pct(design.brief.slo.availability)}",
            delta_color="off",
            delta_arrow="off",
        )
        cols[3].metric(
            "Cost per M output tokens",
            f"${num(design.cost.usd_per_million_output_tokens)}",
            f"${num(design.cost.usd_per_hour)} an hour",
            delta_color="off",
            delta_arrow="off",
        )
        st.markdown(f"**What binds:** {md(_binding(design))}")
        if v.problems:
            st.markdown(f"**The change that fixes it:** {md(v.problems[0].change)}")
