"""Fleet sizes found by re-planning: the fewest nodes at which `plan --set hardware.nodes=N` (with any other overrides)
meets its SLO, so a cost lever or a verdict's fix names a fleet that works rather than one a rule of thumb suggests.

More nodes never hurt a design (the general pool takes them; spare and long-context pools keep their size), so a
bisection over the node count finds the fewest; the answer is re-planned, so it holds by construction.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.brief import MAX_NODES, Brief, ObjectiveKind
from planner.core import verdict_only
from planner.errors import BriefError
from planner.failures import judged, n_plus_one
from planner.mechanisms import resolve

__all__ = ["FleetFix", "fewest_nodes_meeting", "fleet_fix", "meets"]


def meets(brief: Brief) -> bool:
    """Whether the brief's design is feasible and meets its SLO (its deadline for a batch job) with the N+1 its
    availability target asks for, as `plan` judges it."""
    try:
        verdict, _ = judged(verdict_only(resolve(brief)))  # as plan() does: image tokens, the KV tiers' hit rate
    except BriefError:  # cannot be computed at all: weights do not fit, fewer nodes than a replica spans
        return False
    return verdict.feasible and verdict.meets_slo and n_plus_one(brief)


def fewest_nodes_meeting(brief: Brief, changes: dict[str, Any] | None = None, limit: int = MAX_NODES) -> int | None:
    """The fewest nodes (at most `limit`) at which the brief with `changes` meets its SLO with its spare and long-context
    pools whole, or None when `limit` nodes do not. Doubles from the brief's own fleet, then bisects: about
    2 log2(nodes) re-plans of the verdict alone."""
    base = brief.with_changes(changes) if changes else brief

    def ok(nodes: int) -> bool:
        return meets(base.with_changes({"hardware.nodes": nodes}))

    low = base.deployment.spare_nodes + base.deployment.long_context_nodes  # fewer would drop those pools
    high = min(max(brief.hardware.nodes, low + 1), limit)
    while not ok(high):
        if high >= limit:
            return None
        high = min(high * 2, limit)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if ok(mid) else (mid, high)
    return high


class FleetFix(BaseModel):
    """The smallest fleet that meets the SLO where the brief's does not, found by re-planning."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: int
    long_context_nodes: int
    overrides: dict[str, Any]  # as `plan --set` takes them: the brief with these meets its SLO
    text: str


def _long_context_nodes_needed(brief: Brief, limit: int) -> int | None:
    """The fewest long-context nodes whose pool carries its share (busy at most 100%), None when `limit` do not."""
    dep = brief.deployment
    if dep.long_context_nodes == 0 or brief.workload.long_context_share <= 0:
        return dep.long_context_nodes

    def carries(lc: int) -> bool:
        grown = brief.with_changes({"deployment.long_context_nodes": lc, "hardware.nodes": dep.spare_nodes + lc + brief.hardware.nodes})
        try:
            return verdict_only(resolve(grown)).long_context_utilization <= 1
        except BriefError:
            return False

    high = dep.long_context_nodes
    while not carries(high):
        if high >= limit:
            return None
        high = min(high * 2, limit)
    low = 0
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if carries(mid) else (mid, high)
    return high


def _delta(nodes: int) -> str:
    return f"{nodes} more" if nodes >= 0 else f"{-nodes} fewer"


def fleet_fix(brief: Brief) -> FleetFix | None:
    """The fewest nodes at which the brief meets its SLO, its long-context pool grown first when that pool alone cannot
    carry its share at any fleet size; None when no fleet up to MAX_NODES does (the replica or the targets must change)."""
    dep = brief.deployment
    long_context = dep.long_context_nodes
    nodes = fewest_nodes_meeting(brief)
    if nodes is None:
        needed = _long_context_nodes_needed(brief, MAX_NODES // 2)
        if needed is None or needed == long_context:
            return None
        long_context = needed
        nodes = fewest_nodes_meeting(brief, {"deployment.long_context_nodes": needed})
        if nodes is None:
            return None
    overrides: dict[str, Any] = {"hardware.nodes": nodes}
    grown = ""
    if long_context != dep.long_context_nodes:
        overrides["deployment.long_context_nodes"] = long_context
        grown = f"; {long_context} of them long-context, {dep.long_context_nodes} now"
    sets = " ".join(f"--set {path}={value}" for path, value in overrides.items())
    goal = "the SLO" if brief.objective.kind is ObjectiveKind.latency else "its deadline"
    return FleetFix(
        nodes=nodes,
        long_context_nodes=long_context,
        overrides=overrides,
        text=f"{nodes} nodes ({_delta(nodes - brief.hardware.nodes)}{grown}), the fewest that meet {goal}: plan {sets} meets it",
    )
