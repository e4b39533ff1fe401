"""Step 7 of the method: what the fleet costs, per hour, per year and per million tokens, and the levers.

The fleet is paid for around the clock but sized for the peak; tokens are produced at the average load
over a day (the brief's average duty), so the $/M figure carries the gap between peak and average.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from planner.brief import Brief, ObjectiveKind
from planner.fmt import num, pct, usd
from planner.trusted import trusted

__all__ = [
    "HOURS_PER_YEAR",
    "SECONDS_PER_YEAR",
    "SPOT_DISCOUNT",
    "SPOT_SHARE",
    "CostAnalysis",
    "Lever",
    "SmallerFleet",
    "cost_analysis",
    "per_million",
]

HOURS_PER_YEAR = 8760  # 365 days
SECONDS_PER_YEAR = HOURS_PER_YEAR * 3600
SPOT_SHARE = 0.25  # at most a quarter of the nodes on spot (2 of 8 in the capstone), and no more than the failure table absorbs
SPOT_DISCOUNT = 0.40  # assumed spot price 40% below the brief's GPU-hour price


class Lever(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    usd_per_million_output_tokens: float
    change: str  # what changes, and by how much against the baseline $/M
    arithmetic: str
    overrides: dict[str, Any] = {}  # the brief paths and values of the lever's fleet, as `plan --set` takes them


class SmallerFleet(NamedTuple):
    """The fewest nodes that meet the SLO at the peak, found by re-planning (planner.resize), up to the brief's own fleet."""

    cold_cache_nodes: int | None  # with `cold` applied (None: no fleet up to the brief's meets it, or no cache to go cold)
    nodes: int | None  # with the brief's own prefix hit rate (None: not even the brief's fleet meets it)
    cold: dict[str, Any]  # the overrides of a cold prefix cache (failures.hit_rate_overrides); {} when no cache plays a part
    n_plus_one: bool  # the search kept N+1 (the availability target asks for it: failures.n_plus_one)
    split: dict[str, Any]  # a disaggregated design: the prefill nodes that meet on the fewer nodes (resize.fleet_overrides)
    headroom: float | None = None  # the stated slo.headroom the search kept too (resize.keeps_headroom), None when none is stated


class _LeverBasis(NamedTuple):
    """What the levers are worked out from on first read: the brief, its peak output rate, and the smaller fleet and
    the lost nodes the failure table absorbs (re-plans, asked for only then)."""

    brief: Brief
    output_tokens_per_s: float
    fleet: Callable[[], tuple[SmallerFleet, int | None]]
    full_pace: tuple[float, float] | None  # a job's (fleet output tokens/s at its full batch, idle share of its deadline)


class _CostText(NamedTuple):
    """What CostAnalysis.arithmetic is written from besides its figures."""

    brief: Brief
    output_tokens_per_s: float
    input_tokens_per_s: float
    fix_fleet: str  # the fleet that meets the SLO, in words (a design that misses)
    fix_year: float | None  # its $ a year (None: the design meets)


