"""$ per million output tokens against fleet size, and whether each fleet meets the SLO (the Cost page's chart).

Cached by brief, like plan(), so re-rendering the page with the same controls costs nothing.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from planner.brief import MAX_NODES, Brief
from planner.capacity import capacity, demand, memory
from planner.design import plan
from planner.replica import shape_of
from planner.resize import fleet_overrides, meets

__all__ = ["FleetPoint", "cost_vs_fleet", "fleet_sizes"]


class FleetPoint(BaseModel):
    """The brief on a fleet of `nodes` nodes: its price per million output tokens and whether it carries the peak."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: int
    gpus: int
    usd_per_million_output_tokens: float
    utilization: float
    carries_peak: bool  # utilization at most 100%
    meets_slo: bool  # `plan` with `overrides` is feasible, meets the SLO and keeps the N+1 it asks for (planner.resize)
    overrides: dict[str, Any]  # as `plan --set` takes them: the node count, and a disaggregated design's split that meets there


def fleet_sizes(nodes: int) -> tuple[int, ...]:
    """About a dozen fleet sizes from half to twice the brief's, none above the largest fleet a brief accepts."""
    step = max(1, nodes // 8)
    return tuple(range(max(1, nodes // 2), min(2 * nodes, MAX_NODES) + 1, step))


@lru_cache(maxsize=128)
def cost_vs_fleet(brief: Brief, sizes: tuple[int, ...] | None = None) -> tuple[FleetPoint, ...]:
    """$ per million output tokens and utilization for each fleet size; raises InfeasibleDesign like plan()."""
    design = plan(brief)
    nodes = brief.hardware.nodes
    points = []
    for n in sizes or fleet_sizes(nodes):
        if n < design.shape.replica_nodes:  # not one whole multi-node replica: no fleet to price
            continue
        overrides = fleet_overrides(brief, n)  # a disaggregated design: the split searched at each size, not the brief's kept
        resized = brief.with_changes(overrides)
        shape = shape_of(resized)
        util = capacity(resized, shape, demand(resized, shape), memory(resized, shape)).utilization
        points.append(
            FleetPoint(
                nodes=n,
                gpus=n * brief.hardware.gpus_per_node,
                # The fleet's price grows with its GPUs while the peak's tokens stay: $/M scales with the nodes
                # (tests check this against plan() on the resized brief).
                usd_per_million_output_tokens=design.cost.usd_per_million_output_tokens * n / nodes,
                utilization=util,
                carries_peak=util <= 1,
                meets_slo=meets(resized),
                overrides=overrides,
            )
        )
    return tuple(points)
