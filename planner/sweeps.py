"""Sweeps the app charts: one figure of the design against one input, each point from the planner's own functions.

- utilization against a traffic multiplier (what a growth in peak traffic does to the fleet)

Each sweep is cached by brief, like plan(), so a page re-rendered with the same controls costs nothing.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.capacity import Demand, capacity
from planner.design import plan

__all__ = ["TRAFFIC_MULTIPLIERS", "TrafficPoint", "scaled_demand", "utilization_vs_traffic"]

TRAFFIC_MULTIPLIERS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)


class TrafficPoint(BaseModel):
    """The fleet's utilization when peak traffic is `multiplier` x the brief's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    multiplier: float
    request_rate_per_s: float
    prefill_fraction: float
    decode_fraction: float
    utilization: float
    utilization_no_prefix_cache: float


def scaled_demand(dem: Demand, multiplier: float) -> Demand:
    """Demand at `multiplier` x the traffic: every rate and the generating count scale with the users (or the rate)."""
    return dem.model_copy(
        update={
            "request_rate_per_s": dem.request_rate_per_s * multiplier,
            "generating_sequences": dem.generating_sequences * multiplier,
            "input_tokens_per_s": dem.input_tokens_per_s * multiplier,
            "output_tokens_per_s": dem.output_tokens_per_s * multiplier,
            "prefill_tokens_per_s_after_cache": dem.prefill_tokens_per_s_after_cache * multiplier,
            "arithmetic": {},
        }
    )


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
            )
        )
    return tuple(points)
