"""The verdict bar every page opens with: does the design work, what binds, and the one change that fixes a miss.

Issue 16's first item: the answer at a glance on every page (feasible, meets the SLO, availability, p95 TTFT and ITL
against their targets, $/M), everything else below it. It reads only the Design's verdict and the figures the
verdict is judged on, so it can never disagree with the page under it.
"""

from __future__ import annotations

import streamlit as st

from planner import Design
from planner.failures import needs_n_plus_one
from planner.figures import cause_of, field_label, label, show
from planner.fmt import num, pct
from planner.scaleout import capacity_limit
from planner.uncertainty import ranges_line
from ui import state
from ui.compare import pin_button
from ui.mechanisms import objective_tiles
from ui.show import md

__all__ = ["the_fix", "verdict_bar", "verdict_headline"]


def verdict_headline(design: Design) -> str:
    v = design.verdict
    if not v.feasible:
        return "Not feasible as briefed"
    if design.objective is not None:  # an offline job or a rollout batch: judged on its deadline, not on latency
        return "Meets its deadline" if v.meets_slo else "Feasible, misses its deadline"
    if not v.meets_slo:
        return "Feasible, misses the SLO"
    if not v.availability_ok:
        return "Meets the SLO, no N+1"
    asked = needs_n_plus_one(design.brief)  # an availability target N+1 is not needed for: no N+1 is claimed
    if not v.headroom_ok:  # a stated slo.headroom the pools do not keep
        return "Meets the SLO with N+1, short of its headroom" if asked else "Meets the SLO, short of its headroom"
    return "Meets the SLO, with N+1" if asked else "Meets the SLO"


def _binding(design: Design) -> str:
    """What limits the design: the first problem when it misses, else how close the general pool runs to its SLO capacity."""
    v, op = design.verdict, design.operating_point
    if v.problems:
        first = v.problems[0]
        return f"{first.problem} ({field_label(first.field)})"
    if design.objective is not None:
        return design.objective.headline
    dis = design.disaggregation
    if dis is not None:
        return (
            f"disaggregated: the prefill pool is {pct(dis.prefill_busy)} busy ({dis.prefill_replicas} replicas), a decode replica runs"
            f" {num(dis.decode_batch)} sequences at {num(dis.decode_step_ms, 'ms')} a step; each prompt's KV crosses in"
            f" {num(dis.transfer_ms_mean, 'ms')}; the two pools run at {pct(op.load_vs_capacity)} of their capacity under the SLO"
            + (f", where the {dis.binding_pool} pool binds" if dis.binding_pool in ("prefill", "decode") else "")
        )
    h = design.headroom
    return (
        f"headroom x{num(h.multiple)} before {h.binding};"
        f" the general pool runs at {pct(op.load_vs_capacity)} of its capacity under the SLO"
        f" ({num(op.capacity_rate_per_s, 'req/s')} a replica; {capacity_limit(design)});"
        " the fleet's sizing arithmetic binds on"
        f" {design.capacity.binding_constraint.value} at {pct(design.capacity.utilization)}"
    )


_COLOURS = {
    "Not feasible as briefed": "red",
    "Feasible, misses the SLO": "red",
    "Meets the SLO, no N+1": "orange",
    "Meets the SLO with N+1, short of its headroom": "orange",
    "Meets the SLO, short of its headroom": "orange",
    "Feasible, misses its deadline": "red",
}


def _latency(design: Design, path: str, ok: bool) -> tuple[str, str, str]:
    """(label, value, line under it) of a p95 against its target; an unbounded one names its cause."""
    value = show(design, path, short=True)
    verdict = "met" if ok else "missed"
    target = show(design, "slo.ttft_target_ms" if path == "slo.ttft_p95_ms" else "slo.itl_target_ms")
    line = f"{verdict}: {cause_of(design)}" if value != show(design, path) else f"target {target}: {verdict}"
    return label(path), value, line