class CostAnalysis(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    gpus: int
    usd_per_hour: float
    usd_per_year: float
    output_tokens_per_year: float
    input_tokens_per_year: float
    usd_per_million_output_tokens: float
    usd_per_million_input_tokens: float
    carries_peak: bool  # the fleet carries the peak (the design is feasible): only then is $/M the cost of serving the brief
    usd_per_million_output_tokens_at_fix: float | None  # a design that misses: $/M on the fewest nodes that meet (Design.fix)
    _basis: _LeverBasis = PrivateAttr()
    _text: _CostText = PrivateAttr()

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def arithmetic(self) -> dict[str, str]:
        """Each figure's arithmetic in words, written on first read (a page, the JSON, the document)."""
        return _arithmetic(self, *self._text)

    # The levers re-plan the brief (the smaller fleet, the spot nodes' two-nodes-lost row): they are worked out the
    # first time they are read (the Cost page, the JSON, the document), not for every plan and re-plan.

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def levers(self) -> tuple[Lever, ...]:
        """Fill the trough, a smaller fleet with a degradation ladder, spot nodes: each with its $/M and arithmetic."""
        basis = self._basis
        smaller, absorbed = basis.fleet()
        return _levers(self, basis.brief, basis.output_tokens_per_s, smaller, absorbed, basis.full_pace)


def per_million(usd: float, tokens: float) -> float:
    """Dollars per million tokens: the one $/M rule (cost, variations, max-rate)."""
    return usd / (tokens / 1e6) if tokens > 0 else math.inf


def _change(new: float, base: float) -> str:
    return f"{pct(new / base - 1)} per M output tokens" if base > 0 and math.isfinite(base) else "n/a"


def _smaller_fleet(brief: Brief, smaller: SmallerFleet) -> tuple[int, dict[str, Any], str]:
    """(nodes, their `plan --set` overrides, what they are) of the smaller-fleet lever: the fewest nodes that meet the SLO
    even with a cold prefix cache when some fleet up to the brief's does, else the fewest that meet it at the brief's
    hit rate (the ladder then covers a cold cache), else the brief's own fleet."""
    nodes = brief.hardware.nodes
    if smaller.cold_cache_nodes is not None:
        n = smaller.cold_cache_nodes
        sets = " ".join(f"--set {path}={value:g}" for path, value in (smaller.split | smaller.cold).items())
        return (
            n,
            {"hardware.nodes": n, **smaller.split, **smaller.cold},
            f"fewest nodes that meet the SLO at the peak{_kept(smaller)}{_split_words(smaller)} even with a cold prefix cache"
            f" (re-planned: plan --set hardware.nodes={n} {sets} meets it): {n}",
        )
    if smaller.nodes is not None:
        n = smaller.nodes
        at = f" with the brief's {pct(brief.workload.prefix_hit_rate)} prefix hit rate" if smaller.cold else ""
        cold_note = (
            f"; with a cold prefix cache no fleet up to {nodes} nodes meets it, so on a cold cache this fleet leans on the ladder"
            if smaller.cold
            else ""
        )
        sets = "".join(f" --set {path}={value:g}" for path, value in smaller.split.items())
        return (
            n,
            {"hardware.nodes": n, **smaller.split},
            f"fewest nodes that meet the SLO at the peak{_kept(smaller)}{_split_words(smaller)}{at} (re-planned: plan --set"
            f" hardware.nodes={n}{sets} meets it): {n}{cold_note}",
        )
    judged = "its SLO with N+1" if smaller.n_plus_one else "its SLO"
    if smaller.headroom is not None:
        judged += f" and keep its stated {pct(smaller.headroom)} headroom (with every node up)"
    return nodes, {}, f"the {nodes}-node fleet does not meet {judged} itself, so no smaller one does"


def _split_words(smaller: SmallerFleet) -> str:
    """A disaggregated design's smaller fleet: the split of its general pool that meets there, in words."""
    prefill = smaller.split.get("disaggregation.prefill_nodes")
    return f" with the prefill/decode split searched ({prefill} of them on prefill)" if prefill is not None else ""


def _absorbed_words(absorbed: int | None, brief: Brief) -> str:
    target = "the SLO" if brief.objective.kind is ObjectiveKind.latency else "the deadline"
    if absorbed is None:
        return "not judged against the failure table"
    if absorbed == 0:
        return f"losing one node already breaks {target}, so no node can be spot"
    if absorbed == 1:
        return f"{target} holds with one node lost, not with two"
    return f"{target} holds with two nodes lost"


def _kept(smaller: SmallerFleet) -> str:
    """What the smaller fleet keeps besides the SLO at the peak: N+1, and the stated headroom judged with every node up."""
    kept = ["N+1"] if smaller.n_plus_one else []
    if smaller.headroom is not None:
        kept.append(f"the stated {pct(smaller.headroom)} headroom (pools' SLO capacity with every node up)")
    return f", {' and '.join(kept)} kept," if kept else ""


def _smaller_change(nodes: int, small_nodes: int, change: str, small_text: str, found: bool, headroom: float | None = None) -> str:
    kept = f" and keep the stated {pct(headroom)} headroom" if headroom is not None else ""
    if small_nodes < nodes:
        return f"{nodes} -> {small_nodes} nodes{kept.replace(' and keep', ', keeping')}; {change}"
    if found:
        return f"none: {nodes} nodes are already the fewest that meet the SLO at the peak{kept} (re-planned)"
    return f"none: {small_text}"


def _fix_arithmetic(fix_fleet: str, fix_year: float | None, out_year: float, at_fix: float | None) -> dict[str, str]:
    """What the fleet that meets the SLO costs, for a design that misses."""
    text = {}
    if fix_year is not None and at_fix is not None:
        text["usd_per_million_output_tokens_at_fix"] = (
            f"{fix_fleet}: {usd(fix_year)}/yr / {num(out_year / 1e6)} M = {usd(at_fix)} per M output tokens"
        )
    return text


def cost_analysis(
    brief: Brief,
    output_tokens_per_s: float,
    input_tokens_per_s: float,
    fleet: Callable[[], tuple[SmallerFleet, int | None]],
    carries_peak: bool = True,
    fix_nodes: int | None = None,
    full_pace: tuple[float, float] | None = None,
    fix_fleet: str = "",
) -> CostAnalysis:
    """The fleet's price, $ per M tokens and the levers. `fleet()`: the smaller fleet and how many lost nodes the failure
    table shows the design absorbing (0, 1 or 2: one_node_lost, two_nodes_lost; None: not judged), asked for the first
    time the levers are read. `full_pace`: for a job judged on its deadline, (the fleet's output tokens/s at its full
    batch, the share of the deadline the work leaves idle): the trough fills at that pace."""
    hw, c = brief.hardware, brief.cost
    gpus = hw.nodes * hw.gpus_per_node
    per_hour = gpus * c.usd_per_gpu_hour
    per_year = per_hour * HOURS_PER_YEAR
    out_year = output_tokens_per_s * c.average_duty * SECONDS_PER_YEAR
    in_year = input_tokens_per_s * c.average_duty * SECONDS_PER_YEAR
    per_m_out = per_million(per_year, out_year)
    per_m_in = per_million(per_year, in_year)
    fix_year = fix_nodes * hw.gpus_per_node * c.usd_per_gpu_hour * HOURS_PER_YEAR if fix_nodes is not None else None
    at_fix = per_million(fix_year, out_year) if fix_year is not None else None
    analysis = trusted(
        CostAnalysis,
        gpus=gpus,
        usd_per_hour=per_hour,
        usd_per_year=per_year,
        output_tokens_per_year=out_year,
        input_tokens_per_year=in_year,
        usd_per_million_output_tokens=per_m_out,
        usd_per_million_input_tokens=per_m_in,
        carries_peak=carries_peak,
        usd_per_million_output_tokens_at_fix=at_fix,
    )
    analysis._text = _CostText(
        brief, output_tokens_per_s, input_tokens_per_s, fix_fleet or f"the fewest nodes that meet the SLO, {fix_nodes}", fix_year
    )
    analysis._basis = _LeverBasis(brief, output_tokens_per_s, fleet, full_pace)
    return analysis


def _arithmetic(
    cost: CostAnalysis, brief: Brief, output_tokens_per_s: float, input_tokens_per_s: float, fix_fleet: str, fix_year: float | None
) -> dict[str, str]:
    c = brief.cost
    gpus, per_hour, per_year = cost.gpus, cost.usd_per_hour, cost.usd_per_year
    out_year, in_year = cost.output_tokens_per_year, cost.input_tokens_per_year
    per_m_out, per_m_in = cost.usd_per_million_output_tokens, cost.usd_per_million_input_tokens
    return {
        "usd_per_hour": f"{gpus} GPUs x {usd(c.usd_per_gpu_hour)} = {usd(per_hour)} per hour",
        "usd_per_year": f"{usd(per_hour)} x {HOURS_PER_YEAR} h = {usd(per_year)} per year",
        "output_tokens_per_year": (
            f"{num(output_tokens_per_s, 'tok/s')} at peak x {num(c.average_duty)} average over the day x {num(SECONDS_PER_YEAR)} s = {num(out_year)}"
        ),
        "input_tokens_per_year": f"{num(input_tokens_per_s, 'tok/s')} x {num(c.average_duty)} x {num(SECONDS_PER_YEAR)} s = {num(in_year)}",
        "usd_per_million_output_tokens": f"{usd(per_year)} / {num(out_year / 1e6)} M = {usd(per_m_out)} per M output tokens (the whole fleet's cost)"
        + ("" if cost.carries_peak else "; not the cost of serving the brief: this fleet cannot carry the peak's tokens"),
        "usd_per_million_input_tokens": f"{usd(per_year)} / {num(in_year / 1e6)} M = {usd(per_m_in)} per M input tokens (the whole fleet's cost, not split)",
    } | _fix_arithmetic(fix_fleet, fix_year, out_year, cost.usd_per_million_output_tokens_at_fix)


def _levers(
    cost: CostAnalysis,
    brief: Brief,
    output_tokens_per_s: float,
    smaller: SmallerFleet,
    absorbed_nodes: int | None,
    full_pace: tuple[float, float] | None = None,
) -> tuple[Lever, ...]:
    """The cost levers against the fleet's `cost`; spot nodes stay within the `absorbed_nodes`; a job's trough fills at
    its `full_pace`."""
    hw, c = brief.hardware, brief.cost
    per_year, out_year, per_m_out = cost.usd_per_year, cost.output_tokens_per_year, cost.usd_per_million_output_tokens
    pace, idle = (output_tokens_per_s, 1 - c.average_duty) if full_pace is None else full_pace
    trough_tokens = pace * SECONDS_PER_YEAR
    trough = per_million(per_year, trough_tokens)
    filled = (
        f"offline jobs at low priority keep the fleet at its peak load all day: {num(pace, 'tok/s')}"
        if full_pace is None
        else f"more jobs keep the fleet at its full batch all day: {num(pace, 'tok/s')}"
    )
    idle_words = "of the day's capacity is idle today" if full_pace is None else "of the deadline's time is idle after the work"
    small_nodes, small_overrides, small_text = _smaller_fleet(brief, smaller)
    small_year = small_nodes * hw.gpus_per_node * c.usd_per_gpu_hour * HOURS_PER_YEAR
    small = per_million(small_year, out_year)
    share_nodes = math.floor(hw.nodes * SPOT_SHARE)  # at most the share: 1 of 7 nodes (2 would be 28.6%)
    spot_nodes = share_nodes if absorbed_nodes is None else min(share_nodes, absorbed_nodes)
    spot_year = per_year - spot_nodes * hw.gpus_per_node * c.usd_per_gpu_hour * SPOT_DISCOUNT * HOURS_PER_YEAR
    spot = per_million(spot_year, out_year)
    return (
        Lever(
            name="fill the trough with batch work",
            usd_per_million_output_tokens=trough,
            change=_change(trough, per_m_out),
            arithmetic=(
                f"{filled} x {num(SECONDS_PER_YEAR)} s"
                f" = {num(trough_tokens)} tokens/yr; {usd(per_year)} / {num(trough_tokens / 1e6)} M = {usd(trough)} per M"
                f" (the batch tokens cost nothing extra: {pct(idle)} {idle_words})"
            ),
        ),
        Lever(
            name="smaller fleet with a degradation ladder",
            usd_per_million_output_tokens=small,
            change=_smaller_change(hw.nodes, small_nodes, _change(small, per_m_out), small_text, bool(small_overrides), smaller.headroom),
            overrides=small_overrides,
            arithmetic=(
                f"{small_text}; {small_nodes} x {hw.gpus_per_node} x {usd(c.usd_per_gpu_hour)} x {HOURS_PER_YEAR} h"
                f" = {usd(small_year)}/yr / {num(out_year / 1e6)} M = {usd(small)} per M"
                + (
                    "; above that load the ladder sheds batch work, caps output length, then queues free-tier traffic"
                    if small_overrides
                    else ""
                )
            ),
        ),
        Lever(
            name=f"spot nodes for {spot_nodes} of {hw.nodes}",
            usd_per_million_output_tokens=spot,
            change=_change(spot, per_m_out)
            if spot_nodes
            else f"none: {_absorbed_words(absorbed_nodes, brief) if absorbed_nodes == 0 else f'at most {pct(SPOT_SHARE)} of {hw.nodes} nodes is none'}",
            arithmetic=(
                f"{spot_nodes} nodes x {hw.gpus_per_node} GPUs at {pct(SPOT_DISCOUNT)} off (assumed spot discount):"
                f" {usd(per_year)} - {usd(per_year - spot_year)} = {usd(spot_year)}/yr / {num(out_year / 1e6)} M = {usd(spot)} per M;"
                f" a reclaimed node is a lost node, so spot stays within what the failure modes absorb"
                f" ({_absorbed_words(absorbed_nodes, brief)}; at most {pct(SPOT_SHARE)} of the fleet: {share_nodes} of {hw.nodes} nodes)"
            ),
        ),
    )
