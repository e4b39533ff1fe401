"""Sweeps the app charts: one figure of the design against one input, each point from the planner's own functions.

- each limit of the verdict against a traffic multiplier (what a growth in peak traffic does to the fleet): the
  general pool's load against its capacity under the SLO, the long-context pool's GPU time, and the worked
  design's sizing utilization (its linear figure, planner.headroom)

Each sweep is cached by brief, like plan(), so a page re-rendered with the same controls costs nothing.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.capacity import capacity
from planner.design import plan
from planner.headroom import long_context_utilization_at, scaled_demand

__all__ = ["TRAFFIC_MULTIPLIERS", "TrafficPoint", "scaled_demand", "utilization_vs_traffic"]

TRAFFIC_MULTIPLIERS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)


class TrafficPoint(BaseModel):
    """The fleet's load against each limit when peak traffic is `multiplier` x the brief's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    multiplier: float
    request_rate_per_s: float
    prefill_fraction: float
    decode_fraction: float
    utilization: float
    utilization_no_prefix_cache: float
    general_load_vs_capacity: float  # a general-pool replica's load / its capacity under the SLO (that capacity does not move)
    long_context_utilization: float  # the long-context pool's GPU time (0 without the pool)


@lru_cache(maxsize=128)
def utilization_vs_traffic(brief: Brief, multipliers: tuple[float, ...] = TRAFFIC_MULTIPLIERS) -> tuple[TrafficPoint, ...]:
    """Utilization (with and without prefix caching) at each traffic multiplier; raises InfeasibleDesign like plan()."""
    design = plan(brief)
    base = design.capacity
    points = []
    for m in multipliers:
        if brief.workload.rate_given:
            # Rate basis: utilization = load / the capacity rate at the ITL target, and that capacity does not
            # depend on the load, so every fraction scales with the traffic (tests check this against capacity()).
            prefill, decode = base.prefill_fraction * m, base.decode_fraction * m
            util, util_nc = base.utilization * m, base.utilization_no_prefix_cache * m
        else:
            # Users basis: the decode batch grows with the load, so each point is recomputed.
            cap = capacity(brief, design.shape, scaled_demand(design.demand, m), design.memory)
            prefill, decode, util, util_nc = cap.prefill_fraction, cap.decode_fraction, cap.utilization, cap.utilization_no_prefix_cache
        points.append(
            TrafficPoint(
                multiplier=m,
                request_rate_per_s=design.demand.request_rate_per_s * m,
                prefill_fraction=prefill,
                decode_fraction=decode,
                utilization=util,
                utilization_no_prefix_cache=util_nc,
                general_load_vs_capacity=design.operating_point.load_vs_capacity * m,
                long_context_utilization=long_context_utilization_at(design, m),
            )
        )
    return tuple(points)
