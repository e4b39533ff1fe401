"""How the fleet's nodes split into pools, and the share of the traffic the general pool carries.

One basis serves the whole design: the operating point, the SLO budget, the engine configuration and the
general pool's utilization all describe one general-pool replica carrying its share of the peak.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from planner.brief import Brief
from planner.fmt import num, pct
from planner.replica import ReplicaShape
from planner.verdict import Problem

__all__ = ["SIZING_UTILIZATION", "Load", "Pools", "load_of", "pools_of"]

SIZING_UTILIZATION = 0.85  # fleets are sized to carry the peak at this utilization without the prefix cache


class Load(StrEnum):
    """How hard a pool runs at the peak, as the diagram colours it."""

    over = "over"  # above 100%: the pool cannot carry its peak
    near = "near"  # from the sizing target (85%) to 100%: no headroom left for a burst
    ok = "ok"  # under the sizing target
    idle = "idle"  # a spare: it serves only when a node fails


def load_of(utilization: float, *, serving: bool = True) -> Load:
    """The load level of a pool at `utilization` (a fraction; unbounded reads as over); a pool that does not serve is idle."""
    if not serving:
        return Load.idle
    if not utilization <= 1:  # above 100%, or unbounded
        return Load.over
    return Load.near if utilization >= SIZING_UTILIZATION else Load.ok


class Pools(BaseModel):
    """The general pool gets the nodes the long-context and spare pools leave (at least one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    general_nodes: int
    long_context_nodes: int
    spare_nodes: int
    general_replicas: int  # the replicas the general pool's requests spread over
    general_share: float  # share of the requests the general pool serves: all but the long-context pool's
    streams_per_replica: int = 1  # PP: a replica's micro-batch streams, each counted in general_replicas

    def general_rate_per_replica(self, request_rate_per_s: float) -> float:
        return request_rate_per_s * self.general_share / max(self.general_replicas, 1)

    def general_rate_text(self, request_rate_per_s: float) -> str:
        """The arithmetic of general_rate_per_replica."""
        share = "" if self.general_share == 1 else f" x {pct(self.general_share)} (the long-context pool takes the rest)"
        units = (
            f"{self.general_replicas} micro-batch streams ({self.general_replicas // self.streams_per_replica} PP={self.streams_per_replica} replicas)"
            if self.streams_per_replica > 1
            else f"{self.general_replicas} general-pool replicas"
        )
        return (
            f"{num(request_rate_per_s, 'req/s')}{share} / {units} (spares excluded)"
            f" = {num(self.general_rate_per_replica(request_rate_per_s), 'req/s')}"
        )


def pools_of(brief: Brief, shape: ReplicaShape) -> tuple[Pools, list[Problem]]:
    """The pools the fleet holds, and a problem when it cannot hold the brief's spare and long-context nodes."""
    nodes, dep = brief.hardware.nodes, brief.deployment
    spare = min(dep.spare_nodes, nodes - 1)
    long_ctx = min(dep.long_context_nodes, nodes - 1 - spare)
    problems = []
    if (spare, long_ctx) != (dep.spare_nodes, dep.long_context_nodes):
        problems.append(
            Problem(
                field="deployment.spare_nodes",
                problem=(
                    f"the {nodes}-node fleet cannot hold {dep.spare_nodes} spare and {dep.long_context_nodes} long-context nodes beside a general pool,"
                    f" so it runs {spare} spare and {long_ctx} long-context"
                ),
                change=f"give the fleet at least {dep.spare_nodes + dep.long_context_nodes + 1} nodes, or shrink those pools",
            )
        )
    general = nodes - spare - long_ctx
    if general % shape.replica_nodes:
        problems.append(
            Problem(
                field="hardware.nodes",
                problem=f"the general pool's {general} nodes hold {general // shape.replica_nodes} whole {shape.replica_nodes}-node replicas;"
                f" {general % shape.replica_nodes} node(s) idle",
                change=f"give the general pool a multiple of {shape.replica_nodes} nodes",
            )
        )
    if long_ctx and shape.replicas_in(long_ctx) == 0:  # a multi-node replica needs its nodes together
        problems.append(
            Problem(
                field="deployment.long_context_nodes",
                problem=f"{long_ctx} long-context node(s) hold no whole replica: one spans {shape.replica_nodes} nodes",
                change=f"give the long-context pool a multiple of {shape.replica_nodes} nodes, or none",
            )
        )
    share = 1 - brief.workload.long_context_share if long_ctx > 0 else 1.0
    return Pools(
        general_nodes=general,
        long_context_nodes=long_ctx,
        spare_nodes=spare,
        general_replicas=shape.replicas_in(general),
        general_share=share,
        streams_per_replica=shape.pp,
    ), problems