def verdict_bar(design: Design) -> None:
    """The verdict in one coloured line, four figures, what binds and the change that fixes a miss: above the page."""
    slo, v = design.slo, design.verdict
    judged = "slo.itl_p95_ms" if slo.itl_metric.value == "itl" else "slo.tpot_p95_ms"
    headline = verdict_headline(design)
    works = v.feasible and v.meets_slo
    with st.container(border=True, key="verdict_bar"):
        st.markdown(f"#### :{_COLOURS.get(headline, 'green')}[{headline}]")
        cols = st.columns(4)
        if design.objective is not None:
            for col, (name, value, line, good) in zip(cols, objective_tiles(design), strict=True):
                col.metric(name, value, line, delta_color="normal" if good else "inverse", delta_arrow="off")
            st.markdown(f"**What binds:** {md(_binding(design))}")
            if v.problems:
                st.markdown(f"**The change that fixes it:** {md(the_fix(design))}")
            _pin_line()
            return
        for col, (path, ok) in zip(cols, (("slo.ttft_p95_ms", slo.ttft_ok), (judged, slo.itl_ok)), strict=False):
            name, value, line = _latency(design, path, ok)
            col.metric(name, value, line, delta_color="normal" if ok else "inverse", delta_arrow="off")
        asked = needs_n_plus_one(design.brief)  # a target N+1 is not needed for claims none
        cols[2].metric(
            label("verdict.availability_ok"),
            show(design, "verdict.availability_ok") if asked else "not needed",
            f"target {show(design, 'brief.slo.availability')}" + ("" if asked else ": no N+1 asked"),
            delta_color="off",
            delta_arrow="off",
        )
        value, line, why = _cost_tile(design)
        cols[3].metric(
            label("cost.usd_per_million_output_tokens"),
            value,
            line,
            help=why or None,
            delta_color="off" if works else "inverse",
            delta_arrow="off",
        )
        _ranges(design, judged)
        st.markdown(f"**What binds:** {md(_binding(design))}")
        if v.problems:
            st.markdown(f"**The change that fixes it:** {md(the_fix(design))}")
        _pin_line()


def the_fix(design: Design) -> str:
    """The change that makes a missing design meet: the fewest nodes that do, re-planned (planner.resize), else the
    first problem's own change (the replica or the targets must change: no fleet size does it)."""
    if design.fix is not None:
        return design.fix.text
    return design.verdict.problems[0].change


def _cost_tile(design: Design) -> tuple[str, str, str]:
    """(value, the short line under it, its explanation for the tile's help) of the $/M tile: the cost of serving the
    brief only when this fleet carries the peak; otherwise the fix's, or no figure, and why."""
    v = design.verdict
    if v.feasible and v.meets_slo:
        return show(design, "cost.usd_per_million_output_tokens"), f"{show(design, 'cost.usd_per_hour')} an hour", ""
    if design.cost.carries_peak:
        return show(design, "cost.usd_per_million_output_tokens"), "but the design misses the SLO", ""
    if design.fix is not None:
        as_set = "as set, this design" if design.fix.setting else "this fleet"
        why = f"The cost on {design.fix.fleet} (the change that fixes it): {as_set} cannot carry the peak."
        return show(design, "cost.usd_per_million_output_tokens_at_fix"), "with the fix", why
    return "no figure", "this fleet cannot carry the peak", ""


def _ranges(design: Design, judged: str) -> None:
    """Where the real engine's p95s fall: the calibration's held-out error on this design (planner.uncertainty)."""
    names = (("p95 TTFT", "slo.ttft_p95_ms"), (label(judged), judged))
    text = ranges_line(design.uncertainty, names)
    if text:
        st.caption(f"Real engine, {design.uncertainty.coverage * 100:.0f}% range from the planner's held-out error: {text}.")


def _pin_line() -> None:
    """Pin this design for the Compare page, or say that one is pinned."""
    pin = state.pinned()
    if pin is not None and pin == (state.current_preset(), state.current_overrides()):
        st.caption("This design is pinned: change it, or pick a preset, and the Compare page shows both.")
        return
    pin_button(key="vb.pin")
    if pin is not None:
        st.caption("Another design is pinned: the Compare page shows it beside this one.")
